//! The YAML frontmatter block of a note: splitting it off and reading the keys mnemon knows.
//!
//! All keys are optional; unknown keys are ignored. Values of the wrong shape become warnings
//! (the rest of the frontmatter is still used). Relation lists accept a single string too.

use super::bounds::{BoundsError, check_frontmatter_nesting, check_frontmatter_size};
use super::plain_yaml::read_plain;
use super::{EdgeKind, NoteType, parse_date_unix_s};
use serde_yaml_ng::Value;

/// At most this many entries are read from one list (tags, related, ...).
pub const MAX_LIST_ENTRIES: usize = 1024;
/// The note's line number of a frontmatter's first line (the opening `---` is line 1).
const FRONTMATTER_FIRST_LINE: usize = 2;

/// Why a frontmatter block was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontmatterError {
    /// Over a size, nesting or alias limit: not parsed at all. Its text names the limit and the
    /// fix.
    OverLimit(BoundsError),
    /// Not valid YAML, or not a mapping: the parser's message.
    Invalid(String),
}

/// What the frontmatter says about a note.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NoteMeta {
    pub name: Option<String>,
    pub description: Option<String>,
    pub note_type: NoteType,
    /// `created_at`, Unix seconds (a date is its midnight UTC).
    pub created_s: Option<i64>,
    /// `updated_at`, Unix seconds (a date is its midnight UTC).
    pub updated_s: Option<i64>,
    pub ttl_days: Option<u32>,
    pub tags: Vec<String>,
    pub pin: bool,
    pub related: Vec<String>,
    pub part_of: Vec<String>,
    pub derived_from: Vec<String>,
    pub supersedes: Vec<String>,
    pub contradicts: Vec<String>,
}

/// Split `text` into (frontmatter YAML, body). The frontmatter is the block between a first line
/// `---` and the next line `---` (or `...`); spaces or tabs after either are allowed (an editor
/// leaves them, a reader cannot see them). Without it the whole text is the body.
pub fn split_frontmatter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = after_opening(text) else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let trimmed = line.trim_end_matches(['\n', '\r', ' ', '\t']);
        if trimmed == "---" || trimmed == "..." {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return (Some(yaml), body);
        }
        offset += line.len();
    }
    // An opening `---` with no closing line: treat the whole text as body.
    (None, text)
}

/// The text after a first line `---` (trailing spaces or tabs allowed), if `text` starts so.
fn after_opening(text: &str) -> Option<&str> {
    let (first, rest) = text.split_once('\n')?;
    (first.trim_end_matches(['\r', ' ', '\t']) == "---").then_some(rest)
}

/// Why a note that seems meant to have a frontmatter block has none that mnemon reads, with the
/// fix, or `None`: an opening `---` never closed, a block that starts below blank lines, or one
/// opened with more than three dashes. Such a note is indexed from its body only (its name,
/// type, tags and links are lost), so it is named rather than read as it is without a word.
pub fn frontmatter_shape_problem(text: &str) -> Option<String> {
    if split_frontmatter(text).0.is_some() {
        return None;
    }
    // Lines ended by a carriage return alone (classic Mac OS): the whole note is one line here.
    if text
        .strip_prefix("---\r")
        .is_some_and(|rest| !rest.starts_with('\n'))
    {
        return Some(
            "the note's lines end in a carriage return alone (classic Mac OS line endings), so \
             its frontmatter is not read and it is indexed from its body only: save it with LF \
             (or CRLF) line endings"
                .into(),
        );
    }
    if after_opening(text).is_some() {
        return Some(
            "the frontmatter opened by `---` on line 1 is never closed, so the note is indexed \
             from its body only: add a line `---` after its last key"
                .into(),
        );
    }
    let mut lines = text.lines();
    let mut blank_lines = 0;
    let first = loop {
        let line = lines.next()?;
        if !line.trim().is_empty() {
            break line.trim_end();
        }
        blank_lines += 1;
    };
    let dashes = |l: &str| l.len() >= 3 && l.bytes().all(|b| b == b'-');
    if !dashes(first) {
        return None;
    }
    // Read as if it were meant: is the first line below it a `key: value`, and is the block
    // closed by dashes?
    let key_line = |l: &str| {
        l.split_once(':').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
    };
    let mut keyed = None;
    let closed = lines.any(|l| {
        let l = l.trim_end();
        if keyed.is_none() && !l.trim().is_empty() && !l.trim_start().starts_with('#') {
            keyed = Some(key_line(l));
        }
        dashes(l)
    });
    if !closed || keyed != Some(true) {
        return None;
    }
    Some(if blank_lines > 0 {
        format!(
            "the frontmatter block starts on line {}, not on line 1, so it is not read and the \
             note is indexed from its body only: remove the blank lines above it",
            blank_lines + 1
        )
    } else {
        format!(
            "the frontmatter block opens with `{first}` ({} dashes), so it is not read and the \
             note is indexed from its body only: open it with exactly `---`",
            first.len()
        )
    })
}

/// A frontmatter's entries with string keys, in order, as the YAML parser reads them: the
/// values of the keys mnemon reads ([`KNOWN_KEYS`]); those of other keys are skipped unread: a value [`Value`] cannot hold (an integer
/// past 64 bits, as some ids are) in a key of the user's own spoils nothing. A null or empty
/// frontmatter has no entries; anything but a mapping is an error; a key written twice is one
/// (as YAML has it).
struct KnownEntries(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for KnownEntries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KnownEntriesVisitor)
    }
}

struct KnownEntriesVisitor;

impl<'de> serde::de::Visitor<'de> for KnownEntriesVisitor {
    type Value = KnownEntries;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a frontmatter of key: value lines")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<KnownEntries, E> {
        Ok(KnownEntries(Vec::new()))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<KnownEntries, E> {
        Ok(KnownEntries(Vec::new()))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<KnownEntries, A::Error> {
        use serde::de::Error as _;
        let mut entries: Vec<(String, Value)> = Vec::new();
        let mut merged: Vec<(String, Value)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<Value>()? {
            if !seen.insert(key.clone()) {
                // Worded as the YAML parser words it for a mapping it reads whole.
                let shown = match &key {
                    Value::String(s) => format!("{s:?}"),
                    other => serde_yaml_ng::to_string(other)
                        .unwrap_or_default()
                        .trim_end()
                        .replace('\n', " "),
                };
                return Err(A::Error::custom(format!(
                    "duplicate entry with key {shown}"
                )));
            }
            let value = match key.as_str() {
                Some(k) if KNOWN_KEYS.contains(&k) => map.next_value::<Value>()?,
                Some(MERGE_KEY) => {
                    merged.extend(merged_entries(map.next_value::<Value>()?));
                    continue;
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    Value::Null
                }
            };
            // Other keys are passed on without their value: a misspelt one gets its warning.
            if let Some(k) = key.as_str() {
                entries.push((k.to_string(), value));
            }
        }
        // A key written here wins over a merged one, and an earlier merged mapping over a
        // later one (YAML's merge key).
        for (k, v) in merged {
            if !entries.iter().any(|(e, _)| *e == k) {
                entries.push((k, v));
            }
        }
        Ok(KnownEntries(entries))
    }
}

/// YAML's merge key: `<<: *base` (or `<<: [*a, *b]`) takes the keys of the mappings it names.
const MERGE_KEY: &str = "<<";

/// The entries of known keys a merge key's value brings: those of a mapping, or of each mapping
/// of a list, in order.
fn merged_entries(v: Value) -> Vec<(String, Value)> {
    let maps = match v {
        Value::Mapping(m) => vec![m],
        Value::Sequence(s) => s
            .into_iter()
            .filter_map(|v| match v {
                Value::Mapping(m) => Some(m),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    maps.into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let k = k.as_str().filter(|k| KNOWN_KEYS.contains(k))?.to_string();
            Some((k, v))
        })
        .collect()
}

/// The YAML parser's `message` with its line numbers counted in the note's file, not in the
/// frontmatter (which starts on [`FRONTMATTER_FIRST_LINE`]): "at line 2" of the YAML is line 3
/// of the file, where an editor shows it.
fn lines_of_the_file(message: &str) -> String {
    const LINE: &str = "line ";
    let mut out = String::with_capacity(message.len() + 4);
    let mut rest = message;
    while let Some(at) = rest.find(LINE) {
        let (before, from) = rest.split_at(at + LINE.len());
        out.push_str(before);
        let digits = from.bytes().take_while(u8::is_ascii_digit).count();
        match from[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + FRONTMATTER_FIRST_LINE - 1).to_string()),
            Err(_) => out.push_str(&from[..digits]),
        }
        rest = &from[digits..];
    }
    out.push_str(rest);
    out
}

impl NoteMeta {
    /// Read the keys mnemon knows. `Err` when the frontmatter is over a limit (it is then not
    /// parsed) or the YAML itself does not parse; `Ok((meta, warnings))` otherwise, with one
    /// warning per value of the wrong shape.
    pub fn from_yaml(yaml: &str) -> Result<(NoteMeta, Vec<String>), FrontmatterError> {
        let mut meta = NoteMeta::default();
        let mut warnings = Vec::new();
        check_frontmatter_size(yaml).map_err(FrontmatterError::OverLimit)?;
        // The plain subset is read directly (no nesting, no aliases; linear); anything else by
        // the YAML parser (equal values), once its nesting and aliases are within bounds.
        if let Some(entries) = read_plain(yaml) {
            for (key, v) in entries {
                meta.read_key(key, v, &mut warnings);
            }
            return Ok((meta, warnings));
        }
        check_frontmatter_nesting(yaml, FRONTMATTER_FIRST_LINE)
            .map_err(FrontmatterError::OverLimit)?;
        let parsed: KnownEntries = serde_yaml_ng::from_str(yaml)
            .map_err(|e| FrontmatterError::Invalid(lines_of_the_file(&e.to_string())))?;
        for (key, v) in parsed.0 {
            meta.read_key(&key, v, &mut warnings);
        }
        Ok((meta, warnings))
    }

    /// Take the value of one frontmatter key, if mnemon knows the key.
    fn read_key(&mut self, key: &str, v: Value, warnings: &mut Vec<String>) {
        let meta = self;
        match key {
            "name" | "description" => {
                let text = scalar_string(&v);
                if text.is_none() && !v.is_null() {
                    warnings.push(format!(
                        "`{key}` must be text (quote it if it holds a `: ` or starts with `[`); \
                         it was ignored"
                    ));
                }
                if key == "name" {
                    meta.name = text;
                } else {
                    meta.description = text;
                }
            }
            "type" => match scalar_string(&v) {
                Some(s) => match NoteType::parse(&s) {
                    Some(t) => meta.note_type = t,
                    None => warnings.push(format!(
                        "unknown type `{s}`: use project, feedback, user, reference or index"
                    )),
                },
                None if v.is_null() => {}
                None => warnings.push("`type` must be a string".into()),
            },
            "created_at" | "updated_at" => {
                let parsed = scalar_string(&v).and_then(|s| parse_date_unix_s(&s));
                if parsed.is_none() && !v.is_null() {
                    warnings.push(format!("`{key}` is not a YYYY-MM-DD date; it was ignored"));
                }
                if key == "created_at" {
                    meta.created_s = parsed;
                } else {
                    meta.updated_s = parsed;
                }
            }
            "ttl_days" => match &v {
                Value::Null => meta.ttl_days = None,
                Value::Number(n) => match n.as_u64().and_then(|d| u32::try_from(d).ok()) {
                    Some(d) => meta.ttl_days = Some(d),
                    None => warnings.push(format!(
                        "`ttl_days: {n}` must be a whole number of days from 0 to {}, or null",
                        u32::MAX
                    )),
                },
                _ => warnings.push("`ttl_days` must be a number of days, or null".into()),
            },
            "pin" | "pinned" => match v {
                Value::Bool(b) => meta.pin = b,
                _ => warnings.push(format!("`{key}` must be true or false")),
            },
            "tags" => meta.tags = string_list(key, &v, warnings),
            "related" => meta.related = string_list(key, &v, warnings),
            "part_of" => meta.part_of = string_list(key, &v, warnings),
            "derived_from" => meta.derived_from = string_list(key, &v, warnings),
            "supersedes" => meta.supersedes = string_list(key, &v, warnings),
            "contradicts" => meta.contradicts = string_list(key, &v, warnings),
            _ => {
                if let Some(known) = meant_key(key) {
                    warnings.push(format!(
                        "`{key}` is not a key mnemon reads: did you mean `{known}`? (it was ignored)"
                    ));
                }
            }
        }
    }

    /// The typed relation lists, with the edge kind each gives.
    pub fn relations(&self) -> [(EdgeKind, &[String]); 5] {
        [
            (EdgeKind::References, &self.related),
            (EdgeKind::PartOf, &self.part_of),
            (EdgeKind::DerivedFrom, &self.derived_from),
            (EdgeKind::Supersedes, &self.supersedes),
            (EdgeKind::Contradicts, &self.contradicts),
        ]
    }
}

/// The keys [`NoteMeta::read_key`] reads.
const KNOWN_KEYS: [&str; 14] = [
    "name",
    "description",
    "type",
    "created_at",
    "updated_at",
    "ttl_days",
    "pin",
    "pinned",
    "tags",
    "related",
    "part_of",
    "derived_from",
    "supersedes",
    "contradicts",
];

/// The known key an unknown `key` most likely meant to be, if any: the same key in other case or
/// with `-` or a space for `_` (`Updated-At`), one cut short (`updated`, `ttl`), or one a typo or
/// two away (`descripton`, `tag`). Other keys are the author's own (`status`, `owner`) and pass
/// without a word: a warning on them would be noise.
fn meant_key(key: &str) -> Option<&'static str> {
    let k: String = key
        .trim()
        .chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    if k.chars().count() < 3 {
        return None;
    }
    KNOWN_KEYS
        .iter()
        .copied()
        .find(|known| *known == k)
        .or_else(|| {
            KNOWN_KEYS
                .iter()
                .copied()
                .find(|known| known.starts_with(&format!("{k}_")))
        })
        .or_else(|| {
            let most = if k.len() >= 6 { 2 } else { 1 };
            KNOWN_KEYS
                .iter()
                .copied()
                .map(|known| (strsim::damerau_levenshtein(&k, known), known))
                .filter(|(d, _)| *d <= most)
                .min()
                .map(|(_, known)| known)
        })
}

fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A list of strings; a single string counts as a one-element list. Links written as `[[id]]`
/// inside frontmatter lists are unwrapped.
fn string_list(key: &str, v: &Value, warnings: &mut Vec<String>) -> Vec<String> {
    let items: Vec<&Value> = match v {
        Value::Null => return Vec::new(),
        Value::Sequence(seq) => {
            if seq.len() > MAX_LIST_ENTRIES {
                warnings.push(format!(
                    "`{key}` lists {} entries; only the first {MAX_LIST_ENTRIES} are kept",
                    seq.len()
                ));
            }
            seq.iter().take(MAX_LIST_ENTRIES).collect()
        }
        other => vec![other],
    };
    let mut out = Vec::with_capacity(items.len());
    // Which entry, as written (shortened): a list of many must not leave the reader guessing.
    let not_plain = |n: usize, item: &Value| {
        let shown = serde_yaml_ng::to_string(item).unwrap_or_default();
        let shown = shown.trim().replace('\n', " ");
        let shown: String = shown.chars().take(40).collect();
        format!("`{key}` entry {n} (`{shown}`) is not a plain id: write each entry as an id")
    };
    for (i, item) in items.into_iter().enumerate() {
        match item {
            // `- [[id]]` in YAML is a nested list holding a list holding "id".
            Value::Sequence(inner) if inner.len() == 1 => match &inner[0] {
                Value::Sequence(i2) if i2.len() == 1 => {
                    if let Some(s) = scalar_string(&i2[0]) {
                        out.push(s);
                    }
                }
                _ => warnings.push(not_plain(i + 1, item)),
            },
            other => match scalar_string(other) {
                Some(s) => {
                    let s = s
                        .strip_prefix("[[")
                        .and_then(|x| x.strip_suffix("]]"))
                        .map(str::to_string)
                        .unwrap_or(s);
                    if !s.is_empty() && !out.contains(&s) {
                        out.push(s);
                    }
                }
                None => warnings.push(not_plain(i + 1, item)),
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_splits_on_lf_or_crlf_and_an_unclosed_block_is_body() {
        assert_eq!(
            split_frontmatter("---\na: 1\n---\nbody"),
            (Some("a: 1\n"), "body")
        );
        assert_eq!(
            split_frontmatter("---\r\na: 1\r\n---\r\nbody"),
            (Some("a: 1\r\n"), "body")
        );
        assert_eq!(split_frontmatter("no fm"), (None, "no fm"));
        assert_eq!(split_frontmatter("---\nunclosed"), (None, "---\nunclosed"));
    }

    /// An editor's trailing space after `---` dropped the whole block (name, type, tags, links)
    /// without a word.
    #[test]
    fn spaces_after_the_delimiters_are_allowed() {
        assert_eq!(
            split_frontmatter("--- \na: 1\n---\t\nbody"),
            (Some("a: 1\n"), "body")
        );
        assert_eq!(
            split_frontmatter("---  \r\na: 1\r\n--- \r\nbody"),
            (Some("a: 1\r\n"), "body")
        );
        assert_eq!(split_frontmatter("--- x\na: 1\n---\n").0, None);
    }

    /// Regression: a key of the user's own holding an integer past 64 bits (`status_id:
    /// 123456789012345678901`) was "not valid YAML" and the whole frontmatter (name, type, tags,
    /// links) was dropped: such a value is skipped unread now. What YAML refuses still errs.
    #[test]
    fn a_huge_integer_in_a_key_of_the_users_own_spoils_nothing() {
        let yaml = "name: Tweet\nstatus_id: 123456789012345678901\nlow: -123456789012345678901\n\
                    tags: [a, b] # comment: the plain reader leaves this to the parser\n";
        let (meta, warnings) = NoteMeta::from_yaml(yaml).expect("parses");
        assert_eq!(meta.name.as_deref(), Some("Tweet"));
        assert_eq!(meta.tags, ["a", "b"]);
        assert!(warnings.is_empty(), "{warnings:?}");
        // A misspelt key is still named, its value unread.
        let (_, warnings) =
            NoteMeta::from_yaml("descripton: 123456789012345678901\n# c\n").expect("parses");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("`description`"), "{warnings:?}");
        for bad in [
            "name: A\nname: B\n# c\n",
            "own: 1\nown: 2\n# c\n",
            "- a\n- b\n",
            "just text # c\n",
            "name: [unclosed\n",
        ] {
            assert!(
                matches!(NoteMeta::from_yaml(bad), Err(FrontmatterError::Invalid(_))),
                "{bad:?}"
            );
        }
        // Where the YAML parser says the error is, counted in the file (the frontmatter starts
        // on its second line): the `[` on the file's third line is at "line 3".
        let Err(FrontmatterError::Invalid(message)) =
            NoteMeta::from_yaml("name: ok\ntags: [a, b\ntype: project\n")
        else {
            panic!("an unclosed flow sequence parses");
        };
        assert!(
            message.contains("at line 4 column 5")
                && message.contains("flow sequence at line 3 column 7"),
            "{message}"
        );
        assert_eq!(
            lines_of_the_file("at line 9 (line x)"),
            "at line 10 (line x)"
        );
        // A key written twice is named as the YAML parser names it.
        assert_eq!(
            NoteMeta::from_yaml("name: A\nname: B\n# c\n").map(|_| ()),
            Err(FrontmatterError::Invalid(
                "duplicate entry with key \"name\"".into()
            ))
        );
        // YAML's merge key brings the keys of the mapping it names; a key written wins.
        let (meta, warnings) = NoteMeta::from_yaml(
            "base: &base {name: Merged, tags: [x], description: D}\n<<: *base\ndescription: own\n",
        )
        .expect("parses");
        assert_eq!(meta.name.as_deref(), Some("Merged"));
        assert_eq!(meta.tags, ["x"]);
        assert_eq!(meta.description.as_deref(), Some("own"));
        assert!(warnings.is_empty(), "{warnings:?}");
        // Empty or null frontmatter reads as no keys.
        for empty in ["", "~\n", "# only a comment\n"] {
            let (meta, warnings) = NoteMeta::from_yaml(empty).expect("parses");
            assert_eq!(meta.name, None);
            assert!(warnings.is_empty());
        }
    }

    #[test]
    fn a_block_mnemon_cannot_read_is_named_with_its_fix() {
        let problem = |t: &str| frontmatter_shape_problem(t).unwrap_or_default();
        assert!(problem("---\nname: A\nbody").contains("never closed"));
        assert!(problem("\n\n---\nname: A\n---\nbody").contains("starts on line 3"));
        assert!(problem("----\nname: A\n----\nbody").contains("`----` (4 dashes)"));
        assert!(problem("---\r\nname: A\r\n").contains("never closed"));
        assert!(
            problem("---\rname: A\r---\rbody\r").contains("carriage return alone"),
            "classic Mac OS line endings"
        );
        // What reads, and what is no frontmatter at all, says nothing.
        for fine in [
            "---\nname: A\n---\nbody",
            "no frontmatter\n",
            "",
            "\n---\n\nA rule, then text: with a colon.\n",
            "----\nJust a rule.\n----\n",
            "\n\nname: A\n",
        ] {
            assert_eq!(frontmatter_shape_problem(fine), None, "{fine:?}");
        }
    }

    #[test]
    fn reads_known_keys_and_warns_on_bad_shapes() {
        let (m, w) = NoteMeta::from_yaml(
            "name: N\ndescription: D\ntype: feedback\ncreated_at: 2026-01-20\nupdated_at: bad\nttl_days: 30\ntags: [a, b]\npin: true\nrelated: single\nextra: ignored\n",
        )
        .unwrap();
        assert_eq!(m.name.as_deref(), Some("N"));
        assert_eq!(m.note_type, NoteType::Feedback);
        assert_eq!(m.created_s, Some(1_768_867_200));
        assert_eq!(m.updated_s, None);
        assert_eq!(m.ttl_days, Some(30));
        assert_eq!(m.tags, vec!["a", "b"]);
        assert!(m.pin);
        assert_eq!(m.related, vec!["single"]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("updated_at"));
        // A value past the range is told the range (it was told "a whole number >= 0").
        let (m, w) = NoteMeta::from_yaml("ttl_days: 4294967296\n").unwrap();
        assert_eq!(m.ttl_days, None);
        assert_eq!(
            w,
            ["`ttl_days: 4294967296` must be a whole number of days from 0 to 4294967295, or null"]
        );
    }

    /// Regression: `updated: 2026-11-01` (for `updated_at`) or `tag: [x]` was dropped without a
    /// word, and the note lost its date or tags; a key of the author's own passes silently.
    #[test]
    fn a_misspelt_key_is_named_with_the_key_meant_and_an_own_key_is_not() {
        let (m, w) = NoteMeta::from_yaml(
            "name: N\nupdated: 2026-11-01\ntag: [a]\nDescripton: d\nTTL-Days: 3\nstatus: draft\nowner: me\nsource: x\nnotes: y\nid: z\n",
        )
        .unwrap();
        assert_eq!(m.updated_s, None);
        assert!(m.tags.is_empty());
        let meant: Vec<&str> = w
            .iter()
            .filter_map(|w| w.split("did you mean `").nth(1))
            .filter_map(|rest| rest.split('`').next())
            .collect();
        assert_eq!(
            meant,
            ["updated_at", "tags", "description", "ttl_days"],
            "{w:?}"
        );
        assert_eq!(meant_key("owner"), None);
        assert_eq!(meant_key("types"), Some("type"));
        assert_eq!(meant_key("supersede"), Some("supersedes"));
        assert_eq!(meant_key("created"), Some("created_at"));
        assert_eq!(meant_key("title"), None);
        assert_eq!(meant_key("date"), None);
    }

    /// `description: [1, 2]` (or a name that YAML reads as a list or a mapping) was dropped
    /// without a word.
    #[test]
    fn a_name_or_description_that_is_no_text_is_named_in_a_warning() {
        let (m, w) = NoteMeta::from_yaml("name: {a: b}\ndescription: [1, 2]\n").unwrap();
        assert_eq!((m.name, m.description), (None, None));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("`name` must be text"), "{w:?}");
        assert!(w[1].starts_with("`description` must be text"), "{w:?}");
        let (m, w) = NoteMeta::from_yaml("name:\ndescription: 42\n").unwrap();
        assert_eq!((m.name, m.description.as_deref()), (None, Some("42")));
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn wiki_links_in_yaml_lists_are_unwrapped() {
        let (m, _) = NoteMeta::from_yaml("related:\n  - [[a]]\n  - \"[[b]]\"\n").unwrap();
        assert_eq!(m.related, vec!["a", "b"]);
    }

    /// "`related` entries must be plain ids" did not say which of a long list.
    #[test]
    fn an_entry_that_is_no_id_is_named_by_position_and_text() {
        let (m, warnings) =
            NoteMeta::from_yaml("related:\n  - a\n  - {x: 1}\n  - b\n  - [1, 2]\n").unwrap();
        assert_eq!(m.related, vec!["a", "b"]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("entry 2 (`x: 1`)"), "{warnings:?}");
        assert!(warnings[1].contains("entry 4 (`- 1 - 2`)"), "{warnings:?}");
    }
}
