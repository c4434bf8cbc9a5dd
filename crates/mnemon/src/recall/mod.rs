//! Which notes should the agent see now? Lexical hits, the typed-graph walk, synthesized
//! co-occurrence and the scoring policy, merged into one ranked list with trails.

mod cands;
pub(crate) mod passages;
mod query;
pub(crate) mod supersession;
// Inner modules: crate-private, or public but hidden with the `internals` feature (lib.rs).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod engine;
#[cfg(not(feature = "internals"))]
pub(crate) mod engine;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod evidence;
#[cfg(not(feature = "internals"))]
pub(crate) mod evidence;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod learned;
#[cfg(not(feature = "internals"))]
pub(crate) mod learned;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod ord_stats;
#[cfg(not(feature = "internals"))]
pub(crate) mod ord_stats;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod shown;
#[cfg(not(feature = "internals"))]
pub(crate) mod shown;

pub use crate::index::tokenize::MAX_QUERY_TERMS;
pub use crate::time::{Clock, FixedClock, SystemClock};
pub use query::{DEFAULT_LIMIT, MAX_ANCHORS, MAX_LIMIT, MAX_QUERY_BYTES, readable_part};
pub use query::{
    Explain, FloorReport, Hit, HitFields, HitJson, Query, Recall, RecallJson, RecallLayout,
    Rejected, Source, TermWeight, TrailEdge,
};

/// Usage statistics of one node, as recall scores them (folded from the event log).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NodeStats {
    /// Times the note was returned by a recall (shown; not a ranking signal on its own).
    pub recall_count: u64,
    /// When it was last returned, milliseconds since the Unix epoch.
    pub last_recalled_ms: Option<i64>,
    /// The latest importance mark, 1..=10.
    pub importance: Option<u8>,
    /// Times an agent said it used the note, or fetched it by id.
    pub used_count: u64,
    /// Of those, the uses tied to no question (fetches, feedback without a question).
    pub untied_used: u64,
    /// Times an agent said the note was wrong for its question.
    pub wrong_count: u64,
    /// When it was last used, milliseconds since the Unix epoch.
    pub last_used_ms: Option<i64>,
}
