//! A replacement's frontmatter written over the replaced note's own text: the keys the request
//! sets take the place of their old lines, and every other line (comments, quoting, key order,
//! keys mnemon does not know) stays as the user wrote it. Written again by the YAML serializer,
//! comments were lost and strings lost their quotes (`since: "2026-01-01"` became a date to
//! YAML 1.1 readers, `flag: "yes"` a boolean).

use serde_yaml_ng::{Mapping, Value};

/// One line of the frontmatter and what it is.
enum Line<'t> {
    /// A top-level `key:` line, with its key.
    Key(&'t str, &'t str),
    /// A line of the value above it: indented, or a `- ` entry of a sequence at column 0.
    Value(&'t str),
    /// A blank line or a comment at column 0: belongs to no key.
    Apart(&'t str),
}

/// The key of a top-level `key: value` line, when it is a plain word (letters, digits, `_`,
/// `-`); `None` for anything else (a quoted or complex key, a flow mapping, a document marker).
fn plain_key(line: &str) -> Option<&str> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    let after = &line[colon + 1..];
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !key.starts_with('-');
    (plain && (after.is_empty() || after.starts_with([' ', '\t', '\n']))).then_some(key)
}

/// The lines of `text` (each with its `\n`), classified; `None` when a top-level line is not a
/// plain `key:` line.
fn lines(text: &str) -> Option<Vec<Line<'_>>> {
    let mut out = Vec::new();
    for line in text.split_inclusive('\n') {
        let first = line.as_bytes().first().copied().unwrap_or(b'\n');
        out.push(match first {
            b' ' | b'\t' => {
                if line.trim().is_empty() {
                    Line::Apart(line)
                } else {
                    Line::Value(line)
                }
            }
            b'\n' | b'#' => Line::Apart(line),
            b'-' if line.starts_with("- ") || line.trim_end() == "-" => Line::Value(line),
            _ => Line::Key(plain_key(line)?, line),
        });
    }
    Some(out)
}

/// `original` (a note's frontmatter YAML, without its `---` lines) with the top-level keys of
/// `set` written in place of their old lines (or after the last line, when new) and the keys of
/// `removed` left out; every other line as it was. `None` when the text is not one to edit by
/// lines (carriage returns, a top-level line that is not a plain `key:`), or a value does not
/// serialize: the caller then writes the whole mapping anew. The caller checks that the result
/// parses to the mapping it means.
pub(super) fn splice(original: &str, set: &Mapping, removed: &[&str]) -> Option<String> {
    if original.contains('\r') {
        return None;
    }
    let lines = lines(original)?;
    let entry = |key: &Value, value: &Value| -> Option<String> {
        let mut one = Mapping::new();
        one.insert(key.clone(), value.clone());
        serde_yaml_ng::to_string(&one).ok()
    };
    let mut out = String::with_capacity(original.len() + 64);
    let mut written: Vec<&str> = Vec::new();
    // Whether the lines of the value being read are left out (its key was replaced or removed).
    let mut skipping = false;
    // Blank lines and comments met while skipping: kept unless the skipped value goes on
    // after them (a blank line inside a block scalar).
    let mut held = String::new();
    for line in &lines {
        match line {
            Line::Key(key, text) => {
                out.push_str(&held);
                held.clear();
                skipping = false;
                let new = set.iter().find(|(k, _)| k.as_str() == Some(key));
                if let Some((k, v)) = new {
                    if !written.contains(key) {
                        out.push_str(&entry(k, v)?);
                        written.push(key);
                    }
                    skipping = true;
                } else if removed.contains(key) {
                    skipping = true;
                } else {
                    out.push_str(text);
                }
            }
            Line::Value(_) if skipping => held.clear(),
            Line::Value(text) => {
                out.push_str(&held);
                held.clear();
                out.push_str(text);
            }
            Line::Apart(text) if skipping => held.push_str(text),
            Line::Apart(text) => out.push_str(text),
        }
    }
    out.push_str(&held);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for (k, v) in set {
        if k.as_str().is_none_or(|key| !written.contains(&key)) {
            out.push_str(&entry(k, v)?);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Mapping {
        let mut m = Mapping::new();
        for (k, v) in pairs {
            m.insert(Value::from(*k), Value::from(*v));
        }
        m
    }

    /// The replaced note's comments, quotes and unknown keys stay; only what is set changes.
    #[test]
    fn comments_quotes_and_other_keys_stay_as_written() {
        let original = "# ask Bob before changing ttl\nname: Pool   # owner: Bob\nttl_days: 30\n\
                        since: \"2026-01-01\"\nflag: \"yes\"\nupdated_at: 2026-01-02\n";
        let out = splice(
            original,
            &set(&[("updated_at", "2026-12-07"), ("description", "New")]),
            &[],
        )
        .expect("plain");
        assert_eq!(
            out,
            "# ask Bob before changing ttl\nname: Pool   # owner: Bob\nttl_days: 30\n\
             since: \"2026-01-01\"\nflag: \"yes\"\nupdated_at: 2026-12-07\ndescription: New\n"
        );
    }

    /// A value over several lines (a block sequence, a block scalar with a blank line in it) is
    /// replaced whole; a comment after it stays.
    #[test]
    fn a_value_over_several_lines_is_replaced_whole() {
        let original = "tags:\n- a\n- b\nnote: |\n  one\n\n  two\n# keep me\npin: true\n";
        let mut s = set(&[("note", "short")]);
        s.insert(Value::from("tags"), Value::Sequence(vec![Value::from("c")]));
        let out = splice(original, &s, &["pin"]).expect("plain");
        assert_eq!(out, "tags:\n- c\nnote: short\n# keep me\n");
    }

    /// What cannot be edited by lines is left to the serializer.
    #[test]
    fn quoted_keys_flow_mappings_and_carriage_returns_are_not_edited_by_lines() {
        let s = set(&[("name", "x")]);
        assert!(splice("\"name\": a\n", &s, &[]).is_none());
        assert!(splice("{name: a}\n", &s, &[]).is_none());
        assert!(splice("name: a\r\n", &s, &[]).is_none());
        assert!(splice("? name\n: a\n", &s, &[]).is_none());
    }
}
