//! Which notes should the agent see now? Lexical hits, the typed-graph walk, synthesized
//! co-occurrence and the scoring policy, merged into one ranked list with trails.

mod cands;
pub mod clock;
pub mod cooccur;
pub mod engine;
pub mod ord_stats;
pub mod policy;
pub mod query;
pub mod shown;

pub use clock::{Clock, FixedClock, SystemClock};
pub use query::{Explain, Hit, Query, Recall, Source, TrailEdge};

const MAX_DEPTH_CHECK: u8 = policy::MAX_DEPTH;

/// Usage statistics of one node, as recall scores them (folded from the event log).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NodeStats {
    pub recall_count: u64,
    pub last_recalled_at: Option<i64>,
    pub importance: Option<u8>,
}
