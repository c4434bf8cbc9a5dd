//! `mnemon serve` and `mnemon watch`: long-running commands.

use crate::live::LiveMemory;
use crate::watch::{self, WatchReport, WatchStats};
use std::sync::Arc;
use std::time::Duration;

/// The async runtime of `serve` and `watch`, made before the memory is opened (which starts
/// other threads). tokio makes its signal driver's socket pair with `expect`: a process at its
/// open-file limit panicked there (exit 101). That panic is caught, silently (the default hook
/// is put back at once; no other thread of this process runs yet, except after a repair
/// retried the command), and returned as the error it reports.
pub fn runtime() -> mnemon::Result<tokio::runtime::Runtime> {
    let started = |e| mnemon::Error::io("start the async runtime", "", e);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let built = std::panic::catch_unwind(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    });
    std::panic::set_hook(hook);
    match built {
        Ok(r) => r.map_err(started),
        Err(payload) => Err(started(os_error_of_panic(payload.as_ref()))),
    }
}

/// The I/O error a panic message reports (`... Os { code: 24, ... }`, as `expect` on an
/// `io::Error` prints it), or the message itself.
fn os_error_of_panic(payload: &(dyn std::any::Any + Send)) -> std::io::Error {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("a panic");
    let code = message.split_once("code: ").and_then(|(_, rest)| {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<i32>().ok()
    });
    match code {
        Some(c) => std::io::Error::from_raw_os_error(c),
        None => std::io::Error::other(message.to_string()),
    }
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

/// How long a stopped server waits for a reply it is still writing to stdout.
const STDOUT_DRAIN: Duration = Duration::from_millis(250);

/// Serve MCP on stdio; logs to stderr only. The notes are indexed in the background, so the
/// client's handshake is answered at once; tool calls wait for that index.
pub fn run(
    rt: tokio::runtime::Runtime,
    memory: Arc<LiveMemory>,
    watch_notes: bool,
) -> mnemon::Result<i32> {
    let stats = Arc::new(WatchStats::default());
    // Armed before the first index reads the notes: a change made meanwhile is either read by
    // that index or seen by the watcher.
    let watcher = watch_notes.then(|| watch::spawn(memory.clone(), stats.clone()));
    memory.index_in_background();
    // A tool call runs to its end before the select looks at a signal again (one thread): a
    // stop never cuts a write in half. Waiting for the first index is no tool call: a signal
    // stops it at once.
    let result = rt.block_on(async {
        let stop = stop_requested(|| {});
        tokio::pin!(stop);
        let served = tokio::select! {
            r = crate::mcp::serve_stdio(memory.clone()) => r,
            sig = &mut stop => {
                errln!("mnemon: serve stopping on {sig}");
                if memory.indexing() {
                    // An index cut short is completed by the next command, like one a crash
                    // cut short.
                    errln!("mnemon: the notes were still being indexed; the next command finishes it");
                }
                return Ok(());
            }
        };
        if memory.indexing() {
            errln!(
                "mnemon: the client left; finishing the index of the notes first (Ctrl-C or \
                 SIGTERM stops at once)"
            );
            tokio::select! {
                () = memory.first_index_done() => {}
                sig = &mut stop => errln!(
                    "mnemon: serve stopping on {sig}; the notes were still being indexed: the \
                     next command finishes it"
                ),
            }
        }
        served
    });
    // A stop by signal leaves the blocking read of stdin behind, which would hold a plain
    // drop of the runtime until the client closes stdin; a reply still being written gets
    // this long.
    rt.shutdown_timeout(STDOUT_DRAIN);
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

/// Watch until Ctrl-C or SIGTERM (or `for_secs`), then report. `index_first` indexes the notes
/// once the watch is armed, before watching begins.
pub fn watch_until_interrupted(
    rt: tokio::runtime::Runtime,
    memory: Arc<LiveMemory>,
    for_secs: Option<u64>,
    index_first: impl FnOnce(&LiveMemory) -> mnemon::Result<()>,
) -> mnemon::Result<WatchReport> {
    let stats = Arc::new(WatchStats::default());
    let (stop, handle) = watch::spawn(memory.clone(), stats.clone());
    if let Err(e) = index_first(&memory) {
        let _ = stop.send(());
        let _ = handle.join();
        return Err(e);
    }
    rt.block_on(async {
        let sig = stop_requested(|| {
            errln!("mnemon: watching memory/; Ctrl-C or SIGTERM stops and reports")
        });
        // `--for` ends the watch at its time; a signal before it stops it as without `--for`.
        let sig = match for_secs {
            Some(s) => tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(s)) => None,
                sig = sig => Some(sig),
            },
            None => Some(sig.await),
        };
        if let Some(sig) = sig {
            errln!("mnemon: watch stopping on {sig}");
        }
    });
    let _ = stop.send(());
    let _ = handle.join();
    Ok(stats.report())
}
