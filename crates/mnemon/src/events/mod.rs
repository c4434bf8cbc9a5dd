//! What happened? The append-only event log: events and their payload encoding, CRC-framed
//! per-session segments, the fold into per-node stats, its snapshot on disk, and the log that ties
//! them together.

pub mod compact;
pub mod event;
pub mod fold;
pub mod log;
pub mod segment;
pub mod snapshot;

pub use compact::{CompactPolicy, CompactReport};
pub use event::{Event, EventKind, HitSource};
pub use fold::{RecallStats, Stats};
pub use log::{EventLog, SyncPolicy};
