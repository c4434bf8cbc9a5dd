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
    #[error(
        "{path} is not a mnemon memory folder (no memory/ inside); run `mnemon init --dir {path}`"
    )]
    NotAMemoryFolder {
        /// The folder given.
        path: PathBuf,
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
        "no note with id `{id}`; run `mnemon index` if you just added it, or check the spelling"
    )]
    UnknownNode {
        /// The id given.
        id: String,
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

/// The fix for an I/O error whose cause is the environment, not mnemon's data.
fn io_fix(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::PermissionDenied => {
            "; this process may not read or write it: check its owner and mode (ls -l) and, where \
             the file system has them, its attributes (lsattr: the immutable flag `i`)"
        }
        K::ReadOnlyFilesystem => "; the file system is read-only: remount it read-write",
        K::StorageFull | K::QuotaExceeded => "; the disk is full: free space and retry",
        _ => "",
    }
}

impl Error {
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
