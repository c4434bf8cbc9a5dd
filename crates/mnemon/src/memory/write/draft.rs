//! A write request made into the note it will write: values normalized the way the parser reads
//! them, the frontmatter rendered by `serde_yaml_ng`, and the result parsed back as the scan will.

use super::*;

/// A request checked and normalized the way the parser reads frontmatter values (trimmed,
/// `[[id]]` unwrapped, empty entries dropped, repeats dropped).
pub(super) struct Draft<'a> {
    pub(super) id: &'a str,
    /// The id's parts: folders, then the file name's stem.
    pub(super) parts: Vec<&'a str>,
    pub(super) body: std::borrow::Cow<'a, str>,
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) note_type: Option<NoteType>,
    pub(super) tags: Vec<String>,
    pub(super) related: Vec<String>,
    pub(super) supersedes: Vec<String>,
    pub(super) contradicts: Vec<String>,
    pub(super) pin: Option<bool>,
    pub(super) expected_sha256: Option<String>,
    pub(super) on_duplicate: OnDuplicate,
}

/// The frontmatter as written, in this key order.
#[derive(Serialize)]
struct Frontmatter<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    note_type: Option<&'static str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pin: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<String>,
    updated_at: String,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    related: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    supersedes: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    contradicts: &'a [String],
}

/// The frontmatter of the note a write replaces, kept for the keys the request does not set.
pub(super) struct Kept {
    /// The YAML mapping as written, in its key order.
    yaml: serde_yaml_ng::Mapping,
    /// The frontmatter's text (without its `---` lines), its line ends as `\n`: a replacement
    /// edits it in place.
    text: String,
    /// Whether the replaced file's frontmatter ends every line with `\r\n` (a checkout on
    /// Windows): the replacement is then written with `\r\n` throughout, as the user's editor
    /// and git expect it.
    crlf: bool,
    /// What mnemon reads from it.
    meta: notes::NoteMeta,
    /// The problems the replaced note had (a value of the wrong shape, an unknown key): kept
    /// with their keys, they are the user's to fix and do not stop a replacement.
    problems: Vec<String>,
}

impl Kept {
    /// The frontmatter of a note file's first bytes `head` (parsed as `parsed`): `Ok(None)`
    /// when it has none (a replacement is then written from the request alone), `Err` with its
    /// problems when it has one that does not parse (YAML that is not valid, over a limit, not
    /// a mapping): a replacement could not keep its keys.
    pub(super) fn of(head: &[u8], parsed: ParsedNote) -> Result<Option<Kept>, String> {
        let Ok(text) = std::str::from_utf8(head) else {
            return Ok(None);
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some(yaml) = notes::split_frontmatter(text).0 else {
            return Ok(None);
        };
        let unreadable = || {
            let problems: Vec<&str> = parsed
                .problems
                .iter()
                .filter(|p| p.kind == notes::ProblemKind::Frontmatter)
                .map(|p| p.message.as_str())
                .collect();
            problems.join("; ")
        };
        // Within the parser's limits first: only then is the YAML parsed again as a mapping.
        if notes::NoteMeta::from_yaml(yaml).is_err() {
            return Err(unreadable());
        }
        let crlf = yaml.contains("\r\n") && !yaml.replace("\r\n", "").contains(['\r', '\n']);
        let text = if crlf {
            yaml.replace("\r\n", "\n")
        } else {
            yaml.to_string()
        };
        let yaml = serde_yaml_ng::from_str::<serde_yaml_ng::Mapping>(yaml).map_err(|e| {
            let problems = unreadable();
            if problems.is_empty() {
                format!("not a YAML mapping: {e}")
            } else {
                problems
            }
        })?;
        Ok(Some(Kept {
            yaml,
            text,
            crlf,
            problems: parsed.problems.iter().map(|p| p.message.clone()).collect(),
            meta: parsed.meta,
        }))
    }
}

/// A frontmatter text value as the parser reads it back: trimmed, `None` when empty.
fn text_field(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A frontmatter list as the parser reads it back; each entry checked as an id when `ids`.
fn list_field(
    field: &'static str,
    given: &[String],
    ids: bool,
) -> std::result::Result<Vec<String>, NoteWriteError> {
    if given.len() > notes::MAX_LIST_ENTRIES {
        return Err(NoteWriteError::TooManyEntries {
            field,
            count: given.len(),
            max: notes::MAX_LIST_ENTRIES,
        });
    }
    let mut out: Vec<String> = Vec::with_capacity(given.len());
    for entry in given {
        let s = entry.trim();
        let s = s
            .strip_prefix("[[")
            .and_then(|x| x.strip_suffix("]]"))
            .unwrap_or(s);
        if s.is_empty() || out.iter().any(|o| o == s) {
            continue;
        }
        if ids {
            notes::validate_id(s).map_err(|reason| NoteWriteError::InvalidLink {
                field,
                target: s.to_string(),
                reason,
            })?;
        }
        out.push(s.to_string());
    }
    Ok(out)
}

/// Check an id as the scan will find its file and links will name it: a valid id, no hidden
/// part, nothing a `[[...]]` link cannot hold, within the walk's depth, each part a name the
/// file system takes.
/// Names Windows keeps for devices, in any letter case and with any extension (`con.md`,
/// `Aux`): a file or folder so named cannot be made there.
const WINDOWS_DEVICE_NAMES: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Why the id's `parts` name a file or folder Windows cannot hold, if they do: a character it
/// refuses in a name (`\` and `|` are refused before, as link syntax), a device name, a folder
/// ending with a dot or a space (which Windows drops). The scan reads such files where they
/// exist; only a new note is held to this, since it is mnemon that names it.
pub(super) fn not_portable(parts: &[&str]) -> Option<String> {
    let last = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        if let Some(c) = part
            .chars()
            .find(|c| matches!(c, '*' | '?' | '"' | '<' | '>' | ':') || c.is_ascii_control())
        {
            return Some(format!(
                "holds {c:?}, which Windows does not allow in a file name"
            ));
        }
        let stem = part.split('.').next().unwrap_or(part).trim_end();
        if WINDOWS_DEVICE_NAMES
            .iter()
            .any(|d| stem.eq_ignore_ascii_case(d))
        {
            return Some(format!(
                "has the part `{part}`, a name Windows keeps for a device"
            ));
        }
        if i < last && part.ends_with(['.', ' ']) {
            return Some(format!(
                "has the folder `{part}`, whose trailing dot or space Windows drops"
            ));
        }
    }
    None
}

pub(super) fn id_parts(id: &str) -> std::result::Result<Vec<&str>, NoteWriteError> {
    notes::validate_id(id)?;
    // `write decisions/pool.md` meant the note `decisions/pool`, not `decisions/pool.md.md`.
    if let Some(stem) = id.get(..id.len().saturating_sub(3))
        && !stem.is_empty()
        && id[stem.len()..].eq_ignore_ascii_case(".md")
    {
        return Err(NoteWriteError::IdWithExtension {
            id: id.to_string(),
            stem: stem.to_string(),
        });
    }
    if let Some(why) = notes::why_unlinkable(id) {
        return Err(NoteWriteError::UnlinkableId {
            id: id.to_string(),
            why,
        });
    }
    if let Some((original, tool)) = notes::conflict_copy_of(id) {
        return Err(NoteWriteError::ConflictCopyId {
            id: id.to_string(),
            original,
            tool,
        });
    }
    let parts: Vec<&str> = id.split('/').collect();
    if let Some(part) = parts.iter().find(|p| p.starts_with('.')) {
        return Err(NoteWriteError::HiddenPart {
            part: (*part).to_string(),
        });
    }
    if parts.len() > crate::scan::MAX_DEPTH {
        return Err(NoteWriteError::TooDeep {
            parts: parts.len(),
            max: crate::scan::MAX_DEPTH,
        });
    }
    let last = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        let bytes = part.len() + if i == last { ".md".len() } else { 0 };
        if bytes > MAX_NAME_BYTES {
            return Err(NoteWriteError::PartTooLong {
                part: (*part).to_string(),
                bytes,
                max: MAX_NAME_BYTES,
            });
        }
    }
    Ok(parts)
}

impl<'a> Draft<'a> {
    pub(super) fn of(req: &'a WriteRequest) -> std::result::Result<Draft<'a>, NoteWriteError> {
        let parts = id_parts(&req.id)?;
        if req.body.len() > notes::MAX_NOTE_BYTES {
            return Err(NoteWriteError::TooLarge {
                bytes: req.body.len(),
                max: notes::MAX_NOTE_BYTES,
            });
        }
        if req.body.trim().is_empty() {
            return Err(NoteWriteError::EmptyBody);
        }
        if notes::split_frontmatter(req.body.trim_start_matches('\u{feff}'))
            .0
            .is_some()
        {
            return Err(NoteWriteError::BodyHasFrontmatter);
        }
        let body: std::borrow::Cow<'a, str> = if req.body.ends_with('\n') {
            req.body.as_str().into()
        } else {
            format!("{}\n", req.body).into()
        };
        let expected_sha256 = match req.expected_sha256.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(h) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Some(h.to_ascii_lowercase())
            }
            Some(h) => {
                return Err(NoteWriteError::BadSha256 {
                    given: h.chars().take(80).collect(),
                });
            }
        };
        Ok(Draft {
            id: &req.id,
            parts,
            body,
            name: text_field(&req.name),
            description: text_field(&req.description),
            note_type: req.note_type.filter(|t| *t != NoteType::Unknown),
            tags: list_field("tags", &req.tags, false)?,
            related: list_field("related", &req.related, true)?,
            supersedes: list_field("supersedes", &req.supersedes, true)?,
            contradicts: list_field("contradicts", &req.contradicts, true)?,
            pin: req.pin,
            expected_sha256,
            on_duplicate: req.on_duplicate,
        })
    }

    /// The note file's bytes, parsed back as the scan will parse them and checked: within the
    /// size cap, no problem, every field read back as given.
    /// A replacement keeps from `kept` (the replaced note's frontmatter) every key this request
    /// leaves out: a text field not given, a list given empty, `pin` not given, and the keys mnemon
    /// does not write.
    pub(super) fn render(
        &self,
        created_s: Option<i64>,
        now_s: i64,
        kept: Option<&Kept>,
    ) -> std::result::Result<(Vec<u8>, ParsedNote), NoteWriteError> {
        let front = Frontmatter {
            name: self.name.as_deref(),
            description: self.description.as_deref(),
            note_type: self.note_type.map(NoteType::as_str),
            tags: &self.tags,
            pin: self.pin == Some(true),
            created_at: created_s.map(notes::format_date_unix_s),
            // A clock set back (or a `created_at` written ahead) must not date the edit before
            // the note's creation.
            updated_at: notes::format_date_unix_s(created_s.map_or(now_s, |c| c.max(now_s))),
            related: &self.related,
            supersedes: &self.supersedes,
            contradicts: &self.contradicts,
        };
        let cannot = |e: serde_yaml_ng::Error| NoteWriteError::Problems {
            problems: format!("the frontmatter cannot be written as YAML ({e})"),
        };
        let yaml = match kept {
            None => serde_yaml_ng::to_string(&front).map_err(cannot)?,
            Some(k) => {
                let mut merged = k.yaml.clone();
                let given = match serde_yaml_ng::to_value(&front).map_err(cannot)? {
                    serde_yaml_ng::Value::Mapping(given) => given,
                    _ => serde_yaml_ng::Mapping::new(),
                };
                for (key, value) in &given {
                    merged.insert(key.clone(), value.clone());
                }
                let mut removed: Vec<&str> = Vec::new();
                if self.pin.is_some() {
                    // `pinned` is read as `pin`: one key says it, or none (unpinned).
                    merged.remove("pinned");
                    removed.push("pinned");
                }
                if self.pin == Some(false) {
                    merged.remove("pin");
                    removed.push("pin");
                }
                // The replaced text edited in place when that reads back as the merged mapping;
                // else the mapping written anew (comments and quoting then lost).
                match super::splice::splice(&k.text, &given, &removed).filter(|edited| {
                    serde_yaml_ng::from_str::<serde_yaml_ng::Mapping>(edited)
                        .is_ok_and(|read| read == merged)
                }) {
                    Some(edited) => edited,
                    None => serde_yaml_ng::to_string(&merged).map_err(cannot)?,
                }
            }
        };
        let mut file = format!("---\n{yaml}---\n{}", self.body);
        if kept.is_some_and(|k| k.crlf) {
            file = file.replace("\r\n", "\n").replace('\n', "\r\n");
        }
        let bytes = file.into_bytes();
        if bytes.len() > notes::MAX_NOTE_BYTES {
            return Err(NoteWriteError::TooLarge {
                bytes: bytes.len(),
                max: notes::MAX_NOTE_BYTES,
            });
        }
        let parsed = notes::parse_note(self.id, &bytes);
        // A problem the replaced note had already comes with the keys kept from it; one the
        // request brings is refused.
        let new: Vec<&str> = parsed
            .problems
            .iter()
            .map(|p| p.message.as_str())
            .filter(|m| !kept.is_some_and(|k| k.problems.iter().any(|had| had == m)))
            .collect();
        if !new.is_empty() {
            // The scan's texts say what it does with such a note when it reads one ("...; it
            // was ignored"); here nothing is written, so only what is wrong is said.
            let refused: Vec<&str> = new.iter().map(|m| without_scan_outcome(m)).collect();
            return Err(NoteWriteError::Problems {
                problems: refused.join("; "),
            });
        }
        // Assert the data just before it is written: what the scan will read is what was asked,
        // and, for what was not, what the replaced note said.
        let m = &parsed.meta;
        let was = kept.map(|k| &k.meta);
        let text = |given: &Option<String>, old: Option<&Option<String>>| {
            given.clone().or_else(|| old.cloned().flatten())
        };
        let list = |given: &Vec<String>, old: Option<&Vec<String>>| match old {
            Some(old) if given.is_empty() => old.clone(),
            _ => given.clone(),
        };
        let checks: [(&'static str, bool); 8] = [
            ("name", m.name == text(&self.name, was.map(|w| &w.name))),
            (
                "description",
                m.description == text(&self.description, was.map(|w| &w.description)),
            ),
            (
                "type",
                m.note_type
                    == self
                        .note_type
                        .or_else(|| was.map(|w| w.note_type))
                        .unwrap_or(NoteType::Unknown),
            ),
            ("tags", m.tags == list(&self.tags, was.map(|w| &w.tags))),
            (
                "pin",
                m.pin == self.pin.unwrap_or_else(|| was.is_some_and(|w| w.pin)),
            ),
            (
                "related",
                m.related == list(&self.related, was.map(|w| &w.related)),
            ),
            (
                "supersedes",
                m.supersedes == list(&self.supersedes, was.map(|w| &w.supersedes)),
            ),
            (
                "contradicts",
                m.contradicts == list(&self.contradicts, was.map(|w| &w.contradicts)),
            ),
        ];
        if let Some((field, _)) = checks.iter().find(|(_, same)| !same) {
            return Err(NoteWriteError::ReadsBack { field });
        }
        Ok((bytes, parsed))
    }
}

/// A problem's text without the clause saying what the scan does about it (`; it was ignored`,
/// `; the self-link was ignored`): a refused write ignores nothing, it writes nothing.
fn without_scan_outcome(message: &str) -> &str {
    match message.rsplit_once("; ") {
        Some((what, outcome)) if outcome.ends_with("was ignored") => what,
        _ => message,
    }
}
