//! mnemon: an embedded associative-memory engine for AI agents.
//!
//! Agents keep what they learn as Markdown notes in `memory/`; mnemon folds them into a typed
//! graph (redb) and answers recall from it. The data flows through the modules in this order:
//! [`notes`] (parse one note) -> [`scan`] (what changed) -> [`store`] (the graph) -> the
//! [`Memory`] facade used by the CLI.

pub mod args;
mod background;
pub mod core_view;
pub mod error;
pub mod events;
pub mod folder;
pub mod fs;
pub mod index;
pub mod memory;
pub mod notes;
mod prefetch;
pub mod ranking;
pub mod recall;
pub mod scan;
pub mod store;
pub mod verify;

pub use error::{Error, Result};
pub use folder::MemoryDir;
pub use memory::{DoctorReport, IndexPhases, IndexReport, Memory, NodeView, OpenOptions};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
