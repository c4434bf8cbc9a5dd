//! The folded stats: the snapshot plus the events folded after its watermarks, refreshed from
//! other sessions' segments, and written back as a new snapshot.

use super::*;
use crate::error::{Error, Result};
use crate::events::fold::{Stats, Verdicts, max_opt};
use crate::events::segment::Header;
use crate::events::snapshot::{self};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A read view of the folded stats.
pub struct StatsView<'a> {
    pub(super) st: std::sync::RwLockReadGuard<'a, State>,
}

impl StatsView<'_> {
    /// Version of the folded stats this view shows (see [`StatsView::changed_since`]).
    pub fn version(&self) -> u64 {
        self.st.version
    }

    /// The nodes whose stats changed after `version`, or `None` when that is no longer known
    /// (too old, or a change that may touch any node): derived data must then be rebuilt.
    pub fn changed_since(&self, version: u64) -> Option<Vec<&str>> {
        if version > self.st.version {
            return None;
        }
        if version == self.st.version {
            return Some(Vec::new());
        }
        // The entry right after `version` must still be there, or something was forgotten.
        let first = self
            .st
            .changes
            .iter()
            .position(|(v, _)| *v == version + 1)?;
        let mut out = Vec::new();
        for (_, change) in self.st.changes.iter().skip(first) {
            match change {
                Change::All => return None,
                Change::Nodes(nodes) => out.extend(nodes.iter().map(String::as_str)),
                Change::Events(events) => out.extend(events.iter().flat_map(|e| e.kind.nodes())),
            }
        }
        Some(out)
    }

    /// Every node with folded stats (ids may repeat).
    pub fn for_each_node(&self, mut f: impl FnMut(&str)) {
        if let Some(s) = &self.st.snapshot {
            for (k, _) in s.data().nodes.iter() {
                f(k.as_str());
            }
        }
        for k in self.st.delta.nodes.keys() {
            f(k);
        }
    }

    /// A node's folded stats as recall scores them, without allocating.
    pub fn node(&self, id: &str) -> NodeFold {
        let mut f = NodeFold::default();
        // (tagged_ms, session, seq, importance): the fold's last-writer-wins order.
        let mut imp: Option<(i64, &str, u64, u8)> = None;
        let some = |ms: i64| (ms != i64::MIN).then_some(ms);
        if let Some(r) = self
            .st
            .snapshot
            .as_ref()
            .and_then(|s| s.data().nodes.get(id))
        {
            f.recall_count += r.recall_count.to_native();
            f.last_recalled_ms = some(r.last_recalled_ms.to_native());
            f.used_count += r.used_count.to_native();
            f.untied_used += r.untied_used.to_native();
            f.wrong_count += r.wrong_count.to_native();
            f.last_used_ms = some(r.last_used_ms.to_native());
            if r.importance > 0 {
                imp = Some((
                    r.importance_tagged_ms.to_native(),
                    r.key_session.as_str(),
                    r.key_seq.to_native(),
                    r.importance,
                ));
            }
        }
        if let Some(d) = self.st.delta.nodes.get(id) {
            f.recall_count += d.recall_count;
            f.last_recalled_ms = max_opt(f.last_recalled_ms, d.last_recalled_ms);
            f.used_count += d.used_count;
            f.untied_used += d.untied_used;
            f.wrong_count += d.wrong_count;
            f.last_used_ms = max_opt(f.last_used_ms, d.last_used_ms);
            if let (Some(i), Some(tagged_ms), Some((sess, seq))) = (
                d.importance,
                d.importance_tagged_ms,
                d.importance_key.as_ref(),
            ) {
                let cand = (tagged_ms, sess.as_str(), *seq, i);
                if imp.is_none_or(|cur| cand > cur) {
                    imp = Some(cand);
                }
            }
        }
        f.importance = imp.map(|(_, _, _, i)| i);
        f
    }

    /// Bumped whenever the per-question feedback may have changed (see
    /// [`StatsView::for_each_feedback`]): whatever is derived from it is rebuilt then.
    pub fn feedback_version(&self) -> u64 {
        self.st.feedback_version
    }

    /// Every (question key, node, verdicts) the Feedback events hold; a pair may be given twice
    /// (once from the snapshot, once from the events after it): the caller adds them up.
    pub fn for_each_feedback(&self, mut f: impl FnMut(&str, &str, Verdicts)) {
        if let Some(s) = &self.st.snapshot {
            for r in s.data().feedback.iter() {
                let v = Verdicts {
                    used: r.used.to_native(),
                    wrong: r.wrong.to_native(),
                };
                f(r.question.as_str(), r.node.as_str(), v);
            }
        }
        for ((q, n), v) in &self.st.delta.feedback {
            f(q, n, *v);
        }
    }
}

/// A node's folded stats, snapshot and tail together (see [`StatsView::node`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeFold {
    pub recall_count: u64,
    pub last_recalled_ms: Option<i64>,
    pub importance: Option<u8>,
    pub used_count: u64,
    pub untied_used: u64,
    pub wrong_count: u64,
    pub last_used_ms: Option<i64>,
}

impl EventLog {
    /// [`EventLog::refresh`] unless one ran less than `interval` ago: the cheap check made before
    /// each recall so other live sessions' events become visible within `interval`.
    pub fn refresh_if_stale(&self, interval: std::time::Duration) -> Result<u64> {
        {
            let Ok(mut last) = self.last_refresh.lock() else {
                return Ok(0);
            };
            if last.is_some_and(|t| t.elapsed() < interval) {
                return Ok(0);
            }
            *last = Some(std::time::Instant::now());
        }
        self.refresh()
    }

    /// The recorded uncompressed length of the compressed segment at `path`, cached by its path
    /// and size: a compressed file does not change, but one can take another's place (compaction
    /// compressing a longer copy of the segment over it, a merge bringing another clone's).
    pub(super) fn compressed_len(&self, path: &Path) -> Option<u64> {
        let size = self.fs.len(path).ok()?;
        let key = (path.to_path_buf(), size);
        if let Some(len) = self
            .compressed_lens
            .lock()
            .ok()
            .and_then(|m| m.get(&key).copied())
        {
            return len;
        }
        let len = super::segment::compressed_len(self.fs.as_ref(), path);
        if let Ok(mut m) = self.compressed_lens.lock() {
            m.insert(key, len);
        }
        len
    }

    /// Fold events appended since the last fold (by any process) into the stats. Returns how
    /// many events were folded.
    pub fn refresh(&self) -> Result<u64> {
        Ok(self.refresh_listed(self.listing()?, None)?.events)
    }

    /// The segment files of `events/` and of `events/archive/`, as [`list_segments`] finds them.
    pub(super) fn listing(&self) -> Result<Listing> {
        let (segs, _) = list_segments(self.fs.as_ref(), &self.events_dir)?;
        let archive = list_archive(self.fs.as_ref(), &self.events_dir)?;
        if let Some(n) = &archive.unusable {
            self.notice(n.clone());
        }
        Ok(Listing {
            segs,
            archived: archive.segs,
            archive_unusable: archive.unusable.is_some(),
        })
    }

    /// [`EventLog::refresh`] over segment files already listed. With `changed_since` (the
    /// time the stats snapshot was written, at open), compressed segments changed after it are
    /// checked for damage ([`EventLog::check_compressed`]).
    pub(super) fn refresh_listed(
        &self,
        listing: Listing,
        changed_since: Option<i64>,
    ) -> Result<Folded> {
        let Listing { segs, archived, .. } = listing;
        let located: Vec<(PathBuf, SegmentFile)> =
            super::files::one_file_per_segment(self.fs.as_ref(), &self.events_dir, segs, archived)
                .0
                .into_iter()
                .map(|s| (s.path, s.file))
                .collect();
        let mut originals: HashMap<String, (Header, HashSet<u64>)> = HashMap::new();
        let own = self.own_segment_id();
        let marks: HashMap<String, u64> = self
            .state
            .read()
            .map(|s| s.marks.clone())
            .unwrap_or_default();
        let mut folded = 0;
        let mut segments_read = 0;
        let mut delta = Stats::default();
        let mut new_marks = Vec::new();
        let mut checked = 0;
        for (path, seg) in &located {
            if Some(&seg.id) == own.as_ref() {
                continue;
            }
            let mark = marks.get(&seg.id).copied();
            if seg.compressed
                && mark.is_some()
                && let Some(since) = changed_since
                && checked < MAX_CHECKED_AT_OPEN
                && self.fs.modified_ms(path).is_ok_and(|m| m > since)
            {
                checked += 1;
                self.check_compressed(path);
            }
            // A compressed segment was fully folded into a snapshot before it was compressed, but
            // a snapshot written later by a process that had not yet seen its tail can carry an
            // older watermark: the zstd frame header records the segment's length, so a mark
            // short of it is read on from there (segments compressed before the length was
            // recorded are trusted as before).
            if seg.compressed
                && let Some(m) = mark
                && self.compressed_len(path).is_none_or(|len| len <= m)
            {
                continue;
            }
            if !seg.compressed
                && let (Some(m), Ok(len)) = (mark, self.fs.len(path))
                && len <= m
            {
                continue;
            }
            segments_read += 1;
            let mut read = read_segment(self.fs.as_ref(), path, seg.compressed, mark.unwrap_or(0));
            if !seg.compressed {
                self.hold_back_unfinished_recall(path, &mut read);
            }
            self.tell_damage(path, seg.compressed, &read);
            let Some(h) = &read.header else { continue };
            if let Some(original) = self.original_of(&seg.id, h, &located, &mut originals)
                && let Some((_, held)) = originals.get_mut(original)
            {
                let before = read.events.len();
                read.events.retain(|(_, e)| !held.contains(&e.seq));
                // Another copy of the same segment counts none of these again.
                held.extend(read.events.iter().map(|(_, e)| e.seq));
                let shown = path.strip_prefix(&self.events_dir).unwrap_or(path);
                self.notice(format!(
                    "events/{}: a copy of segment {original} (the same writer: session, creation \
                     time and salt); {} of its events are counted already, from {original} or \
                     another copy of it, and are not counted again",
                    shown.display(),
                    before - read.events.len()
                ));
            }
            for (_, ev) in &read.events {
                delta.apply(&h.session, ev);
            }
            folded += read.events.len() as u64;
            new_marks.push((seg.id.clone(), read.end));
        }
        if let Ok(mut st) = self.state.write() {
            if !delta.nodes.is_empty() {
                st.bump(Change::Nodes(delta.nodes.keys().cloned().collect()));
            }
            if !delta.feedback.is_empty() {
                st.feedback_version += 1;
            }
            st.delta.merge(&delta);
            for (id, end) in new_marks {
                let m = st.marks.entry(id).or_insert(0);
                *m = (*m).max(end);
            }
        }
        Ok(Folded {
            events: folded,
            segments: segments_read,
        })
    }

    /// Say what reading the segment at `path` found wrong, if anything: why it stopped early,
    /// and for a compressed segment, damaged ranges. A live segment's damaged range is not told:
    /// a writer killed mid-append leaves one at its tail, and that is no damage to repair; a
    /// compressed segment was complete when it was compressed, so a damaged range in it is
    /// damage done to the file since (or the torn tail of a killed writer, compressed: `events
    /// verify` reports both alike). The texts carry no offsets, so the fold and the check at
    /// open say one thing once.
    fn tell_damage(&self, path: &Path, compressed: bool, read: &SegmentRead) {
        // Named as `events verify` names it: an archived segment is in `events/archive/`.
        let shown = path.strip_prefix(&self.events_dir).unwrap_or(path);
        if let Some(e) = &read.error {
            self.notice(format!("events/{}: {e}", shown.display()));
        }
        if compressed && !read.damaged.is_empty() {
            self.notice(format!(
                "events/{}: damaged: some of its bytes do not read as events, so the events \
                 they held count only as far as a stats snapshot counted them before; keep the \
                 file, and restore it from a backup or git to recover them (`mnemon events \
                 verify` lists the damaged ranges)",
                shown.display()
            ));
        }
    }

    /// Read the compressed segment at `path` whole, only to tell damage in it. A compressed
    /// segment that a snapshot covers is not read again by folds, so damage done to it later
    /// (a flipped byte on disk, a bad copy or restore) would go unsaid until `events verify`.
    /// Reading every compressed segment at every open would cost a decompression of the whole
    /// archive each time; instead, at open, the ones whose modification time is after the
    /// snapshot's are read. Compaction dates a compressed segment by its last write, before
    /// the snapshot that covered it, and archiving keeps that date, so an untouched one is
    /// never read here, while a write into the file (or a copy put in its place) dates it
    /// later. Limit: a damaged file given back an old date (`touch`, `cp -p`, `rsync -a`) is
    /// told only by folds that read it and by `events verify`.
    fn check_compressed(&self, path: &Path) {
        let read = read_segment(self.fs.as_ref(), path, true, 0);
        self.tell_damage(path, true, &read);
    }

    /// The segment that `id` (with header `h`) is a copy of, if any, its events' sequence numbers
    /// then in `originals`: `id` is not the name its header gives it, and a segment under
    /// that name has the same header (session, creation time, salt), so the same writer wrote
    /// both and a sequence number is one event in either. The copy counts only the events the
    /// original lacks (it may hold more: the original damaged or cut back since the copy was
    /// taken). A segment renamed whose original is gone is no copy: its events count.
    /// `originals` keeps, per original read in this fold, the sequence numbers counted so far.
    fn original_of<'a>(
        &self,
        id: &str,
        h: &Header,
        located: &'a [(PathBuf, SegmentFile)],
        originals: &mut HashMap<String, (Header, HashSet<u64>)>,
    ) -> Option<&'a str> {
        if names_header(id, h) {
            return None;
        }
        for (path, other) in located {
            if !named_as_original(id, h, &other.id) {
                continue;
            }
            if let Some((oh, _)) = originals.get(&other.id) {
                if oh == h {
                    return Some(&other.id);
                }
                continue;
            }
            // Named alike, but another segment of the writer (another salt) is no original.
            let r = read_segment(self.fs.as_ref(), path, other.compressed, 0);
            if r.header.as_ref() == Some(h) {
                let seqs = r.events.iter().map(|(_, e)| e.seq).collect();
                originals.insert(other.id.clone(), (h.clone(), seqs));
                return Some(&other.id);
            }
        }
        None
    }

    /// A recall's events are one batch (its QueryEvent, the Feedback of a fetch, one RecallHit per
    /// result). When the events read end inside one and the segment's writer is alive (it holds
    /// the segment's lock), the rest is being written, or the write failed and is being cut
    /// back: the batch is left for a later fold (the watermark stays at its QueryEvent), so a
    /// recall is never counted in part. A writer that is gone left its last batch as it is, and
    /// what is complete of it is counted (format-spec/events.md, crash analysis).
    pub(super) fn hold_back_unfinished_recall(&self, path: &Path, read: &mut SegmentRead) {
        let Some(q) = unfinished_recall(&read.events) else {
            return;
        };
        if !matches!(self.fs.try_lock(path), Ok(None)) {
            return;
        }
        read.end = read.events[q].0;
        read.events.truncate(q);
    }

    /// Write a snapshot of the current stats (after making this process's events durable).
    pub fn write_snapshot(&self) -> Result<()> {
        self.sync()?;
        let st = self.state.read().map_err(|_| Error::Poisoned {
            path: self.index_dir.clone(),
            reason: "a thread panicked while folding".into(),
        })?;
        let mut all = match &st.snapshot {
            Some(s) => s.to_owned().0,
            None => Stats::default(),
        };
        all.merge(&st.delta);
        snapshot::write(self.fs.as_ref(), &self.index_dir, &all, &st.marks)
    }
}

/// What one fold read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Folded {
    /// Events folded.
    pub events: u64,
    /// Segment files read (the ones a snapshot's watermarks did not already cover).
    pub segments: usize,
}
