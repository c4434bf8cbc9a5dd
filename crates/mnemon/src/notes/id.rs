//! Node ids: the path of a note below `memory/` without `.md`, always `/`-separated.
//!
//! An id must never name a path outside `memory/`: `..` components, absolute paths, backslashes,
//! drive prefixes and control characters are refused.

use std::path::{Component, Path};

/// Longest id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 512;

/// An id as a message shows it, in backticks: whole up to [`MAX_ID_BYTES`], longer ones (never
/// a note's, only what a caller gave) cut to their first [`SHOWN_ID_CHARS`] characters and their
/// length, so one bad argument cannot fill a terminal or an MCP answer.
pub struct ShownId<'a>(pub &'a str);

/// Characters of an over-long id a message shows (see [`ShownId`]).
pub const SHOWN_ID_CHARS: usize = 64;

impl std::fmt::Display for ShownId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id = self.0;
        if id.len() <= MAX_ID_BYTES {
            return write!(f, "`{id}`");
        }
        let head: String = id.chars().take(SHOWN_ID_CHARS).collect();
        write!(f, "`{head}...` ({} bytes)", id.len())
    }
}

/// The fix for an id no note has (`Error::UnknownNode`): the id of a note that differs in letter
/// case only (`meant`, found by the caller), an id written as a file path (`a.md`, `memory/a`)
/// shown as the id it means, anything else is a note not indexed yet or a misspelling.
pub struct UnknownIdFix<'a> {
    /// The id given.
    pub id: &'a str,
    /// A stored id equal to `id` but for letter case.
    pub meant: Option<&'a str>,
}

impl std::fmt::Display for UnknownIdFix<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id = self.id;
        if let Some(twin) = self.meant {
            return write!(f, "ids are case-sensitive: use {}", ShownId(twin));
        }
        let meant = id.strip_prefix("memory/").unwrap_or(id);
        let meant = meant.strip_suffix(".md").unwrap_or(meant);
        if meant != id && !meant.is_empty() && id.len() <= MAX_ID_BYTES {
            write!(
                f,
                "ids are paths below memory/ without `.md`: use {}",
                ShownId(meant)
            )
        } else {
            f.write_str("run `mnemon index` if you just added it, or check the spelling")
        }
    }
}

/// Why a string is not a usable id. Each text says what is wrong and how to write it instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdError {
    #[error("empty id: give the note's path below memory/ without .md")]
    Empty,
    #[error("{bytes} bytes, longer than {MAX_ID_BYTES}: use a shorter path")]
    TooLong { bytes: usize },
    #[error("absolute path: ids are relative to memory/")]
    Absolute,
    #[error("contains a backslash: use / between folders")]
    Backslash,
    #[error("contains a control character: remove it")]
    ControlCharacter,
    #[error(
        "contains U+{code:04X}, a bidirectional control character that makes the name display \
         as another (`txt.exe` shown as `exe.txt`): remove it"
    )]
    BidiControl { code: u32 },
    #[error("starts with a drive prefix: ids are relative to memory/")]
    DrivePrefix,
    #[error("has an empty path component (`//` or a trailing `/`): remove it")]
    EmptyComponent,
    #[error("contains a `.` or `..` component: ids cannot leave memory/")]
    DotComponent,
}

/// Why a file below `memory/` has no id (it is then skipped by the scan).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotePathError {
    #[error("file name is not valid UTF-8: rename the file")]
    NotUtf8,
    #[error("path leaves memory/: keep notes inside it")]
    LeavesMemory,
    #[error("not a .md file: notes end in .md")]
    NotMarkdown,
    #[error("file name gives an invalid id ({0}): rename the file")]
    InvalidId(#[from] IdError),
}

/// Check that `id` is a safe, relative, `/`-separated id. The error says why not.
pub fn validate_id(id: &str) -> Result<(), IdError> {
    if id.is_empty() {
        return Err(IdError::Empty);
    }
    if id.len() > MAX_ID_BYTES {
        return Err(IdError::TooLong { bytes: id.len() });
    }
    if id.starts_with('/') {
        return Err(IdError::Absolute);
    }
    if id.contains('\\') {
        return Err(IdError::Backslash);
    }
    if id.chars().any(char::is_control) {
        return Err(IdError::ControlCharacter);
    }
    if let Some(c) = id.chars().find(|c| is_bidi_control(*c)) {
        return Err(IdError::BidiControl { code: u32::from(c) });
    }
    if id.as_bytes().get(1) == Some(&b':') {
        return Err(IdError::DrivePrefix);
    }
    for part in id.split('/') {
        match part {
            "" => return Err(IdError::EmptyComponent),
            "." | ".." => return Err(IdError::DotComponent),
            _ => {}
        }
    }
    Ok(())
}

/// The bidirectional embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069): an id
/// holding one is printed in another order than it is written, so one note can pass for
/// another in every listing. (The marks U+200E and U+200F only nudge neutral characters.)
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Why no `[[...]]` link could name a note with this id, if none could: `#` starts a heading,
/// `|` a label, brackets end or open the link, and the link's text is trimmed.
pub fn why_unlinkable(id: &str) -> Option<String> {
    if let Some(c) = id.chars().find(|c| matches!(c, '#' | '|' | '[' | ']')) {
        return Some(format!(
            "holds `{c}`, which a `[[...]]` link reads as part of its syntax"
        ));
    }
    id.split('/')
        .any(|p| p.trim() != p)
        .then(|| "has a part that begins or ends with a space, which a `[[...]]` link drops".into())
}

/// `s` with its combining marks written as escapes (`re\u{301}sume\u{301}`), so that two
/// names that look alike can be told apart in a message.
pub fn with_marks_shown(s: &str) -> String {
    use unicode_normalization::char::is_combining_mark;
    s.chars()
        .map(|c| match is_combining_mark(c) {
            true => c.escape_unicode().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// The id of a note file at `rel` (relative to `memory/`), or why it has none.
pub fn id_from_relative_path(rel: &Path) -> Result<String, NotePathError> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(os) => match os.to_str() {
                Some(s) => parts.push(s),
                None => return Err(NotePathError::NotUtf8),
            },
            _ => return Err(NotePathError::LeavesMemory),
        }
    }
    id_of_note_path(&parts.join("/")).map(str::to_string)
}

/// The id of the note file at `rel`, a `/`-separated path relative to `memory/` (`rel` less its
/// `.md`), or why it has none. [`id_from_relative_path`] for a path already joined into a string.
pub fn id_of_note_path(rel: &str) -> Result<&str, NotePathError> {
    let Some(id) = rel.strip_suffix(".md") else {
        return Err(NotePathError::NotMarkdown);
    };
    validate_id(id)?;
    Ok(id)
}

/// When the note `id` is, by its file name, a copy a sync or merge tool made of a note it could
/// not merge: the id of the note it copies and the tool's kind. Names: `x (conflicted copy
/// 2026-12-05).md`, `x (Ann's conflicted copy ...).md`, `x (Case Conflict).md` (Dropbox,
/// Nextcloud), `x.sync-conflict-20261205-101010-ABCDEFG.md` (Syncthing), and
/// `x_BACKUP_1234.md` / `_BASE_` / `_LOCAL_` / `_REMOTE_` (git mergetool, `<name>_<side>_<pid>`).
pub fn conflict_copy_of(id: &str) -> Option<(String, &'static str)> {
    let (folder, name) = match id.rsplit_once('/') {
        Some((folder, name)) => (Some(folder), name),
        None => (None, id),
    };
    let (original, tool) = if let Some(open) = name.rfind(" (")
        && let Some(inside) = name[open + 2..].strip_suffix(')')
        && (inside.to_lowercase().contains("conflicted copy") || inside == "Case Conflict")
    {
        (&name[..open], "a file-sync tool (Dropbox, Nextcloud)")
    } else if let Some(at) = name.find(".sync-conflict-")
        && name[at + ".sync-conflict-".len()..].starts_with(|c: char| c.is_ascii_digit())
    {
        (&name[..at], "Syncthing")
    } else {
        let (rest, pid) = name.rsplit_once('_')?;
        let (original, side) = rest.rsplit_once('_')?;
        if pid.is_empty()
            || !pid.bytes().all(|b| b.is_ascii_digit())
            || !matches!(side, "BACKUP" | "BASE" | "LOCAL" | "REMOTE")
        {
            return None;
        }
        (original, "git mergetool")
    };
    let original = original.trim_end();
    if original.is_empty() {
        return None;
    }
    Some((
        match folder {
            Some(f) => format!("{f}/{original}"),
            None => original.to_string(),
        },
        tool,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mnemon show a.md` said only "no note with id `a.md`; run `mnemon index` ...".
    #[test]
    fn an_id_written_as_a_file_path_is_shown_as_the_id_it_means() {
        let fix = |id: &str| UnknownIdFix { id, meant: None }.to_string();
        assert!(fix("a.md").ends_with("use `a`"), "{}", fix("a.md"));
        assert!(fix("memory/ops/a").ends_with("use `ops/a`"));
        assert!(fix("memory/ops/a.md").ends_with("use `ops/a`"));
        assert!(fix("ops/a").starts_with("run `mnemon index`"));
        assert!(fix(".md").starts_with("run `mnemon index`"));
        assert!(fix("memory/").starts_with("run `mnemon index`"));
        let twin = UnknownIdFix {
            id: "ops/Pool-Sizing",
            meant: Some("ops/pool-sizing"),
        };
        assert_eq!(
            twin.to_string(),
            "ids are case-sensitive: use `ops/pool-sizing`"
        );
    }

    #[test]
    fn conflict_copies_are_told_by_name() {
        for (id, original) in [
            ("deploy (conflicted copy 2026-12-05)", "deploy"),
            (
                "ops/deploy (Ann's conflicted copy 2026-12-05)",
                "ops/deploy",
            ),
            ("deploy (conflicted copy 2026-12-05 101010)", "deploy"),
            ("deploy (Case Conflict)", "deploy"),
            ("deploy.sync-conflict-20261205-101010-ABCDEFG", "deploy"),
            ("a/b/deploy_BACKUP_1234", "a/b/deploy"),
            ("deploy_REMOTE_77", "deploy"),
            ("db_pool_LOCAL_4242", "db_pool"),
        ] {
            assert_eq!(
                conflict_copy_of(id).map(|(o, _)| o),
                Some(original.to_string()),
                "{id}"
            );
        }
        for id in [
            "deploy",
            "deploy (draft)",
            "release (2026)",
            "notes.BACKUP",
            "notes_BACKUP",
            "v1_LOCAL_x",
            "_BASE_12",
            "deploy.BACKUP.1234",
            " (conflicted copy 2026-12-05)",
            "x.sync-conflict-notes",
            "conflicted copy/deploy",
        ] {
            assert_eq!(conflict_copy_of(id), None, "{id}");
        }
    }

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
            "ملاحظات/نشر",
            "\u{200F}rtl-mark",
        ] {
            assert_eq!(validate_id(good), Ok(()), "{good:?}");
        }
    }

    /// Regression: an id holding U+202E printed reversed after it, so one note
    /// could pass for another in every listing.
    #[test]
    fn bidirectional_overrides_and_isolates_are_refused() {
        for (bad, code) in [
            ("invoice\u{202E}txt.exe", 0x202E),
            ("a\u{202A}b", 0x202A),
            ("x/\u{2066}y\u{2069}", 0x2066),
        ] {
            let e = validate_id(bad).unwrap_err();
            assert_eq!(e, IdError::BidiControl { code }, "{bad:?}");
            assert!(e.to_string().contains(&format!("U+{code:04X}")), "{e}");
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
