//! One regression test per failure mode of MISSION.md section 6, each named after the behaviour
//! it pins (the mode's number is in its doc comment).

mod common;

/// Failure mode 5: a pre-existing `.gitignore` that is not UTF-8 keeps its bytes and gets the
/// ignore rules at most once however often init or open runs. It is compared as bytes, never
/// decoded: a reader that decodes it fails, takes it as empty and appends the rule at every
/// start-up.
#[test]
fn a_gitignore_that_is_not_utf8_keeps_its_bytes_and_gets_the_rule_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(".mnemon");
    std::fs::create_dir_all(&root).unwrap();
    let original: &[u8] = b"# d\xe9j\xe0 vu \xff\xfe\n*.tmp";
    std::fs::write(root.join(".gitignore"), original).unwrap();
    for _ in 0..3 {
        drop(mnemon::Memory::init(&root).unwrap());
        drop(mnemon::Memory::open(&root).unwrap());
    }
    let bytes = std::fs::read(root.join(".gitignore")).unwrap();
    let mut want = original.to_vec();
    want.extend_from_slice(b"\n/index/\n/events/.*\n/memory/**/.tmp-note-*\n");
    assert_eq!(bytes, want, "original bytes kept, rule added exactly once");
}

use common::events::{DAY_MS, T0, count, events_dir, hit, open, policy, with_segments};
use mnemon::fs::{Fs, MemFs};

/// Failure mode 1: a crash between the rename of `X.seg.zst` and the removal of `X.seg` leaves
/// both side by side, and folding both would double the counts. The compressed copy is
/// authoritative (readers skip `X.seg` when `X.seg.zst` exists) and the next compaction removes
/// the orphan.
#[test]
fn crash_between_rename_and_remove_counts_each_event_once_and_the_orphan_is_removed() {
    let fs = with_segments(2, 3, T0);
    let names_before = fs.list(&events_dir()).unwrap();
    let originals: Vec<(String, Vec<u8>)> = names_before
        .iter()
        .filter(|n| n.ends_with(".seg"))
        .map(|n| (n.clone(), fs.get(&events_dir().join(n)).unwrap()))
        .collect();
    let now = T0 + 100 * DAY_MS;
    let log = open(&fs, "compactor").unwrap();
    let r = log.compact(policy(), now).unwrap();
    assert_eq!(r.compressed.len(), 2);
    drop(log);
    // Put the originals back: exactly the state of a crash after the rename, before the remove.
    for (name, bytes) in &originals {
        fs.put(&events_dir().join(name), bytes, T0);
    }
    let fresh = open(&fs, "reader").unwrap();
    for s in 0..2 {
        for i in 0..3 {
            assert_eq!(
                count(&fresh, &format!("s{s}-e{i}")),
                1,
                "counted once, not twice"
            );
        }
    }
    // And with no snapshot at all (a full re-fold), still once.
    let _ = fs.remove(&common::events::index_dir().join("stats.snapshot"));
    let refold = open(&fs, "reader2").unwrap();
    assert_eq!(count(&refold, "s0-e0"), 1);
    let r = refold.compact(policy(), now).unwrap();
    let mut removed = r.removed.clone();
    removed.sort();
    let mut want: Vec<String> = originals.iter().map(|(n, _)| n.clone()).collect();
    want.sort();
    assert_eq!(
        removed, want,
        "the orphans are removed by the next compaction"
    );
    assert!(r.compressed.is_empty());
}

/// Regression: a reader lists `events/` and compaction then compresses the segments it listed
/// (and removes `X.seg`): `events dump` and every fold printed "cannot open: No such file" and
/// left those events out, or listed both `X.seg` and `X.seg.zst` and showed them twice. A
/// segment gone from its listed place is read from its compressed form, wherever compaction put
/// it, and a listing names each segment once.
#[test]
fn a_segment_compressed_after_it_was_listed_is_read_once_from_its_new_place() {
    use mnemon::events::log::{all_segments, read_segment};
    let fs = with_segments(2, 3, T0);
    let (listed, _) = all_segments(&fs, &events_dir()).unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|s| !s.file.compressed));
    let originals: Vec<(String, Vec<u8>)> = listed
        .iter()
        .map(|s| (s.file.name.clone(), fs.get(&s.path).unwrap()))
        .collect();
    let log = open(&fs, "compactor").unwrap();
    assert_eq!(
        log.compact(policy(), T0 + 100 * DAY_MS)
            .unwrap()
            .compressed
            .len(),
        2
    );
    drop(log);
    for seg in &listed {
        let read = read_segment(&fs, &seg.path, false, 0);
        assert_eq!(read.error, None, "{}", seg.shown);
        assert_eq!(read.events.len(), 3, "{}", seg.shown);
    }
    // Both `X.seg` and `X.seg.zst` there (the moment between compaction's two steps): listed
    // once, as the compressed copy.
    for (name, bytes) in &originals {
        fs.put(&events_dir().join(name), bytes, T0);
    }
    let (both, _) = all_segments(&fs, &events_dir()).unwrap();
    assert_eq!(both.len(), 2, "{both:?}");
    assert!(both.iter().all(|s| s.file.compressed), "{both:?}");
}

/// Regression: `events verify` and the stats folds each chose one file per segment by rules of
/// their own. A `.seg` in `events/archive/` (put there by hand or a restore) was listed and
/// verified but never folded, and `X.seg` beside an archived `X.seg.zst` was folded twice: the
/// stats disagreed with the log. Both readers now take the same files.
#[test]
fn the_stats_count_the_segments_events_verify_lists_and_each_once() {
    use mnemon::events::log::all_segments;
    let fs = with_segments(2, 3, T0);
    let archive = events_dir().join("archive");
    fs.create_dir_all(&archive).unwrap();
    let (listed, _) = all_segments(&fs, &events_dir()).unwrap();
    let plain = &listed[0];
    let bytes = fs.get(&plain.path).unwrap();
    fs.put(&archive.join(&plain.file.name), &bytes, T0);
    fs.remove(&plain.path).unwrap();
    let (moved, _) = all_segments(&fs, &events_dir()).unwrap();
    assert_eq!(moved.len(), 2, "{moved:?}");
    let reader = open(&fs, "reader").unwrap();
    let total: u64 = (0..2)
        .flat_map(|s| (0..3).map(move |i| format!("s{s}-e{i}")))
        .map(|n| count(&reader, &n))
        .sum();
    assert_eq!(total, 6, "the archived plain segment is counted too");
    drop(reader);
    // The same segment plain in both folders: the file in `events/` is read, once.
    fs.put(&plain.path, &bytes, T0);
    let (twice, _) = all_segments(&fs, &events_dir()).unwrap();
    assert_eq!(twice.len(), 2, "{twice:?}");
    assert!(twice.iter().any(|s| s.path == plain.path), "{twice:?}");
    fs.remove(&archive.join(&plain.file.name)).unwrap();
    // Compress both, archive them, then put one original back in `events/`: one file each.
    let log = open(&fs, "compactor").unwrap();
    let archive_at_once = mnemon::events::CompactPolicy {
        archive_after_days: 0,
        ..policy()
    };
    log.compact(archive_at_once, T0 + 100 * DAY_MS).unwrap();
    drop(log);
    fs.put(&events_dir().join(&plain.file.name), &bytes, T0);
    let _ = fs.remove(&common::events::index_dir().join("stats.snapshot"));
    let (both, _) = all_segments(&fs, &events_dir()).unwrap();
    assert_eq!(both.len(), 2, "{both:?}");
    assert!(both.iter().all(|s| s.file.compressed), "{both:?}");
    let refold = open(&fs, "reader2").unwrap();
    for s in 0..2 {
        for i in 0..3 {
            assert_eq!(count(&refold, &format!("s{s}-e{i}")), 1, "s{s}-e{i}");
        }
    }
}

/// Regression: every CLI call leaves a segment of a few events, and with no snapshot (one was
/// written only after 10 000 events) each command opened and read every one of them again:
/// 1 500 calls made a recall cost 15 000 system calls. An open that reads more than
/// `SNAPSHOT_AFTER_SEGMENTS` segments writes a snapshot, and the next open reads none of them.
#[test]
fn an_open_that_reads_many_small_segments_writes_a_snapshot() {
    use mnemon::events::log::SNAPSHOT_AFTER_SEGMENTS;
    let snapshot = common::events::index_dir().join("stats.snapshot");
    let few = with_segments(SNAPSHOT_AFTER_SEGMENTS, 2, T0);
    drop(open(&few, "reader").unwrap());
    assert!(
        few.get(&snapshot).is_none(),
        "a few segments need no snapshot"
    );
    let many = with_segments(SNAPSHOT_AFTER_SEGMENTS + 1, 2, T0);
    let first = open(&many, "reader").unwrap();
    assert_eq!(count(&first, "s0-e0"), 1);
    drop(first);
    assert!(many.get(&snapshot).is_some(), "snapshot written");
    let next = open(&many, "reader2").unwrap();
    assert_eq!(next.refresh().unwrap(), 0, "nothing left to fold");
    assert_eq!(count(&next, &format!("s{SNAPSHOT_AFTER_SEGMENTS}-e1")), 1);
}

/// Failure mode 2: two sessions compacting at once must not collide on a temp file name. Temp
/// names carry pid and nanos, and compaction is exclusive (a lock file). Two threads with
/// separate handles on the same real folder compact at once: each segment is compressed exactly
/// once, no error, no leftover, counts unchanged.
#[test]
fn two_compactions_at_once_compress_each_segment_once_and_leave_no_temporary() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(".mnemon");
    drop(mnemon::Memory::init(&root).unwrap());
    let events = root.join("events");
    let index = root.join("index");
    let open_real = |s: &str| {
        mnemon::events::log::EventLog::open(
            std::sync::Arc::new(mnemon::fs::RealFs),
            events.clone(),
            index.clone(),
            Some(s.to_string()),
            mnemon::events::SyncPolicy::Close,
        )
        .unwrap()
    };
    for s in 0..6 {
        let log = open_real(&format!("w{s}"));
        for i in 0..50 {
            log.append(vec![hit(&format!("w{s}-{i}"))]).unwrap();
        }
    }
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(100 * 86_400);
    for e in std::fs::read_dir(&events).unwrap() {
        let p = e.unwrap().path();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let now = mnemon::recall::Clock::now_s(&mnemon::recall::SystemClock) * 1000;
    let reports: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|t| {
                let open_real = &open_real;
                s.spawn(move || open_real(&format!("c{t}")).compact(policy(), now))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
    });
    let total: usize = reports.iter().map(|r| r.compressed.len()).sum();
    let skipped = reports.iter().filter(|r| r.skipped.is_some()).count();
    // Either one ran while the other skipped, or they ran one after the other.
    assert_eq!(total, 6, "{reports:?}");
    assert!(skipped <= 1);
    let names: Vec<String> = std::fs::read_dir(&events)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with(".tmp-")), "{names:?}");
    assert_eq!(names.iter().filter(|n| n.ends_with(".seg.zst")).count(), 6);
    let check = open_real("check");
    for s in 0..6 {
        for i in [0, 49] {
            assert_eq!(check.stats(&format!("w{s}-{i}")).recall_count, 1);
        }
    }
}

/// Failure mode 3: an I/O error midway through a segment keeps every event already parsed from
/// it. The reader yields events as it goes and stops at the error; the watermark stops after the
/// last good frame, so a later read resumes there and counts the rest exactly once.
#[test]
fn io_error_mid_segment_keeps_the_events_before_it_and_a_later_fold_counts_the_rest_once() {
    let fs = with_segments(1, 100, T0);
    let len = fs
        .list(&events_dir())
        .unwrap()
        .iter()
        .map(|n| fs.get(&events_dir().join(n)).unwrap().len())
        .next()
        .unwrap() as u64;
    fs.set_read_limit(Some(len / 2));
    let log = open(&fs, "reader").unwrap();
    let kept: u64 = (0..100).map(|i| count(&log, &format!("s0-e{i}"))).sum();
    assert!((40..100).contains(&kept), "kept {kept} of 100");
    assert_eq!(count(&log, "s0-e0"), 1, "the prefix is kept");
    let notices = log.take_notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("kept the events before it")),
        "{notices:?}"
    );
    // The disk recovers: the next fold picks up exactly the rest.
    fs.set_read_limit(None);
    log.refresh().unwrap();
    for i in 0..100 {
        assert_eq!(count(&log, &format!("s0-e{i}")), 1, "event {i}");
    }
}

/// Failure mode 4: compaction never reads a segment into memory whole, however large: it
/// compresses one 64 KiB chunk at a time. A 32 MiB segment is compressed while the Rust heap of
/// the compressing thread grows by less than 1 MiB (zstd's own context, allocated by C, is a few
/// MiB at level 3 whatever the input size), and the result decompresses to the same bytes.
#[test]
fn compaction_streams_a_large_segment_in_bounded_heap() {
    use mnemon::events::segment::{Header, encode_frame};
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("big.seg");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&src).unwrap());
        use std::io::Write;
        let header = Header::new("big".into(), 1);
        f.write_all(&header.encode()).unwrap();
        let mut frame = Vec::new();
        let mut written = 0usize;
        let mut i = 0u64;
        while written < 32 << 20 {
            frame.clear();
            let e = mnemon::events::Event {
                ts_ms: i as i64,
                seq: i,
                kind: hit(&format!("node-{}-{}", i % 5000, "x".repeat(100))),
            };
            encode_frame(&e, header.seal, &mut frame);
            f.write_all(&frame).unwrap();
            written += frame.len();
            i += 1;
        }
    }
    let dst = tmp.path().join("big.seg.zst");
    heap::reset_peak();
    let before = heap::current();
    let n = mnemon::events::compact::compress_file(&mnemon::fs::RealFs, &src, &dst).unwrap();
    let peak = heap::peak() - before;
    assert!(n >= 32 << 20);
    assert!(
        peak < 1 << 20,
        "Rust heap grew by {peak} bytes while compressing {n} bytes"
    );
    let original = std::fs::read(&src).unwrap();
    let round = zstd::stream::decode_all(std::fs::File::open(&dst).unwrap()).unwrap();
    assert!(round == original, "decompressed bytes differ");
    assert!(std::fs::metadata(&dst).unwrap().len() < n / 4);
}

/// A flipped byte in a compressed segment loses the chunk it is in, not the segment: zstd
/// cannot decode past a damaged block, and a segment compressed as one stream lost every event
/// after the flip. The events of the other chunks keep their offsets (watermarks still apply).
#[test]
fn a_flipped_byte_in_a_compressed_segment_loses_one_chunk_not_the_segment() {
    use mnemon::events::compressed::CHUNK_BYTES;
    use mnemon::events::log::read_segment;
    use mnemon::events::segment::{Header, encode_frame};
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("s.seg");
    let header = Header::new("s".into(), 1);
    let mut bytes = header.encode();
    let mut i = 0u64;
    while bytes.len() < 8 * CHUNK_BYTES {
        let e = mnemon::events::Event {
            ts_ms: i as i64,
            seq: i,
            kind: hit(&format!("node-{}", i % 997)),
        };
        encode_frame(&e, header.seal, &mut bytes);
        i += 1;
    }
    std::fs::write(&src, &bytes).unwrap();
    let dst = tmp.path().join("s.seg.zst");
    mnemon::events::compact::compress_file(&mnemon::fs::RealFs, &src, &dst).unwrap();
    let original = read_segment(&mnemon::fs::RealFs, &src, false, 0);
    assert_eq!(original.events.len() as u64, i);
    let mut z = std::fs::read(&dst).unwrap();
    let middle = z.len() / 2;
    z[middle] ^= 0xFF;
    std::fs::write(&dst, &z).unwrap();
    let read = read_segment(&mnemon::fs::RealFs, &dst, true, 0);
    assert_eq!(read.error, None);
    let per_chunk = original
        .events
        .iter()
        .filter(|(o, _)| *o < CHUNK_BYTES as u64)
        .count();
    let lost = original.events.len() - read.events.len();
    assert!(
        (1..=per_chunk + 1).contains(&lost),
        "lost {lost} of {i} events; a chunk holds about {per_chunk}"
    );
    assert!(!read.damaged.is_empty(), "the loss is reported");
    assert!(
        read.damaged
            .iter()
            .all(|r| r.end - r.start <= 2 * CHUNK_BYTES as u64)
    );
    // Every event read is the original's, at its original offset.
    let at: std::collections::HashMap<u64, u64> =
        original.events.iter().map(|(o, e)| (*o, e.seq)).collect();
    for (offset, e) in &read.events {
        assert_eq!(at.get(offset), Some(&e.seq), "offset {offset}");
    }
    assert_eq!(read.end, original.end);
}

/// Failure mode 6: a torn append (a crash mid-write) leaves a partial frame at the tail. The
/// partial frame is a damaged range that is ignored; later appends are never lost; and
/// watermarks are keyed by segment id and offsets in the uncompressed stream, so compressing the
/// segment later never makes the snapshot count an event twice.
#[test]
fn torn_append_is_one_ignored_damaged_range_and_compression_never_counts_an_event_twice() {
    let fs = MemFs::new();
    fs.set_clock_ms(T0);
    fs.create_dir_all(&common::events::index_dir()).unwrap();
    let log = open(&fs, "victim").unwrap();
    for i in 0..5 {
        log.append(vec![hit(&format!("durable-{i}"))]).unwrap();
    }
    log.sync().unwrap();
    log.append(vec![hit("torn-a"), hit("torn-b"), hit("torn-c")])
        .unwrap();
    // Power loss: durable bytes plus half of the unsynced batch.
    let image = fs.crash_image(true);
    drop(log);
    let after = open(&image, "survivor").unwrap();
    for i in 0..5 {
        assert_eq!(count(&after, &format!("durable-{i}")), 1);
    }
    let torn: u64 = ["torn-a", "torn-b", "torn-c"]
        .iter()
        .map(|n| count(&after, n))
        .sum();
    assert!(torn <= 3);
    after.append(vec![hit("later")]).unwrap();
    after.sync().unwrap();
    after.write_snapshot().unwrap();
    drop(after);
    // Compress everything (all segments old now), then reopen with the snapshot: no double count.
    let later = T0 + 100 * DAY_MS;
    image.set_clock_ms(later);
    let c = open(&image, "compactor").unwrap();
    let r = c.compact(policy(), later).unwrap();
    assert_eq!(r.compressed.len(), 2, "{r:?}");
    drop(c);
    let check = open(&image, "check").unwrap();
    for i in 0..5 {
        assert_eq!(count(&check, &format!("durable-{i}")), 1);
    }
    assert_eq!(count(&check, "later"), 1);
    let torn_after: u64 = ["torn-a", "torn-b", "torn-c"]
        .iter()
        .map(|n| count(&check, n))
        .sum();
    assert_eq!(torn_after, torn);
    let verify = mnemon::events::segment::decode_segment(
        &image
            .get(
                &events_dir().join(
                    image
                        .list(&events_dir())
                        .unwrap()
                        .into_iter()
                        .find(|n| n.contains("victim"))
                        .unwrap(),
                ),
            )
            .map(|z| zstd::stream::decode_all(&z[..]).unwrap())
            .unwrap(),
    );
    assert_eq!(
        verify.damaged.len(),
        1,
        "the torn tail is one damaged range"
    );
}

/// A thread-local heap counter for `compaction_streams_a_large_segment_in_bounded_heap` (other
/// tests run on other threads).
mod heap {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static CURRENT: Cell<isize> = const { Cell::new(0) };
        static PEAK: Cell<isize> = const { Cell::new(0) };
    }

    struct Counting;

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let _ = CURRENT.try_with(|c| {
                let v = c.get() + l.size() as isize;
                c.set(v);
                let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
            });
            unsafe { System.alloc(l) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, l: Layout) {
            let _ = CURRENT.try_with(|c| c.set(c.get() - l.size() as isize));
            unsafe { System.dealloc(ptr, l) }
        }
    }

    #[global_allocator]
    static A: Counting = Counting;

    pub fn current() -> isize {
        CURRENT.with(|c| c.get())
    }
    pub fn peak() -> isize {
        PEAK.with(|p| p.get())
    }
    pub fn reset_peak() {
        let c = current();
        PEAK.with(|p| p.set(c));
    }
}

/// `events/` removed under a long-lived process (`git clean -fd`, `git stash -u` of untracked
/// segments): every later recall, feedback and importance mark failed with "creating the
/// segment failed" until another process made the folder again. The writer makes it again,
/// says so, and what it records is read by others.
#[test]
fn an_events_folder_removed_under_an_open_memory_is_made_again() {
    let (_tmp, m) = common::fresh();
    common::write_note(&m, "a.md", "---\nname: Alpha\n---\nalpha walrus\n");
    m.index().unwrap();
    m.set_importance("a", 4, &[], "").unwrap();
    let events = m.dir().root().join("events");
    std::fs::remove_dir_all(&events).unwrap();
    m.set_importance("a", 7, &[], "after").unwrap();
    let notices = m.take_notices().join("\n");
    assert!(
        notices.contains("was removed while this process had the memory open"),
        "{notices}"
    );
    assert!(events.is_dir());
    let other = mnemon::Memory::open(m.dir().root()).unwrap();
    assert_eq!(other.stats("a").unwrap().importance, Some(7));
}

/// The whole memory folder removed under a long-lived process (a Python handle, a server):
/// recalls, feedback and importance marks made `events/` again, a folder of events alone where the
/// user had removed everything. They fail now, saying the folder is gone, and make nothing.
#[test]
fn a_memory_folder_removed_under_an_open_memory_is_not_made_again() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("gone");
    let m = mnemon::Memory::init(&root).unwrap();
    common::write_note(&m, "a.md", "---\nname: Alpha\n---\nalpha walrus\n");
    m.index().unwrap();
    m.set_importance("a", 4, &[], "").unwrap();
    std::fs::remove_dir_all(&root).unwrap();
    let err = m
        .set_importance("a", 7, &[], "after")
        .unwrap_err()
        .to_string();
    assert!(err.contains("memory folder was removed or moved"), "{err}");
    assert!(err.contains(&root.display().to_string()), "{err}");
    let err = m
        .feedback(&["a".to_string()], &[], Some("alpha"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("memory folder was removed or moved"), "{err}");
    // Its answers would come from a store that is gone with the folder.
    let err = m
        .recall(&mnemon::recall::Query::text("alpha"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("memory folder was removed or moved"), "{err}");
    // A holder that opens the folder again when its store is replaced (serve, Python) finds
    // nothing to open.
    let err = mnemon::Memory::open_with(m.dir().clone(), mnemon::OpenOptions::default())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains(&root.display().to_string()), "{err}");
    assert!(!root.exists(), "the removed folder was made again");
}

/// The log shared through git: clone A compresses segment X (nothing on A holds its writer's
/// lock) while clone B's server goes on appending to `X.seg`; a merge brings A's shorter
/// `X.seg.zst` beside B's longer `X.seg`. Readers took the compressed copy (every event B wrote
/// after A's copy dropped out of the stats, `events verify` said healthy), and the next
/// compaction removed the longer file, even with its writer alive. The longer file is read,
/// compaction leaves it while its writer lives, and compresses it over the shorter copy once
/// it is due; the events in each file are counted once.
#[test]
fn a_segment_that_grew_after_another_clone_compressed_it_is_read_whole_and_kept() {
    for archived in [false, true] {
        let fs = with_segments(0, 0, T0);
        let writer = open(&fs, "b").unwrap();
        writer.append(vec![hit("early")]).unwrap();
        writer.sync().unwrap();
        let seg = plain_segment(&fs);
        let committed = fs.get(&events_dir().join(&seg)).unwrap();
        writer.append(vec![hit("late")]).unwrap();
        writer.sync().unwrap();
        // A's copy of the segment as it was committed, compressed (one zstd frame recording
        // its length, as `zstd` writes it).
        let copy = zstd::bulk::compress(&committed, 3).unwrap();
        let copy_at = if archived {
            events_dir().join("archive").join(format!("{seg}.zst"))
        } else {
            events_dir().join(format!("{seg}.zst"))
        };
        fs.create_dir_all(copy_at.parent().unwrap()).unwrap();
        fs.put(&copy_at, &copy, T0);

        let reader = open(&fs, "reader").unwrap();
        assert_eq!((count(&reader, "early"), count(&reader, "late")), (1, 1));
        let listed = mnemon::events::log::list_log(&fs, &events_dir()).unwrap();
        assert_eq!(listed.set_aside.len(), 1, "{:?}", listed.set_aside);
        assert!(listed.set_aside[0].shorter, "{:?}", listed.set_aside);
        assert_eq!(listed.set_aside[0].read_instead, seg);

        // Compaction far in the future, the writer alive: the longer file stays.
        let later = T0 + 400 * DAY_MS;
        let r = reader.compact(policy(), later).unwrap();
        assert!(!r.removed.contains(&seg), "{r:?}");
        assert!(fs.get(&events_dir().join(&seg)).is_some());
        writer.append(vec![hit("later")]).unwrap();
        writer.sync().unwrap();
        drop(writer);
        let again = open(&fs, "again").unwrap();
        assert_eq!(count(&again, "later"), 1);

        // Its writer gone, compaction compresses the longer file over the shorter copy (the
        // clock where compaction runs: the new copy is not old enough to be archived).
        fs.set_clock_ms(later);
        again.compact(policy(), later).unwrap();
        drop((reader, again));
        let _ = fs.remove(&common::events::index_dir().join("stats.snapshot"));
        let fresh = open(&fs, "fresh").unwrap();
        for node in ["early", "late", "later"] {
            assert_eq!(count(&fresh, node), 1, "{node} (archived copy: {archived})");
        }
        let listed = mnemon::events::log::list_log(&fs, &events_dir()).unwrap();
        assert!(listed.set_aside.is_empty(), "{:?}", listed.set_aside);
        assert!(fs.get(&events_dir().join(&seg)).is_none(), "compressed");
    }
}

/// A process that had read a short compressed copy of a segment kept its length for good (it
/// was cached by segment id, as compressed files never change): when a longer copy took its
/// place (another clone's, merged in), the events past the old length were never counted by
/// that process.
#[test]
fn a_longer_compressed_copy_taking_a_shorter_ones_place_is_read_on() {
    for short_in_archive in [false, true] {
        let fs = with_segments(0, 0, T0);
        let writer = open(&fs, "b").unwrap();
        writer.append(vec![hit("early")]).unwrap();
        writer.sync().unwrap();
        let seg = plain_segment(&fs);
        let short = fs.get(&events_dir().join(&seg)).unwrap();
        writer.append(vec![hit("late")]).unwrap();
        writer.sync().unwrap();
        drop(writer);
        let long = fs.get(&events_dir().join(&seg)).unwrap();
        fs.remove(&events_dir().join(&seg)).unwrap();
        let zst = format!("{seg}.zst");
        let short_at = if short_in_archive {
            events_dir().join("archive").join(&zst)
        } else {
            events_dir().join(&zst)
        };
        fs.create_dir_all(short_at.parent().unwrap()).unwrap();
        fs.put(&short_at, &zstd::bulk::compress(&short, 3).unwrap(), T0);
        let live = open(&fs, "live").unwrap();
        // A second fold looks the short copy's length up (the first read it whole).
        live.refresh().unwrap();
        assert_eq!((count(&live, "early"), count(&live, "late")), (1, 0));
        fs.put(
            &events_dir().join(&zst),
            &zstd::bulk::compress(&long, 3).unwrap(),
            T0,
        );
        live.refresh().unwrap();
        assert_eq!(
            (count(&live, "early"), count(&live, "late")),
            (1, 1),
            "short copy in the archive: {short_in_archive}"
        );
    }
}

/// A compressed copy that says nothing of what it holds (damaged, cut short, a Git LFS pointer
/// under its name) was read instead of the intact plain segment beside it, and compaction
/// removed the plain one.
#[test]
fn a_compressed_copy_that_holds_nothing_readable_never_replaces_the_plain_segment() {
    let fs = with_segments(1, 3, T0);
    let seg = plain_segment(&fs);
    fs.put(
        &events_dir().join(format!("{seg}.zst")),
        b"version https://git-lfs.github.com/spec/v1\n",
        T0,
    );
    let reader = open(&fs, "reader").unwrap();
    assert_eq!(count(&reader, "s0-e2"), 1);
    let r = reader.compact(policy(), T0 + 10 * DAY_MS).unwrap();
    assert!(!r.removed.contains(&seg), "{r:?}");
    assert!(fs.get(&events_dir().join(&seg)).is_some());
}

/// A compressed segment whose first chunk marker is damaged said nothing of its length, so a
/// shorter plain copy of the segment brought back beside it (a restore, a merge) was taken as
/// the longer one: compaction compressed it over the compressed file, losing the events only
/// that file held. The compressed file is trusted as before and the plain copy goes.
#[test]
fn a_compressed_segment_with_a_damaged_first_marker_is_never_overwritten_by_a_shorter_copy() {
    let fs = with_segments(1, 3, T0);
    let seg = plain_segment(&fs);
    let full = fs.get(&events_dir().join(&seg)).unwrap();
    let decoded = mnemon::events::segment::decode_segment(&full);
    let second = decoded.events[1].0 as usize;
    let later = T0 + 100 * DAY_MS;
    let log = open(&fs, "compactor").unwrap();
    let compressed = log.compact(policy(), later).unwrap().compressed;
    assert_eq!(compressed, std::slice::from_ref(&seg));
    drop(log);
    let zst_at = events_dir().join(format!("{seg}.zst"));
    let mut zst = fs.get(&zst_at).unwrap();
    zst[12] ^= 0xff; // inside the first marker's payload: its checksum fails
    fs.put(&zst_at, &zst, T0);
    fs.put(&events_dir().join(&seg), &full[..second], T0);
    fs.set_clock_ms(later);
    let log = open(&fs, "again").unwrap();
    let r = log.compact(policy(), later).unwrap();
    assert!(r.compressed.is_empty(), "{r:?}");
    assert_eq!(
        fs.get(&zst_at).unwrap(),
        zst,
        "the compressed file is kept as it was"
    );
    assert!(
        r.removed.contains(&seg),
        "the shorter plain copy goes: {r:?}"
    );
}

/// `events verify` said of a compressed segment whose first marker is damaged "read failed
/// midway ...; kept the events before it", though every event read, and of one whose first
/// chunk does not decode "bad magic: not a mnemon event segment". The first is damage read
/// past; the second a header lost with the chunk.
#[test]
fn a_compressed_segments_damage_is_told_as_what_it_cost() {
    use mnemon::events::log::read_segment;
    let fs = with_segments(1, 3, T0);
    let seg = plain_segment(&fs);
    let full = fs.get(&events_dir().join(&seg)).unwrap();
    let events = mnemon::events::segment::decode_segment(&full).events.len();
    let later = T0 + 100 * DAY_MS;
    let log = open(&fs, "compactor").unwrap();
    assert_eq!(log.compact(policy(), later).unwrap().compressed.len(), 1);
    drop(log);
    let zst_at = events_dir().join(format!("{seg}.zst"));
    let good = fs.get(&zst_at).unwrap();

    let mut zst = good.clone();
    zst[12] ^= 0xff; // inside the first marker's payload
    fs.put(&zst_at, &zst, later);
    let r = read_segment(&fs, &zst_at, true, 0);
    assert_eq!(r.events.len(), events);
    assert!(r.read_past, "{r:?}");
    let error = r.error.unwrap_or_default();
    assert!(
        error.contains("every event it still holds was read"),
        "{error}"
    );

    let mut zst = good;
    zst[30] ^= 0xff; // the first chunk's zstd frame magic: the chunk does not decode
    fs.put(&zst_at, &zst, later);
    let r = read_segment(&fs, &zst_at, true, 0);
    assert!(r.events.is_empty() && !r.read_past, "{r:?}");
    let error = r.error.unwrap_or_default();
    assert!(error.starts_with("its header reads as zeros"), "{error}");
    // The message says what to do: keep the file, restore it (or move a stranger's file away).
    assert!(
        error.contains("restore it from a backup or git")
            && error.contains("move it out of events/"),
        "{error}"
    );
}

/// The name of the plain segment file in `events/` (the test made one).
fn plain_segment(fs: &MemFs) -> String {
    fs.list(&events_dir())
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".seg"))
        .expect("a plain segment")
}

/// An id of a megabyte given to `show`, an anchor or feedback came back whole in the error (a
/// megabyte on a terminal, in an MCP answer). Messages show its start and its length.
#[test]
fn an_over_long_id_is_not_echoed_whole() {
    let (_tmp, m) = common::fresh();
    common::write_note(&m, "a.md", "---\nname: Alpha\n---\nalpha walrus\n");
    m.index().unwrap();
    let long = "x".repeat(1 << 20);
    let errors = [
        m.show(&long).err().map(|e| e.to_string()),
        m.recall(&mnemon::recall::Query::anchors([long.clone()]))
            .err()
            .map(|e| e.to_string()),
        m.feedback(std::slice::from_ref(&long), &[], Some("alpha"))
            .err()
            .map(|e| e.to_string()),
    ];
    for e in errors {
        let e = e.expect("an error");
        assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..400]);
        assert!(e.contains("(1048576 bytes)"), "{e}");
    }
}
