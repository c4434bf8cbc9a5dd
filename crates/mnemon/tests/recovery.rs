//! Recovery from damaged event files, through the whole open path (snapshot cases are in
//! events.rs: zero-length, newer version, flipped byte, truncated).

mod common;

use common::events::{T0, count, events_dir, open, with_segments};
use mnemon::fs::{Fs, MemFs};

fn only_segment(fs: &MemFs) -> std::path::PathBuf {
    let names = fs.list(&events_dir()).unwrap();
    assert_eq!(names.len(), 1, "{names:?}");
    events_dir().join(&names[0])
}

#[test]
fn flipped_byte_in_a_frame_loses_only_that_frame() {
    let fs = with_segments(1, 10, T0);
    let seg = only_segment(&fs);
    let mut b = fs.get(&seg).unwrap();
    let d = mnemon::events::segment::decode_segment(&b);
    let (fifth, _) = d.events[4];
    b[fifth as usize + 12] ^= 0x01;
    fs.put(&seg, &b, T0);
    let log = open(&fs, "r").unwrap();
    let counts: Vec<u64> = (0..10).map(|i| count(&log, &format!("s0-e{i}"))).collect();
    assert_eq!(counts, vec![1, 1, 1, 1, 0, 1, 1, 1, 1, 1]);
}

#[test]
fn truncated_segment_keeps_complete_frames() {
    let fs = with_segments(1, 10, T0);
    let seg = only_segment(&fs);
    let b = fs.get(&seg).unwrap();
    fs.put(&seg, &b[..b.len() - 7], T0);
    let log = open(&fs, "r").unwrap();
    let counts: Vec<u64> = (0..10).map(|i| count(&log, &format!("s0-e{i}"))).collect();
    assert_eq!(counts, vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
}

#[test]
fn garbage_files_in_events_are_ignored() {
    let fs = with_segments(1, 3, T0);
    fs.put(&events_dir().join("README.txt"), b"not a segment", T0);
    fs.put(
        &events_dir().join("0000000000000-x-1-0.seg"),
        b"\x00\x01garbage",
        T0,
    );
    fs.put(&events_dir().join("0000000000001-y-1-0.seg"), b"", T0);
    let log = open(&fs, "r").unwrap();
    assert_eq!(count(&log, "s0-e2"), 1);
    let notices = log.take_notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("0000000000000-x-1-0.seg")),
        "the bad segment is named: {notices:?}"
    );
}

#[test]
fn segment_with_a_damaged_header_contributes_nothing_and_breaks_nothing() {
    let fs = with_segments(2, 3, T0);
    let names = fs.list(&events_dir()).unwrap();
    let p = events_dir().join(&names[0]);
    let mut b = fs.get(&p).unwrap();
    b[9] ^= 0xff; // the version field
    fs.put(&p, &b, T0);
    let log = open(&fs, "r").unwrap();
    let s0: u64 = (0..3).map(|i| count(&log, &format!("s0-e{i}"))).sum();
    let s1: u64 = (0..3).map(|i| count(&log, &format!("s1-e{i}"))).sum();
    assert_eq!((s0, s1), (0, 3));
}

#[test]
fn a_live_writers_segment_is_never_compacted_whatever_its_age() {
    use common::events::{DAY_MS, hit, policy};
    let fs = MemFs::new();
    fs.set_clock_ms(T0);
    fs.create_dir_all(&common::events::index_dir()).unwrap();
    let writer = open(&fs, "live").unwrap();
    writer.append(vec![hit("x")]).unwrap();
    let now = T0 + 200 * DAY_MS;
    let other = open(&fs, "compactor").unwrap();
    let r = other.compact(policy(), now).unwrap();
    assert!(r.compressed.is_empty(), "{r:?}");
    writer.append(vec![hit("x")]).unwrap();
    drop(writer);
    let r = other.compact(policy(), now).unwrap();
    assert_eq!(r.compressed.len(), 1, "{r:?}");
    drop(other);
    assert_eq!(count(&open(&fs, "check").unwrap(), "x"), 2);
}

/// Regression: a live process's segment removed under it (`rm`, `git clean`, a sync tool):
/// every later append went to the unlinked file, answered as recorded, and no other process
/// ever counted them. The writer notices the file is gone, says so, and goes on in a new
/// segment that others read.
#[test]
fn appends_after_the_live_segment_was_removed_go_to_a_new_segment() {
    let fs = with_segments(0, 0, T0);
    let log = open(&fs, "live").unwrap();
    log.append(vec![common::events::hit("before")]).unwrap();
    let seg = only_segment(&fs);
    fs.remove(&seg).unwrap();
    log.append(vec![common::events::hit("after")]).unwrap();
    let notices = log.take_notices().join("\n");
    assert!(
        notices.contains("was removed while this process wrote to it"),
        "{notices}"
    );
    let now = only_segment(&fs);
    assert_ne!(now, seg, "a new segment");
    let reader = open(&fs, "reader").unwrap();
    assert_eq!(
        count(&reader, "after"),
        1,
        "the new segment is read by others"
    );
    assert_eq!(count(&reader, "before"), 0, "lost with the removed file");
}

/// A writer that leaves a segment it could not check (its `stat` failed) still fsyncs what it
/// acknowledged there: after `sync` returns, both batches survive a power loss.
#[test]
fn a_segment_left_because_it_could_not_be_checked_is_still_synced() {
    let fs = with_segments(0, 0, T0);
    let log = open(&fs, "live").unwrap();
    log.append(vec![common::events::hit("a0")]).unwrap();
    // The next call is the check of the segment before the next batch.
    fs.fail_at(fs.calls() + 1);
    log.append(vec![common::events::hit("a1")]).unwrap();
    let notices = log.take_notices().join("\n");
    assert!(notices.contains("cannot be checked"), "{notices}");
    log.sync().unwrap();
    let image = fs.crash_image(false);
    let reader = open(&image, "reader").unwrap();
    assert_eq!(count(&reader, "a0"), 1, "fsynced though left");
    assert_eq!(count(&reader, "a1"), 1);
}
