//! Notes that replace other notes (`supersedes`) and notes that disagree (`contradicts`): the
//! successor ranks first, a question that finds only the old note brings its successor along,
//! chains resolve to the newest, cycles are reported and ignored, contradictions are carried both
//! ways, and the core view leaves replaced notes out.

mod common;

use common::{fresh, write_note};
use mnemon::recall::{Query, Source};
use mnemon::{EdgeKind, Memory};

fn note(memory: &Memory, id: &str, front: &str, body: &str) {
    write_note(
        memory,
        &format!("{id}.md"),
        format!("---\nname: {id}\ntype: project\n{front}---\n{body}\n"),
    );
}

/// An old runbook only a question about the "zanzibar" script finds, and a second runbook
/// whose front matter (`v2_front`) may declare it replaces or contradicts the first.
fn runbooks(memory: &Memory, v2_front: &str) {
    note(
        memory,
        "runbook-v1",
        "",
        "Rollback with the zanzibar script from the ops host.",
    );
    runbook_v2(memory, v2_front);
}

fn runbook_v2(memory: &Memory, front: &str) {
    note(
        memory,
        "runbook-v2",
        front,
        "Rollback is one command in the deploy tool now.",
    );
}

fn ask(memory: &Memory, text: &str) -> Vec<mnemon::recall::Hit> {
    let mut q = Query::text(text);
    q.record = false;
    memory.recall(&q).expect("recall").results
}

fn ids(hits: &[mnemon::recall::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.id.as_str()).collect()
}

#[test]
fn a_successor_ranks_above_the_note_it_replaces_when_the_question_finds_both_about_as_well() {
    let (_tmp, m) = fresh();
    note(
        &m,
        "pool-settings-2025",
        "",
        "Postgres connection pool settings: pool size 20, pool timeout 30 s, pgbouncer pool \
         mode session.",
    );
    note(
        &m,
        "pool-settings",
        "supersedes: [pool-settings-2025]\n",
        "Postgres connection pool: size 50 and timeout 10 s since the March change.",
    );
    note(
        &m,
        "unrelated",
        "",
        "The deploy pipeline runs on every merge.",
    );
    m.index().unwrap();
    // "pool timeout settings" would name `pool-settings` (its id with one word between): the
    // question keeps the id's words further apart, so words and priors decide.
    let hits = ask(&m, "postgres connection pool timeout and size settings");
    let got = ids(&hits);
    let new = got
        .iter()
        .position(|i| *i == "pool-settings")
        .expect("successor");
    let old = got
        .iter()
        .position(|i| *i == "pool-settings-2025")
        .expect("old note");
    assert!(new < old, "{got:?}");
    assert_eq!(hits[old].superseded_by, vec!["pool-settings".to_string()]);
    assert!(hits[new].superseded_by.is_empty());
    assert!(hits[new].score > hits[old].score);
    // The premise: the old note has more of the question's words, a lead priors may overturn.
    let lead = hits[old].explain.base / hits[new].explain.base;
    assert!(lead > 1.0 && lead < mnemon::ranking::CLEAR_LEAD, "{lead}");
}

/// Two pool notes, the second replacing the first, that a question about pool settings finds
/// about as well.
fn pool_notes(m: &Memory) {
    note(
        m,
        "pool-settings-2025",
        "",
        "Postgres connection pool settings: pool size 20, pool timeout 30 s, pgbouncer pool \
         mode session.",
    );
    note(
        m,
        "pool-settings",
        "supersedes: [pool-settings-2025]\n",
        "Postgres connection pool settings: size 50 and timeout 10 s since the March change.",
    );
    note(
        m,
        "unrelated",
        "",
        "The deploy pipeline runs on every merge.",
    );
    m.index().unwrap();
}

/// A question about what was there before ("old", "legacy", "original", ...) gets the replaced
/// note first when it finds both about as well; the same question without such a word gets the
/// successor first.
#[test]
fn a_question_about_the_old_version_gets_the_replaced_note_above_its_successor() {
    let (_tmp, m) = fresh();
    pool_notes(&m);
    let current = ask(&m, "postgres connection pool settings");
    assert_eq!(ids(&current)[..2], ["pool-settings", "pool-settings-2025"]);
    // The premise: neither note leads the other clearly.
    let lead = current[0].explain.base / current[1].explain.base;
    assert!(
        lead < mnemon::ranking::CLEAR_LEAD && lead > 1.0 / mnemon::ranking::CLEAR_LEAD,
        "{lead}"
    );
    for q in [
        "old postgres connection pool settings",
        "the ORIGINAL postgres connection pool settings",
        "legacy postgres connection pool settings",
    ] {
        let hits = ask(&m, q);
        assert_eq!(
            ids(&hits)[..2],
            ["pool-settings-2025", "pool-settings"],
            "{q}: {hits:?}"
        );
        assert_eq!(hits[0].superseded_by, vec!["pool-settings".to_string()]);
        let floor = m.recall(&Query::text(q)).expect("recall").floor;
        assert!(floor.old_first, "{q}");
    }
    assert!(
        !m.recall(&Query::text("postgres connection pool settings"))
            .expect("recall")
            .floor
            .old_first
    );
    // A word that merely contains one of them is not one ("golden", "bold").
    assert_eq!(
        ids(&ask(&m, "golden postgres connection pool settings"))[..2],
        ["pool-settings", "pool-settings-2025"]
    );
}

/// Asking about the old version does not overturn a clear lead: a successor the question finds
/// far better stays first.
#[test]
fn a_question_about_the_old_version_keeps_a_successor_that_leads_clearly_first() {
    let (_tmp, m) = fresh();
    pool_notes(&m);
    let hits = ask(&m, "old pool settings since the March change");
    let got = ids(&hits);
    assert_eq!(got[0], "pool-settings", "{hits:?}");
    let old = got
        .iter()
        .position(|i| *i == "pool-settings-2025")
        .expect("old note");
    assert!(
        hits[0].explain.base / hits[old].explain.base > mnemon::ranking::CLEAR_LEAD,
        "the premise: the successor leads clearly"
    );
}

/// Supersession is a prior: it decides close calls, not a question about what only the old note
/// says (an old setting, a retired file). The old note answers it; its successor comes next.
#[test]
fn an_old_note_the_question_finds_far_better_stays_first_with_its_successor_right_below() {
    let (_tmp, m) = fresh();
    note(
        &m,
        "pool-settings-2025",
        "",
        "Postgres connection pool settings: pool size 20, pool timeout 30 s, connection pool \
         timeout at month end, pgbouncer pool mode session.",
    );
    note(
        &m,
        "pool-settings",
        "supersedes: [pool-settings-2025]\n",
        "Postgres connection pool: size 50 since the March change.",
    );
    note(
        &m,
        "unrelated",
        "",
        "The deploy pipeline runs on every merge.",
    );
    m.index().unwrap();
    let hits = ask(&m, "postgres connection pool timeout at month end");
    assert_eq!(
        ids(&hits)[..2],
        ["pool-settings-2025", "pool-settings"],
        "{hits:?}"
    );
    let lead = hits[0].explain.base / hits[1].explain.base;
    assert!(lead > mnemon::ranking::CLEAR_LEAD, "{lead}");
    assert_eq!(hits[0].superseded_by, vec!["pool-settings".to_string()]);
}

#[test]
fn a_question_that_finds_only_the_old_note_brings_its_successor_right_below_it() {
    let (_tmp, m) = fresh();
    runbooks(&m, "supersedes: [runbook-v1]\n");
    m.index().unwrap();
    let hits = ask(&m, "zanzibar");
    assert_eq!(ids(&hits), vec!["runbook-v1", "runbook-v2"], "{hits:?}");
    assert_eq!(hits[1].source, Source::Neighbor);
    let edge = &hits[1].trail[0];
    assert_eq!(edge.kind, EdgeKind::Supersedes);
    assert_eq!(
        (edge.from.as_str(), edge.to.as_str()),
        ("runbook-v2", "runbook-v1")
    );
    assert_eq!(hits[0].superseded_by, vec!["runbook-v2".to_string()]);
}

#[test]
fn a_chain_of_three_resolves_to_the_newest() {
    let (_tmp, m) = fresh();
    note(
        &m,
        "plan-a",
        "",
        "Capacity plan: kestrel cluster with four nodes, kestrel quota.",
    );
    note(
        &m,
        "plan-b",
        "supersedes: [plan-a]\n",
        "Capacity plan: kestrel cluster, six nodes.",
    );
    note(
        &m,
        "plan-c",
        "supersedes: [plan-b]\n",
        "Capacity plan: eight nodes.",
    );
    m.index().unwrap();
    // Every note matches: newest first; asked about the old plan, oldest first.
    let all = ask(&m, "capacity plan");
    assert_eq!(ids(&all), vec!["plan-c", "plan-b", "plan-a"], "{all:?}");
    let old = ask(&m, "old capacity plan");
    assert_eq!(ids(&old), vec!["plan-a", "plan-b", "plan-c"], "{old:?}");
    // Only the oldest matches well: it answers, and the notes replacing it follow it.
    let hits = ask(&m, "kestrel quota");
    let mut got = ids(&hits);
    assert_eq!(got[0], "plan-a", "{hits:?}");
    got.sort_unstable();
    assert_eq!(got, vec!["plan-a", "plan-b", "plan-c"], "{hits:?}");
}

#[test]
fn a_supersede_cycle_is_reported_by_doctor_and_ignored_in_ranking() {
    let (_tmp, m) = fresh();
    note(
        &m,
        "policy-x",
        "supersedes: [policy-y]\n",
        "Retention policy: keep backups ninety days, backups encrypted, backups offsite.",
    );
    note(
        &m,
        "policy-y",
        "supersedes: [policy-x]\n",
        "Retention policy: thirty days.",
    );
    m.index().unwrap();
    let report = m.doctor().unwrap();
    assert_eq!(
        report.supersede_cycles,
        vec![vec!["policy-x".to_string(), "policy-y".to_string()]]
    );
    assert!(!report.healthy);
    // Neither steps aside: the note with more of the question ranks first.
    let hits = ask(&m, "backups retention policy encrypted offsite");
    assert_eq!(hits[0].id, "policy-x", "{hits:?}");
    // And neither is said to be replaced (each named the other as its successor before).
    assert!(hits.iter().all(|h| h.superseded_by.is_empty()), "{hits:?}");
}

#[test]
fn contradictions_are_carried_both_ways_listed_by_doctor_and_hide_neither_note() {
    let (_tmp, m) = fresh();
    note(
        &m,
        "cache-ttl-short",
        "contradicts: [cache-ttl-long]\n",
        "The session cache TTL is five minutes.",
    );
    note(
        &m,
        "cache-ttl-long",
        "",
        "The session cache TTL is one hour.",
    );
    m.index().unwrap();
    let hits = ask(&m, "session cache TTL");
    let short = hits
        .iter()
        .find(|h| h.id == "cache-ttl-short")
        .expect("short");
    let long = hits
        .iter()
        .find(|h| h.id == "cache-ttl-long")
        .expect("long");
    assert_eq!(short.contradicts, vec!["cache-ttl-long".to_string()]);
    assert_eq!(long.contradicts, vec!["cache-ttl-short".to_string()]);
    let report = m.doctor().unwrap();
    assert_eq!(report.contradictions.len(), 1);
    assert_eq!(
        (
            report.contradictions[0].a.as_str(),
            report.contradictions[0].b.as_str()
        ),
        ("cache-ttl-long", "cache-ttl-short")
    );
    assert!(
        report.healthy,
        "a contradiction is not an error: {report:?}"
    );
    let shown = m.show("cache-ttl-long").unwrap();
    assert_eq!(shown.contradicts, vec!["cache-ttl-short".to_string()]);
}

#[test]
fn show_names_successors_and_predecessors() {
    let (_tmp, m) = fresh();
    note(&m, "old", "", "Old text.");
    note(&m, "new", "supersedes: [old]\n", "New text.");
    m.index().unwrap();
    let old = m.show("old").unwrap();
    assert_eq!(old.superseded_by, vec!["new".to_string()]);
    assert!(old.supersedes.is_empty());
    let new = m.show("new").unwrap();
    assert_eq!(new.supersedes, vec!["old".to_string()]);
    assert!(new.superseded_by.is_empty());
}

#[test]
fn the_core_view_leaves_superseded_notes_out_and_says_so() {
    let (_tmp, m) = fresh();
    note(&m, "conventions-2025", "pin: true\n", "Tabs, 100 columns.");
    note(
        &m,
        "conventions",
        "pin: true\nsupersedes: [conventions-2025]\n",
        "Spaces, 120 columns.",
    );
    m.index().unwrap();
    let core = m.core(2000).unwrap();
    assert_eq!(core.included, vec!["conventions".to_string()]);
    assert_eq!(core.superseded, vec!["conventions-2025".to_string()]);
    assert!(!core.text.contains("Tabs"), "{}", core.text);
}

/// Recall skips the supersession and contradiction steps in a graph without such edges; the
/// graph counts them as edits patch it (not only when it is loaded whole), so an edge added by an
/// edit is honoured at once and one removed by an edit no longer shows.
#[test]
fn supersedes_and_contradicts_edges_added_or_removed_by_edits_show_in_the_next_recall() {
    let (_tmp, m) = fresh();
    runbooks(&m, "");
    m.index().unwrap();
    let hits = ask(&m, "zanzibar");
    assert_eq!(ids(&hits), vec!["runbook-v1"]);
    assert!(hits[0].superseded_by.is_empty() && hits[0].contradicts.is_empty());

    runbook_v2(&m, "supersedes: [runbook-v1]\ncontradicts: [runbook-v1]\n");
    m.index().unwrap();
    let hits = ask(&m, "zanzibar");
    assert_eq!(ids(&hits), vec!["runbook-v1", "runbook-v2"], "{hits:?}");
    assert_eq!(hits[0].superseded_by, vec!["runbook-v2".to_string()]);
    assert_eq!(hits[0].contradicts, vec!["runbook-v2".to_string()]);

    runbook_v2(&m, "");
    m.index().unwrap();
    let hits = ask(&m, "zanzibar");
    assert_eq!(ids(&hits), vec!["runbook-v1"]);
    assert!(hits[0].superseded_by.is_empty() && hits[0].contradicts.is_empty());
}

/// "This replaces [[old-pool]]" with no note `old-pool` made `doctor` call the store damaged
/// (a synthesized edge ending at no note), and `doctor --fix` rebuilt the same store forever.
/// The phrase's edge is a link in the body: like the link, it is listed as dangling.
#[test]
fn a_phrase_replacing_a_missing_note_is_a_dangling_link_not_damage() {
    let (_t, m) = fresh();
    note(
        &m,
        "new-pool",
        "name: New pool",
        "Pool size 50. This replaces [[old-pool]].",
    );
    m.index().unwrap();
    let report = m.doctor().unwrap();
    assert!(report.index.ok, "{report:?}");
    assert!(report.index.message.is_none(), "{report:?}");
    let mut dangling: Vec<(&str, &str, EdgeKind)> = report
        .dangling
        .iter()
        .map(|d| (d.from.as_str(), d.to.as_str(), d.kind))
        .collect();
    dangling.sort_by_key(|d| d.2.as_str());
    assert_eq!(
        dangling,
        [
            ("new-pool", "old-pool", EdgeKind::References),
            ("new-pool", "old-pool", EdgeKind::Supersedes),
        ]
    );
}

/// A write that closed a circle of `supersedes` (a replaces b, then b written replacing a) said
/// nothing; recall then treated neither as replaced until someone read `doctor`.
#[test]
fn a_write_closing_a_circle_of_supersedes_says_so() {
    let (_tmp, memory) = fresh();
    let write = |id: &str, replaces: &str| {
        let body = match id {
            "a" => "Rollback with the zanzibar script from the ops host.",
            "b" => "Rollback is one command in the deploy tool now.",
            "c" => "Releases roll back by themselves when health checks fail.",
            _ => "Ask the platform team before any rollback.",
        };
        let req = mnemon::WriteRequest {
            supersedes: vec![replaces.to_string()],
            ..mnemon::WriteRequest::new(id, body)
        };
        memory.write_note(&req).expect("write")
    };
    let a = write("a", "b");
    assert!(a.written, "{a:?}");
    assert!(!a.message.contains("circle"), "{}", a.message);
    assert_eq!(
        memory.supersede_cycle_through("a").unwrap(),
        Vec::<String>::new()
    );
    let b = write("b", "c");
    assert!(b.written, "{b:?}");
    assert!(!b.message.contains("circle"), "{}", b.message);
    // c replaces a: a -> b -> c -> a.
    let c = write("c", "a");
    assert!(c.written, "{c:?}");
    assert!(
        c.message
            .contains("It and a, b now replace each other in a circle (supersedes)"),
        "{}",
        c.message
    );
    assert_eq!(memory.supersede_cycle_through("a").unwrap(), ["b", "c"]);
    // A note outside the circle that replaces one on it is not on it.
    let d = write("d", "a");
    assert!(d.written, "{d:?}");
    assert!(!d.message.contains("circle"), "{}", d.message);
    assert_eq!(
        memory.supersede_cycle_through("d").unwrap(),
        Vec::<String>::new()
    );
    // The same circle doctor reports.
    assert_eq!(memory.doctor().unwrap().supersede_cycles, [["a", "b", "c"]]);
}
