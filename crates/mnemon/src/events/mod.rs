//! What happened? The append-only event log: events and their payload encoding, CRC-framed
//! per-session segments, the fold into per-node stats, its snapshot on disk, and the log that ties
//! them together.

// Inner modules: crate-private, or public but hidden with the `internals` feature (lib.rs).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod compact;
#[cfg(not(feature = "internals"))]
pub(crate) mod compact;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod compressed;
#[cfg(not(feature = "internals"))]
pub(crate) mod compressed;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod event;
#[cfg(not(feature = "internals"))]
pub(crate) mod event;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod fold;
#[cfg(not(feature = "internals"))]
pub(crate) mod fold;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod log;
#[cfg(not(feature = "internals"))]
pub(crate) mod log;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod segment;
#[cfg(not(feature = "internals"))]
pub(crate) mod segment;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod snapshot;
#[cfg(not(feature = "internals"))]
pub(crate) mod snapshot;

pub use compact::{
    CompactPolicy, CompactReport, DEFAULT_ARCHIVE_AFTER_DAYS, DEFAULT_COMPRESS_AFTER_DAYS,
};
pub use event::{Event, EventKind, HitSource, PayloadError};
pub(crate) use fold::RecallStats;
pub(crate) use log::EventLog;
pub use log::{SetAside, SyncPolicy};
