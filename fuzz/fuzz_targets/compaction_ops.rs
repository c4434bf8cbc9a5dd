//! Compaction and GC against a model, with an injected crash (redb's fuzz_redb is the pattern).
//!
//! A fuzz-chosen sequence of operations runs on the in-memory file system: appends from three
//! sessions (some followed by an fsync), snapshots, sessions closing, time passing, compactions
//! (compression, archiving, cleanup), and an optional crash at a fuzz-chosen file-system call
//! (everything not fsynced is lost, optionally torn). Afterwards the log is reopened and every
//! node's folded recall count must lie between the model's fsynced count and its attempted count:
//! nothing fsynced is lost, nothing is counted twice; and opening never fails.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use mnemon::events::compact::CompactPolicy;
use mnemon::events::log::EventLog;
use mnemon::events::{EventKind, HitSource, SyncPolicy};
use mnemon::fs::{Fs, MemFs};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

const DAY_MS: i64 = 86_400_000;
const T0: i64 = 1_780_000_000_000;
const NODES: [&str; 3] = ["a", "b", "c"];

#[derive(Debug, Arbitrary)]
enum Op {
    Append {
        session: u8,
        node: u8,
        twice: bool,
    },
    Sync {
        session: u8,
    },
    Close {
        session: u8,
    },
    Snapshot {
        session: u8,
    },
    Pass {
        days: u16,
    },
    Compact {
        compress_after: u8,
        archive_after: u16,
    },
}

#[derive(Debug, Arbitrary)]
struct Input {
    ops: Vec<Op>,
    crash_at: Option<u16>,
    tear: bool,
}

#[derive(Default)]
struct Model {
    durable: HashMap<&'static str, u64>,
    attempted: HashMap<&'static str, u64>,
    /// Appended by a session since its last successful sync.
    pending: HashMap<u8, Vec<&'static str>>,
}

fn open(fs: &MemFs, session: &str) -> Option<EventLog> {
    EventLog::open(
        Arc::new(fs.clone()),
        PathBuf::from("/m/events"),
        PathBuf::from("/m/index"),
        Some(session.to_string()),
        SyncPolicy::Never,
    )
    .ok()
}

fn hit(node: &str) -> EventKind {
    EventKind::RecallHit {
        qid: "q".into(),
        node: node.into(),
        rank: 1,
        score: 1.0,
        source: HitSource::Direct,
    }
}

fuzz_target!(|input: Input| {
    if input.ops.len() > 64 {
        return;
    }
    let fs = MemFs::new();
    let mut now = T0;
    fs.set_clock_ms(now);
    if fs.create_dir_all(&PathBuf::from("/m/index")).is_err() {
        return;
    }
    if let Some(k) = input.crash_at {
        fs.crash_at(fs.calls() + u64::from(k) + 1);
    }
    let mut logs: HashMap<u8, EventLog> = HashMap::new();
    let mut m = Model::default();
    for op in &input.ops {
        if fs.crashed() {
            break;
        }
        match *op {
            Op::Append {
                session,
                node,
                twice,
            } => {
                let s = session % 3;
                if !logs.contains_key(&s) {
                    match open(&fs, &format!("s{s}")) {
                        Some(l) => {
                            logs.insert(s, l);
                        }
                        None => continue,
                    }
                }
                let n = NODES[usize::from(node) % NODES.len()];
                let batch = if twice {
                    vec![hit(n), hit(n)]
                } else {
                    vec![hit(n)]
                };
                let k = batch.len() as u64;
                // Attempted even when the append fails: a failed write may still have landed.
                *m.attempted.entry(n).or_default() += k;
                if logs[&s].append(batch).is_ok() {
                    for _ in 0..k {
                        m.pending.entry(s).or_default().push(n);
                    }
                } else {
                    // Nothing of the batch was recorded; the session goes on in a fresh log.
                    logs.remove(&s);
                    m.pending.remove(&s);
                }
            }
            Op::Sync { session } => {
                let s = session % 3;
                if let Some(l) = logs.get(&s) {
                    if l.sync().is_ok() {
                        for n in m.pending.remove(&s).unwrap_or_default() {
                            *m.durable.entry(n).or_default() += 1;
                        }
                    } else {
                        logs.remove(&s);
                        m.pending.remove(&s);
                    }
                }
            }
            Op::Close { session } => {
                let s = session % 3;
                if let Some(l) = logs.remove(&s) {
                    if l.sync().is_ok() {
                        for n in m.pending.remove(&s).unwrap_or_default() {
                            *m.durable.entry(n).or_default() += 1;
                        }
                    }
                    m.pending.remove(&s);
                }
            }
            Op::Snapshot { session } => {
                if let Some(l) = logs.get(&(session % 3)) {
                    let _ = l.write_snapshot();
                }
            }
            Op::Pass { days } => {
                now += i64::from(days % 800) * DAY_MS;
                fs.set_clock_ms(now);
            }
            Op::Compact {
                compress_after,
                archive_after,
            } => {
                if let Some(c) = open(&fs, "compactor") {
                    let _ = c.compact(
                        CompactPolicy {
                            compress_after_days: u32::from(compress_after),
                            archive_after_days: u32::from(archive_after),
                        },
                        now,
                    );
                }
            }
        }
    }
    let image = if fs.crashed() {
        fs.crash_image(input.tear)
    } else {
        drop(logs);
        fs.crash_image(false)
    };
    let check = open(&image, "check").expect("open never fails after a crash");
    for n in NODES {
        let got = check.stats(n).recall_count;
        let lo = m.durable.get(n).copied().unwrap_or(0);
        let hi = m.attempted.get(n).copied().unwrap_or(0);
        assert!(got >= lo, "{n}: {got} folded < {lo} fsynced");
        assert!(
            got <= hi,
            "{n}: {got} folded > {hi} attempted (double count)"
        );
    }
});
