//! Near-duplicate notes: `doctor` lists pairs of notes that say nearly the same thing and are not
//! linked, found after sentences are reworded or dropped but not for notes that merely share a
//! topic; the write path refuses a near-copy unless told to create it, and its sketches follow
//! every change of the notes (computed for small index batches, filled on demand after a big one).

mod common;

use common::{fresh, write_note};
use mnemon::{Memory, OnDuplicate, WriteRefusal, WriteRequest};

const POOL: &str = "---\nname: Connection pool at month end\n---\n\
The connection pool holds twenty connections per worker. At month end the billing batch opens \
a connection per invoice and the pool runs dry, so requests wait thirty seconds and time out. \
We raised the pool to forty and made the batch reuse one connection. Watch the pool wait metric \
on the database dashboard, and page the on-call engineer when it stays above five seconds.\n";

/// POOL copy-edited: one sentence reworded, one dropped, the title changed.
const POOL_EDITED: &str = "---\nname: Month-end pool exhaustion\n---\n\
The connection pool holds twenty connections per worker. At month end the billing batch opens \
one connection for each invoice and the pool runs dry, so requests wait thirty seconds and time \
out. We raised the pool to forty and made the batch reuse one connection.\n";

/// Same topic, other words.
const POOL_SIBLING: &str = "---\nname: Sizing the connection pool\n---\n\
Each worker gets twenty database connections by default. Size the pool from the worker count \
times the peak concurrent queries, and keep headroom for migrations and the billing batch. The \
database dashboard shows how long requests wait for a connection.\n";

const DEPLOY: &str = "---\nname: Deploy rollback\n---\n\
To roll a deploy back, run the rollback job with the previous release tag, wait for the canary \
to report healthy, then promote it to all regions. Never roll back a schema migration by hand.\n";

fn pairs(memory: &Memory) -> Vec<(String, String, f32)> {
    let report = memory.doctor().expect("doctor");
    assert!(report.store_damage.is_empty(), "{:?}", report.store_damage);
    report
        .near_duplicates
        .into_iter()
        .map(|d| (d.a, d.b, d.similarity))
        .collect()
}

#[test]
fn doctor_finds_a_copy_edited_note_and_not_a_note_on_the_same_topic() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "pool-month-end.md", POOL);
    write_note(&memory, "incidents/pool-exhaustion.md", POOL_EDITED);
    write_note(&memory, "pool-sizing.md", POOL_SIBLING);
    write_note(&memory, "deploy-rollback.md", DEPLOY);
    memory.index().unwrap();
    let found = pairs(&memory);
    assert_eq!(found.len(), 1, "{found:?}");
    let (a, b, similarity) = &found[0];
    assert_eq!(
        (a.as_str(), b.as_str()),
        ("incidents/pool-exhaustion", "pool-month-end")
    );
    assert!(*similarity > 0.6 && *similarity <= 1.0, "{similarity}");
    // An exact copy is as similar as it gets.
    write_note(&memory, "deploy-rollback-copy.md", DEPLOY);
    memory.index().unwrap();
    let found = pairs(&memory);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(
        (found[0].0.as_str(), found[0].1.as_str(), found[0].2),
        ("deploy-rollback", "deploy-rollback-copy", 1.0)
    );
}

#[test]
fn a_pair_linked_by_supersedes_or_a_link_is_not_reported() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "pool-month-end.md", POOL);
    let superseding = POOL_EDITED.replacen("---\n", "---\nsupersedes: [pool-month-end]\n", 1);
    write_note(&memory, "pool-exhaustion.md", &superseding);
    write_note(&memory, "deploy-rollback.md", DEPLOY);
    write_note(
        &memory,
        "deploy-rollback-2.md",
        format!("{DEPLOY}\nSee [[deploy-rollback]]."),
    );
    memory.index().unwrap();
    assert_eq!(pairs(&memory), Vec::new());
}

#[test]
fn the_report_follows_edits_and_deletions_of_the_notes() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "a.md", POOL);
    write_note(&memory, "b.md", POOL_EDITED);
    memory.index().unwrap();
    assert_eq!(pairs(&memory).len(), 1);
    write_note(&memory, "b.md", DEPLOY);
    memory.index().unwrap();
    assert_eq!(pairs(&memory), Vec::new());
    write_note(&memory, "c.md", POOL);
    memory.index().unwrap();
    assert_eq!(pairs(&memory).len(), 1);
    std::fs::remove_file(memory.dir().memory().join("a.md")).unwrap();
    memory.index().unwrap();
    assert_eq!(pairs(&memory), Vec::new());
}

/// Store `bytes` as the sketch of `id` in the store of the memory folder below `root`, as
/// damage from outside mnemon would (no memory may have it open).
fn overwrite_sketch(root: &std::path::Path, id: &str, bytes: &[u8]) {
    use mnemon::store::{SKETCHES, STORE_FILE};
    let path = root.join(".mnemon/index").join(STORE_FILE);
    let db = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .open(&path)
        .unwrap();
    let w = db.begin_write().unwrap();
    w.open_table(SKETCHES).unwrap().insert(id, bytes).unwrap();
    w.commit().unwrap();
}

fn draft(id: &str, text: &str) -> WriteRequest {
    let (_, body) = text.split_once("\n---\n").expect("frontmatter");
    WriteRequest::new(id, body)
}

#[test]
fn a_near_copy_is_refused_with_the_note_it_repeats_then_created_when_asked() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "pool-month-end.md", POOL);
    write_note(&memory, "pool-sizing.md", POOL_SIBLING);
    memory.index().unwrap();
    let mut req = draft("pool-exhaustion", POOL_EDITED);
    let refused = memory.write_note(&req).unwrap();
    assert!(!refused.written);
    assert_eq!(refused.refused, Some(WriteRefusal::NearDuplicate));
    let ids: Vec<&str> = refused
        .near_duplicates
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(ids, ["pool-month-end"]);
    assert!(refused.near_duplicates[0].similarity > 0.6);
    assert!(
        refused.message.contains("pool-month-end"),
        "{}",
        refused.message
    );
    assert!(!memory.dir().memory().join("pool-exhaustion.md").exists());

    req.on_duplicate = OnDuplicate::Create;
    let created = memory.write_note(&req).unwrap();
    assert!(created.written && created.created, "{created:?}");
    assert_eq!(created.near_duplicates.len(), 1);
    // Now that both exist and are not linked, doctor lists them.
    assert_eq!(pairs(&memory).len(), 1);
}

/// Regression: once a near-copy existed (created on purpose), every update of either note was
/// refused as a near-duplicate of the other, with advice to update that other note, whose own
/// update was refused alike.
#[test]
fn a_replacement_is_written_even_when_it_nearly_duplicates_another_note() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "pool-month-end.md", POOL);
    memory.index().unwrap();
    let mut copy = draft("pool-exhaustion", POOL_EDITED);
    copy.on_duplicate = OnDuplicate::Create;
    assert!(memory.write_note(&copy).unwrap().written);
    let sha256 = memory.show("pool-exhaustion").unwrap().sha256;
    let (_, body) = POOL_EDITED.split_once("\n---\n").expect("frontmatter");
    let mut update = WriteRequest::new("pool-exhaustion", format!("{body}\nRaised to 40 since."));
    update.expected_sha256 = sha256;
    let out = memory.write_note(&update).unwrap();
    assert!(out.written && !out.created, "{out:?}");
    assert_eq!(out.refused, None);
    let near: Vec<&str> = out.near_duplicates.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(near, ["pool-month-end"], "the answer still names the pair");
    // A new note repeating it is still refused.
    let again = memory
        .write_note(&draft("pool-third", POOL_EDITED))
        .unwrap();
    assert_eq!(
        again.refused,
        Some(WriteRefusal::NearDuplicate),
        "{again:?}"
    );
}

#[test]
fn a_near_copy_that_declares_it_supersedes_the_old_note_is_written() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "pool-month-end.md", POOL);
    memory.index().unwrap();
    let mut req = draft("pool-exhaustion", POOL_EDITED);
    req.supersedes = vec!["pool-month-end".into()];
    let out = memory.write_note(&req).unwrap();
    assert!(out.written, "{out:?}");
    assert!(out.near_duplicates.is_empty(), "{out:?}");
    assert_eq!(pairs(&memory), Vec::new());
}

#[test]
fn a_note_sharing_much_of_an_older_ones_wording_names_it_as_a_likely_predecessor() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "pool-month-end.md", POOL);
    memory.index().unwrap();
    // The first half of the old note, then news of its own: related, not a copy.
    let body = "The connection pool holds twenty connections per worker. At month end the \
        billing batch opens a connection per invoice and the pool runs dry. Since the move to \
        pgbouncer in transaction mode the workers share one pool of sixty server connections, the \
        batch runs at night, and no request has waited for a connection since March; the old \
        alert on pool wait was removed and replaced by one on pgbouncer queue length.";
    let out = memory
        .write_note(&WriteRequest::new("pgbouncer-move", body))
        .unwrap();
    assert!(out.written, "{out:?}");
    assert!(out.near_duplicates.is_empty(), "{out:?}");
    let ids: Vec<&str> = out
        .likely_predecessors
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(ids, ["pool-month-end"], "{out:?}");
    assert!(out.message.contains("supersedes"), "{}", out.message);
}

#[test]
fn after_a_big_cold_build_the_first_write_fills_the_missing_sketches() {
    let (_tmp, memory) = fresh();
    // More notes than an index batch sketches, so the build stores none.
    for i in 0..300 {
        write_note(
            &memory,
            &format!("filler/n{i}.md"),
            format!(
                "Note {i} talks about subject {} and item {}.",
                i * 7,
                i * 13
            ),
        );
    }
    write_note(&memory, "pool-month-end.md", POOL);
    memory.index().unwrap();
    let out = memory
        .write_note(&draft("pool-exhaustion", POOL_EDITED))
        .unwrap();
    assert_eq!(out.refused, Some(WriteRefusal::NearDuplicate), "{out:?}");
    assert_eq!(out.near_duplicates[0].id, "pool-month-end");
}

#[test]
fn a_stored_sketch_that_differs_from_its_note_is_store_damage() {
    use mnemon::dedup::Sketch;
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", POOL);
    write_note(&memory, "b.md", DEPLOY);
    memory.index().unwrap();
    assert!(memory.doctor().unwrap().store_damage.is_empty());
    drop(memory);
    overwrite_sketch(
        tmp.path(),
        "a",
        &Sketch::of_note(None, None, DEPLOY).to_bytes(),
    );
    let memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
    let report = memory.doctor().unwrap();
    assert!(
        report
            .store_damage
            .iter()
            .any(|d| d.contains("near-duplicate sketch of `a`")),
        "{:?}",
        report.store_damage
    );
}

#[test]
fn chinese_notes_are_compared_character_by_character() {
    let (_tmp, memory) = fresh();
    let original = "每月月底账单批处理会为每张发票打开一个数据库连接，连接池因此耗尽，请求等待三十秒后超时。\
        我们把连接池从二十个连接调到四十个，并让批处理复用同一个连接。\
        请在数据库仪表盘上关注连接等待时间，超过五秒就通知值班工程师。";
    // One sentence dropped, a few characters of another changed.
    let edited = "每月月底账单批处理会为每张发票新建一个数据库连接，连接池因此耗尽，请求等待三十秒后超时。\
        我们把连接池从二十个连接调到四十个，并让批处理复用同一个连接。";
    let sibling = "连接池大小的估算：每个工作进程默认二十个数据库连接。\
        按工作进程数乘以峰值并发查询数来确定连接池大小，并为迁移留出余量。";
    write_note(&memory, "pool-zh.md", original);
    write_note(&memory, "pool-zh-copy.md", edited);
    write_note(&memory, "pool-sizing-zh.md", sibling);
    memory.index().unwrap();
    let found = pairs(&memory);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].0.as_str(), found[0].1.as_str()),
        ("pool-zh", "pool-zh-copy")
    );
    assert!(found[0].2 > 0.7, "{found:?}");
}

#[test]
fn a_stored_sketch_of_the_wrong_length_is_store_damage_and_the_write_path_says_so() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", POOL);
    memory.index().unwrap();
    drop(memory);
    overwrite_sketch(tmp.path(), "a", &[1, 2, 3]);
    let memory = Memory::open(tmp.path().join(".mnemon")).unwrap();
    let report = memory.doctor().unwrap();
    assert!(
        report
            .store_damage
            .iter()
            .any(|d| d.contains("sketch of `a`")),
        "{:?}",
        report.store_damage
    );
    let err = memory
        .write_note(&draft("pool-exhaustion", POOL_EDITED))
        .unwrap_err();
    assert!(mnemon::is_store_damage(&err), "{err}");
    assert!(!memory.dir().memory().join("pool-exhaustion.md").exists());
}
