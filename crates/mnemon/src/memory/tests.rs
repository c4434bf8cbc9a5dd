//! Tests of the facade that need its private parts.

use super::ingest::OVERLAP_STORE_MIN_NOTES;
use super::*;
use crate::index::segment::writer::build_segment;
use crate::scan;
use crate::store::StoreReader;
use mnemon_testkit::corpus::{GenConfig, generate};
use std::collections::HashMap;

/// A big scan writes its note rows beside the lexical pass, then its out-lists: the store
/// must hold what one `apply` of the finished batch writes.
#[test]
fn store_written_beside_the_lexical_pass_equals_one_apply_of_the_batch() {
    let notes = OVERLAP_STORE_MIN_NOTES + 88;
    let tmp = tempfile::tempdir().expect("tempdir");
    generate(&GenConfig::new(notes, 13), tmp.path()).expect("generate");
    let threaded = Memory::init(tmp.path()).expect("init");
    let report = threaded.index().expect("index");
    assert_eq!(report.notes as usize, notes);

    let tmp2 = tempfile::tempdir().expect("tempdir");
    generate(&GenConfig::new(notes, 13), tmp2.path()).expect("generate");
    let plain = Memory::init(tmp2.path()).expect("init");
    let mut outcome = scan::scan(&plain.dir().memory(), &HashMap::new());
    let (_, lex, synth) = plain
        .lexical_and_synthesized(
            &outcome,
            &mut IndexPhases::default(),
            Instant::now(),
            &mut || {},
        )
        .expect("lexical");
    for (u, (s, _)) in outcome.batch.upserts.iter_mut().zip(synth) {
        u.edges.extend(s);
    }
    outcome.batch.lexical_generation = Some(lex.generation());
    plain.store.apply(&outcome.batch).expect("apply");

    let (a, b) = (
        threaded.store.read().expect("read"),
        plain.store.read().expect("read"),
    );
    assert_eq!(a.all_nodes().expect("nodes"), b.all_nodes().expect("nodes"));
    let edges = a.all_edges().expect("edges");
    assert_eq!(edges, b.all_edges().expect("edges"));
    assert!(edges.len() > notes * 3, "{} edges", edges.len());
    assert_eq!(a.edge_count().expect("count"), edges.len() as u64);
    assert_eq!(
        a.edge_count().expect("count"),
        b.edge_count().expect("count")
    );
    // Every edge is among its target's in-edges (found in the out-lists), nothing else is.
    let mut mirrored = Vec::new();
    for (id, _) in a.all_nodes().expect("nodes") {
        for e in a.edges_in(&id).expect("in") {
            mirrored.push((e.other, id.clone()));
        }
    }
    let mut want: Vec<(String, String)> = edges
        .iter()
        .filter(|e| a.has_node(&e.to).unwrap_or(false))
        .map(|e| (e.from.clone(), e.to.clone()))
        .collect();
    mirrored.sort();
    want.sort();
    assert_eq!(mirrored, want);
    let manifest = |r: &StoreReader<'_>| {
        let mut m: Vec<_> = r.manifest().expect("manifest").into_iter().collect();
        m.sort_by(|x, y| x.0.cmp(&y.0));
        m.into_iter().map(|(p, f)| (p, f.size)).collect::<Vec<_>>()
    };
    assert_eq!(manifest(&a), manifest(&b));
    assert_eq!(manifest(&a).len(), notes);
    assert_eq!(
        a.lexical_generation().expect("generation"),
        b.lexical_generation().expect("generation")
    );
}

#[test]
fn lexical_segment_built_in_chunks_equals_one_built_at_once_in_id_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    generate(&GenConfig::new(60, 3), tmp.path()).expect("generate");
    let memory = Memory::init(tmp.path()).expect("init");
    let mut parsed = scan::scan(&memory.dir().memory(), &HashMap::new()).parsed;
    assert_eq!(parsed.len(), 60);
    // Any order in, id order out.
    parsed.reverse();
    let mut docs = memory.doc_terms(&parsed);
    docs.sort_by(|a, b| a.id.cmp(&b.id));
    let want = build_segment(&docs).expect("build");
    for chunk in [1, 7, 60, 4096] {
        // The work beside the build runs once, whether the notes are one chunk or more.
        let mut beside_runs = 0;
        let (segment, ids) = memory
            .lexical_segment(&parsed, chunk, &mut || beside_runs += 1)
            .expect("segment");
        assert_eq!(beside_runs, 1, "chunks of {chunk}");
        let segment = segment.map(|l| l.finish().expect("finish"));
        assert_eq!(segment, Some(want.clone()), "chunks of {chunk}");
        assert!(ids.windows(2).all(|w| w[0] < w[1]) && ids.len() == 60);
    }
}

/// `show` lists a note's in-edges from this process's graph when it holds one of the store's
/// version, else from one pass over the out-lists: the same edges in the same order, after
/// a cold build and after an update the graph was patched with.
#[test]
fn show_in_edges_from_the_graph_equal_those_found_in_the_store() {
    let tmp = tempfile::tempdir().expect("tempdir");
    generate(&GenConfig::new(300, 5), tmp.path()).expect("generate");
    let m = Memory::init(tmp.path()).expect("init");
    m.index().expect("index");
    let both = |m: &Memory| {
        let r = m.store.read().expect("read");
        let v = r.version().expect("version");
        let mut ids: Vec<String> = r
            .all_nodes()
            .expect("nodes")
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        ids.push("no-such-note".into());
        let json = |e: Vec<EdgeIn>| serde_json::to_string(&e).expect("json");
        let found: Vec<String> = ids
            .iter()
            .map(|id| json(m.edges_into(&r, id).expect("in")))
            .collect();
        let graph = m
            .graph(&LazyReader::deferred(&m.store, v), v)
            .expect("graph");
        assert_eq!(graph.version(), v);
        let held: Vec<String> = ids
            .iter()
            .map(|id| json(m.edges_into(&r, id).expect("in")))
            .collect();
        assert_eq!(found, held);
        let edges: usize = found.iter().map(|j| j.matches("\"from\"").count()).sum();
        let into_notes = r.all_edges().expect("edges");
        let into_notes = into_notes.iter().filter(|e| ids.contains(&e.to)).count();
        assert_eq!(edges, into_notes);
        assert!(edges > ids.len(), "{edges} edges");
        // The next reader sees no graph of its version until it loads one.
        *m.graph.write().expect("graph") = Arc::new(Graph::default());
    };
    both(&m);
    // Rewrite a note that others link to, so that the graph is patched, not reloaded.
    let mut q = Query::text("deploy");
    q.record = false;
    m.recall(&q).expect("recall");
    let hub = {
        let r = m.store.read().expect("read");
        r.all_nodes()
            .expect("nodes")
            .into_iter()
            .map(|(id, rec)| (r.edges_in(&id).expect("in").len(), id, rec.path))
            .max()
            .expect("a node")
    };
    assert!(hub.0 > 2, "the busiest note has {} in-edges", hub.0);
    let first_out = {
        let r = m.store.read().expect("read");
        r.edges_out(&hub.1).expect("out")[0].other.clone()
    };
    std::fs::write(
        m.dir().memory().join(&hub.2),
        format!("Rewritten: only [[{first_out}]] now."),
    )
    .expect("write");
    m.index().expect("index");
    both(&m);
}

/// A memory of three notes, indexed, and a query that finds the first.
fn three_notes() -> (tempfile::TempDir, Memory, Query) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let memory = Memory::init(tmp.path().join(".mnemon")).expect("init");
    for (id, body) in [
        (
            "alpha",
            "Zebra crossings near the depot need a second look.",
        ),
        ("beta", "Nothing about animals here, only [[alpha]]."),
        ("gamma", "The deploy pipeline and its canary."),
    ] {
        std::fs::write(memory.dir().memory().join(format!("{id}.md")), body).expect("write");
    }
    memory.index().expect("index");
    let mut q = Query::text("zebra crossing");
    q.record = false;
    (tmp, memory, q)
}

/// Another handle on the memory, whose commits are not counted (as a writer from before the
/// count, or one that died before counting its end, leaves them), writes `file` (removes it
/// when `text` is `None`) and indexes.
fn write_uncounted(tmp: &tempfile::TempDir, file: &str, text: Option<&str>) {
    let mut b = Memory::open(tmp.path().join(".mnemon")).expect("open b");
    b.store.stop_counting_writes();
    let path = b.dir().memory().join(file);
    match text {
        Some(t) => std::fs::write(&path, t).expect("write"),
        None => std::fs::remove_file(&path).expect("remove"),
    }
    b.index().expect("index b");
}

/// The first id `m` recalls for `q`, checking that the recall began `transactions` store
/// read transactions (0: it reused the version it read last).
fn first_recalled(m: &Memory, q: &Query, transactions: u64) -> String {
    let reads = m.store.reads_begun();
    let first = ids(m, q).swap_remove(0);
    assert_eq!(
        m.store.reads_begun() - reads,
        transactions,
        "read transactions"
    );
    first
}

fn ids(m: &Memory, q: &Query) -> Vec<String> {
    m.recall(q)
        .expect("recall")
        .results
        .into_iter()
        .map(|h| h.id)
        .collect()
}

#[test]
fn recalls_with_the_change_count_unmoved_begin_no_read_transaction_and_see_other_writers() {
    let (tmp, a, q) = three_notes();
    // No recheck by the clock: what is checked here is the change count alone.
    let a = a.with_store_recheck(std::time::Duration::from_secs(3600));
    assert_eq!(ids(&a, &q)[0], "alpha");
    let reads = a.store.reads_begun();
    assert_eq!(first_recalled(&a, &q, 0), "alpha");
    assert_eq!(first_recalled(&a, &q, 0), "alpha");
    // Another handle (as another process would) adds a better match.
    let b = Memory::open(tmp.path().join(".mnemon")).expect("open b");
    std::fs::write(
        b.dir().memory().join("zebra-crossing.md"),
        "---\nname: Zebra crossing\n---\nZebra crossing rules: every zebra crossing is checked.",
    )
    .expect("write");
    b.index().expect("index b");
    assert_eq!(
        ids(&a, &q)[0],
        "zebra-crossing",
        "the other writer's commit is seen"
    );
    assert!(a.store.reads_begun() > reads);
    assert_eq!(first_recalled(&a, &q, 0), "zebra-crossing");
}

#[test]
fn a_writer_that_died_between_its_counts_sends_recalls_to_the_store_until_the_write_lock() {
    let (tmp, a, q) = three_notes();
    // No recheck by the clock: what is checked here is the change count alone.
    let a = a.with_store_recheck(std::time::Duration::from_secs(3600));
    assert_eq!(ids(&a, &q)[0], "alpha");
    assert_eq!(ids(&a, &q)[0], "alpha");
    // A writer counts its start, commits, and dies before counting its end.
    let seq = crate::store::ChangeSeq::open(&a.dir().index()).expect("seq");
    std::mem::forget(seq.counting());
    write_uncounted(
        &tmp,
        "zebra-crossing.md",
        Some(
            "---\nname: Zebra crossing\n---\nZebra crossing rules: every zebra crossing is checked.",
        ),
    );
    let (started, finished) = seq.counts();
    assert_eq!(started, finished + 1, "the end was never counted");
    // `finished` did not move: only the unequal count keeps `a` off its remembered version.
    assert_eq!(ids(&a, &q)[0], "zebra-crossing");
    assert_eq!(
        first_recalled(&a, &q, 1),
        "zebra-crossing",
        "every recall reads"
    );
    // The next holder of the write lock settles the count; recalls skip the store again.
    drop(a.write_lock().expect("lock"));
    let (started, finished) = seq.counts();
    assert_eq!(started, finished);
    assert_eq!(ids(&a, &q)[0], "zebra-crossing");
    assert_eq!(first_recalled(&a, &q, 0), "zebra-crossing");
}

#[test]
fn an_unusable_change_count_is_reported_at_open_and_by_doctor_and_recalls_stay_exact() {
    let (tmp, a, q) = three_notes();
    drop(a);
    let root = tmp.path().join(".mnemon");
    let seq = root.join("index").join(crate::store::seq::SEQ_FILE);
    let mut bytes = std::fs::read(&seq).expect("read");
    bytes[1] = b'X';
    std::fs::write(&seq, &bytes).expect("damage");
    let m = Memory::open(&root).expect("open");
    let notices = m.take_notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("store.seq") && n.contains("magic")),
        "{notices:?}"
    );
    assert_eq!(ids(&m, &q)[0], "alpha");
    assert_eq!(
        first_recalled(&m, &q, 1),
        "alpha",
        "exact path: a transaction each"
    );
    let d = m.doctor().expect("doctor");
    assert!(!d.healthy && !d.index.ok);
    assert!(
        d.index
            .message
            .as_deref()
            .is_some_and(|s| s.contains("mnemon doctor --fix"))
    );
    assert_eq!(std::fs::read(&seq).expect("read"), bytes, "left as it was");
    // What `doctor --fix` does: the file moved aside, a new one made at the next open.
    let dir = m.dir().clone();
    drop(m);
    let aside = Memory::discard_change_seq(&dir)
        .expect("discard")
        .expect("unusable");
    assert_eq!(std::fs::read(&aside).expect("read"), bytes);
    let m = Memory::open(&root).expect("open");
    assert!(m.doctor().expect("doctor").index.ok);
    drop(m);
    assert_eq!(
        Memory::discard_change_seq(&dir).expect("discard"),
        None,
        "usable: kept"
    );
}

#[test]
fn a_recall_that_must_read_a_record_and_finds_a_newer_version_recalls_again_at_it() {
    let (tmp, a, q) = three_notes();
    // No recheck by the clock: what is checked here is the change count alone.
    let a = a.with_store_recheck(std::time::Duration::from_secs(3600));
    let clock = crate::time::FixedClock(1_780_000_000);
    let a = a.with_clock(clock);
    // Only alpha is shown, so only alpha's record is kept.
    let mut q = q.with_depth(0).with_limit(1);
    q.record = false;
    assert_eq!(ids(&a, &q), vec!["alpha".to_string()]);
    // A writer that does not count its commit (as a build before the count would).
    write_uncounted(
        &tmp,
        "gamma.md",
        Some("The deploy pipeline, its canary and the zebra crossing checks."),
    );
    // The count did not move; a query whose records `a` has not kept begins a transaction,
    // which finds the newer version: the recall is made again there.
    let mut q2 = Query::text("deploy canary zebra");
    q2.record = false;
    let scored = |m: &Memory| -> Vec<(String, u32, String)> {
        let r = m.recall(&q2).expect("recall").results;
        r.into_iter()
            .map(|h| (h.id, h.score.to_bits(), h.excerpt))
            .collect()
    };
    let got = scored(&a);
    // What a new handle (no remembered version) answers: the newer version, whole.
    let fresh = Memory::open(tmp.path().join(".mnemon"))
        .expect("open c")
        .with_clock(clock);
    assert_eq!(got, scored(&fresh));
    assert_eq!(got[0].0, "gamma");
    assert!(got[0].2.contains("zebra"), "{:?}", got[0].2);
    // The version it remembers now is the newer one.
    assert_eq!(first_recalled(&a, &q2, 0), "gamma");
}

#[test]
fn an_uncounted_commit_is_seen_once_the_recheck_interval_has_passed() {
    let (tmp, a, q) = three_notes();
    assert_eq!(ids(&a, &q)[0], "alpha");
    write_uncounted(&tmp, "alpha.md", None);
    std::thread::sleep(STORE_RECHECK_INTERVAL + std::time::Duration::from_millis(100));
    assert!(
        !ids(&a, &q).contains(&"alpha".to_string()),
        "removed note still recalled"
    );
}

/// Regression: with a clock set (`mnemon eval --at`), uses were still dated by the system
/// clock, so recency weighed a use made "now" against the clock's time: none when the clock was
/// earlier, a bonus that moved with the real day when later. They are dated by the clock.
#[test]
fn events_recorded_under_a_set_clock_are_dated_by_it() {
    let (_tmp, a, _q) = three_notes();
    let at_s = 1_780_000_000;
    let a = a.with_clock(crate::time::FixedClock(at_s));
    a.feedback(&["alpha".to_string()], &[], Some("zebra crossing"))
        .expect("feedback");
    let used_ms = a.stats("alpha").expect("stats").last_used_ms;
    assert_eq!(used_ms, Some(at_s * 1000));
}

/// Regression: two handles opened with one session in one process each counted their recalls
/// from 0, so their first recalls had one id. They share the count.
#[test]
fn two_handles_given_one_session_name_their_recalls_apart() {
    let (tmp, a, q) = three_notes();
    drop(a);
    let open = || {
        Memory::open_with(
            crate::folder::MemoryDir::at(tmp.path().join(".mnemon")),
            crate::OpenOptions::default().with_session("shared-session-under-test".to_string()),
        )
        .expect("open")
    };
    let (a, b) = (open(), open());
    let qa = a.recall(&q).expect("recall a").qid;
    let qb = b.recall(&q).expect("recall b").qid;
    assert_ne!(qa, qb);
    assert!(qa.starts_with("shared-session-under-test-p"), "{qa}");
    // Closed and opened again, the session counts on.
    drop((a, b));
    let c = open();
    let qc = c.recall(&q).expect("recall c").qid;
    assert!(qc.ends_with("-q2"), "{qc}");
}

/// A process forked while a thread of its parent opened a memory inherits the session
/// counters' lock held, and no thread of its own releases it: opening waited forever. After a
/// bounded wait the handle counts alone; a lock that is free is shared as before.
#[test]
fn a_session_counter_lock_held_elsewhere_is_waited_for_only_so_long() {
    let counters = Mutex::new(SessionCounters::default());
    let first = session_counter_in(&counters, "s1");
    assert!(Arc::ptr_eq(&first, &session_counter_in(&counters, "s1")));
    let held = counters.lock().expect("lock");
    let alone = session_counter_in(&counters, "s1");
    assert!(!Arc::ptr_eq(&first, &alone), "a counter of its own");
    drop(held);
    assert!(Arc::ptr_eq(&first, &session_counter_in(&counters, "s1")));
}
