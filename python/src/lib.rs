//! `mnemon._mnemon`, the native half of the `mnemon` Python package: the library's `Memory`
//! facade, its reports and its argument ranges, for Python agents that embed the engine in
//! process. The package's `mnemon/__init__.py` re-exports everything from here.

mod convert;
mod errors;
mod memory;
mod reports;

use mnemon::args;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// The engine's shared worker threads (rayon's global pool, which `index` and `doctor` use) were
/// started in this process, or in the process it was forked from.
pub(crate) static POOL_STARTED: AtomicBool = AtomicBool::new(false);

/// This process was forked from one whose worker threads had started: they do not exist here,
/// and work handed to them would wait forever.
pub(crate) static POOL_LOST_IN_FORK: AtomicBool = AtomicBool::new(false);

/// Worker threads of this process's own, in a process forked after the engine's had started:
/// the engine's parallel work (indexing, `doctor`) runs on rayon's global pool, whose threads do
/// not exist in the child, and handed to it would wait forever. Made at the first call that
/// needs it and kept for the process; one made by the process this one was forked from is left
/// alone (its threads do not exist here either). A pointer, not a lock: a lock held by a thread
/// of the parent at the fork would never be released here.
static CHILD_POOL: AtomicPtr<ChildPool> = AtomicPtr::new(std::ptr::null_mut());

struct ChildPool {
    pid: u32,
    pool: rayon::ThreadPool,
}

/// Run `f`, an engine call, where its parallel work can run: on the engine's worker threads,
/// or in a process forked after they started, on threads of the process's own.
pub(crate) fn on_live_threads<T: Send>(
    f: impl FnOnce() -> mnemon::Result<T> + Send,
) -> mnemon::Result<T> {
    if !POOL_LOST_IN_FORK.load(Ordering::Relaxed) {
        return f();
    }
    let pid = std::process::id();
    let current = CHILD_POOL.load(Ordering::Acquire);
    // SAFETY: set only from `Box::into_raw` below and never freed, so it lives as long as the
    // process.
    if let Some(own) = unsafe { current.as_ref() }.filter(|c| c.pid == pid) {
        return own.pool.install(f);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("mnemon-forked-{i}"))
        .build()
        .map_err(|e| {
            mnemon::Error::io(
                "start worker threads in this forked process",
                ".",
                std::io::Error::other(e.to_string()),
            )
        })?;
    let fresh = Box::into_raw(Box::new(ChildPool { pid, pool }));
    let own = match CHILD_POOL.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => fresh,
        Err(other) => {
            // Another thread of this process made one first: use it, and let this one go.
            // SAFETY: `fresh` was never shared.
            drop(unsafe { Box::from_raw(fresh) });
            other
        }
    };
    // SAFETY: as above (`other` is this process's: only this process's threads store here).
    unsafe { &*own }.pool.install(f)
}

/// Called in the child after `os.fork()` (registered with `os.register_at_fork` by
/// `mnemon/__init__.py`).
#[pyfunction]
fn _after_fork_in_child() {
    if POOL_STARTED.load(Ordering::Relaxed) {
        POOL_LOST_IN_FORK.store(true, Ordering::Relaxed);
    }
}

/// The native module of mnemon (import ``mnemon``, not this).
#[pymodule]
fn _mnemon(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Before any thread of this process can use the engine: a table built at first use by
    // another thread at the moment of an `os.fork()` would never be finished in the child.
    mnemon::build_process_tables();
    m.add_class::<memory::Memory>()?;
    m.add_class::<reports::Hit>()?;
    m.add_class::<reports::Recall>()?;
    m.add_class::<reports::IndexReport>()?;
    m.add_class::<reports::NodeStatsView>()?;
    m.add_class::<reports::NodeView>()?;
    m.add_class::<reports::FeedbackReport>()?;
    m.add_class::<reports::CoreView>()?;
    m.add_class::<reports::DoctorReport>()?;
    m.add_function(wrap_pyfunction!(_after_fork_in_child, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The library's argument ranges and defaults (`mnemon::args`), the ones the CLI and the MCP
    // server accept too.
    m.add("DEFAULT_DEPTH", args::DEFAULT_DEPTH)?;
    m.add("MIN_DEPTH", args::MIN_DEPTH)?;
    m.add("MAX_DEPTH", args::MAX_DEPTH)?;
    m.add("DEFAULT_LIMIT", args::DEFAULT_LIMIT)?;
    m.add("MIN_LIMIT", args::MIN_LIMIT)?;
    m.add("MAX_LIMIT", args::MAX_LIMIT)?;
    // The f32 floor as the decimal it is written as (0.05, not 0.05000000074505806): given back
    // as `min_score`, it narrows to the same f32.
    let min_score: f64 = args::DEFAULT_MIN_SCORE.to_string().parse().unwrap_or(0.0);
    m.add("DEFAULT_MIN_SCORE", min_score)?;
    m.add("MIN_IMPORTANCE", args::MIN_IMPORTANCE)?;
    m.add("MAX_IMPORTANCE", args::MAX_IMPORTANCE)?;
    m.add("DEFAULT_BUDGET_TOKENS", args::DEFAULT_BUDGET_TOKENS)?;
    m.add("MIN_BUDGET_TOKENS", args::MIN_BUDGET_TOKENS)?;
    m.add("MAX_BUDGET_TOKENS", args::MAX_BUDGET_TOKENS)?;
    m.add("MAX_ANCHORS", args::MAX_ANCHORS)?;
    m.add("MAX_FEEDBACK_IDS", args::MAX_FEEDBACK_IDS)?;
    m.add("MAX_QUERY_BYTES", args::MAX_QUERY_BYTES)?;
    Ok(())
}
