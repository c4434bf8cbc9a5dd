//! What happened? The append-only event log: events and their payload encoding, CRC-framed
//! per-session segments, the fold into per-node stats, its snapshot on disk, and the log that ties
//! them together.

inner_modules!(compact, compressed, event, fold, log, segment, snapshot);

pub use compact::{
    CompactPolicy, CompactReport, DEFAULT_ARCHIVE_AFTER_DAYS, DEFAULT_COMPRESS_AFTER_DAYS,
};
pub use event::{Event, EventKind, HitSource, PayloadError};
pub(crate) use fold::RecallStats;
pub(crate) use log::EventLog;
pub use log::{SetAside, SyncPolicy};
