//! The event log of a memory folder: this process's segment writer, the folded stats (snapshot +
//! tail), and reading every segment.

mod files;
mod stats;
mod writer;

pub use files::*;
pub use stats::{NodeFold, StatsView};
use writer::*;

use super::event::Event;
use super::fold::{RecallStats, Stats};
use super::segment::{self};
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
/// ... or when more segment files than this were read: each CLI call leaves a segment of a few
/// events, and an open that reads thousands of them costs a file open each, every time, while
/// a snapshot's watermarks make the next opens skip them after a stat.
pub const SNAPSHOT_AFTER_SEGMENTS: usize = 64;

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

/// The event log.
pub struct EventLog {
    fs: Arc<dyn Fs>,
    events_dir: PathBuf,
    index_dir: PathBuf,
    /// The session events are recorded under; a made-up one is made up again in a forked child.
    session: RwLock<std::sync::Arc<str>>,
    /// The process that owns the writer: a child forked from it (Python's `os.fork`) has copies
    /// of the parent's open segment and its lock, which it must not write to.
    pid: std::sync::atomic::AtomicU32,
    /// This process was forked while another thread held the writer: it is never released here.
    writer_lost_in_fork: std::sync::atomic::AtomicBool,
    /// The thread that takes over after a fork holds this; the others wait for it.
    fork_gate: Mutex<()>,
    /// The pid of a forked child that kept a given session (0: none): its query ids carry it.
    kept_session_in: std::sync::atomic::AtomicU32,
    sync: SyncPolicy,
    writer: Mutex<Slot>,
    state: RwLock<State>,
    notices: Mutex<Vec<String>>,
    /// Every notice given so far (up to [`MAX_GIVEN_NOTICES`]): a condition met again at each
    /// refresh (a segment that stays unreadable) is told once, not once a second to a
    /// long-running caller that gathers them.
    given_notices: Mutex<std::collections::HashSet<String>>,
    last_refresh: Mutex<Option<std::time::Instant>>,
    /// Uncompressed length of each compressed segment file seen, by path and file size, from its
    /// first marker or zstd frame header (`None`: not recorded): each is read once per process.
    compressed_lens: Mutex<HashMap<(std::path::PathBuf, u64), Option<u64>>>,
    /// The clock events are dated by, when not the system's (a memory read as of another
    /// time: its uses must be dated in that time, or recency would weigh them against it).
    stamps: RwLock<Option<Arc<dyn crate::time::Clock>>>,
}

/// Compressed segments changed since the snapshot that one open reads whole to tell damage
/// in them ([`EventLog::check_compressed`]); the others are checked at the next open.
pub const MAX_CHECKED_AT_OPEN: usize = 64;

/// Notices remembered as given (see `EventLog::given_notices`); past it, all may be given again.
pub const MAX_GIVEN_NOTICES: usize = 1024;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Whether `session` is one [`new_session_id`] made up in process `pid` (`p<pid>-...`).
fn made_up_in(session: &str, pid: u32) -> bool {
    session
        .strip_prefix('p')
        .and_then(|rest| rest.strip_prefix(pid.to_string().as_str()))
        .is_some_and(|rest| rest.starts_with('-'))
}

/// A new session id for this process.
pub fn new_session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("p{}-{:08x}", std::process::id(), nanos)
}

/// The segment files of `events/` and `events/archive/`, listed once for what reads them.
pub(super) struct Listing {
    segs: Vec<SegmentFile>,
    archived: Vec<SegmentFile>,
    /// A file stands where `events/archive/` belongs: what it held cannot be looked at.
    archive_unusable: bool,
}

/// The id of a segment whose events `snap` counts but that `events/` (or its archive) no longer
/// holds, if any: a segment deleted or taken back by hand (a `git checkout` of `events/`). The
/// snapshot's counts then include events the log lacks, and only a fold of the segments that are
/// there says what the log holds.
fn counts_a_lost_segment(snap: &Snapshot, listing: &Listing) -> Option<String> {
    // Without a readable archive, which segments are gone cannot be told: the snapshot's
    // counts of the archived ones are kept rather than dropped by a re-fold.
    if listing.archive_unusable {
        return None;
    }
    let present: std::collections::HashSet<&str> = listing
        .segs
        .iter()
        .chain(&listing.archived)
        .map(|s| s.id.as_str())
        .collect();
    lost_segments(&snap.watermarks(), &present)
        .into_iter()
        .next()
        .map(|(id, _)| id.to_string())
}

/// The segments of which the watermarks `marks` (a stats snapshot's) count events but that are
/// not among `present`, with what was read of each, by id. A segment the snapshot counts no
/// frame of (its watermark at most its header's length: compaction removes such empty
/// segments, and their watermarks stay behind) is not missed.
pub(crate) fn lost_segments<'a>(
    marks: &'a HashMap<String, u64>,
    present: &std::collections::HashSet<&str>,
) -> Vec<(&'a str, u64)> {
    let mut lost: Vec<(&str, u64)> = marks
        .iter()
        .filter(|(id, mark)| **mark > header_len_of(id) && !present.contains(id.as_str()))
        .map(|(id, mark)| (id.as_str(), *mark))
        .collect();
    lost.sort_unstable();
    lost
}

/// The longest header segment `id` can have (`<created_ms>-<session>-<pid>-<n>`, format
/// version 2), or [`segment::MAX_HEADER_LEN`] when the id is not of that form.
pub(crate) fn header_len_of(id: &str) -> u64 {
    let session = id
        .split_once('-')
        .and_then(|(_, rest)| rest.rsplitn(3, '-').nth(2));
    let len = session.map_or(segment::MAX_HEADER_LEN, |s| {
        (segment::H_SESSION + s.len() + 4).min(segment::MAX_HEADER_LEN)
    });
    len as u64
}

impl EventLog {
    /// Date the events recorded from now on by `clock` instead of the system clock.
    pub(crate) fn stamp_with(&self, clock: Arc<dyn crate::time::Clock>) {
        if let Ok(mut s) = self.stamps.write() {
            *s = Some(clock);
        }
    }

    /// Now, as events are dated.
    fn stamp_now_ms(&self) -> i64 {
        match self.stamps.read().ok().and_then(|s| s.clone()) {
            Some(clock) => clock.now_ms(),
            None => now_ms(),
        }
    }

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
                // Shown in part when long: the message must stay a line, whatever was given.
                let shown: String = s.chars().take(segment::MAX_SESSION_BYTES + 8).collect();
                let shown = if shown.len() < s.len() {
                    format!("{shown:?}... ({} bytes)", s.len())
                } else {
                    format!("{s:?}")
                };
                return Err(Error::InvalidArgument {
                    what: "session",
                    message: format!(
                        "{shown}: use 1 to {} characters from A-Z a-z 0-9 . _ - (given by \
                         --session, session=, or the MNEMON_SESSION environment variable)",
                        segment::MAX_SESSION_BYTES
                    ),
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
            session: RwLock::new(session.into()),
            pid: std::sync::atomic::AtomicU32::new(std::process::id()),
            writer_lost_in_fork: std::sync::atomic::AtomicBool::new(false),
            fork_gate: Mutex::new(()),
            kept_session_in: std::sync::atomic::AtomicU32::new(0),
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
            given_notices: Mutex::new(std::collections::HashSet::new()),
            last_refresh: Mutex::new(Some(std::time::Instant::now())),
            compressed_lens: Mutex::new(HashMap::new()),
            stamps: RwLock::new(None),
        };
        // An unusable snapshot is replaced once the events are folded: else every open would
        // say so again, and fold every event again, until some later write replaced it.
        let mut unusable = false;
        let mut snapshot = match Snapshot::open(log.fs.as_ref(), &log.index_dir) {
            Ok(s) => s,
            Err(reason) => {
                unusable = true;
                log.notice(format!(
                    "stats snapshot {} is unusable ({reason}): re-folding every event",
                    log.index_dir.join(snapshot::SNAPSHOT_FILE).display()
                ));
                None
            }
        };
        let listing = log.listing()?;
        // Replaced at once when it counts a lost segment: else every open would say so again.
        let lost = snapshot
            .as_ref()
            .and_then(|s| counts_a_lost_segment(s, &listing));
        if let Some(id) = &lost {
            log.notice(format!(
                "stats snapshot {} counts events of segment {id}, which events/ no longer \
                 holds: re-folding every event",
                log.index_dir.join(snapshot::SNAPSHOT_FILE).display()
            ));
            snapshot = None;
        }
        // When the snapshot was written: compressed segments changed after it are checked for
        // damage (`EventLog::check_compressed`).
        let snapshot_written_ms = snapshot.as_ref().and_then(|_| {
            log.fs
                .modified_ms(&log.index_dir.join(snapshot::SNAPSHOT_FILE))
                .ok()
        });
        if let Ok(mut st) = log.state.write() {
            if let Some(s) = &snapshot {
                st.marks = s.watermarks();
            }
            st.snapshot = snapshot;
            st.bump(Change::All);
            st.feedback_version += 1;
        }
        let folded = log.refresh_listed(listing, snapshot_written_ms)?;
        if (folded.events > SNAPSHOT_AFTER_EVENTS
            || folded.segments > SNAPSHOT_AFTER_SEGMENTS
            || lost.is_some()
            || unusable)
            && let Err(e) = log.write_snapshot()
        {
            log.notice(format!("could not write the stats snapshot: {e}"));
        }
        Ok(log)
    }

    pub(super) fn notice(&self, n: String) {
        if let Ok(mut given) = self.given_notices.lock() {
            if given.len() >= MAX_GIVEN_NOTICES {
                given.clear();
            }
            if !given.insert(n.clone()) {
                return;
            }
        }
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
    pub fn session(&self) -> std::sync::Arc<str> {
        self.follow_fork();
        self.current_session()
    }

    /// The session id as it is, without looking for a fork (for code holding the writer).
    pub(super) fn current_session(&self) -> std::sync::Arc<str> {
        match self.session.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// In a child forked from the process that opened the log: the child's events go to a
    /// segment of its own. The parent's writer is dropped here, which closes only the child's
    /// copies of its file and lock (the lock stays the parent's: `flock` holds while any copy
    /// is open, and the parent's is). A session made up by the parent (`p<its pid>-...`, also
    /// when a reopen passed it on) is made up anew; a given one is kept, and the child's query
    /// ids carry its pid ([`EventLog::query_id`]). A writer another thread held at the fork
    /// is never released here: the child's appends then fail rather than wait. One thread takes
    /// over; the others wait for it at `fork_gate`. Not called while the writer is held.
    pub(super) fn follow_fork(&self) {
        use std::sync::atomic::Ordering;
        let pid = std::process::id();
        let parent = self.pid.load(Ordering::Acquire);
        if parent == pid {
            return;
        }
        let _gate = match self.fork_gate.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if self.pid.load(Ordering::Acquire) == pid {
            return;
        }
        if made_up_in(&self.current_session(), parent) {
            let fresh: std::sync::Arc<str> = new_session_id().into();
            match self.session.write() {
                Ok(mut s) => *s = fresh,
                Err(p) => *p.into_inner() = fresh,
            }
        } else {
            self.kept_session_in.store(pid, Ordering::Release);
        }
        match self.writer.try_lock() {
            Ok(mut slot) => {
                slot.current = None;
                slot.retired.clear();
            }
            Err(std::sync::TryLockError::Poisoned(_)) => {}
            Err(std::sync::TryLockError::WouldBlock) => {
                self.writer_lost_in_fork.store(true, Ordering::Release);
            }
        }
        // Last: a thread that sees this pid finds the takeover done.
        self.pid.store(pid, Ordering::Release);
    }

    /// The id of this process's `n`th recall: the session, then, under a given session, this
    /// process's pid (`p<pid>`; in a forked child that kept it, `f<pid>`), and `n`. Processes
    /// given one session each count from 0: their ids differ by the pid. A made-up session
    /// (`p<pid>-...`) holds the pid already.
    pub fn query_id(&self, n: u64) -> String {
        use std::sync::atomic::Ordering;
        let session = self.session();
        match self.kept_session_in.load(Ordering::Acquire) {
            0 => {
                let pid = std::process::id();
                if made_up_in(&session, pid) {
                    format!("{session}-q{n}")
                } else {
                    format!("{session}-p{pid}-q{n}")
                }
            }
            pid => format!("{session}-f{pid}-q{n}"),
        }
    }

    /// The id of this process's segment, once it has one.
    pub fn own_segment_id(&self) -> Option<String> {
        self.lock_writer()
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

    /// The index folder (where the stats snapshot is).
    pub fn index_dir(&self) -> &Path {
        &self.index_dir
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
    use crate::events::event::{Event, EventKind};

    /// A session id of 10 000 characters was echoed whole in its error.
    #[test]
    fn a_bad_session_id_is_named_shortened() {
        let fs: Arc<dyn Fs> = Arc::new(crate::fs::MemFs::new());
        let open = |s: &str| {
            EventLog::open(
                fs.clone(),
                Path::new("/m/events").to_path_buf(),
                Path::new("/m/index").to_path_buf(),
                Some(s.to_string()),
                SyncPolicy::Close,
            )
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
        };
        let long = open(&"s".repeat(10_000));
        assert!(long.len() < 300, "{long}");
        assert!(long.contains("(10000 bytes)"), "{long}");
        let short = open("bad id");
        assert!(
            short.contains("\"bad id\": use 1 to 64 characters"),
            "{short}"
        );
    }

    /// Regression: an unreadable segment was told about at every refresh (once a second), and
    /// a caller that gathers notices (Python's `Memory.notices`) grew one copy per second. A
    /// notice is given once.
    #[test]
    fn a_notice_is_given_once() {
        let fs: Arc<dyn Fs> = Arc::new(crate::fs::MemFs::new());
        let log = EventLog::open(
            fs,
            Path::new("/m/events").to_path_buf(),
            Path::new("/m/index").to_path_buf(),
            None,
            SyncPolicy::Close,
        )
        .expect("open");
        let _ = log.take_notices();
        log.notice("segment x is unreadable".into());
        log.notice("segment x is unreadable".into());
        log.notice("segment y is unreadable".into());
        assert_eq!(
            log.take_notices(),
            vec!["segment x is unreadable", "segment y is unreadable"]
        );
        log.notice("segment x is unreadable".into());
        assert!(log.take_notices().is_empty());
    }

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
