//! Where is the graph kept? The redb store of nodes, their out-edges, the file manifest and
//! per-note problems. Edges are stored once, at their source: a note's in-edges are the out-edges
//! that name it (the in-memory [`Graph`] holds both directions; [`StoreReader::edges_in`] finds
//! them in one pass over the out-edge table).
//!
//! The store is derived from the notes: when its schema version differs from this build's, or the
//! file cannot be opened, it is rebuilt from scratch (and the caller says so). The database is
//! opened in redb's `MultiWriter` concurrency mode so any number of processes can share it; write
//! transactions are short and batched (one per scan). Byte layouts: `format-spec/store.md`.

pub mod codec;
pub mod seq;
mod write;

pub use codec::{CodecError, EdgeRef, EdgeValue, FileEntry, NodeRecord, NodeRecordRef};
pub use seq::ChangeSeq;
pub use write::BatchWriter;
pub(crate) use write::out_degree;

use crate::dedup::Sketch;
use crate::error::{Error, Result};
use crate::notes::{EdgeKind, NoteType, Problem, Provenance};
use codec::decode_edge_list;
use redb::{
    ConcurrencyMode, Database, MultimapTableDefinition, ReadableDatabase, ReadableTable,
    ReadableTableMetadata, TableDefinition,
};
use std::path::{Path, PathBuf};

/// Schema version of the tables below; bump it on any layout change (format-spec/store.md).
pub const SCHEMA_VERSION: u32 = 29;
// The store's file name inside `index/`, kept with the rest of the folder's layout.
pub use crate::layout::STORE_FILE;
/// Lock file in `index/` held by whoever writes the store (one process at a time): an index
/// update for its whole length, a schema rewrite for its transaction.
pub const WRITE_LOCK_FILE: &str = "write.lock";

/// `meta`: key -> value. Holds `schema_version` (u32 LE), `epoch` (u64 LE, random per created
/// file), `generation` (u64 LE, +1 per write transaction) and `edge_count` (u64 LE).
pub const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
/// `nodes`: node id -> [`NodeRecord`].
pub const NODES: TableDefinition<&str, &[u8]> = TableDefinition::new("nodes");
/// `edges_out`: from id -> edge list, each [`EdgeValue`] naming a `to` (one value per node: a
/// cold build inserts one row per note, not one per edge).
pub const EDGES_OUT: TableDefinition<&str, &[u8]> = TableDefinition::new("edges_out");
/// The edge tables of older schemas, dropped (as plain and as multimap tables: v3 and older kept
/// them as multimap tables) when a store of another schema is rewritten: `edges_out`, recreated
/// empty, and `edges_in`, the in-edge lists (mirrors of the out-edges) v4 and older kept.
const LEGACY_EDGE_TABLES: [&str; 2] = ["edges_out", "edges_in"];
/// `manifest`: note path relative to `memory/` -> [`FileEntry`].
pub const MANIFEST: TableDefinition<&str, &[u8]> = TableDefinition::new("manifest");
/// `problems`: note path -> problem list (only for notes that have problems).
pub const PROBLEMS: TableDefinition<&str, &[u8]> = TableDefinition::new("problems");
/// `probe_floors`: node id -> the weight of its lightest token co-occurrence probe term when it
/// has all `CO_OCCURRENCE_PROBE_TERMS`, else 0 (`f32` LE): an update that changes a term's
/// weight or holders recomputes the co-occurrence of the notes holding it only where the term
/// is, or may become, one of their probes.
pub const PROBE_FLOORS: TableDefinition<&str, &[u8]> = TableDefinition::new("probe_floors");
/// `sketches`: node id -> its MinHash [`Sketch`] (`dedup::SKETCH_BYTES` bytes), for the
/// near-duplicate check of the write path. A row is current or absent: every batch that changes
/// a note writes its new sketch or removes the old one.
pub const SKETCHES: TableDefinition<&str, &[u8]> = TableDefinition::new("sketches");
/// `changes`: generation -> the node ids that write transaction touched (or "everything").
pub const CHANGES: TableDefinition<u64, &[u8]> = TableDefinition::new("changes");

const SCHEMA_KEY: &str = "schema_version";
const EPOCH_KEY: &str = "epoch";
const GENERATION_KEY: &str = "generation";
const LEXICAL_GENERATION_KEY: &str = "lexical_generation";
const EDGE_COUNT_KEY: &str = "edge_count";
/// How many generations the change log keeps; a reader further behind reloads the whole graph.
pub const CHANGE_LOG_KEEP: u64 = 256;
/// A transaction touching more ids than this logs "everything" instead of the list.
pub const MAX_LOGGED_IDS: usize = 4096;

/// Which version of the store a reader sees: `epoch` changes when the tables are recreated,
/// `generation` on every write transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Version {
    pub epoch: u64,
    pub generation: u64,
}

/// An edge with both ends, as the store returns it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Edge {
    /// The note the edge leaves.
    pub from: String,
    /// The note (or missing id) it reaches.
    pub to: String,
    /// What the edge says.
    pub kind: EdgeKind,
    /// Who made it.
    pub provenance: Provenance,
    /// How sure it is, 0..=1.
    pub confidence: f32,
}

/// One note's worth of changes for [`Store::apply`].
#[derive(Debug, Clone)]
pub struct NoteUpdate {
    pub id: String,
    pub path: String,
    pub record: NodeRecord,
    pub edges: Vec<EdgeValue>,
    pub file: FileEntry,
    pub problems: Vec<Problem>,
    /// The note's near-duplicate sketch, when the batch computed it: `None` removes the stored
    /// one (a big batch leaves its notes' sketches to whoever needs them first).
    pub sketch: Option<Sketch>,
}

/// A batch of changes written in one transaction.
#[derive(Debug, Default, Clone)]
pub struct Batch {
    /// Notes added or changed (their old edges are replaced).
    pub upserts: Vec<NoteUpdate>,
    /// Paths whose notes left the corpus (with their ids).
    pub removals: Vec<(String, String)>,
    /// Files whose bytes are unchanged but whose stat changed (manifest refresh only).
    pub touched: Vec<(String, FileEntry)>,
    /// The lexical index generation published for this batch, recorded with it: lexical files
    /// are not fsynced, and an index found behind this after a crash is rebuilt.
    pub lexical_generation: Option<u64>,
    /// Probe floors ([`PROBE_FLOORS`]) of the batch's notes and of the notes whose
    /// co-occurrence it recomputed.
    pub probe_floors: Vec<(String, f32)>,
    /// Notes outside `upserts` whose out-list alone is replaced (their synthesized edges
    /// changed with the batch's notes), with the whole new list.
    pub relisted: Vec<(String, Vec<EdgeValue>)>,
    /// Paths of notes outside `upserts` whose synthesized edges the batch moves but which could
    /// not be read to recompute them: their manifest entries get [`FileEntry::REPARSE_SIZE`].
    pub reparse: Vec<String>,
}

impl Batch {
    /// Nothing to write.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty()
            && self.removals.is_empty()
            && self.touched.is_empty()
            && self.relisted.is_empty()
            && self.reparse.is_empty()
    }
}

/// The redb database, open for writing, or only for reading when this process may not write
/// the memory folder (a read-only mount or checkout, a folder owned by another user).
enum Db {
    Writable(Database),
    /// With why the file could not be opened for writing (permission denied, read-only file
    /// system).
    ReadOnly(redb::ReadOnlyDatabase, std::io::ErrorKind),
}

/// The redb graph store.
pub struct Store {
    db: Db,
    path: PathBuf,
    /// The change count shared with the other processes (`seq.rs`), or why it cannot be used
    /// (then every reader takes the exact path: a read transaction per look).
    seq: std::result::Result<ChangeSeq, seq::UnusableSeq>,
    /// Read transactions begun by this handle (diagnostics and tests).
    reads_begun: std::sync::atomic::AtomicU64,
    /// The first I/O error redb met on this handle (a full disk during a commit). redb refuses
    /// every later read and write of the handle after one, space freed or not, so the holder
    /// must open the file again (see [`Store::unusable`]).
    io_failed: std::sync::OnceLock<String>,
}

/// Why this process may not create files in `dir` (its mode, a read-only file system), if it
/// may not.
fn folder_write_denied(dir: &Path) -> Option<std::io::ErrorKind> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: `c` is a NUL-terminated string living across the call.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
            return None;
        }
        let e = std::io::Error::last_os_error();
        is_read_only(&e).then(|| e.kind())
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// The store's write lock (see [`WRITE_LOCK_FILE`]), released when dropped.
pub struct WriteLock {
    _file: std::fs::File,
}

impl Store {
    /// Open (or create) the store in `index_dir`. Returns the store and, when it had to be
    /// rebuilt, the reason (for the caller to print): a schema mismatch or an unreadable file.
    pub fn open(index_dir: &Path) -> Result<(Store, Option<String>)> {
        std::fs::create_dir_all(index_dir).map_err(|e| Error::io("create folder", index_dir, e))?;
        let path = index_dir.join(STORE_FILE);
        let mut rebuilt = None;
        // A file this process may not write is not damaged: it is read as it is, and whatever
        // would write to it says why it cannot (see `read_only`).
        // Opened only as a regular file (`fs::open_regular`): redb would read a named pipe
        // there until a writer came, and a device without end.
        let opened =
            crate::fs::open_regular(&path, std::fs::OpenOptions::new().read(true).write(true));
        match opened {
            Err(e) if is_read_only(&e) && path.is_file() => {
                return Store::open_read_only(index_dir, path, e.kind());
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::IsADirectory
                    || (e.kind() == std::io::ErrorKind::InvalidData && !path.is_file()) =>
            {
                // A folder, named pipe or device made by hand or a tool: moved out of the way,
                // as damage is, under the write lock and only if no other process did first
                // (see below).
                let _lock = lock_file(index_dir)?;
                let kind = std::fs::symlink_metadata(&path)
                    .ok()
                    .filter(|m| !m.is_file() && !m.file_type().is_symlink())
                    .map(|m| crate::notes::file_kind(m.file_type()));
                if let Some(kind) = kind {
                    let aside = move_aside(index_dir)?;
                    rebuilt = Some(format!(
                        "a {kind} stood where the index store {} belongs; moved it to {} and rebuilt the store from the notes",
                        path.display(),
                        aside.display()
                    ));
                }
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io("open for reading and writing", &path, e));
            }
            // A store this process may write in a folder it may not (`index/` made read-only,
            // its files not): the lexical index beside it could not be written, so an update
            // would fail half-way. The index is read as it is, as a read-only store is.
            Ok(_) => {
                if let Some(why) = folder_write_denied(index_dir) {
                    return Store::open_read_only(index_dir, path, why);
                }
            }
            _ => {}
        }
        let db = match open_db(&path) {
            Ok(db) => db,
            Err(OpenFailure::Environment(e)) => {
                return Err(Error::io("open the index store", &path, e));
            }
            Err(OpenFailure::Damaged(reason)) => {
                // Under the write lock, and only if the file is still damaged: two processes
                // that met the same damage would otherwise each move a file aside, the second
                // the store the first had just created (and was filling from the notes).
                let lock = lock_file(index_dir)?;
                let reason = match open_db(&path) {
                    Ok(db) => {
                        // Made anew by the other process, which says so; checking the schema
                        // takes the lock again.
                        drop(lock);
                        return Store::opened(index_dir, path, db, None);
                    }
                    Err(OpenFailure::Environment(e)) => {
                        return Err(Error::io("open the index store", &path, e));
                    }
                    Err(OpenFailure::Damaged(_)) => reason,
                };
                let aside = move_aside(index_dir)?;
                // Read once moved: the file looked at is the one this process moved.
                rebuilt = Some(if creation_unfinished(&aside) {
                    // Nothing in it to keep or inspect.
                    let _ = std::fs::remove_file(&aside);
                    format!(
                        "index store {} was left half-created by a process stopped while \
                         creating it; created it anew from the notes",
                        path.display()
                    )
                } else {
                    format!(
                        "index store {} could not be opened ({reason}); moved to {} and rebuilt \
                         from the notes",
                        path.display(),
                        aside.display()
                    )
                });
                open_db(&path).map_err(|r| match r {
                    OpenFailure::Environment(e) => Error::io("create the index store", &path, e),
                    OpenFailure::Damaged(r) => Error::store(&path, r),
                })?
            }
        };
        Store::opened(index_dir, path, db, rebuilt)
    }

    /// The store of `db`, opened at `path`, its schema checked (`rebuilt` says why it was made
    /// anew, if it was).
    fn opened(
        index_dir: &Path,
        path: PathBuf,
        db: Database,
        mut rebuilt: Option<String>,
    ) -> Result<(Store, Option<String>)> {
        let seq = seq::ChangeSeq::open(index_dir).map_err(|source| seq::UnusableSeq {
            path: index_dir.join(seq::SEQ_FILE),
            source,
        });
        let store = Store {
            db: Db::Writable(db),
            path,
            seq,
            reads_begun: std::sync::atomic::AtomicU64::new(0),
            io_failed: std::sync::OnceLock::new(),
        };
        if let Some(reason) = store.check_schema()? {
            rebuilt = Some(reason);
        }
        Ok((store, rebuilt))
    }

    /// Open the store at `path` for reading only (`why` the file cannot be written). Nothing is
    /// created nor repaired: a store of another schema, or one a crash left needing repair, is
    /// an error that says to index where the folder is writable.
    fn open_read_only(
        index_dir: &Path,
        path: PathBuf,
        why: std::io::ErrorKind,
    ) -> Result<(Store, Option<String>)> {
        let builder = db_builder();
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            builder.open_read_only(&path)
        }));
        // A damaged store cannot be moved aside and rebuilt by this process: say so, and where
        // the fix can run (redb's own advice, to delete the file, cannot be followed here).
        let damaged = |reason: String| {
            Error::io(
                "open the index store (read-only for this process)",
                &path,
                std::io::Error::new(
                    why,
                    format!(
                        "{reason}: it is damaged and cannot be rebuilt by this process; run \
                         `mnemon doctor --fix` where the folder is writable"
                    ),
                ),
            )
        };
        let db = match opened {
            Ok(Ok(db)) => db,
            // A file this process may not read at all is not damage: said as what it is.
            Ok(Err(_)) if let Err(e) = std::fs::File::open(&path) => {
                return Err(Error::io("read the index store", &path, e));
            }
            Ok(Err(e)) => return Err(damaged(e.to_string())),
            Err(_) => return Err(damaged("redb panicked while opening it".into())),
        };
        let store = Store {
            db: Db::ReadOnly(db, why),
            path,
            // The change count is kept by writers; a reader that cannot map it for writing
            // takes the exact path (a read transaction per look).
            seq: Err(seq::UnusableSeq {
                path: index_dir.join(seq::SEQ_FILE),
                source: seq::SeqError::Io("the index is read-only".into()),
            }),
            reads_begun: std::sync::atomic::AtomicU64::new(0),
            io_failed: std::sync::OnceLock::new(),
        };
        if let Some(found) = store.schema_found()?.filter(|v| *v != SCHEMA_VERSION) {
            return Err(store.read_only_refusal(&format!(
                "bringing the index written with schema v{found} to v{SCHEMA_VERSION}"
            )));
        }
        Ok((store, None))
    }

    /// Why this store cannot be written (the file's permission, or a read-only file system),
    /// when it was opened for reading only.
    pub fn read_only(&self) -> Option<std::io::ErrorKind> {
        match self.db {
            Db::Writable(_) => None,
            Db::ReadOnly(_, why) => Some(why),
        }
    }

    /// The error for `action`, which needs to write a store opened for reading only.
    pub fn read_only_refusal(&self, action: &str) -> Error {
        let why = self
            .read_only()
            .unwrap_or(std::io::ErrorKind::ReadOnlyFilesystem);
        let reason = format!(
            "{action} needs to write here, and this process may only read the index ({})",
            std::io::Error::from(why)
        );
        Error::io("write", &self.path, std::io::Error::new(why, reason))
    }

    fn begin_read(&self) -> std::result::Result<redb::ReadTransaction, redb::TransactionError> {
        match &self.db {
            Db::Writable(db) => db.begin_read(),
            Db::ReadOnly(db, _) => db.begin_read(),
        }
    }

    fn begin_write(&self) -> Result<redb::WriteTransaction> {
        match &self.db {
            Db::Writable(db) => db.begin_write().map_err(|e| self.err(e)),
            Db::ReadOnly(..) => Err(self.read_only_refusal("writing the index")),
        }
    }

    /// Path of the redb file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the change count cannot be used, if it cannot (for the caller to print once).
    pub fn change_seq_problem(&self) -> Option<&seq::UnusableSeq> {
        self.seq.as_ref().err()
    }

    /// The change count when no write transaction is in flight in any process (see `seq.rs`):
    /// taken before a read transaction, it stands for that transaction's version for as long as
    /// it stays the same. `None` while a write is in flight, after a writer died mid-commit (until
    /// the next write lock), or when the count cannot be used.
    pub fn settled_change_count(&self) -> Option<u64> {
        self.seq.as_ref().ok()?.settled()
    }

    /// Count a write transaction for the other processes: call just before its commit and keep
    /// the guard until the commit returns.
    fn counting(&self) -> Option<seq::Counting<'_>> {
        self.seq.as_ref().ok().map(ChangeSeq::counting)
    }

    /// Take the store's write lock (blocking while another process holds it). With the lock
    /// held no write transaction is in flight, so a change count left unequal by a writer that
    /// died mid-commit is made equal here.
    pub fn write_lock(&self) -> Result<WriteLock> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let file = lock_file(dir)?;
        if let Ok(seq) = &self.seq {
            seq.settle_after_crash();
        }
        Ok(WriteLock { _file: file })
    }

    /// Read transactions this handle has begun.
    pub fn reads_begun(&self) -> u64 {
        self.reads_begun.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Stop counting this handle's writes (tests: a writer that commits without the count, as
    /// one that died between its two counts leaves it).
    #[cfg(test)]
    pub(crate) fn stop_counting_writes(&mut self) {
        self.seq = Err(seq::UnusableSeq {
            path: self.path.with_file_name(seq::SEQ_FILE),
            source: seq::SeqError::Io("not counted (test)".into()),
        });
    }

    /// Make sure the tables exist at [`SCHEMA_VERSION`]; wipe them if another version wrote them.
    fn check_schema(&self) -> Result<Option<String>> {
        if self.schema_found()? == Some(SCHEMA_VERSION) {
            return Ok(None);
        }
        let _lock = self.write_lock()?;
        // Another process may have written the tables while this one waited for the lock.
        let found = self.schema_found()?;
        if found == Some(SCHEMA_VERSION) {
            return Ok(None);
        }
        self.recreate_tables()?;
        Ok(found.map(|v| {
            format!(
                "index store {} was written with schema v{v}, this build uses v{SCHEMA_VERSION}: rebuilt from the notes",
                self.path.display()
            )
        }))
    }

    /// The schema version the tables were written with (`None`: no tables yet).
    fn schema_found(&self) -> Result<Option<u32>> {
        let rtx = self.begin_read().map_err(|e| self.err(e))?;
        Ok(match rtx.open_table(META) {
            Ok(t) => t
                .get(SCHEMA_KEY)
                .map_err(|e| self.err(e))?
                .and_then(|v| <[u8; 4]>::try_from(v.value()).ok())
                .map(u32::from_le_bytes),
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(e) => return Err(self.err(e)),
        })
    }

    /// Empty every table, as a store of another schema is (the next scan then indexes every
    /// note anew), for a store that describes other notes than the lexical index just rebuilt
    /// from `memory/` (`Memory::ensure_lexical`). The caller holds the write lock (`_lock`).
    pub fn reset(&self, _lock: &WriteLock) -> Result<()> {
        self.recreate_tables()
    }

    /// Delete every table and create them empty at [`SCHEMA_VERSION`], with a new epoch, in one
    /// write transaction (the caller holds the write lock).
    fn recreate_tables(&self) -> Result<()> {
        let wtx = self.begin_write()?;
        for name in [
            "nodes",
            "manifest",
            "problems",
            "meta",
            "probe_floors",
            "sketches",
        ] {
            let _ = wtx.delete_table(TableDefinition::<&str, &[u8]>::new(name));
        }
        let _ = wtx.delete_table(CHANGES);
        for name in LEGACY_EDGE_TABLES {
            // Schema v3 and older kept edges in multimap tables of these names.
            let _ = wtx.delete_table(TableDefinition::<&str, &[u8]>::new(name));
            let _ = wtx.delete_multimap_table(MultimapTableDefinition::<&str, &[u8]>::new(name));
        }
        {
            let mut meta = wtx.open_table(META).map_err(|e| self.err(e))?;
            meta.insert(SCHEMA_KEY, SCHEMA_VERSION.to_le_bytes().as_slice())
                .map_err(|e| self.err(e))?;
            let epoch: u64 = rand::random();
            meta.insert(EPOCH_KEY, epoch.to_le_bytes().as_slice())
                .map_err(|e| self.err(e))?;
            meta.insert(GENERATION_KEY, 0u64.to_le_bytes().as_slice())
                .map_err(|e| self.err(e))?;
            meta.insert(EDGE_COUNT_KEY, 0u64.to_le_bytes().as_slice())
                .map_err(|e| self.err(e))?;
            wtx.open_table(CHANGES).map_err(|e| self.err(e))?;
            wtx.open_table(NODES).map_err(|e| self.err(e))?;
            wtx.open_table(MANIFEST).map_err(|e| self.err(e))?;
            wtx.open_table(PROBLEMS).map_err(|e| self.err(e))?;
            wtx.open_table(EDGES_OUT).map_err(|e| self.err(e))?;
            wtx.open_table(PROBE_FLOORS).map_err(|e| self.err(e))?;
            wtx.open_table(SKETCHES).map_err(|e| self.err(e))?;
        }
        {
            let _counted = self.counting();
            wtx.commit().map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    fn err(&self, e: impl Into<redb::Error>) -> Error {
        let e = e.into();
        match &e {
            redb::Error::Io(io) if is_environment(io) => {
                let _ = self.io_failed.set(io.to_string());
            }
            redb::Error::PreviousIo => {
                let _ = self.io_failed.set("an I/O error".into());
            }
            _ => {}
        }
        store_error(&self.path, e)
    }

    /// Why this handle can no longer read or write the store, if it cannot: redb met an I/O
    /// error on it (a full disk while a transaction committed) and refuses every later
    /// operation of the handle, even once space is freed. The file itself is sound (redb's
    /// commit is atomic): the store opened again reads and writes it.
    pub fn unusable(&self) -> Option<String> {
        self.io_failed.get().map(|why| {
            format!(
                "a write to the index store {} failed ({why}), and the store this process \
                 opened refuses every read and write after that",
                self.path.display()
            )
        })
    }

    fn corrupt(&self, key: &str, e: CodecError) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            reason: format!("value for `{key}`: {e}"),
        }
    }

    /// A `u64` of the `meta` table `t`, read or written (0 when the key is missing).
    fn meta_u64(
        &self,
        t: &impl ReadableTable<&'static str, &'static [u8]>,
        key: &str,
    ) -> Result<u64> {
        match t.get(key).map_err(|e| self.err(e))? {
            Some(v) => decode_u64(v.value()).ok_or_else(|| Error::Corrupt {
                path: self.path.clone(),
                reason: format!("meta `{key}` is not 8 bytes"),
            }),
            None => Ok(0),
        }
    }

    /// A consistent read view (a redb read transaction).
    pub fn read(&self) -> Result<StoreReader<'_>> {
        self.reads_begun
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let rtx = self.begin_read().map_err(|e| self.err(e))?;
        Ok(StoreReader { rtx, store: self })
    }
}

/// Whether the store file at `path` is one whose creation never finished. redb sizes a new
/// file, writes its header without the magic number, and writes the magic number last, once the
/// rest is on disk: a small file with zeros where the magic number goes and either the rest of
/// a header after them or nothing but zeros was being created by a process that stopped. (A
/// store whose first block a crash zeroed has neither: its header is gone too, and its pages
/// are not.)
fn creation_unfinished(path: &Path) -> bool {
    /// The length of redb's magic number.
    const MAGIC_BYTES: usize = 9;
    /// The bytes of redb's header read after it (its layout and first transaction slot).
    const HEADER_BYTES: usize = 512;
    /// Larger than any new file redb creates: a larger one has been written to.
    const MAX_NEW_FILE_BYTES: u64 = 1 << 20;
    // Opened only as a regular file: a named pipe moved aside from where the store belongs
    // would block a plain read until some process wrote to it.
    let Ok(file) = crate::fs::open_regular_read(path) else {
        return false;
    };
    let too_large = file
        .metadata()
        .map_or(true, |m| m.len() > MAX_NEW_FILE_BYTES);
    if too_large {
        return false;
    }
    let mut bytes = Vec::new();
    use std::io::Read;
    if file
        .take(MAX_NEW_FILE_BYTES)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return false;
    }
    let zero = |b: &[u8]| b.iter().all(|&x| x == 0);
    bytes.len() >= MAGIC_BYTES
        && zero(&bytes[..MAGIC_BYTES])
        && (!zero(&bytes[MAGIC_BYTES..bytes.len().min(HEADER_BYTES)]) || zero(&bytes))
}

/// Move the store file in `index_dir` aside as damaged (to `graph.redb.damaged`, kept for
/// inspection and replacing an older one), so the next open starts afresh. Returns where it went.
pub fn move_aside(index_dir: &Path) -> Result<PathBuf> {
    let path = index_dir.join(STORE_FILE);
    crate::fs::move_aside_as_damaged(&crate::fs::RealFs, &path)
        .map_err(|e| Error::io("move aside", &path, e))
}

/// How long a writer waits for the write lock before it says that it waits: most holders
/// finish well within it (one note indexed, one batch of changes).
pub const LOCK_WAIT_NOTICE_AFTER_MS: u64 = 1000;

/// Told once per wait when a writer has waited [`LOCK_WAIT_NOTICE_AFTER_MS`] for the write lock
/// (see [`set_lock_wait_notice`]).
static LOCK_WAIT_NOTICE: std::sync::OnceLock<fn(&Path)> = std::sync::OnceLock::new();

/// Have `notice` called with the lock file's path whenever this process has waited
/// [`LOCK_WAIT_NOTICE_AFTER_MS`] for another process's write lock and goes on waiting (a
/// command line prints it: without it, a wait behind a stopped or hung holder is silent). Set
/// once per process; later calls change nothing.
pub fn set_lock_wait_notice(notice: fn(&Path)) {
    let _ = LOCK_WAIT_NOTICE.set(notice);
}

/// Open and lock `dir/write.lock` (created if missing; blocks while another holder has it, and
/// says so after a while: [`set_lock_wait_notice`]).
fn lock_file(dir: &Path) -> Result<std::fs::File> {
    let path = dir.join(WRITE_LOCK_FILE);
    let f = crate::fs::open_lock_file(&path).map_err(|e| Error::io("open lock file", &path, e))?;
    let poll = std::time::Duration::from_millis(20);
    let started = std::time::Instant::now();
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(f),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
        }
        if started.elapsed() >= std::time::Duration::from_millis(LOCK_WAIT_NOTICE_AFTER_MS) {
            break;
        }
        std::thread::sleep(poll);
    }
    if let Some(notice) = LOCK_WAIT_NOTICE.get() {
        notice(&path);
    }
    f.lock().map_err(|e| Error::io("lock", &path, e))?;
    Ok(f)
}

fn decode_u64(bytes: &[u8]) -> Option<u64> {
    <[u8; 8]>::try_from(bytes).ok().map(u64::from_le_bytes)
}

/// redb's page cache (its default is 1 GiB). The cache is heap memory: a graph load reads every
/// node and edge page through it, and a cold build keeps up to half of it as its write buffer.
/// Recall reads a few records per call and walks the graph in memory, so a small cache keeps an
/// open index's resident memory far smaller at no cost to recall; the trade-off is that a graph
/// load or a cold build, which pass through many more pages, find fewer of them in it.
const STORE_CACHE_BYTES: usize = 32 << 20;

/// Why the store file could not be opened.
enum OpenFailure {
    /// The environment refused (permissions, a read-only or full file system): the file may be
    /// fine and is left where it is.
    Environment(std::io::Error),
    /// The bytes are bad (or redb could not make sense of them): the file is moved aside.
    Damaged(String),
}

/// Whether an I/O error says something about the environment rather than the file's bytes.
/// Whether `e` says the file may be read but not written by this process.
fn is_read_only(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(e.kind(), K::PermissionDenied | K::ReadOnlyFilesystem)
}

fn is_environment(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(
        e.kind(),
        K::PermissionDenied
            | K::ReadOnlyFilesystem
            | K::StorageFull
            | K::QuotaExceeded
            | K::ResourceBusy
            | K::WouldBlock
            | K::Interrupted
            | K::OutOfMemory
    )
}

/// Whether an I/O error while reading the store says its bytes are bad: a read past the end of
/// the file (a page pointer or length beyond it) or data the reader refused.
fn is_bad_bytes(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(e.kind(), K::UnexpectedEof | K::InvalidData)
}

/// The error of a failed store operation on the file at `path`: damage (see [`is_damage`]) when
/// it can only come from the file's bytes, like a failed checksum. mnemon opens every table with
/// the definitions it created it with, and creates them all before any other read, so a table
/// that is missing, of other types or of the other kind is a flipped bit in the file's table
/// directory; a read past the file's end is a page pointer or length a flipped bit moved.
fn store_error(path: &Path, e: redb::Error) -> Error {
    // A full disk or a denied write is the environment's, not damage: say the environment's fix
    // (free space, check the mode), not "delete the store".
    if let redb::Error::Io(io) = &e
        && is_environment(io)
    {
        return Error::io(
            "read or write",
            path,
            std::io::Error::new(io.kind(), io.to_string()),
        );
    }
    if let redb::Error::PreviousIo = e {
        // Not the file's bytes: redb refuses every operation of a handle after it met an I/O
        // error. Deleting the store, redb's advice, is not the fix; opening it again is.
        return Error::io(
            "read or write",
            path,
            std::io::Error::other(
                "an earlier write to it failed (a full disk?), and this process's handle on it \
                 refuses every read and write since; free space if the disk is full, then retry: \
                 a new command opens it again (a server or a Python handle does so by itself at \
                 its next call)",
            ),
        );
    }
    let reason = match &e {
        redb::Error::Io(io) if is_bad_bytes(io) => {
            Some(format!("a read failed ({io}): it points outside the file"))
        }
        redb::Error::Corrupted(_)
        | redb::Error::TableTypeMismatch { .. }
        | redb::Error::TypeDefinitionChanged { .. }
        | redb::Error::TableIsMultimap(_)
        | redb::Error::TableIsNotMultimap(_)
        | redb::Error::TableDoesNotExist(_) => Some(e.to_string()),
        _ => None,
    };
    match reason {
        Some(reason) => Error::Corrupt {
            path: path.to_path_buf(),
            reason,
        },
        None => Error::store(path, e),
    }
}

/// How every process opens the store, writer or reader: all must share one concurrency mode.
fn db_builder() -> redb::Builder {
    let mut builder = Database::builder();
    builder.set_concurrency_mode(ConcurrencyMode::MultiWriter);
    builder.set_cache_size(STORE_CACHE_BYTES);
    builder
}

fn open_db(path: &Path) -> std::result::Result<Database, OpenFailure> {
    let builder = db_builder();
    // redb may panic on a file altered behind its back; a derived file is never worth a crash.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.create(path))) {
        Ok(Ok(db)) => Ok(db),
        Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(e)))) if is_environment(&e) => {
            Err(OpenFailure::Environment(e))
        }
        Ok(Err(e)) => Err(OpenFailure::Damaged(e.to_string())),
        Err(_) => Err(OpenFailure::Damaged(
            "redb panicked while opening it".into(),
        )),
    }
}

/// A read view of the store at a version the caller already knows, begun on first use: a
/// recall that found the change count unmoved needs the store only for records it has not
/// kept, and most such recalls need none.
pub struct LazyReader<'s> {
    store: &'s Store,
    /// The version the caller's graph and lexical index are at.
    at: Version,
    /// The transaction, and whether it is at `at`.
    begun: std::cell::OnceCell<(StoreReader<'s>, bool)>,
}

impl<'s> LazyReader<'s> {
    /// A view whose transaction is already open at `at` (its version).
    pub fn begun(reader: StoreReader<'s>, at: Version) -> Self {
        LazyReader {
            store: reader.store,
            at,
            begun: std::cell::OnceCell::from((reader, true)),
        }
    }

    /// A view of `store` at `at`, its transaction begun only if something must be read.
    pub fn deferred(store: &'s Store, at: Version) -> Self {
        LazyReader {
            store,
            at,
            begun: std::cell::OnceCell::new(),
        }
    }

    /// The version the caller expects.
    pub fn version(&self) -> Version {
        self.at
    }

    /// The transaction (begun now if it was deferred) and whether it is at [`Self::version`]:
    /// a writer may have committed since the caller's change count was read.
    pub fn get(&self) -> Result<(&StoreReader<'s>, bool)> {
        if let Some((r, at)) = self.begun.get() {
            return Ok((r, *at));
        }
        let reader = self.store.read()?;
        let at = reader.version()? == self.at;
        let (r, at) = self.begun.get_or_init(|| (reader, at));
        Ok((r, *at))
    }

    /// Whether a transaction was begun and found the store at another version than expected
    /// (what was computed from the view may mix two versions).
    pub fn moved(&self) -> bool {
        self.begun.get().is_some_and(|(_, at)| !at)
    }
}

/// A consistent view of the store (one redb read transaction).
pub struct StoreReader<'s> {
    rtx: redb::ReadTransaction,
    store: &'s Store,
}

impl StoreReader<'_> {
    fn err(&self, e: impl Into<redb::Error>) -> Error {
        self.store.err(e)
    }
    fn corrupt(&self, key: &str, e: CodecError) -> Error {
        self.store.corrupt(key, e)
    }

    /// The node `id`, if it exists.
    pub fn node(&self, id: &str) -> Result<Option<NodeRecord>> {
        let t = self.rtx.open_table(NODES).map_err(|e| self.err(e))?;
        match t.get(id).map_err(|e| self.err(e))? {
            Some(v) => NodeRecord::decode(v.value())
                .map(Some)
                .map_err(|e| self.corrupt(id, e)),
            None => Ok(None),
        }
    }

    /// Each of `ids`' records in turn, borrowed, to `f` (`None` when no note has the id): what
    /// a recall shows of its results, read without copying what it does not show.
    pub fn with_node_refs<'i>(
        &self,
        ids: impl IntoIterator<Item = &'i str>,
        mut f: impl FnMut(Option<NodeRecordRef<'_>>),
    ) -> Result<()> {
        let t = self.rtx.open_table(NODES).map_err(|e| self.err(e))?;
        for id in ids {
            match t.get(id).map_err(|e| self.err(e))? {
                Some(v) => f(Some(
                    NodeRecordRef::decode(v.value()).map_err(|e| self.corrupt(id, e))?,
                )),
                None => f(None),
            }
        }
        Ok(())
    }

    /// The store version this reader sees.
    pub fn version(&self) -> Result<Version> {
        let t = self.rtx.open_table(META).map_err(|e| self.err(e))?;
        Ok(Version {
            epoch: self.meta_u64(&t, EPOCH_KEY)?,
            generation: self.meta_u64(&t, GENERATION_KEY)?,
        })
    }

    fn meta_u64(&self, t: &redb::ReadOnlyTable<&str, &[u8]>, key: &str) -> Result<u64> {
        self.store.meta_u64(t, key)
    }

    /// The lexical index generation the last batch recorded (0 when none did): an index on disk
    /// at an older generation lost writes in a crash.
    pub fn lexical_generation(&self) -> Result<u64> {
        let t = self.rtx.open_table(META).map_err(|e| self.err(e))?;
        self.meta_u64(&t, LEXICAL_GENERATION_KEY)
    }

    /// The ids touched by the write transactions after `since` up to this reader's generation,
    /// or `None` when the change log no longer covers that range (or logged "everything").
    pub fn changes_since(&self, since: u64, until: u64) -> Result<Option<Vec<String>>> {
        if since >= until {
            return Ok(Some(Vec::new()));
        }
        let t = self.rtx.open_table(CHANGES).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        let mut expect = since + 1;
        for row in t.range(since + 1..=until).map_err(|e| self.err(e))? {
            let (k, v) = row.map_err(|e| self.err(e))?;
            if k.value() != expect {
                return Ok(None);
            }
            expect += 1;
            match codec::decode_changes(v.value())
                .map_err(|e| self.corrupt(&format!("changes[{}]", k.value()), e))?
            {
                Some(ids) => out.extend(ids),
                None => return Ok(None),
            }
        }
        if expect != until + 1 {
            return Ok(None);
        }
        out.sort();
        out.dedup();
        Ok(Some(out))
    }

    /// Visit every node's scoring fields (type, `updated_s`, `ttl_days`), in id order.
    pub fn for_each_node(
        &self,
        mut f: impl FnMut(&str, (NoteType, Option<i64>, Option<u32>)),
    ) -> Result<()> {
        let nodes = self.rtx.open_table(NODES).map_err(|e| self.err(e))?;
        for row in nodes.iter().map_err(|e| self.err(e))? {
            let (k, v) = row.map_err(|e| self.err(e))?;
            let scoring =
                NodeRecordRef::decode_scoring(v.value()).map_err(|e| self.corrupt(k.value(), e))?;
            f(k.value(), scoring);
        }
        Ok(())
    }

    /// Visit every out-edge, in source id order, then stored order (decoded in place), with the
    /// length of the source's list.
    pub fn for_each_out_edge(&self, mut f: impl FnMut(&str, usize, EdgeRef<'_>)) -> Result<()> {
        let edges = self.rtx.open_table(EDGES_OUT).map_err(|e| self.err(e))?;
        for row in edges.iter().map_err(|e| self.err(e))? {
            let (k, v) = row.map_err(|e| self.err(e))?;
            let list = decode_edge_list(v.value()).map_err(|e| self.corrupt(k.value(), e))?;
            let len = list.len();
            for bytes in list {
                let ev = EdgeRef::decode(bytes).map_err(|e| self.corrupt(k.value(), e))?;
                f(k.value(), len, ev);
            }
        }
        Ok(())
    }

    /// Every stored sketch ([`SKETCHES`]): the ids in order, and their sketches.
    pub fn sketches(&self) -> Result<(Vec<String>, Vec<Sketch>)> {
        let t = self.rtx.open_table(SKETCHES).map_err(|e| self.err(e))?;
        let n = usize::try_from(t.len().map_err(|e| self.err(e))?).unwrap_or(0);
        let (mut ids, mut sketches) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for row in t.iter().map_err(|e| self.err(e))? {
            let (k, v) = row.map_err(|e| self.err(e))?;
            let id = k.value();
            let sketch = Sketch::from_bytes(v.value()).map_err(|c| Error::Corrupt {
                path: self.store.path.clone(),
                reason: format!("sketch of `{id}`: {c}"),
            })?;
            ids.push(id.to_string());
            sketches.push(sketch);
        }
        Ok((ids, sketches))
    }

    /// The probe floor of node `id` ([`PROBE_FLOORS`]), if one is stored.
    pub fn probe_floor(&self, id: &str) -> Result<Option<f32>> {
        let t = self.rtx.open_table(PROBE_FLOORS).map_err(|e| self.err(e))?;
        match t.get(id).map_err(|e| self.err(e))? {
            Some(v) => <[u8; 4]>::try_from(v.value())
                .map(|b| Some(f32::from_le_bytes(b)))
                .map_err(|_| Error::Corrupt {
                    path: self.store.path.clone(),
                    reason: format!("probe floor of `{id}` is not 4 bytes"),
                }),
            None => Ok(None),
        }
    }

    /// The stored id a user's `id` names: `id` itself when a node has it, else the one node
    /// whose id is the same text in another Unicode normal form (a file name macOS wrote
    /// decomposed, `re\u{301}sume\u{301}`, typed precomposed, `résumé`, or the reverse).
    /// `None` when no node, or more than one, matches. Only a miss on a non-ASCII id reads
    /// the node list.
    pub fn stored_id(&self, id: &str) -> Result<Option<String>> {
        use unicode_normalization::UnicodeNormalization;
        if self.has_node(id)? {
            return Ok(Some(id.to_string()));
        }
        if id.is_ascii() {
            return Ok(None);
        }
        let want: String = id.nfc().collect();
        if want != id && self.has_node(&want)? {
            return Ok(Some(want));
        }
        let mut found: Vec<String> = Vec::new();
        self.for_each_node(|stored, _| {
            if !stored.is_ascii() && found.len() < 2 && stored.nfc().eq(want.chars()) {
                found.push(stored.to_string());
            }
        })?;
        Ok(if found.len() == 1 { found.pop() } else { None })
    }

    /// The note whose id differs from `id` only in letter case, when no note has `id` itself
    /// (a new note there would be that note's twin on a case-insensitive file system). Reads
    /// every id: for a note about to be created only.
    pub fn case_twin_of(&self, id: &str) -> Result<Option<String>> {
        if self.has_node(id)? {
            return Ok(None);
        }
        let folded = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<String>();
        let want = folded(id);
        let nodes = self.rtx.open_table(NODES).map_err(|e| self.err(e))?;
        for row in nodes.iter().map_err(|e| self.err(e))? {
            let (k, _) = row.map_err(|e| self.err(e))?;
            let stored = k.value();
            if stored.len() == id.len() && folded(stored) == want {
                return Ok(Some(stored.to_string()));
            }
        }
        Ok(None)
    }

    /// Whether node `id` exists.
    pub fn has_node(&self, id: &str) -> Result<bool> {
        let t = self.rtx.open_table(NODES).map_err(|e| self.err(e))?;
        Ok(t.get(id).map_err(|e| self.err(e))?.is_some())
    }

    /// Ids starting with `prefix`, in order, at most `max` of them.
    pub fn ids_with_prefix(&self, prefix: &str, max: usize) -> Result<Vec<String>> {
        let t = self.rtx.open_table(NODES).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in t.range(prefix..).map_err(|e| self.err(e))? {
            let (k, _) = row.map_err(|e| self.err(e))?;
            let id = k.value();
            if !id.starts_with(prefix) || out.len() >= max {
                break;
            }
            out.push(id.to_string());
        }
        Ok(out)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> Result<u64> {
        let t = self.rtx.open_table(NODES).map_err(|e| self.err(e))?;
        t.len().map_err(|e| self.err(e))
    }

    /// Number of stored sketches ([`SKETCHES`]): every one is of a node, so as many as
    /// [`StoreReader::node_count`] means none is missing.
    pub fn sketch_count(&self) -> Result<u64> {
        let t = self.rtx.open_table(SKETCHES).map_err(|e| self.err(e))?;
        t.len().map_err(|e| self.err(e))
    }

    /// Number of edges (out-direction entries), kept in `meta` by every write.
    pub fn edge_count(&self) -> Result<u64> {
        let t = self.rtx.open_table(META).map_err(|e| self.err(e))?;
        self.meta_u64(&t, EDGE_COUNT_KEY)
    }

    fn edges(
        &self,
        def: TableDefinition<&str, &[u8]>,
        id: &str,
        max: usize,
    ) -> Result<Vec<EdgeValue>> {
        let t = self.rtx.open_table(def).map_err(|e| self.err(e))?;
        let Some(v) = t.get(id).map_err(|e| self.err(e))? else {
            return Ok(Vec::new());
        };
        let list = decode_edge_list(v.value()).map_err(|e| self.corrupt(id, e))?;
        list.into_iter()
            .take(max)
            .map(|bytes| EdgeValue::decode(bytes).map_err(|e| self.corrupt(id, e)))
            .collect()
    }

    /// Edges leaving `id` (`other` is the target), in O(degree).
    pub fn edges_out(&self, id: &str) -> Result<Vec<EdgeValue>> {
        self.edges(EDGES_OUT, id, usize::MAX)
    }

    /// At most `max` edges leaving `id` (in stored order: by kind, then provenance).
    pub fn edges_out_limited(&self, id: &str, max: usize) -> Result<Vec<EdgeValue>> {
        self.edges(EDGES_OUT, id, max)
    }

    /// Edges arriving at `id` (`other` is the source), in the order an edge list keeps (by the
    /// encoded bytes: kind, provenance, confidence, the source's out-degree, the source's id).
    /// One pass over every out-edge (the store keeps each edge once, at its source): a process
    /// that holds the [`Graph`] reads its in-lists instead.
    pub fn edges_in(&self, id: &str) -> Result<Vec<EdgeValue>> {
        let mut found: Vec<(Vec<u8>, EdgeValue)> = Vec::new();
        self.for_each_out_edge(|from, _, e| {
            if e.other == id {
                let mirror = EdgeRef { other: from, ..e };
                let mut key = Vec::with_capacity(codec::EDGE_VALUE_FIXED_BYTES + from.len());
                mirror.encode_into(&mut key);
                found.push((key, mirror.into()));
            }
        })?;
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(found.into_iter().map(|(_, e)| e).collect())
    }

    /// Every node id with its record, in id order.
    pub fn all_nodes(&self) -> Result<Vec<(String, NodeRecord)>> {
        let t = self.rtx.open_table(NODES).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in t.iter().map_err(|e| self.err(e))? {
            let (k, v) = row.map_err(|e| self.err(e))?;
            let id = k.value().to_string();
            let rec = NodeRecord::decode(v.value()).map_err(|e| self.corrupt(&id, e))?;
            out.push((id, rec));
        }
        Ok(out)
    }

    /// Every edge, in source id order.
    pub fn all_edges(&self) -> Result<Vec<Edge>> {
        let mut out = Vec::new();
        self.for_each_out_edge(|from, _, ev| {
            out.push(Edge {
                from: from.to_string(),
                to: ev.other.to_string(),
                kind: ev.kind,
                provenance: ev.provenance,
                confidence: ev.confidence,
            })
        })?;
        Ok(out)
    }

    /// The whole manifest: path -> file entry.
    pub fn manifest(&self) -> Result<rustc_hash::FxHashMap<String, FileEntry>> {
        let t = self.rtx.open_table(MANIFEST).map_err(|e| self.err(e))?;
        let rows = t.len().unwrap_or(0) as usize;
        let mut out = rustc_hash::FxHashMap::with_capacity_and_hasher(rows, Default::default());
        for row in t.iter().map_err(|e| self.err(e))? {
            let (k, v) = row.map_err(|e| self.err(e))?;
            let path = k.value().to_string();
            let entry = FileEntry::decode(v.value()).map_err(|e| self.corrupt(&path, e))?;
            out.insert(path, entry);
        }
        Ok(out)
    }

    /// Number of note files the manifest records (0: never indexed, or no notes).
    pub fn manifest_len(&self) -> Result<u64> {
        let t = self.rtx.open_table(MANIFEST).map_err(|e| self.err(e))?;
        t.len().map_err(|e| self.err(e))
    }

    /// The manifest entry of one note path.
    pub fn manifest_entry(&self, path: &str) -> Result<Option<FileEntry>> {
        let t = self.rtx.open_table(MANIFEST).map_err(|e| self.err(e))?;
        match t.get(path).map_err(|e| self.err(e))? {
            Some(v) => FileEntry::decode(v.value())
                .map(Some)
                .map_err(|e| self.corrupt(path, e)),
            None => Ok(None),
        }
    }

    /// Whether the manifest records a note file below the folder `folder` (a path relative to
    /// `memory/`, without a trailing slash).
    pub fn manifest_has_notes_under(&self, folder: &str) -> Result<bool> {
        let t = self.rtx.open_table(MANIFEST).map_err(|e| self.err(e))?;
        let prefix = format!("{folder}/");
        let mut after = t.range(prefix.as_str()..).map_err(|e| self.err(e))?;
        Ok(match after.next() {
            Some(row) => row.map_err(|e| self.err(e))?.0.value().starts_with(&prefix),
            None => false,
        })
    }

    /// Every note path with problems, with its problems, in path order.
    pub fn problems(&self) -> Result<Vec<(String, Vec<Problem>)>> {
        let t = self.rtx.open_table(PROBLEMS).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in t.iter().map_err(|e| self.err(e))? {
            let (k, v) = row.map_err(|e| self.err(e))?;
            let path = k.value().to_string();
            let list = codec::decode_problems(v.value()).map_err(|e| self.corrupt(&path, e))?;
            out.push((path, list));
        }
        Ok(out)
    }
}

/// Whether `e` says the index store's bytes are bad (a rebuild from the notes repairs it), not
/// that the environment refused.
pub fn is_damage(e: &Error) -> bool {
    match e {
        Error::Corrupt { path, .. } => {
            path.file_name().and_then(|n| n.to_str()) == Some(STORE_FILE)
        }
        Error::Store { message, .. } => message.to_ascii_lowercase().contains("corrupt"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec named schema v10 for two versions after v10: the version it states and the last
    /// row of its version log must be the one this build writes.
    #[test]
    fn the_spec_states_the_schema_version_this_build_writes() {
        let spec_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../format-spec/store.md");
        let spec = std::fs::read_to_string(spec_path).expect("format-spec/store.md");
        assert!(
            spec.contains(&format!("`SCHEMA_VERSION = {SCHEMA_VERSION}`")),
            "store.md states another schema version"
        );
        assert!(spec.contains(&format!("this build uses v{SCHEMA_VERSION}:")));
        let last_row = spec
            .lines()
            .take_while(|l| !l.starts_with("## Sharing"))
            .filter_map(|l| l.strip_prefix("| ")?.split(' ').next()?.parse::<u32>().ok())
            .last();
        assert_eq!(last_row, Some(SCHEMA_VERSION));
    }

    /// A bit flipped in a page pointer made redb read past the file's end; the I/O error it gave
    /// was taken for the environment refusing, so `doctor` failed instead of rebuilding the store.
    #[test]
    fn a_read_past_the_end_of_the_store_is_damage_not_an_environment_error() {
        let path = Path::new("/m/index").join(STORE_FILE);
        let eof = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "failed to fill buffer");
        let e = store_error(&path, redb::Error::Io(eof));
        assert!(is_damage(&e), "{e}");
        assert!(
            matches!(&e, Error::Corrupt { path: p, .. } if *p == path),
            "{e}"
        );
        let full = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left");
        let e = store_error(&path, redb::Error::Io(full));
        assert!(!is_damage(&e), "a full disk is not damage: {e}");
        let e = store_error(&path, redb::Error::Corrupted("bad checksum".into()));
        assert!(is_damage(&e), "{e}");
    }

    /// A full disk while the store committed said "delete graph.redb to rebuild it": the store
    /// was sound, and the fix is to free space.
    #[test]
    fn a_full_disk_in_the_store_says_to_free_space_not_to_delete_it() {
        let path = Path::new("/m/index").join(STORE_FILE);
        let full = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left");
        let e = store_error(&path, redb::Error::Io(full)).to_string();
        assert!(e.contains("free space and retry"), "{e}");
        assert!(!e.contains("delete"), "{e}");
        let denied = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = store_error(&path, redb::Error::Io(denied)).to_string();
        assert!(e.contains("check its owner and mode"), "{e}");
        assert!(!e.contains("delete"), "{e}");
    }

    /// A bit flipped in redb's table directory made a table's stored key or value type differ
    /// from the one it was opened with; every command, `doctor --fix` included, stopped on it.
    #[test]
    fn a_table_of_other_types_or_missing_is_damage() {
        let path = Path::new("/m/index").join(STORE_FILE);
        let errors = [
            redb::Error::TableDoesNotExist("nodes".into()),
            redb::Error::TableIsMultimap("nodes".into()),
            redb::Error::TableIsNotMultimap("edges".into()),
        ];
        for e in errors {
            let e = store_error(&path, e);
            assert!(is_damage(&e), "{e}");
        }
        let busy = store_error(&path, redb::Error::DatabaseAlreadyOpen);
        assert!(!is_damage(&busy), "{busy}");
    }
}
