//! The `Memory` facade: one handle on a memory folder, used by the CLI, the MCP server and
//! embedding agents alike.
//!
//! Locks: a lock guarding a cache (the graph, the lexical view, the shown records, the folded
//! stats) that a panicking thread poisoned makes the call fail with `Error::CachePoisoned` (the
//! cache may be half-updated); the small bookkeeping locks (notices, manifest stamps, the last
//! question, the last store version read) hold hints, and a poisoned one is skipped: losing a
//! hint costs a reload or a notice, never a wrong answer.

mod ingest;
mod inspect;
mod lexical;
mod log_view;
mod similar;
mod synthesis;
mod usage;
mod write;

pub use ingest::{IndexPhases, IndexReport};
pub use inspect::{
    Contradiction, Dangling, DoctorReport, EdgeIn, EdgeOut, IndexHealth,
    MAX_REPORTED_NEAR_DUPLICATES, NearDuplicate, NodeView, NoteError,
};
use lexical::ManifestStamp;
pub use log_view::{EventSegments, MissingSegment, SegmentContents};
pub use usage::{FeedbackReport, MAX_FEEDBACK_IDS, NodeStatsView};
pub use write::{
    MAX_NAME_BYTES, OnDuplicate, Similar, WriteNeighbours, WriteOutcome, WriteRefusal,
    WriteRequest, parse_note_type, sha256_hex,
};

use crate::error::{Error, Result};
use crate::events::{EventKind, EventLog, HitSource, SyncPolicy};
use crate::folder::MemoryDir;
use crate::fs::{Fs, RealFs};
use crate::graph::Graph;
use crate::graph::{self, Refreshed};
use crate::index::LexicalIndex;
use crate::index::tokenize::Tokenizer;
use crate::notes::{self};
use crate::recall::learned::Learned;
use crate::recall::ord_stats::OrdStats;
use crate::recall::shown::ShownCache;
use crate::recall::{self, Query, Recall};
use crate::store::{LazyReader, Store, Version};
use crate::time::{Clock, SystemClock};
use rayon::prelude::*;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// Before a recall, events written by other live sessions are folded in if the last fold is
/// older than this (a directory listing and a stat per segment).
pub const STATS_REFRESH_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// A recall reuses the store version it read last, without a read transaction, while the store's
/// change count has not moved (`store::seq`), and for at most this long: a writer that does not
/// count its commits (a build before the count, another machine on a network file system, which
/// does not share the mapping) is seen within this time.
pub const STORE_RECHECK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Nodes patched into a process's graph after which it writes the graph cache file again (each
/// process that reads the file patches what happened since it was written). Below this, writing
/// the file (its whole graph, serialized) costs more than the patches it would save.
const GRAPH_FILE_REWRITE_PATCHED: usize = 256;

/// An open memory folder: the one handle an application, the CLI and the MCP server use.
///
/// One `Memory` may be shared between threads (`&self` everywhere); several processes may open
/// the same folder at once. A new folder, indexed, asked, and told what helped:
///
/// ```
/// use mnemon::recall::Query;
/// use mnemon::Memory;
///
/// let tmp = tempfile::tempdir().unwrap();
/// let memory = Memory::init(tmp.path().join(".mnemon"))?;
/// std::fs::write(
///     memory.dir().memory().join("pool-sizing.md"),
///     "---\nname: Pool sizing\ntype: project\n---\nThe connection pool times out at 20 connections.\n",
/// )
/// .unwrap();
/// let report = memory.index()?;
/// assert_eq!(report.notes, 1);
///
/// let found = memory.recall(&Query::text("why does the connection pool time out"))?;
/// assert_eq!(found.results[0].id, "pool-sizing");
/// memory.feedback(&["pool-sizing".to_string()], &[], None)?;
/// assert_eq!(memory.stats("pool-sizing")?.used_count, 1);
/// # Ok::<(), mnemon::Error>(())
/// ```
pub struct Memory {
    dir: MemoryDir,
    store: Store,
    tokenizer: Tokenizer,
    lexical: RwLock<Arc<LexicalIndex>>,
    /// Identity (len, mtime) of the manifest file the loaded lexical index came from.
    lexical_stamp: Mutex<ManifestStamp>,
    /// The store version at which recall last found the loaded lexical view to be the manifest
    /// on disk, with that view's stamp.
    lexical_checked_at: Mutex<Option<(Version, ManifestStamp)>>,
    /// The store's graph in memory, refreshed to the store's version at each recall.
    graph: RwLock<Arc<Graph>>,
    /// Nodes patched into `graph` since it was last read from or written to the graph cache
    /// file: past [`GRAPH_FILE_REWRITE_PATCHED`] the file is written again.
    graph_patched: std::sync::atomic::AtomicUsize,
    /// Folded stats by the graph's ordinals, for scoring.
    ord_stats: RwLock<Arc<OrdStats>>,
    /// What feedback taught (query term -> notes), rebuilt when the feedback changes.
    learned: RwLock<Arc<Learned>>,
    /// The last recall of this process (qid, question): feedback without a question is about it.
    last_question: Mutex<Option<(String, String)>>,
    /// What recall shows of the notes it returned lately, for one store version.
    shown: RwLock<Arc<ShownCache>>,
    /// The store version the last recall at the current version read, with the store's change
    /// count read just before its transaction began and when (`None` when the count was
    /// unsettled).
    last_read: Mutex<Option<(u64, Version, Instant)>>,
    /// [`STORE_RECHECK_INTERVAL`], or what a test sets (one that checks no transaction is begun
    /// must not depend on how fast a loaded machine runs it).
    store_recheck: std::time::Duration,
    clock: Arc<dyn Clock>,
    events: EventLog,
    notices: Mutex<Vec<String>>,
    /// Recalls made under this memory's session in this process (shared with every other
    /// handle opened with that session: see [`session_counter`]).
    qid_counter: Arc<std::sync::atomic::AtomicU64>,
    /// Whether this process said that `events/` is read-only for it (said once).
    told_unrecorded: std::sync::atomic::AtomicBool,
    /// Set once the store is known to have been indexed (see [`Memory::ensure_indexed`]).
    indexed: std::sync::atomic::AtomicBool,
    /// Set when a note this process wrote could not be indexed (a full disk): the next call
    /// that reads the index indexes first (see [`Memory::ensure_indexed`]), so a server without
    /// a watcher does not answer without the note until a restart.
    index_pending: std::sync::atomic::AtomicBool,
    /// Notes changed since the index was written, as the last scan of a read-only index found
    /// them (see [`Memory::stale_notes`]).
    stale_notes: std::sync::atomic::AtomicUsize,
    /// The device and inode of the store file this memory opened (see
    /// [`Memory::store_replaced`]).
    store_file: Option<(u64, u64)>,
}

/// How to open a memory folder.
#[derive(Clone)]
pub struct OpenOptions {
    /// Session id for this process's events (default: a new one per process).
    pub session: Option<String>,
    /// When appended events become durable.
    pub sync: SyncPolicy,
    /// File system for the event log and snapshots (mnemon's own tests inject faults here).
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    pub fs: Arc<dyn Fs>,
    /// File system for the event log and snapshots.
    #[cfg(not(feature = "internals"))]
    pub(crate) fs: Arc<dyn Fs>,
    /// Event segment ages for compaction (also run at open when due).
    pub compact: crate::events::CompactPolicy,
    /// Whether the open compacts the event log when it is due (default). `mnemon compact`
    /// turns it off, so that its own run does the work and reports it.
    pub compact_at_open: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            session: std::env::var("MNEMON_SESSION")
                .ok()
                .filter(|s| !s.is_empty()),
            sync: SyncPolicy::default(),
            fs: Arc::new(RealFs),
            compact: crate::events::CompactPolicy::default(),
            compact_at_open: true,
        }
    }
}

impl OpenOptions {
    /// Record this process's events under `session` (several processes may share one; default:
    /// `MNEMON_SESSION`, or a new id per process).
    ///
    /// ```no_run
    /// use mnemon::events::SyncPolicy;
    /// use mnemon::{Memory, MemoryDir, OpenOptions};
    ///
    /// let opts = OpenOptions::default().with_session("agent-7").with_sync(SyncPolicy::Always);
    /// let memory = Memory::open_with(MemoryDir::at(".mnemon"), opts)?;
    /// # Ok::<(), mnemon::Error>(())
    /// ```
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// When appended events become durable.
    pub fn with_sync(mut self, sync: SyncPolicy) -> Self {
        self.sync = sync;
        self
    }

    /// Segment ages for compaction (run at open when due, and by [`Memory::compact`]).
    pub fn with_compact(mut self, compact: crate::events::CompactPolicy) -> Self {
        self.compact = compact;
        self
    }
}

/// A recall's results and floor report.
type Found = (Vec<recall::Hit>, recall::FloorReport);

/// A user-given id must be a valid id (never a path outside `memory/`).
fn check_id(id: &str) -> Result<()> {
    notes::validate_id(id).map_err(|r| Error::InvalidArgument {
        what: "id",
        message: format!("{}: {r}", notes::ShownId(id)),
    })
}

/// The recall counter of `session` in this process, shared by every handle open with it: two
/// handles given one session (two `Memory.open(..., session=...)` in one Python process) would
/// otherwise each count from 0 and name two recalls alike.
fn session_counter(session: &str) -> Arc<std::sync::atomic::AtomicU64> {
    static COUNTERS: std::sync::OnceLock<Mutex<SessionCounters>> = std::sync::OnceLock::new();
    session_counter_in(COUNTERS.get_or_init(Mutex::default), session)
}

type SessionCounters = std::collections::HashMap<String, Arc<std::sync::atomic::AtomicU64>>;

/// [`session_counter`] in `counters`. The lock is held only for a lookup: one still held after
/// [`SESSION_COUNTER_WAIT`] was held at a fork by a thread of the parent (Python's `os.fork`
/// while another thread opened a memory) and is never released in this process. The handle
/// then counts on its own: its qids still differ from the parent's, which name its pid.
fn session_counter_in(
    counters: &Mutex<SessionCounters>,
    session: &str,
) -> Arc<std::sync::atomic::AtomicU64> {
    let started = Instant::now();
    let mut counters = loop {
        match counters.try_lock() {
            Ok(c) => break c,
            Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock)
                if started.elapsed() < SESSION_COUNTER_WAIT =>
            {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                return Arc::new(std::sync::atomic::AtomicU64::new(0));
            }
        }
    };
    // A session opened again after its handles closed counts on. Past a bound, the sessions no
    // handle holds are forgotten: made-up ones are never opened again.
    if counters.len() >= MAX_SESSION_COUNTERS {
        counters.retain(|_, c| Arc::strong_count(c) > 1);
    }
    counters
        .entry(session.to_string())
        .or_insert_with(|| Arc::new(std::sync::atomic::AtomicU64::new(0)))
        .clone()
}

/// Sessions whose recall counts a process keeps once no handle holds them (see
/// [`session_counter`]).
const MAX_SESSION_COUNTERS: usize = 4096;

/// How long opening waits for [`session_counter`]'s lock before counting alone.
const SESSION_COUNTER_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

impl Memory {
    /// Create a memory folder at `root` (idempotent) and open it.
    pub fn init(root: impl Into<std::path::PathBuf>) -> Result<Memory> {
        let dir = MemoryDir::init(root)?;
        Memory::open_dir(dir)
    }

    /// Open the memory folder at `root` (the folder holding `memory/`).
    pub fn open(root: impl Into<std::path::PathBuf>) -> Result<Memory> {
        Memory::open_dir(MemoryDir::at(root))
    }

    /// Open an already located memory folder with default options.
    pub fn open_dir(dir: MemoryDir) -> Result<Memory> {
        Memory::open_with(dir, OpenOptions::default())
    }

    /// Open an already located memory folder.
    pub fn open_with(dir: MemoryDir, opts: OpenOptions) -> Result<Memory> {
        // Checked before anything is made: a holder opening the folder again after it was
        // removed or moved (serve, Python) would otherwise make `events/` and `index/` where
        // the user removed everything.
        if !dir.memory().is_dir() {
            return Err(Error::not_a_memory_folder(dir.root().to_path_buf()));
        }
        let mut notices = Vec::new();
        dir.check_contained()?;
        for sub in [dir.events(), dir.index()] {
            std::fs::create_dir_all(&sub).map_err(|e| Error::io("create folder", &sub, e))?;
        }
        if let Err(e) = dir.ensure_gitignore() {
            notices.push(format!("could not update .gitignore: {e}"));
        }
        let (store, rebuilt) = Store::open(&dir.index())?;
        let store_file = crate::fs::file_identity(&dir.store_file());
        notices.extend(rebuilt);
        let read_only = store.read_only();
        match read_only {
            // (A read-only store has no change count by design: nothing to say.)
            Some(why) => notices.push(format!(
                "the index store {} is read-only for this process ({}{}): the index is used as \
                 it was last written; `mnemon index` brings it up to date where it is writable",
                store.path().display(),
                std::io::Error::from(why),
                match why {
                    std::io::ErrorKind::PermissionDenied => {
                        "; check its owner, mode and attributes (ls -l, lsattr)"
                    }
                    _ => "",
                }
            )),
            None => notices.extend(store.change_seq_problem().map(ToString::to_string)),
        }
        let events = EventLog::open(opts.fs, dir.events(), dir.index(), opts.session, opts.sync)?;
        let now_ms = SystemClock.now_ms();
        if opts.compact_at_open
            && read_only.is_none()
            && events.compaction_due(opts.compact, now_ms)
        {
            match events.compact(opts.compact, now_ms) {
                Ok(r) if !r.compressed.is_empty() || !r.archived.is_empty() => {
                    notices.push(format!(
                        "compacted the event log: {} compressed, {} archived",
                        r.compressed.len(),
                        r.archived.len()
                    ))
                }
                Ok(_) => {}
                Err(e) => notices.push(format!("event log compaction failed: {e}")),
            }
        }
        notices.extend(events.take_notices());
        let qid_counter = session_counter(&events.session());
        let memory = Memory {
            dir,
            store,
            tokenizer: Tokenizer::new(),
            lexical: RwLock::new(Arc::new(LexicalIndex::empty())),
            lexical_stamp: Mutex::new(None),
            lexical_checked_at: Mutex::new(None),
            graph: RwLock::new(Arc::new(Graph::default())),
            graph_patched: std::sync::atomic::AtomicUsize::new(0),
            ord_stats: RwLock::new(Arc::new(OrdStats::default())),
            learned: RwLock::new(Arc::new(Learned::default())),
            last_question: Mutex::new(None),
            shown: RwLock::new(Arc::new(ShownCache::new(Version::default()))),
            last_read: Mutex::new(None),
            store_recheck: STORE_RECHECK_INTERVAL,
            clock: Arc::new(SystemClock),
            events,
            notices: Mutex::new(notices),
            qid_counter,
            told_unrecorded: std::sync::atomic::AtomicBool::new(false),
            indexed: std::sync::atomic::AtomicBool::new(false),
            stale_notes: std::sync::atomic::AtomicUsize::new(0),
            index_pending: std::sync::atomic::AtomicBool::new(false),
            store_file,
        };
        if let Some(n) = memory.load_lexical()? {
            memory.notice(n);
        }
        Ok(memory)
    }

    /// Reuse the store version a recall read for up to `interval` while the change count is
    /// unmoved, instead of [`STORE_RECHECK_INTERVAL`].
    #[cfg(test)]
    pub(crate) fn with_store_recheck(mut self, interval: std::time::Duration) -> Self {
        self.store_recheck = interval;
        self
    }

    /// Use `clock` for recency and TTL (tests, replays), and to date the events recorded from
    /// now on (a use is recent as of `clock`'s time, not the system's).
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self.events.stamp_with(self.clock.clone());
        self
    }

    /// The in-memory graph at store version `v` (patched from the store's change log through
    /// `view`, or loaded whole the first time; `view` begins its transaction only then).
    fn graph(&self, view: &LazyReader<'_>, v: Version) -> Result<Arc<Graph>> {
        let poisoned = || Error::CachePoisoned { what: "graph" };
        // Equal, or another thread already moved it past this reader: good enough.
        let covers = |g: &Graph| {
            let have = g.version();
            have.epoch == v.epoch && have.generation >= v.generation && !g.is_empty()
        };
        {
            let g = self.graph.read().map_err(|_| poisoned())?;
            if covers(&g) {
                return Ok(g.clone());
            }
        }
        let mut w = self.graph.write().map_err(|_| poisoned())?;
        if covers(&w) {
            return Ok(w.clone());
        }
        let g = Arc::make_mut(&mut w);
        let index_dir = self.dir.index();
        if g.is_empty() {
            // A process's first recall: the graph another process kept, if it is of this store.
            match graph::file::read(&index_dir) {
                Ok(Some(kept)) if kept.version().epoch == v.epoch => *g = kept,
                Ok(_) => {}
                Err(e) => self.notice(format!("{e}; the graph is loaded from the store")),
            }
            self.graph_patched.store(0, Ordering::Relaxed);
            if covers(g) {
                return Ok(w.clone());
            }
        }
        let patched = match g.refresh(view.get()?.0)? {
            Refreshed::Unchanged => 0,
            Refreshed::Patched(n) => self.graph_patched.fetch_add(n, Ordering::Relaxed) + n,
            Refreshed::Loaded => usize::MAX,
        };
        let g = w.clone();
        drop(w);
        // An empty graph is never kept: it is as quick to load, and `covers` never holds for
        // it, so every recall of an empty memory would write the file again.
        if patched >= GRAPH_FILE_REWRITE_PATCHED && !g.is_empty() {
            self.graph_patched.store(0, Ordering::Relaxed);
            // Outside the lock: other recalls need not wait for the file. A cache: a folder that
            // cannot take it only loses the next process's head start.
            let _ = graph::file::write(&RealFs, &index_dir, &g);
        }
        Ok(g)
    }

    /// The shown-records cache of store version `v` (a new, empty one when `v` is not the
    /// version of the one kept).
    fn shown(&self, v: Version) -> Result<Arc<ShownCache>> {
        let poisoned = || Error::CachePoisoned {
            what: "shown records",
        };
        {
            let c = self.shown.read().map_err(|_| poisoned())?;
            if c.version() == v {
                return Ok(c.clone());
            }
        }
        let mut w = self.shown.write().map_err(|_| poisoned())?;
        if w.version() != v {
            *w = Arc::new(ShownCache::new(v));
        }
        Ok(w.clone())
    }

    /// The folded stats keyed by `graph`'s ordinals (patched from the stats change log), and
    /// what feedback taught by query term, both current with the folded events (one view).
    fn stats_tables(&self, graph: &Graph) -> Result<(Arc<OrdStats>, Arc<Learned>)> {
        let poisoned = || Error::CachePoisoned { what: "stats" };
        let Some(view) = self.events.view() else {
            return Err(poisoned());
        };
        let by_ord = {
            let t = self.ord_stats.read().map_err(|_| poisoned())?;
            t.is_current(graph, &view).then(|| t.clone())
        };
        let by_ord = match by_ord {
            Some(t) => t,
            None => {
                let mut w = self.ord_stats.write().map_err(|_| poisoned())?;
                Arc::make_mut(&mut w).refresh(graph, &view);
                w.clone()
            }
        };
        let learned = {
            let t = self.learned.read().map_err(|_| poisoned())?;
            t.is_current(&view).then(|| t.clone())
        };
        let learned = match learned {
            Some(t) => t,
            None => {
                let mut w = self.learned.write().map_err(|_| poisoned())?;
                Arc::make_mut(&mut w).refresh(&view, &self.tokenizer);
                w.clone()
            }
        };
        Ok((by_ord, learned))
    }

    fn write_lock(&self) -> Result<crate::store::WriteLock> {
        self.store.write_lock()
    }

    /// The folder this memory lives in.
    pub fn dir(&self) -> &MemoryDir {
        &self.dir
    }

    /// Continue `previous`'s session in this memory (a server that reopened its folder after
    /// repairing it): recall ids go on from where `previous` stopped, so none repeats, and
    /// feedback without a question still means the last recall of either.
    pub fn continue_session(&self, previous: &Memory) {
        use std::sync::atomic::Ordering;
        self.qid_counter.fetch_max(
            previous.qid_counter.load(Ordering::SeqCst),
            Ordering::SeqCst,
        );
        let last = previous.last_question.lock().ok().and_then(|l| l.clone());
        if let (Some(last), Ok(mut mine)) = (last, self.last_question.lock())
            && mine.is_none()
        {
            *mine = Some(last);
        }
    }

    /// Why the index store this memory opened is no longer the folder's (`index/` deleted, as
    /// README allows at any time, or the store rebuilt by another process's repair) or no longer
    /// usable (an I/O error, a full disk, met while writing it: redb refuses the handle from
    /// then on), or `None` while it still is. Such a memory reads and writes a file no other
    /// process sees, or none at all: a holder that lives long (a server, a Python handle) opens
    /// the folder again. One `stat`.
    pub fn store_replaced(&self) -> Option<String> {
        // A handle redb refuses after an I/O error (a full disk) is as good as gone: the same
        // remedy, opening the folder again, makes it read and write again once space is freed.
        if let Some(why) = self.store_unusable() {
            return Some(why);
        }
        let path = self.dir.store_file();
        let now = crate::fs::file_identity(&path);
        (self.store_file.is_some() && now != self.store_file).then(|| match now {
            None => format!("the index store {} was removed", path.display()),
            Some(_) => format!("the index store {} was replaced", path.display()),
        })
    }

    /// How many notes changed since the index was written that recall answers as indexed: this
    /// process may only read the index ([`Memory::read_only`]) and its last
    /// [`Memory::index_if_writable`] found them. 0 for a writable index. A server puts it in its
    /// answers (the notice at open reaches no agent).
    pub fn stale_notes(&self) -> usize {
        self.stale_notes.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Why the index store this memory opened can no longer be read or written through it, if
    /// it cannot: redb met an I/O error on the handle (a full disk while a change committed)
    /// and refuses every later operation, space freed or not. The file is sound; the folder
    /// opened again reads and writes it (no rebuild). [`Memory::store_replaced`] says it too.
    pub fn store_unusable(&self) -> Option<String> {
        self.store.unusable()
    }

    /// The session id this process records its events under (`OpenOptions::with_session`, or
    /// one made up at open).
    pub fn session(&self) -> std::sync::Arc<str> {
        self.events.session()
    }

    /// Messages about repairs made while opening or since (rebuilt index, a damaged graph
    /// cache, an event segment removed under this process, ...), for the caller to show: a
    /// long-running holder (a server) takes them after each call.
    pub fn take_notices(&self) -> Vec<String> {
        let mut notices = self
            .notices
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        notices.extend(self.events.take_notices());
        notices
    }

    fn notice(&self, n: String) {
        if let Ok(mut v) = self.notices.lock() {
            v.push(n);
        }
    }

    /// Why this process may read but not write the index (its files' permissions, a read-only
    /// file system), if so. Such a memory answers from the index as it was last written, and
    /// what writes the index (`index`, `write`, `doctor`) says why it cannot. (Recalls are
    /// recorded when `events/` is writable, and answered unrecorded when it is not.)
    pub fn read_only(&self) -> Option<std::io::ErrorKind> {
        self.store.read_only()
    }

    /// Index `memory/` when the store was never indexed but notes exist (`index/` deleted, or a
    /// folder that came with its notes): a command that looks a note up must not answer "no
    /// note" because nobody ran `index` yet. One atomic load once the store is known indexed.
    fn ensure_indexed(&self) -> Result<()> {
        use std::sync::atomic::Ordering;
        if self.index_pending.load(Ordering::Acquire) {
            // Answered without the note while it fails (the failure said why), with it once
            // the cause is gone.
            match self.index() {
                Ok(_) => self.index_pending.store(false, Ordering::Release),
                Err(e) => self.notice(format!(
                    "a note this process wrote is still not indexed ({e}); answers leave it out \
                     until indexing it succeeds"
                )),
            }
        }
        if self.indexed.load(Ordering::Acquire) {
            return Ok(());
        }
        let unindexed = self.store.read()?.manifest_len()? == 0;
        let memory = self.dir.memory();
        let has_notes = std::fs::read_dir(&memory)
            .map_err(|e| Error::io("read folder", &memory, e))?
            .next()
            .is_some();
        if unindexed && has_notes {
            let report = self.index()?;
            self.notice(format!(
                "the index held no notes: indexed {} from {}",
                report.notes,
                memory.display()
            ));
        }
        self.indexed.store(true, Ordering::Release);
        Ok(())
    }

    /// The part of question `text` recall reads: up to [`crate::recall::MAX_QUERY_BYTES`]
    /// (see [`crate::recall::readable_part`]) and up to its
    /// [`crate::index::tokenize::MAX_QUERY_TERMS`]th distinct term.
    pub(crate) fn question_read<'t>(&self, text: &'t str) -> &'t str {
        let read = crate::recall::readable_part(text);
        match self.tokenizer.query_terms(read).read_to {
            Some(n) => read.get(..n).unwrap_or(read),
            None => read,
        }
    }

    /// Answer a query: lexical hits and anchors, the typed-graph walk, scored by the policy.
    pub fn recall(&self, q: &Query) -> Result<Recall> {
        let started = Instant::now();
        crate::args::query(q)?;
        // An anchor no id can be (`../x`) is a bad argument, as in `show`, not a note missing.
        for a in &q.anchors {
            notes::validate_id(a).map_err(|r| Error::InvalidArgument {
                what: "anchors",
                message: format!("{}: {r}", notes::ShownId(a)),
            })?;
        }
        self.ensure_indexed()?;
        // An anchor typed in another Unicode normal form than its file name names that note.
        let resolved;
        let q = if q.anchors.iter().any(|a| !a.is_ascii()) {
            let reader = self.store.read()?;
            let mut with_stored = q.clone();
            for a in &mut with_stored.anchors {
                if let Some(id) = reader.stored_id(a)? {
                    *a = id;
                }
            }
            resolved = with_stored;
            &resolved
        } else {
            q
        };
        // Other sessions' events become visible within STATS_REFRESH_INTERVAL.
        self.events.refresh_if_stale(STATS_REFRESH_INTERVAL)?;
        // An anchor the graph lacks is told as `show` tells it (removed, unreadable, ...).
        let why = |e: Error| match e {
            Error::UnknownNode { id, .. } => self.not_indexed(&id),
            e => e,
        };
        let (results, floor) = match self.recall_unchanged(q).map_err(why)? {
            Some(found) => found,
            None => self.recall_current(q).map_err(why)?,
        };
        let n = self
            .qid_counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let recall = Recall {
            qid: self.events.query_id(n),
            results,
            floor,
            latency_us,
        };
        if !q.record {
            return Ok(recall);
        }
        // The question as recall read it (a longer one is cut: see `Memory::question_read`) is
        // what is recorded and what feedback learns from.
        let read = recall
            .floor
            .read_bytes
            .and_then(|n| q.text.get(..n))
            .unwrap_or(&q.text);
        // Feedback that names no question is about this recall.
        if let Ok(mut last) = self.last_question.lock() {
            *last = Some((recall.qid.clone(), read.to_string()));
        }
        // One QueryEvent and one RecallHit per returned note, flushed to the OS before returning
        // (one batch: recorded whole or not at all).
        let mut events = Vec::with_capacity(recall.results.len() + 1);
        events.push(EventKind::Query {
            qid: recall.qid.clone(),
            query: read.to_string(),
            anchors: q.anchors.clone(),
            result_count: recall.results.len() as u32,
            latency_us,
            caller: q.caller.clone(),
        });
        // Fetching notes by id and nothing around them (anchors at depth 0, no question) is
        // reading them: a use, as if the agent had said so. Written before the hits: a batch
        // ends with its last RecallHit, so readers can tell a complete one.
        if q.depth == 0 && q.text.trim().is_empty() && !q.anchors.is_empty() {
            // One fetch is one use of each note, however often it was named.
            let mut used: Vec<String> = Vec::with_capacity(q.anchors.len());
            for a in &q.anchors {
                if !used.contains(a) {
                    used.push(a.clone());
                }
            }
            events.push(EventKind::Feedback {
                qid: recall.qid.clone(),
                query: String::new(),
                used,
                wrong: Vec::new(),
            });
        }
        for (i, h) in recall.results.iter().enumerate() {
            events.push(EventKind::RecallHit {
                qid: recall.qid.clone(),
                node: h.id.clone(),
                rank: i as u32 + 1,
                score: h.score,
                source: match h.source {
                    recall::Source::Direct => HitSource::Direct,
                    recall::Source::Neighbor => HitSource::Neighbor,
                    recall::Source::CoOccur => HitSource::CoOccur,
                },
            });
        }
        match self.events.append(events) {
            // A memory this process may only read (a read-only mount, another user's folder)
            // still answers: the recall is not recorded, and the first such recall says so.
            // So does one whose events/ became a file while it ran (at open it is refused).
            Err(Error::EventLog { cause: Some(k), .. })
                if matches!(
                    k,
                    std::io::ErrorKind::PermissionDenied
                        | std::io::ErrorKind::ReadOnlyFilesystem
                        | std::io::ErrorKind::NotADirectory
                ) =>
            {
                use std::sync::atomic::Ordering;
                if !self.told_unrecorded.swap(true, Ordering::Relaxed) {
                    let events = self.dir.events();
                    self.notice(if k == std::io::ErrorKind::NotADirectory {
                        format!(
                            "{} is not a folder: recalls are answered and not recorded; move \
                             that file away and mnemon makes the folder again",
                            events.display()
                        )
                    } else {
                        format!(
                            "{} is read-only for this process ({}): recalls are answered and \
                             not recorded",
                            events.display(),
                            std::io::Error::from(k)
                        )
                    });
                }
                Ok(recall)
            }
            Err(e) => Err(e),
            Ok(()) => Ok(recall),
        }
    }

    /// A recall at the store version the last recall read, when the store's change count shows
    /// that no process has written it since (two loads from a mapped page) and that read is
    /// younger than [`STORE_RECHECK_INTERVAL`] (`store_recheck`): no read transaction is begun unless a record must
    /// be read. `None` when the count moved, is unsettled or unusable, the read is older, or a
    /// record read found the store at another version (the caller then recalls at the current
    /// version).
    fn recall_unchanged(&self, q: &Query) -> Result<Option<Found>> {
        let Some(count) = self.store.settled_change_count() else {
            return Ok(None);
        };
        let last = self.last_read.lock().ok().and_then(|l| *l);
        let Some((_, version, _)) =
            last.filter(|(c, _, at)| *c == count && at.elapsed() < self.store_recheck)
        else {
            return Ok(None);
        };
        let view = LazyReader::deferred(&self.store, version);
        let results = self.recall_at(q, &view)?;
        Ok((!view.moved()).then_some(results))
    }

    /// A recall at the store's current version (one read transaction), remembered with the
    /// change count read before it began.
    fn recall_current(&self, q: &Query) -> Result<Found> {
        let count = self.store.settled_change_count();
        let at = Instant::now();
        let reader = self.store.read()?;
        let version = reader.version()?;
        if let Ok(mut l) = self.last_read.lock() {
            *l = count.map(|c| (c, version, at));
        }
        self.recall_at(q, &LazyReader::begun(reader, version))
    }

    /// The recall itself, against the lexical index, graph and records of `view`'s version.
    fn recall_at(&self, q: &Query, view: &LazyReader<'_>) -> Result<Found> {
        let version = view.version();
        let lex = self.lexical_at(version)?;
        let graph = self.graph(view, version)?;
        let (by_ord, learned) = self.stats_tables(&graph)?;
        let stats = |o: u32| by_ord.get(o);
        // Records read at this reader's version are kept only for the graph of that version.
        let shown = if graph.version() == version {
            self.shown(version)?
        } else {
            Arc::new(ShownCache::new(version))
        };
        // A note's text, read as the scan reads it (never a file outside memory/), for the check
        // of whether a partial answer holds the question's words together; a note that cannot
        // be read or is longer than the check reads gives none.
        let root = std::sync::OnceLock::new();
        let read_note = |id: &str| -> Option<String> {
            let root = root
                .get_or_init(|| self.dir.memory().canonicalize().ok())
                .as_ref()?;
            let (file, _) = notes::open_inside(root, &format!("{id}.md")).ok()?;
            let (bytes, more) =
                notes::read_bounded(file, recall::passages::MAX_PASSAGE_READ_BYTES).ok()?;
            if more {
                return None;
            }
            Some(notes::decode_note(&bytes).0.into_owned())
        };
        recall::engine::run(
            &lex,
            &graph,
            view,
            &shown,
            &self.tokenizer,
            &learned,
            q,
            self.clock.now_s(),
            &stats,
            &read_note,
        )
    }

    /// The event log (sessions, snapshots, refresh): inside the engine, and for mnemon's own
    /// tests with the `internals` feature.
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The event log (sessions, snapshots, refresh).
    #[cfg(not(feature = "internals"))]
    pub(crate) fn events(&self) -> &EventLog {
        &self.events
    }
}

#[cfg(test)]
mod tests;
