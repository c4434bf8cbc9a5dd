//! The event log read back whole, for people and tools (`mnemon events dump|verify`): every
//! segment of `events/` and `events/archive/`, its events, and the ranges that did not read.

use super::Memory;
use crate::error::Result;
use crate::events::Event;
use crate::events::log::{all_segments, read_segment};

/// One segment file read back.
#[derive(Debug, Clone)]
pub struct SegmentContents {
    /// Its name relative to `events/` (`archive/<name>` for an archived one).
    pub name: String,
    /// The session that wrote it (from its header; `None` when the header did not read).
    pub session: Option<String>,
    /// Its events, each with the byte offset of its frame.
    pub events: Vec<(u64, Event)>,
    /// Byte ranges that did not read as frames (damage; the events around them are kept).
    pub damaged: Vec<std::ops::Range<u64>>,
    /// A segment whose creation never completed: it holds nothing, and is not damage.
    pub empty: bool,
    /// Why reading stopped before the end, if it did (what was read is kept).
    pub error: Option<String>,
}

impl SegmentContents {
    /// Whether the segment read whole (no damaged range, no early stop).
    pub fn healthy(&self) -> bool {
        self.damaged.is_empty() && self.error.is_none()
    }
}

/// Every segment of the log, read back.
#[derive(Debug, Clone)]
pub struct EventSegments {
    /// The segments, in the order folds read them.
    pub segments: Vec<SegmentContents>,
    /// Files in `events/` or `events/archive/` that are not segments (relative to `events/`):
    /// mnemon neither reads nor removes them.
    pub unknown_files: Vec<String>,
}

impl Memory {
    /// Read every event segment back, damaged ones included (reading never changes a file).
    pub fn event_segments(&self) -> Result<EventSegments> {
        let log = &self.events;
        let fs = log.fs();
        let (segs, unknown_files) = all_segments(fs, log.events_dir())?;
        let segments = segs
            .iter()
            .map(|seg| {
                let r = read_segment(fs, &seg.path, seg.file.compressed, 0);
                SegmentContents {
                    name: seg.shown.clone(),
                    session: r.header.as_ref().map(|h| h.session.clone()),
                    events: r.events,
                    damaged: r.damaged,
                    empty: r.empty,
                    error: r.error,
                }
            })
            .collect();
        Ok(EventSegments {
            segments,
            unknown_files,
        })
    }
}
