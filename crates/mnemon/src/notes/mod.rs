//! What does a note say? Parsing one Markdown note into metadata, body and typed edges.
//!
//! A note is `memory/<path>.md`; its id (slug) is the path without `.md`. The parser never fails:
//! whatever it cannot understand (bad YAML, a bad link, a merge-conflict marker) becomes a
//! [`Problem`] on the [`ParsedNote`], and the rest of the note is still used.

mod bounds;
mod date;
mod frontmatter;
mod id;
mod links;
mod open;
mod plain_yaml;
pub mod script;

pub use bounds::{
    BoundsError, MAX_FRONTMATTER_ALIASES, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH,
    check_frontmatter_bounds,
};
pub use date::{format_date_unix_s, parse_date_unix_s};
pub use frontmatter::{FrontmatterError, MAX_LIST_ENTRIES, NoteMeta, split_frontmatter};
pub use id::{
    IdError, MAX_ID_BYTES, NotePathError, SHOWN_ID_CHARS, ShownId, UnknownIdFix, conflict_copy_of,
    id_from_relative_path, id_of_note_path, validate_id, why_unlinkable, with_marks_shown,
};
pub use links::{Link, extract_links};
pub use open::{
    OpenNoteError, file_kind, not_regular_message, open_inside, outside_message, read_bounded,
};
pub use plain_yaml::{PlainEntries, as_yaml_value, read_plain};

use serde::Serialize;

/// Largest note (bytes) parsed in full; longer files are indexed from their first
/// `MAX_NOTE_BYTES` bytes and reported.
pub const MAX_NOTE_BYTES: usize = 4 << 20;
/// At most this many edges are kept from one note (a limit on everything).
pub const MAX_EDGES_PER_NOTE: usize = 4096;

/// The `type:` of a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NoteType {
    /// Facts about the project: decisions, incidents, how things work.
    Project,
    /// What the user corrected or asked for.
    Feedback,
    /// Who the user is and what they prefer.
    User,
    /// Pointers to outside material.
    Reference,
    /// A note that mostly lists other notes.
    Index,
    /// No `type:` (or one mnemon does not know).
    #[default]
    Unknown,
}

impl NoteType {
    /// Every type.
    pub const ALL: [NoteType; 6] = [
        NoteType::Project,
        NoteType::Feedback,
        NoteType::User,
        NoteType::Reference,
        NoteType::Index,
        NoteType::Unknown,
    ];

    /// Parse a frontmatter value; `None` for an unknown type.
    pub fn parse(s: &str) -> Option<NoteType> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "project" => NoteType::Project,
            "feedback" => NoteType::Feedback,
            "user" => NoteType::User,
            "reference" => NoteType::Reference,
            "index" => NoteType::Index,
            _ => return None,
        })
    }
    /// The stable on-disk code (format-spec/store.md).
    pub fn code(self) -> u8 {
        match self {
            NoteType::Unknown => 0,
            NoteType::Project => 1,
            NoteType::Feedback => 2,
            NoteType::User => 3,
            NoteType::Reference => 4,
            NoteType::Index => 5,
        }
    }
    /// Inverse of [`NoteType::code`].
    pub fn from_code(c: u8) -> Option<NoteType> {
        Some(match c {
            0 => NoteType::Unknown,
            1 => NoteType::Project,
            2 => NoteType::Feedback,
            3 => NoteType::User,
            4 => NoteType::Reference,
            5 => NoteType::Index,
            _ => return None,
        })
    }
    /// Lowercase name, as in frontmatter and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            NoteType::Project => "project",
            NoteType::Feedback => "feedback",
            NoteType::User => "user",
            NoteType::Reference => "reference",
            NoteType::Index => "index",
            NoteType::Unknown => "unknown",
        }
    }
}

/// The kind of an edge `from -> to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// `from` mentions `to` (`related:` or a `[[link]]`).
    References,
    /// `from` is part of `to` (`part_of:`).
    PartOf,
    /// `from` was derived from `to` (`derived_from:`, or a project note linking a user note).
    DerivedFrom,
    /// `from` supersedes `to` (`supersedes:`, or "supersedes/replaces/deprecates `[[to]]`").
    Supersedes,
    /// `from` contradicts `to` (`contradicts:`).
    Contradicts,
    /// Synthesized: both ids share a slug prefix.
    CoOccursSlug,
    /// Synthesized: similar vocabulary (TF-IDF cosine).
    CoOccursToken,
}

impl EdgeKind {
    /// All kinds, in code order.
    pub const ALL: [EdgeKind; 7] = [
        EdgeKind::References,
        EdgeKind::PartOf,
        EdgeKind::DerivedFrom,
        EdgeKind::Supersedes,
        EdgeKind::Contradicts,
        EdgeKind::CoOccursSlug,
        EdgeKind::CoOccursToken,
    ];
    /// The stable on-disk code (format-spec/store.md).
    pub fn code(self) -> u8 {
        match self {
            EdgeKind::References => 1,
            EdgeKind::PartOf => 2,
            EdgeKind::DerivedFrom => 3,
            EdgeKind::Supersedes => 4,
            EdgeKind::Contradicts => 5,
            EdgeKind::CoOccursSlug => 6,
            EdgeKind::CoOccursToken => 7,
        }
    }
    /// Inverse of [`EdgeKind::code`].
    pub fn from_code(c: u8) -> Option<EdgeKind> {
        EdgeKind::ALL.into_iter().find(|k| k.code() == c)
    }
    /// snake_case name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::References => "references",
            EdgeKind::PartOf => "part_of",
            EdgeKind::DerivedFrom => "derived_from",
            EdgeKind::Supersedes => "supersedes",
            EdgeKind::Contradicts => "contradicts",
            EdgeKind::CoOccursSlug => "co_occurs_slug",
            EdgeKind::CoOccursToken => "co_occurs_token",
        }
    }
}

/// Where an edge came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// A frontmatter list (`related`, `part_of`, ...).
    Frontmatter,
    /// A `[[link]]` in the body.
    InlineLink,
    /// Inferred by mnemon (phrases, slug clusters, token similarity).
    Synthesized,
}

impl Provenance {
    /// The stable on-disk code (format-spec/store.md).
    pub fn code(self) -> u8 {
        match self {
            Provenance::Frontmatter => 1,
            Provenance::InlineLink => 2,
            Provenance::Synthesized => 3,
        }
    }
    /// Inverse of [`Provenance::code`].
    pub fn from_code(c: u8) -> Option<Provenance> {
        Some(match c {
            1 => Provenance::Frontmatter,
            2 => Provenance::InlineLink,
            3 => Provenance::Synthesized,
            _ => return None,
        })
    }
    /// Name as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Frontmatter => "frontmatter",
            Provenance::InlineLink => "inline-link",
            Provenance::Synthesized => "synthesized",
        }
    }
}

/// Confidence of an edge written by hand (frontmatter or `[[link]]`).
pub const CONFIDENCE_HAND_WRITTEN: f32 = 1.0;
/// Confidence of a supersede edge read from a body phrase.
pub const CONFIDENCE_PHRASE: f32 = 0.8;

/// An edge as the parser found it, before it is stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EdgeDraft {
    pub to: String,
    pub kind: EdgeKind,
    pub provenance: Provenance,
    pub confidence: f32,
}

/// What kind of problem a note has (stable codes, format-spec/store.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The file could not be read, or is too large and was cut.
    File,
    /// The bytes are not UTF-8.
    Encoding,
    /// The file is empty.
    Empty,
    /// The frontmatter is not valid YAML, or a value has the wrong shape.
    Frontmatter,
    /// A merge conflict: a git merge-conflict marker, or a file named as a sync or merge tool
    /// names its conflict copy of a note.
    Conflict,
    /// A link that cannot be followed (bad id, self-link).
    Link,
}

impl ProblemKind {
    /// The stable on-disk code.
    pub fn code(self) -> u8 {
        match self {
            ProblemKind::File => 1,
            ProblemKind::Encoding => 2,
            ProblemKind::Empty => 3,
            ProblemKind::Frontmatter => 4,
            ProblemKind::Conflict => 5,
            ProblemKind::Link => 6,
        }
    }
    /// Inverse of [`ProblemKind::code`].
    pub fn from_code(c: u8) -> Option<ProblemKind> {
        Some(match c {
            1 => ProblemKind::File,
            2 => ProblemKind::Encoding,
            3 => ProblemKind::Empty,
            4 => ProblemKind::Frontmatter,
            5 => ProblemKind::Conflict,
            6 => ProblemKind::Link,
            _ => return None,
        })
    }
}

/// Something wrong with a note that did not stop it from being indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub kind: ProblemKind,
    pub message: String,
}

impl Problem {
    /// A problem of `kind`.
    pub fn new(kind: ProblemKind, message: impl Into<String>) -> Self {
        Problem {
            kind,
            message: message.into(),
        }
    }
}

/// A parsed note.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedNote {
    pub id: String,
    pub meta: NoteMeta,
    /// The body (text after the frontmatter).
    pub body: String,
    /// Deduplicated by (to, kind, provenance).
    pub edges: Vec<EdgeDraft>,
    pub problems: Vec<Problem>,
}

/// The bytes of the note at `path` as a scan reads them (its first `MAX_NOTE_BYTES`), or
/// `None` when it cannot be read.
pub fn read_note(path: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_NOTE_BYTES as u64)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// How the bytes of a note that is not UTF-8 were read (see [`decode_note`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-16 (little or big endian), as its byte order mark says.
    Utf16,
    /// UTF-8 where it is valid, each other byte as the Windows-1252 char it is.
    Windows1252,
}

/// The text of a note's bytes, as every reader of notes reads them: UTF-8 (a byte order mark
/// left for the caller to strip); UTF-16 when the bytes start with its byte order mark (what
/// Windows Notepad saves as "Unicode"); otherwise each byte that is not part of valid UTF-8 is
/// the Windows-1252 char it stands for (`caf\xE9` is `café`, `\x93quoted\x94` is `“quoted”`),
/// the legacy encoding of Western text on Windows, where a lossy reading would put U+FFFD
/// in the middle of the words and make them other words. With the encoding read when it was not
/// UTF-8, and the offset of the first byte that was not.
pub fn decode_note(bytes: &[u8]) -> (std::borrow::Cow<'_, str>, Option<(Encoding, usize)>) {
    let bad = match std::str::from_utf8(bytes) {
        Ok(s) => return (s.into(), None),
        Err(e) => e.valid_up_to(),
    };
    let utf16 = match bytes {
        [0xFF, 0xFE, ..] => Some(encoding_rs::UTF_16LE),
        [0xFE, 0xFF, ..] => Some(encoding_rs::UTF_16BE),
        _ => None,
    };
    if let Some(utf16) = utf16 {
        // Unpaired surrogates and an odd last byte read as U+FFFD.
        let text = utf16.decode_without_bom_handling(&bytes[2..]).0;
        return (text.into_owned().into(), Some((Encoding::Utf16, 0)));
    }
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 8);
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                let n = e.error_len().unwrap_or(after.len());
                // The five bytes Windows-1252 leaves unassigned read as the C1 control chars of
                // the same number, as web browsers read them (the WHATWG table).
                let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(&after[..n]);
                out.push_str(&text);
                rest = &after[n..];
            }
        }
    }
    (out.into(), Some((Encoding::Windows1252, bad)))
}

/// Parse the bytes of note `id`. Never fails: problems are collected on the result.
pub fn parse_note(id: &str, bytes: &[u8]) -> ParsedNote {
    let mut problems = Vec::new();
    let text: std::borrow::Cow<'_, str> = match std::str::from_utf8(bytes) {
        Ok(s) => s.into(),
        // A note over the size cap is read up to it, which may end inside a character: what is
        // before it is valid, and the size problem is reported apart.
        Err(e) if e.error_len().is_none() && bytes.len() >= MAX_NOTE_BYTES => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()])
        }
        Err(_) => {
            let (text, read) = decode_note(bytes);
            if let Some((encoding, at)) = read {
                let how = match encoding {
                    Encoding::Utf16 => "UTF-16 (its byte order mark says so)".to_string(),
                    Encoding::Windows1252 => format!(
                        "Windows-1252 where it is not UTF-8 (first such byte at offset {at})"
                    ),
                };
                problems.push(Problem {
                    kind: ProblemKind::Encoding,
                    message: format!("not valid UTF-8; read as {how}: re-save the file as UTF-8"),
                });
            }
            text
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        problems.push(Problem {
            kind: ProblemKind::Empty,
            message: "empty note: add a frontmatter block and a body, or delete the file".into(),
        });
    }
    if let Some(line) = conflict_marker_line(text) {
        problems.push(Problem {
            kind: ProblemKind::Conflict,
            message: format!(
                "git merge-conflict marker at line {line}: resolve the conflict and remove the <<<<<<< / ======= / >>>>>>> lines"
            ),
        });
    }
    if let Some((original, tool)) = conflict_copy_of(id) {
        problems.push(Problem {
            kind: ProblemKind::Conflict,
            message: format!(
                "a conflict copy of `{original}` made by {tool} (its file name says so): merge \
                 what differs into memory/{original}.md and delete this file (with no \
                 memory/{original}.md, rename this file to it: it may hold the only copy)"
            ),
        });
    }
    let (fm, body) = split_frontmatter(text);
    let meta = match fm {
        Some(yaml) => match NoteMeta::from_yaml(yaml) {
            Ok((meta, warnings)) => {
                problems.extend(
                    warnings
                        .into_iter()
                        .map(|m| Problem::new(ProblemKind::Frontmatter, m)),
                );
                meta
            }
            Err(FrontmatterError::OverLimit(over)) => {
                problems.push(Problem::new(ProblemKind::Frontmatter, over.to_string()));
                NoteMeta::default()
            }
            Err(FrontmatterError::Invalid(message)) => {
                problems.push(Problem {
                    kind: ProblemKind::Frontmatter,
                    message: format!(
                        "frontmatter is not valid YAML ({message}); the note is indexed from its body only: fix the YAML between the --- lines"
                    ),
                });
                NoteMeta::default()
            }
        },
        None => {
            if let Some(message) = frontmatter::frontmatter_shape_problem(text) {
                problems.push(Problem::new(ProblemKind::Frontmatter, message));
            }
            NoteMeta::default()
        }
    };

    let mut edges: Vec<EdgeDraft> = Vec::new();
    // Distinct links past the limit, to say how many were dropped.
    let mut over_limit: std::collections::HashSet<(String, EdgeKind, Provenance)> =
        std::collections::HashSet::new();
    let mut push = |to: &str, kind, provenance, confidence, problems: &mut Vec<Problem>| {
        if let Err(reason) = validate_id(to) {
            problems.push(Problem {
                kind: ProblemKind::Link,
                message: format!("link target `{to}` is not a valid id ({reason}); it was ignored"),
            });
            return;
        }
        if to == id {
            problems.push(Problem {
                kind: ProblemKind::Link,
                message: format!("the note links to itself (`{to}`); the self-link was ignored"),
            });
            return;
        }
        if edges
            .iter()
            .any(|e| e.to == to && e.kind == kind && e.provenance == provenance)
        {
            return;
        }
        if edges.len() >= MAX_EDGES_PER_NOTE {
            over_limit.insert((to.to_string(), kind, provenance));
            return;
        }
        edges.push(EdgeDraft {
            to: to.to_string(),
            kind,
            provenance,
            confidence,
        });
    };
    for (kind, targets) in meta.relations() {
        for to in targets {
            push(
                to,
                kind,
                Provenance::Frontmatter,
                CONFIDENCE_HAND_WRITTEN,
                &mut problems,
            );
        }
    }
    for link in extract_links(body) {
        push(
            &link.target,
            EdgeKind::References,
            Provenance::InlineLink,
            CONFIDENCE_HAND_WRITTEN,
            &mut problems,
        );
        if link.supersede_phrase {
            push(
                &link.target,
                EdgeKind::Supersedes,
                Provenance::Synthesized,
                CONFIDENCE_PHRASE,
                &mut problems,
            );
        }
    }
    if !over_limit.is_empty() {
        problems.push(Problem::new(
            ProblemKind::Link,
            format!(
                "{} links past the first {MAX_EDGES_PER_NOTE} of the note were ignored; split it into smaller notes",
                over_limit.len()
            ),
        ));
    }
    // A note that declares the same link twice produces one problem per occurrence; keep one.
    problems.dedup();
    ParsedNote {
        id: id.to_string(),
        meta,
        body: body.to_string(),
        edges,
        problems,
    }
}

/// The 1-based line of the first git merge-conflict marker, if any.
fn conflict_marker_line(text: &str) -> Option<usize> {
    // Only a line starting with `<` or `>` can be one: those are found with memchr instead of
    // walking every line of the note. Line numbers are `str::lines`'s.
    let b = text.as_bytes();
    for i in memchr::memchr2_iter(b'<', b'>', b) {
        if i > 0 && b[i - 1] != b'\n' {
            continue;
        }
        let line = match memchr::memchr(b'\n', &b[i..]) {
            Some(len) => {
                let l = &text[i..i + len];
                l.strip_suffix('\r').unwrap_or(l)
            }
            None => &text[i..],
        };
        if is_conflict_marker(line) {
            return Some(memchr::memchr_iter(b'\n', &b[..i]).count() + 1);
        }
    }
    None
}

/// A git merge-conflict marker line (the start or the end of a conflict).
fn is_conflict_marker(l: &str) -> bool {
    l.starts_with("<<<<<<< ") || l == "<<<<<<<" || l.starts_with(">>>>>>> ") || l == ">>>>>>>"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a note with 5000 links kept 4096 and a `tags` list of 3000 kept 1024, and
    /// nothing said so.
    #[test]
    fn links_and_lists_past_their_limits_are_reported() {
        let links: String = (0..MAX_EDGES_PER_NOTE + 10)
            .map(|i| format!("[[n{i}]] [[n{i}]] "))
            .collect();
        let tags: Vec<String> = (0..MAX_LIST_ENTRIES + 5).map(|i| format!("t{i}")).collect();
        let text = format!("---\ntags: [{}]\n---\n{links}\n", tags.join(", "));
        let parsed = parse_note("big", text.as_bytes());
        assert_eq!(parsed.edges.len(), MAX_EDGES_PER_NOTE);
        assert_eq!(parsed.meta.tags.len(), MAX_LIST_ENTRIES);
        let messages: Vec<&str> = parsed.problems.iter().map(|p| p.message.as_str()).collect();
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("10 links past the first 4096")),
            "{messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("`tags` lists 1029 entries; only the first 1024")),
            "{messages:?}"
        );
        let small = parse_note("small", b"[[a]] [[a]] [[b]]");
        assert!(small.problems.is_empty(), "{:?}", small.problems);
    }

    /// `conflict_marker_line` as it was: every line walked.
    fn conflict_marker_line_by_lines(text: &str) -> Option<usize> {
        text.lines().position(is_conflict_marker).map(|i| i + 1)
    }

    const MARKER_PIECES: &[&str] = &[
        "<<<<<<<", ">>>>>>>", " ", "\n", "\r\n", "\r", "x", "<", ">", "=======", "ours",
    ];

    proptest::proptest! {
        /// Finding marker lines with memchr gives the line that walking every line gives.
        #[test]
        fn conflict_markers_are_found_on_the_line_lines_finds(
            picks in proptest::collection::vec(0..MARKER_PIECES.len(), 0..40)
        ) {
            let text: String = picks.iter().map(|&i| MARKER_PIECES[i]).collect();
            proptest::prop_assert_eq!(
                conflict_marker_line(&text),
                conflict_marker_line_by_lines(&text)
            );
        }
    }

    fn kinds(n: &ParsedNote) -> Vec<(String, EdgeKind, Provenance)> {
        n.edges
            .iter()
            .map(|e| (e.to.clone(), e.kind, e.provenance))
            .collect()
    }

    #[test]
    fn a_note_cut_at_the_size_cap_inside_a_character_is_no_encoding_problem() {
        // 3-byte characters after as many ASCII bytes as make the cap fall inside one.
        let mut bytes = b"---\nname: Big1\n---\n".to_vec();
        while (MAX_NOTE_BYTES - bytes.len()).is_multiple_of(3) {
            bytes.push(b'x');
        }
        while bytes.len() <= MAX_NOTE_BYTES {
            bytes.extend_from_slice("日".as_bytes());
        }
        bytes.truncate(MAX_NOTE_BYTES);
        assert!(std::str::from_utf8(&bytes).is_err());
        let n = parse_note("big", &bytes);
        assert!(n.problems.is_empty(), "{:?}", n.problems);
        assert_eq!(n.meta.name.as_deref(), Some("Big1"));
        assert!(n.body.ends_with('日'));
        // The same bad end in a note under the cap is a real encoding problem.
        let short = b"body \xe6\x97";
        assert_eq!(
            parse_note("s", short).problems[0].kind,
            ProblemKind::Encoding
        );
    }

    /// A note saved in Windows-1252 was read with U+FFFD in place of each accented letter, so
    /// `r\xE9sum\xE9` was the words `r` and `sum`, found by neither `résumé` nor `resume`; a
    /// note saved as UTF-16 (Notepad's "Unicode") was read as nothing but replacement chars.
    #[test]
    fn a_note_in_windows_1252_or_utf_16_is_read_as_such_and_reported() {
        let n = parse_note(
            "a",
            b"---\nname: R\xe9sum\xe9 tips\n---\nThe caf\xe9 \x93menu\x94 costs \x80 5 \xe2\x80\x94 ok\x81\n",
        );
        assert_eq!(n.meta.name.as_deref(), Some("Résumé tips"));
        // Valid UTF-8 among the bytes (the dash) stays what it is.
        assert_eq!(n.body, "The café “menu” costs € 5 — ok\u{81}\n");
        assert_eq!(n.problems.len(), 1, "{:?}", n.problems);
        assert_eq!(n.problems[0].kind, ProblemKind::Encoding);
        let message = &n.problems[0].message;
        assert!(
            message.contains("Windows-1252") && message.contains("offset 11"),
            "{message}"
        );
        let text = "---\nname: Notes\n---\nNa\u{ef}ve 数据 😀\n";
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        for bytes in [le, be] {
            let n = parse_note("b", &bytes);
            assert_eq!(n.meta.name.as_deref(), Some("Notes"));
            assert_eq!(n.body, "Na\u{ef}ve 数据 😀\n");
            assert!(n.problems[0].message.contains("UTF-16"), "{:?}", n.problems);
        }
        // UTF-8 is read as it is, with no problem; so is a byte order mark.
        assert_eq!(
            decode_note("caf\u{e9}".as_bytes()),
            ("caf\u{e9}".into(), None)
        );
        assert!(
            parse_note("c", "\u{feff}caf\u{e9}".as_bytes())
                .problems
                .is_empty()
        );
        for b in 0x80..=0xFFu8 {
            let byte = [b];
            let (text, read) = decode_note(&byte);
            assert_eq!(text.chars().count(), 1, "{b:#x}");
            assert!(read.is_some());
        }
    }

    #[test]
    fn a_frontmatter_with_a_trailing_space_keeps_its_links_and_a_broken_one_is_named() {
        let spaced = parse_note("a", b"--- \nname: A\nsupersedes: [old]\n---  \nbody\n");
        assert!(spaced.problems.is_empty(), "{:?}", spaced.problems);
        assert_eq!(spaced.meta.name.as_deref(), Some("A"));
        assert_eq!(
            kinds(&spaced),
            vec![("old".into(), EdgeKind::Supersedes, Provenance::Frontmatter)]
        );
        let unclosed = parse_note("a", b"---\nname: A\nsupersedes: [old]\nbody\n");
        assert_eq!(unclosed.meta.name, None);
        assert_eq!(unclosed.problems.len(), 1, "{:?}", unclosed.problems);
        assert_eq!(unclosed.problems[0].kind, ProblemKind::Frontmatter);
        assert!(unclosed.problems[0].message.contains("never closed"));
    }

    #[test]
    fn frontmatter_relations_become_typed_edges() {
        let n = parse_note(
            "a",
            b"---\nrelated: [b, c]\npart_of: [p]\nderived_from: d\nsupersedes:\n  - old\ncontradicts: [x]\n---\nbody\n",
        );
        assert!(n.problems.is_empty(), "{:?}", n.problems);
        let fm = Provenance::Frontmatter;
        assert_eq!(
            kinds(&n),
            vec![
                ("b".into(), EdgeKind::References, fm),
                ("c".into(), EdgeKind::References, fm),
                ("p".into(), EdgeKind::PartOf, fm),
                ("d".into(), EdgeKind::DerivedFrom, fm),
                ("old".into(), EdgeKind::Supersedes, fm),
                ("x".into(), EdgeKind::Contradicts, fm),
            ]
        );
    }

    #[test]
    fn inline_links_and_phrases() {
        let n = parse_note(
            "a",
            "See [[b]], [[c|the c note]] and [[d#Heading]]. This replaces [[old]]. 本方案取代 [[旧]].\n"
                .as_bytes(),
        );
        let il = Provenance::InlineLink;
        let syn = Provenance::Synthesized;
        assert_eq!(
            kinds(&n),
            vec![
                ("b".into(), EdgeKind::References, il),
                ("c".into(), EdgeKind::References, il),
                ("d".into(), EdgeKind::References, il),
                ("old".into(), EdgeKind::References, il),
                ("old".into(), EdgeKind::Supersedes, syn),
                ("旧".into(), EdgeKind::References, il),
                ("旧".into(), EdgeKind::Supersedes, syn),
            ]
        );
        let phrase = n.edges.iter().find(|e| e.provenance == syn).unwrap();
        assert_eq!(phrase.confidence, CONFIDENCE_PHRASE);
    }

    #[test]
    fn malformed_yaml_keeps_body_links() {
        let n = parse_note("a", b"---\nname: [unclosed\n---\nsee [[b]]\n");
        assert_eq!(n.edges.len(), 1);
        assert_eq!(n.edges[0].to, "b");
        assert_eq!(n.problems.len(), 1);
        assert!(n.problems[0].message.contains("not valid YAML"));
        assert_eq!(n.meta.name, None);
    }

    #[test]
    fn self_link_and_traversal_ids_are_dropped_with_a_problem() {
        let n = parse_note("a", b"[[a]] [[../etc/passwd]] [[/abs/path]] [[ok]]");
        assert_eq!(
            kinds(&n),
            vec![("ok".into(), EdgeKind::References, Provenance::InlineLink)]
        );
        assert_eq!(n.problems.len(), 3, "{:?}", n.problems);
        assert!(n.problems[0].message.contains("links to itself"));
        assert!(n.problems[1].message.contains(".."));
    }

    #[test]
    fn non_utf8_empty_and_conflict_markers_are_problems() {
        let n = parse_note("a", b"hello \xff world [[b]]");
        assert!(n.problems[0].message.contains("UTF-8"));
        assert_eq!(n.edges.len(), 1);
        assert!(n.body.contains("world"));

        let n = parse_note("a", b"");
        assert!(n.problems[0].message.contains("empty note"));

        let n = parse_note(
            "a",
            b"x\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n",
        );
        assert_eq!(n.problems.len(), 1);
        assert!(n.problems[0].message.contains("line 2"), "{:?}", n.problems);
    }

    #[test]
    fn duplicate_links_give_one_edge() {
        let n = parse_note("a", b"---\nrelated: [b]\n---\n[[b]] and again [[b|B]]\n");
        assert_eq!(n.edges.len(), 2, "one frontmatter edge, one inline edge");
    }
}
