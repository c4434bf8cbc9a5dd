//! The graph cache file (`index/graph.cache`, format-spec/graph.md): what one process loads from
//! the store, the next reads whole and patches from the change log, and it never changes an
//! answer: damaged, stale or missing, recall gives what a load from the store gives.

mod common;

use common::{fresh, write_note};
use mnemon::Memory;
use mnemon::graph::Graph;
use mnemon::graph::file::{GRAPH_FILE, decode, encode};
use mnemon::recall::{FixedClock, Query};
use mnemon::store::Store;
use mnemon_testkit::corpus::{GenConfig, generate_notes};

fn generated(n: usize, seed: u64) -> (tempfile::TempDir, Memory) {
    let (tmp, memory) = fresh();
    for (rel, text) in generate_notes(&GenConfig::new(n, seed)) {
        write_note(&memory, &rel, text);
    }
    memory.index().expect("index");
    (tmp, memory)
}

/// Every list of `g` in list order, each edge as (other id, kind, provenance, confidence bits,
/// degree, walk weight bits), and every node's scoring fields.
fn view(g: &Graph) -> Vec<String> {
    (0..g.len() as u32)
        .map(|o| {
            let edges = |l: &[mnemon::graph::GraphEdge]| {
                l.iter()
                    .map(|e| {
                        format!(
                            "{}:{:?}:{:?}:{:08x}:{}:{:08x}",
                            g.id(e.other),
                            e.kind,
                            e.provenance,
                            e.confidence.to_bits(),
                            e.source_out_degree,
                            e.walk_weight.to_bits()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            };
            format!(
                "{} {:?} out[{}] in[{}]",
                g.id(o),
                g.meta(o),
                edges(g.out(o)),
                edges(g.inn(o))
            )
        })
        .collect()
}

/// What a set of queries returns, ids and exact scores, under a fixed clock, unrecorded.
fn answers(memory: &Memory) -> Vec<String> {
    let mut out = Vec::new();
    for q in [
        Query::text("postgres deploy cache"),
        Query::text("rollback incident pool"),
        Query::anchors(["hub-under-test"]).with_depth(1),
    ] {
        // Not recorded: the events of one process's recalls would move the next one's scores.
        let q = Query { record: false, ..q };
        match memory.recall(&q) {
            Ok(r) => {
                for h in r.results {
                    out.push(format!("{} {:08x}", h.id, h.score.to_bits()));
                }
            }
            Err(e) => out.push(format!("error {e}")),
        }
        out.push("--".into());
    }
    out
}

fn reopen(memory: &Memory) -> Memory {
    Memory::open(memory.dir().root())
        .expect("open")
        .with_clock(FixedClock(1_780_000_000))
}

#[test]
fn encoded_graph_decodes_to_the_same_lists_weights_and_fields() {
    let (_tmp, memory) = generated(300, 11);
    let (store, _) = Store::open(&memory.dir().index()).expect("store");
    let g = Graph::load(&store.read().expect("read")).expect("load");
    assert!(g.len() >= 300);
    let bytes = encode(&g);
    let back = decode(&bytes).expect("decode");
    assert_eq!(back.version(), g.version());
    assert_eq!(view(&back), view(&g));
    assert_eq!(back.ord("no-such-id"), None);
    for o in [0u32, 17, 299] {
        assert_eq!(back.ord(g.id(o)), Some(o));
    }
    assert_eq!(encode(&back), bytes, "a second round gives the same bytes");
}

#[test]
fn damaged_or_torn_graph_files_are_refused_never_misread() {
    let (_tmp, memory) = generated(60, 12);
    let (store, _) = Store::open(&memory.dir().index()).expect("store");
    let bytes = encode(&Graph::load(&store.read().expect("read")).expect("load"));
    for at in (0..bytes.len()).step_by(7) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        let err = decode(&bad).expect_err("a flipped byte is seen");
        assert!(!err.reason.is_empty());
    }
    for len in [0, 10, 63, 64, 65, bytes.len() / 2, bytes.len() - 1] {
        let err = decode(&bytes[..len]).expect_err("a torn file is seen");
        assert!(!err.reason.is_empty(), "{len}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(decode(&longer).is_err());
}

#[test]
fn next_process_reads_the_cache_and_answers_alike() {
    let (_tmp, memory) = generated(200, 13);
    let file = memory.dir().index().join(GRAPH_FILE);
    assert!(!file.exists(), "indexing alone writes no graph cache");
    let first = reopen(&memory);
    let before = answers(&first);
    assert!(file.exists(), "the first full load writes the cache");
    let written = std::fs::metadata(&file)
        .expect("stat")
        .modified()
        .expect("mtime");

    let second = reopen(&memory);
    assert_eq!(answers(&second), before);
    assert_eq!(
        std::fs::metadata(&file)
            .expect("stat")
            .modified()
            .expect("mtime"),
        written,
        "a current cache is read, not written again"
    );
    let (store, _) = Store::open(&memory.dir().index()).expect("store");
    let from_store = Graph::load(&store.read().expect("read")).expect("load");
    let kept = decode(&std::fs::read(&file).expect("read")).expect("decode");
    assert_eq!(view(&kept), view(&from_store));
}

#[test]
fn damaged_cache_is_reported_and_replaced_and_answers_stay() {
    let (_tmp, memory) = generated(200, 14);
    let file = memory.dir().index().join(GRAPH_FILE);
    let before = answers(&reopen(&memory));
    let mut bytes = std::fs::read(&file).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&file, &bytes).expect("damage");

    let m = reopen(&memory);
    assert_eq!(answers(&m), before);
    let notices = m.take_notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("graph cache unusable") && n.contains("checksum")),
        "{notices:?}"
    );
    let kept = decode(&std::fs::read(&file).expect("read")).expect("rewritten whole");
    assert_eq!(kept.len(), m_len(&memory));
}

fn m_len(memory: &Memory) -> usize {
    let (store, _) = Store::open(&memory.dir().index()).expect("store");
    Graph::load(&store.read().expect("read"))
        .expect("load")
        .len()
}

/// A cache written before notes changed is patched from the change log: the answers are those of
/// a process with no cache at all. Past 256 patched nodes the cache is written again.
#[test]
fn stale_cache_is_patched_to_the_store_and_rewritten_after_many_changes() {
    let (_tmp, memory) = generated(400, 15);
    let file = memory.dir().index().join(GRAPH_FILE);
    let _ = answers(&reopen(&memory));
    let old = decode(&std::fs::read(&file).expect("read")).expect("decode");

    // A few edits: patched, not rewritten.
    write_note(
        &memory,
        "hub-under-test.md",
        "---\nname: hub\n---\nA hub [[a-new-note]].\n",
    );
    write_note(
        &memory,
        "a-new-note.md",
        "---\nname: new\n---\nBack to [[hub-under-test]].\n",
    );
    memory.index().expect("reindex");
    let patched = answers(&reopen(&memory));
    let kept = decode(&std::fs::read(&file).expect("read")).expect("decode");
    assert_eq!(
        kept.version(),
        old.version(),
        "a few patches do not rewrite it"
    );
    std::fs::remove_file(&file).expect("remove");
    let uncached = answers(&reopen(&memory));
    assert_eq!(patched, uncached);
    assert!(
        patched.iter().any(|l| l.starts_with("a-new-note ")),
        "{patched:?}"
    );

    // Put the old cache back, then change 300 notes: the reader patches them and writes it again.
    std::fs::write(&file, encode(&old)).expect("restore");
    for (i, (rel, text)) in generate_notes(&GenConfig::new(400, 15))
        .into_iter()
        .enumerate()
    {
        if i < 300 {
            write_note(
                &memory,
                &rel,
                format!("{text}\nEdited [[hub-under-test]].\n"),
            );
        }
    }
    memory.index().expect("reindex");
    let after = answers(&reopen(&memory));
    let rewritten = decode(&std::fs::read(&file).expect("read")).expect("decode");
    let (store, _) = Store::open(&memory.dir().index()).expect("store");
    let reader = store.read().expect("read");
    assert_eq!(rewritten.version(), reader.version().expect("version"));
    assert!(rewritten.version().generation > old.version().generation);
    std::fs::remove_file(&file).expect("remove");
    assert_eq!(after, answers(&reopen(&memory)));
}

/// A memory without notes has an empty graph: recalls answer nothing and write no cache (every
/// recall of an empty memory loads its graph again, which costs nothing; a file per recall would).
#[test]
fn empty_memory_writes_no_graph_cache() {
    let (_tmp, memory) = fresh();
    memory.index().expect("index");
    for _ in 0..2 {
        let r = memory
            .recall(&Query {
                record: false,
                ..Query::text("anything")
            })
            .expect("recall");
        assert!(r.results.is_empty());
    }
    assert!(!memory.dir().index().join(GRAPH_FILE).exists());
}
