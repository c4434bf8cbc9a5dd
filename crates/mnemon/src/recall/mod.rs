//! Which notes should the agent see now? Lexical hits, the typed-graph walk, synthesized
//! co-occurrence and the scoring policy, merged into one ranked list with trails.

mod cands;
pub(crate) mod passages;
mod query;
pub(crate) mod supersession;
inner_modules!(engine, evidence, learned, ord_stats, shown);

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
