//! Faults a memory folder meets in the wild, each pinned by a test named after it: a memory too
//! small for the rarity bar, an index folder deleted under the commands, symlinks placed where
//! mnemon writes, a store whose bytes were damaged, files it may not write.

mod common;

use common::{fresh, write_note};
use mnemon::Memory;
use mnemon::recall::{Query, Recall};

fn look(m: &Memory, text: &str) -> Recall {
    let mut q = Query::text(text);
    q.record = false;
    m.recall(&q).expect("recall")
}

fn ids(r: &Recall) -> Vec<&str> {
    r.results.iter().map(|h| h.id.as_str()).collect()
}

#[test]
fn a_memory_with_one_note_returns_it() {
    let (_tmp, m) = fresh();
    write_note(
        &m,
        "pgbouncer.md",
        "---\nname: PgBouncer pool size\n---\nThe pgbouncer pool size is 40 connections per database.\n",
    );
    m.index().expect("index");
    assert_eq!(ids(&look(&m, "pgbouncer pool size")), ["pgbouncer"]);
    assert_eq!(ids(&look(&m, "connections")), ["pgbouncer"]);
    // The floor still holds: a question about something else gets nothing.
    assert!(look(&m, "how do I bake sourdough bread").results.is_empty());
}

#[test]
fn words_every_note_holds_still_find_the_notes() {
    let (_tmp, m) = fresh();
    write_note(
        &m,
        "size.md",
        "---\nname: Pool size\n---\nThe pgbouncer pool holds 40 connections.\n",
    );
    write_note(
        &m,
        "auth.md",
        "---\nname: Pool auth\n---\nThe pgbouncer pool authenticates with md5; auth is per user.\n",
    );
    write_note(
        &m,
        "limits.md",
        "---\nname: Pool limits\n---\nThe pgbouncer pool queues clients past its limit.\n",
    );
    m.index().expect("index");
    // "pgbouncer" and "pool" are in every note: too common to tell them apart, yet the
    // question is about them.
    let r = look(&m, "pgbouncer pool");
    let mut got = ids(&r);
    got.sort_unstable();
    assert_eq!(got, ["auth", "limits", "size"]);
    // A word that singles out one note still decides.
    assert_eq!(ids(&look(&m, "pgbouncer pool md5")), ["auth"]);
    // A common English word ("auth" is on the stop-word list) that a note holds finds it
    // when it is the whole question.
    assert_eq!(ids(&look(&m, "auth")), ["auth"]);
}

#[test]
fn commands_after_the_index_folder_is_deleted_rebuild_it_first() {
    let (tmp, m) = fresh();
    write_note(
        &m,
        "pool.md",
        "---\nname: Pool size\n---\nThe pgbouncer pool holds 40 connections.\n",
    );
    m.index().expect("index");
    let root = m.dir().root().to_path_buf();
    drop(m);
    std::fs::remove_dir_all(root.join("index")).expect("rm index");
    // Each command alone, in a fresh process as the CLI runs them.
    let m = Memory::open(&root).expect("open");
    assert_eq!(m.show("pool").expect("show").id, "pool");
    drop(m);
    std::fs::remove_dir_all(root.join("index")).expect("rm index");
    let m = Memory::open(&root).expect("open");
    m.set_importance("pool", 7, &[], "").expect("importance");
    assert_eq!(m.stats("pool").expect("stats").importance, Some(7));
    drop(m);
    std::fs::remove_dir_all(root.join("index")).expect("rm index");
    let m = Memory::open(&root).expect("open");
    assert_eq!(ids(&look(&m, "pgbouncer pool connections")), ["pool"]);
    drop(tmp);
}

#[test]
fn cli_show_stats_importance_work_right_after_the_index_is_deleted() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join(".mnemon");
    let m = Memory::init(&dir).expect("init");
    write_note(
        &m,
        "pool.md",
        "---\nname: Pool size\n---\nThe pool holds 40.\n",
    );
    drop(m);
    for args in [
        vec!["show", "pool"],
        vec!["importance", "pool", "6"],
        vec!["stats", "pool"],
    ] {
        std::fs::remove_dir_all(dir.join("index")).ok();
        let out = common::bin()
            .arg("--dir")
            .arg(&dir)
            .args(&args)
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
