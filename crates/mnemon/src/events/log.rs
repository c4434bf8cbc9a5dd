//! The event log of a memory folder: this process's segment writer, the folded stats (snapshot +
//! tail), and reading every segment.

use super::event::{Event, EventKind};
use super::fold::{RecallStats, Stats, Verdicts, max_opt};
use super::segment::{self, FrameReader, FrameSeal, Header, HeaderError, Item};
use super::snapshot::{self, Snapshot};
use crate::error::{Error, Result};
use crate::fs::{Fs, FsFile};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// Extension of a live segment.
pub const SEGMENT_EXT: &str = ".seg";
/// Extension of a compressed segment.
pub const COMPRESSED_EXT: &str = ".seg.zst";
/// A snapshot is written at open when more events than this were folded from the tail.
pub const SNAPSHOT_AFTER_EVENTS: u64 = 10_000;

/// When appends become durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// Handed to the OS after every recall (survives a process crash); fsynced when the
    /// memory is closed.
    #[default]
    Close,
    /// Fsynced after every recall and importance tag (survives a power loss; slower).
    Always,
    /// Handed to the OS after every recall; never fsynced by mnemon.
    Never,
}

/// A segment file found in `events/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFile {
    /// File name.
    pub name: String,
    /// File name without `.seg` / `.seg.zst`: the key of its watermark.
    pub id: String,
    pub compressed: bool,
}

/// The segment files of `events/`, sorted by name (= by creation time), and the other files.
pub fn list_segments(fs: &dyn Fs, events_dir: &Path) -> Result<(Vec<SegmentFile>, Vec<String>)> {
    let names = match fs.list(events_dir) {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io("list", events_dir, e)),
    };
    let mut segs = Vec::new();
    let mut other = Vec::new();
    for name in names {
        // Hidden names are mnemon's own: locks, and temporaries never read as segments.
        if name.starts_with('.') {
            continue;
        }
        if let Some(id) = name.strip_suffix(COMPRESSED_EXT) {
            segs.push(SegmentFile {
                id: id.to_string(),
                name,
                compressed: true,
            });
        } else if let Some(id) = name.strip_suffix(SEGMENT_EXT) {
            segs.push(SegmentFile {
                id: id.to_string(),
                name,
                compressed: false,
            });
        } else {
            other.push(name);
        }
    }
    segs.sort_by(|a, b| a.name.cmp(&b.name));
    other.sort();
    Ok((segs, other))
}

/// A segment file of the log, wherever it is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedSegment {
    pub path: PathBuf,
    /// Its name relative to `events/` (`archive/<name>` for an archived one).
    pub shown: String,
    pub file: SegmentFile,
}

/// Every segment file of the log, in `events/` and in `events/archive/` (both are read by every
/// fold), and the files of either folder that are not segments (relative to `events/`).
pub fn all_segments(fs: &dyn Fs, events_dir: &Path) -> Result<(Vec<LocatedSegment>, Vec<String>)> {
    let archive_name = super::segment::ARCHIVE_DIR;
    let archive = events_dir.join(archive_name);
    let (segs, other) = list_segments(fs, events_dir)?;
    let (archived, archived_other) = list_segments(fs, &archive)?;
    let mut out: Vec<LocatedSegment> = segs
        .into_iter()
        .map(|file| LocatedSegment {
            path: events_dir.join(&file.name),
            shown: file.name.clone(),
            file,
        })
        .collect();
    out.extend(archived.into_iter().map(|file| LocatedSegment {
        path: archive.join(&file.name),
        shown: format!("{archive_name}/{}", file.name),
        file,
    }));
    // By creation time, wherever kept.
    out.sort_by(|a, b| a.file.name.cmp(&b.file.name));
    let mut unknown: Vec<String> = other.into_iter().filter(|n| n != archive_name).collect();
    unknown.extend(
        archived_other
            .into_iter()
            .map(|n| format!("{archive_name}/{n}")),
    );
    Ok((out, unknown))
}

/// What reading one segment found.
#[derive(Debug, Default)]
pub struct SegmentRead {
    pub header: Option<Header>,
    /// Events with their frame offsets.
    pub events: Vec<(u64, Event)>,
    pub damaged: Vec<std::ops::Range<u64>>,
    /// Offset just past the last good frame (the next watermark).
    pub end: u64,
    /// No complete header, and the bytes are the start of one: a segment whose creation never
    /// completed (0 bytes, a header cut short by a crash or a full disk). It holds no events and
    /// is not damage.
    pub empty: bool,
    /// Why reading stopped early, if it did (what was read is kept).
    pub error: Option<String>,
}

/// Whether a compressed segment (in `events/` or its archive) already has this id. A new
/// segment must not reuse it: readers take the compressed copy of an id as authoritative, so the
/// new segment's events would never be read (found by the `compaction_ops` fuzz target: a writer
/// of the same session, process and millisecond as a segment compressed meanwhile).
pub fn compressed_id_exists(fs: &dyn Fs, events_dir: &Path, id: &str) -> bool {
    let name = format!("{id}{COMPRESSED_EXT}");
    let archive = events_dir.join(super::segment::ARCHIVE_DIR);
    fs.len(&events_dir.join(&name)).is_ok() || fs.len(&archive.join(&name)).is_ok()
}

/// Open a segment's byte stream (decompressing `.seg.zst`).
pub fn open_stream(
    fs: &dyn Fs,
    path: &Path,
    compressed: bool,
) -> std::io::Result<Box<dyn Read + Send>> {
    let raw = fs.open_read(path)?;
    if compressed {
        Ok(Box::new(zstd::stream::read::Decoder::new(raw)?))
    } else {
        Ok(raw)
    }
}

/// Read the events of a segment at or after `from` (an offset in its uncompressed stream).
pub fn read_segment(fs: &dyn Fs, path: &Path, compressed: bool, from: u64) -> SegmentRead {
    let mut out = SegmentRead::default();
    let mut stream = match open_stream(fs, path, compressed) {
        Ok(s) => s,
        Err(e) => {
            out.error = Some(format!("cannot open: {e}"));
            return out;
        }
    };
    // The header (its version says where the session id is and how frames are sealed).
    let (seal, header_len) = match Header::read(&mut stream) {
        Ok((h, len)) => {
            let seal = h.seal;
            out.header = Some(h);
            (seal, len as u64)
        }
        Err(HeaderError::Incomplete) => {
            out.empty = true;
            return out;
        }
        Err(HeaderError::Invalid(e)) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let start = from.max(header_len);
    let stream: Box<dyn Read + Send> = if compressed || start == header_len {
        // Skip forward in the stream we have (compressed streams cannot seek).
        let skip = start - header_len;
        if skip > 0
            && let Err(e) = std::io::copy(&mut (&mut stream).take(skip), &mut std::io::sink())
        {
            out.error = Some(format!("cannot skip to the watermark ({e})"));
            return out;
        }
        stream
    } else {
        match fs.open_read_at(path, start) {
            Ok(s) => s,
            Err(e) => {
                out.error = Some(format!("cannot seek to the watermark ({e})"));
                return out;
            }
        }
    };
    out.end = start;
    let mut reader = FrameReader::new(stream, seal, start);
    for item in reader.by_ref() {
        match item {
            Item::Event { offset, end, event } => {
                out.events.push((offset, event));
                out.end = end;
            }
            Item::Damaged(r) => out.damaged.push(r),
        }
    }
    if let Some(e) = reader.io_error {
        out.error = Some(format!(
            "read failed midway ({e}); kept the events before it"
        ));
    }
    out
}

struct Writer {
    file: Box<dyn FsFile>,
    id: String,
    path: PathBuf,
    /// The segment's salt, from its header: every frame appended is sealed with it.
    seal: FrameSeal,
    buf: Vec<u8>,
    /// Bytes of the file that hold its header and acknowledged events: a failed append is cut
    /// back to this length.
    len: u64,
    /// Length of the header: a segment no longer than this holds no events.
    header_len: u64,
    /// Set when a failed append could not be cut back: the file may hold bytes past `len`, which
    /// are removed before anything else is written or synced.
    unclean: Option<String>,
    /// Held for the writer's life: compaction never touches a segment that is still written.
    _live: Option<crate::fs::LockGuard>,
}

/// This process's segments.
#[derive(Default)]
struct Slot {
    /// The segment appends go to (created at the first event).
    current: Option<Writer>,
    /// Segments left behind after a failed append (cut back to their acknowledged events): the
    /// next [`EventLog::sync`] makes them durable and lets them go.
    retired: Vec<Writer>,
    /// Seq of the next event: it continues across this process's segments, so no two events of
    /// the session share a (timestamp, seq).
    seq: u64,
    /// `n` of the next segment's name: a process that starts several segments within one
    /// millisecond (a failing disk) never runs out of names.
    next_n: u32,
}

/// Segments left behind by failed appends that wait for the next sync; past this many the oldest
/// is fsynced and let go at once (a disk that keeps filling and emptying holds no more files open).
const MAX_RETIRED_SEGMENTS: usize = 8;

/// Bound on the names tried for a new segment (`n` of the file name).
const MAX_NAME_ATTEMPTS: u32 = 16;

/// Index of the QueryEvent that starts the last batch of `events` when that batch ends before
/// its `result_count` RecallHits: everything after the QueryEvent belongs to it (its hits and
/// feedback, by qid), and fewer hits than announced were read.
fn unfinished_recall(events: &[(u64, Event)]) -> Option<usize> {
    let q = events
        .iter()
        .rposition(|(_, e)| matches!(e.kind, EventKind::Query { .. }))?;
    let EventKind::Query {
        qid, result_count, ..
    } = &events[q].1.kind
    else {
        return None;
    };
    let mut hits = 0u64;
    for (_, e) in &events[q + 1..] {
        match &e.kind {
            EventKind::RecallHit { qid: of, .. } | EventKind::Feedback { qid: of, .. }
                if of == qid =>
            {
                hits += u64::from(matches!(e.kind, EventKind::RecallHit { .. }));
            }
            _ => return None,
        }
    }
    (hits < u64::from(*result_count)).then_some(q)
}

/// What a user reads when events could not be written: nothing of them was kept, and what to do.
fn not_recorded(what: &str, e: &std::io::Error) -> String {
    let advice = match e.kind() {
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
            "the disk is full: free space, and later events are recorded again without a restart"
        }
        _ => "the next event is tried again, in a new segment",
    };
    format!("{what} failed ({e}); nothing of these events was recorded; {advice}")
}

/// Cut `w`'s file back to its acknowledged events (made durable again under
/// `SyncPolicy::Always`).
fn cut_back(w: &mut Writer, sync: SyncPolicy) -> std::io::Result<()> {
    w.file.truncate(w.len)?;
    if sync == SyncPolicy::Always {
        w.file.sync()?;
    }
    Ok(())
}

/// Change-log entries kept (a reader further behind rebuilds whatever it derived from the stats).
pub const MAX_STATS_CHANGES: usize = 64;

/// Folded stats: a snapshot (zero-copy) plus what was folded after its watermarks.
struct State {
    snapshot: Option<Snapshot>,
    delta: Stats,
    /// Current watermark of every segment seen (snapshot's, advanced by folding).
    marks: HashMap<String, u64>,
    /// Bumped by every change of the folded stats.
    version: u64,
    /// What each recent version changed, oldest first.
    changes: std::collections::VecDeque<(u64, Change)>,
    /// Bumped when the per-question feedback may have changed.
    feedback_version: u64,
}

/// What one version of the folded stats changed.
enum Change {
    /// Possibly any node (a new snapshot).
    All,
    /// These nodes (another process's events, folded).
    Nodes(Vec<String>),
    /// The nodes of these events (this process's append: kept as they are, no copies).
    Events(Vec<Event>),
}

impl State {
    /// Record a new version with its change.
    fn bump(&mut self, change: Change) {
        self.version += 1;
        if self.changes.len() == MAX_STATS_CHANGES {
            self.changes.pop_front();
        }
        self.changes.push_back((self.version, change));
    }
}

/// A read view of the folded stats.
pub struct StatsView<'a> {
    st: std::sync::RwLockReadGuard<'a, State>,
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

/// The event log.
pub struct EventLog {
    fs: Arc<dyn Fs>,
    events_dir: PathBuf,
    index_dir: PathBuf,
    session: String,
    sync: SyncPolicy,
    writer: Mutex<Slot>,
    state: RwLock<State>,
    notices: Mutex<Vec<String>>,
    last_refresh: Mutex<Option<std::time::Instant>>,
    /// Uncompressed length of each compressed segment seen, from its zstd frame header (`None`:
    /// not recorded). Compressed segments never change, so each is read once per process.
    compressed_lens: Mutex<HashMap<String, Option<u64>>>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A new session id for this process.
pub fn new_session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("p{}-{:08x}", std::process::id(), nanos)
}

impl EventLog {
    /// Open the log: read the snapshot (or re-fold everything if it is unusable), fold the tail.
    pub fn open(
        fs: Arc<dyn Fs>,
        events_dir: PathBuf,
        index_dir: PathBuf,
        session: Option<String>,
        sync: SyncPolicy,
    ) -> Result<EventLog> {
        let session = match session {
            Some(s) if segment::valid_session(&s) => s,
            Some(s) => {
                return Err(Error::InvalidArgument {
                    what: "session",
                    message: format!("{s:?}: use 1 to 64 characters from A-Z a-z 0-9 . _ -"),
                });
            }
            None => new_session_id(),
        };
        fs.create_dir_all(&events_dir)
            .map_err(|e| Error::io("create folder", &events_dir, e))?;
        let log = EventLog {
            fs,
            events_dir,
            index_dir,
            session,
            sync,
            writer: Mutex::new(Slot::default()),
            state: RwLock::new(State {
                snapshot: None,
                delta: Stats::default(),
                marks: HashMap::new(),
                version: 0,
                changes: std::collections::VecDeque::new(),
                feedback_version: 0,
            }),
            notices: Mutex::new(Vec::new()),
            last_refresh: Mutex::new(Some(std::time::Instant::now())),
            compressed_lens: Mutex::new(HashMap::new()),
        };
        let snapshot = match Snapshot::open(log.fs.as_ref(), &log.index_dir) {
            Ok(s) => s,
            Err(reason) => {
                log.notice(format!(
                    "stats snapshot {} is unusable ({reason}): re-folding every event",
                    log.index_dir.join(snapshot::SNAPSHOT_FILE).display()
                ));
                None
            }
        };
        if let Ok(mut st) = log.state.write() {
            if let Some(s) = &snapshot {
                st.marks = s.watermarks();
            }
            st.snapshot = snapshot;
            st.bump(Change::All);
            st.feedback_version += 1;
        }
        let folded = log.refresh()?;
        if folded > SNAPSHOT_AFTER_EVENTS
            && let Err(e) = log.write_snapshot()
        {
            log.notice(format!("could not write the stats snapshot: {e}"));
        }
        Ok(log)
    }

    fn notice(&self, n: String) {
        if let Ok(mut v) = self.notices.lock() {
            v.push(n);
        }
    }

    /// Messages about repairs (unusable snapshot, damaged frames), for the caller to show.
    pub fn take_notices(&self) -> Vec<String> {
        self.notices
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }

    /// This process's session id.
    pub fn session(&self) -> &str {
        &self.session
    }

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

    /// The recorded uncompressed length of compressed segment `id` at `path` (cached).
    fn compressed_len(&self, id: &str, path: &Path) -> Option<u64> {
        if let Some(len) = self
            .compressed_lens
            .lock()
            .ok()
            .and_then(|m| m.get(id).copied())
        {
            return len;
        }
        let len = super::segment::compressed_len(self.fs.as_ref(), path);
        if let Ok(mut m) = self.compressed_lens.lock() {
            m.insert(id.to_string(), len);
        }
        len
    }

    /// Fold events appended since the last fold (by any process) into the stats. Returns how
    /// many events were folded.
    pub fn refresh(&self) -> Result<u64> {
        let (mut segs, _) = list_segments(self.fs.as_ref(), &self.events_dir)?;
        // Failure mode 1: a crash between rename and remove leaves `X.seg` beside `X.seg.zst`;
        // the compressed copy is authoritative (compaction removes the orphan later).
        let compressed: std::collections::HashSet<String> = segs
            .iter()
            .filter(|s| s.compressed)
            .map(|s| s.id.clone())
            .collect();
        segs.retain(|s| s.compressed || !compressed.contains(&s.id));
        let archive = self.events_dir.join(super::segment::ARCHIVE_DIR);
        let (archived, _) = list_segments(self.fs.as_ref(), &archive)?;
        let mut located: Vec<(PathBuf, SegmentFile)> = archived
            .into_iter()
            .filter(|s| s.compressed && !compressed.contains(&s.id))
            .map(|s| (archive.join(&s.name), s))
            .collect();
        located.extend(segs.into_iter().map(|s| (self.events_dir.join(&s.name), s)));
        let own = self.own_segment_id();
        let marks: HashMap<String, u64> = self
            .state
            .read()
            .map(|s| s.marks.clone())
            .unwrap_or_default();
        let mut folded = 0;
        let mut delta = Stats::default();
        let mut new_marks = Vec::new();
        for (path, seg) in located {
            if Some(&seg.id) == own.as_ref() {
                continue;
            }
            let mark = marks.get(&seg.id).copied();
            // A compressed segment was fully folded into a snapshot before it was compressed, but
            // a snapshot written later by a process that had not yet seen its tail can carry an
            // older watermark: the zstd frame header records the segment's length, so a mark
            // short of it is read on from there (segments compressed before the length was
            // recorded are trusted as before).
            if seg.compressed
                && let Some(m) = mark
                && self
                    .compressed_len(&seg.id, &path)
                    .is_none_or(|len| len <= m)
            {
                continue;
            }
            if !seg.compressed
                && let (Some(m), Ok(len)) = (mark, self.fs.len(&path))
                && len <= m
            {
                continue;
            }
            let mut read = read_segment(self.fs.as_ref(), &path, seg.compressed, mark.unwrap_or(0));
            if !seg.compressed {
                self.hold_back_unfinished_recall(&path, &mut read);
            }
            if let Some(e) = &read.error {
                self.notice(format!("events/{}: {e}", seg.name));
            }
            let Some(h) = &read.header else { continue };
            for (_, ev) in &read.events {
                delta.apply(&h.session, ev);
            }
            folded += read.events.len() as u64;
            new_marks.push((seg.id, read.end));
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
        Ok(folded)
    }

    /// A recall's events are one batch (its QueryEvent, the Feedback of a fetch, one RecallHit per
    /// result). When the events read end inside one and the segment's writer is alive (it holds
    /// the segment's lock), the rest is being written, or the write failed and is being cut
    /// back: the batch is left for a later fold (the watermark stays at its QueryEvent), so a
    /// recall is never counted in part. A writer that is gone left its last batch as it is, and
    /// what is complete of it is counted (format-spec/events.md, crash analysis).
    fn hold_back_unfinished_recall(&self, path: &Path, read: &mut SegmentRead) {
        let Some(q) = unfinished_recall(&read.events) else {
            return;
        };
        if !matches!(self.fs.try_lock(path), Ok(None)) {
            return;
        }
        read.end = read.events[q].0;
        read.events.truncate(q);
    }

    /// The id of this process's segment, once it has one.
    pub fn own_segment_id(&self) -> Option<String> {
        self.writer
            .lock()
            .ok()
            .and_then(|w| w.current.as_ref().map(|w| w.id.clone()))
    }

    /// Stats of one node (snapshot + tail).
    pub fn stats(&self, id: &str) -> RecallStats {
        let Ok(st) = self.state.read() else {
            return RecallStats::default();
        };
        let mut s = st
            .snapshot
            .as_ref()
            .and_then(|snap| snap.get(id))
            .unwrap_or_default();
        if let Some(d) = st.delta.nodes.get(id) {
            s.merge(d);
        }
        s
    }

    /// A read view of the stats for many lookups (one lock for a whole recall).
    pub fn view(&self) -> Option<StatsView<'_>> {
        self.state.read().ok().map(|g| StatsView { st: g })
    }

    /// Every node with an importance mark: (id, importance, recall_count).
    pub fn important_nodes(&self) -> Vec<(String, u8, u64)> {
        let Ok(st) = self.state.read() else {
            return Vec::new();
        };
        let mut ids: std::collections::BTreeSet<String> = st
            .delta
            .nodes
            .iter()
            .filter(|(_, s)| s.importance.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        if let Some(snap) = &st.snapshot {
            for (k, v) in snap.data().nodes.iter() {
                if v.importance > 0 {
                    ids.insert(k.as_str().to_string());
                }
            }
        }
        drop(st);
        ids.into_iter()
            .filter_map(|id| {
                let s = self.stats(&id);
                s.importance.map(|i| (id, i, s.recall_count))
            })
            .collect()
    }

    /// Events counted so far.
    pub fn event_count(&self) -> u64 {
        self.state
            .read()
            .map(|st| st.snapshot.as_ref().map_or(0, |s| s.events()) + st.delta.events)
            .unwrap_or(0)
    }

    fn lock_writer(&self) -> Result<std::sync::MutexGuard<'_, Slot>> {
        self.writer.lock().map_err(|_| Error::Poisoned {
            path: self.events_dir.clone(),
            reason: "a thread panicked while appending".into(),
        })
    }

    /// Leave the current segment after a failed append that was cut back: one holding
    /// acknowledged events waits in `retired` for the next sync; one holding none is removed. Its
    /// offsets are never written again, so a reader that looked at the failed bytes meanwhile
    /// never finds other events where it left off.
    fn retire(&self, slot: &mut Slot) {
        if let Some(w) = slot.current.take() {
            if w.len > w.header_len {
                slot.retired.push(w);
                if slot.retired.len() > MAX_RETIRED_SEGMENTS {
                    let mut oldest = slot.retired.remove(0);
                    if self.sync != SyncPolicy::Never
                        && let Err(e) = oldest.file.sync()
                    {
                        self.notice(format!(
                            "event segment {}: fsync failed ({e}); its events are kept and \
                             counted but may not survive a power loss",
                            oldest.path.display()
                        ));
                    }
                }
            } else {
                let path = w.path.clone();
                drop(w);
                // A header-only segment left behind is read as holding nothing.
                let _ = self.fs.remove(&path);
            }
        }
    }

    /// Cut back what an earlier failed append left in the current segment, then retire it.
    fn repair(&self, slot: &mut Slot) -> Result<()> {
        let Some(w) = slot.current.as_mut() else {
            return Ok(());
        };
        let Some(why) = w.unclean.clone() else {
            return Ok(());
        };
        if let Err(e) = cut_back(w, self.sync) {
            return Err(Error::EventLog {
                path: w.path.clone(),
                message: format!(
                    "bytes of an earlier failed write ({why}) are still to be removed and that \
                     failed again ({e}); nothing of these events was recorded; free disk space \
                     or fix the error: the next event tries again"
                ),
            });
        }
        self.retire(slot);
        Ok(())
    }

    /// Append events (one batch: a recall's query and hits, or one tag), fold them, and make them
    /// visible to other processes (flushed to the OS; fsynced under `SyncPolicy::Always`).
    ///
    /// A batch is recorded whole or not at all: when the write (or its fsync) fails, the
    /// segment is cut back to the batch's start and the error is returned; the next append goes
    /// to a new segment, so writes resume by themselves once the cause (a full disk) is gone.
    pub fn append(&self, kinds: Vec<EventKind>) -> Result<()> {
        let mut guard = self.lock_writer()?;
        let slot = &mut *guard;
        self.repair(slot)?;
        if slot.current.is_none() {
            let (w, n) = self.create_writer(slot.next_n)?;
            slot.current = Some(w);
            slot.next_n = n + 1;
        }
        let Some(w) = slot.current.as_mut() else {
            return Ok(());
        };
        let ts_ms = now_ms();
        w.buf.clear();
        let mut batch = Vec::with_capacity(kinds.len());
        for kind in kinds {
            let e = Event {
                ts_ms,
                seq: slot.seq,
                kind,
            };
            slot.seq += 1;
            segment::encode_frame(&e, w.seal, &mut w.buf);
            batch.push(e);
        }
        let mut result = w.file.write_all(&w.buf).map_err(|e| ("write", e));
        if result.is_ok() && self.sync == SyncPolicy::Always {
            result = w.file.sync().map_err(|e| ("fsync", e));
        }
        let batch_len = w.buf.len() as u64;
        w.buf.clear();
        if let Err((op, e)) = result {
            let path = w.path.clone();
            let mut message = not_recorded(op, &e);
            match cut_back(w, self.sync) {
                Ok(()) => self.retire(slot),
                Err(cut) => {
                    // Removed before the next write or sync (`repair`).
                    w.unclean = Some(e.to_string());
                    message.push_str(&format!(
                        " (its partial bytes could not be removed yet: {cut}; they will be)"
                    ));
                }
            }
            return Err(Error::EventLog { path, message });
        }
        w.len += batch_len;
        let (id, len) = (w.id.clone(), w.len);
        if let Ok(mut st) = self.state.write() {
            for e in &batch {
                st.delta.apply(&self.session, e);
            }
            if let Some(m) = st.marks.get_mut(&id) {
                *m = len;
            } else {
                st.marks.insert(id, len);
            }
            if batch
                .iter()
                .any(|e| matches!(&e.kind, EventKind::Feedback { query, .. } if !query.trim().is_empty()))
            {
                st.feedback_version += 1;
            }
            if batch.iter().any(|e| e.kind.changes_nodes()) {
                st.bump(Change::Events(batch));
            }
        }
        Ok(())
    }

    /// A new segment for this process: its header is written under a hidden temporary name and
    /// the file is then linked under its final name (never replacing one), so no reader ever
    /// lists a segment without its header.
    fn create_writer(&self, first_n: u32) -> Result<(Writer, u32)> {
        let created_ms = now_ms();
        // Format version 2: a fresh random salt seals every frame of this segment.
        let header = Header::new(self.session.clone(), created_ms);
        let seal = header.seal;
        let header = header.encode();
        for attempt in first_n..first_n.saturating_add(MAX_NAME_ATTEMPTS) {
            let id = format!(
                "{created_ms:013}-{}-{}-{attempt}",
                self.session,
                std::process::id()
            );
            if compressed_id_exists(self.fs.as_ref(), &self.events_dir, &id) {
                continue;
            }
            let path = self.events_dir.join(format!("{id}{SEGMENT_EXT}"));
            match self.publish_segment(&path, &header) {
                Ok((file, live)) => {
                    let w = Writer {
                        file,
                        id,
                        path,
                        seal,
                        buf: Vec::with_capacity(4096),
                        len: header.len() as u64,
                        header_len: header.len() as u64,
                        unclean: None,
                        _live: live,
                    };
                    return Ok((w, attempt));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(Error::EventLog {
                        path,
                        message: not_recorded("creating the segment", &e),
                    });
                }
            }
        }
        Err(Error::InvalidArgument {
            what: "session",
            message: "could not find a free segment file name".into(),
        })
    }

    /// Create the segment `path` holding `header` (format-spec/events.md, "Creating a
    /// segment"): written and locked under a temporary name (`crate::fs::temp_path`), then linked as `path`
    /// (`AlreadyExists` when it is taken), then the temporary name removed. Nothing is left
    /// behind on failure.
    fn publish_segment(
        &self,
        path: &Path,
        header: &[u8],
    ) -> std::io::Result<(Box<dyn FsFile>, Option<crate::fs::LockGuard>)> {
        let fs = self.fs.as_ref();
        let tmp = crate::fs::temp_path(path);
        let mut file = fs.create_new(&tmp)?;
        // The lock belongs to the file, so it holds under the final name too.
        let staged = fs.try_lock(&tmp).and_then(|live| {
            file.write_all(header)?;
            if self.sync == SyncPolicy::Always {
                file.sync()?;
            }
            Ok(live)
        });
        let live = match staged {
            Ok(live) => live,
            Err(e) => {
                drop(file);
                let _ = fs.remove(&tmp);
                return Err(e);
            }
        };
        match fs.link_new(&tmp, path) {
            Ok(()) => {
                // A name left by a failure here is a second name of the segment: compaction
                // removes stale temporaries.
                let _ = fs.remove(&tmp);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                drop((file, live));
                let _ = fs.remove(&tmp);
                return Err(e);
            }
            Err(_) => {
                // No hard links on this file system: create the segment under its final name.
                // Until its header is written readers take it as empty, never as damage.
                drop((file, live));
                let _ = fs.remove(&tmp);
                return self.create_in_place(path, header);
            }
        }
        if self.sync == SyncPolicy::Always {
            fs.sync_dir(&self.events_dir)?;
        }
        Ok((file, live))
    }

    /// [`EventLog::publish_segment`] where the file system has no hard links.
    fn create_in_place(
        &self,
        path: &Path,
        header: &[u8],
    ) -> std::io::Result<(Box<dyn FsFile>, Option<crate::fs::LockGuard>)> {
        let fs = self.fs.as_ref();
        let mut file = fs.create_new(path)?;
        let written = fs.try_lock(path).and_then(|live| {
            file.write_all(header)?;
            if self.sync == SyncPolicy::Always {
                file.sync()?;
                fs.sync_dir(&self.events_dir)?;
            }
            Ok(live)
        });
        match written {
            Ok(live) => Ok((file, live)),
            Err(e) => {
                drop(file);
                let _ = fs.remove(path);
                Err(e)
            }
        }
    }

    /// Make this process's appends durable (fsync of its segments and of `events/`).
    ///
    /// A failed fsync is reported naming the segment; that segment takes no more events (a later
    /// fsync of it could report success for data the kernel already dropped), so later events go
    /// to a new segment.
    pub fn sync(&self) -> Result<()> {
        let mut guard = self.lock_writer()?;
        let slot = &mut *guard;
        self.repair(slot)?;
        if slot.current.is_none() && slot.retired.is_empty() {
            return Ok(());
        }
        let mut failed: Option<(PathBuf, std::io::Error)> = None;
        for mut w in std::mem::take(&mut slot.retired) {
            if let Err(e) = w.file.sync() {
                failed.get_or_insert((w.path.clone(), e));
            }
        }
        if let Some(w) = slot.current.as_mut()
            && let Err(e) = w.file.sync()
        {
            failed.get_or_insert((w.path.clone(), e));
            slot.current = None;
        }
        if let Some((path, e)) = failed {
            return Err(Error::EventLog {
                path,
                message: format!(
                    "fsync failed ({e}): its events are kept and counted, but those written since \
                     it was last made durable may not survive a power loss; later events go to a \
                     new segment"
                ),
            });
        }
        self.fs
            .sync_dir(&self.events_dir)
            .map_err(|e| Error::io("fsync folder", &self.events_dir, e))
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

    /// The events folder.
    pub fn events_dir(&self) -> &Path {
        &self.events_dir
    }

    /// The file system this log uses.
    pub fn fs(&self) -> &dyn Fs {
        self.fs.as_ref()
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        if self.sync != SyncPolicy::Never {
            let _ = self.sync();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::event::HitSource;

    fn at(kinds: Vec<EventKind>) -> Vec<(u64, Event)> {
        kinds
            .into_iter()
            .enumerate()
            .map(|(i, kind)| {
                let e = Event {
                    ts_ms: 1,
                    seq: i as u64,
                    kind,
                };
                (i as u64 * 100, e)
            })
            .collect()
    }

    fn query(qid: &str, n: u32) -> EventKind {
        EventKind::Query {
            qid: qid.into(),
            query: "q".into(),
            anchors: Vec::new(),
            result_count: n,
            latency_us: 0,
            caller: String::new(),
        }
    }

    fn hit(qid: &str) -> EventKind {
        EventKind::RecallHit {
            qid: qid.into(),
            node: "n".into(),
            rank: 1,
            score: 1.0,
            source: HitSource::Direct,
        }
    }

    fn fetch(qid: &str) -> EventKind {
        EventKind::Feedback {
            qid: qid.into(),
            query: String::new(),
            used: vec!["n".into()],
            wrong: Vec::new(),
        }
    }

    #[test]
    fn a_recall_is_unfinished_until_its_last_announced_hit() {
        assert_eq!(unfinished_recall(&at(vec![])), None);
        assert_eq!(unfinished_recall(&at(vec![hit("x")])), None, "no query");
        assert_eq!(unfinished_recall(&at(vec![query("a", 2)])), Some(0));
        assert_eq!(
            unfinished_recall(&at(vec![hit("z"), query("a", 2), fetch("a"), hit("a")])),
            Some(1)
        );
        assert_eq!(
            unfinished_recall(&at(vec![query("a", 2), fetch("a"), hit("a"), hit("a")])),
            None
        );
        assert_eq!(unfinished_recall(&at(vec![query("a", 0)])), None);
        // Anything else after the QueryEvent: not the tail of that recall (damage in between,
        // an older layout): counted as read.
        assert_eq!(unfinished_recall(&at(vec![query("a", 2), hit("b")])), None);
    }
}
