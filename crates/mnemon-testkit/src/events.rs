//! Helpers for event-log tests on the in-memory file system.

use mnemon::events::compact::CompactPolicy;
use mnemon::events::log::EventLog;
use mnemon::events::{EventKind, HitSource, SyncPolicy};
use mnemon::fs::{Fs, MemFs};
use std::path::PathBuf;
use std::sync::Arc;

pub const DAY_MS: i64 = 86_400_000;
/// A moment in 2026.
pub const T0: i64 = 1_780_000_000_000;

pub fn events_dir() -> PathBuf {
    PathBuf::from("/m/events")
}
pub fn index_dir() -> PathBuf {
    PathBuf::from("/m/index")
}

pub fn open(fs: &MemFs, session: &str) -> mnemon::Result<EventLog> {
    EventLog::open(
        Arc::new(fs.clone()),
        events_dir(),
        index_dir(),
        Some(session.to_string()),
        SyncPolicy::Close,
    )
}

pub fn hit(node: &str) -> EventKind {
    EventKind::RecallHit {
        qid: "q".into(),
        node: node.into(),
        rank: 1,
        score: 1.0,
        source: HitSource::Direct,
    }
}

pub fn count(log: &EventLog, node: &str) -> u64 {
    log.stats(node).recall_count
}

/// A file system holding `sessions` closed segments of `per` events each, all durable, written
/// at `written_ms`. Node names are `s{session}-e{i}`.
pub fn with_segments(sessions: usize, per: usize, written_ms: i64) -> MemFs {
    let fs = MemFs::new();
    fs.set_clock_ms(written_ms);
    fs.create_dir_all(&index_dir()).expect("mkdir");
    for s in 0..sessions {
        let log = open(&fs, &format!("s{s}")).expect("open");
        for i in 0..per {
            log.append(vec![hit(&format!("s{s}-e{i}"))])
                .expect("append");
        }
        log.sync().expect("sync");
    }
    fs
}

/// Compress anything older than 90 days, archive after 365.
pub fn policy() -> CompactPolicy {
    CompactPolicy::default()
}
