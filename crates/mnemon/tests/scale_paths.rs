//! The fast paths recall takes at scale give the same answers as the slow ones: the in-memory
//! graph patched from the store's change log equals a fresh load, and the MaxScore-pruned lexical
//! search returns exactly the exhaustive top k, bounded scoring returns the exact top of a longer
//! list, stats looked up by ordinal match the stats read by id, and token co-occurrence found
//! term by term (cold builds) equals the note-by-note computation.

mod common;

use common::{fresh, write_note};
use mnemon::cooccur::{self, LaidOutDocs, SegmentProbes};
use mnemon::graph::Graph;
use mnemon::graph::Refreshed;
use mnemon::index::LexicalIndex;
use mnemon::index::fields::DocTerms;
use mnemon::index::segment::writer::SegmentBuilder;
use mnemon::index::tokenize::Tokenizer;
use mnemon::ranking;
use mnemon::recall::Query;
use mnemon::store::Store;
use mnemon_testkit::corpus::{GenConfig, generate_notes};

/// A memory holding a generated corpus of `n` notes, indexed.
fn generated(n: usize, seed: u64) -> (tempfile::TempDir, mnemon::Memory) {
    let (tmp, memory) = fresh();
    for (rel, text) in generate_notes(&GenConfig::new(n, seed)) {
        write_note(&memory, &rel, text);
    }
    memory.index().expect("index");
    (tmp, memory)
}

/// One edge list: the node and, in list order, (other end, kind code, walk weight bits).
type ListView = (String, Vec<(String, u8, u32)>);

/// Every in-list (`inn`) or out-list of `g`.
fn lists(g: &Graph, inn: bool) -> Vec<ListView> {
    let mut out: Vec<_> = (0..g.len() as u32)
        .map(|o| {
            let list = if inn { g.inn(o) } else { g.out(o) };
            let list = list
                .iter()
                .map(|e| {
                    let other = g.id(e.other).to_string();
                    (other, e.kind.code(), e.walk_weight.to_bits())
                })
                .collect();
            (g.id(o).to_string(), list)
        })
        .filter(|(_, l): &(String, Vec<_>)| !l.is_empty())
        .collect();
    out.sort();
    out
}

#[test]
fn patched_graph_equals_a_fresh_load_after_edits_and_removals() {
    let (_tmp, memory) = generated(300, 3);
    let (store, _) = Store::open(&memory.dir().index()).expect("open store");
    let mut patched = Graph::load(&store.read().expect("read")).expect("load");
    let before = patched.version();

    // Change one note's links, add a note linking a hub, remove a note that others link to.
    let notes = generate_notes(&GenConfig::new(300, 3));
    let (first_rel, _) = &notes[0];
    let (second_rel, _) = &notes[1];
    let second_id = second_rel.trim_end_matches(".md");
    write_note(
        &memory,
        first_rel,
        format!(
            "---\nname: rewritten\ntype: project\nrelated: [{second_id}]\n---\nNew body about [[brand-new-note]].\n"
        ),
    );
    write_note(
        &memory,
        "brand-new-note.md",
        format!(
            "---\nname: new\ntype: reference\n---\nLinks [[{second_id}]] and [[no-such-note]].\n"
        ),
    );
    std::fs::remove_file(memory.dir().memory().join(&notes[2].0)).expect("remove");
    memory.index().expect("reindex");

    let reader = store.read().expect("read");
    let done = patched.refresh(&reader).expect("refresh");
    assert!(
        matches!(done, Refreshed::Patched(n) if n >= 3),
        "the version moved, three notes at least: {done:?}"
    );
    assert_eq!(patched.version().epoch, before.epoch);
    assert_eq!(patched.version().generation, before.generation + 1);
    let loaded = Graph::load(&reader).expect("load");
    assert_eq!(patched.edge_list(), loaded.edge_list());
    // In list order, with each edge's walk weight from its end.
    assert_eq!(lists(&patched, true), lists(&loaded, true));
    assert_eq!(lists(&patched, false), lists(&loaded, false));
    // The new note is a node with its edges; the removed one is no longer a node.
    let new = patched.ord("brand-new-note").expect("new note interned");
    assert!(patched.meta(new).is_some());
    let targets: Vec<&str> = patched
        .out(new)
        .iter()
        .map(|e| patched.id(e.other))
        .collect();
    assert!(
        targets.contains(&second_id) && targets.contains(&"no-such-note"),
        "{targets:?}"
    );
    let gone = notes[2].0.trim_end_matches(".md");
    assert!(patched.ord(gone).is_none_or(|o| patched.meta(o).is_none()));
    assert_eq!(
        patched.refresh(&reader).expect("refresh"),
        Refreshed::Unchanged,
        "nothing new"
    );
}

#[test]
fn a_graph_behind_the_change_log_reloads_whole() {
    let (_tmp, memory) = generated(50, 5);
    let (store, _) = Store::open(&memory.dir().index()).expect("open store");
    let mut stale = Graph::load(&store.read().expect("read")).expect("load");
    // More write transactions than the change log keeps.
    let n = mnemon::store::CHANGE_LOG_KEEP as usize + 3;
    for i in 0..n {
        write_note(
            &memory,
            "churn.md",
            format!("---\nname: churn\n---\nround {i} [[x{i}]]\n"),
        );
        memory.index().expect("reindex");
    }
    let reader = store.read().expect("read");
    assert_eq!(stale.refresh(&reader).expect("refresh"), Refreshed::Loaded);
    assert_eq!(
        stale.edge_list(),
        Graph::load(&reader).expect("load").edge_list()
    );
    assert_eq!(stale.version(), reader.version().expect("version"));
}

#[test]
fn another_handle_sees_new_edges_at_its_next_recall() {
    let (_tmp, writer) = generated(40, 9);
    let reader = mnemon::Memory::open(writer.dir().root()).expect("second handle");
    let q = Query::anchors(["hub-under-test"]).with_depth(1);
    assert!(reader.recall(&q).is_err(), "unknown before it exists");
    write_note(
        &writer,
        "hub-under-test.md",
        "---\nname: hub\n---\nSee [[spoke-under-test]].\n",
    );
    write_note(
        &writer,
        "spoke-under-test.md",
        "---\nname: spoke\n---\nA spoke.\n",
    );
    writer.index().expect("index");
    let r = reader.recall(&q).expect("recall");
    let ids: Vec<&str> = r.results.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"hub-under-test"));
    assert!(ids.contains(&"spoke-under-test"), "{ids:?}");
}

/// Recall looks at the lexical manifest only when the store moved (one `stat` saved per recall):
/// words another handle indexed must still be found at the very next recall, after recalls
/// that already looked at the old store version.
#[test]
fn another_handle_indexing_new_words_is_found_at_the_next_text_recall() {
    let (_tmp, writer) = generated(40, 12);
    let reader = mnemon::Memory::open(writer.dir().root()).expect("second handle");
    let mut q = Query::text("zyxquorble fencing");
    q.record = false;
    for _ in 0..3 {
        let r = reader.recall(&q).expect("recall");
        assert!(!r.results.iter().any(|h| h.id == "quorble-note"));
    }
    write_note(
        &writer,
        "quorble-note.md",
        "---\nname: zyxquorble\n---\nThe zyxquorble fencing token.\n",
    );
    writer.index().expect("index");
    let r = reader.recall(&q).expect("recall");
    assert_eq!(
        r.results.first().map(|h| h.id.as_str()),
        Some("quorble-note"),
        "{:?}",
        r.results.iter().map(|h| &h.id).collect::<Vec<_>>()
    );
}

/// The search's pruning against the same search with no limit, over the generated queries,
/// their neighbouring words also written hyphened or closed up in some notes: the closed-up words
/// (`index::compound`) a question's word pairs then match are rare and weigh much, and the
/// notes of their lists are found ahead of the common words' lists (see
/// `MAX_CLOSED_NOTES_AHEAD`).
#[test]
fn pruned_search_returns_the_exhaustive_top_k() {
    let (_tmp, memory) = generated(600, 11);
    let tok = Tokenizer::new();
    let truth = GenConfig::new(600, 11);
    let dir = tempfile::tempdir().expect("tempdir");
    mnemon_testkit::corpus::generate(&truth, dir.path()).expect("generate");
    let queries =
        mnemon_testkit::eval::truth::load_truth(&dir.path().join("queries.yaml")).expect("truth");
    // Neighbouring words of the questions, hyphened.
    let hyphened: Vec<String> = queries
        .queries
        .iter()
        .filter_map(|t| t.query.as_deref())
        .filter_map(|q| {
            let words: Vec<&str> = q.split_whitespace().collect();
            words
                .windows(2)
                .find(|w| {
                    w.iter()
                        .all(|x| x.len() >= 3 && x.bytes().all(|b| b.is_ascii_lowercase()))
                })
                .map(|w| format!("{}-{}", w[0], w[1]))
        })
        .take(60)
        .collect();
    assert!(hyphened.len() >= 30, "{hyphened:?}");
    // Small segments beside the big one: the floor of one segment prunes the next.
    let notes = generate_notes(&GenConfig::new(600, 11));
    for batch in 0..3 {
        for (i, (rel, text)) in notes.iter().skip(batch * 40).take(40).enumerate() {
            let word = &hyphened[(batch * 40 + i) % hyphened.len()];
            // Every other note writes the word closed up: a note matching the question's word
            // through that list only.
            let word = if i % 2 == 0 {
                word.clone()
            } else {
                word.replace('-', "")
            };
            write_note(
                &memory,
                rel,
                format!("{text}\nRevised in batch {batch}, see {word}.\n"),
            );
        }
        memory.index().expect("index");
    }
    let lex = LexicalIndex::open(&memory.dir().index())
        .expect("open")
        .expect("present");
    assert!(lex.segment_count() >= 3, "{} segments", lex.segment_count());
    let mut compared = 0;
    let mut with_closed = 0;
    for t in &queries.queries {
        let Some(text) = &t.query else { continue };
        let mut m = lex.expand(&tok.query_terms(text), &tok);
        if m.is_empty() {
            continue;
        }
        mnemon::index::compound::close_pairs(&lex, &tok, text, &mut m);
        mnemon::index::forms::add_other_forms(&lex, &mut m);
        with_closed += usize::from(
            m.iter()
                .any(|x| x.expansions.iter().any(|(e, w)| *e != x.term && *w >= 1.0)),
        );
        let all = lex.search(&m, usize::MAX);
        for k in [1, 5, 48] {
            let pruned = lex.search(&m, k);
            let want: Vec<_> = all.iter().take(k).collect();
            assert_eq!(pruned.len(), want.len(), "{text:?} k={k}");
            for (p, w) in pruned.iter().zip(want) {
                // Every list a hit's words are in was read for it: what it matched, and in
                // which fields, is whole however early the search stopped.
                assert_eq!(
                    (&p.id, p.matched, p.exact, p.titled, p.in_id, p.in_name),
                    (&w.id, w.matched, w.exact, w.titled, w.in_id, w.in_name),
                    "{text:?} k={k}"
                );
                assert!(
                    (p.score - w.score).abs() <= 1e-4 * w.score.abs(),
                    "{text:?}"
                );
            }
        }
        compared += 1;
    }
    assert!(compared >= 100, "only {compared} queries compared");
    assert!(
        with_closed >= 20,
        "only {with_closed} with a closed-up word"
    );
}

/// Edit, add and remove notes in `memory`; returns the touched paths (absolute), plus two that
/// are not notes.
fn edit_some(memory: &mnemon::Memory, notes: &[(String, String)]) -> Vec<std::path::PathBuf> {
    let dir = memory.dir().memory();
    let edited = write_note(
        memory,
        &notes[5].0,
        "---\nname: edited\ntype: project\n---\nNow about [[added-by-test]] only.\n",
    );
    let added = write_note(
        memory,
        "sub/added-by-test.md",
        "---\nname: added\n---\nFresh words: zygomorphic quokka.\n",
    );
    let removed = dir.join(&notes[6].0);
    std::fs::remove_file(&removed).expect("remove");
    let other = write_note(memory, "readme.txt", "not a note");
    let hidden = write_note(memory, ".hidden/x.md", "---\nname: x\n---\nx\n");
    vec![edited, added, removed, other, hidden]
}

#[test]
fn targeted_update_equals_a_full_incremental_scan() {
    let notes = generate_notes(&GenConfig::new(120, 21));
    let (_a_tmp, a) = generated(120, 21);
    let (_b_tmp, b) = generated(120, 21);
    let paths = edit_some(&a, &notes);
    edit_some(&b, &notes);

    let targeted = a.index_paths(&paths).expect("index_paths");
    let full = b.index().expect("index");
    assert_eq!(targeted.changed, full.changed);
    assert_eq!(targeted.removed, full.removed);
    assert_eq!(targeted.changed.len(), 2, "{:?}", targeted.changed);
    assert_eq!(
        targeted.removed,
        vec![notes[6].0.trim_end_matches(".md").to_string()]
    );
    assert_eq!((targeted.notes, targeted.edges), (full.notes, full.edges));
    assert_eq!(a.edges().expect("edges"), b.edges().expect("edges"));
    // Nothing was missed: a full walk afterwards finds nothing to do.
    let after = a.index().expect("index");
    assert!(
        after.changed.is_empty() && after.removed.is_empty(),
        "{after:?}"
    );
    // The new words are found, the edited note's old words are not.
    let r = a.recall(&Query::text("quokka")).expect("recall");
    assert_eq!(
        r.results.first().map(|h| h.id.as_str()),
        Some("sub/added-by-test")
    );
}

#[test]
fn targeted_update_of_a_folder_falls_back_to_a_full_scan() {
    let (_tmp, memory) = generated(30, 4);
    write_note(&memory, "newdir/a.md", "---\nname: a\n---\nalpha\n");
    let r = memory
        .index_paths(&[memory.dir().memory().join("newdir")])
        .expect("index_paths");
    assert_eq!(r.changed, vec!["newdir/a".to_string()]);
}

/// A watcher reports a removed folder alone, not the notes in it: the targeted update skipped
/// the path (no `.md`, and nothing there to stat), and the folder's notes stayed indexed for the
/// rest of a `serve` session.
#[test]
fn targeted_update_of_a_removed_folder_drops_its_notes() {
    let (_tmp, memory) = generated(30, 4);
    write_note(&memory, "gone/a.md", "---\nname: a\n---\nalpha quokka\n");
    write_note(
        &memory,
        "gone/deeper/b.md",
        "---\nname: b\n---\nbeta quokka\n",
    );
    write_note(&memory, "gonex.md", "---\nname: c\n---\ngamma quokka\n");
    memory.index().expect("index");
    let folder = memory.dir().memory().join("gone");
    std::fs::remove_dir_all(&folder).expect("rm -rf");
    // A file that is gone and was never a note (an editor's probe) changes nothing.
    let probe = memory.dir().memory().join("4913");
    let r = memory.index_paths(&[probe]).expect("index_paths");
    assert!(r.removed.is_empty() && r.changed.is_empty(), "{r:?}");
    let r = memory.index_paths(&[folder]).expect("index_paths");
    assert_eq!(r.removed, vec!["gone/a", "gone/deeper/b"]);
    let hits = memory.recall(&Query::text("quokka")).expect("recall");
    let ids: Vec<&str> = hits.results.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["gonex"]);
}

/// The generated queries of a `n`-note corpus with `seed`.
fn generated_queries(n: usize, seed: u64) -> Vec<mnemon_testkit::eval::truth::TruthQuery> {
    let dir = tempfile::tempdir().expect("tempdir");
    mnemon_testkit::corpus::generate(&GenConfig::new(n, seed), dir.path()).expect("generate");
    mnemon_testkit::eval::truth::load_truth(&dir.path().join("queries.yaml"))
        .expect("truth")
        .queries
}

/// Scoring reads a neighbour's fields only when its best possible score can still enter the top
/// `limit`: the top 10 must be the first 10 of a top-24 list (same lexical hits, a lower bar).
#[test]
fn bounded_scoring_returns_the_top_of_a_longer_list() {
    // A fixed clock: with the system's, the two recalls of a query could straddle a second and
    // differ in the last bit of a recency bonus (seen once in a debug-build CI run).
    let (_tmp, memory) = generated(400, 13);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let memory = memory.with_clock(mnemon::recall::FixedClock(now));
    let queries = generated_queries(400, 13);
    // Usage stats on some notes, so bonuses take part.
    for (i, t) in queries.iter().enumerate().take(40) {
        if let Some(r) = t.relevant.first() {
            if i % 2 == 0 {
                memory
                    .set_importance(&r.id, (i % 10 + 1) as u8, &[], "")
                    .expect("importance");
            } else {
                memory
                    .recall(&Query::anchors([r.id.as_str()]).with_depth(0))
                    .expect("warm");
            }
        }
    }
    let mut compared = 0;
    for t in &queries {
        let mut q = mnemon_testkit::eval::run::query_of(t);
        let short = memory.recall(&q.clone().with_limit(10)).expect("recall");
        q = q.with_limit(24);
        let long = memory.recall(&q).expect("recall");
        let a: Vec<_> = short.results.iter().map(|h| (&h.id, h.score)).collect();
        let b: Vec<_> = long
            .results
            .iter()
            .take(10)
            .map(|h| (&h.id, h.score))
            .collect();
        assert_eq!(a, b, "{:?} {:?}", t.query, t.anchors);
        compared += usize::from(long.results.len() > 10);
    }
    assert!(
        compared >= 100,
        "only {compared} queries had more than 10 results"
    );
}

/// Scoring looks stats up by graph ordinal, from a table patched after each recorded recall and
/// each fold of another process's events: every bonus must match the stats read by id.
#[test]
fn stats_by_ordinal_follow_recalls_and_other_processes() {
    let (_tmp, a) = generated(200, 17);
    let b = mnemon::Memory::open(a.dir().root()).expect("second handle");
    let queries = generated_queries(200, 17);
    let mut checked = 0;
    for (i, t) in queries
        .iter()
        .filter(|t| t.query.is_some())
        .take(30)
        .enumerate()
    {
        let text = t.query.clone().unwrap_or_default();
        // Recorded recalls in both processes, and importance marks from the other one.
        a.recall(&Query::text(text.clone())).expect("recall a");
        b.recall(&Query::text(text.clone())).expect("recall b");
        if let Some(r) = t.relevant.first() {
            b.set_importance(&r.id, (i % 10 + 1) as u8, &[], "")
                .expect("importance");
        }
        // Fetches by id (uses) from the other process, on every third question.
        if let Some(r) = t.relevant.last().filter(|_| i % 3 == 0) {
            b.recall(&Query::anchors([r.id.clone()]).with_depth(0))
                .expect("fetch");
        }
        a.events().refresh().expect("refresh");
        let mut q = Query::text(text);
        q.record = false;
        for h in a.recall(&q).expect("recall").results {
            let s = a.stats(&h.id).expect("stats");
            let want_usage = ranking::usage_bonus(s.untied_used, s.wrong_count);
            let want_importance = ranking::importance_bonus(s.importance.unwrap_or(0));
            assert!(
                (h.explain.usage - want_usage).abs() < 1e-6,
                "{}: {} vs {}",
                h.id,
                h.explain.usage,
                want_usage
            );
            assert!(
                (h.explain.importance - want_importance).abs() < 1e-6,
                "{}",
                h.id
            );
            checked += usize::from(s.untied_used > 0 || s.importance.is_some());
        }
    }
    assert!(checked >= 50, "only {checked} hits carried stats");
}

#[test]
fn segment_probes_give_the_edges_of_token_edges() {
    // A cold build: one segment, no deletions.
    let tok = Tokenizer::new();
    let docs: Vec<DocTerms> = generate_notes(&GenConfig::new(800, 5))
        .iter()
        .map(|(rel, text)| {
            let id = mnemon::notes::id_from_relative_path(std::path::Path::new(rel)).expect("id");
            DocTerms::from_note(&tok, &mnemon::notes::parse_note(&id, text.as_bytes()))
        })
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let lex = LexicalIndex::rebuild(dir.path(), &docs).expect("build");
    let seg = lex.sole_segment().expect("one segment without deletions");
    let doc_number = |id: &str| {
        let d = seg
            .ids()
            .iter()
            .position(|x| **x == *id)
            .expect("in the segment");
        u32::try_from(d).expect("doc number")
    };
    // The dictionary read in parallel parts gives the probes of one pass, whatever the parts.
    for parts in 1..=4 {
        let probes = SegmentProbes::in_parts(seg, parts);
        let mut acc = probes.accumulator();
        for doc in docs.iter().step_by(7) {
            let d = doc_number(&doc.id);
            let slow = cooccur::token_edges(doc, &lex, &[], ranking::CO_OCCURRENCE_CAP);
            let fast = probes.edges(d, &[], ranking::CO_OCCURRENCE_CAP, &mut acc);
            assert_eq!(fast, slow, "{} in {parts} parts", doc.id);
        }
    }
    // The same segment laid out but not finished (no dictionary yet: what a cold build reads
    // while it builds the dictionary) gives the same probes, in any number of parts.
    let mut sorted: Vec<&DocTerms> = docs.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let mut builder = SegmentBuilder::new();
    for d in &sorted {
        builder.add_doc(d).expect("add");
    }
    let laid = builder.lay_out().expect("lay out");
    let ids: Vec<&str> = sorted.iter().map(|d| d.id.as_str()).collect();
    let laid_docs = LaidOutDocs {
        laid: &laid,
        ids: &ids,
    };
    for parts in 1..=4 {
        let probes = SegmentProbes::in_parts(&laid_docs, parts);
        let mut acc = probes.accumulator();
        for doc in docs.iter().step_by(5) {
            let d = doc_number(&doc.id);
            assert_eq!(ids[d as usize], doc.id, "doc numbers follow id order");
            let slow = cooccur::token_edges(doc, &lex, &[], ranking::CO_OCCURRENCE_CAP);
            let fast = probes.edges(d, &[], ranking::CO_OCCURRENCE_CAP, &mut acc);
            assert_eq!(fast, slow, "{} laid out, in {parts} parts", doc.id);
        }
    }
    // And finishing it gives the segment's bytes.
    let finished = laid.finish().expect("finish");
    let seg_files: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "seg"))
        .collect();
    assert_eq!(seg_files.len(), 1, "{seg_files:?}");
    assert_eq!(
        finished.to_vec(),
        std::fs::read(&seg_files[0]).expect("read")
    );
    let probes = SegmentProbes::new(seg);
    let mut acc = probes.accumulator();
    let (mut with_edges, mut excluded) = (0, 0);
    for doc in &docs {
        let d = doc_number(&doc.id);
        let slow = cooccur::token_edges(doc, &lex, &[], ranking::CO_OCCURRENCE_CAP);
        let fast = probes.edges(d, &[], ranking::CO_OCCURRENCE_CAP, &mut acc);
        assert_eq!(fast, slow, "{}", doc.id);
        if let Some(first) = slow.first() {
            with_edges += 1;
            // An excluded note (a linked or slug neighbour) is skipped, and a lower cap holds.
            let exclude = [first.other.as_str()];
            let slow = cooccur::token_edges(doc, &lex, &exclude, 2);
            let fast = probes.edges(d, &[doc_number(&first.other)], 2, &mut acc);
            assert_eq!(fast, slow, "{} without {}", doc.id, first.other);
            excluded += usize::from(slow.iter().all(|e| e.other != first.other));
        }
    }
    assert!(
        with_edges >= 200,
        "only {with_edges} notes with token edges"
    );
    assert_eq!(excluded, with_edges);
    // After an update the index has two segments: the term pass does not apply.
    let lex = lex
        .update(dir.path(), &docs[..1], &[], false)
        .expect("update");
    assert!(lex.sole_segment().is_none());
}
