//! The crate's error type: what went wrong, on which file, and what to do about it.
//!
//! Every variant's `Display` names the path involved and the fix, so the CLI can print it as is.

use std::path::PathBuf;

/// Result alias used across mnemon.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can fail in mnemon.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O call failed on a file or folder.
    #[error("{op} {path}: {source}{}", io_fix(source))]
    Io {
        /// What was being done ("open", "write snapshot in", ...).
        op: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// No memory folder was found walking up from the working directory.
    #[error(
        "no memory folder found: looked for .mnemon/ in {start} and every parent; run `mnemon init` here, or pass --dir DIR / set MNEMON_DIR"
    )]
    NoMemoryFolder {
        /// Where the search began.
        start: PathBuf,
    },
    /// The given folder is not a memory folder (it has no `memory/` subfolder).
    #[error("{path} is not a mnemon memory folder (no memory/ inside); {fix}")]
    NotAMemoryFolder {
        /// The folder given.
        path: PathBuf,
        /// What to do instead (see [`Error::not_a_memory_folder`]).
        fix: String,
    },
    /// The redb store failed.
    #[error("index store {path}: {message}; delete {path} to rebuild it from the notes")]
    Store {
        /// The store file.
        path: PathBuf,
        /// redb's message.
        message: String,
    },
    /// A derived index file is damaged (it is rebuilt from the notes by the caller).
    #[error("index file {path} is damaged: {reason}")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What check failed.
        reason: String,
    },
    /// A node id that does not exist.
    #[error(
        "no note with id {}; {}",
        crate::notes::ShownId(id),
        crate::notes::UnknownIdFix { id, meant: meant.as_deref() }
    )]
    UnknownNode {
        /// The id given.
        id: String,
        /// The id of a note that differs from `id` in letter case only, when one exists: ids
        /// are case-sensitive.
        meant: Option<String>,
    },
    /// No note has this id now, but the event log holds a history for it: its file was removed
    /// or renamed (by hand, by git).
    #[error(
        "no note with id {} now: its file is gone from memory/ (removed or renamed; the event log still holds its history); recall its topic to find the note it became, or restore the file",
        crate::notes::ShownId(id)
    )]
    RemovedNode {
        /// The id given.
        id: String,
    },
    /// A note's file exists but is not in the index, which this process may only read (written
    /// since, or skipped by the scan): the note cannot be indexed here.
    #[error(
        "note `{id}` ({path}) is not in the index (written since the folder was last indexed, or skipped: `mnemon doctor` says why), and this process may only read the index; run `mnemon index` where the folder is writable, or read the file itself"
    )]
    NotIndexedReadOnly {
        /// The id given.
        id: String,
        /// The note's file.
        path: PathBuf,
    },
    /// A note's file changed since it was indexed, and this process may only read the index:
    /// what the index holds of it is the old version (a sha256 of the new file beside the old
    /// text would let a replacement overwrite an edit nobody saw).
    #[error(
        "note `{id}` ({path}) changed since the folder was last indexed, and this process may only read the index, which holds its old version; run `mnemon index` where the folder is writable, or read the file itself"
    )]
    ChangedReadOnly {
        /// The id given.
        id: String,
        /// The note's file.
        path: PathBuf,
    },
    /// A thread panicked while it held the event log; the log refuses further use.
    #[error("event log {path} refuses writes: {reason}; restart the process to open a new segment")]
    Poisoned {
        /// The events folder.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A part of the memory folder mnemon writes to is a symbolic link: following it would
    /// write outside the folder.
    #[error(
        "{path} is a symbolic link (to {target}); mnemon writes only inside the memory folder, so it refuses to follow it. {fix}"
    )]
    Symlinked {
        /// The link.
        path: PathBuf,
        /// Where it points.
        target: PathBuf,
        /// What to do instead.
        fix: String,
    },
    /// Events could not be written or made durable (a full disk, an I/O error). `message` says
    /// what was kept and what to do; the next write retries by itself, in a new segment.
    #[error("event log {path}: {message}")]
    EventLog {
        /// The segment or folder.
        path: PathBuf,
        /// What was kept and what to do.
        message: String,
        /// The operating system's reason, when one failed call is it (a caller may answer
        /// without recording when it says `events/` is read-only for this process).
        cause: Option<std::io::ErrorKind>,
    },
    /// A user-supplied argument is out of range or malformed.
    #[error("invalid {what}: {message}")]
    InvalidArgument {
        /// The argument.
        what: &'static str,
        /// What is wrong with it and what to give instead.
        message: String,
    },
    /// The MCP server could not start, or stopped on an error (not a client that disconnected).
    #[error("MCP {what}: {source}; {fix}")]
    Mcp {
        /// What failed: "initialisation failed", "server stopped".
        what: &'static str,
        /// The transport's or protocol library's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
        /// What to do.
        fix: &'static str,
    },
    /// An argument is outside the values it may take (the ranges are in [`crate::args`]).
    #[error("{what} {value} is out of range: use {allowed}")]
    OutOfRange {
        /// The argument, as the facade and the MCP tools name it (`depth`, `limit`, ...).
        what: &'static str,
        /// The value given.
        value: String,
        /// What may be given instead (`an integer from 0 to 5`).
        allowed: String,
    },
    /// A note given to `Memory::write_note` cannot be written as it is (nothing was written).
    #[error("cannot write note {}: {reason}", crate::notes::ShownId(id))]
    Write {
        /// The note's id as given.
        id: String,
        /// What is wrong, and what to do instead.
        #[source]
        reason: NoteWriteError,
    },
    /// `Memory::write_note` wrote the note's file, then indexing it failed: the note is saved
    /// (a retry would be refused as existing), the index does not have it yet.
    #[error(
        "{path} was written (sha256 {sha256}) but indexing it failed: {source}; the note is saved, do not write it again: once that is fixed, `mnemon index` (or the next write or recall that indexes) reads it"
    )]
    WrittenNotIndexed {
        /// The note file, `memory/`-relative as written (`memory/<id>.md`).
        path: String,
        /// The sha256 of the bytes written, to replace the note with later.
        sha256: String,
        /// Whether the write made a new file (false when it replaced one).
        created: bool,
        /// Why indexing it failed.
        #[source]
        source: Box<Error>,
    },
    /// A thread panicked while it held one of an open memory's in-memory caches (the graph, the
    /// lexical view, the shown records, the folded stats): that handle cannot trust it any more.
    #[error(
        "the memory's {what} is unusable: another thread panicked while updating it; open the memory again (a new handle rebuilds it from the index and the events)"
    )]
    CachePoisoned {
        /// Which cache.
        what: &'static str,
    },
}

/// Why a note cannot be written (`Memory::write_note`). Each text says what to give instead.
/// A write that loses to someone else's edit or nearly repeats another note is not an error:
/// it is a refused `WriteOutcome` with the current sha256 and the similar notes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoteWriteError {
    /// The id is not a valid note id (never a path outside `memory/`).
    #[error("invalid id: {0}")]
    InvalidId(#[from] crate::notes::IdError),
    /// A part of the id starts with `.`: the scan skips hidden files and folders.
    #[error(
        "the id part `{part}` starts with `.`: the scan skips hidden files and folders, so the note would never be found; remove the leading dot"
    )]
    HiddenPart {
        /// The part of the id.
        part: String,
    },
    /// The id ends in `.md`: the file would be `<id>.md.md`.
    #[error(
        "the id {} ends in `.md`, so its file would end in `.md.md`: an id is the path without `.md`, so use {}",
        crate::notes::ShownId(id),
        crate::notes::ShownId(stem)
    )]
    IdWithExtension {
        /// The id given.
        id: String,
        /// The id without its `.md`.
        stem: String,
    },
    /// No `[[...]]` link could name a note with this id.
    #[error(
        "the id {} {why}: no link could ever name the note; choose an id of letters, digits, `-`, `_` and `/`",
        crate::notes::ShownId(id)
    )]
    UnlinkableId {
        /// The id given.
        id: String,
        /// What in it a link cannot hold.
        why: String,
    },
    /// The id is named as a sync or merge tool names a conflict copy: the scan reports such a
    /// note as a conflict to merge.
    #[error(
        "the id `{id}` is named as {tool} names a conflict copy of `{original}`, which the index \
         reports as a conflict to merge: write to `{original}`, or choose another id"
    )]
    ConflictCopyId {
        /// The id given.
        id: String,
        /// The note it would be a copy of.
        original: String,
        /// The tool that names copies so.
        tool: &'static str,
    },
    /// A new note's id differs from an existing note's only in letter case: one file on macOS
    /// and Windows (and any case-insensitive file system).
    #[error(
        "the id `{id}` differs from the note `{existing}` only in letter case: on macOS and \
         Windows they would be one file, and a checkout or sync there would lose one; write to \
         `{existing}`, or choose another id"
    )]
    CaseTwin {
        /// The id given.
        id: String,
        /// The note it would be a twin of.
        existing: String,
    },
    /// The id names a file or folder Windows cannot hold: a clone of the memory there (git,
    /// a sync tool) could not check the note out.
    #[error(
        "the id {} {why}: a checkout or sync of this memory on Windows could not hold the note; \
         choose an id of letters, digits, `-`, `_` and `/`",
        crate::notes::ShownId(id)
    )]
    NotPortableId {
        /// The id given.
        id: String,
        /// What in it Windows refuses.
        why: String,
    },
    /// The id has more parts than the scan walks.
    #[error(
        "the id has {parts} parts, over the depth limit of {max} folders and file name: use a shallower id"
    )]
    TooDeep {
        /// Parts of the id.
        parts: usize,
        /// The scan's depth limit.
        max: usize,
    },
    /// A part of the id (with `.md` for the last one) is longer than a file name may be.
    #[error(
        "the id part `{part}` is {bytes} bytes as a file or folder name, over {max}: use a shorter name"
    )]
    PartTooLong {
        /// The part of the id.
        part: String,
        /// Its length as a name, `.md` included for the last part.
        bytes: usize,
        /// The longest name allowed.
        max: usize,
    },
    /// An id in `related`, `supersedes` or `contradicts` is not a valid id.
    #[error("`{field}` entry `{target}`: {reason}")]
    InvalidLink {
        /// The list.
        field: &'static str,
        /// The entry.
        target: String,
        /// Why it is not an id.
        reason: crate::notes::IdError,
    },
    /// A list has more entries than a note's frontmatter is read for.
    #[error("`{field}` has {count} entries, over {max}: keep the ones that matter")]
    TooManyEntries {
        /// The list.
        field: &'static str,
        /// Entries given.
        count: usize,
        /// The most read from one list.
        max: usize,
    },
    /// The body is empty (or only white space).
    #[error("the body is empty: give the note's text")]
    EmptyBody,
    /// The body begins with a `---` frontmatter block of its own.
    #[error(
        "the body begins with its own `---` frontmatter block: pass name, description, type, tags, related, supersedes, contradicts and pin as fields (command-line options or tool arguments) and only the text below the block as the body"
    )]
    BodyHasFrontmatter,
    /// The note as it would be written is over the size a note is read to.
    #[error(
        "the note would be {bytes} bytes, over the limit of {max} bytes: split it into smaller notes linked with `related`"
    )]
    TooLarge {
        /// The rendered note's size (or the body's, when that alone is over).
        bytes: usize,
        /// The limit ([`crate::notes::MAX_NOTE_BYTES`]).
        max: usize,
    },
    /// The rendered note has problems the scan would report (a bad link in the body, a merge
    /// conflict marker, a frontmatter over a limit).
    #[error("the note would have problems: {problems}; fix the fields or the body and write again")]
    Problems {
        /// The problems' texts, joined with "; ".
        problems: String,
    },
    /// The note a replacement replaces has a frontmatter that does not read: the replacement,
    /// which keeps the frontmatter's keys, would lose them.
    #[error(
        "the note it replaces has a frontmatter that does not read ({problems}), and a replacement keeps the keys of the frontmatter it replaces: fix the frontmatter in the file (`mnemon doctor` names the problem) and write again with the file's new sha256"
    )]
    ReplacedFrontmatter {
        /// The frontmatter's problems, joined with "; ".
        problems: String,
    },
    /// `expected_sha256` is not a sha256 in hexadecimal.
    #[error(
        "expected_sha256 `{given}` is not 64 hexadecimal digits: pass the sha256 that memory_show / mnemon show returns for the note"
    )]
    BadSha256 {
        /// What was given.
        given: String,
    },
    /// An unknown note type.
    #[error("unknown type `{given}`: use project, feedback, user, reference or index")]
    UnknownType {
        /// What was given.
        given: String,
    },
    /// An unknown `on_duplicate` value.
    #[error("unknown on_duplicate `{given}`: use refuse (the default) or create")]
    UnknownOnDuplicate {
        /// What was given.
        given: String,
    },
    /// A folder on the way to the note is a file (or something else that is not a folder).
    #[error(
        "{path} is not a folder: choose an id whose folders are folders, or move that file away"
    )]
    NotAFolder {
        /// The path, relative to the memory folder.
        path: String,
    },
    /// A folder on the way to the note is a symbolic link: following it could write outside
    /// the memory folder. The id chose it, so another id is the fix.
    #[error(
        "{path} is a symbolic link (to {target}), and notes are written only into real folders below memory/: choose an id outside the linked folder, or replace the link by a folder"
    )]
    LinkedFolder {
        /// The link, relative to the memory folder.
        path: String,
        /// Where it points.
        target: PathBuf,
    },
    /// The note's own path is a folder, a symbolic link, a named pipe or another non-file.
    #[error(
        "{path} is a {kind}, not a regular file: mnemon replaces only note files; {}",
        not_regular_fix(.kind)
    )]
    NotRegular {
        /// The path, relative to the memory folder.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// The rendered frontmatter reads back differently from what was asked (a value the YAML
    /// round trip changes): nothing is written rather than something else.
    #[error(
        "the frontmatter's `{field}` would read back differently from what was given: simplify that value (plain text, no leading or trailing spaces)"
    )]
    ReadsBack {
        /// The field.
        field: &'static str,
    },
    /// This platform has no way to write below `memory/` without following links.
    #[error(
        "writing notes through mnemon needs a Unix system; write the file into memory/ instead"
    )]
    Unsupported,
}

/// What to do about a non-file at a note's path, by what it is ([`NoteWriteError::NotRegular`]).
fn not_regular_fix(kind: &str) -> &'static str {
    if kind.contains("link") {
        "it never follows a link there: write to the note the link points to, or remove the link \
         first"
    } else if kind.contains("folder") || kind.contains("directory") {
        "a folder holds notes, it is none: choose another id, or move the folder away"
    } else {
        "move it away, or choose another id"
    }
}

/// Whether `e` says the process (`EMFILE`) or the system (`ENFILE`) has as many files open as
/// it may: no fault of the file at hand, and every other file would fail alike. A scan that
/// meets it fails whole rather than keep what it could not read as if unreadable.
pub fn is_out_of_files(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// The fix for an I/O error whose cause is the environment, not mnemon's data.
fn io_fix(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    #[cfg(unix)]
    match e.raw_os_error() {
        Some(libc::EMFILE) => {
            return "; this process has as many files open as its limit allows: raise the limit \
                    (`ulimit -n`, LimitNOFILE= for a systemd service) and retry";
        }
        Some(libc::EFBIG) => {
            return "; the file would pass this process's file-size limit (`ulimit -f`) or the \
                    largest file the file system holds: raise the limit and retry";
        }
        Some(libc::ENFILE) => {
            return "; the system has as many files open as it allows: close programs or raise \
                    fs.file-max, and retry";
        }
        _ => {}
    }
    match e.kind() {
        K::PermissionDenied => {
            "; this process may not read or write it: check its owner and mode (ls -l) and, where \
             the file system has them, its attributes (lsattr: the immutable flag `i`)"
        }
        K::ReadOnlyFilesystem => "; the file system is read-only: remount it read-write",
        K::StorageFull | K::QuotaExceeded => "; the disk is full: free space and retry",
        K::IsADirectory => {
            "; a folder stands where this file belongs: move the folder away, and mnemon makes \
             the file again (a file of index/ is rebuilt from the notes, `.gitignore` written \
             anew)"
        }
        _ => "",
    }
}

impl Error {
    /// Whether this is a write that failed for a full disk (or a quota): nothing is wrong with
    /// what was being written, and the same call succeeds once space is freed.
    pub fn is_disk_full(&self) -> bool {
        matches!(
            self,
            Error::Io { source, .. }
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
                )
        )
    }

    /// Whether this is a file or folder under `dir` that was not found: removed while this
    /// process ran (by hand, by `git clean`), as `index/` may be at any time.
    pub fn is_missing_under(&self, dir: &std::path::Path) -> bool {
        matches!(
            self,
            Error::Io { source, path, .. }
                if source.kind() == std::io::ErrorKind::NotFound && path.starts_with(dir)
        )
    }

    /// `path` holds no `memory/`: the fix depends on what it is. A file cannot become a memory
    /// folder; the notes folder itself (`DIR/memory`) is opened through its parent; anything
    /// else can be made one with `init`.
    pub fn not_a_memory_folder(path: PathBuf) -> Error {
        // Inside a memory folder's `memory/`, `index/` or `events/` (a note, the notes folder):
        // that memory folder. Anywhere else below one, `init` is the answer as anywhere.
        let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        let within = absolute
            .ancestors()
            .zip(absolute.ancestors().skip(1))
            .find(|(inner, outer)| {
                matches!(
                    inner.file_name().and_then(|n| n.to_str()),
                    Some("memory" | "index" | "events")
                ) && crate::layout::is_memory_layout(outer)
            })
            .map(|(_, outer)| outer);
        let fix = if let Some(outer) = within {
            format!(
                "it is inside the memory folder {}: pass `--dir {}`",
                outer.display(),
                outer.display()
            )
        } else if crate::layout::lost_its_notes(&path) {
            format!(
                "it was one, whose notes folder is gone (its event log or index is still \
                 there): put memory/ back (from git or a backup), or run `mnemon init --dir {}` \
                 to start again with no notes (the events are kept)",
                path.display()
            )
        } else if path.join("memory").exists() && !path.join("memory").is_dir() {
            format!(
                "{} is a file where the notes folder belongs: move it away, then run `mnemon \
                 init --dir {}`",
                path.join("memory").display(),
                path.display()
            )
        } else if path.is_file() {
            match path.parent().filter(|p| !p.as_os_str().is_empty()) {
                Some(parent) => format!(
                    "it is a file: pass the folder that holds (or will hold) memory/, such as \
                     `--dir {}`",
                    parent.display()
                ),
                None => "it is a file: pass the folder that holds (or will hold) memory/".into(),
            }
        } else if let Some(parent) = path
            .parent()
            .filter(|p| path.file_name() == Some("memory".as_ref()) && p.join("memory").is_dir())
        {
            format!(
                "it is the notes folder itself: pass the folder that holds it, `--dir {}`",
                parent.display()
            )
        } else {
            format!("run `mnemon init --dir {}`", path.display())
        };
        Error::NotAMemoryFolder { path, fix }
    }

    /// Wrap an `io::Error` with the operation and path it came from.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Wrap any redb error for the store at `path`.
    pub fn store(path: impl Into<PathBuf>, err: impl std::fmt::Display) -> Self {
        Error::Store {
            path: path.into(),
            message: err.to_string(),
        }
    }
}
