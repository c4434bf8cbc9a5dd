//! The redb store: schema-version rebuilds, damaged files, and sharing between processes.

mod common;

use common::{bin, fresh, write_note};
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
    {
        let db = redb::Database::builder()
            .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
            .create(&store_path)
            .unwrap();
        let w = db.begin_write().unwrap();
        w.open_table(META)
            .unwrap()
            .insert("schema_version", 999u32.to_le_bytes().as_slice())
            .unwrap();
        w.commit().unwrap();
    }
    let mut memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
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
    let mut memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
    let notices = memory.take_notices();
    assert!(notices[0].contains("could not be opened"), "{notices:?}");
    assert!(index.join(format!("{STORE_FILE}.damaged")).exists());
    let r = memory.index().unwrap();
    assert_eq!((r.notes, r.edges), (1, 1));
}

#[test]
fn a_second_process_can_index_while_this_one_holds_the_store_open() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]]");
    memory.index().unwrap();
    write_note(&memory, "b.md", "b");
    let out = bin()
        .args(["index", "--json", "--dir"])
        .arg(tmp.path().join(".mnemon"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["changed"], serde_json::json!(["b"]));
    // This process sees the other's commit at its next read.
    assert_eq!(memory.show("b").unwrap().id, "b");
    assert!(memory.index().unwrap().changed.is_empty());
}
