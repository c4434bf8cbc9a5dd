//! Printing to stdout without a panic when the reader goes away: `mnemon index | head -1`
//! closes the pipe after one line, and `println!` panics on the next. [`outln!`] and [`out!`]
//! print like `println!` and `print!`; when stdout is a closed pipe the command ends quietly
//! (exit 0, as ripgrep does), and any other write error is reported on stderr (exit 1).

/// `println!` to stdout, ending the process quietly when the pipe is closed.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::stdout::WROTE.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::cli::stdout::failed(e)
        }
    }};
}

/// `print!` to stdout, ending the process quietly when the pipe is closed.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::stdout::WROTE.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Err(e) = write!(std::io::stdout().lock(), $($arg)*) {
            $crate::cli::stdout::failed(e)
        }
    }};
}

/// Set by the first write to stdout: a command that has printed its answer is not run again
/// (see `dispatch_repairing`).
pub static WROTE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether anything was written to stdout.
pub fn wrote() -> bool {
    WROTE.load(std::sync::atomic::Ordering::Relaxed)
}

/// A write to stdout failed: a closed pipe ends the process with 0, anything else with 1.
pub fn failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("mnemon: cannot write to stdout: {e}");
    std::process::exit(1);
}
