//! A spinner on stderr for work that takes more than a second, only on a terminal.

use super::output::Out;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::mpsc;
use std::time::Duration;

/// Delay before the spinner appears: quick commands print nothing extra.
const SPINNER_DELAY: Duration = Duration::from_secs(1);

/// Run `work`, showing a spinner with `message` if it runs longer than [`SPINNER_DELAY`] and
/// stderr is a terminal.
pub fn with_spinner<T>(out: &Out, message: &'static str, work: impl FnOnce() -> T) -> T {
    if !out.interactive() {
        return work();
    }
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            if done_rx.recv_timeout(SPINNER_DELAY).is_ok() {
                return;
            }
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
                bar.set_style(style);
            }
            bar.set_message(message);
            bar.enable_steady_tick(Duration::from_millis(100));
            let _ = done_rx.recv();
            bar.finish_and_clear();
        });
        let result = work();
        let _ = done_tx.send(());
        result
    })
}
