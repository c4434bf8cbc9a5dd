//! The `mnemon` command line and MCP server, thin layers over [`mnemon::Memory`].
//!
//! - [`cli`]: argument parsing, human or `--json` output, exit codes;
//! - [`mcp`]: the MCP server over stdio (`mnemon serve`);
//! - [`live`]: the memory a long-running command holds, healed when its index store is damaged;
//! - [`watch`]: re-indexing notes as they change (`mnemon watch`, and `serve`'s watcher).

pub mod cli;
pub mod live;
pub mod mcp;
pub mod watch;
