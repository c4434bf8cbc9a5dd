//! Helpers shared by the command-line tests: the test kit's, and the binary under test.
#![allow(dead_code, unused_imports)]

pub mod mcp;

pub use mnemon_testkit::events;
pub use mnemon_testkit::fixtures::{copy_into, fresh, loopal_fixtures, siblings, write_note};

/// The `mnemon` binary built for these tests.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_mnemon"))
}
