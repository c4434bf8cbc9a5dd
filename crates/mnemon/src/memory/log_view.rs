//! The event log read back whole, for people and tools (`mnemon events dump|verify`): every
//! segment of `events/` and `events/archive/`, its events, and the ranges that did not read.

use super::Memory;
use crate::MemoryDir;
use crate::error::Result;
use crate::events::Event;
use crate::events::log::{list_log, named_as_original, names_header, read_segment};
use crate::fs::Fs;
use std::path::Path;

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
    /// `error` is damage the reader went on past: every event the segment still holds was read
    /// (a compressed segment's damaged first marker, bytes after its last chunk).
    pub read_past: bool,
    /// The segment this file is a copy of (the same header under a name that is not its own;
    /// format-spec/events.md, "File name"): folds count the events both hold once.
    pub copy_of: Option<String>,
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
    /// Files of a segment not read because another file of the same segment is (a plain copy
    /// beside its compressed one, the same segment in both folders, a compressed copy shorter
    /// than the plain file that grew after it), relative to `events/`.
    pub set_aside: Vec<crate::events::SetAside>,
    /// Segments the stats snapshot counts events of that neither `events/` nor
    /// `events/archive/` holds (deleted, or taken back by a `git checkout`), by id: the stats
    /// include events the log no longer has. Only a snapshot can tell: a segment deleted
    /// before any snapshot read it leaves no trace.
    pub missing: Vec<MissingSegment>,
    /// Why `events/archive/` cannot be read (a file stands where the folder belongs), if so:
    /// its segments, if any, are not among `segments`, and which ones are `missing` cannot be
    /// told.
    pub archive_unusable: Option<String>,
}

/// A segment the stats snapshot counted that the log no longer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingSegment {
    /// Its id (the file name without `.seg` / `.seg.zst`).
    pub id: String,
    /// The bytes of it the snapshot had read (its watermark): the events before that offset
    /// are in the stats.
    pub counted_bytes: u64,
}

impl Memory {
    /// Read every event segment back, damaged ones included (reading never changes a file).
    pub fn event_segments(&self) -> Result<EventSegments> {
        let log = &self.events;
        read_segments(log.fs(), log.events_dir(), Some(log.index_dir()))
    }

    /// [`Memory::event_segments`] of the folder `dir` without opening it: the index store is
    /// not read (it may be damaged, held open by a writer, or readable only), and nothing is
    /// written, not even the compaction an open may do.
    pub fn event_segments_of(dir: &MemoryDir) -> Result<EventSegments> {
        dir.check_events_contained()?;
        // `index/` is read for the stats snapshot alone (what it counted of each segment), and
        // not at all when it is not a folder of mnemon's own files: the log is read whatever
        // state the index is in, and a link there is never followed.
        let index = dir.check_index_contained().is_ok().then(|| dir.index());
        read_segments(&crate::fs::RealFs, &dir.events(), index.as_deref())
    }
}

/// Every segment under `events_dir`, with what the stats snapshot in `index_dir` (if any) read
/// of each.
fn read_segments(
    fs: &dyn Fs,
    events_dir: &Path,
    index_dir: Option<&Path>,
) -> Result<EventSegments> {
    let listed = list_log(fs, events_dir)?;
    let (segs, unknown_files) = (listed.segments, listed.unknown);
    let archive_unusable = listed.archive_unusable;
    let set_aside = listed.set_aside;
    let reads: Vec<_> = segs
        .iter()
        .map(|seg| read_segment(fs, &seg.path, seg.file.compressed, 0))
        .collect();
    let copy_of = |i: usize| -> Option<String> {
        let h = reads[i].header.as_ref()?;
        // Most segments are under their own name: no pair to look at.
        if names_header(&segs[i].file.id, h) {
            return None;
        }
        segs.iter()
            .zip(&reads)
            .find(|(o, r)| {
                named_as_original(&segs[i].file.id, h, &o.file.id) && r.header.as_ref() == Some(h)
            })
            .map(|(o, _)| o.shown.clone())
    };
    let copies: Vec<Option<String>> = (0..segs.len()).map(copy_of).collect();
    // What the stats snapshot read of each segment: a segment now shorter than that was cut
    // after it was folded (by hand, a sync tool, a restore), and the events past its end are
    // counted but gone from the log. A cut into the header reads as an empty segment, which
    // is no damage by itself (an interrupted creation), so only the snapshot can tell.
    let read_by_snapshot = index_dir
        .and_then(|index_dir| crate::events::snapshot::Snapshot::open(fs, index_dir).ok())
        .flatten()
        .map(|s| s.watermarks())
        .unwrap_or_default();
    let cut_short = |id: &str, r: &crate::events::log::SegmentRead| -> Option<String> {
        let mark = *read_by_snapshot.get(id)?;
        let held = r.damaged.iter().map(|d| d.end).fold(r.end, u64::max);
        (mark > held && mark > crate::events::log::header_len_of(id)).then(|| {
            format!(
                "cut short: it holds {held} bytes, and the stats snapshot read {mark}; the \
                     events past byte {held} are counted in the stats but gone from the log \
                     (restore the file from a backup or git to keep them)"
            )
        })
    };
    let present: std::collections::HashSet<&str> =
        segs.iter().map(|s| s.file.id.as_str()).collect();
    let lost = match archive_unusable {
        Some(_) => Vec::new(),
        None => crate::events::log::lost_segments(&read_by_snapshot, &present),
    };
    let missing = lost
        .into_iter()
        .map(|(id, counted_bytes)| MissingSegment {
            id: id.to_string(),
            counted_bytes,
        })
        .collect();
    let cuts: Vec<Option<String>> = segs
        .iter()
        .zip(&reads)
        .map(|(seg, r)| cut_short(&seg.file.id, r))
        .collect();
    let segments = segs
        .iter()
        .zip(reads)
        .zip(copies)
        .zip(cuts)
        .map(|(((seg, r), copy_of), cut)| SegmentContents {
            name: seg.shown.clone(),
            session: r.header.as_ref().map(|h| h.session.clone()),
            events: r.events,
            damaged: r.damaged,
            empty: r.empty && cut.is_none(),
            read_past: r.read_past && cut.is_none(),
            error: r.error.or(cut),
            copy_of,
        })
        .collect();
    Ok(EventSegments {
        segments,
        unknown_files,
        set_aside,
        missing,
        archive_unusable,
    })
}
