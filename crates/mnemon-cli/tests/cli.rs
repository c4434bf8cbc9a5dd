//! The command line: JSON shapes, exit codes, folder discovery, a store shared between processes.

mod common;

use common::{bin, fresh, siblings, write_note};
use serde_json::Value;
use std::path::Path;

/// A fresh memory holding one indexed note, `pool` ("Pool sizing", about the pgbouncer pool).
fn pool_memory() -> (tempfile::TempDir, mnemon::Memory) {
    let (tmp, m) = fresh();
    write_note(
        &m,
        "pool.md",
        "---\nname: Pool sizing\n---\nThe pgbouncer pool holds 20.\n",
    );
    m.index().expect("index");
    (tmp, m)
}

fn run(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = bin()
        .current_dir(dir)
        .env_remove("MNEMON_DIR")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let json = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        json,
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn init_index_show_doctor_json_shapes() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, v, _) = run(tmp.path(), &["init", "--json"]);
    assert_eq!(code, 0);
    assert!(tmp.path().join(".mnemon/memory").is_dir());
    assert!(tmp.path().join(".mnemon/events").is_dir());
    assert_eq!(v["index"]["notes"], 0);
    let mem = tmp.path().join(".mnemon/memory");
    std::fs::write(
        mem.join("a.md"),
        "---\nname: A\ntype: project\nrelated: [b]\n---\n[[c]]\n",
    )
    .unwrap();
    std::fs::write(mem.join("b.md"), "---\nname: B\n---\nb\n").unwrap();

    // Found by walking up from a subfolder.
    let sub = tmp.path().join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let (code, v, _) = run(&sub, &["index", "--json"]);
    assert_eq!(code, 0);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec![
            "notes",
            "edges",
            "changed",
            "removed",
            "errors",
            "elapsed_ms"
        ]
    );
    assert_eq!(v["notes"], 2);
    assert_eq!(v["edges"], 2);
    assert_eq!(v["changed"], serde_json::json!(["a", "b"]));
    assert_eq!(v["removed"], serde_json::json!([]));

    let (code, v, _) = run(&sub, &["index", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["changed"], serde_json::json!([]));

    let (code, v, _) = run(tmp.path(), &["show", "a", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["id"], "a");
    assert_eq!(v["name"], "A");
    assert_eq!(v["type"], "project");
    assert_eq!(
        v["edges_out"][0],
        serde_json::json!({"to": "b", "kind": "references", "provenance": "frontmatter", "confidence": 1.0, "dangling": false})
    );
    assert_eq!(v["edges_out"][1]["provenance"], "inline-link");
    let (_, v, _) = run(tmp.path(), &["show", "b", "--json"]);
    assert_eq!(v["edges_in"][0]["from"], "a");

    // c is dangling: doctor reports it and exits 1.
    let (code, v, _) = run(tmp.path(), &["doctor", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["healthy"], false);
    assert_eq!(v["dangling"][0]["to"], "c");
    std::fs::write(mem.join("c.md"), "c\n").unwrap();
    let (code, v, _) = run(tmp.path(), &["doctor", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["healthy"], true);
}

#[test]
fn errors_name_the_fix_and_set_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, v, stderr) = run(tmp.path(), &["index", "--json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("mnemon init"), "{stderr}");
    assert!(v["error"].as_str().unwrap().contains("no memory folder"));
    run(tmp.path(), &["init"]);
    let (code, _, stderr) = run(tmp.path(), &["show", "missing"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no note with id `missing`"));
    let (code, _, _) = run(tmp.path(), &["frobnicate"]);
    assert_eq!(code, 2);
    let out = bin().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Exit codes:"));
}

/// `mnemon index` over one note said "1 notes, 0 edges"; `mnemon core` "1 notes included".
#[test]
fn counts_of_one_are_singular() {
    let (tmp, _memory) = pool_memory();
    let root = tmp.path();
    let out = bin()
        .current_dir(root)
        .env_remove("MNEMON_DIR")
        .arg("index")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("1 note, 0 edges;"), "{stdout}");
    let (code, _, stderr) = run(root, &["importance", "pool", "9"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(root, &["core"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(" tokens; 1 note included, 0 left out"),
        "{stderr}"
    );
}

#[test]
fn dir_flag_and_env_override_discovery() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("elsewhere");
    let (code, _, _) = run(tmp.path(), &["init", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        dir.join("memory").is_dir(),
        "--dir names the memory folder itself"
    );
    std::fs::write(dir.join("memory/x.md"), "x").unwrap();
    let out = bin()
        .current_dir(tmp.path())
        .env("MNEMON_DIR", &dir)
        .args(["index", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["changed"], serde_json::json!(["x"]));
}

/// `MNEMON_SESSION=` (set and empty, as a shell profile or CI template leaves it) made every
/// command fail with "invalid session", without naming the variable: it counts as unset, as an
/// empty MNEMON_DIR does, and a session it gives that is not valid is named with it.
#[test]
fn an_empty_mnemon_session_is_unset_and_a_bad_one_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    let (code, _, _) = run(tmp.path(), &["init", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 0);
    std::fs::write(dir.join("memory/x.md"), "xylophone tuning").unwrap();
    let with_session = |session: &str, args: &[&str]| {
        bin()
            .current_dir(tmp.path())
            .env("MNEMON_DIR", &dir)
            .env("MNEMON_SESSION", session)
            .args(args)
            .output()
            .unwrap()
    };
    for args in [&["doctor"][..], &["recall", "xylophone"], &["core"]] {
        let out = with_session("", args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = with_session("bad id", &["recall", "xylophone"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MNEMON_SESSION"), "{err}");
    // A valid one names the session the events are recorded under.
    let out = with_session("ci-run-7", &["recall", "xylophone"]);
    assert_eq!(out.status.code(), Some(0));
    let out = with_session("", &["events", "verify", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.to_string().contains("ci-run-7"), "{v}");
}

#[test]
fn demo_runs_on_the_bundled_notes() {
    let out = bin().args(["demo", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["index"]["notes"].as_u64().unwrap() >= 20);
    assert_eq!(
        v["index"]["errors"],
        serde_json::json!([]),
        "the demo notes are clean"
    );
}

/// Regression: the human trail compared each edge with the whole line printed so far, so from the
/// second edge on, a forward edge printed as a backward one naming the node it came from
/// (`alpha -references-> beta <-references- beta`).
#[test]
fn trail_line_names_the_node_each_edge_reaches() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(run(tmp.path(), &["init", "--json"]).0, 0);
    let mem = tmp.path().join(".mnemon/memory");
    std::fs::write(
        mem.join("alpha.md"),
        "---\nname: Alpha\n---\nSee [[beta]].\n",
    )
    .unwrap();
    std::fs::write(
        mem.join("beta.md"),
        "---\nname: Beta\n---\nOn to [[delta]].\n",
    )
    .unwrap();
    std::fs::write(mem.join("delta.md"), "---\nname: Delta\n---\ndelta\n").unwrap();
    std::fs::write(
        mem.join("gamma.md"),
        "---\nname: Gamma\n---\nAlso [[beta]].\n",
    )
    .unwrap();
    let out = bin()
        .current_dir(tmp.path())
        .env_remove("MNEMON_DIR")
        .env("NO_COLOR", "1")
        .args(["recall", "--anchor", "alpha"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("alpha -references-> beta <-references- gamma"),
        "{stdout}"
    );
    assert!(stdout.contains("alpha -references-> beta\n"), "{stdout}");
    assert!(
        stdout.contains("alpha -references-> beta -references-> delta"),
        "{stdout}"
    );
}

/// A note's name or description with control characters (an escape sequence that clears the
/// screen or sets the window title) reached the terminal as it was from `recall`, `show` and
/// `index`: each is now shown as its escape; `--json` keeps the text exact (escaped by JSON).
#[test]
fn control_characters_in_a_note_never_reach_the_terminal_raw() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(run(tmp.path(), &["init", "--json"]).0, 0);
    let mem = tmp.path().join(".mnemon/memory");
    std::fs::write(
        mem.join("evil.md"),
        "---\nname: \"Evil \\e[2J\\e]0;title\\a note\"\ndescription: \"a \\r b\"\n---\nDeploy rollback.\r\n",
    )
    .unwrap();
    for args in [
        &["index"][..],
        &["recall", "deploy rollback"],
        &["show", "evil"],
    ] {
        let out = bin()
            .current_dir(tmp.path())
            .env_remove("MNEMON_DIR")
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {stdout}");
        assert!(
            !stdout.chars().any(|c| c.is_control() && c != '\n'),
            "{args:?}: {stdout:?}"
        );
        if args[0] != "index" {
            assert!(stdout.contains("Evil \\u{1b}[2J"), "{args:?}: {stdout}");
        }
    }
    let (code, v, _) = run(tmp.path(), &["recall", "deploy rollback", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(
        v["results"][0]["name"],
        "Evil \u{1b}[2J\u{1b}]0;title\u{7} note"
    );
}

/// A note problem names the file: a file name holding a line end split that line in two.
#[test]
fn a_line_end_in_a_file_name_does_not_split_the_line_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(run(tmp.path(), &["init", "--json"]).0, 0);
    let mem = tmp.path().join(".mnemon/memory");
    std::fs::write(
        mem.join("two\nlines.md"),
        "---\nname: [unclosed\n---\nbody\n",
    )
    .unwrap();
    for args in [&["index"][..], &["doctor"]] {
        let out = bin()
            .current_dir(tmp.path())
            .env_remove("MNEMON_DIR")
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find(|l| l.contains("two"))
            .unwrap_or_else(|| panic!("{args:?}: {stdout}"));
        assert!(line.contains("two\\u{a}lines.md"), "{args:?}: {line}");
        assert!(line.contains("rename the file"), "{args:?}: {line}");
    }
}

/// Regression: `mnemon index | head -1` panicked ("failed printing to stdout: Broken pipe")
/// once `head` had closed the pipe. A closed stdout now ends the command quietly, exit 0. And
/// `mnemon demo | head` left the demo's memory in the temp folder: the exit skipped its removal.
#[test]
fn closed_stdout_pipe_ends_quietly_without_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let temp_folder = tempfile::tempdir().unwrap();
    let mut child = bin()
        .current_dir(tmp.path())
        .env_remove("MNEMON_DIR")
        .env("TMPDIR", temp_folder.path())
        .args(["demo"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the demo prints its first line.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(temp_folder.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "the demo left {left:?}");
}

/// Output to a full disk exited 1, which the exit-code contract keeps for "found problems"
/// (`doctor`): a failure to write is 3, and says so.
#[cfg(target_os = "linux")]
#[test]
fn stdout_on_a_full_disk_is_a_failure_not_a_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, _) = run(tmp.path(), &["init"]);
    assert_eq!(code, 0);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = bin()
        .current_dir(tmp.path())
        .env_remove("MNEMON_DIR")
        .args(["doctor"])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("cannot write to stdout"), "{stderr}");
}

/// `mnemon eval --modes cold,replay,feedback --json` on the demo memory's own question set:
/// `modes.replay` has exactly the fields of `modes.cold`; replay is never below cold; the 25
/// questions with no answer get few results (about one each, never a note's neighbourhood).
#[test]
fn eval_replay_mode_json_and_the_demo_question_set() {
    let root = mnemon_testkit::fixtures::repo_root();
    let tmp = tempfile::tempdir().unwrap();
    let corpus = root.join("examples/demo-memory");
    let truth = root.join("eval/questions/demo.tune.yaml");
    let (code, v, err) = run(
        tmp.path(),
        &[
            "eval",
            "--corpus",
            corpus.to_str().unwrap(),
            "--truth",
            truth.to_str().unwrap(),
            "--modes",
            "cold,replay,feedback",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let keys = |m: &str| -> Vec<String> {
        v["modes"][m]
            .as_object()
            .unwrap_or_else(|| panic!("modes.{m} in {v}"))
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(keys("replay"), keys("cold"));
    assert!(keys("cold").contains(&"no_answer".to_string()));
    let f = |m: &str, k: &str| v["modes"][m][k].as_f64().unwrap();
    assert!(f("replay", "mrr") >= f("cold", "mrr"));
    assert!(f("feedback", "mrr") >= f("cold", "mrr"));
    assert!(f("cold", "mrr") >= 0.9, "{}", f("cold", "mrr"));
    let no = &v["modes"]["cold"]["no_answer"];
    assert_eq!(no["queries"], 25);
    assert!(no["avg_results"].as_f64().unwrap() <= 1.5, "{no}");
    assert!(no["empty_share"].as_f64().unwrap() >= 0.7, "{no}");
    assert!(v["modes"]["cold"]["by_kind"]["paraphrase"]["mrr"].is_number());
}

/// `mnemon eval --at`: the eval is scored as of the date given, so a note whose TTL runs out
/// between two dates ranks first at the one and below its twin at the other; a date that is no
/// date is refused with the forms that are.
#[test]
fn eval_at_scores_as_of_the_date_given() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let note = |id: &str, ttl: &str| {
        std::fs::write(
            corpus.join(format!("{id}.md")),
            format!(
                "---\nname: Pool sizing {id}\ntype: project\nupdated_at: 2026-01-01\n\
                 ttl_days: {ttl}\n---\nPool sizing for the checkout database.\n"
            ),
        )
        .unwrap();
    };
    note("expiring", "60");
    note("lasting", "null");
    let truth = tmp.path().join("truth.yaml");
    std::fs::write(
        &truth,
        "queries:\n  - id: q1\n    mode: query\n    query: \"pool sizing checkout\"\n    relevant:\n      \
         - { id: expiring, relevance: 3 }\n",
    )
    .unwrap();
    let mrr_at = |date: &str| {
        let (code, v, err) = run(
            tmp.path(),
            &[
                "eval",
                "--corpus",
                corpus.to_str().unwrap(),
                "--truth",
                truth.to_str().unwrap(),
                "--at",
                date,
                "--json",
            ],
        );
        assert_eq!(code, 0, "{err}");
        v["modes"]["cold"]["mrr"].as_f64().unwrap()
    };
    // The twins tie but for the TTL: live on 2026-02-01, long expired a year later.
    let (live, expired) = (mrr_at("2026-02-01"), mrr_at("2027-02-01"));
    assert!(live > expired, "{live} vs {expired}");
    assert_eq!(expired, 0.5);
    let (code, _, err) = run(
        tmp.path(),
        &[
            "eval",
            "--corpus",
            ".",
            "--truth",
            "t.yaml",
            "--at",
            "2026-02-30",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("YYYY-MM-DD"), "{err}");
}

/// `mnemon eval --teach`: feedback given for one question set's questions (`loopal-58.tune`) does
/// not lower MRR on another set over the same notes (`loopal-58.holdout`), and `taught` names
/// notes recall missed. Regression: feedback on questions sharing a word or two with a later
/// one decided its close calls (holdout MRR 1.000 -> 0.983).
#[test]
fn eval_teach_feedback_on_other_questions_costs_nothing() {
    let root = mnemon_testkit::fixtures::repo_root();
    let tmp = tempfile::tempdir().unwrap();
    let corpus = common::loopal_fixtures();
    let questions = root.join("eval/questions");
    let eval = |truth: &str, teach: &str| {
        let truth = questions.join(truth);
        let teach = questions.join(teach);
        run(
            tmp.path(),
            &[
                "eval",
                "--corpus",
                corpus.to_str().unwrap(),
                "--truth",
                truth.to_str().unwrap(),
                "--teach",
                teach.to_str().unwrap(),
                "--modes",
                "cold,feedback,taught",
                "--json",
            ],
        )
    };
    let (code, v, err) = eval("loopal-58.holdout.yaml", "loopal-58.tune.yaml");
    assert_eq!(code, 0, "{err}");
    let f = |v: &Value, m: &str, k: &str| v["modes"][m][k].as_f64().unwrap();
    for mode in ["feedback", "taught"] {
        assert!(
            f(&v, mode, "mrr") >= f(&v, "cold", "mrr"),
            "{mode}: {} -> {}",
            f(&v, "cold", "mrr"),
            f(&v, mode, "mrr")
        );
    }
    // Taught on its own questions, every answer recall missed is found.
    let (code, own, err) = eval("loopal-58.holdout.yaml", "loopal-58.holdout.yaml");
    assert_eq!(code, 0, "{err}");
    assert!(f(&own, "taught", "r10") > f(&own, "cold", "r10"), "{own}");
    assert!(
        f(&own, "taught", "r10") >= f(&own, "feedback", "r10"),
        "{own}"
    );
    assert_eq!(f(&own, "taught", "mrr"), 1.0, "{own}");

    let (code, _, err) = eval("loopal-58.holdout.yaml", "no-such-set.yaml");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-such-set.yaml"), "{err}");
}

/// Keys, in order, of a JSON object, each with its JSON type.
fn keys_and_types(v: &Value) -> Vec<(String, &'static str)> {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .iter()
        .map(|(k, v)| (k.clone(), kind(v)))
        .collect()
}

/// The JSON of a recall hit is a contract of `mnemon recall --json` and of MCP `memory_recall`
/// (scripts and agents parse it); both are rendered by the library (`Recall::json`). Pins the
/// keys, their order and their types, as each front end prints them.
#[test]
fn recall_hit_json_shapes_of_the_cli_and_the_mcp_tool() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(run(tmp.path(), &["init", "--json"]).0, 0);
    let root = tmp.path().join(".mnemon");
    std::fs::write(
        root.join("memory/alpha.md"),
        "---\nname: Alpha\n---\nAlpha links [[beta]].\n",
    )
    .unwrap();
    std::fs::write(
        root.join("memory/beta.md"),
        "---\nname: Beta\ndescription: the second\n---\nbeta body\n",
    )
    .unwrap();
    let typed = |list: &[(&str, &'static str)]| -> Vec<(String, &'static str)> {
        list.iter().map(|(k, t)| (k.to_string(), *t)).collect()
    };
    let hit_keys = |with: &[(&str, &'static str)], extra: &[(&str, &'static str)]| {
        let mut keys = typed(&[
            ("id", "string"),
            ("name", "string"),
            ("description", "null"),
        ]);
        keys.extend(typed(with));
        keys.extend(typed(&[
            ("score", "number"),
            ("source", "string"),
            ("trail", "array"),
        ]));
        keys.extend(typed(extra));
        keys
    };

    let (code, v, err) = run(tmp.path(), &["recall", "--anchor", "alpha", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        keys_and_types(&v),
        typed(&[
            ("qid", "string"),
            ("results", "array"),
            ("latency_us", "number")
        ])
    );
    assert_eq!(v["results"][0]["id"], "alpha");
    assert_eq!(
        keys_and_types(&v["results"][0]),
        hit_keys(&[("type", "string")], &[])
    );

    let mut server = common::mcp::Server::start(&root);
    let reply = server.rpc(
        2,
        "tools/call",
        serde_json::json!({"name": "memory_recall", "arguments": {"anchors": ["alpha"]}}),
    );
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply}"));
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        keys_and_types(&v),
        typed(&[
            ("qid", "string"),
            ("latency_us", "number"),
            ("results", "array")
        ])
    );
    assert_eq!(v["results"][0]["id"], "alpha");
    assert_eq!(
        keys_and_types(&v["results"][0]),
        hit_keys(&[], &[("excerpt", "string")])
    );
    assert!(server.finish());
}

/// The store is shared between processes: another `mnemon index` commits while this process
/// holds the memory open, and this one sees the commit at its next read.
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

#[test]
fn cli_importance_stats_and_events() {
    let (tmp, root) = siblings();
    let run = |args: &[&str]| {
        let out = bin()
            .current_dir(tmp.path())
            .env_remove("MNEMON_DIR")
            .arg("--dir")
            .arg(&root)
            .args(args)
            .output()
            .unwrap();
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        (
            out.status.code().unwrap_or(-1),
            v,
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, _, _) = run(&["recall", "--anchor", "a", "--depth", "0", "--json"]);
    assert_eq!(code, 0);
    let (code, v, _) = run(&[
        "importance",
        "a",
        "7",
        "--tag",
        "ops",
        "--note",
        "why",
        "--json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["importance"], 7);
    let (code, v, _) = run(&["stats", "a", "--json"]);
    assert_eq!(code, 0);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec![
            "id",
            "recall_count",
            "last_recalled_at",
            "importance",
            "importance_ts",
            "used_count",
            "untied_used",
            "wrong_count",
            "last_used_at"
        ]
    );
    assert_eq!(v["recall_count"], 1);
    assert_eq!(v["used_count"], 1, "a fetch by id is a use");
    assert_eq!(v["untied_used"], 1);
    assert_eq!(v["importance"], 7);
    let (code, _, err) = run(&["importance", "a", "0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("importance 0 is out of range: use an integer from 1 to 10"),
        "{err}"
    );
    // Not a number, or one no integer holds: said with what to give, as a range is.
    for (given, said) in [
        ("abc", "not a whole number: use an integer from 1 to 10"),
        ("2.5", "not a whole number: use an integer from 1 to 10"),
        (
            "99999999999999999999",
            "out of range: use an integer from 1 to 10",
        ),
    ] {
        let (code, _, err) = run(&["importance", "a", "--", given]);
        assert_eq!(code, 2, "{given}");
        assert!(err.contains(said), "{given}: {err}");
    }
    let (code, _, err) = run(&["recall", "x", "--limit", "99999999999999999999999"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("out of range: use an integer from 1 to 200"),
        "{err}"
    );
    let (code, v, _) = run(&["events", "dump", "--json"]);
    assert_eq!(code, 0);
    let types: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        vec!["query", "feedback", "recall_hit", "importance_tag"]
    );
    let (code, v, _) = run(&["events", "verify", "--json"]);
    assert_eq!(code, 0, "{v}");
    // Damage one segment: verify reports it and exits 1.
    let seg = std::fs::read_dir(root.join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    let mut b = std::fs::read(&seg).unwrap();
    assert_eq!(b[8..10], [2, 0], "the binary writes format version 2");
    let n = b.len();
    b[n - 3] ^= 0xff;
    std::fs::write(&seg, b).unwrap();
    std::fs::write(root.join("events/notes.txt"), "stray").unwrap();
    let (code, v, _) = run(&["events", "verify", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["unknown_files"], serde_json::json!(["notes.txt"]));
    let damaged: Vec<usize> = v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["damaged"].as_array().unwrap().len())
        .collect();
    assert_eq!(
        damaged.iter().sum::<usize>(),
        1,
        "one segment, one damaged range: {v}"
    );
}

/// Supersession and contradictions reach every front end: `memory_recall` and `recall --json`
/// hits carry `superseded_by` and `contradicts`, `memory_show` names successors, predecessors and
/// contradictions, and the human output says "superseded by".
#[test]
fn superseded_and_contradicting_notes_say_so_in_mcp_and_cli_output() {
    let (tmp, memory) = fresh();
    write_note(
        &memory,
        "limits-v1.md",
        "---\nname: Limits v1\n---\nRequest limits: quota of ten per minute.\n",
    );
    write_note(
        &memory,
        "limits-v2.md",
        "---\nname: Limits v2\nsupersedes: [limits-v1]\ncontradicts: [limits-note]\n---\nRequest limits: quota of fifty per minute.\n",
    );
    write_note(
        &memory,
        "limits-note.md",
        "---\nname: Limits note\n---\nRequest limits: quota is unlimited for staff.\n",
    );
    memory.index().unwrap();
    let root = tmp.path().join(".mnemon");
    let mut server = common::mcp::Server::start(&root);
    let reply = server.rpc(
        2,
        "tools/call",
        serde_json::json!({"name": "memory_recall", "arguments": {"query": "request limits quota"}}),
    );
    let v: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let hit = |id: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not in {v}"))
    };
    assert_eq!(
        hit("limits-v1")["superseded_by"],
        serde_json::json!(["limits-v2"])
    );
    assert_eq!(
        hit("limits-v2")["contradicts"],
        serde_json::json!(["limits-note"])
    );
    assert_eq!(
        hit("limits-note")["contradicts"],
        serde_json::json!(["limits-v2"])
    );
    assert!(
        hit("limits-v2").get("superseded_by").is_none(),
        "only when not empty"
    );
    let reply = server.rpc(
        3,
        "tools/call",
        serde_json::json!({"name": "memory_show", "arguments": {"node": "limits-v2"}}),
    );
    let shown: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(shown["supersedes"], serde_json::json!(["limits-v1"]));
    assert_eq!(shown["superseded_by"], serde_json::json!([]));
    assert_eq!(shown["contradicts"], serde_json::json!(["limits-note"]));
    assert!(server.finish());

    let (code, v, _) = run(tmp.path(), &["recall", "request limits quota", "--json"]);
    assert_eq!(code, 0);
    let ids: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    let (new, old) = (
        ids.iter().position(|i| *i == "limits-v2").unwrap(),
        ids.iter().position(|i| *i == "limits-v1").unwrap(),
    );
    assert!(new < old, "{ids:?}");
    let out = bin()
        .current_dir(tmp.path())
        .env_remove("MNEMON_DIR")
        .args(["recall", "request limits quota"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("superseded by limits-v2"), "{text}");
    assert!(text.contains("contradicts limits-note"), "{text}");
}

/// `mnemon` with `args` in `dir`, `stdin` on its standard input.
fn run_with_stdin(dir: &Path, args: &[&str], stdin: &str) -> (i32, Value, String) {
    let out = common::output_with_stdin(
        bin().current_dir(dir).env_remove("MNEMON_DIR").args(args),
        stdin.as_bytes(),
    )
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn write_from_stdin_and_from_a_file_with_the_json_shape_and_refusal_exit_codes() {
    let (tmp, _memory) = fresh();
    let root = tmp.path();
    let (code, v, err) = run_with_stdin(
        root,
        &[
            "write",
            "ops/pool",
            "--name",
            "Pool sizing",
            "--type",
            "project",
            "--tag",
            "postgres",
            "--pin",
            "--json",
        ],
        "The connection pool times out at 20 connections at month end.\n",
    );
    assert_eq!(code, 0, "{err}");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec![
            "id",
            "path",
            "written",
            "created",
            "sha256",
            "refused",
            "message",
            "near_duplicates",
            "likely_predecessors"
        ]
    );
    assert_eq!(v["id"], "ops/pool");
    assert_eq!(v["path"], "memory/ops/pool.md");
    assert_eq!(
        (v["written"].clone(), v["created"].clone()),
        (true.into(), true.into())
    );
    assert_eq!(v["refused"], Value::Null);
    assert_eq!(v["near_duplicates"], serde_json::json!([]));
    let file = root.join(".mnemon/memory/ops/pool.md");
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(v["sha256"], mnemon::sha256_hex(&bytes));
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.starts_with("---\nname: Pool sizing\ntype: project\n"),
        "{text}"
    );
    assert!(text.ends_with("---\nThe connection pool times out at 20 connections at month end.\n"));

    // Recallable from another process at once, and `show` gives the sha256 to replace it with.
    let (code, v, _) = run(root, &["recall", "connection pool month end", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["results"][0]["id"], "ops/pool");
    let (_, shown, _) = run(root, &["show", "ops/pool", "--json"]);
    let sha = shown["sha256"].as_str().unwrap().to_string();
    assert_eq!(sha, mnemon::sha256_hex(&bytes));

    // Exists without --expected-sha256: exit 1, the reason and the fix on stderr, file untouched.
    let body = root.join("body.md");
    std::fs::write(
        &body,
        "The pool times out at 50 connections since the upgrade.\n",
    )
    .unwrap();
    let from = body.to_str().unwrap();
    let (code, v, err) = run(root, &["write", "ops/pool", "--from", from]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(v, Value::Null, "human output: nothing on stdout");
    assert!(
        err.contains("not written")
            && err.contains(&format!("pass --expected-sha256 {sha} to replace it")),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // The hint fits the refusal: a note that is gone is created again without the hash (it
    // used to say `mnemon show` of the note that does not exist).
    let gone = "1".repeat(64);
    let (code, _, err) = run(
        root,
        &[
            "write",
            "ops/gone",
            "--from",
            from,
            "--expected-sha256",
            &gone,
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("leave out --expected-sha256"), "{err}");
    assert!(!err.contains("mnemon show ops/gone"), "{err}");
    // `--from` that is no readable file is a bad argument (exit 2), named as such.
    for bad in [root.to_str().unwrap(), "/nonexistent/body.md"] {
        let (code, _, err) = run(root, &["write", "x", "--from", bad]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("invalid --from"), "{err}");
    }
    // Stale: exit 1, the JSON outcome with the current sha256.
    let stale = "0".repeat(64);
    let (code, v, _) = run(
        root,
        &[
            "write",
            "ops/pool",
            "--from",
            from,
            "--expected-sha256",
            &stale,
            "--json",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(v["refused"], "stale");
    assert_eq!(v["written"], false);
    assert_eq!(v["sha256"], sha.as_str());
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // With the sha256 `show` printed: replaced.
    let (code, out, err) = {
        let o = bin()
            .current_dir(root)
            .env_remove("MNEMON_DIR")
            .args([
                "write",
                "ops/pool",
                "--from",
                from,
                "--expected-sha256",
                &sha,
            ])
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    assert_eq!(code, Some(0), "{err}");
    let now = std::fs::read(&file).unwrap();
    assert!(
        out.starts_with(&format!(
            "wrote memory/ops/pool.md (sha256 {})",
            mnemon::sha256_hex(&now)
        )),
        "{out}"
    );
    assert!(String::from_utf8(now).unwrap().contains("50 connections"));

    // Bad ids and bodies: exit 2 with the fix; nothing written.
    let (code, _, err) = run_with_stdin(root, &["write", "../escape"], "x");
    assert_eq!(code, 2);
    assert!(err.contains("ids cannot leave memory/"), "{err}");
    let (code, _, err) = run_with_stdin(root, &["write", "empty"], "  \n");
    assert_eq!(code, 2);
    assert!(err.contains("the body is empty"), "{err}");
    let (code, _, err) = run_with_stdin(root, &["write", "fm"], "---\nname: x\n---\nbody\n");
    assert_eq!(code, 2);
    assert!(err.contains("pass name, description"), "{err}");
    let (code, _, _) = run_with_stdin(root, &["write", "t", "--type", "novel"], "x");
    assert_eq!(code, 2);
    assert!(!root.join("escape.md").exists() && !root.join(".mnemon/escape.md").exists());
    let names: Vec<_> = std::fs::read_dir(root.join(".mnemon/memory"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("ops")]);
}

#[test]
fn mcp_memory_write_creates_and_updates_with_the_sha256_memory_show_returns() {
    let (tmp, _memory) = fresh();
    let root = tmp.path().join(".mnemon");
    let mut server = common::mcp::Server::start(&root);
    let call = |server: &mut common::mcp::Server, id: u64, name: &str, args: Value| {
        let reply = server.rpc(
            id,
            "tools/call",
            serde_json::json!({"name": name, "arguments": args}),
        );
        let result = reply["result"].clone();
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let is_error = result["isError"] == true;
        (
            is_error,
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
            text,
        )
    };
    let (err, v, text) = call(
        &mut server,
        2,
        "memory_write",
        serde_json::json!({"id": "prefs/editor", "body": "The user prefers tabs over spaces in Go code.",
                           "name": "Editor preferences", "type": "user", "tags": ["style"]}),
    );
    assert!(!err, "{text}");
    assert_eq!(v["written"], true);
    assert_eq!(v["created"], true);
    assert_eq!(v["path"], "memory/prefs/editor.md");
    let written_sha = v["sha256"].as_str().unwrap().to_string();

    // Recallable through the same server at once.
    let (_, found, _) = call(
        &mut server,
        3,
        "memory_recall",
        serde_json::json!({"query": "tabs or spaces"}),
    );
    assert_eq!(found["results"][0]["id"], "prefs/editor");

    // memory_show returns the sha256 memory_write expects.
    let (_, shown, _) = call(
        &mut server,
        4,
        "memory_show",
        serde_json::json!({"node": "prefs/editor"}),
    );
    assert_eq!(shown["sha256"], written_sha.as_str());
    assert_eq!(shown["type"], "user");

    // Without it: a refusal is a normal result (not a tool error) saying what to do.
    let update = |sha: Option<&str>| {
        let mut a = serde_json::json!({"id": "prefs/editor", "type": "user",
            "body": "The user prefers tabs in Go and two spaces in YAML."});
        if let Some(sha) = sha {
            a["expected_sha256"] = sha.into();
        }
        a
    };
    let (err, v, text) = call(&mut server, 5, "memory_write", update(None));
    assert!(!err, "{text}");
    assert_eq!(v["written"], false);
    assert_eq!(v["refused"], "exists");
    assert_eq!(v["sha256"], written_sha.as_str());
    assert!(
        v["message"].as_str().unwrap().contains("memory_show"),
        "{v}"
    );
    let (err, v, _) = call(&mut server, 6, "memory_write", update(Some(&written_sha)));
    assert!(!err);
    assert_eq!(
        (v["written"].clone(), v["created"].clone()),
        (true.into(), false.into())
    );
    let (_, shown, _) = call(
        &mut server,
        7,
        "memory_show",
        serde_json::json!({"node": "prefs/editor"}),
    );
    assert_eq!(shown["sha256"], v["sha256"]);
    assert_ne!(shown["sha256"], written_sha.as_str());
    // The old hash is now stale.
    let (_, v, _) = call(&mut server, 8, "memory_write", update(Some(&written_sha)));
    assert_eq!(v["refused"], "stale");

    // Bad arguments are tool errors naming the fix.
    for (i, (args, says)) in [
        (
            serde_json::json!({"id": "../x", "body": "b"}),
            "ids cannot leave memory/",
        ),
        (
            serde_json::json!({"id": "x", "body": ""}),
            "the body is empty",
        ),
        (
            serde_json::json!({"id": "x", "body": "b", "type": "novel"}),
            "use project, feedback",
        ),
        (
            serde_json::json!({"id": "x", "body": "b", "on_duplicate": "maybe"}),
            "use refuse",
        ),
        (
            serde_json::json!({"id": "x", "body": "b".repeat(mnemon::args::MAX_NOTE_BYTES + 1)}),
            "split it into smaller notes",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let (err, _, text) = call(&mut server, 20 + i as u64, "memory_write", args);
        assert!(err && text.contains(says), "{text}");
    }
    assert!(server.finish());
    assert!(!root.join("x.md").exists() && !root.join("memory/x.md").exists());
}

/// `doctor` lists near-duplicate notes in both outputs, with the fix, and still exits 0 for them
/// alone (they are not errors).
#[test]
fn doctor_lists_near_duplicates_with_the_fix() {
    let (tmp, memory) = fresh();
    let body = "The release train leaves every second Tuesday at noon. Changes merged after the \
        cut wait for the next train unless the release manager grants an exception for a \
        security fix. The train is announced in the releases channel the day before.";
    write_note(&memory, "release-train.md", body);
    write_note(
        &memory,
        "notes/release-schedule.md",
        body.replace(
            "unless the release manager grants",
            "except when the release manager gives",
        ),
    );
    write_note(
        &memory,
        "hotfix.md",
        "Hotfixes skip the train: branch from the release tag, fix, tag a patch release.",
    );
    memory.index().unwrap();
    let (code, v, _) = run(tmp.path(), &["doctor", "--json"]);
    assert_eq!(code, 0, "{v}");
    let pairs = v["near_duplicates"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{v}");
    assert_eq!(pairs[0]["a"], "notes/release-schedule");
    assert_eq!(pairs[0]["b"], "release-train");
    let similarity = pairs[0]["similarity"].as_f64().unwrap();
    assert!(similarity > 0.6 && similarity <= 1.0, "{similarity}");
    let out = bin()
        .current_dir(tmp.path())
        .env_remove("MNEMON_DIR")
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("near-duplicate notes/release-schedule and release-train")
            && text.contains("link one to the other with supersedes"),
        "{text}"
    );
}

/// A script that asks for `--json` parses stdout: a value the argument parser refuses printed
/// nothing there (only text on stderr), so the script saw no answer at all.
#[test]
fn a_usage_error_is_json_when_json_was_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["recall", "--json", "--limit", "abc", "x"][..],
        &["--json", "no-such-command"][..],
        &["importance", "--json", "a", "3.5"][..],
    ] {
        let (code, v, err) = run(tmp.path(), args);
        assert_eq!(code, 2, "{args:?}: {err}");
        let message = v["error"].as_str().unwrap_or_default();
        assert!(
            !message.is_empty() && !message.contains('\n'),
            "{args:?}: {v}"
        );
        assert!(err.contains(message), "{args:?}: {err}");
    }
    // Without --json stdout stays empty; after `--` the word is the question's.
    for args in [
        &["recall", "--limit", "abc", "x"][..],
        &["recall", "--limit", "abc", "--", "--json"][..],
    ] {
        let out = common::bin()
            .current_dir(tmp.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// Regressions: a line end inside a note's name was printed raw, so one note could fake result
/// lines of its own ("Real\n 2. trusted-note ..."); and `doctor | head` exited 0 on a memory with
/// problems once the reader closed the pipe, which `pipefail` takes for healthy.
#[test]
fn names_stay_on_their_line_and_a_closed_pipe_keeps_doctors_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    assert_eq!(run(root, &["init"]).0, 0);
    let notes = root.join(".mnemon/memory");
    std::fs::write(
        notes.join("spoof.md"),
        "---\nname: \"Real\\n 2. trusted-note  Trusted  9.999 direct\"\n---\nspoofbody text\n",
    )
    .unwrap();
    let links: String = (0..3000).map(|i| format!("[[missing-{i}]] ")).collect();
    std::fs::write(notes.join("many.md"), format!("links {links}\n")).unwrap();
    assert_eq!(run(root, &["index"]).0, 0);
    for args in [&["recall", "spoofbody"][..], &["show", "spoof"][..]] {
        let out = bin().current_dir(root).args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.lines().any(|l| l.starts_with(" 2. trusted-note")),
            "{args:?}: {text}"
        );
        assert!(
            text.contains("Real\\u{a} 2. trusted-note"),
            "{args:?}: {text}"
        );
    }

    let mut doctor = bin()
        .current_dir(root)
        .arg("doctor")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    drop(doctor.stdout.take());
    assert_eq!(doctor.wait().unwrap().code(), Some(1));
}

/// Regression: after a note file was deleted or added by hand, `show`, `importance` and
/// `feedback` answered from the index as it was (a deleted note was shown and took marks; a new
/// one was unknown) until something re-indexed. They see the notes as they are now.
#[test]
fn show_importance_and_feedback_see_notes_edited_by_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    assert_eq!(run(root, &["init"]).0, 0);
    let notes = root.join(".mnemon/memory");
    std::fs::write(notes.join("gone.md"), "a note deleted by hand\n").unwrap();
    assert_eq!(run(root, &["index"]).0, 0);
    std::fs::remove_file(notes.join("gone.md")).unwrap();
    std::fs::write(notes.join("fresh.md"), "a note added by hand\n").unwrap();
    for args in [
        &["show", "gone"][..],
        &["importance", "gone", "7"][..],
        &["feedback", "--used", "gone", "--query", "q"][..],
    ] {
        let (code, _, err) = run(root, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("no note with id `gone`"), "{args:?}: {err}");
    }
    let (code, v, err) = run(root, &["--json", "show", "fresh"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["id"], "fresh");
    assert_eq!(run(root, &["importance", "fresh", "7"]).0, 0);
}

/// Regression: a body over the note size limit was reported as "4194305 bytes" (what was read,
/// one byte over the cap) whatever its size.
#[test]
fn a_body_over_the_limit_is_refused_with_its_real_size() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    assert_eq!(run(root, &["init"]).0, 0);
    let body = root.join("body.txt");
    std::fs::write(&body, "x".repeat(5_000_001)).unwrap();
    let (code, _, err) = run(root, &["write", "big", "--from", body.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is 5000001 bytes, over the limit of 4194304"),
        "{err}"
    );
    let (code, _, err) = run_with_stdin(root, &["write", "big"], &"y".repeat(5_000_001));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("more than 4194304 bytes"), "{err}");
    assert!(!root.join(".mnemon/memory/big.md").exists());
}

/// Regression: `serve` stopped by SIGTERM with its stdout not a pipe (`serve > log`) printed its
/// summary and then went on running until its client closed stdin: dropping the runtime waited
/// for the blocking read of stdin.
#[cfg(unix)]
#[test]
fn serve_stopped_by_sigterm_exits_with_stdin_open_and_stdout_a_file() {
    let (tmp, _memory) = fresh();
    let out_path = tmp.path().join("serve.out");
    let out_file = std::fs::File::create(&out_path).expect("out");
    let mut serve = bin()
        .arg("--dir")
        .arg(tmp.path().join(".mnemon"))
        .args(["serve", "--no-watch"])
        .env_remove("MNEMON_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(out_file)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut stdin = serve.stdin.take().expect("stdin");
    // A reply to `ping` shows the server running, its signal handlers installed.
    std::io::Write::write_all(
        &mut stdin,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
    )
    .expect("ping");
    let waited = std::time::Instant::now();
    while !std::fs::read_to_string(&out_path).is_ok_and(|o| o.contains("\"id\":1")) {
        assert!(waited.elapsed().as_secs() < 60, "no reply to ping");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    common::send_signal(serve.id(), "TERM");
    let waited = std::time::Instant::now();
    let status = loop {
        if let Some(status) = serve.try_wait().expect("wait") {
            break Some(status);
        }
        if waited.elapsed().as_secs() >= 20 {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    drop(stdin);
    let _ = serve.kill();
    let _ = serve.wait();
    let status = status.expect("serve still ran 20 s after SIGTERM, its stdin open");
    assert!(status.success(), "{status:?}");
}

/// `kill` (SIGTERM) is how service managers stop a server: it used to end `serve` and `watch`
/// with exit 143 and no summary.
#[test]
fn serve_and_watch_stopped_by_sigterm_exit_0_with_their_summary() {
    use std::io::{BufRead, BufReader, Read};
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "# Alpha\n\nthe alpha note\n");
    let root = tmp.path().join(".mnemon");

    let mut server = common::mcp::Server::start_logged(&root);
    let reply = server.rpc(
        2,
        "tools/call",
        serde_json::json!({"name": "memory_recall", "arguments": {"query": "alpha"}}),
    );
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("\"a\""))
    );
    let (ok, log) = server.terminate_with_log();
    assert!(ok, "serve exits 0 on SIGTERM; log: {log}");
    assert!(log.contains("serve stopping on SIGTERM"), "{log}");
    assert!(log.contains("serve ended:"), "{log}");

    // With `--for` too: a signal before its time stops the watch the same way (it killed the
    // process at exit 143, without its summary).
    for args in [
        &["watch", "--json"][..],
        &["watch", "--json", "--for", "100"][..],
    ] {
        let mut watch = bin()
            .arg("--dir")
            .arg(&root)
            .args(args)
            .env_remove("MNEMON_DIR")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn watch");
        let mut stderr = BufReader::new(watch.stderr.take().expect("stderr"));
        let mut line = String::new();
        while !line.contains("Ctrl-C or SIGTERM stops") {
            line.clear();
            assert!(
                stderr.read_line(&mut line).expect("read") > 0,
                "{args:?} ended early"
            );
        }
        common::send_signal(watch.id(), "TERM");
        let mut out = String::new();
        watch
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out)
            .expect("read report");
        let status = watch.wait().expect("wait");
        assert!(status.success(), "{args:?} exits 0 on SIGTERM: {status:?}");
        let report: Value = serde_json::from_str(&out).expect("the report is JSON");
        assert_eq!(report["errors"], 0, "{report}");
        assert!(report["reindexes"].is_u64(), "{report}");
    }
}

/// `eprintln!` panicked when stderr was a closed pipe (`mnemon core 2>&1 | head -1`): exit 101
/// after the answer was printed. A line to a closed stderr is lost; the exit code is the work's.
#[test]
fn a_closed_stderr_does_not_change_the_exit_code() {
    let (tmp, memory) = fresh();
    write_note(
        &memory,
        "a.md",
        "---\nname: Alpha\npinned: true\n---\nthe alpha note\n",
    );
    memory.index().expect("index");
    let root = tmp.path().join(".mnemon");
    // `core` prints its answer on stdout and its summary on stderr; `write` with an empty body
    // says why on stderr and exits 2.
    for (args, code) in [(vec!["core"], 0), (vec!["write", "a"], 2)] {
        let mut child = bin()
            .arg("--dir")
            .arg(&root)
            .args(&args)
            .env_remove("MNEMON_DIR")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        drop(child.stderr.take()); // the reader is gone before anything is written
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(code), "{args:?}");
    }
}

/// `mnemon compact` opened the memory first, and the open compacted what was due: the command
/// then reported "0 compressed" (`"compressed": []`) for the work it had just caused.
#[test]
fn compact_reports_the_segments_it_compressed() {
    let (tmp, memory) = fresh();
    write_note(&memory, "a.md", "---\nname: Alpha\n---\nthe alpha note\n");
    memory.index().expect("index");
    drop(memory);
    let root = tmp.path().join(".mnemon");
    for q in ["alpha", "alpha note"] {
        let out = bin()
            .arg("--dir")
            .arg(&root)
            .args(["recall", q])
            .env_remove("MNEMON_DIR")
            .output()
            .expect("run");
        assert!(out.status.success());
    }
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(200 * 86_400);
    let mut segments = 0;
    for e in std::fs::read_dir(root.join("events")).expect("ls") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "seg") {
            let f = std::fs::File::options().write(true).open(&p).expect("open");
            f.set_modified(old).expect("set mtime");
            segments += 1;
        }
    }
    assert_eq!(segments, 2);
    let out = bin()
        .arg("--dir")
        .arg(&root)
        .args(["compact", "--json"])
        .env_remove("MNEMON_DIR")
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["compressed"].as_array().map(Vec::len), Some(2), "{v}");
}

/// Regression: `gen --out DIR` wrote over the notes and `queries.yaml` already in DIR and left
/// the notes of an earlier run beside the new ones ("7 notes", 12 files), a real memory folder
/// included. A folder that is not empty is refused (exit 2) and keeps its files.
#[test]
fn gen_refuses_a_folder_that_is_not_empty_and_keeps_its_files() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("corpus");
    let gen_into = |notes: &str, seed: &str| {
        bin()
            .args(["gen", "--notes", notes, "--seed", seed, "--out"])
            .arg(&out)
            .output()
            .expect("gen")
    };
    let first = gen_into("5", "7");
    assert!(first.status.success(), "{first:?}");
    let count = || walk_md(&out.join("memory"));
    assert_eq!(count(), 5);
    let queries = std::fs::read(out.join("queries.yaml")).expect("queries");
    let second = gen_into("7", "1");
    assert_eq!(second.status.code(), Some(2), "{second:?}");
    let log = String::from_utf8_lossy(&second.stderr);
    assert!(log.contains("is not empty"), "{log}");
    assert_eq!(count(), 5, "no note added");
    assert_eq!(
        std::fs::read(out.join("queries.yaml")).expect("queries"),
        queries
    );
}

fn walk_md(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("ls").flatten() {
        let p = e.path();
        if p.is_dir() {
            n += walk_md(&p);
        } else if p.extension().is_some_and(|x| x == "md") {
            n += 1;
        }
    }
    n
}

/// Regression: `eval` scored relevant ids that are no note of the corpus as misses without a
/// word (a wrong --corpus gave all zeros), and an anchor that is no note failed with advice to
/// run `mnemon index`, which does not apply to the eval's own memory.
#[test]
fn eval_names_ground_truth_ids_that_are_not_notes_of_the_corpus() {
    let tmp = tempfile::tempdir().expect("tmp");
    let corpus = tmp.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("mkdir");
    std::fs::write(
        corpus.join("pool.md"),
        "---\nname: Pool sizing\n---\nThe pgbouncer pool holds 20 connections.\n",
    )
    .expect("note");
    let truth = tmp.path().join("truth.yaml");
    let eval = |text: &str| {
        std::fs::write(&truth, text).expect("truth");
        bin()
            .args(["eval", "--corpus"])
            .arg(&corpus)
            .arg("--truth")
            .arg(&truth)
            .output()
            .expect("eval")
    };
    let out = eval(
        "queries:\n  - id: q1\n    mode: query\n    query: pgbouncer pool\n    relevant:\n      - { id: pool, relevance: 3 }\n      - { id: not-a-note, relevance: 2 }\n",
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(
        log.contains("1 relevant ids are not notes of the corpus") && log.contains("`not-a-note`"),
        "{log}"
    );
    assert!(!log.contains("`pool`"), "{log}");
    let out = eval(
        "queries:\n  - id: q2\n    mode: anchor\n    anchors: [nowhere]\n    relevant:\n      - { id: pool, relevance: 3 }\n",
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(
        log.contains("query `q2`: anchor `nowhere` is not a note of the corpus"),
        "{log}"
    );
    assert!(!log.contains("mnemon index"), "{log}");
}

/// Regression: an empty MNEMON_DIR (`MNEMON_DIR= mnemon recall ...`, or a script exporting it
/// unset) failed every command with "a value is required for '--dir'", though no --dir was
/// given. Empty is unset: the folder is found walking up from the working directory.
#[test]
fn an_empty_mnemon_dir_is_unset() {
    let (tmp, _m) = pool_memory();
    let out = bin()
        .current_dir(tmp.path())
        .env("MNEMON_DIR", "")
        .args(["recall", "--json", "pgbouncer pool"])
        .output()
        .expect("recall");
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{log}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(v["results"][0]["id"], "pool", "{v}");
}

/// Regression: `compact --compress-after 0` left a segment written in the current second: "now"
/// was taken in whole seconds and the segment's time in milliseconds.
#[test]
fn compact_compress_after_0_compresses_a_segment_written_this_second() {
    let (tmp, m) = pool_memory();
    drop(m);
    let (code, _, err) = run(tmp.path(), &["recall", "--json", "pgbouncer pool"]);
    assert_eq!(code, 0, "{err}");
    let (code, v, err) = run(tmp.path(), &["compact", "--compress-after", "0", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["compressed"].as_array().map(Vec::len), Some(1), "{v}");
}

/// Regression: `compact --compress-after 10 --archive-after 5` was accepted (every segment
/// archived the moment it was compressed), and `eval --corpus` of a path that is no folder
/// failed with walkdir's raw I/O error at exit 3. Both are bad arguments, named.
#[test]
fn contradictory_compaction_ages_and_a_missing_corpus_are_bad_arguments() {
    let (tmp, m) = fresh();
    m.index().expect("index");
    let (code, _, err) = run(
        tmp.path(),
        &["compact", "--compress-after", "10", "--archive-after", "5"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("invalid --archive-after"), "{err}");
    // A negative age is a value out of range, not an unknown flag `-1`.
    let (code, _, err) = run(tmp.path(), &["compact", "--compress-after", "-1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid value '-1' for '--compress-after"),
        "{err}"
    );
    // A usage error says who speaks, as mnemon's own errors do.
    assert!(err.starts_with("mnemon: error: invalid value"), "{err}");
    let (code, _, err) = run(tmp.path(), &["recal", "x"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("mnemon: error: unrecognized subcommand 'recal'"),
        "{err}"
    );
    assert!(err.contains("'recall'"), "{err}");
    // The help printed for a missing subcommand is no error line: no prefix glued to it.
    let (code, _, err) = run(tmp.path(), &["events"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("Inspect the event log"), "{err}");
    let truth = tmp.path().join("truth.yaml");
    std::fs::write(
        &truth,
        "queries:\n  - id: q1\n    mode: query\n    query: x\n    relevant:\n      - { id: a, relevance: 1 }\n",
    )
    .expect("truth");
    let missing = tmp.path().join("no-such-corpus");
    let (code, _, err) = run(
        tmp.path(),
        &[
            "eval",
            "--corpus",
            missing.to_str().expect("utf-8"),
            "--truth",
            truth.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid --corpus") && err.contains("is not a folder"),
        "{err}"
    );
}

/// Regression: `eval --modes warm99999999999` ran for years; `gen --out FILE` failed
/// at exit 3 with a raw "Not a directory"; `demo --notes FILE` said the file "does not exist";
/// `feedback --query "   "` said it was tied to that blank question while the stats counted it
/// untied. Bad arguments are exit 2 with the range or the fix; a blank question is none.
#[test]
fn unbounded_modes_files_for_folders_and_blank_questions_are_named() {
    let (tmp, m) = fresh();
    write_note(
        &m,
        "a.md",
        "---\nname: Alpha\n---\nthe alpha note about pools\n",
    );
    m.index().expect("index");
    drop(m);
    let truth = tmp.path().join("truth.yaml");
    std::fs::write(
        &truth,
        "queries:\n  - id: q1\n    mode: query\n    query: alpha\n    relevant:\n      - { id: a, relevance: 1 }\n",
    )
    .expect("truth");
    let corpus = tmp.path().join(".mnemon/memory");
    let (corpus, truth) = (
        corpus.to_str().expect("utf-8"),
        truth.to_str().expect("utf-8"),
    );
    for mode in ["warm99999999999", "perq101"] {
        let (code, _, err) = run(
            tmp.path(),
            &[
                "eval", "--corpus", corpus, "--truth", truth, "--modes", mode,
            ],
        );
        assert_eq!(code, 2, "{mode}: {err}");
        assert!(err.contains("N from 0 to 100"), "{mode}: {err}");
    }
    let (code, v, err) = run(
        tmp.path(),
        &[
            "eval", "--corpus", corpus, "--truth", truth, "--modes", "warm100", "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["modes"]["warm100"]["mrr"], 1.0, "{v}");

    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").expect("file");
    let file = file.to_str().expect("utf-8");
    let (code, _, err) = run(tmp.path(), &["gen", "--notes", "5", "--out", file]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a folder"), "{err}");
    let (code, _, err) = run(tmp.path(), &["demo", "--notes", file]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is not a folder") && !err.contains("does not exist"),
        "{err}"
    );

    let (code, v, err) = run(
        tmp.path(),
        &["feedback", "--used", "a", "--query", "   ", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["query"], "", "{v}");
    let (_, v, _) = run(tmp.path(), &["stats", "a", "--json"]);
    assert_eq!(v["untied_used"], 1, "{v}");
}

/// Regression: `init --dir sub` run inside another memory's notes (a bare relative path)
/// slipped past the check that refuses a memory folder nested in the notes.
#[test]
fn init_with_a_relative_dir_inside_the_notes_is_refused() {
    let (tmp, m) = fresh();
    m.index().expect("index");
    let inside = m.dir().memory().join("runbooks");
    std::fs::create_dir_all(&inside).expect("mkdir");
    for dir in ["sub", "new/deeper", "."] {
        let (code, _, err) = run(&inside, &["init", "--dir", dir]);
        assert_eq!(code, 2, "{dir}: {err}");
        assert!(err.contains("inside the notes folder"), "{dir}: {err}");
    }
    assert!(!inside.join("sub").exists() && !inside.join("index").exists());
    drop(tmp);
}

/// Regression: a question over the 4096 bytes recall reads was still scanned whole
/// for names (a 15 MB question took seconds) and recorded up to the event's own limit, so
/// feedback learned words recall had never read. What is recorded is what was read.
#[test]
fn a_question_over_the_limit_is_recorded_as_it_was_read() {
    let (tmp, m) = pool_memory();
    drop(m);
    let question = "pgbouncer pool ".repeat(700);
    assert!(question.len() > 8192);
    let (code, v, err) = run(tmp.path(), &["recall", "--json", &question]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["results"][0]["id"], "pool", "{v}");
    let (code, v, err) = run(tmp.path(), &["events", "dump", "--json"]);
    assert_eq!(code, 0, "{err}");
    let recorded: Vec<usize> = v["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["type"] == "query")
        .filter_map(|e| e["query"].as_str().map(str::len))
        .collect();
    assert_eq!(recorded.len(), 1, "{v}");
    assert!(recorded[0] <= 4096 && recorded[0] > 4000, "{recorded:?}");
    // Feedback naming the same long question is tied to that recall (it compared the
    // whole question with the part recorded, and tied nothing).
    let m = mnemon::Memory::open(tmp.path().join(".mnemon")).expect("open");
    let recall = m
        .recall(&mnemon::recall::Query::text(question.clone()))
        .expect("recall");
    let report = m
        .feedback(&["pool".to_string()], &[], Some(&question))
        .expect("feedback");
    assert_eq!(report.qid, recall.qid);
    assert!(report.query.len() <= 4096, "{}", report.query.len());
}

/// Regression: a question of more than 32 distinct words lost the words past the 32nd without a
/// word: no `question_read_bytes`, no notice, and the note the last word named was not found.
/// The cut is said like the cut by length, and what is recorded (and what feedback ties to)
/// is the part read.
#[test]
fn a_question_over_the_word_limit_says_where_it_was_cut() {
    let (tmp, m) = pool_memory();
    drop(m);
    let words: Vec<String> = (0..40).map(|i| format!("word{i}")).collect();
    let question = format!("{} pgbouncer", words.join(" "));
    let out = bin()
        .current_dir(tmp.path())
        .env_remove("MNEMON_DIR")
        .args(["recall", "--json", &question])
        .output()
        .expect("recall");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let read = question.find(" word32").expect("the 33rd word");
    assert_eq!(v["question_read_bytes"], read, "{v}");
    assert!(
        err.contains(&format!("only the first {read} bytes")) && err.contains("32 distinct words"),
        "{err}"
    );
    let m = mnemon::Memory::open(tmp.path().join(".mnemon")).expect("open");
    let recall = m
        .recall(&mnemon::recall::Query::text(question.clone()))
        .expect("recall");
    assert_eq!(recall.floor.read_bytes, Some(read));
    let report = m
        .feedback(&["pool".to_string()], &[], Some(&question))
        .expect("feedback");
    assert_eq!(report.qid, recall.qid);
    assert_eq!(report.query, question[..read]);
}

/// Regression: processes given one session (`--session w0`) each count their recalls from 0,
/// and every one of them called its first recall `w0-q0`: the event log could not tell their
/// queries apart. A given session's query ids carry the process's pid.
#[test]
fn processes_given_one_session_give_their_queries_distinct_ids() {
    let (tmp, _m) = pool_memory();
    let root = tmp.path();
    let qid = || {
        let (code, v, err) = run(root, &["--session", "w0", "--json", "recall", "pool"]);
        assert_eq!(code, 0, "{err}");
        v["qid"].as_str().unwrap_or_default().to_string()
    };
    let (a, b) = (qid(), qid());
    assert!(a.starts_with("w0-p") && a.ends_with("-q0"), "{a}");
    assert!(b.starts_with("w0-p") && b.ends_with("-q0"), "{b}");
    assert_ne!(a, b);
    // A made-up session holds the pid already.
    let (_, v, _) = run(root, &["--json", "recall", "pool"]);
    let made_up = v["qid"].as_str().unwrap_or_default();
    assert_eq!(made_up.matches("-p").count(), 0, "{made_up}");
}

/// Regression: a body file saved with a UTF-8 byte-order mark (as some Windows editors do) put
/// the mark into the note, right after the frontmatter. The mark is dropped, from stdin too.
#[test]
fn a_byte_order_mark_before_the_body_is_not_written_into_the_note() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(run(tmp.path(), &["init"]).0, 0);
    let body = tmp.path().join("body.txt");
    std::fs::write(&body, b"\xEF\xBB\xBFNew body\n").unwrap();
    let (code, _, stderr) = run(
        tmp.path(),
        &["write", "from-file", "--from", body.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) =
        run_with_stdin(tmp.path(), &["write", "from-stdin"], "\u{feff}Piped body\n");
    assert_eq!(code, 0, "{stderr}");
    for (id, text) in [("from-file", "New body\n"), ("from-stdin", "Piped body\n")] {
        let note = std::fs::read(tmp.path().join(format!(".mnemon/memory/{id}.md"))).unwrap();
        assert!(
            !note.windows(3).any(|w| w == b"\xEF\xBB\xBF"),
            "{id}: {}",
            String::from_utf8_lossy(&note)
        );
        assert!(
            String::from_utf8_lossy(&note).ends_with(&format!("---\n{text}")),
            "{id}"
        );
    }
}

/// `init --dir FILE` (or `init` where `.mnemon` is a file) failed with "inspect f/index: Not a
/// directory", exit 3: a bad argument, exit 2, named with its fix.
#[test]
fn init_on_a_file_is_a_bad_argument_named_as_one() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f"), "").unwrap();
    let (code, _, stderr) = run(tmp.path(), &["init", "--dir", "f"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("f is a file, not a folder"), "{stderr}");
    std::fs::write(tmp.path().join(".mnemon"), "").unwrap();
    let (code, _, stderr) = run(tmp.path(), &["init"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(".mnemon is a file, not a folder"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(tmp.path().join(".mnemon")).unwrap(), b"");
}
