//! Node ids: the path of a note below `memory/` without `.md`, always `/`-separated.
//!
//! An id must never name a path outside `memory/`: `..` components, absolute paths, backslashes,
//! drive prefixes and control characters are refused.

use std::path::{Component, Path};

/// Longest id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 512;

/// Check that `id` is a safe, relative, `/`-separated id. The error says why not.
pub fn validate_id(id: &str) -> Result<(), &'static str> {
    if id.is_empty() {
        return Err("empty id");
    }
    if id.len() > MAX_ID_BYTES {
        return Err("longer than 512 bytes");
    }
    if id.starts_with('/') {
        return Err("absolute path: ids are relative to memory/");
    }
    if id.contains('\\') {
        return Err("contains a backslash: use / between folders");
    }
    if id.chars().any(char::is_control) {
        return Err("contains a control character");
    }
    if id.len() >= 2 && id.as_bytes()[1] == b':' {
        return Err("starts with a drive prefix");
    }
    for part in id.split('/') {
        match part {
            "" => return Err("has an empty path component (`//` or a trailing `/`)"),
            "." | ".." => return Err("contains a `.` or `..` component: ids cannot leave memory/"),
            _ => {}
        }
    }
    Ok(())
}

/// The id of a note file at `rel` (relative to `memory/`), or why it has none.
pub fn id_from_relative_path(rel: &Path) -> Result<String, String> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(os) => match os.to_str() {
                Some(s) => parts.push(s),
                None => return Err("file name is not valid UTF-8: rename the file".into()),
            },
            _ => return Err("path leaves memory/".into()),
        }
    }
    id_of_note_path(&parts.join("/")).map(str::to_string)
}

/// The id of the note file at `rel`, a `/`-separated path relative to `memory/` (`rel` less its
/// `.md`), or why it has none. [`id_from_relative_path`] for a path already joined into a string.
pub fn id_of_note_path(rel: &str) -> Result<&str, String> {
    let Some(id) = rel.strip_suffix(".md") else {
        return Err("not a .md file".into());
    };
    validate_id(id).map_err(|r| format!("file name gives an invalid id: {r}"))?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_escaping_ids() {
        for bad in [
            "",
            "../x",
            "a/../../b",
            "/etc/passwd",
            "a\\b",
            "C:/x",
            "a//b",
            "a/",
            "./a",
            "a\u{0}b",
        ] {
            assert!(validate_id(bad).is_err(), "{bad:?} accepted");
        }
        for good in [
            "a",
            "runbooks/deploy-rollback",
            "部署清单",
            "v1.2-notes",
            "a..b",
        ] {
            assert_eq!(validate_id(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn an_id_is_the_path_less_md_and_other_files_or_escaping_paths_are_refused() {
        assert_eq!(
            id_from_relative_path(Path::new("runbooks/deploy.md")).unwrap(),
            "runbooks/deploy"
        );
        assert!(id_from_relative_path(Path::new("x.txt")).is_err());
        assert!(id_from_relative_path(Path::new("../x.md")).is_err());
    }
}
