//! The event log: append throughput (buffered, a recall's batch of 11 events per write), fold of
//! 1M events (and a one-shot 10M), open with a snapshot covering a 1M-event history, and
//! compaction throughput (zstd-compressing old segments, MB/s of segment bytes).

mod common;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mnemon::events::fold::Stats;
use mnemon::events::log::EventLog;
use mnemon::events::segment::{FrameReader, Header, Item, encode_frame};
use mnemon::events::{Event, EventKind, HitSource, SyncPolicy};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

fn hit(i: u64) -> EventKind {
    EventKind::RecallHit {
        qid: format!("q{}", i / 11),
        node: format!("note-{}", i % 100_000),
        rank: (i % 10) as u32 + 1,
        score: 0.5,
        source: HitSource::Direct,
    }
}

fn open_log(dir: &Path, session: &str) -> EventLog {
    EventLog::open(
        Arc::new(mnemon::fs::RealFs),
        dir.join("events"),
        dir.join("index"),
        Some(session.into()),
        SyncPolicy::Never,
    )
    .expect("open")
}

/// Segment bytes holding `n` RecallHit events.
fn segment_bytes(n: u64) -> Vec<u8> {
    let header = Header::new("bench".into(), 1);
    let mut b = header.encode();
    for i in 0..n {
        encode_frame(
            &Event {
                ts_ms: i as i64,
                seq: i,
                kind: hit(i),
            },
            header.seal,
            &mut b,
        );
    }
    b
}

fn fold_bytes(b: &[u8]) -> Stats {
    let (h, len) = Header::decode(b).expect("header");
    let mut s = Stats::default();
    for item in FrameReader::new(&b[len..], h.seal, len as u64) {
        if let Item::Event { event, .. } = item {
            s.apply(&h.session, &event);
        }
    }
    s
}

fn events(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("index")).expect("mkdir");
    let mut g = c.benchmark_group("events");
    // Append: one recall = 1 QueryEvent + 10 RecallHits in one write.
    let log = open_log(tmp.path(), "append");
    g.throughput(Throughput::Elements(11));
    let mut i = 0u64;
    g.bench_function("append_recall_batch", |b| {
        b.iter(|| {
            let mut batch = Vec::with_capacity(11);
            batch.push(EventKind::Query {
                qid: format!("q{i}"),
                query: "connection pool timeout".into(),
                anchors: vec![],
                result_count: 10,
                latency_us: 300,
                caller: "bench".into(),
            });
            for k in 0..10 {
                batch.push(hit(i * 10 + k));
            }
            i += 1;
            log.append(batch).expect("append")
        })
    });
    drop(log);

    let one_m = segment_bytes(1_000_000);
    g.throughput(Throughput::Elements(1_000_000));
    g.sample_size(10);
    g.bench_function("fold_1m", |b| b.iter(|| fold_bytes(&one_m)));

    // One-shot 10M fold (too long for criterion's repetitions).
    let ten_m = segment_bytes(10_000_000);
    let t = Instant::now();
    let s = fold_bytes(&ten_m);
    let el = t.elapsed();
    println!(
        "fold_10m: {} events in {:.2?} ({:.1} M events/s), {} nodes",
        s.events,
        el,
        s.events as f64 / el.as_secs_f64() / 1e6,
        s.nodes.len()
    );
    drop(ten_m);

    // Open with a snapshot covering a 1M-event history (no tail to fold).
    let snap_dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(snap_dir.path().join("events")).expect("mkdir");
    std::fs::create_dir_all(snap_dir.path().join("index")).expect("mkdir");
    std::fs::write(
        snap_dir.path().join("events/0000000000001-bench-1-0.seg"),
        &one_m,
    )
    .expect("write");
    open_log(snap_dir.path(), "writer")
        .write_snapshot()
        .expect("snapshot");
    g.throughput(Throughput::Elements(1));
    g.sample_size(20);
    g.bench_function("open_with_snapshot_1m", |b| {
        b.iter_batched(
            || (),
            |_| {
                let log = open_log(snap_dir.path(), "reader");
                assert_eq!(log.event_count(), 1_000_000);
                log
            },
            BatchSize::PerIteration,
        )
    });

    // Compaction: four old segments of 250k events each, compressed (not archived).
    let quarter = segment_bytes(250_000);
    g.throughput(Throughput::Bytes(4 * quarter.len() as u64));
    g.sample_size(10);
    g.bench_function("compact_4_segments", |b| {
        b.iter_batched(
            || {
                let d = tempfile::tempdir().expect("tempdir");
                std::fs::create_dir_all(d.path().join("events")).expect("mkdir");
                std::fs::create_dir_all(d.path().join("index")).expect("mkdir");
                for k in 0..4 {
                    std::fs::write(
                        d.path()
                            .join(format!("events/000000000000{k}-old{k}-1-0.seg")),
                        &quarter,
                    )
                    .expect("write");
                }
                d
            },
            |d| {
                let log = open_log(d.path(), "compactor");
                let policy = mnemon::events::compact::CompactPolicy {
                    compress_after_days: 0,
                    archive_after_days: 100_000,
                };
                // "Now" a day ahead: the segments just written are old enough to compress.
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64)
                    + 86_400_000;
                let r = log.compact(policy, now_ms).expect("compact");
                assert_eq!(r.compressed.len(), 4);
                d
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, events);
criterion_main!(benches);
