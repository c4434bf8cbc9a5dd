//! `mnemon.Memory`: the library's `Memory` facade for Python. Every engine call runs with the
//! interpreter released (`Python::detach`), so one `Memory` serves several Python threads at
//! once; arguments are checked by the library (`mnemon::args`), so they are refused with the
//! CLI's messages.

use crate::convert::{Int, Strings, Text};
use crate::errors::{self, IntoPy};
use crate::reports::{
    CoreView, DoctorReport, FeedbackReport, IndexReport, NodeStatsView, NodeView, Recall, hit_list,
};
use mnemon::args;
use mnemon::recall::Query;
use mnemon::{MemoryDir, OpenOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// Recorded as the caller of recalls made from Python (the `caller` of their Query events).
const CALLER: &str = "python";

/// An open memory folder: notes in ``memory/``, the event log in ``events/``, the derived index
/// in ``index/``.
///
/// Open one with :meth:`Memory.open` (an existing folder) or :meth:`Memory.init` (creates it),
/// then :meth:`index` the notes and :meth:`recall`. Use it as a context manager, or call
/// :meth:`close`: events are handed to the OS as they are written and made durable (fsync) when
/// the memory is closed. Any call on a closed memory raises :class:`mnemon.Error`.
///
/// One ``Memory`` may be shared by several Python threads: engine calls release the GIL and run
/// in parallel. Several processes may open the same folder at once (the CLI, ``mnemon serve``,
/// other agents); each sees the others' notes and events.
///
/// A ``Memory`` inherited by a forked child (``os.fork()``, multiprocessing's ``fork`` start
/// method) opens its folder again at its first call in the child, with the same session (one
/// made up is made up anew, so the child's events are its own): a thread of the parent may have
/// held one of the handle's locks at the fork, and the child must not wait for it. What the
/// parent had open is left to the parent. Indexing runs there on worker threads of the child's
/// own (the engine's do not survive a fork).
///
/// ``index/`` is derived and may be deleted at any time, or rebuilt by another process: the handle
/// then opens the folder again (at its next call that writes the index, or within a second for
/// other calls, which meanwhile answer from the index as it was) and says so in :attr:`notices`.
///
/// Recalls, feedback and importance marks are recorded as events of this process's session:
/// ``session=...``, else the ``MNEMON_SESSION`` environment variable, else a new session id per
/// opened memory.
#[pyclass(frozen, module = "mnemon", name = "Memory")]
pub(crate) struct Memory {
    /// This process's state of the handle (see [`Memory::state`]): a `Box` made into a pointer,
    /// freed by `Drop` only. Replaced only in a forked child, which leaks the inherited one.
    state: AtomicPtr<State>,
    /// The folder as it was opened, for a forked child to open again.
    dir: MemoryDir,
    /// The session given at open (`session=`, else `MNEMON_SESSION`); `None` when it was made
    /// up, which a forked child then makes up anew, as the library does for its event log.
    session: Option<String>,
    /// `close` was called (here, or before the fork in the process this one was forked from).
    closed: AtomicBool,
}

/// What one process holds of a [`Memory`]. Its locks may be held by another thread at the
/// moment of an `os.fork()`; that thread does not exist in the child, so the child could wait
/// on them forever: a child never touches its parent's `State` (nor the engine in it, whose own
/// locks are as likely held), it opens the folder again into a `State` of its own.
struct State {
    /// The process this state was made in.
    pid: u32,
    /// `None` once closed. Calls clone the `Arc` and release the lock before the engine runs, so
    /// `close` never waits for a recall, and the engine closes when the last call returns.
    inner: RwLock<Option<Arc<mnemon::Memory>>>,
    /// What the engine said so far (at open, and after since: a segment removed under this
    /// process, a failed fsync), gathered when `notices` is read.
    notices: Mutex<Vec<String>>,
    /// One reopening at a time (see [`Memory::current`]).
    reopening: Mutex<()>,
    /// When this state was made, and when (ms after that) its store was last looked at.
    opened_at: Instant,
    store_checked_ms: AtomicU64,
}

impl State {
    fn new(engine: Option<mnemon::Memory>) -> State {
        let notices = engine
            .as_ref()
            .map(|m| m.take_notices())
            .unwrap_or_default();
        State {
            pid: std::process::id(),
            inner: RwLock::new(engine.map(Arc::new)),
            notices: Mutex::new(notices),
            reopening: Mutex::new(()),
            opened_at: Instant::now(),
            store_checked_ms: AtomicU64::new(0),
        }
    }

    /// The engine, `None` once closed.
    fn open_engine(&self) -> Option<Arc<mnemon::Memory>> {
        match self.inner.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Whether a second has passed since the store was last looked at (and now it is).
    fn store_check_due(&self) -> bool {
        let now_ms = self.opened_at.elapsed().as_millis() as u64;
        let last = self.store_checked_ms.load(Ordering::Relaxed);
        now_ms.saturating_sub(last) >= STORE_CHECK_EVERY_MS
            && self
                .store_checked_ms
                .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `Box::into_raw` and is freed nowhere else; `&mut self`
        // means no call is using it.
        let state = unsafe { Box::from_raw(*self.state.get_mut()) };
        if state.pid != std::process::id() {
            // The parent's, never used here: dropping its engine could wait on a lock that a
            // thread of the parent held at the fork.
            std::mem::forget(state);
            return;
        }
        let taken = match state.inner.write() {
            Ok(mut guard) => guard.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        // Collected without `close()`: nobody is left to read `notices`.
        if let Some(said) = taken.and_then(close_engine) {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "mnemon: {said}");
        }
    }
}

/// Close `engine` if this is its last holder (another one, a call still running, closes it
/// when it returns). redb writes the store's allocator state then, and panics there on a store
/// whose bytes were overwritten under the open handle: Python would get a `PanicException`
/// (which `except Exception` does not catch) from `close()`, `__exit__` or the garbage
/// collector. The store is derived from the notes: it is moved aside for the next open to
/// rebuild, and what happened is returned, to be told.
fn close_engine(engine: Arc<mnemon::Memory>) -> Option<String> {
    let engine = Arc::into_inner(engine)?;
    let dir = engine.dir().clone();
    let panic = catch_unwind(AssertUnwindSafe(|| drop(engine))).err()?;
    let why = panic_text(&*panic);
    Some(match mnemon::Memory::discard_store(&dir) {
        Ok(aside) => format!(
            "the index store turned out damaged when it was closed (redb: {why}); moved it to \
             {}: the next open rebuilds it from the notes",
            aside.display()
        ),
        Err(e) => format!(
            "the index store turned out damaged when it was closed (redb: {why}), and moving it \
             aside failed: {e}; run `mnemon doctor --fix` where the folder is writable"
        ),
    })
}

/// How often a reading call looks whether the store is still the folder's.
const STORE_CHECK_EVERY_MS: u64 = 1000;

/// The options a handle opens its folder with: the session given, else a new one.
fn options(session: Option<String>) -> OpenOptions {
    let opts = OpenOptions::default();
    match session {
        Some(s) => opts.with_session(s),
        None => opts,
    }
}

impl Memory {
    fn opened(py: Python<'_>, dir: MemoryDir, session: Option<String>) -> PyResult<Memory> {
        let opts = options(session);
        // As resolved (MNEMON_SESSION read now): a forked child opens with the same one.
        let session = opts.session.clone();
        let opened = dir.clone();
        let memory = py
            .detach(move || crate::on_live_threads(|| mnemon::Memory::open_with(opened, opts)))
            .py_err(py)?;
        Ok(Memory {
            state: AtomicPtr::new(Box::into_raw(Box::new(State::new(Some(memory))))),
            dir,
            session,
            closed: AtomicBool::new(false),
        })
    }

    /// The state as it is now: in a forked child not yet used, the parent's.
    fn loaded(&self) -> (*mut State, &State) {
        let current = self.state.load(Ordering::Acquire);
        // SAFETY: from `Box::into_raw`, freed only by `Drop`; a replaced one is leaked, so it
        // lives as long as `self`.
        (current, unsafe { &*current })
    }

    /// This process's state. In a process forked from the one that made the state (`os.fork`,
    /// multiprocessing's `fork` start method), the first call opens the folder again with the
    /// same session and options (a session made up is made up anew) and leaks the inherited
    /// state: see [`State`].
    fn state(&self, py: Python<'_>) -> PyResult<&State> {
        let pid = std::process::id();
        loop {
            let (current, state) = self.loaded();
            if state.pid == pid {
                return Ok(state);
            }
            let fresh = if self.closed.load(Ordering::Acquire) {
                State::new(None)
            } else {
                let dir = self.dir.clone();
                let opts = options(self.session.clone());
                let engine = py
                    .detach(move || crate::on_live_threads(|| mnemon::Memory::open_with(dir, opts)))
                    .py_err(py)?;
                State::new(Some(engine))
            };
            let fresh = Box::into_raw(Box::new(fresh));
            match self
                .state
                .compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // SAFETY: as above; `fresh` is now the handle's.
                Ok(_) => return Ok(unsafe { &*fresh }),
                Err(_) => {
                    // Another thread of this process opened it first: use that one.
                    // SAFETY: `fresh` was never shared.
                    let lost = unsafe { Box::from_raw(fresh) };
                    py.detach(move || drop(lost));
                }
            }
        }
    }

    /// The open engine, or `mnemon.Error` when closed.
    fn engine(&self, py: Python<'_>) -> PyResult<(&State, Arc<mnemon::Memory>)> {
        let state = self.state(py)?;
        match state.open_engine() {
            Some(engine) => Ok((state, engine)),
            None => Err(errors::plain(
                py,
                format!(
                    "this Memory ({}) is closed; open the folder again with mnemon.Memory.open",
                    self.dir.root().display()
                ),
            )),
        }
    }

    /// Run `f` on the engine with the interpreter released; its error as a Python exception.
    /// Whether the store is still the folder's is looked at once a second at most (a read of a
    /// store replaced meanwhile answers as the index was, as any process's read may).
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl Fn(&mnemon::Memory) -> mnemon::Result<T> + Send,
    ) -> PyResult<T> {
        self.run_checked(py, false, f)
    }

    /// [`Memory::run`] for a call that writes the index (`index`, `write_note`, `doctor`): the
    /// store is looked at first every time, so it never writes into a store no one else reads.
    fn run_writing<T: Send>(
        &self,
        py: Python<'_>,
        f: impl Fn(&mnemon::Memory) -> mnemon::Result<T> + Send,
    ) -> PyResult<T> {
        self.run_checked(py, true, f)
    }

    /// [`Memory::run`], with a store found damaged in the call (bad bytes read: redb panics, or
    /// says so) moved aside and rebuilt from the notes, and the call run once more on the
    /// rebuilt one, as the CLI does: the store is derived, and a `PanicException` (which
    /// `except Exception` does not catch) is no answer to damage it can repair.
    fn run_checked<T: Send>(
        &self,
        py: Python<'_>,
        always: bool,
        f: impl Fn(&mnemon::Memory) -> mnemon::Result<T> + Send,
    ) -> PyResult<T> {
        let (state, engine) = self.engine(py)?;
        py.detach(move || {
            crate::on_live_threads(move || {
                let engine = if always || state.store_check_due() {
                    current(state, engine)?
                } else {
                    engine
                };
                let damage = match catch_unwind(AssertUnwindSafe(|| f(&engine))) {
                    Ok(Err(e)) if mnemon::is_store_damage(&e) => e.to_string(),
                    Ok(done) => {
                        drop_caught(engine);
                        return done;
                    }
                    Err(panic) => format!("a read of it panicked: {}", panic_text(&*panic)),
                };
                let engine = repaired(state, engine, &damage)?;
                let done = catch_unwind(AssertUnwindSafe(|| f(&engine))).unwrap_or_else(|panic| {
                    Err(mnemon::Error::io(
                        "read the index store",
                        engine.dir().index(),
                        std::io::Error::other(format!(
                            "it was rebuilt from the notes after damage, and a read of the new \
                             one panicked too ({}); run `mnemon doctor --fix`",
                            panic_text(&*panic)
                        )),
                    ))
                });
                drop_caught(engine);
                done
            })
        })
        .py_err(py)
    }
}

/// `engine` opened again on a new index store, rebuilt from the notes, after `damage` showed in
/// its store: the damaged one is moved aside (to `graph.redb.damaged`), said in `notices`.
fn repaired(
    state: &State,
    engine: Arc<mnemon::Memory>,
    damage: &str,
) -> mnemon::Result<Arc<mnemon::Memory>> {
    let aside = mnemon::Memory::discard_store(engine.dir())?;
    {
        let mut notices = state.notices.lock().unwrap_or_else(|p| p.into_inner());
        notices.push(format!(
            "the index store was damaged ({damage}); moved it to {} and rebuilt it from the notes",
            aside.display()
        ));
    }
    current(state, engine)
}

/// What a panic said (its message), for a notice.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic")
}

/// `engine`, or the folder opened again (and indexed) when the index store `engine` opened
/// is no longer the folder's: `index/` deleted (README allows it at any time) or rebuilt by
/// another process. Without it this handle could not index or write while `index/` was
/// gone, and then wrote into a store no other handle or process reads. Said in `notices`.
fn current(state: &State, engine: Arc<mnemon::Memory>) -> mnemon::Result<Arc<mnemon::Memory>> {
    let Some(why) = engine.store_replaced() else {
        return Ok(engine);
    };
    let reopened = reopen(state, &engine, why);
    drop_caught(engine);
    reopened
}

/// Drop `engine`, and with it (when this is its last holder) its store: redb writes its state
/// then, and panics on a store damaged under it, which was moved aside already (see
/// [`repaired`]) or is the next call's to find.
fn drop_caught(engine: Arc<mnemon::Memory>) {
    let _ = catch_unwind(AssertUnwindSafe(move || drop(engine)));
}

/// [`current`] once the store `engine` opened is no longer the folder's (`why`).
fn reopen(
    state: &State,
    engine: &Arc<mnemon::Memory>,
    why: String,
) -> mnemon::Result<Arc<mnemon::Memory>> {
    let _one_at_a_time = state.reopening.lock().unwrap_or_else(|p| p.into_inner());
    match state.open_engine() {
        Some(now) if Arc::ptr_eq(&now, engine) => {}
        // Another thread opened it again meanwhile (or closed it: the call runs on the
        // engine it began with, as a call running at `close` does).
        Some(now) => return Ok(now),
        None => return Ok(engine.clone()),
    }
    let options = OpenOptions::default().with_session(engine.session().to_string());
    let fresh = mnemon::Memory::open_with(engine.dir().clone(), options)?;
    fresh.continue_session(engine);
    // Indexed as any fresh open is (in a forked child, on threads of its own: this runs in
    // `on_live_threads`).
    crate::POOL_STARTED.store(true, Ordering::Relaxed);
    fresh.index_if_writable()?;
    let fresh = Arc::new(fresh);
    {
        let mut notices = state.notices.lock().unwrap_or_else(|p| p.into_inner());
        notices.extend(engine.take_notices());
        notices.push(format!("{why}; opened the memory folder again"));
        notices.extend(fresh.take_notices());
    }
    let mut guard = state.inner.write().unwrap_or_else(|p| p.into_inner());
    // Closed while it was opened again: it stays closed; this call runs on the new engine,
    // which closes when the call returns. The one replaced is not the last holder of its
    // engine (the caller holds it).
    if guard.as_ref().is_some_and(|now| Arc::ptr_eq(now, engine)) {
        *guard = Some(fresh.clone());
    }
    Ok(fresh)
}

/// Before a call that hands work to the engine's worker threads (`index`, `doctor`): note that
/// they start, so that a process forked after it runs such work on threads of its own
/// ([`crate::on_live_threads`]).
fn pool_starts() {
    crate::POOL_STARTED.store(true, Ordering::Relaxed);
}

/// The working directory, as the library reports an I/O error.
fn cwd() -> mnemon::Result<PathBuf> {
    std::env::current_dir().map_err(|e| mnemon::Error::io("read the working directory", ".", e))
}

/// Refuse an empty or blank note id given as argument `what` with `mnemon.InvalidArgument`, as
/// every other malformed id is: the library would look it up and answer that no note has it
/// (`mnemon.NotFound`), or write it into a note's links.
fn check_id(what: &'static str, id: &str) -> mnemon::Result<()> {
    match blank(id) {
        None => Ok(()),
        Some(why) => Err(no_id(what, format!("the id {why}"))),
    }
}

/// [`check_id`] for each id of the list `what`.
fn check_ids(what: &'static str, ids: &[String]) -> mnemon::Result<()> {
    for (i, id) in ids.iter().enumerate() {
        if let Some(why) = blank(id) {
            return Err(no_id(what, format!("item {i} ({id:?}) {why}")));
        }
    }
    Ok(())
}

/// Why `id` names no note, if it is empty or blank.
fn blank(id: &str) -> Option<&'static str> {
    if id.is_empty() {
        Some("is empty")
    } else if id.trim().is_empty() {
        Some("is only white space")
    } else {
        None
    }
}

fn no_id(what: &'static str, which: String) -> mnemon::Error {
    mnemon::Error::InvalidArgument {
        what,
        message: format!(
            "{which}, which names no note: give a note's id (its path below memory/ without .md)"
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn query_of(
    text: Option<Text>,
    anchors: Vec<String>,
    depth: &Int,
    limit: &Int,
    min_score: Option<f64>,
    record: bool,
) -> mnemon::Result<Query> {
    check_ids("anchors", &anchors)?;
    Ok(Query {
        text: text.map(String::from).unwrap_or_default(),
        anchors,
        depth: depth.check(args::DEPTH)?,
        limit: limit.check(args::LIMIT)?,
        min_score: match min_score {
            Some(v) => args::min_score(v)?,
            None => args::DEFAULT_MIN_SCORE,
        },
        caller: CALLER.into(),
        record,
    })
}

#[pymethods]
impl Memory {
    /// Open an existing memory folder.
    ///
    /// ``path`` is the memory folder itself (the folder holding ``memory/``) or a folder that
    /// contains ``.mnemon/``. Without ``path``: the ``MNEMON_DIR`` environment variable, else the
    /// first ``.mnemon/`` found walking up from the working directory, as the ``mnemon`` command
    /// looks for it. ``session`` names this process's session in the event log (default:
    /// ``MNEMON_SESSION``, else a new id).
    ///
    /// Raises :class:`mnemon.Error` when no memory folder is there (its message says how to
    /// create one).
    #[staticmethod]
    #[pyo3(signature = (path=None, *, session=None))]
    fn open(py: Python<'_>, path: Option<PathBuf>, session: Option<Text>) -> PyResult<Memory> {
        let explicit = path.or_else(|| {
            std::env::var_os("MNEMON_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
        });
        let dir = cwd()
            .and_then(|cwd| MemoryDir::locate(explicit.as_deref(), &cwd))
            .py_err(py)?;
        Memory::opened(py, dir, session.map(String::from))
    }

    /// Create a memory folder at ``path`` (``memory/``, ``events/``, ``index/``; nothing is
    /// overwritten if it exists) and open it. Put notes in ``memory/`` as Markdown files, then
    /// call :meth:`index`.
    #[staticmethod]
    #[pyo3(signature = (path, *, session=None))]
    fn init(py: Python<'_>, path: PathBuf, session: Option<Text>) -> PyResult<Memory> {
        let dir = py.detach(move || MemoryDir::init(path)).py_err(py)?;
        Memory::opened(py, dir, session.map(String::from))
    }

    /// The memory folder (the one holding ``memory/``).
    #[getter]
    fn path(&self) -> PathBuf {
        self.dir.root().to_path_buf()
    }

    /// Messages about repairs made while opening or since (a rebuilt index, a damaged cache,
    /// an event segment removed under this process, ...), to show to a person; usually empty.
    #[getter]
    fn notices(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let state = self.state(py)?;
        let mut all = state.notices.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(engine) = state.open_engine() {
            all.extend(engine.take_notices());
        }
        Ok(all.iter().map(|n| errors::python_terms(n)).collect())
    }

    /// True once :meth:`close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Close the memory: events become durable (fsync) once calls still running on other threads
    /// return. Later calls raise :class:`mnemon.Error`. Closing twice does nothing. An index
    /// store found damaged as it closes is moved aside for the next open to rebuild from the
    /// notes, and :attr:`notices` says so.
    fn close(&self, py: Python<'_>) {
        self.closed.store(true, Ordering::Release);
        let (_, state) = self.loaded();
        // In a forked child that never used the handle, the state is the parent's: left alone
        // (see `State`), and the next call finds the handle closed.
        if state.pid != std::process::id() {
            return;
        }
        let taken = match state.inner.write() {
            Ok(mut guard) => guard.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(said) = taken.and_then(|engine| py.detach(move || close_engine(engine))) {
            let mut notices = state.notices.lock().unwrap_or_else(|p| p.into_inner());
            notices.push(said);
        }
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> bool {
        self.close(py);
        false
    }

    /// Bring the index up to date with ``memory/``: reads only the notes whose size, time or
    /// content changed, and drops the ones removed. Returns an :class:`IndexReport`. Recall
    /// indexes a never-indexed memory by itself, but not later edits: call this after writing
    /// notes.
    ///
    /// Indexing runs on worker threads, which do not survive ``os.fork()``: in a process forked
    /// from one that had indexed (multiprocessing's default start method on Linux) it runs on
    /// threads of that process's own, started at its first call that needs them.
    fn index(&self, py: Python<'_>) -> PyResult<IndexReport> {
        pool_starts();
        self.run_writing(py, |m| m.index()).map(IndexReport::from)
    }

    /// Recall the notes that matter for a question: lexical matches and ``anchors`` (note ids to
    /// start from), then the notes linked to them up to ``depth`` hops, ranked by what earlier
    /// feedback and importance marks taught. Returns at most ``limit`` :class:`Hit`, best first.
    ///
    /// ``query`` (free text) or ``anchors`` or both must be given. Defaults come from the library:
    /// ``depth=DEFAULT_DEPTH`` (0 to ``MAX_DEPTH``), ``limit=DEFAULT_LIMIT`` (1 to
    /// ``MAX_LIMIT``), ``min_score=None`` (``DEFAULT_MIN_SCORE``; any finite number). An argument
    /// out of range raises :class:`mnemon.InvalidArgument` (a :class:`ValueError`).
    /// ``explain=True`` fills each hit's ``explain``.
    ///
    /// The recall is recorded in the event log (its hits are reinforced when feedback names
    /// them); ``record=False`` leaves no trace, for measurements that must not change later
    /// rankings. The GIL is released while the engine runs.
    #[pyo3(
        signature = (
            query=None,
            *,
            anchors=Strings::default(),
            depth=Int::Fits(i64::from(args::DEFAULT_DEPTH)),
            limit=Int::Fits(args::DEFAULT_LIMIT as i64),
            min_score=None,
            explain=false,
            record=true,
        ),
        // What help() shows (the defaults above as written; tests/test_api.py checks them).
        text_signature = "($self, query=None, *, anchors=(), depth=2, limit=10, min_score=None, explain=False, record=True)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn recall<'py>(
        &self,
        py: Python<'py>,
        query: Option<Text>,
        anchors: Strings,
        depth: Int,
        limit: Int,
        min_score: Option<f64>,
        explain: bool,
        record: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let q = query_of(query, anchors.0, &depth, &limit, min_score, record).py_err(py)?;
        let recall = self.run(py, move |m| m.recall(&q))?;
        hit_list(py, recall.results, explain)
    }

    /// :meth:`recall` with its details: a :class:`Recall` holding the hits (``.hits``, also what
    /// iterating it gives), the query id its events carry (``.qid``), the time the engine spent
    /// (``.latency_us``) and why lexical matches passed the score floor or not (``.floor``).
    /// Same arguments as :meth:`recall`.
    #[pyo3(
        signature = (
            query=None,
            *,
            anchors=Strings::default(),
            depth=Int::Fits(i64::from(args::DEFAULT_DEPTH)),
            limit=Int::Fits(args::DEFAULT_LIMIT as i64),
            min_score=None,
            explain=false,
            record=true,
        ),
        // What help() shows (the defaults above as written; tests/test_api.py checks them).
        text_signature = "($self, query=None, *, anchors=(), depth=2, limit=10, min_score=None, explain=False, record=True)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn recall_report(
        &self,
        py: Python<'_>,
        query: Option<Text>,
        anchors: Strings,
        depth: Int,
        limit: Int,
        min_score: Option<f64>,
        explain: bool,
        record: bool,
    ) -> PyResult<Recall> {
        let q = query_of(query, anchors.0, &depth, &limit, min_score, record).py_err(py)?;
        let recall = self.run(py, move |m| m.recall(&q))?;
        Recall::new(py, recall, explain)
    }

    /// Say which recalled notes the agent used, and which were wrong for the question: one
    /// feedback event. Later questions sharing informative words with this one then find the
    /// used notes even when worded differently, and notes found wrong are pushed down for them.
    ///
    /// ``query`` is the question the notes were recalled for; None means the last recall made
    /// with this handle, by any thread (threads sharing a handle pass ``query``), and with no
    /// such recall, feedback tied to no question (only use counts change). At least one id, at most ``MAX_FEEDBACK_IDS`` in ``used`` and ``wrong`` together,
    /// none in both. An unknown id raises :class:`mnemon.NotFound`. Returns a
    /// :class:`FeedbackReport`.
    #[pyo3(
        signature = (used, wrong=Strings::default(), query=None),
        text_signature = "($self, used, wrong=(), query=None)"
    )]
    fn feedback(
        &self,
        py: Python<'_>,
        used: Strings,
        wrong: Strings,
        query: Option<Text>,
    ) -> PyResult<FeedbackReport> {
        check_ids("used", &used.0)
            .and_then(|()| check_ids("wrong", &wrong.0))
            .py_err(py)?;
        self.run(py, move |m| m.feedback(&used.0, &wrong.0, query.as_deref()))
            .map(FeedbackReport::from)
    }

    /// Mark note ``id`` as important, from ``MIN_IMPORTANCE`` (1, a little) to ``MAX_IMPORTANCE``
    /// (10, always relevant): one importance event, read by every process (``mnemon stats``
    /// shows it). Important notes rank higher and fill :meth:`core`. ``tags`` and ``note`` are
    /// recorded with the mark. An unknown id raises :class:`mnemon.NotFound`.
    #[pyo3(
        signature = (id, importance, *, tags=Strings::default(), note=Text::default()),
        text_signature = "($self, id, importance, *, tags=(), note='')"
    )]
    fn set_importance(
        &self,
        py: Python<'_>,
        id: Text,
        importance: Int,
        tags: Strings,
        note: Text,
    ) -> PyResult<()> {
        check_id("id", &id).py_err(py)?;
        let importance: u8 = importance.check(args::IMPORTANCE).py_err(py)?;
        self.run(py, move |m| {
            m.set_importance(&id, importance, &tags.0, &note)
        })
    }

    /// The folded usage statistics of note ``id`` (a :class:`NodeStatsView`, as ``mnemon stats``
    /// shows them): recalls, uses, wrong verdicts, importance. An unknown id raises
    /// :class:`mnemon.NotFound`.
    fn stats(&self, py: Python<'_>, id: Text) -> PyResult<NodeStatsView> {
        check_id("id", &id).py_err(py)?;
        self.run(py, move |m| m.stats(&id)).map(NodeStatsView::from)
    }

    /// The core view: pinned notes, then important ones, rendered as Markdown into
    /// ``budget_tokens`` (default ``DEFAULT_BUDGET_TOKENS``, 1 to ``MAX_BUDGET_TOKENS``), for a
    /// system prompt. Never fails because the budget is full: it lists what it left out.
    #[pyo3(
        signature = (budget_tokens=Int::Fits(args::DEFAULT_BUDGET_TOKENS as i64)),
        text_signature = "($self, budget_tokens=2000)"
    )]
    fn core(&self, py: Python<'_>, budget_tokens: Int) -> PyResult<CoreView> {
        let budget: usize = budget_tokens.check(args::BUDGET_TOKENS).py_err(py)?;
        self.run(py, move |m| m.core(budget)).map(CoreView::from)
    }

    /// Note ``id`` with its frontmatter and its edges both ways (a :class:`NodeView`, as
    /// ``mnemon show`` prints it). An unknown id raises :class:`mnemon.NotFound`.
    fn show(&self, py: Python<'_>, id: Text) -> PyResult<NodeView> {
        check_id("id", &id).py_err(py)?;
        self.run(py, move |m| m.show(&id)).map(NodeView::from)
    }

    /// Write note ``id`` (its path below ``memory/`` without ``.md``) with ``body`` and the
    /// given frontmatter fields into ``memory/``, and index it: recallable when the call returns.
    /// Returns a dict with the keys of ``mnemon write --json``: ``id``, ``path``, ``written``,
    /// ``created``, ``sha256`` (of the file on disk), ``refused`` (None, ``"exists"``,
    /// ``"stale"``, ``"missing"`` or ``"near_duplicate"``), ``message`` (what to do when
    /// refused), ``near_duplicates`` and ``likely_predecessors`` (lists of ``{"id",
    /// "similarity"}``). A note that exists is replaced only with ``expected_sha256`` set to the
    /// sha256 :meth:`show` gives (the body is replaced whole; frontmatter fields left out keep
    /// their values); a note nearly duplicating another is refused unless
    /// ``on_duplicate="create"``. A bad id, an empty or oversized body, a body with its own
    /// frontmatter block raise :class:`mnemon.InvalidArgument`; nothing is written then.
    #[pyo3(
        signature = (
            id, body, *, name=None, description=None, r#type=None, tags=Strings::default(),
            related=Strings::default(), supersedes=Strings::default(), contradicts=Strings::default(), pin=None,
            expected_sha256=None, on_duplicate=None
        ),
        text_signature = "($self, id, body, *, name=None, description=None, type=None, tags=(), related=(), supersedes=(), contradicts=(), pin=None, expected_sha256=None, on_duplicate=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn write_note<'py>(
        &self,
        py: Python<'py>,
        id: Text,
        body: Text,
        name: Option<Text>,
        description: Option<Text>,
        r#type: Option<Text>,
        tags: Strings,
        related: Strings,
        supersedes: Strings,
        contradicts: Strings,
        pin: Option<bool>,
        expected_sha256: Option<Text>,
        on_duplicate: Option<Text>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // (The id itself is the library's to refuse, as `mnemon.InvalidArgument` of `note`
        // as every other fault of a note to write.)
        check_ids("related", &related.0)
            .and_then(|()| check_ids("supersedes", &supersedes.0))
            .and_then(|()| check_ids("contradicts", &contradicts.0))
            .py_err(py)?;
        // Indexing the note needs the worker threads (in a forked child, its own).
        pool_starts();
        let bad = |reason| mnemon::Error::Write {
            id: id.0.clone(),
            reason,
        };
        let note_type = match r#type.as_deref() {
            None => None,
            Some(t) => mnemon::parse_note_type(t).map_err(bad).py_err(py)?,
        };
        let on_duplicate = match on_duplicate.as_deref() {
            None => mnemon::OnDuplicate::default(),
            Some(s) => mnemon::OnDuplicate::parse(s).map_err(bad).py_err(py)?,
        };
        let req = mnemon::WriteRequest {
            name: name.map(String::from),
            description: description.map(String::from),
            note_type,
            tags: tags.0,
            related: related.0,
            supersedes: supersedes.0,
            contradicts: contradicts.0,
            pin,
            expected_sha256: expected_sha256.map(String::from),
            on_duplicate,
            ..mnemon::WriteRequest::new(id.0.clone(), body)
        };
        let outcome = self.run_writing(py, move |m| m.write_note(&req))?;
        let data = crate::convert::to_data(py, &outcome)?;
        // What to do when refused, said in Python (`Memory.show`, not `mnemon show`).
        if let Ok(dict) = data.cast::<PyDict>()
            && let Some(message) = dict.get_item("message")?
            && let Ok(text) = message.extract::<String>()
        {
            dict.set_item("message", errors::python_terms(&text))?;
        }
        Ok(data)
    }

    /// Check the memory (re-indexes first): dangling links, notes with problems, conflict
    /// markers, the index's health. Returns a :class:`DoctorReport`.
    fn doctor(&self, py: Python<'_>) -> PyResult<DoctorReport> {
        pool_starts();
        self.run_writing(py, |m| m.doctor()).map(DoctorReport::from)
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { " (closed)" } else { "" };
        let root = crate::reports::quote(&self.dir.root().display().to_string());
        format!("<mnemon.Memory {root}{state}>")
    }
}
