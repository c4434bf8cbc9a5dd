//! `mnemon serve` and `mnemon watch`: long-running commands.

use crate::live::LiveMemory;
use crate::watch::{self, WatchReport, WatchStats};
use std::sync::{Arc, mpsc};
use std::time::Duration;

fn runtime() -> mnemon::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| mnemon::Error::io("start the async runtime", "", e))
}

/// Resolve when the process is asked to stop: Ctrl-C (SIGINT) or, on Unix, SIGTERM (what
/// `kill`, systemd and container runtimes send), returning the signal's name. Both are handled
/// so a stopped `serve` or `watch` ends its watcher and prints its summary instead of dying with
/// exit 143. `ready` runs once the handlers are installed: a signal sent after it is caught.
async fn stop_requested(ready: impl FnOnce()) -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            ready();
            return tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            };
        }
    }
    let stop = tokio::signal::ctrl_c();
    ready();
    let _ = stop.await;
    "Ctrl-C"
}

/// Start a watcher thread; returns its stop channel and join handle.
fn spawn_watcher(
    memory: Arc<LiveMemory>,
    stats: Arc<WatchStats>,
) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (stop_tx, stop_rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let log = |m: String| errln!("mnemon: {m}");
        if let Err(e) = watch::run(&memory, &stats, stop_rx, &log) {
            errln!("mnemon: watching stopped: {e}");
        }
    });
    (stop_tx, handle)
}

/// Serve MCP on stdio; logs to stderr only.
pub fn run(memory: Arc<LiveMemory>, watch_notes: bool) -> mnemon::Result<i32> {
    let stats = Arc::new(WatchStats::default());
    let watcher = watch_notes.then(|| spawn_watcher(memory.clone(), stats.clone()));
    // A tool call runs to its end before the select looks at a signal again (one thread): a
    // stop never cuts a write in half.
    let result = runtime()?.block_on(async {
        tokio::select! {
            r = crate::mcp::serve_stdio(memory.clone()) => r,
            sig = stop_requested(|| {}) => {
                errln!("mnemon: serve stopping on {sig}");
                Ok(())
            }
        }
    });
    if let Some((stop, handle)) = watcher {
        let _ = stop.send(());
        let _ = handle.join();
    }
    let r = stats.report();
    errln!(
        "mnemon: serve ended: {} file events, {} re-indexes",
        r.events_seen,
        r.reindexes
    );
    match result {
        Ok(()) => Ok(super::EXIT_OK),
        Err(e) => {
            errln!("mnemon: {e}");
            Ok(super::EXIT_FAILURE)
        }
    }
}

/// Watch until Ctrl-C or SIGTERM (or `for_secs`), then report.
pub fn watch_until_interrupted(
    memory: Arc<LiveMemory>,
    for_secs: Option<u64>,
) -> mnemon::Result<WatchReport> {
    let stats = Arc::new(WatchStats::default());
    let (stop, handle) = spawn_watcher(memory, stats.clone());
    runtime()?.block_on(async {
        match for_secs {
            Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
            None => {
                let sig = stop_requested(|| {
                    errln!("mnemon: watching memory/; Ctrl-C or SIGTERM stops and reports")
                })
                .await;
                errln!("mnemon: watch stopping on {sig}");
            }
        }
    });
    let _ = stop.send(());
    let _ = handle.join();
    Ok(stats.report())
}
