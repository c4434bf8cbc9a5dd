//! Crash-point enumeration (redb's crash_consistency.rs is the model): for append, compaction, GC
//! and snapshot writing, count the file-system calls of a clean run, then for every k crash at
//! call k (everything not fsynced is lost, or torn), reopen, and compare the folded state with a
//! model: every fsynced event counted exactly once, nothing counted twice, open never fails.

mod common;

use common::events::{DAY_MS, T0, count, hit, index_dir, open, policy, with_segments};
use mnemon::fs::{Fs, MemFs};
use std::collections::BTreeSet;

/// What a scenario did before the crash stopped it.
#[derive(Default)]
struct Model {
    /// Appended and then fsynced: must be counted exactly once.
    durable: BTreeSet<String>,
    /// Appended (maybe lost): counted at most once.
    attempted: BTreeSet<String>,
}

type Scenario = fn(&MemFs, &mut Model) -> mnemon::Result<()>;

fn append_scenario(fs: &MemFs, m: &mut Model) -> mnemon::Result<()> {
    let log = open(fs, "writer")?;
    let mut pending = Vec::new();
    for (i, sync_after) in [
        (0, true),
        (1, false),
        (2, true),
        (3, false),
        (4, false),
        (5, true),
    ] {
        let node = format!("a{i}");
        m.attempted.insert(node.clone());
        log.append(vec![hit(&node), hit(&format!("{node}-twin"))])?;
        m.attempted.insert(format!("{node}-twin"));
        pending.push(node);
        if sync_after {
            log.sync()?;
            for n in pending.drain(..) {
                m.durable.insert(format!("{n}-twin"));
                m.durable.insert(n);
            }
        }
    }
    Ok(())
}

fn setup_durable(m: &mut Model) -> MemFs {
    let fs = with_segments(3, 4, T0);
    for s in 0..3 {
        for i in 0..4 {
            let n = format!("s{s}-e{i}");
            m.attempted.insert(n.clone());
            m.durable.insert(n);
        }
    }
    fs
}

fn compaction_scenario(fs: &MemFs, _m: &mut Model) -> mnemon::Result<()> {
    fs.set_clock_ms(T0 + 100 * DAY_MS);
    let log = open(fs, "compactor")?;
    log.compact(policy(), T0 + 100 * DAY_MS)?;
    Ok(())
}

fn gc_scenario(fs: &MemFs, _m: &mut Model) -> mnemon::Result<()> {
    fs.set_clock_ms(T0 + 400 * DAY_MS);
    let log = open(fs, "gc")?;
    log.compact(policy(), T0 + 400 * DAY_MS)?;
    Ok(())
}

fn snapshot_scenario(fs: &MemFs, m: &mut Model) -> mnemon::Result<()> {
    let log = open(fs, "snap")?;
    log.write_snapshot()?;
    m.attempted.insert("after-snapshot".into());
    log.append(vec![hit("after-snapshot")])?;
    log.sync()?;
    m.durable.insert("after-snapshot".into());
    log.write_snapshot()?;
    Ok(())
}

/// Setup for GC: compressed segments due for archiving, plus an orphan `.seg` beside its `.zst`.
fn setup_gc(m: &mut Model) -> MemFs {
    let fs = setup_durable(m);
    let originals: Vec<(String, Vec<u8>)> = fs
        .list(&common::events::events_dir())
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".seg"))
        .map(|n| {
            let b = fs.get(&common::events::events_dir().join(&n)).unwrap();
            (n, b)
        })
        .collect();
    let log = open(&fs, "pre").unwrap();
    fs.set_clock_ms(T0 + 100 * DAY_MS);
    log.compact(policy(), T0 + 100 * DAY_MS).unwrap();
    drop(log);
    let (name, bytes) = &originals[0];
    fs.put(&common::events::events_dir().join(name), bytes, T0);
    fs
}

fn check(image: &MemFs, m: &Model, what: &str, k: u64) {
    let log = match open(image, "after-crash") {
        Ok(l) => l,
        Err(e) => panic!("{what}: open failed after a crash at call {k}: {e}"),
    };
    for n in &m.attempted {
        let c = count(&log, n);
        assert!(c <= 1, "{what}, crash at {k}: {n} counted {c} times");
        if m.durable.contains(n) {
            assert_eq!(c, 1, "{what}, crash at {k}: fsynced event {n} lost");
        }
    }
    // The image stays usable: another compaction and reopen agree.
    log.compact(policy(), T0 + 500 * DAY_MS)
        .unwrap_or_else(|e| panic!("{what} {k}: {e}"));
    drop(log);
    let again = open(image, "after-crash-2").unwrap();
    for n in &m.durable {
        assert_eq!(
            count(&again, n),
            1,
            "{what}, crash at {k}, after recompaction: {n}"
        );
    }
}

fn enumerate(what: &str, setup: fn(&mut Model) -> MemFs, scenario: Scenario) -> u64 {
    // A clean run counts the calls.
    let mut model = Model::default();
    let fs = setup(&mut model);
    let base = fs.calls();
    scenario(&fs, &mut model).unwrap_or_else(|e| panic!("{what}: clean run failed: {e}"));
    let total = fs.calls() - base;
    assert!(total > 0);
    for k in 1..=total {
        for tear in [false, true] {
            let mut model = Model::default();
            let fs = setup(&mut model);
            fs.crash_at(fs.calls() + k);
            let result = scenario(&fs, &mut model);
            assert!(
                result.is_err() || fs.crashed() || k > total,
                "{what}: call {k} never happened"
            );
            check(&fs.crash_image(tear), &model, what, k);
        }
    }
    total
}

fn empty(_: &mut Model) -> MemFs {
    let fs = MemFs::new();
    fs.set_clock_ms(T0);
    fs.create_dir_all(&index_dir()).unwrap();
    fs
}

#[test]
fn a_crash_at_any_call_keeps_every_fsynced_event_once_and_open_never_fails() {
    let mut covered = 0;
    for (what, setup, scenario) in [
        (
            "append",
            empty as fn(&mut Model) -> MemFs,
            append_scenario as Scenario,
        ),
        ("compaction", setup_durable, compaction_scenario),
        ("gc", setup_gc, gc_scenario),
        ("snapshot", setup_durable, snapshot_scenario),
    ] {
        let n = enumerate(what, setup, scenario);
        println!("{what}: {n} crash points, each with and without torn writes");
        covered += n;
    }
    println!("crash points covered: {covered} (x2 for torn writes)");
    assert!(covered > 40);
}

/// An I/O error (not a crash) at each call: the operation fails or succeeds, and afterwards the
/// same file system (no power loss) still opens with every event it acknowledged counted once.
#[test]
fn io_error_at_every_call_never_corrupts() {
    let mut model = Model::default();
    let fs = setup_durable(&mut model);
    let base = fs.calls();
    compaction_scenario(&fs, &mut model).unwrap();
    let total = fs.calls() - base;
    for k in 1..=total {
        let mut model = Model::default();
        let fs = setup_durable(&mut model);
        fs.fail_at(fs.calls() + k);
        let _ = compaction_scenario(&fs, &mut model);
        let log = open(&fs, "after-error").unwrap();
        for n in &model.durable {
            assert_eq!(count(&log, n), 1, "error at {k}: {n}");
        }
    }
    println!("io error points covered: {total}");
}

/// A failed fsync is reported naming the segment; the events it held stay counted, and later
/// appends go on in a new segment of the same process (a retried fsync of the old one could
/// report success for data the kernel dropped).
#[test]
fn failed_fsync_is_reported_and_later_appends_resume_in_a_new_segment() {
    let fs = empty(&mut Model::default());
    let log = open(&fs, "p").unwrap();
    log.append(vec![hit("x")]).unwrap();
    let first = log.own_segment_id().unwrap();
    fs.fail_at(fs.calls() + 1);
    let err = log.sync().unwrap_err();
    assert!(matches!(err, mnemon::Error::EventLog { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("fsync failed") && msg.contains(&first),
        "{msg}"
    );
    log.append(vec![hit("y")]).unwrap();
    assert_ne!(log.own_segment_id().unwrap(), first);
    log.sync().unwrap();
    drop(log);
    let again = open(&fs, "check").unwrap();
    assert_eq!((count(&again, "x"), count(&again, "y")), (1, 1));
}
