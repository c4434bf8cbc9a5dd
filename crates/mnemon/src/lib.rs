//! mnemon: an embedded associative-memory engine for AI agents.
//!
//! Agents keep what they learn as Markdown notes in a `memory/` folder; mnemon folds them into a
//! typed graph and a lexical index, answers [`Memory::recall`] in well under a millisecond, and
//! records every recall, use and importance mark as an event that later recalls learn from.
//!
//! Everything goes through one handle, [`Memory`]:
//!
//! ```no_run
//! use mnemon::recall::Query;
//! use mnemon::Memory;
//!
//! let memory = Memory::open(".mnemon")?; // the folder holding memory/, events/ and index/
//! memory.index()?; // incremental: reads only notes whose size, mtime and hash changed
//! let found = memory.recall(&Query::text("why did the pool time out").with_limit(5))?;
//! for hit in &found.results {
//!     println!("{} {:.2} {:?} via {:?}", hit.id, hit.score, hit.source, hit.trail);
//! }
//! if let Some(hit) = found.results.first() {
//!     // The agent used it: later questions worded like this one find it first.
//!     memory.feedback(&[hit.id.clone()], &[], None)?;
//! }
//! # Ok::<(), mnemon::Error>(())
//! ```
//!
//! The public modules are what an embedder uses: [`recall`] (the query and its answer),
//! [`args`] (the range of every argument), [`events`] (durability and compaction policies, the
//! events themselves), [`core_view`], [`folder`], [`ranking`] (every ranking constant) and
//! [`time`] (the clock recall and the event log read). The engine inside follows the data: notes
//! (parse one note) -> scan (what changed) -> store (the graph, redb) and index (the lexical
//! index, fst) -> co-occurrence synthesis -> recall; events -> fold -> snapshot. Those modules
//! are private; the `internals` feature makes them public, undocumented and unstable, for
//! mnemon's own tests, benches and fuzz targets.
#![deny(missing_docs)]
// Without `internals`, the engine's test seams (the in-memory file system, the decoders the fuzz
// targets drive, builders the benches call) have no caller in the library itself.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

/// Declares the engine's inner modules: crate-private, or public but hidden (no stability
/// promise) with the `internals` feature.
macro_rules! inner_modules {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    )*};
}

pub mod args;
pub mod core_view;
pub mod error;
pub mod events;
pub mod folder;
mod memory;
pub mod ranking;
pub mod recall;
pub mod time;

inner_modules!(
    background, cooccur, dedup, fs, graph, index, layout, notes, prefetch, scan, store, verify
);

pub use error::{Error, NoteWriteError, Result};
pub use folder::MemoryDir;
pub use memory::{
    Contradiction, Dangling, DoctorReport, EdgeIn, EdgeOut, EventSegments, FeedbackReport,
    IndexHealth, IndexPhases, IndexReport, MAX_REPORTED_NEAR_DUPLICATES, Memory, MissingSegment,
    NearDuplicate, NodeStatsView, NodeView, NoteError, OnDuplicate, OpenOptions,
    STATS_REFRESH_INTERVAL, SegmentContents, Similar, WriteNeighbours, WriteOutcome, WriteRefusal,
    WriteRequest, parse_note_type, sha256_hex,
};
pub use notes::{EdgeKind, NoteType, ProblemKind, Provenance, with_marks_shown};
pub use scan::ScanError;
pub use store::Edge;
pub use store::is_damage as is_store_damage;
pub use store::{LOCK_WAIT_NOTICE_AFTER_MS, set_lock_wait_notice};

/// Builds now, on this thread, the read-only tables the engine otherwise builds at their first
/// use, some on a background thread an opened index starts (the typo automata builders, word
/// lists, weight tables).
///
/// For a process that may fork (Python's `os.fork`, multiprocessing's `fork` start method): a
/// table another thread is building at the moment of the fork is never finished in the child,
/// where that thread does not exist, and the child's first recall that needs it waits forever.
/// Call this before any thread can use the engine (the Python package calls it when it is
/// imported); calls after the first cost nothing.
pub fn build_process_tables() {
    index::lexical::build_typo_builders();
    recall::evidence::build_word_tables();
    cooccur::build_weight_table();
    dedup::sketch::build_permutations();
}

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
