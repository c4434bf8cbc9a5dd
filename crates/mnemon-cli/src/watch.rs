//! Watch mode: re-index when notes change, debounced so a burst of writes is one re-index.
//!
//! File events under `memory/` are collected by `notify-debouncer-full` in a 2-second window; each
//! debounced batch runs one incremental `Memory::index`. The debouncer expires each path on its own
//! clock and checks every quarter window, so a burst that straddles a check arrives as two batches
//! half a second apart; batches arriving within [`COALESCE`] of the first are merged into its
//! re-index. A recall during a re-index sees the old or
//! the new index, never a half-built one (one redb transaction, a lexical manifest renamed into
//! place, an `Arc` swap in memory).
//!
//! The watch is armed before the first index reads the notes ([`run`]'s `armed`), so a change
//! made while a command starts is either read by that index or seen by the watcher. `memory/`
//! itself removed or replaced (a restore from a backup, a sync tool, `git checkout` of the whole
//! folder) ends the watch on the old folder: the watcher says so, watches the folder again when
//! it is back, and indexes all of it. A re-index that fails (a full disk) is run again every
//! [`RETRY_FAILED`] until it succeeds, since nothing may change in `memory/` to raise another.

use crate::live::LiveMemory;
use mnemon::error::{Error, Result};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// The debounce window.
pub const DEBOUNCE: Duration = Duration::from_secs(2);

/// How long after a debounced batch further batches are merged into its re-index: one check of
/// the debouncer (a quarter window) and a margin of one and a half checks for a loaded machine,
/// whose debouncer thread may send the next batch late. Each batch merged starts
/// the wait again (a burst of writes spread over seconds, each file debounced on its own, comes
/// out as batches less than this apart), up to [`COALESCE_MAX`] after the first.
pub const COALESCE: Duration = Duration::from_millis(1250);

/// The longest a batch waits for others to merge with: writes that never pause are still
/// re-indexed.
pub const COALESCE_MAX: Duration = Duration::from_secs(4);

/// How long after a failed re-index (a full disk, most often) the watcher runs it again. The
/// notes it left out are indexed once the cause is gone, though nothing changes in `memory/`
/// to raise another event; a retry that fails again is not logged again.
pub const RETRY_FAILED: Duration = Duration::from_secs(3);

/// A re-index that failed, to be run again: all notes (`full`) or those at `paths`.
struct Failed {
    full: bool,
    paths: Vec<std::path::PathBuf>,
    at: Instant,
}

impl Failed {
    /// The re-index of `full` or `paths` with what this one left out.
    fn with(failed: Option<&Failed>, full: bool, mut paths: Vec<std::path::PathBuf>) -> Failed {
        let full = full || paths.is_empty() || failed.is_some_and(|f| f.full);
        if full {
            paths.clear();
        } else if let Some(f) = failed {
            paths.extend(f.paths.iter().cloned());
            paths.sort();
            paths.dedup();
        }
        Failed {
            full,
            paths,
            at: Instant::now(),
        }
    }
}

/// What a watcher has done so far.
#[derive(Debug, Default)]
pub struct WatchStats {
    /// File-system events received (after debouncing).
    pub events_seen: AtomicU64,
    /// Re-indexes run.
    pub reindexes: AtomicU64,
    /// Re-indexes that changed or removed at least one note.
    pub reindexes_with_changes: AtomicU64,
    /// Errors (watcher or index).
    pub errors: AtomicU64,
}

/// A JSON-friendly copy of [`WatchStats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WatchReport {
    pub events_seen: u64,
    pub reindexes: u64,
    pub reindexes_with_changes: u64,
    pub errors: u64,
}

impl WatchStats {
    pub fn report(&self) -> WatchReport {
        WatchReport {
            events_seen: self.events_seen.load(Ordering::Relaxed),
            reindexes: self.reindexes.load(Ordering::Relaxed),
            reindexes_with_changes: self.reindexes_with_changes.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
        }
    }
}

/// How `memory/` is watched: symlinks are not followed, so no folder outside `memory/` is
/// watched through a link (the scan refuses notes there anyway; a link to a folder inside is
/// seen through the folder's own watch).
fn watcher_config() -> notify::Config {
    notify::Config::default().with_follow_symlinks(false)
}

/// Start a watcher thread on `memory` (its log on stderr); returns its stop channel and join
/// handle once the watch is armed (or could not be: the thread has said why), so a change made
/// from then on is seen. `serve` and `watch` index the notes after this returns.
pub fn spawn(
    memory: Arc<LiveMemory>,
    stats: Arc<WatchStats>,
) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (stop_tx, stop_rx) = mpsc::channel();
    let (armed_tx, armed_rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let log = |m: String| errln!("mnemon: {m}");
        let armed = move || {
            let _ = armed_tx.send(());
        };
        if let Err(e) = run(&memory, &stats, stop_rx, armed, &log) {
            errln!("mnemon: watching stopped: {e}");
        }
    });
    // Disconnected when the watch could not be set up: the thread has reported it.
    let _ = armed_rx.recv();
    (stop_tx, handle)
}

/// How often the watcher looks whether `memory/` is still the folder it watches.
const ROOT_CHECK: Duration = Duration::from_millis(500);

/// Watch `memory/` and re-index on changes until `stop` receives a message (or is dropped).
/// `armed` is called once the watch is in place (not at all if it cannot be set up).
/// `on_error` is told about each failure (the watcher keeps going).
pub fn run(
    memory: &LiveMemory,
    stats: &WatchStats,
    stop: mpsc::Receiver<()>,
    armed: impl FnOnce(),
    on_error: &dyn Fn(String),
) -> Result<()> {
    let (tx, rx) = mpsc::channel();
    let mut debouncer = notify_debouncer_full::new_debouncer_opt::<
        _,
        notify::RecommendedWatcher,
        notify_debouncer_full::RecommendedCache,
    >(
        DEBOUNCE,
        None,
        tx,
        notify_debouncer_full::RecommendedCache::new(),
        watcher_config(),
    )
    .map_err(|e| watch_error("start watching", &memory.dir().memory(), e))?;
    let root = memory.dir().memory();
    let mut watched = folder_id(&root);
    debouncer
        .watch(&root, notify::RecursiveMode::Recursive)
        .map_err(|e| watch_error("watch", &root, e))?;
    armed();
    let mut root_checked = Instant::now();
    let report_errors = |errors: Vec<notify::Error>| {
        stats
            .errors
            .fetch_add(errors.len() as u64, Ordering::Relaxed);
        for e in errors {
            on_error(format!("watch error: {e}"));
        }
    };
    // A re-index that failed, run again every [`RETRY_FAILED`] until it succeeds.
    let mut failed: Option<Failed> = None;
    loop {
        match stop.try_recv() {
            Ok(()) | Err(mpsc::TryRecvError::Disconnected) => return Ok(()),
            Err(mpsc::TryRecvError::Empty) => {}
        }
        if memory.take_index_failed() {
            failed = Some(Failed::with(failed.as_ref(), true, Vec::new()));
        }
        if let Some(f) = &mut failed
            && f.at.elapsed() >= RETRY_FAILED
            && watched.is_some()
            && !memory.indexing()
        {
            if reindex(memory, stats, f.full, &f.paths).is_ok() {
                on_error(
                    "indexed the notes a failed re-index had left out (its cause is gone)".into(),
                );
                failed = None;
            } else {
                f.at = Instant::now();
            }
        }
        if root_checked.elapsed() >= ROOT_CHECK {
            root_checked = Instant::now();
            let now = folder_id(&root);
            if now != watched {
                // The watch followed the old folder (an inode): gone, or somewhere else now.
                let _ = debouncer.unwatch(&root);
                if watched.is_some() {
                    on_error(format!(
                        "{} was removed or replaced; recall answers from the index as it was \
                         until the folder is back, then it is watched and indexed again",
                        root.display()
                    ));
                }
                watched = now;
                if now.is_none() {
                    continue;
                }
                if let Err(e) = debouncer.watch(&root, notify::RecursiveMode::Recursive) {
                    stats.errors.fetch_add(1, Ordering::Relaxed);
                    on_error(format!("watching {} again failed: {e}", root.display()));
                    watched = None;
                    continue;
                }
                on_error(format!(
                    "{} is back: watching it again and indexing all of it",
                    root.display()
                ));
                if !first_index_done_or_stop(memory, &stop) {
                    return Ok(());
                }
                // A full walk: it covers whatever an earlier failed re-index left out.
                failed = match reindex(memory, stats, true, &[]) {
                    Ok(()) => None,
                    Err(e) => {
                        on_error(format!("re-index failed: {e}"));
                        Some(Failed::with(None, true, Vec::new()))
                    }
                };
                continue;
            }
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Ok(mut events)) => {
                let first = Instant::now();
                let mut until = first + COALESCE;
                loop {
                    let left = until.saturating_duration_since(Instant::now());
                    // Past the wait (this thread may wake late on a loaded machine), batches
                    // already sent are still merged: only one that has not come is not waited for.
                    let next = if left.is_zero() {
                        rx.try_recv().map_err(|_| ())
                    } else {
                        rx.recv_timeout(left).map_err(|_| ())
                    };
                    match next {
                        Ok(Ok(more)) => {
                            events.extend(more);
                            until = (Instant::now() + COALESCE).min(first + COALESCE_MAX);
                        }
                        Ok(Err(errors)) => report_errors(errors),
                        Err(()) => break,
                    }
                }
                // Opening or reading a file changes nothing, and mnemon's own scans open every
                // folder of memory/: re-indexing on those made each re-index raise the next one.
                events
                    .retain(|e| e.need_rescan() || !matches!(e.kind, notify::EventKind::Access(_)));
                if events.is_empty() {
                    continue;
                }
                stats
                    .events_seen
                    .fetch_add(events.len() as u64, Ordering::Relaxed);
                // The debouncer names the files that changed: re-index those alone, unless
                // the watcher lost track (a rescan flag) and only a full walk is safe.
                let rescan = events.iter().any(|e| e.need_rescan());
                let mut paths: Vec<std::path::PathBuf> = events
                    .iter()
                    .flat_map(|e| e.paths.iter().cloned())
                    .collect();
                paths.sort();
                paths.dedup();
                if watched.is_none() || folder_id(&root) != watched {
                    // The folder itself went: the check above handles it.
                    continue;
                }
                if !first_index_done_or_stop(memory, &stop) {
                    return Ok(());
                }
                // With the notes an earlier failed re-index left out, so that a success
                // covers them too.
                let todo = Failed::with(failed.as_ref(), rescan, paths);
                failed = match reindex(memory, stats, todo.full, &todo.paths) {
                    Ok(()) => None,
                    Err(e) => {
                        on_error(format!("re-index failed: {e}"));
                        Some(todo)
                    }
                };
            }
            Ok(Err(errors)) => report_errors(errors),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
    }
}

/// Wait until the first index of the notes has ended (`serve` runs it beside the watcher, which
/// was armed before it), without missing a stop: `false` when asked to stop meanwhile.
fn first_index_done_or_stop(memory: &LiveMemory, stop: &mpsc::Receiver<()>) -> bool {
    while memory.indexing() {
        match stop.recv_timeout(Duration::from_millis(50)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => return false,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    true
}

/// Index the notes at `paths` (all of them with `full` or no path), counting.
fn reindex(
    memory: &LiveMemory,
    stats: &WatchStats,
    full: bool,
    paths: &[std::path::PathBuf],
) -> Result<()> {
    let result = memory.with(|m| {
        if full || paths.is_empty() {
            m.index()
        } else {
            m.index_paths(paths)
        }
    });
    match result {
        Ok(r) => {
            stats.reindexes.fetch_add(1, Ordering::Relaxed);
            if !r.changed.is_empty() || !r.removed.is_empty() {
                stats.reindexes_with_changes.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
        Err(e) => {
            stats.errors.fetch_add(1, Ordering::Relaxed);
            Err(e)
        }
    }
}

/// The device and inode of the folder `path` (`None`: gone, or no folder; where identities are
/// unknown, only whether it is there).
fn folder_id(path: &std::path::Path) -> Option<(u64, u64)> {
    path.is_dir()
        .then(|| mnemon::folder::file_identity(path).unwrap_or((0, 0)))
}

/// A watcher's error as the I/O error it is, on the path it names (a sub-folder that cannot be
/// watched is named, not `memory/`), so that its fix is said. An inotify instance or watch
/// limit is no open-file limit, though the kernel says EMFILE or ENOSPC for it: its fix is named.
fn watch_error(op: &'static str, folder: &std::path::Path, e: notify::Error) -> Error {
    let path = e
        .paths
        .first()
        .cloned()
        .unwrap_or_else(|| folder.to_path_buf());
    match e.kind {
        notify::ErrorKind::MaxFilesWatch => Error::io(
            op,
            path,
            std::io::Error::other(
                "the system's inotify watch limit is reached: raise fs.inotify.max_user_watches \
                 (sysctl), or watch fewer folders",
            ),
        ),
        notify::ErrorKind::Io(io) if is_emfile(&io) && op == "start watching" => Error::io(
            op,
            path,
            std::io::Error::other(format!(
                "{io}; the limit may be this process's open files (`ulimit -n`) or the \
                     system's inotify instances (sysctl fs.inotify.max_user_instances): raise \
                     the one that is reached"
            )),
        ),
        notify::ErrorKind::Io(io) => Error::io(op, path, io),
        _ => Error::io(op, path, std::io::Error::other(e)),
    }
}

/// Whether `io` is `EMFILE`, which inotify's set-up reports for a limit of either kind.
fn is_emfile(io: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        io.raw_os_error() == Some(libc::EMFILE)
    }
    #[cfg(not(unix))]
    {
        let _ = io;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watch that failed on a sub-folder was reported against `memory/` (the path was
    /// dropped), and an inotify limit was told to raise `ulimit -n` alone.
    #[test]
    #[cfg(unix)]
    fn a_watch_error_names_its_folder_and_the_limit_reached() {
        let memory = std::path::Path::new("/m/memory");
        let denied = notify::Error::io(std::io::Error::from(std::io::ErrorKind::PermissionDenied))
            .add_path(memory.join("private"));
        let e = watch_error("watch", memory, denied).to_string();
        assert!(e.starts_with("watch /m/memory/private: "), "{e}");
        assert!(e.contains("check its owner and mode"), "{e}");
        let out = notify::Error::io(std::io::Error::from_raw_os_error(libc::EMFILE));
        let e = watch_error("start watching", memory, out).to_string();
        assert!(e.starts_with("start watching /m/memory: "), "{e}");
        assert!(
            e.contains("ulimit -n") && e.contains("max_user_instances"),
            "{e}"
        );
        let e = watch_error(
            "watch",
            memory,
            notify::Error::new(notify::ErrorKind::MaxFilesWatch),
        )
        .to_string();
        assert!(e.contains("max_user_watches"), "{e}");
    }

    #[test]
    fn the_watcher_does_not_follow_symlinks_out_of_memory() {
        assert!(!watcher_config().follow_symlinks());
        assert_eq!(
            watcher_config().with_follow_symlinks(true),
            notify::Config::default(),
            "nothing else differs from the default"
        );
    }
}
