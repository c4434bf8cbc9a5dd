//! Many agents, one memory: 8 agent processes recall, tag and edit notes while one process
//! compacts the event log (every segment whose writer is gone) and another re-indexes; then every
//! recall the agents acknowledged is folded exactly once, nobody saw a lock error, and doctor is
//! healthy. A variant kills agents with SIGKILL at random moments.

mod common;

use common::{bin, fresh, write_note};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const NODES: usize = 20;

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, m) = fresh();
    for i in 0..NODES {
        write_note(
            &m,
            &format!("n{i}.md"),
            format!("---\nname: Node {i}\n---\nanchor note {i}\n"),
        );
    }
    m.index().unwrap();
    let root = m.dir().root().to_path_buf();
    (tmp, root)
}

fn spawn(root: &std::path::Path, role: &str, session: &str, ops: usize, seed: u64) -> Child {
    bin()
        .arg("--dir")
        .arg(root)
        .args(["--session", session, "__worker", "--role", role])
        .args(["--ops", &ops.to_string(), "--seed", &seed.to_string()])
        .args(["--nodes", &NODES.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Every JSON line a worker printed.
fn lines(child: &mut Child) -> Vec<Value> {
    let out = child.stdout.take().unwrap();
    BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect()
}

fn recalls(lines: &[Value], into: &mut HashMap<String, u64>) {
    for l in lines {
        if l["op"] == "recall" {
            *into
                .entry(l["node"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
}

fn folded(root: &std::path::Path) -> HashMap<String, u64> {
    let m = mnemon::Memory::open(root).unwrap();
    (0..NODES)
        .map(|i| {
            let id = format!("n{i}");
            let c = m.stats(&id).unwrap().recall_count;
            (id, c)
        })
        .collect()
}

#[test]
fn eight_agents_beside_a_compactor_and_an_indexer_fold_every_recall_once() {
    let (_tmp, root) = setup();
    let started = Instant::now();
    let mut agents: Vec<Child> = (0..8)
        .map(|i| spawn(&root, "agent", &format!("agent{i}"), 40, i))
        .collect();
    let mut compactor = spawn(&root, "compactor", "compactor", 15, 100);
    let mut indexer = spawn(&root, "indexer", "indexer", 15, 101);
    let mut want: HashMap<String, u64> = HashMap::new();
    let mut worst_us = 0u64;
    let mut total_recalls = 0usize;
    for a in &mut agents {
        let ls = lines(a);
        assert!(a.wait().unwrap().success());
        let done = ls.last().expect("a final line");
        assert_eq!(done["op"], "done");
        assert_eq!(done["errors"], serde_json::json!([]), "an agent saw errors");
        recalls(&ls, &mut want);
        for l in &ls {
            if l["op"] == "recall" {
                worst_us = worst_us.max(l["latency_us"].as_u64().unwrap());
                total_recalls += 1;
            }
        }
    }
    let elapsed = started.elapsed();
    for c in [&mut compactor, &mut indexer] {
        let ls = lines(c);
        assert!(c.wait().unwrap().success(), "{ls:?}");
        assert_eq!(ls.last().unwrap()["errors"], serde_json::json!([]));
    }
    let got = folded(&root);
    for (node, n) in &got {
        assert_eq!(*n, want.get(node).copied().unwrap_or(0), "{node}");
    }
    assert!(total_recalls > 100);
    println!(
        "8 agents: {total_recalls} recalls in {elapsed:.2?} ({:.0} recalls/s), worst recall {worst_us} us (with a re-indexer and a compactor running)",
        total_recalls as f64 / elapsed.as_secs_f64()
    );
    let doctor = bin()
        .arg("--dir")
        .arg(&root)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(d["healthy"], true, "{d}");
    let verify = bin()
        .arg("--dir")
        .arg(&root)
        .args(["events", "verify", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(v["healthy"], true, "{v}");
}

#[test]
fn agents_killed_at_random_points_lose_nothing_acknowledged() {
    let (_tmp, root) = setup();
    let mut agents: Vec<Child> = (0..8)
        .map(|i| spawn(&root, "agent", &format!("k{i}"), 400, 10 + i))
        .collect();
    let mut compactor = spawn(&root, "compactor", "compactor", 20, 200);
    // Kill half of them at staggered moments while they work.
    for (i, a) in agents.iter_mut().enumerate().filter(|(i, _)| i % 2 == 0) {
        std::thread::sleep(Duration::from_millis(150 + 70 * i as u64));
        a.kill().unwrap(); // SIGKILL
    }
    let mut acked: HashMap<String, u64> = HashMap::new();
    let mut killed = 0u64;
    for a in &mut agents {
        let ls = lines(a);
        let status = a.wait().unwrap();
        if !status.success() {
            killed += 1;
        } else {
            assert_eq!(ls.last().unwrap()["errors"], serde_json::json!([]));
        }
        recalls(&ls, &mut acked);
    }
    let _ = lines(&mut compactor);
    assert!(compactor.wait().unwrap().success());
    assert!(killed >= 1, "the kills landed");
    // A recall acknowledged on stdout was written before; one killed between writing its events
    // and printing its line may add one more per killed agent.
    let got = folded(&root);
    let mut extra = 0;
    for (node, n) in &got {
        let a = acked.get(node).copied().unwrap_or(0);
        assert!(*n >= a, "{node}: {n} folded < {a} acknowledged");
        extra += n - a;
    }
    assert!(
        extra <= killed,
        "{extra} unacknowledged recalls from {killed} killed agents"
    );
    // And a second fresh open agrees with the first.
    assert_eq!(folded(&root), got);
}

/// A long-lived server (no watcher) sees an update another process committed at its very next
/// recall, and every recall after it: the change count it reads instead of a store transaction
/// moves with the other process's commit.
#[test]
fn a_long_lived_server_sees_another_process_index_update_at_its_next_recall() {
    let (_tmp, root) = setup();
    let mut server = common::mcp::Server::start(&root);
    let recalled = |v: &Value| -> Vec<String> {
        let text = v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        let body: Value = serde_json::from_str(&text).unwrap();
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    let args = serde_json::json!({"name": "memory_recall",
                                  "arguments": {"query": "quokka migration", "depth": 0}});
    for id in 2..5 {
        let r = server.rpc(id, "tools/call", args.clone());
        assert_eq!(recalled(&r), Vec::<String>::new(), "nothing matches yet");
    }
    std::fs::write(
        root.join("memory").join("quokka.md"),
        "---\nname: Quokka migration\n---\nThe quokka migration plan.\n",
    )
    .unwrap();
    let status = bin()
        .arg("--dir")
        .arg(&root)
        .arg("index")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    for id in 5..8 {
        let r = server.rpc(id, "tools/call", args.clone());
        assert_eq!(recalled(&r), vec!["quokka".to_string()], "call {id}");
    }
    assert!(server.finish());
}

/// Regression: a command that needs the index's write lock while another process holds it
/// (a `serve` mid-index, a process stopped with Ctrl-Z) waited without a word, for ever if the
/// holder never ended. After a moment it says what it waits for, and goes on once the lock is
/// free.
#[test]
fn a_writer_waiting_for_the_write_lock_says_so_and_goes_on_when_it_is_free() {
    let (_tmp, root) = setup();
    let lock = hold_write_lock(&root);
    let body = root.join("body.txt");
    std::fs::write(
        &body,
        "A note written while another process held the lock.\n",
    )
    .expect("body");
    let mut child = bin()
        .arg("--dir")
        .arg(&root)
        .args(["write", "late-note", "--from"])
        .arg(&body)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let said = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the writer says it waits");
    assert!(
        said.contains("waiting for") && said.contains("write.lock"),
        "{said}"
    );
    assert!(
        !root.join("memory/late-note.md").exists(),
        "nothing written under another's lock"
    );
    drop(lock);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
    assert!(root.join("memory/late-note.md").exists());
}

/// The memory's write lock at `root`, held until the file is dropped (as another process's
/// index would hold it).
fn hold_write_lock(root: &std::path::Path) -> std::fs::File {
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(root.join("index/write.lock"))
        .expect("open the lock file");
    lock.lock().expect("hold the lock");
    lock
}

/// A `serve` started while this process holds the memory's write lock, its handshake done: the
/// server, a way to send it messages, its replies, and the held lock.
struct ServeBehindLock {
    child: Child,
    send: Box<dyn FnMut(Value)>,
    replies: std::sync::mpsc::Receiver<String>,
    lock: std::fs::File,
}

fn serve_behind_a_held_lock(root: &std::path::Path, args: &[&str]) -> ServeBehindLock {
    let lock = hold_write_lock(root);
    let mut child = bin()
        .arg("--dir")
        .arg(root)
        .arg("serve")
        .args(args)
        .env_remove("MNEMON_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, replies) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut send: Box<dyn FnMut(Value)> = Box::new(move |msg: Value| {
        use std::io::Write;
        writeln!(stdin, "{msg}").expect("write request");
        stdin.flush().expect("flush");
    });
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let init: Value = serde_json::from_str(
        &replies
            .recv_timeout(Duration::from_secs(60))
            .expect("initialize is answered while the lock is held"),
    )
    .expect("JSON");
    assert_eq!(init["result"]["serverInfo"]["name"], "mnemon", "{init}");
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    ServeBehindLock {
        child,
        send,
        replies,
        lock,
    }
}

/// `serve` answers the MCP handshake while another process holds the write lock (its first index
/// of the notes waits in the background: a client's start-up timeout would otherwise end the
/// session), and a tool call waits for that index, so it sees the notes as they are.
#[test]
fn serve_answers_initialize_behind_a_held_write_lock_and_tool_calls_wait_for_the_index() {
    let (_tmp, root) = setup();
    std::fs::write(
        root.join("memory/late-arrival.md"),
        "---\nname: Late arrival\n---\nThe quokka migration plan.\n",
    )
    .expect("note");
    let ServeBehindLock {
        mut child,
        mut send,
        replies,
        lock,
    } = serve_behind_a_held_lock(&root, &["--no-watch"]);
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "memory_recall", "arguments": {"query": "quokka migration"}}}),
    );
    // The recall waits for the index, which waits for the lock.
    assert!(
        replies.recv_timeout(Duration::from_millis(500)).is_err(),
        "no answer from an index the notes are not in yet"
    );
    drop(lock);
    let recall: Value = serde_json::from_str(
        &replies
            .recv_timeout(Duration::from_secs(60))
            .expect("the recall is answered once the lock is free"),
    )
    .expect("JSON");
    let text = recall["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    let answer: Value = serde_json::from_str(text).expect("recall JSON");
    assert_eq!(answer["results"][0]["id"], "late-arrival", "{answer}");
    drop(send); // closes the server's stdin: the session ends
    assert!(child.wait().expect("wait").success());
}

/// A stop signal ends `serve` while its first index waits (here for a held lock): a tool call
/// waiting for that index, the watcher holding a change for it, or a client gone while it runs
/// kept the server deaf to SIGTERM until the index ended.
#[test]
fn serve_stops_on_sigterm_while_its_first_index_waits() {
    for case in ["tool call", "watcher", "client gone"] {
        let (_tmp, root) = setup();
        std::fs::write(root.join("memory/late.md"), "late quokka\n").expect("note");
        let args: &[&str] = if case == "watcher" {
            &[]
        } else {
            &["--no-watch"]
        };
        let ServeBehindLock {
            mut child,
            mut send,
            replies: _replies,
            lock,
        } = serve_behind_a_held_lock(&root, args);
        match case {
            "tool call" => send(serde_json::json!({"jsonrpc": "2.0", "id": 2,
                "method": "tools/call",
                "params": {"name": "memory_recall", "arguments": {"query": "quokka"}}})),
            // Past the debounce window, so the watcher has a batch waiting for the index.
            "watcher" => {
                std::fs::write(root.join("memory/later.md"), "later walrus\n").expect("note");
                std::thread::sleep(Duration::from_millis(3500));
            }
            _ => drop(send),
        }
        std::thread::sleep(Duration::from_millis(300));
        common::send_signal(child.id(), "TERM");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{case}: serve did not stop on SIGTERM while the lock was held"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "{case}: {status}");
        drop(lock);
    }
}
