//! A memory that heals its index store while a long-running command (`serve`, `watch`) holds it.
//!
//! A one-shot command that finds the store damaged moves it aside, rebuilds it from the notes
//! and runs again (`cli::dispatch_repairing`). A server cannot start over: it keeps one open
//! [`Memory`] for the whole session, so damage that appears after it started (another program
//! writing into `index/graph.redb`, a disk that returns bad pages) would fail every later call
//! until someone restarted it. [`LiveMemory::with`] runs an operation and, when it fails on
//! store damage, moves the store aside, opens the folder again (a new store, indexed from the
//! notes) and runs the operation once more on it. A panic (redb and fst panic on some damaged
//! bytes) first opens the folder again without moving anything, since opening checks every
//! derived file and rebuilds the damaged ones; a second failure rebuilds the store. Notes and
//! events are never touched; the log line says what was repaired and where a damaged file went.
//!
//! A server answers its client's handshake before the notes are indexed
//! ([`LiveMemory::index_in_background`]): indexing a large memory, or waiting for another
//! process's write lock, can outlast an MCP client's start-up timeout. Operations wait for that
//! first index, so no answer comes from notes not yet read.

use mnemon::{Memory, MemoryDir, OpenOptions, Result};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// How often a caller looks whether the first index has ended.
const FIRST_INDEX_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Where a heal is reported (a server's stderr, a test's collector).
pub type Log = dyn Fn(String) + Send + Sync;

/// The memory a long-running command serves, replaced by a rebuilt one when its store is found
/// damaged.
pub struct LiveMemory {
    current: RwLock<Arc<Memory>>,
    dir: MemoryDir,
    options: OpenOptions,
    /// One heal at a time: callers that fail on the same damaged memory wait for the first
    /// heal and then use its result.
    healing: Mutex<()>,
    /// The store file `current` opened (device and inode), to tell a store still damaged from
    /// one another process has rebuilt since.
    store_file: Mutex<Option<(u64, u64)>>,
    /// Whether the first index of the notes runs in the background; operations wait for it.
    indexing: AtomicBool,
    /// Whether that first index failed (a full disk): the watcher runs it again until it
    /// succeeds ([`LiveMemory::take_index_failed`]).
    index_failed: AtomicBool,
    log: Box<Log>,
}

impl LiveMemory {
    /// Serve `memory`; a rebuilt memory is opened with `options` and this memory's session id,
    /// so events recorded after a heal stay in the session.
    pub fn new(memory: Memory, options: OpenOptions, log: Box<Log>) -> LiveMemory {
        let options = options.with_session(memory.session().to_string());
        let store_file = mnemon::folder::file_identity(&memory.dir().store_file());
        LiveMemory {
            dir: memory.dir().clone(),
            current: RwLock::new(Arc::new(memory)),
            options,
            healing: Mutex::new(()),
            store_file: Mutex::new(store_file),
            indexing: AtomicBool::new(false),
            index_failed: AtomicBool::new(false),
            log,
        }
    }

    /// Index the notes on a thread of their own (healing the store as [`LiveMemory::with`]
    /// does); operations started meanwhile wait until it has ended. A failed index is logged,
    /// and the memory answers from its index as it was.
    pub fn index_in_background(self: &Arc<Self>) {
        self.indexing.store(true, Ordering::Release);
        let live = self.clone();
        std::thread::spawn(move || {
            // Marks the index ended even if it panics, so no caller waits for ever.
            struct Done<'a>(&'a LiveMemory);
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    self.0.indexing.store(false, Ordering::Release);
                }
            }
            let _done = Done(&live);
            if let Err(e) = live.run_then(|m| m.index_if_writable(), |_| None) {
                (live.log)(format!(
                    "indexing the notes failed: {e}; answering from the index as it was"
                ));
                live.index_failed.store(true, Ordering::Release);
            }
        });
    }

    /// Whether the first index failed since this was last asked (the watcher then indexes the
    /// notes again, until it succeeds).
    pub fn take_index_failed(&self) -> bool {
        self.index_failed.swap(false, Ordering::AcqRel)
    }

    /// Whether the first index of the notes is still running.
    pub fn indexing(&self) -> bool {
        self.indexing.load(Ordering::Acquire)
    }

    /// Resolve once the first index of the notes has ended, without blocking the async
    /// runtime: a server's tool calls wait here, so the runtime still sees a stop signal.
    pub async fn first_index_done(&self) {
        while self.indexing() {
            tokio::time::sleep(FIRST_INDEX_POLL).await;
        }
    }

    /// Block until the first index of the notes has ended.
    fn wait_for_first_index(&self) {
        while self.indexing() {
            std::thread::sleep(FIRST_INDEX_POLL);
        }
    }

    /// The memory folder.
    pub fn dir(&self) -> &MemoryDir {
        &self.dir
    }

    /// The memory as it is now.
    pub fn get(&self) -> Arc<Memory> {
        match self.current.read() {
            Ok(m) => m.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Run `op` on the memory. When it fails because the index store is damaged, heal the
    /// store and run `op` once more: its result is the answer. A panic (redb and fst panic on
    /// some damaged bytes, and any index file may hold them) first opens the folder again,
    /// which checks the derived files and rebuilds the damaged ones; only when `op` fails again
    /// is the store moved aside. A panic on the rebuilt memory is a bug and goes on unwinding.
    pub fn with<T>(&self, op: impl Fn(&Memory) -> Result<T>) -> Result<T> {
        self.with_then(op, |_| None)
    }

    /// [`LiveMemory::with`] for an operation that may have done part of its work before it met
    /// the damage (a note written, then its indexing failed): after each repair, `after_heal`
    /// answers in its place (`Some`) or lets `op` run again (`None`).
    pub fn with_then<T>(
        &self,
        op: impl Fn(&Memory) -> Result<T>,
        after_heal: impl Fn(&Memory) -> Option<Result<T>>,
    ) -> Result<T> {
        self.wait_for_first_index();
        self.run_then(op, after_heal)
    }

    /// [`LiveMemory::with_then`] without waiting for the first index.
    fn run_then<T>(
        &self,
        op: impl Fn(&Memory) -> Result<T>,
        after_heal: impl Fn(&Memory) -> Option<Result<T>>,
    ) -> Result<T> {
        let mut memory = self.get();
        // `index/` deleted (it is derived: README says it may be at any time), or the store
        // replaced by another process's repair: this memory writes to and reads a file no one
        // else sees. Or its store handle met an I/O error (a full disk while it committed),
        // after which redb refuses every call on it. Opened again first, its notes indexed
        // into the new store (or the same one).
        if let Some(gone) = self.store_moved().or_else(|| memory.store_unusable()) {
            memory = self.heal(&memory, &Failure::Store(gone), false)?;
        }
        let mut failure = match attempt(&op, &memory) {
            Ok(result) => {
                for n in memory.take_notices() {
                    (self.log)(n);
                }
                return result;
            }
            Err(failure) => failure,
        };
        if let Failure::Panic(_) = failure {
            let reopened = self.heal(&memory, &failure, false)?;
            if let Some(answer) = after_heal(&reopened) {
                return answer;
            }
            match attempt(&op, &reopened) {
                Ok(result) => return result,
                Err(again) => (memory, failure) = (reopened, again),
            }
        }
        let healed = self.heal(&memory, &failure, true)?;
        if let Some(answer) = after_heal(&healed) {
            return answer;
        }
        op(&healed)
    }

    /// Why the store this memory opened is no longer the folder's: its file removed or replaced
    /// (`None`: it is, or its identity is unknown).
    fn store_moved(&self) -> Option<String> {
        let recorded = *self.store_file.lock().unwrap_or_else(|p| p.into_inner());
        let path = self.dir.store_file();
        let now = mnemon::folder::file_identity(&path);
        (recorded.is_some() && now != recorded).then(|| {
            if now.is_none() {
                format!("the index store {} was removed", path.display())
            } else {
                format!("the index store {} was replaced", path.display())
            }
        })
    }

    /// Replace `damaged` (unless another caller already did) by the folder opened again, its
    /// notes indexed. With `rebuild`, the store is first moved aside, so the new one is built
    /// from the notes; when the store file is no longer the one `damaged` opened (another
    /// process found the damage first and rebuilt it), that new store is opened as it is.
    fn heal(&self, damaged: &Arc<Memory>, failure: &Failure, rebuild: bool) -> Result<Arc<Memory>> {
        let _one_at_a_time = self.healing.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.get();
        if !Arc::ptr_eq(&now, damaged) {
            return Ok(now);
        }
        let path = self.dir.store_file();
        let mut recorded = self.store_file.lock().unwrap_or_else(|p| p.into_inner());
        let replaced = recorded.is_some() && mnemon::folder::file_identity(&path) != *recorded;
        let aside = if rebuild && !replaced {
            Some(Memory::discard_store(&self.dir)?)
        } else {
            None
        };
        let memory = Memory::open_with(self.dir.clone(), self.options.clone())?;
        for n in memory.take_notices() {
            (self.log)(n);
        }
        memory.continue_session(damaged);
        memory.index()?;
        // Only a store indexed whole is recorded: after a failed index (a full disk), the next
        // heal opens the new store as it is and indexes it again instead of moving it aside.
        *recorded = mnemon::folder::file_identity(&path);
        (self.log)(match (aside, rebuild, failure) {
            (Some(aside), _, _) => format!(
                "the index store was damaged ({failure}); moved it to {} and rebuilt it from the \
                 notes",
                aside.display()
            ),
            (None, true, _) => format!(
                "the index store was damaged ({failure}); {} had already been replaced (by \
                 another process, or a repair that did not finish): opened it and indexed the \
                 notes into it",
                path.display()
            ),
            (None, false, Failure::Panic(p)) => format!(
                "a read of the index panicked ({p}); opened the memory folder again, its index \
                 files checked (and rebuilt where damaged)"
            ),
            (None, false, Failure::Store(e)) => {
                format!("opened the memory folder again after: {e}")
            }
        });
        let memory = Arc::new(memory);
        match self.current.write() {
            Ok(mut m) => *m = memory.clone(),
            Err(poisoned) => *poisoned.into_inner() = memory.clone(),
        }
        Ok(memory)
    }
}

/// Why an operation needs a repair.
enum Failure {
    /// The store reported damage (the error's text).
    Store(String),
    /// The operation panicked (the panic's message).
    Panic(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Store(e) => f.write_str(e),
            Failure::Panic(p) => write!(f, "a read of it panicked: {p}"),
        }
    }
}

/// `op`'s result, or the failure a repair may cure.
fn attempt<T>(
    op: &impl Fn(&Memory) -> Result<T>,
    memory: &Memory,
) -> std::result::Result<Result<T>, Failure> {
    match catch_unwind(AssertUnwindSafe(|| op(memory))) {
        Ok(Err(e)) if mnemon::is_store_damage(&e) => Err(Failure::Store(e.to_string())),
        Ok(result) => Ok(result),
        Err(panic) => Err(Failure::Panic(crate::cli::panic_note::message(&*panic))),
    }
}
