//! Writing a note through mnemon (`Memory::write_note`, `mnemon write`, the MCP tool
//! `memory_write`): for agents that cannot write files themselves.
//!
//! A write renders `memory/<id>.md` (a YAML frontmatter serialized by `serde_yaml_ng`, then the
//! body), parses the rendered bytes exactly as the scan will, and refuses anything the scan would
//! report or read differently. Then, under the store's write lock, so that no other mnemon
//! writer can slip in between:
//!
//! 1. the note file on disk, if any, is read and hashed (sha256 of its bytes). A file that
//!    exists is replaced only when the caller names its current sha256 (`expected_sha256`, as
//!    `show` returns it); a stale or missing hash is refused with the current one. Losing
//!    someone else's edit is never allowed, whatever `on_duplicate` says.
//! 2. the near-duplicate hook looks for notes saying nearly the same ([`WriteNeighbours`]); a
//!    near-duplicate refuses the write unless `on_duplicate` is [`OnDuplicate::Create`].
//! 3. the file is written atomically inside `memory/`: folders on the way are opened one at a
//!    time without following symbolic links (a link, or a file where a folder should be, is
//!    refused), missing ones are created, and the note is written to a hidden temp file in its
//!    folder (the scan skips names starting with `.`), fsynced, renamed over the note and the
//!    folder fsynced. A rename replaces a link at the note's own path instead of following it,
//!    and a link found there is refused before that.
//! 4. the note is indexed before the lock is released: it is recallable when the call returns.

use super::*;
use crate::error::NoteWriteError;
use crate::notes::{NoteType, ParsedNote};
use crate::store::WriteLock;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::io::Read;

mod draft;
#[cfg(unix)]
mod place;
#[cfg(not(unix))]
#[path = "place_unsupported.rs"]
mod place;
mod splice;

use draft::Draft;

/// Longest file or folder name most file systems take (`NAME_MAX`), in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// What a write does when the note nearly duplicates another one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDuplicate {
    /// Refuse the write and name the similar notes (the default): update the existing note, or
    /// write again with `supersedes` naming it.
    #[default]
    Refuse,
    /// Write anyway: the notes are distinct.
    Create,
}

impl OnDuplicate {
    /// Read `refuse` or `create` (as the CLI and the MCP tool take it).
    pub fn parse(s: &str) -> std::result::Result<OnDuplicate, NoteWriteError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "refuse" => Ok(OnDuplicate::Refuse),
            "create" => Ok(OnDuplicate::Create),
            _ => Err(NoteWriteError::UnknownOnDuplicate {
                given: s.to_string(),
            }),
        }
    }
}

/// Read a note type as the MCP tool and the Python binding take it: blank is none, else one of
/// the frontmatter's type names.
pub fn parse_note_type(given: &str) -> std::result::Result<Option<NoteType>, NoteWriteError> {
    match given.trim() {
        "" => Ok(None),
        t => NoteType::parse(t)
            .map(Some)
            .ok_or_else(|| NoteWriteError::UnknownType {
                given: t.to_string(),
            }),
    }
}

/// A note to write with [`Memory::write_note`]: `memory/<id>.md` gets a frontmatter of the given
/// fields (plus `updated_at`, and `created_at` kept from the note it replaces or set on creation)
/// and the body. A replacement replaces the body whole and keeps from the old file every
/// frontmatter key the request leaves out (a text field not given, a list given empty, `pin` not
/// set, keys mnemon does not write), when that frontmatter reads without a problem.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteRequest {
    /// The note's id: its path below `memory/` without `.md` (`/` between folders).
    pub id: String,
    /// The Markdown text below the frontmatter (no frontmatter block of its own).
    pub body: String,
    /// The frontmatter's `name`.
    pub name: Option<String>,
    /// The frontmatter's `description`: one line saying what the note is for.
    pub description: Option<String>,
    /// The frontmatter's `type` ([`NoteType::Unknown`] writes none).
    pub note_type: Option<NoteType>,
    /// The frontmatter's `tags`.
    pub tags: Vec<String>,
    /// Ids of notes this one relates to (`related`).
    pub related: Vec<String>,
    /// Ids of notes this one replaces (`supersedes`).
    pub supersedes: Vec<String>,
    /// Ids of notes this one disagrees with (`contradicts`).
    pub contradicts: Vec<String>,
    /// Keep the note in the core view (`pin: true`): `Some(true)` pins it, `Some(false)` unpins
    /// it, `None` keeps what the note replaced had (a new note is not pinned).
    pub pin: Option<bool>,
    /// The sha256 (hex) of the note file as the caller read it (`show` returns it): required to
    /// replace a note that exists, refused when the note does not exist.
    pub expected_sha256: Option<String>,
    /// What to do when the note nearly duplicates another one.
    pub on_duplicate: OnDuplicate,
}

impl WriteRequest {
    /// A request for note `id` with `body` and no other field.
    pub fn new(id: impl Into<String>, body: impl Into<String>) -> Self {
        WriteRequest {
            id: id.into(),
            body: body.into(),
            ..WriteRequest::default()
        }
    }
}

/// A note like the one being written, with how alike they are.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Similar {
    /// The other note's id.
    pub id: String,
    /// How alike, 0.0 (nothing shared) to 1.0 (the same).
    pub similarity: f32,
}

/// What the near-duplicate check found for a note about to be written. It leaves out the note's
/// own id and the notes the draft already links to.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WriteNeighbours {
    /// Notes saying nearly the same: the write is refused while there are any, unless the
    /// caller says [`OnDuplicate::Create`].
    pub near_duplicates: Vec<Similar>,
    /// Older notes on the same subject that this one may replace (never a refusal: a hint to
    /// add `supersedes`).
    pub likely_predecessors: Vec<Similar>,
}

/// Why a write was refused (the JSON key `refused`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteRefusal {
    /// The note nearly duplicates another one (see `near_duplicates`).
    NearDuplicate,
    /// The note changed since the caller read it: `expected_sha256` is not its sha256.
    Stale,
    /// The note exists and the caller named no `expected_sha256`.
    Exists,
    /// `expected_sha256` was given but the note does not exist (deleted or moved).
    Missing,
}

/// What [`Memory::write_note`] did: the JSON of `mnemon write --json` and of `memory_write`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteOutcome {
    /// The note's id.
    pub id: String,
    /// The note file, relative to the memory folder (`memory/<id>.md`).
    pub path: String,
    /// Whether the file was written (and indexed).
    pub written: bool,
    /// Whether the write made a new file (false when it replaced one, or was refused).
    pub created: bool,
    /// The sha256 (hex) of the note file now on disk: the new one when written, the current one
    /// when refused, `None` when there is none.
    pub sha256: Option<String>,
    /// Why the write was refused; `None` when it was written.
    pub refused: Option<WriteRefusal>,
    /// What happened, for people and models; when refused, what to do next.
    pub message: String,
    /// Notes saying nearly the same as this one.
    pub near_duplicates: Vec<Similar>,
    /// Older notes this one may replace.
    pub likely_predecessors: Vec<Similar>,
}

/// The sha256 of `bytes`, in lowercase hexadecimal.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(digest.len() * 2);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The sha256 (hex) of everything `r` gives, and its first `keep` bytes.
pub(super) fn sha256_of_reader(
    mut r: impl Read,
    keep: usize,
) -> std::io::Result<(String, Vec<u8>)> {
    let mut hasher = Sha256::new();
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        hasher.update(chunk);
        let room = keep.saturating_sub(kept.len());
        kept.extend_from_slice(&chunk[..room.min(n)]);
    }
    Ok((hex(&hasher.finalize()), kept))
}

/// The message of a write refused because of near-duplicates, or `None` when it may go ahead.
fn near_duplicate_refusal(
    path: &str,
    neighbours: &WriteNeighbours,
    on_duplicate: OnDuplicate,
) -> Option<String> {
    if neighbours.near_duplicates.is_empty() || on_duplicate == OnDuplicate::Create {
        return None;
    }
    let named: Vec<String> = neighbours
        .near_duplicates
        .iter()
        .map(|s| format!("{} (similarity {:.2})", s.id, s.similarity))
        .collect();
    let first = &neighbours.near_duplicates[0].id;
    Some(format!(
        "{path} was not written: it nearly duplicates {}. Update the existing note instead \
         (memory_show / mnemon show `{first}`, then write `{first}` with its sha256 as \
         expected_sha256), or, if this note replaces it, write again with supersedes: [\"{first}\"]; \
         if the notes are truly distinct, write again with on_duplicate: \"create\"",
        named.join(", ")
    ))
}

/// The note file as found before a write.
struct Existing {
    sha256: String,
    /// Its frontmatter's `created_at`, kept by the replacement.
    created_s: Option<i64>,
    /// Why its frontmatter does not parse, if it does not: a replacement, which could not keep
    /// its keys, is refused.
    frontmatter_problems: Option<String>,
    /// Its frontmatter, when it parses: the replacement keeps every key the
    /// request does not set (name, tags, links, `ttl_days`, keys mnemon does not know).
    kept: Option<draft::Kept>,
}

impl Memory {
    /// Write the note `req` describes into `memory/<id>.md` and index it: see the module
    /// documentation for the steps. A refusal that the caller can act on (the note exists, it
    /// changed since it was read, it is gone, it nearly duplicates another) is an `Ok` outcome
    /// with `written: false`, the current sha256 and the fix in `message`; a request that can
    /// never be written as it is (a bad id, an empty or oversized body, a folder on the way that
    /// is a link or a file) is an [`Error::Write`] (or [`Error::Symlinked`]) saying what to give
    /// instead. Nothing is written in either case.
    ///
    /// ```
    /// use mnemon::recall::Query;
    /// use mnemon::{Memory, WriteRefusal, WriteRequest};
    ///
    /// let tmp = tempfile::tempdir().unwrap();
    /// let memory = Memory::init(tmp.path().join(".mnemon"))?;
    /// let mut req = WriteRequest::new("ops/pool-sizing", "The pool times out at 20 connections.");
    /// req.name = Some("Pool sizing".into());
    /// let first = memory.write_note(&req)?;
    /// assert!(first.written && first.created);
    /// assert_eq!(memory.recall(&Query::text("when does the pool time out"))?.results[0].id, "ops/pool-sizing");
    ///
    /// // Replacing it needs the sha256 of the file as it is now (`show` returns it).
    /// req.body = "The pool times out at 40 connections since the upgrade.".into();
    /// assert_eq!(memory.write_note(&req)?.refused, Some(WriteRefusal::Exists));
    /// req.expected_sha256 = memory.show("ops/pool-sizing")?.sha256;
    /// assert!(memory.write_note(&req)?.written);
    /// # Ok::<(), mnemon::Error>(())
    /// ```
    pub fn write_note(&self, req: &WriteRequest) -> Result<WriteOutcome> {
        let refuse = |reason: NoteWriteError| Error::Write {
            id: req.id.clone(),
            reason,
        };
        let draft = Draft::of(req).map_err(refuse)?;
        if self.store.read_only().is_some() {
            return Err(self.store.read_only_refusal("writing a note"));
        }
        // Not made again here: the notes folder gone under an open handle is the user's to put
        // back, and a folder made anew would hold this one note.
        self.notes_folder_present()?;
        // A store never indexed is indexed whole first: indexing only this note would mark it
        // indexed and hide the notes already in memory/ (and the near-duplicate check needs them).
        self.ensure_indexed()?;
        // An id typed in another Unicode normal form than an existing note's file name is that
        // note (on Linux the two names would be two files that look the same).
        let redirected = match req.id.is_ascii() {
            true => None,
            false => self
                .store
                .read()?
                .stored_id(&req.id)?
                .filter(|stored| *stored != req.id)
                .map(|id| WriteRequest { id, ..req.clone() }),
        };
        let draft = match &redirected {
            Some(r) => Draft::of(r).map_err(refuse)?,
            None => draft,
        };
        if let Some(existing) = self.store.read()?.case_twin_of(draft.id)? {
            return Err(refuse(NoteWriteError::CaseTwin {
                id: draft.id.to_string(),
                existing,
            }));
        }
        if let Some(why) = draft::not_portable(&draft.parts) {
            let file = self.dir.memory().join(format!("{}.md", draft.id));
            let exists =
                self.store.read()?.has_node(draft.id)? || std::fs::symlink_metadata(&file).is_ok();
            if !exists {
                return Err(refuse(NoteWriteError::NotPortableId {
                    id: draft.id.to_string(),
                    why,
                }));
            }
        }
        let lock = self.write_lock()?;
        let outcome = self.write_locked(&lock, &draft)?;
        drop(lock);
        Ok(outcome)
    }

    /// The check, the write and the index of one note, under the store's write lock: the sha256
    /// compared is the file's as it is replaced (among mnemon writers).
    fn write_locked(&self, lock: &WriteLock, draft: &Draft<'_>) -> Result<WriteOutcome> {
        let refuse = |reason: NoteWriteError| Error::Write {
            id: draft.id.to_string(),
            reason,
        };
        let memory = self.dir.memory();
        let path = format!("memory/{}.md", draft.id);
        let (folders, stem) = draft.parts.split_at(draft.parts.len() - 1);
        let file_name = format!("{}.md", stem[0]);
        let mut place = place::Place::open(&memory, draft.id, folders)?;
        let existing = place.read_note(&file_name, &path)?;
        let (bytes, parsed) = draft
            .render(
                existing
                    .as_ref()
                    .map_or(Some(self.clock.now_s()), |e| e.created_s),
                self.clock.now_s(),
                existing.as_ref().and_then(|e| e.kept.as_ref()),
            )
            .map_err(refuse)?;
        let current = existing.as_ref().map(|e| e.sha256.clone());
        let refused =
            |refusal: WriteRefusal, message: String, found: WriteNeighbours| WriteOutcome {
                id: draft.id.to_string(),
                path: path.clone(),
                written: false,
                created: false,
                sha256: current.clone(),
                refused: Some(refusal),
                message,
                near_duplicates: found.near_duplicates,
                likely_predecessors: found.likely_predecessors,
            };
        match (&existing, &draft.expected_sha256) {
            (Some(e), None) => {
                return Ok(refused(
                    WriteRefusal::Exists,
                    format!(
                        "{path} exists (sha256 {}): read it with memory_show / mnemon show and pass \
                         its sha256 as expected_sha256 to replace it, or choose another id",
                        e.sha256
                    ),
                    WriteNeighbours::default(),
                ));
            }
            (Some(e), Some(expected)) if e.sha256 != *expected => {
                return Ok(refused(
                    WriteRefusal::Stale,
                    format!(
                        "{path} changed since it was read: its sha256 is {}, not {expected}; read \
                         it again with memory_show / mnemon show, merge your change into what it \
                         says now, and write with the new sha256",
                        e.sha256
                    ),
                    WriteNeighbours::default(),
                ));
            }
            (None, Some(expected)) => {
                return Ok(refused(
                    WriteRefusal::Missing,
                    format!(
                        "{path} does not exist (expected sha256 {expected}): it was deleted or \
                         moved since it was read; recall to find where it went, or write without \
                         expected_sha256 to create it again"
                    ),
                    WriteNeighbours::default(),
                ));
            }
            (Some(e), Some(_)) => {
                if let Some(problems) = &e.frontmatter_problems {
                    return Err(refuse(NoteWriteError::ReplacedFrontmatter {
                        problems: problems.clone(),
                    }));
                }
            }
            _ => {}
        }
        let found = self.write_neighbours(&parsed)?;
        // A new note nearly duplicating another is refused: it would split what the memory
        // knows in two. A replacement is not: the note exists either way, and refusing its
        // update only kept its older text, naming a note whose own update was refused alike.
        // The outcome still lists the pair, as `doctor` does.
        if existing.is_none()
            && let Some(message) = near_duplicate_refusal(&path, &found, draft.on_duplicate)
        {
            return Ok(refused(WriteRefusal::NearDuplicate, message, found));
        }
        place.write(&file_name, &path, &bytes)?;
        let sha256 = sha256_hex(&bytes);
        let abs = memory.join(format!("{}.md", draft.id));
        let created = existing.is_none();
        // The file is written: a failure from here on must not read as "not written" (a caller
        // writing again would find its own note changed). A panic inside redb's reads (a damaged
        // store) is such a failure too, reported as the store's damage.
        let indexed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.index_paths_held(lock, &[abs], std::time::Instant::now(), true)
        }))
        .unwrap_or_else(|_| {
            Err(Error::Corrupt {
                path: self.dir.index().join(crate::store::STORE_FILE),
                reason: "indexing the note panicked inside redb: the store's bytes are damaged"
                    .into(),
            })
        });
        indexed.map_err(|e| {
            self.index_pending
                .store(true, std::sync::atomic::Ordering::Release);
            Error::WrittenNotIndexed {
                path: path.clone(),
                sha256: sha256.clone(),
                created,
                source: Box::new(e),
            }
        })?;
        let mut message = format!(
            "{} {path} (sha256 {sha256}); it is indexed and can be recalled",
            if created { "created" } else { "replaced" }
        );
        // Links to notes that do not exist (yet) are allowed (the other note may come next), but
        // said: a typo in an id would otherwise only show in a later `doctor`.
        let dangling = {
            let r = self.store.read()?;
            let mut out: Vec<&str> = Vec::new();
            for e in &parsed.edges {
                if e.to != draft.id
                    && !out.contains(&e.to.as_str())
                    && r.stored_id(&e.to)?.is_none()
                {
                    out.push(&e.to);
                }
            }
            out
        };
        if !dangling.is_empty() {
            message.push_str(&format!(
                ". It links to {}, which no note is yet: `doctor` reports such a link as dangling \
                 until the note exists (check the id if it should)",
                dangling.join(", ")
            ));
        }
        let circle = self.supersede_cycle_through(draft.id)?;
        if !circle.is_empty() {
            message.push_str(&format!(
                ". It and {} now replace each other in a circle (supersedes): recall treats none \
                 of them as replaced until the older note stops declaring it replaces the newer",
                circle.join(", ")
            ));
        }
        if !found.likely_predecessors.is_empty() {
            let ids: Vec<&str> = found
                .likely_predecessors
                .iter()
                .map(|s| s.id.as_str())
                .collect();
            message.push_str(&format!(
                ". It may replace {}: if so, write it again (with this sha256) adding them to supersedes",
                ids.join(", ")
            ));
        }
        Ok(WriteOutcome {
            id: draft.id.to_string(),
            path,
            written: true,
            created,
            sha256: Some(sha256),
            refused: None,
            message,
            near_duplicates: found.near_duplicates,
            likely_predecessors: found.likely_predecessors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::draft::id_parts;
    use super::*;

    #[test]
    fn a_near_duplicate_refuses_unless_the_caller_says_create() {
        let found = WriteNeighbours {
            near_duplicates: vec![Similar {
                id: "ops/pool".into(),
                similarity: 0.91,
            }],
            likely_predecessors: Vec::new(),
        };
        let m = near_duplicate_refusal("memory/x.md", &found, OnDuplicate::Refuse).unwrap();
        assert!(m.contains("ops/pool (similarity 0.91)"), "{m}");
        assert!(m.contains("supersedes: [\"ops/pool\"]"), "{m}");
        assert!(m.contains("on_duplicate: \"create\""), "{m}");
        assert_eq!(
            near_duplicate_refusal("memory/x.md", &found, OnDuplicate::Create),
            None
        );
        assert_eq!(
            near_duplicate_refusal(
                "memory/x.md",
                &WriteNeighbours::default(),
                OnDuplicate::Refuse
            ),
            None
        );
    }

    /// Regression: a note replaced while the clock was set back got an `updated_at` before its
    /// `created_at`.
    #[test]
    fn a_replacement_is_never_dated_before_the_note_was_created() {
        let req = WriteRequest::new("a", "body");
        let draft = super::draft::Draft::of(&req).unwrap();
        let created = crate::notes::parse_date_unix_s("2026-11-30").unwrap();
        let earlier = crate::notes::parse_date_unix_s("2026-01-01").unwrap();
        let (bytes, _) = draft.render(Some(created), earlier, None).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains("created_at: 2026-11-30"), "{text}");
        assert!(text.contains("updated_at: 2026-11-30"), "{text}");
        let later = crate::notes::parse_date_unix_s("2026-12-05").unwrap();
        let (bytes, _) = draft.render(Some(created), later, None).unwrap();
        assert!(
            String::from_utf8(bytes)
                .unwrap()
                .contains("updated_at: 2026-12-05")
        );
    }

    #[test]
    fn ids_the_scan_would_skip_are_refused() {
        assert!(matches!(
            id_parts("a/.hidden/b"),
            Err(NoteWriteError::HiddenPart { .. })
        ));
        let deep = vec!["d"; crate::scan::MAX_DEPTH + 1].join("/");
        assert!(matches!(
            id_parts(&deep),
            Err(NoteWriteError::TooDeep { .. })
        ));
        let long = "x".repeat(MAX_NAME_BYTES - 2);
        assert!(matches!(
            id_parts(&long),
            Err(NoteWriteError::PartTooLong { bytes: 256, .. })
        ));
        assert_eq!(id_parts("a/b").unwrap(), vec!["a", "b"]);
    }

    /// `write` took `x#y`, `x|y`, `a]]b` and ` lead` as ids: the scan indexed them, and no
    /// `[[...]]` link could ever reach them (`[[x#y]]` is a link to `x`'s heading).
    #[test]
    fn ids_no_link_could_name_are_refused() {
        for id in ["x#y", "x|y", "a]]b", "a[[b", "dir/ lead", "trail /x"] {
            let e = id_parts(id).unwrap_err();
            assert!(
                matches!(e, NoteWriteError::UnlinkableId { .. }),
                "{id}: {e}"
            );
            assert!(
                e.to_string().contains("no link could ever name the note"),
                "{e}"
            );
        }
        assert_eq!(id_parts("a b/c").unwrap(), vec!["a b", "c"]);
    }

    #[test]
    fn a_sha256_is_lowercase_hex_of_the_whole_stream() {
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(sha256_hex(b""), empty);
        let big = vec![7u8; 200_000];
        let (h, head) = sha256_of_reader(&big[..], 10).unwrap();
        assert_eq!(h, sha256_hex(&big));
        assert_eq!(head, vec![7u8; 10]);
    }
}
