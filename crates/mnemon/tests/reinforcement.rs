//! What changes rankings after use, and what must not: feedback lifts the notes used for a
//! question (and for questions worded like it), a note found wrong sinks, a note returned often
//! but never used does not climb, a fetch by id is a use; the score floor returns nothing for a
//! question the memory has no answer for; a question that names a note puts it first.

mod common;

use common::{fresh, write_note};
use mnemon::Memory;
use mnemon::recall::{Query, Recall};

fn ids(r: &Recall) -> Vec<&str> {
    r.results.iter().map(|h| h.id.as_str()).collect()
}

fn look(m: &Memory, text: &str) -> Recall {
    let mut q = Query::text(text);
    q.record = false;
    m.recall(&q).unwrap()
}

fn rank(r: &Recall, id: &str) -> Option<usize> {
    r.results.iter().position(|h| h.id == id)
}

fn score(r: &Recall, id: &str) -> f32 {
    r.results
        .iter()
        .find(|h| h.id == id)
        .map_or(0.0, |h| h.score)
}

/// Two notes about batching; `batch-sizes` matches "batch import" better than `import-jobs`.
fn two_batch_notes() -> (tempfile::TempDir, Memory) {
    let (tmp, m) = fresh();
    write_note(
        &m,
        "batch-sizes.md",
        "---\nname: Batch sizes\n---\nBatch import uses batches of 500 rows; batch size matters for import speed.\n",
    );
    write_note(
        &m,
        "import-jobs.md",
        "---\nname: Import jobs\n---\nThe nightly import runs as a batch job on the worker queue.\n",
    );
    for i in 0..8 {
        write_note(
            &m,
            &format!("filler-{i}.md"),
            format!("---\nname: Filler {i}\n---\nUnrelated text about gardens and bicycles {i}.\n"),
        );
    }
    m.index().unwrap();
    (tmp, m)
}

#[test]
fn a_note_returned_often_but_never_used_does_not_climb() {
    let (_t, m) = two_batch_notes();
    let cold = look(&m, "batch import");
    assert_eq!(ids(&cold)[..2], ["batch-sizes", "import-jobs"]);
    // Asked 20 times, recorded as an agent's recalls: both notes are returned every time.
    for _ in 0..20 {
        let r = m.recall(&Query::text("batch import")).unwrap();
        assert!(rank(&r, "import-jobs").is_some());
    }
    assert!(m.stats("import-jobs").unwrap().recall_count >= 20);
    let after = look(&m, "batch import");
    assert_eq!(ids(&after), ids(&cold));
    for id in ["batch-sizes", "import-jobs"] {
        assert_eq!(score(&after, id), score(&cold, id), "{id} moved");
    }
}

#[test]
fn feedback_lifts_the_used_note_for_its_question_and_questions_worded_like_it() {
    let (_t, m) = two_batch_notes();
    let r = m.recall(&Query::text("batch import")).unwrap();
    assert_eq!(rank(&r, "import-jobs"), Some(1));
    // No question given: the feedback is about this process's last recall.
    let fb = m.feedback(&["import-jobs".into()], &[], None).unwrap();
    assert_eq!(fb.query, "batch import");
    assert_eq!(fb.qid, r.qid);
    assert_eq!(rank(&look(&m, "batch import"), "import-jobs"), Some(0));
    assert_eq!(rank(&look(&m, "Batch  IMPORT"), "import-jobs"), Some(0));
    // A question sharing its informative words with the one the note was used for.
    assert_eq!(
        rank(&look(&m, "import batch nightly"), "import-jobs"),
        Some(0)
    );
    let x = &look(&m, "batch import").results[0].explain;
    assert!(x.learned > 0.0, "{x:?}");
}

#[test]
fn feedback_bridges_words_the_note_does_not_contain() {
    let (_t, m) = two_batch_notes();
    let question = "ingest pipeline";
    assert!(
        look(&m, question).results.is_empty(),
        "no note holds these words"
    );
    m.feedback(&["import-jobs".into()], &[], Some(question))
        .unwrap();
    let r = look(&m, question);
    assert_eq!(ids(&r).first(), Some(&"import-jobs"), "{:?}", ids(&r));
    // One of the two words, worded again: half of the question's information still points there.
    assert_eq!(ids(&look(&m, "ingest")).first(), Some(&"import-jobs"));
    // A question about something else is not answered with it.
    assert!(look(&m, "gardens pipeline cucumbers").results.len() <= 1);
}

/// Regression: feedback on a question that shares only a word or two with a later, longer one
/// decided the later one's close call for the note used then, although the later question was
/// about something else.
#[test]
fn feedback_on_a_question_sharing_a_few_words_does_not_decide_another_question() {
    let (_t, m) = fresh();
    write_note(
        &m,
        "console-roles.md",
        "---\nname: Console roles\n---\nWho may use the admin console: the viewer, editor and owner roles; owners grant roles.\n",
    );
    write_note(
        &m,
        "session-idle.md",
        "---\nname: Idle sessions\n---\nAn admin console session that stays idle for 30 minutes is signed out; the user logs in again.\n",
    );
    for i in 0..8 {
        write_note(
            &m,
            &format!("filler-{i}.md"),
            format!("---\nname: Filler {i}\n---\nUnrelated text about gardens and bicycles {i}.\n"),
        );
    }
    m.index().unwrap();
    let later = "how long can a user sit idle in the admin console";
    assert_eq!(ids(&look(&m, later)).first(), Some(&"session-idle"));
    for _ in 0..2 {
        m.feedback(
            &["console-roles".into()],
            &[],
            Some("which roles may use the admin console"),
        )
        .unwrap();
    }
    let r = look(&m, later);
    assert_eq!(ids(&r).first(), Some(&"session-idle"), "{:?}", r.results);
    // The question the feedback was given for, and one worded nearly alike, still find the note.
    assert_eq!(
        ids(&look(&m, "which roles may use the admin console")).first(),
        Some(&"console-roles")
    );
    assert_eq!(
        ids(&look(&m, "admin console roles")).first(),
        Some(&"console-roles")
    );
}

#[test]
fn a_note_found_wrong_sinks_for_that_question() {
    let (_t, m) = two_batch_notes();
    let before = look(&m, "batch import");
    assert_eq!(rank(&before, "batch-sizes"), Some(0));
    m.feedback(&[], &["batch-sizes".into()], Some("batch import"))
        .unwrap();
    let after = look(&m, "batch import");
    assert!(
        score(&after, "batch-sizes") < score(&before, "batch-sizes") * 0.8,
        "{:?}",
        after.results
    );
    assert_eq!(rank(&after, "import-jobs"), Some(0));
    assert_eq!(m.stats("batch-sizes").unwrap().wrong_count, 1);
}

#[test]
fn a_fetch_by_id_is_a_use_and_lifts_the_note_among_close_matches() {
    let (_t, m) = two_batch_notes();
    let cold = look(&m, "batch import");
    let ratio = score(&cold, "import-jobs") / score(&cold, "batch-sizes");
    assert!(ratio > 0.6, "a close call: {ratio}");
    for _ in 0..5 {
        m.recall(&Query::anchors(["import-jobs"]).with_depth(0))
            .unwrap();
    }
    let s = m.stats("import-jobs").unwrap();
    assert_eq!((s.used_count, s.untied_used), (5, 5));
    let warm = look(&m, "batch import");
    assert_eq!(rank(&warm, "import-jobs"), Some(0), "{:?}", warm.results);
    // An anchor recall that explores around the note (depth > 0) is not a fetch.
    m.recall(&Query::anchors(["batch-sizes"]).with_depth(1))
        .unwrap();
    assert_eq!(m.stats("batch-sizes").unwrap().used_count, 0);
    // A fetch naming a note twice is one use of it.
    m.recall(&Query::anchors(["import-jobs", "import-jobs"]).with_depth(0))
        .unwrap();
    assert_eq!(m.stats("import-jobs").unwrap().used_count, 6);
}

#[test]
fn feedback_checks_its_arguments_and_loses_nothing() {
    let (_t, m) = two_batch_notes();
    let err = |used: &[&str], wrong: &[&str]| {
        let used: Vec<String> = used.iter().map(|s| s.to_string()).collect();
        let wrong: Vec<String> = wrong.iter().map(|s| s.to_string()).collect();
        m.feedback(&used, &wrong, Some("q"))
            .unwrap_err()
            .to_string()
    };
    assert!(err(&[], &[]).contains("at least one note"));
    assert!(err(&["nope"], &[]).contains("no note with id `nope`"));
    assert!(err(&["batch-sizes"], &["batch-sizes"]).contains("both used and wrong"));
    assert!(err(&["../x"], &[]).contains("../x"));
    assert_eq!(
        m.events().event_count(),
        0,
        "nothing recorded by a refused call"
    );
}

#[test]
fn feedback_survives_a_snapshot_and_reaches_another_process() {
    let (tmp, m) = two_batch_notes();
    m.feedback(&["import-jobs".into()], &[], Some("ingest pipeline"))
        .unwrap();
    m.write_snapshot().unwrap();
    drop(m);
    let other = Memory::open(tmp.path().join(".mnemon")).unwrap();
    assert_eq!(
        ids(&look(&other, "ingest pipeline")).first(),
        Some(&"import-jobs")
    );
    assert_eq!(other.stats("import-jobs").unwrap().used_count, 1);
}

fn demo() -> (tempfile::TempDir, Memory) {
    let tmp = tempfile::tempdir().unwrap();
    let src = mnemon_testkit::fixtures::demo_notes();
    let m = mnemon_testkit::eval::run::build_memory(&src, &tmp.path().join(".mnemon")).unwrap();
    assert!(m.show("runbooks/deploy-rollback").is_ok());
    (tmp, m)
}

#[test]
fn an_off_topic_question_returns_nothing_and_explains_why() {
    let (_t, m) = demo();
    for q in [
        "how do I bake sourdough bread",
        "who won the football world cup",
        "best beaches to visit in portugal in summer",
    ] {
        let r = look(&m, q);
        assert!(r.results.is_empty(), "{q}: {:?}", ids(&r));
        assert!(!r.floor.terms.is_empty());
    }
    // One word shared with a longer question in another sense is not enough.
    let r = look(&m, "rollback my knee surgery recovery plan");
    assert!(r.results.len() <= 1, "{:?}", ids(&r));
}

#[test]
fn a_weak_question_gets_its_best_note_without_the_notes_around_it() {
    let (_t, m) = demo();
    let r = look(&m, "pgbouncer knitting patterns for winter scarves");
    assert!(r.floor.weak || r.results.is_empty(), "{:?}", r.floor);
    assert!(!r.floor.alone, "no hit is strong: {:?}", r.floor);
    assert!(r.results.len() <= 1, "{:?}", ids(&r));
}

#[test]
fn a_question_that_names_a_note_puts_it_first_whatever_the_priors() {
    let (_t, m) = demo();
    // A reference note (the lowest type weight) named by its id's last segment, by its title,
    // and with a typo.
    for q in [
        "deploy rollback",
        "Runbook: Deploy Rollback",
        "deploy rolback",
        "Runbook: Deploy Rolback",
        "  runbooks/deploy-rollback  ",
    ] {
        let r = look(&m, q);
        assert_eq!(ids(&r).first(), Some(&"runbooks/deploy-rollback"), "{q}");
        assert!(r.results[0].explain.title_match, "{q}");
    }
}

/// Only the three best lexical hits were checked for a title match: three notes titled
/// "Redis failover drill" (and timeline, checklist) that say "redis failover" in every field put
/// the note titled "Redis Failover" fourth, and a note with id `deploy` fourth for "deploy".
#[test]
fn a_note_titled_or_named_by_the_question_comes_first_above_notes_using_its_words_more() {
    let (_t, m) = fresh();
    for w in ["drill", "timeline", "checklist"] {
        write_note(
            &m,
            &format!("redis-failover-{w}.md"),
            format!(
                "---\nname: Redis failover {w}\ndescription: redis failover {w}\ntags: [redis, \
                 failover]\n---\nRedis failover {w}: how the redis failover works.\n"
            ),
        );
        write_note(
            &m,
            &format!("deploy-{w}.md"),
            format!("---\nname: Deploy {w}\ndescription: deploy {w}\n---\nThe deploy {w}.\n"),
        );
    }
    write_note(
        &m,
        "runbook-7.md",
        "---\nname: Redis Failover\n---\nWhat to do when the primary goes away: promote a replica \
         with Sentinel, then repoint the clients.\n",
    );
    write_note(
        &m,
        "deploy.md",
        "How we ship: CI deploys after review, and a long body dilutes the term a little more.\n",
    );
    m.index().unwrap();
    for (q, named) in [("Redis Failover", "runbook-7"), ("deploy", "deploy")] {
        let r = m.recall(&Query::text(q)).unwrap();
        assert_eq!(ids(&r).first(), Some(&named), "{q}: {:?}", r.results);
        assert!(r.results[0].explain.title_match, "{q}");
        assert!(!r.results[1].explain.title_match, "{q}");
    }
}

/// A question that is a note's id names that note even when its word is in every note (so
/// it weighs nothing and passed no floor), and the whole id outranks the last part of another's:
/// "index" found nothing in a memory of `index` and `ops/index`, and ranked `ops/index` first
/// in one where the word is rare.
#[test]
fn a_question_that_is_a_note_id_finds_that_note_first() {
    let (_t, m) = fresh();
    write_note(
        &m,
        "index.md",
        "---\nname: Memory index\n---\nThe index of this memory.\n",
    );
    write_note(
        &m,
        "ops/index.md",
        "---\nname: Ops overview page\n---\nOps notes start here; see the index.\n",
    );
    m.index().unwrap();
    let r = m.recall(&Query::text("index")).unwrap();
    assert_eq!(ids(&r).first(), Some(&"index"), "{:?}", r.floor);
    assert!(r.results[0].explain.title_match);
    assert!(
        r.floor.rejected.iter().all(|x| x.id != "index"),
        "a note returned is not also turned away: {:?}",
        r.floor.rejected
    );
    for i in 0..6 {
        write_note(&m, &format!("other{i}.md"), format!("unrelated note {i}"));
    }
    m.index().unwrap();
    let r = m.recall(&Query::text("index")).unwrap();
    assert_eq!(ids(&r)[..2], ["index", "ops/index"], "{:?}", r.results);
    assert!(!r.results[1].explain.title_match);
}

#[test]
fn priors_do_not_overturn_a_clear_lexical_lead() {
    let (_t, m) = fresh();
    // The reference note (lowest type weight) says much more about the question than the
    // project note (highest type weight), which is also marked important and edited today.
    write_note(
        &m,
        "geyser-reference.md",
        "---\nname: Geyser valves\ntype: reference\ntags: [geyser, valve]\n---\nGeyser valve geyser valve maintenance.\n",
    );
    write_note(
        &m,
        "plant-project.md",
        "---\nname: Plant project\ntype: project\n---\nThe plant project plans, milestones, staffing, budget, vendors and one geyser.\n",
    );
    for i in 0..6 {
        write_note(
            &m,
            &format!("filler-{i}.md"),
            format!("---\nname: Filler {i}\n---\nUnrelated words {i}.\n"),
        );
    }
    m.index().unwrap();
    m.set_importance("plant-project", 10, &[], "").unwrap();
    let r = look(&m, "geyser valve");
    let (a, b) = (&r.results[0], &r.results[1]);
    assert_eq!(a.id, "geyser-reference", "{:?}", r.results);
    assert_eq!(b.id, "plant-project");
    assert!(a.explain.base > b.explain.base * mnemon::ranking::CLEAR_LEAD);
    assert!(b.explain.importance > 0.0 && b.explain.type_weight > a.explain.type_weight);
}

/// Each word keeps the 32 notes feedback says the most about; they were chosen by net uses, so
/// a note found wrong was the first dropped once 32 others were used for questions sharing a
/// word, and its penalty on the very question it was found wrong for halved.
#[test]
fn a_note_found_wrong_stays_wrong_when_many_others_are_used_for_its_words() {
    let (_t, m) = fresh();
    for i in 0..40 {
        write_note(
            &m,
            &format!("widget-{i:02}.md"),
            format!(
                "---\nname: Widget note {i}\n---\nWidget configuration detail number {i} about the \
                 gizmo frobnicator setting {i}.\n"
            ),
        );
    }
    write_note(
        &m,
        "calib.md",
        "---\nname: Widget calibration\n---\nWidget calibration: how to calibrate the widget \
         configuration with the gizmo.\n",
    );
    m.index().unwrap();
    let question = "widget configuration";
    let learned = |m: &Memory| {
        let r = m.recall(&Query::text(question).with_limit(50)).unwrap();
        r.results
            .iter()
            .find(|h| h.id == "calib")
            .map(|h| h.explain.learned)
    };
    for _ in 0..3 {
        m.feedback(&[], &["calib".to_string()], Some(question))
            .unwrap();
    }
    let before = learned(&m);
    assert_eq!(before, Some(-1.0));
    for i in 0..33 {
        m.feedback(&[format!("widget-{i:02}")], &[], Some("widget setup"))
            .unwrap();
    }
    assert_eq!(learned(&m), before);
}

/// In a small memory the words of grammar are rare enough to pass the floor as words of the
/// subject: "is it?", "how" and "why?" each returned eight or ten notes. A question of them alone
/// asks about nothing; a common word that names a subject ("test") still finds its notes.
#[test]
fn a_question_of_grammar_words_alone_returns_nothing() {
    let (_t, m) = demo();
    for q in ["is it?", "how", "what is it?", "why?", "How do we?"] {
        let r = look(&m, q);
        assert!(r.results.is_empty(), "{q}: {:?}", ids(&r));
    }
    let r = look(&m, "test");
    assert!(!r.results.is_empty(), "{:?}", r.floor);
}
