//! The `mnemon` command line and MCP server, thin layers over [`mnemon::Memory`].
//!
//! - [`cli`]: argument parsing, human or `--json` output, exit codes;
//! - [`mcp`]: the MCP server over stdio (`mnemon serve`);
//! - [`live`]: the memory a long-running command holds, healed when its index store is damaged;
//! - [`watch`]: re-indexing notes as they change (`mnemon watch`, and `serve`'s watcher).

/// `eprintln!` that never panics: when stderr is a closed pipe (`mnemon core 2>&1 | head -1`,
/// an MCP client that stopped reading the server's log) the line is lost, and the command's
/// answer and exit code stay those of the work it did. `eprintln!` panicked (exit 101), and in
/// `serve` took the transport task down with it.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub mod cli;
pub mod live;
pub mod mcp;
pub mod watch;
