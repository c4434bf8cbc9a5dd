//! The plain subset of YAML that frontmatter is almost always written in, read without a YAML
//! parser.
//!
//! The subset: `key: value` lines at the left margin; a value that is a plain scalar, a quoted
//! scalar without escapes, a one-line flow list `[a, b]` of plain scalars, or nothing, followed
//! by `- item` lines at one indentation. [`read_plain`] answers `None` for anything outside it
//! (comments, tabs, nested mappings, continuation lines, escapes, anchors, tags, block scalars,
//! numbers other than plain decimal integers, duplicate keys, odd characters, ...), and the
//! caller parses the block with `serde_yaml_ng`. On the subset both give equal [`Value`]s: the
//! tests compare them on generated frontmatter, and `fuzz/fuzz_targets/plain_yaml.rs` on
//! fuzz-chosen text.
//!
//! Why: every note's frontmatter is parsed on a cold build, and a full YAML parser (libyaml
//! through `serde_yaml_ng`) makes that a large share of the build; this reader costs a small
//! fraction of it.

use serde_yaml_ng::Value;

/// Characters that may not start a plain scalar here (YAML's indicators, quotes handled apart).
const NOT_FIRST: &[char] = &[
    '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
];
/// Longest decimal integer read here (more digits go to the YAML parser).
const MAX_INT_DIGITS: usize = 18;
/// Longest key read here (YAML allows an implicit key of at most 1024 characters).
const MAX_KEY_BYTES: usize = 128;
/// Most keys read here (a longer frontmatter goes to the parser; keeps the duplicate check small).
pub const MAX_PLAIN_KEYS: usize = 64;

/// A frontmatter's top-level entries, in order: what the YAML parser reads as a mapping (or, when
/// empty, as null); see [`as_yaml_value`].
pub type PlainEntries<'a> = Vec<(&'a str, Value)>;

/// The frontmatter `yaml`'s entries, when it is within the plain subset; `None` otherwise (the
/// caller then uses the YAML parser).
pub fn read_plain(yaml: &str) -> Option<PlainEntries<'_>> {
    if outside_subset(yaml) {
        return None;
    }
    let mut entries: PlainEntries<'_> = Vec::new();
    // The key whose value is a block list still being read: (key, indentation, items).
    let mut open: Option<(&str, Option<usize>, Vec<Value>)> = None;
    for line in yaml.split('\n') {
        let rest = line.trim_start_matches(' ');
        if rest.is_empty() {
            continue;
        }
        let indent = line.len() - rest.len();
        if let Some(item) = rest.strip_prefix("- ") {
            let (_, list_indent, items) = open.as_mut()?;
            if *list_indent.get_or_insert(indent) != indent {
                return None;
            }
            let item = item.trim_start_matches(' ');
            if item.is_empty() || item.starts_with('[') {
                return None;
            }
            items.push(block_scalar(item)?);
            continue;
        }
        if indent > 0 {
            return None;
        }
        if let Some((key, _, items)) = open.take() {
            push(&mut entries, key, list_value(items))?;
        }
        let (key, value) = rest.split_once(':')?;
        if !is_plain_key(key) {
            return None;
        }
        let value = value.trim_end_matches(' ');
        if value.is_empty() {
            open = Some((key, None, Vec::new()));
            continue;
        }
        let value = value.strip_prefix(' ')?.trim_start_matches(' ');
        let v = if value.starts_with('[') {
            flow_list(value)?
        } else {
            block_scalar(value)?
        };
        push(&mut entries, key, v)?;
    }
    if let Some((key, _, items)) = open.take() {
        push(&mut entries, key, list_value(items))?;
    }
    Some(entries)
}

/// The entries as the YAML parser reads them: a mapping, or null when there are none (a
/// frontmatter of blank lines is an empty document). What the tests and the fuzz target compare.
pub fn as_yaml_value(entries: &[(&str, Value)]) -> Value {
    if entries.is_empty() {
        return Value::Null;
    }
    Value::Mapping(
        entries
            .iter()
            .map(|(k, v)| (Value::String((*k).to_string()), v.clone()))
            .collect(),
    )
}

/// Whether `yaml` holds a character this reader leaves to the YAML parser wherever it appears:
/// control characters (tab and carriage return included), the C1 range (YAML reads U+0085 as a
/// line break), the Unicode line and paragraph separators, the byte-order mark and the
/// non-characters YAML rejects.
fn outside_subset(yaml: &str) -> bool {
    if yaml.is_ascii() {
        return yaml.bytes().any(|b| (b < 0x20 && b != b'\n') || b == 0x7f);
    }
    yaml.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            )
    })
}

/// Add `key: value`; `None` (leave it to the parser) for a repeated key or too many keys.
fn push<'a>(entries: &mut PlainEntries<'a>, key: &'a str, value: Value) -> Option<()> {
    if entries.len() >= MAX_PLAIN_KEYS || entries.iter().any(|(k, _)| *k == key) {
        return None;
    }
    entries.push((key, value));
    Some(())
}

/// A key with an empty value and no items is null.
fn list_value(items: Vec<Value>) -> Value {
    if items.is_empty() {
        Value::Null
    } else {
        Value::Sequence(items)
    }
}

/// `[A-Za-z_][A-Za-z0-9_-]*`, at most [`MAX_KEY_BYTES`], and not a word YAML reads as null or a
/// boolean.
fn is_plain_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    key.len() <= MAX_KEY_BYTES
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && null_or_bool(key).is_none()
}

/// A value in block context (after `key: ` or `- `), without its leading spaces.
fn block_scalar(s: &str) -> Option<Value> {
    let s = s.trim_end_matches(' ');
    if let Some(inner) = s.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'')?;
        return (!inner.contains('\'')).then(|| Value::String(inner.to_string()));
    }
    if let Some(inner) = s.strip_prefix('"') {
        let inner = inner.strip_suffix('"')?;
        return (!inner.contains(['"', '\\'])).then(|| Value::String(inner.to_string()));
    }
    // `: ` or a final `:` would make a key, ` #` a comment.
    let b = s.as_bytes();
    if b.last() == Some(&b':')
        || b.windows(2)
            .any(|w| (w[0] == b':' && w[1] == b' ') || (w[0] == b' ' && w[1] == b'#'))
    {
        return None;
    }
    plain_scalar(s)
}

/// `[a, b, c]` on one line, of plain scalars.
fn flow_list(s: &str) -> Option<Value> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim_matches(' ').is_empty() {
        return Some(Value::Sequence(Vec::new()));
    }
    inner
        .split(',')
        .map(|item| {
            let item = item.trim_matches(' ');
            // Flow indicators, a comment, a key, or quotes: left to the parser.
            if item.bytes().any(|b| {
                matches!(
                    b,
                    b',' | b'[' | b']' | b'{' | b'}' | b'#' | b':' | b'\'' | b'"'
                )
            }) {
                return None;
            }
            plain_scalar(item)
        })
        .collect::<Option<Vec<Value>>>()
        .map(Value::Sequence)
}

/// A plain scalar's value as `serde_yaml_ng` resolves it: null, a boolean, a decimal integer or
/// a string. Anything that may resolve otherwise (other numbers) is left to the parser.
fn plain_scalar(s: &str) -> Option<Value> {
    let first = s.chars().next()?;
    if NOT_FIRST.contains(&first) {
        return None;
    }
    if let Some(v) = null_or_bool(s) {
        return Some(v);
    }
    if first.is_ascii_digit() || first == '+' || first == '.' {
        if is_date(s) {
            return Some(Value::String(s.to_string()));
        }
        let decimal = s.len() <= MAX_INT_DIGITS
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0'));
        return decimal
            .then(|| s.parse::<u64>().ok())
            .flatten()
            .map(|n| Value::Number(n.into()));
    }
    Some(Value::String(s.to_string()))
}

/// The words `serde_yaml_ng` reads as null or a boolean.
fn null_or_bool(s: &str) -> Option<Value> {
    match s {
        "null" | "Null" | "NULL" | "~" => Some(Value::Null),
        "true" | "True" | "TRUE" => Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => Some(Value::Bool(false)),
        _ => None,
    }
}

/// `YYYY-MM-DD` digits: a string to YAML (it is no number).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            _ => c.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parsed(yaml: &str) -> Option<Value> {
        serde_yaml_ng::from_str::<Value>(yaml).ok()
    }

    /// The plain reader's answer as a YAML value.
    fn plain(yaml: &str) -> Option<Value> {
        read_plain(yaml).map(|e| as_yaml_value(&e))
    }

    #[test]
    fn reads_a_generated_notes_frontmatter_like_the_parser() {
        let yaml = "name: Login Compaction Flamegraph\ndescription: Cache 6.2x the a cgroup still, wants crawler, bucket\ntype: reference\ncreated_at: 2025-09-10\nupdated_at: 2026-05-26\nttl_days: 90\ntags: [login, compaction]\nrelated:\n  - archive/heap-cache-vault-quota\n  - postmortem-queue\n";
        let v = plain(yaml).expect("within the subset");
        assert_eq!(Some(&v), parsed(yaml).as_ref());
        assert_eq!(v["ttl_days"], Value::Number(90.into()));
        assert_eq!(v["created_at"], Value::String("2025-09-10".into()));
        assert_eq!(v["related"][1], Value::String("postmortem-queue".into()));
    }

    #[test]
    fn reads_the_loopal_style_frontmatter_like_the_parser() {
        let yaml = "name: pgBackRest Backup & PITR Policy\ndescription: NIST 800-63B aligned — no forced periodic rotation\ntype: project\nttl_days: null\npin: true\nquoted: 'a: b # c'\ndq: \"[[b]]\"\nempty:\nlist: []\n";
        let v = plain(yaml).expect("within the subset");
        assert_eq!(Some(&v), parsed(yaml).as_ref());
        assert_eq!(v["ttl_days"], Value::Null);
        assert_eq!(v["quoted"], Value::String("a: b # c".into()));
    }

    #[test]
    fn leaves_everything_outside_the_subset_to_the_parser() {
        for yaml in [
            "name: a: b\n",
            "name: a # comment\n",
            "# comment\nname: a\n",
            "name: a\n  continued\n",
            "name:\tx\n",
            "name: x\r\n",
            "ttl: 1.5\n",
            "ttl: 007\n",
            "ttl: 0x1f\n",
            "ttl: +3\n",
            "ttl: 1e3\n",
            "ttl: 123456789012345678901\n",
            "name: &a x\n",
            "name: *a\n",
            "name: !tag x\n",
            "name: |\n  text\n",
            "name: 'it''s'\n",
            "name: \"a\\tb\"\n",
            "name: a\nname: b\n",
            "null: a\n",
            "tags: [a, [b]]\n",
            "tags: [a,\n  b]\n",
            "tags: [a, ]\n",
            "tags: [a] x\n",
            "related:\n  - a\n    - b\n",
            "related:\n  - a\n - b\n",
            "related:\n  -\n",
            "related:\n  - [[a]]\n",
            "- a\n",
            "key:value\n",
            "key : value\n",
            "nested:\n  inner: x\n",
            "name: a\u{85}b\n",
            "name: {a: b}\n",
            "name: -x\n",
            // Found by the fuzz target: YAML's implicit keys end at 1024 characters.
            &format!("{}: a\n", "k".repeat(1100)),
            &(0..=MAX_PLAIN_KEYS)
                .map(|i| format!("k{i}: v\n"))
                .collect::<String>(),
        ] {
            assert_eq!(plain(yaml), None, "{yaml:?}");
        }
    }

    #[test]
    fn blank_frontmatter_is_null_like_the_parser() {
        for yaml in ["", "\n", "  \n\n"] {
            assert_eq!(plain(yaml), Some(Value::Null), "{yaml:?}");
            assert_eq!(parsed(yaml), Some(Value::Null), "{yaml:?}");
        }
    }

    /// Pieces of frontmatter, tricky ones included: generated text is mostly near the subset's
    /// edge, where the two readers could disagree.
    const PIECES: &[&str] = &[
        "name",
        "tags",
        "related",
        "ttl_days",
        "null",
        "True",
        "x-y",
        "_k",
        ":",
        ": ",
        " ",
        "  ",
        "\n",
        "\n  - ",
        "\n- ",
        "- ",
        "[",
        "]",
        ", ",
        ",",
        "'",
        "\"",
        "#",
        " #",
        "a",
        "b c",
        "0",
        "007",
        "42",
        "1.5",
        "2025-09-10",
        "+1",
        ".5",
        "~",
        "true",
        "FALSE",
        "é",
        "中文",
        "\\",
        "&",
        "*",
        "!",
        "|",
        ">",
        "%",
        "@",
        "`",
        "{",
        "}",
        "?",
        "-",
        "\t",
        "\r",
        "\u{85}",
        "a:b",
        "http://x.y/z",
        "C#",
        "x]",
        "[[id]]",
        "\u{a0}",
        "\u{3000}",
        " |",
        " &",
        " -",
        " ?",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Whatever the plain reader accepts, the YAML parser reads to the same value.
        #[test]
        fn accepted_frontmatter_reads_as_the_parser_reads_it(
            picks in proptest::collection::vec(0..PIECES.len(), 0..24)
        ) {
            let yaml: String = picks.iter().map(|&i| PIECES[i]).collect();
            if let Some(v) = plain(&yaml) {
                prop_assert_eq!(Some(v), parsed(&yaml), "{:?}", yaml);
            }
        }

        /// Line-shaped frontmatter, mostly inside the subset.
        #[test]
        fn accepted_lines_read_as_the_parser_reads_them(
            lines in proptest::collection::vec(
                (0..5usize, 0..PIECES.len(), 0..PIECES.len(), 0..PIECES.len()), 0..8)
        ) {
            let mut yaml = String::new();
            for (shape, a, b, c) in lines {
                let (a, b, c) = (PIECES[a], PIECES[b], PIECES[c]);
                match shape {
                    0 => yaml.push_str(&format!("k{a:?}: {b}{c}\n").replace('"', "")),
                    1 => yaml.push_str(&format!("name: {a}{b}{c}\n")),
                    2 => yaml.push_str(&format!("tags: [{a}, {b}{c}]\n")),
                    3 => yaml.push_str(&format!("related:\n  - {a}{b}\n  - {c}\n")),
                    _ => yaml.push_str(&format!("ttl_days: {a}{b}\n")),
                }
            }
            if let Some(v) = plain(&yaml) {
                prop_assert_eq!(Some(v), parsed(&yaml), "{:?}", yaml);
            }
        }
    }

    /// The generators above must reach the subset often, or the comparison proves little.
    #[test]
    fn the_generated_lines_are_often_inside_the_subset() {
        let mut accepted = 0;
        let total = PIECES.len() * PIECES.len();
        for a in PIECES {
            for b in PIECES {
                let yaml = format!("name: {a}{b}\ntags: [{a}, {b}]\nrelated:\n  - {b}\n");
                if let Some(v) = plain(&yaml) {
                    assert_eq!(Some(v), parsed(&yaml), "{yaml:?}");
                    accepted += 1;
                }
            }
        }
        // 306 of 3481 when written: most pairs hold a piece outside the subset.
        assert!(accepted * 20 > total, "{accepted} of {total}");
    }
}
