//! A long-running command (`serve`, `watch`) whose index store is damaged after it started:
//! the next call moves the store aside, rebuilds it from the notes and answers, instead of
//! failing every call until a restart.

mod common;

use common::{bin, fresh, write_note};
use mnemon::recall::Query;
use mnemon::{Memory, OpenOptions, WriteRequest};
use mnemon_cli::live::LiveMemory;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A memory of three linked notes, indexed, served by a [`LiveMemory`] whose log lines are kept.
fn live() -> (tempfile::TempDir, Arc<LiveMemory>, Arc<Mutex<Vec<String>>>) {
    let (tmp, memory) = fresh();
    write_note(
        &memory,
        "pool.md",
        "---\nname: Connection pool\nrelated: [deploy]\n---\nThe pgbouncer pool holds 40 connections.\n",
    );
    write_note(
        &memory,
        "deploy.md",
        "---\nname: Deploy\n---\nDeploys go through the canary first.\n",
    );
    write_note(
        &memory,
        "style.md",
        "---\nname: Style\n---\nAnswers are short; diffs come first.\n",
    );
    memory.index().expect("index");
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let live = LiveMemory::new(
        memory,
        OpenOptions::default(),
        Box::new(move |m| sink.lock().expect("log").push(m)),
    );
    (tmp, Arc::new(live), log)
}

/// Overwrite the store's header (its magic and both commit slots): every later read of it
/// fails, whoever has it open.
fn damage_store(root: &Path) {
    let store = root.join("index/graph.redb");
    let mut bytes = std::fs::read(&store).expect("read store");
    bytes[..4096].fill(0xA5);
    std::fs::write(&store, &bytes).expect("write store");
}

fn ids(memory: &Memory, q: &str) -> Vec<String> {
    memory
        .recall(&Query::text(q))
        .expect("recall")
        .results
        .iter()
        .map(|h| h.id.clone())
        .collect()
}

#[test]
fn a_store_damaged_mid_session_is_rebuilt_and_the_call_answered() {
    let (_tmp, live, log) = live();
    let root = live.dir().root().to_path_buf();
    let before = live.with(|m| Ok(ids(m, "pgbouncer pool"))).expect("recall");
    assert_eq!(before.first().map(String::as_str), Some("pool"));
    let first = live.get();
    damage_store(&root);
    // The memory opened before the damage fails on it: the premise. (A recall on an unchanged
    // store may answer from what it read before; a note's view is read from the store.)
    let err = first
        .show("pool")
        .expect_err("a read of the damaged store fails");
    assert!(mnemon::is_store_damage(&err), "{err}");

    let shown = live.with(|m| m.show("pool")).expect("healed");
    assert_eq!(shown.name.as_deref(), Some("Connection pool"));
    let after = live.with(|m| Ok(ids(m, "pgbouncer pool"))).expect("recall");
    assert_eq!(after, before);
    assert!(!Arc::ptr_eq(&first, &live.get()), "a new memory serves");
    assert!(root.join("index/graph.redb.damaged").exists());
    let log = log.lock().expect("log").join("\n");
    assert!(
        log.contains("the index store was damaged") && log.contains("graph.redb.damaged"),
        "{log}"
    );
    // Recall ids go on in the session: none repeats after the heal.
    let q1 = live
        .with(|m| m.recall(&Query::text("canary")))
        .expect("recall");
    let q2 = live
        .with(|m| m.recall(&Query::text("diffs")))
        .expect("recall");
    assert_eq!(live.get().session(), first.session());
    assert_ne!(q1.qid, q2.qid);
    assert!(
        q1.qid.ends_with("-q2") && q2.qid.ends_with("-q3"),
        "{} {}",
        q1.qid,
        q2.qid
    );
}

#[test]
fn callers_that_meet_the_same_damage_heal_it_once() {
    let (_tmp, live, log) = live();
    let root = live.dir().root().to_path_buf();
    live.with(|m| Ok(ids(m, "canary"))).expect("recall");
    damage_store(&root);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let shown = live.with(|m| m.show("deploy")).expect("healed");
                assert_eq!(shown.name.as_deref(), Some("Deploy"));
            });
        }
    });
    let heals = log
        .lock()
        .expect("log")
        .iter()
        .filter(|l| l.contains("the index store was damaged"))
        .count();
    assert_eq!(heals, 1);
}

#[test]
fn an_error_that_is_not_store_damage_is_returned_without_a_heal() {
    let (_tmp, live, log) = live();
    let first = live.get();
    let err = live
        .with(|m| m.show("no-such-note"))
        .expect_err("unknown id");
    assert!(!mnemon::is_store_damage(&err), "{err}");
    assert!(Arc::ptr_eq(&first, &live.get()));
    assert!(log.lock().expect("log").is_empty());
}

#[test]
fn a_note_written_through_a_healed_memory_is_indexed_and_recalled() {
    let (_tmp, live, log) = live();
    let root = live.dir().root().to_path_buf();
    damage_store(&root);
    let req = WriteRequest::new(
        "runbooks/failover",
        "Promote the replica, then repoint pgbouncer.",
    );
    let out = live.with(|m| m.write_note(&req)).expect("write");
    assert!(out.written, "{}", out.message);
    let got = live
        .with(|m| Ok(ids(m, "promote replica")))
        .expect("recall");
    assert_eq!(got.first().map(String::as_str), Some("runbooks/failover"));
    let log = log.lock().expect("log").join("\n");
    assert!(log.contains("the index store was damaged"), "{log}");
}

/// `mnemon serve` end to end: a recall after the store was damaged under the running server
/// answers as before, and the repair is on stderr (not the protocol).
#[test]
fn serve_answers_after_its_store_is_damaged_under_it() {
    use serde_json::{Value, json};
    let (_tmp, live, _log) = live();
    let root = live.dir().root().to_path_buf();
    drop(live);
    let mut server = common::mcp::Server::start_logged(&root);
    let mut call = |id: u64, name: &str, arguments: Value| -> Value {
        let reply = server.rpc(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        let result = &reply["result"];
        assert_ne!(result["isError"], true, "{reply}");
        let text = result["content"][0]["text"].as_str().expect("text");
        serde_json::from_str(text).expect("the tool's JSON")
    };
    let ids_of = |body: &Value| -> Vec<String> {
        body["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["id"].as_str().expect("id").to_string())
            .collect()
    };
    let recall = json!({"query": "pgbouncer pool", "limit": 3});
    let before = ids_of(&call(2, "memory_recall", recall.clone()));
    assert_eq!(before.first().map(String::as_str), Some("pool"));
    damage_store(&root);
    let shown = call(3, "memory_show", json!({"node": "pool"}));
    assert_eq!(shown["name"], "Connection pool", "{shown}");
    assert_eq!(ids_of(&call(4, "memory_recall", recall)), before);
    let (ok, log) = server.finish_with_log();
    assert!(ok);
    assert!(
        log.contains("the index store was damaged") && log.contains("graph.redb.damaged"),
        "{log}"
    );
    assert!(root.join("index/graph.redb.damaged").exists());
}

/// Another process found the damage first and rebuilt the store (a one-shot command, or another
/// server): the server opens that store as it is, and does not move a healthy store aside.
#[test]
fn a_store_another_process_already_rebuilt_is_opened_not_moved_aside() {
    let (_tmp, live, log) = live();
    let root = live.dir().root().to_path_buf();
    let before = live.with(|m| Ok(ids(m, "pgbouncer pool"))).expect("recall");
    damage_store(&root);
    let out = bin()
        .arg("--dir")
        .arg(&root)
        .args(["doctor", "--fix"])
        .env_remove("MNEMON_DIR")
        .output()
        .expect("run doctor --fix");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rebuilt = std::fs::read(root.join("index/graph.redb")).expect("read the rebuilt store");
    let shown = live.with(|m| m.show("pool")).expect("healed");
    assert_eq!(shown.name.as_deref(), Some("Connection pool"));
    assert_eq!(
        live.with(|m| Ok(ids(m, "pgbouncer pool"))).expect("recall"),
        before
    );
    let log = log.lock().expect("log").join("\n");
    // Seen before any read of the old file: its identity changed.
    assert!(log.contains("graph.redb was replaced"), "{log}");
    // The damaged store doctor moved aside is still the damaged one.
    let aside = std::fs::read(root.join("index/graph.redb.damaged")).expect("aside");
    assert!(aside[..4096].iter().all(|&b| b == 0xA5));
    assert_ne!(rebuilt[..4096], aside[..4096]);
}

/// A panic can come from any index file (fst and redb both panic on some damaged bytes): the
/// first repair opens the folder again, which checks every derived file and rebuilds the
/// damaged ones, and leaves the store where it is.
#[test]
fn a_panic_reopens_the_folder_and_leaves_the_store_in_place() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (_tmp, live, log) = live();
    let root = live.dir().root().to_path_buf();
    let first = live.get();
    let calls = AtomicUsize::new(0);
    let got = live
        .with(|m| {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                panic!("a damaged page");
            }
            Ok(ids(m, "pgbouncer pool"))
        })
        .expect("answered after the reopen");
    assert_eq!(got.first().map(String::as_str), Some("pool"));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(
        !Arc::ptr_eq(&first, &live.get()),
        "the folder was opened again"
    );
    assert!(!root.join("index/graph.redb.damaged").exists());
    let log = log.lock().expect("log").join("\n");
    assert!(
        log.contains("a read of the index panicked (a damaged page)"),
        "{log}"
    );
}

/// An operation that still fails after the reopen gets the store rebuilt from the notes.
#[test]
fn a_panic_that_outlives_the_reopen_gets_the_store_rebuilt() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (_tmp, live, log) = live();
    let root = live.dir().root().to_path_buf();
    let calls = AtomicUsize::new(0);
    let got = live
        .with(|m| {
            if calls.fetch_add(1, Ordering::SeqCst) < 2 {
                panic!("a damaged page");
            }
            Ok(ids(m, "canary"))
        })
        .expect("answered after the rebuild");
    assert_eq!(got.first().map(String::as_str), Some("deploy"));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(root.join("index/graph.redb.damaged").exists());
    let log = log.lock().expect("log").join("\n");
    assert!(
        log.contains("the index store was damaged (a read of it panicked: a damaged page)"),
        "{log}"
    );
}

/// `rm -rf index/` under a running server (README: the folder is derived and may be deleted at
/// any time): its re-index failed on the missing lock file and was never tried again, and its
/// recalls kept reading the deleted store, so a note written after that was never found. The
/// next call opens the folder again, its notes indexed into a new store.
#[test]
fn a_server_whose_index_folder_was_deleted_opens_it_again_and_finds_new_notes() {
    let (_tmp, live, log) = live();
    let root = live.dir().root().to_path_buf();
    let first = live.get();
    std::fs::remove_dir_all(root.join("index")).expect("rm -rf index");
    std::fs::write(
        root.join("memory/wombat.md"),
        "---\nname: Wombat\n---\nWombat burrow notes for the zoo.\n",
    )
    .expect("write");
    let found = live.with(|m| Ok(ids(m, "wombat burrow"))).expect("recall");
    assert_eq!(found.first().map(String::as_str), Some("wombat"));
    assert!(!Arc::ptr_eq(&first, &live.get()), "a new memory serves");
    assert!(root.join("index/graph.redb").is_file());
    let log = log.lock().expect("log").join("\n");
    assert!(log.contains("graph.redb was removed"), "{log}");
    // Once: the new store is the one now recorded.
    let again = live.get();
    live.with(|m| Ok(ids(m, "pgbouncer pool"))).expect("recall");
    assert!(Arc::ptr_eq(&again, &live.get()));
}

/// Regression: `index/` removed while a command opened or updated it (the README says it may be
/// deleted at any time) failed about one command in a hundred with "open lock file
/// .../index/write.lock: No such file or directory", and a command that met two removals failed
/// too. Each command here has the folder removed once or twice at a point spread over its run
/// (not at a fixed rate, which a loaded machine's rebuilds would outrun): it opens the memory
/// again, up to `MAX_OPENS` times, and answers.
#[test]
fn commands_survive_index_removed_while_they_run() {
    let (_tmp, m) = common::fresh();
    for i in 0..20 {
        common::write_note(
            &m,
            &format!("n{i}.md"),
            format!("---\nname: Node {i}\n---\nanchor note {i} about pools\n"),
        );
    }
    m.index().unwrap();
    let root = m.dir().root().to_path_buf();
    let index = root.join("index");
    drop(m);
    let mut failures = Vec::new();
    const COMMANDS: u64 = 150;
    for i in 0..COMMANDS {
        let child = common::bin()
            .env_remove("MNEMON_DIR")
            .arg("--dir")
            .arg(&root)
            .args(["recall", "pools"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Removal points spread over the first 30 ms, where the command opens and indexes.
        std::thread::sleep(std::time::Duration::from_micros((i * 3_989) % 30_000));
        let _ = std::fs::remove_dir_all(&index);
        if i % 3 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(3));
            let _ = std::fs::remove_dir_all(&index);
        }
        let out = child.wait_with_output().unwrap();
        if !out.status.success() {
            failures.push(String::from_utf8_lossy(&out.stderr).to_string());
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {COMMANDS} failed: {:?}",
        failures.len(),
        failures.first()
    );
}
