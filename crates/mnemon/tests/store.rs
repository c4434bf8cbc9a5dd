//! The redb store: schema-version rebuilds, damaged files, and and their file formats.

mod common;

use common::{fresh, write_note};
use mnemon::Memory;
use mnemon::store::{META, SCHEMA_VERSION, STORE_FILE};

#[test]
fn other_schema_version_is_rebuilt_with_a_message() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]]");
    write_note(&memory, "b.md", "b");
    assert_eq!(memory.index().unwrap().notes, 2);
    drop(memory);
    let store_path = tmp.path().join(".mnemon/index").join(STORE_FILE);
    as_written_by_schema(&store_path, 999, |_| {});
    let memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
    let notices = memory.take_notices();
    let schema = notices
        .iter()
        .find(|n| n.contains("schema v999"))
        .expect("a schema notice");
    assert!(schema.contains(&format!("v{SCHEMA_VERSION}")), "{schema}");
    // Everything is re-read from the notes.
    let r = memory.index().unwrap();
    assert_eq!(r.changed, vec!["a", "b"]);
    assert_eq!((r.notes, r.edges), (2, 1));
}

#[test]
fn garbage_store_file_is_moved_aside_and_rebuilt() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]]");
    memory.index().unwrap();
    drop(memory);
    let index = tmp.path().join(".mnemon/index");
    std::fs::write(index.join(STORE_FILE), vec![0xAB; 10_000]).unwrap();
    let memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
    let notices = memory.take_notices();
    assert!(notices[0].contains("could not be opened"), "{notices:?}");
    assert!(index.join(format!("{STORE_FILE}.damaged")).exists());
    let r = memory.index().unwrap();
    assert_eq!((r.notes, r.edges), (1, 1));
}

/// Two processes meeting one damaged store: each moved a file aside, the second the store the
/// first had just created in its place (and was filling from the notes). The move is made
/// under the write lock, and only when the file found there is still damaged: here the lock's
/// holder replaces it first, and the opener takes the new file.
#[test]
fn a_damaged_store_replaced_by_another_process_meanwhile_is_not_moved_aside() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]]");
    memory.index().unwrap();
    drop(memory);
    let root = tmp.path().join(".mnemon");
    let index = root.join("index");
    let good = tmp.path().join("good.redb");
    std::fs::copy(index.join(STORE_FILE), &good).unwrap();
    std::fs::write(index.join(STORE_FILE), vec![0xAB; 10_000]).unwrap();
    // The other process: holds the write lock while it replaces the damaged file.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(index.join(mnemon::store::WRITE_LOCK_FILE))
        .unwrap();
    lock.lock().unwrap();
    let opener = std::thread::spawn({
        let root = root.clone();
        move || {
            let m = Memory::open(root).unwrap();
            (m.take_notices(), m)
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::rename(&good, index.join(STORE_FILE)).unwrap();
    drop(lock);
    let (notices, memory) = opener.join().unwrap();
    assert!(
        !notices.iter().any(|n| n.contains("could not be opened")),
        "{notices:?}"
    );
    assert!(!index.join(format!("{STORE_FILE}.damaged")).exists());
    let r = memory.index().unwrap();
    assert_eq!((r.notes, r.edges), (1, 1));
}

/// Regression: `mnemon index` killed while redb created a new store left a file without redb's
/// magic number (written last), which was called damaged and kept as `graph.redb.damaged`. It
/// holds nothing: it is replaced, with a notice that says what happened.
#[test]
fn a_store_whose_creation_was_interrupted_is_created_anew_not_kept_as_damaged() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]]");
    memory.index().unwrap();
    drop(memory);
    let index = tmp.path().join(".mnemon/index");
    // What redb leaves when stopped after writing a new file's header but before its magic.
    let mut bytes = std::fs::read(index.join(STORE_FILE)).unwrap();
    bytes[..9].fill(0);
    std::fs::write(index.join(STORE_FILE), &bytes).unwrap();
    let memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
    let notices = memory.take_notices();
    assert!(notices[0].contains("half-created"), "{notices:?}");
    assert!(!notices[0].contains("damaged"), "{notices:?}");
    assert!(!index.join(format!("{STORE_FILE}.damaged")).exists());
    let r = memory.index().unwrap();
    assert_eq!((r.notes, r.edges), (1, 1));
}

/// A store stopped even earlier (sized, nothing written) is zeros throughout: created anew too.
/// A larger store whose first block a crash zeroed lost its header but not its pages: that is
/// damage, kept as `graph.redb.damaged` for inspection.
#[test]
fn a_store_of_zeros_is_created_anew_and_a_zeroed_first_block_is_damage() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]]");
    memory.index().unwrap();
    drop(memory);
    let index = tmp.path().join(".mnemon/index");
    let open = |bytes: Vec<u8>| {
        std::fs::write(index.join(STORE_FILE), bytes).unwrap();
        let memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
        let notices = memory.take_notices();
        assert_eq!(memory.index().unwrap().notes, 1);
        notices
    };
    let notices = open(vec![0; 73_728]);
    assert!(notices[0].contains("half-created"), "{notices:?}");
    assert!(!index.join(format!("{STORE_FILE}.damaged")).exists());
    let mut zeroed_head = vec![0xAB; 2 << 20];
    zeroed_head[..4096].fill(0);
    let notices = open(zeroed_head);
    assert!(notices[0].contains("could not be opened"), "{notices:?}");
    assert!(index.join(format!("{STORE_FILE}.damaged")).exists());
}

mod edge_tables {
    //! `edges_out` holds one list per node (schema v5: each edge once, at its source); every
    //! batch rewrites the lists of its notes, and a note's in-edges are found among the others'
    //! out-lists. Checked against a model after each batch of a random sequence.

    use mnemon::dedup::Sketch;
    use mnemon::notes::{EdgeKind, Provenance};
    use mnemon::store::{Batch, EdgeValue, FileEntry, NodeRecord, NoteUpdate, Store};
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    const IDS: [&str; 7] = ["a", "b", "b/c", "d", "e", "ghost", "x"];
    const KINDS: [EdgeKind; 3] = [
        EdgeKind::References,
        EdgeKind::PartOf,
        EdgeKind::CoOccursToken,
    ];

    #[derive(Debug, Clone)]
    enum Op {
        Upsert(usize, Vec<(usize, usize, u8)>),
        Remove(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..IDS.len() - 1, prop::collection::vec((0..IDS.len(), 0..KINDS.len(), 0..3u8), 0..6))
                .prop_map(|(id, edges)| Op::Upsert(id, edges)),
            1 => (0..IDS.len() - 1).prop_map(Op::Remove),
        ]
    }

    fn edge(to: usize, kind: usize, conf: u8) -> EdgeValue {
        EdgeValue {
            other: IDS[to].to_string(),
            kind: KINDS[kind],
            provenance: Provenance::Frontmatter,
            confidence: f32::from(conf) / 2.0,
            source_out_degree: 0,
        }
    }

    /// What each list must hold: out-lists by source, in-lists derived from them.
    #[derive(Default)]
    struct Model {
        out: BTreeMap<&'static str, BTreeSet<Vec<u8>>>,
    }

    impl Model {
        fn apply(&mut self, batch: &[Op]) {
            for op in batch {
                match op {
                    Op::Remove(id) => {
                        self.out.remove(IDS[*id]);
                    }
                    Op::Upsert(id, edges) => {
                        let degree = edges.iter().map(|e| e.0).collect::<BTreeSet<_>>().len();
                        let set: BTreeSet<Vec<u8>> = edges
                            .iter()
                            .map(|&(to, k, c)| {
                                EdgeValue {
                                    source_out_degree: degree as u32,
                                    ..edge(to, k, c)
                                }
                                .encode()
                            })
                            .collect();
                        self.out.insert(IDS[*id], set);
                    }
                }
            }
        }

        fn inn(&self, target: &str) -> Vec<Vec<u8>> {
            let mut v: Vec<Vec<u8>> = Vec::new();
            for (from, set) in &self.out {
                for bytes in set {
                    let e = mnemon::store::EdgeRef::decode(bytes).unwrap();
                    if e.other == target {
                        v.push(
                            EdgeValue::from(mnemon::store::EdgeRef { other: from, ..e }).encode(),
                        );
                    }
                }
            }
            v.sort();
            v
        }
    }

    fn to_batch(ops: &[Op]) -> Batch {
        let mut batch = Batch::default();
        for op in ops {
            match op {
                Op::Remove(id) => batch
                    .removals
                    .push((format!("{}.md", IDS[*id]), IDS[*id].to_string())),
                Op::Upsert(id, edges) => batch.upserts.push(NoteUpdate {
                    id: IDS[*id].to_string(),
                    path: format!("{}.md", IDS[*id]),
                    record: NodeRecord::default(),
                    edges: edges.iter().map(|&(to, k, c)| edge(to, k, c)).collect(),
                    file: FileEntry {
                        size: 1,
                        mtime_ns: 0,
                        ctime_ns: 0,
                        ino: 0,
                        hash: 0,
                    },
                    problems: Vec::new(),
                    sketch: Some(Sketch::of_note(None, None, IDS[*id])),
                }),
            }
        }
        batch
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn both_directions_match_the_model_after_every_batch(
            batches in prop::collection::vec(prop::collection::vec(op(), 1..5), 1..8)
        ) {
            let tmp = tempfile::tempdir().unwrap();
            let (store, _) = Store::open(tmp.path()).unwrap();
            let mut model = Model::default();
            for ops in &batches {
                // A scan names each note once per batch: keep the last op of each id.
                let mut seen = BTreeSet::new();
                let mut ops: Vec<Op> = ops
                    .iter()
                    .rev()
                    .filter(|o| seen.insert(match o { Op::Upsert(i, _) | Op::Remove(i) => *i }))
                    .cloned()
                    .collect();
                ops.reverse();
                store.apply(&to_batch(&ops)).unwrap();
                model.apply(&ops);
                let r = store.read().unwrap();
                let mut count = 0;
                for id in IDS {
                    let out: Vec<Vec<u8>> =
                        r.edges_out(id).unwrap().iter().map(EdgeValue::encode).collect();
                    let want: Vec<Vec<u8>> =
                        model.out.get(id).map(|s| s.iter().cloned().collect()).unwrap_or_default();
                    prop_assert_eq!(&out, &want, "out-edges of {}", id);
                    count += out.len() as u64;
                    let inn: Vec<Vec<u8>> =
                        r.edges_in(id).unwrap().iter().map(EdgeValue::encode).collect();
                    prop_assert_eq!(&inn, &model.inn(id), "in-edges of {}", id);
                }
                prop_assert_eq!(r.edge_count().unwrap(), count);
                prop_assert_eq!(r.all_edges().unwrap().len() as u64, count);
            }
        }
    }
}

#[test]
fn a_schema_v3_store_with_multimap_edge_tables_is_rebuilt() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]]");
    write_note(&memory, "b.md", "[[a]]");
    drop(memory);
    let index = tmp.path().join(".mnemon/index");
    std::fs::create_dir_all(&index).unwrap();
    let _ = std::fs::remove_file(index.join(STORE_FILE));
    // The layout of schema v3: edges in multimap tables of the same names.
    as_written_by_schema(&index.join(STORE_FILE), 3, |w| {
        for name in ["edges_out", "edges_in"] {
            let def = redb::MultimapTableDefinition::<&str, &[u8]>::new(name);
            w.open_multimap_table(def)
                .unwrap()
                .insert("a", [1u8, 2, 0, 0, 0x80, 0x3f, 1, 0, 0, 0, b'b'].as_slice())
                .unwrap();
        }
    });
    let memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
    let notices = memory.take_notices();
    assert!(
        notices.iter().any(|n| n.contains("schema v3")),
        "{notices:?}"
    );
    let r = memory.index().unwrap();
    assert_eq!((r.notes, r.edges), (2, 2));
}

#[test]
fn a_schema_v4_store_with_an_in_edge_table_is_rebuilt_without_it() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]]");
    write_note(&memory, "b.md", "[[a]] and [[c]]");
    memory.index().unwrap();
    drop(memory);
    let path = tmp.path().join(".mnemon/index").join(STORE_FILE);
    // What schema v4 kept besides: every edge again in its target's in-list.
    as_written_by_schema(&path, 4, |w| {
        let def = redb::TableDefinition::<&str, &[u8]>::new("edges_in");
        w.open_table(def)
            .unwrap()
            .insert("b", [1u8, 0, 0, 0].as_slice())
            .unwrap();
    });
    let memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
    let notices = memory.take_notices();
    assert!(
        notices.iter().any(|n| n.contains("schema v4")),
        "{notices:?}"
    );
    let r = memory.index().unwrap();
    assert_eq!((r.notes, r.edges), (2, 3));
    let b = memory.show("b").unwrap();
    let from: Vec<&str> = b.edges_in.iter().map(|e| e.from.as_str()).collect();
    assert_eq!(from, ["a"]);
    drop(memory);
    use redb::{ReadableDatabase, TableHandle};
    let db = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .open(&path)
        .unwrap();
    let tables: Vec<String> = db
        .begin_read()
        .unwrap()
        .list_tables()
        .unwrap()
        .map(|t| t.name().to_string())
        .collect();
    assert!(!tables.iter().any(|t| t == "edges_in"), "{tables:?}");
    assert!(tables.iter().any(|t| t == "edges_out"), "{tables:?}");
    assert!(tables.iter().any(|t| t == "sketches"), "{tables:?}");
    assert_eq!(SCHEMA_VERSION, 29);
}

/// Open (or create) the store at `path` as another build would, mark it as written by schema
/// `version`, and let `more` add what that schema kept, in the same transaction.
fn as_written_by_schema(
    path: &std::path::Path,
    version: u32,
    more: impl FnOnce(&redb::WriteTransaction),
) {
    let db = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .create(path)
        .unwrap();
    let w = db.begin_write().unwrap();
    w.open_table(META)
        .unwrap()
        .insert("schema_version", version.to_le_bytes().as_slice())
        .unwrap();
    more(&w);
    w.commit().unwrap();
}
