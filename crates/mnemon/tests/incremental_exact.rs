//! An incremental index answers exactly as a clean rebuild of the same notes (issue 27 item 8):
//! every stored edge, synthesized ones included with their confidences, and every recall answer
//! (ids, order, score bits), after any sequence of added, edited, removed and renamed notes,
//! indexed by a walk (`index`) or by the paths a watcher names (`index_paths`).

mod common;

use common::{copy_into, fresh, loopal_fixtures, write_note};
use mnemon::Memory;
use mnemon::recall::{FixedClock, Query};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// 2026-12-01, so recency is the same for both memories whenever the test runs.
const NOW: i64 = 1_796_083_200;

const WORDS: [&str; 32] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "amber", "basalt", "cobalt",
    "glacier", "harbor", "lagoon",
];

/// Slug families (`deploy-a`, `deploy-b`, ...) and one-word ids.
const FAMILIES: [&str; 5] = ["deploy", "cache", "auth", "db", ""];
const MEMBERS: [&str; 5] = ["a", "b", "c", "d", "e"];
const TYPES: [&str; 3] = ["user", "project", "reference"];

const QUESTIONS: [&str; 5] = [
    "alpha bravo charlie",
    "deploy cache",
    "glacier harbor lagoon",
    "kilo",
    "amber basalt cobalt zulu",
];

/// One note: where its id comes from, its type, its words and the notes it links.
#[derive(Debug, Clone)]
struct Spec {
    family: usize,
    member: usize,
    note_type: usize,
    words: Vec<usize>,
    links: Vec<(usize, usize)>,
}

impl Spec {
    fn id(&self) -> String {
        id_of(self.family, self.member)
    }

    fn text(&self) -> String {
        let body: Vec<&str> = self.words.iter().map(|&w| WORDS[w]).collect();
        let links: Vec<String> = self
            .links
            .iter()
            .map(|&(f, m)| format!("[[{}]]", id_of(f, m)))
            .collect();
        format!(
            "---\ntype: {}\n---\n{}\n\n{}\n",
            TYPES[self.note_type],
            body.join(" "),
            links.join(" ")
        )
    }
}

fn id_of(family: usize, member: usize) -> String {
    match FAMILIES[family] {
        "" => format!("solo{}", MEMBERS[member]),
        f => format!("{f}-{}", MEMBERS[member]),
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0..FAMILIES.len(),
        0..MEMBERS.len(),
        0..TYPES.len(),
        proptest::collection::vec(0..WORDS.len(), 3..28),
        proptest::collection::vec((0..FAMILIES.len(), 0..MEMBERS.len()), 0..3),
    )
        .prop_map(|(family, member, note_type, words, links)| Spec {
            family,
            member,
            note_type,
            words,
            links,
        })
}

#[derive(Debug, Clone)]
enum Step {
    /// Write a note (new, or replacing the one of that id).
    Write(Spec),
    /// Remove the `n`-th note (modulo the notes there are).
    Delete(usize),
    /// Move the `n`-th note to the id of `(family, member)`.
    Rename(usize, usize, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => spec().prop_map(Step::Write),
        2 => any::<usize>().prop_map(Step::Delete),
        1 => (any::<usize>(), 0..FAMILIES.len(), 0..MEMBERS.len())
            .prop_map(|(n, f, m)| Step::Rename(n, f, m)),
    ]
}

/// Every stored edge with its confidence's bits, sorted.
fn edges(m: &Memory) -> Vec<(String, String, String, String, u32)> {
    let mut out: Vec<_> = m
        .edges()
        .expect("edges")
        .into_iter()
        .map(|e| {
            (
                e.from,
                e.to,
                format!("{:?}", e.kind),
                format!("{:?}", e.provenance),
                e.confidence.to_bits(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Each question's answer: ids in order with their scores' bits.
fn answers(m: &Memory) -> Vec<Vec<(String, u32)>> {
    QUESTIONS
        .iter()
        .map(|q| {
            let query = Query {
                text: (*q).to_string(),
                record: false,
                ..Query::default()
            };
            m.recall(&query)
                .expect("recall")
                .results
                .into_iter()
                .map(|h| (h.id, h.score.to_bits()))
                .collect()
        })
        .collect()
}

/// A clean build of the notes of `m` in a folder of its own.
fn rebuilt(m: &Memory) -> (tempfile::TempDir, Memory) {
    let (tmp, clean) = fresh();
    copy_into(&clean, &m.dir().memory());
    let clean = clean.with_clock(FixedClock(NOW));
    clean.index().expect("clean index");
    (tmp, clean)
}

fn assert_same_as_rebuilt(m: &Memory, context: &str) {
    let (_tmp, clean) = rebuilt(m);
    assert_eq!(edges(m), edges(&clean), "edges after {context}");
    assert_eq!(answers(m), answers(&clean), "answers after {context}");
    let (doctor, clean_doctor) = (m.doctor().expect("doctor"), clean.doctor().expect("doctor"));
    assert!(
        doctor.store_damage.is_empty(),
        "{context}: {:?}",
        doctor.store_damage
    );
    assert!(doctor.index.ok, "doctor's index check after {context}");
    // Dangling links are the notes' own (a link to a note not written): the same in both.
    assert_eq!(
        format!("{:?}", doctor.dangling),
        format!("{:?}", clean_doctor.dangling),
        "dangling links after {context}"
    );
    assert_eq!(
        doctor.healthy, clean_doctor.healthy,
        "doctor after {context}"
    );
}

/// Apply `steps` to a memory built from `initial`, indexing after each (by paths when
/// `by_paths` says so for that step), and compare with a clean rebuild after each.
fn run(initial: &[Spec], steps: &[(Step, bool)]) {
    let (_tmp, m) = fresh();
    let m = m.with_clock(FixedClock(NOW));
    let mut notes: BTreeMap<String, String> = BTreeMap::new();
    for s in initial {
        notes.insert(s.id(), s.text());
    }
    for (id, text) in &notes {
        write_note(&m, &format!("{id}.md"), text);
    }
    m.index().expect("index");
    assert_same_as_rebuilt(&m, "the first index");
    for (i, (step, by_paths)) in steps.iter().enumerate() {
        let mut touched: Vec<PathBuf> = Vec::new();
        match step {
            Step::Write(s) => {
                notes.insert(s.id(), s.text());
                touched.push(write_note(&m, &format!("{}.md", s.id()), s.text()));
            }
            Step::Delete(n) if !notes.is_empty() => {
                let id = notes
                    .keys()
                    .nth(n % notes.len())
                    .cloned()
                    .unwrap_or_default();
                notes.remove(&id);
                let path = m.dir().memory().join(format!("{id}.md"));
                std::fs::remove_file(&path).expect("remove");
                touched.push(path);
            }
            Step::Rename(n, f, mem) if !notes.is_empty() => {
                let from = notes
                    .keys()
                    .nth(n % notes.len())
                    .cloned()
                    .unwrap_or_default();
                let to = id_of(*f, *mem);
                if from != to {
                    let text = notes.remove(&from).unwrap_or_default();
                    notes.insert(to.clone(), text);
                    let src = m.dir().memory().join(format!("{from}.md"));
                    let dst = m.dir().memory().join(format!("{to}.md"));
                    std::fs::rename(&src, &dst).expect("rename");
                    touched.push(src);
                    touched.push(dst);
                }
            }
            _ => {}
        }
        if *by_paths {
            m.index_paths(&touched).expect("index_paths");
        } else {
            m.index().expect("index");
        }
        assert_same_as_rebuilt(&m, &format!("step {i} ({step:?})"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    #[test]
    fn incremental_index_equals_a_clean_rebuild_after_any_changes(
        initial in proptest::collection::vec(spec(), 20..36),
        steps in proptest::collection::vec((step(), any::<bool>()), 1..6),
    ) {
        run(&initial, &steps);
    }
}

/// The note files directly in `dir`, sorted.
fn note_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read memory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
}

/// The reproduction: loopal-58 indexed, 5 notes deleted, 5 edited, 5 added, indexed
/// again: the same edges and answers as `rm -rf index && index`, and doctor finds nothing.
#[test]
fn delete_five_edit_five_add_five_then_index_equals_a_clean_rebuild() {
    let fixtures = loopal_fixtures();
    let (_tmp, m) = fresh();
    let m = m.with_clock(FixedClock(NOW));
    copy_into(&m, &fixtures);
    m.index().expect("index");
    let files = note_files(&m.dir().memory());
    assert!(files.len() >= 15, "{} notes", files.len());
    for p in &files[..5] {
        std::fs::remove_file(p).expect("remove");
    }
    for (i, p) in files[5..10].iter().enumerate() {
        let text = std::fs::read_to_string(p).expect("read");
        let other = std::fs::read_to_string(&files[20 + i]).expect("read");
        // Half of another note's words added, the note's last line dropped.
        let kept: Vec<&str> = text.lines().collect();
        let kept = kept[..kept.len().saturating_sub(1)].join("\n");
        let borrowed: String = other.lines().skip(5).take(6).collect::<Vec<_>>().join("\n");
        std::fs::write(p, format!("{kept}\n{borrowed}\n")).expect("edit");
    }
    for (i, p) in files[10..15].iter().enumerate() {
        let text = std::fs::read_to_string(p).expect("read");
        write_note(
            &m,
            &format!("added-{i}.md"),
            text.replace("\n\n", "\n\nAdded copy. "),
        );
    }
    m.index().expect("index");
    assert_same_as_rebuilt(&m, "delete 5, edit 5, add 5");
}

/// `index` killed after the lexical update and before the store's commit (lexical.md, crash
/// case 3): the next `index` rebuilt the lexical index from the notes and then updated the old
/// store to them, which recomputes the synthesized edges only of notes whose terms' holders
/// the lexical update moves: none, the index being already there. Edges to the deleted notes
/// stayed, doctor called the store damaged, and a few scores differed from a clean rebuild.
#[test]
fn an_index_killed_before_the_store_commit_recovers_to_a_clean_rebuild() {
    let fixtures = loopal_fixtures();
    let (_tmp, m) = fresh();
    let m = m.with_clock(FixedClock(NOW));
    copy_into(&m, &fixtures);
    m.index().expect("index");
    let root = m.dir().root().to_path_buf();
    drop(m);
    let store = root.join("index/graph.redb");
    let before = std::fs::read(&store).expect("read store");
    let files = note_files(&root.join("memory"));
    for p in &files[..3] {
        std::fs::remove_file(p).expect("remove");
    }
    let edited = std::fs::read_to_string(&files[3]).expect("read");
    std::fs::write(
        &files[3],
        format!("{edited}\nAn added line about pgbouncer.\n"),
    )
    .expect("edit");
    {
        let m = Memory::open(&root).expect("open");
        m.index().expect("index");
    }
    // The store's commit lost: the store as it was before, the lexical index as after.
    std::fs::write(&store, before).expect("restore store");
    let _ = std::fs::remove_file(root.join("index/graph.cache"));
    let m = Memory::open(&root)
        .expect("open")
        .with_clock(FixedClock(NOW));
    m.index().expect("index");
    assert_same_as_rebuilt(&m, "an index killed before the store's commit");
}
