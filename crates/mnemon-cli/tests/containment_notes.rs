//! Reading notes safely: a note is read only inside `memory/`, its frontmatter is bounded before
//! the YAML parser sees it, `core` reads a note only as far as its budget can use, and notes
//! past the depth limit are reported, never skipped silently.

mod common;

use common::{bin, chmod, fresh, run_unprivileged, running_as_root, write_note};
use mnemon::notes::{MAX_FRONTMATTER_BYTES, MAX_NOTE_BYTES};
use serde_json::Value;
use std::path::Path;

/// Run the binary in `dir` (the folder holding `.mnemon/`): (exit code, stdout JSON or null,
/// stdout text).
fn run(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = bin()
        .current_dir(dir)
        .env_remove("MNEMON_DIR")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("run mnemon");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let json = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, stdout)
}

/// The message reported for `path` in a list of `{path, message}` objects.
fn message_for<'a>(list: &'a Value, path: &str) -> Option<&'a str> {
    list.as_array()?
        .iter()
        .find(|e| e["path"] == path)
        .and_then(|e| e["message"].as_str())
}

fn errors_for(report: &mnemon::IndexReport, path: &str) -> Vec<String> {
    report
        .errors
        .iter()
        .filter(|e| e.path == path)
        .map(|e| e.message.clone())
        .collect()
}

const SECRET: &str = "SECRET-FROM-OUTSIDE";

/// A pinned note replaced by a symlink to a file outside `memory/` (while a server holds the
/// memory open, before any re-index) must not show that file's text through `core` or `show`;
/// the next index drops the note and reports the link with the fix, and so does `doctor`
/// (issue 27 item 1).
#[test]
fn a_note_swapped_for_a_symlink_outside_memory_is_never_read_and_is_reported() {
    let (tmp, memory) = fresh();
    write_note(
        &memory,
        "pinned.md",
        "---\nname: Pinned\npin: true\n---\nthe original pinned text\n",
    );
    let r = memory.index().expect("index");
    assert!(r.errors.is_empty(), "{:?}", r.errors);

    let outside = tmp.path().join("outside.md");
    std::fs::write(&outside, format!("{SECRET}\n")).expect("write outside");
    let pinned = memory.dir().memory().join("pinned.md");
    std::fs::remove_file(&pinned).expect("rm");
    std::os::unix::fs::symlink(&outside, &pinned).expect("symlink");

    // Before any re-index: the indexed text, never the file outside.
    let core = memory.core(2000).expect("core");
    assert_eq!(core.included, vec!["pinned"]);
    assert!(!core.text.contains(SECRET), "{}", core.text);
    assert!(
        core.text.contains("the original pinned text"),
        "{}",
        core.text
    );
    let shown = memory.show("pinned").expect("show");
    assert!(!shown.excerpt.contains(SECRET), "{}", shown.excerpt);

    // A watcher's re-index of that path, then a full one: the note leaves, the link is reported.
    let r = memory
        .index_paths(std::slice::from_ref(&pinned))
        .expect("index paths");
    assert_eq!(r.removed, vec!["pinned"]);
    let errors = errors_for(&r, "pinned.md");
    assert_eq!(errors.len(), 1, "{:?}", r.errors);
    assert!(
        errors[0].contains("outside memory/") && errors[0].contains("copy the note into memory/"),
        "{}",
        errors[0]
    );
    let core = memory.core(2000).expect("core");
    assert!(core.included.is_empty(), "{core:?}");
    assert!(memory.show("pinned").is_err());

    // doctor: the link listed in JSON and in human output, with the fix; problems found.
    let (code, v, _) = run(tmp.path(), &["doctor", "--json"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["healthy"], false);
    let m = message_for(&v["walk_errors"], "pinned.md").unwrap_or_default();
    assert!(m.contains("outside memory/"), "{v}");
    let (code, _, text) = run(tmp.path(), &["doctor"]);
    assert_eq!(code, 1);
    assert!(
        text.contains("pinned.md: symlink to") && text.contains("copy the note into memory/"),
        "{text}"
    );
    let (_, v, _) = run(tmp.path(), &["index", "--json"]);
    assert!(message_for(&v["errors"], "pinned.md").is_some(), "{v}");
}

/// A symlink that stays inside `memory/` is read when it leads where the scan does not go by
/// itself (a hidden folder): a note like any other, for the index and `core`. One leading to a
/// note the scan reads anyway is skipped: the note would be there twice.
#[test]
fn a_symlink_staying_inside_memory_is_read() {
    let (_tmp, memory) = fresh();
    write_note(
        &memory,
        ".hidden/target.md",
        "---\nname: Target\npin: true\n---\nthe target's own text\n",
    );
    write_note(
        &memory,
        "real/other.md",
        "---\nname: Other\n---\nother text\n",
    );
    let mem = memory.dir().memory();
    std::os::unix::fs::symlink(mem.join(".hidden/target.md"), mem.join("alias.md")).expect("link");
    std::os::unix::fs::symlink(mem.join("real/other.md"), mem.join("twin.md")).expect("link");
    let r = memory.index().expect("index");
    assert_eq!(r.changed, vec!["alias", "real/other"]);
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert_eq!(r.errors[0].path, "twin.md");
    let core = memory.core(2000).expect("core");
    assert_eq!(core.included, vec!["alias"]);
    assert_eq!(core.text.matches("the target's own text").count(), 1);
}

/// The watcher does not follow symlinks out of `memory/`: its watches cover `memory/` and its
/// real sub-folders, not a linked folder outside (issue 27 item 1).
#[test]
fn the_watcher_watches_no_folder_outside_memory_through_a_link() {
    use std::os::unix::fs::MetadataExt;
    let (tmp, memory) = fresh();
    write_note(&memory, "sub/a.md", "a");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(outside.join("deeper")).expect("mkdir");
    let mem = memory.dir().memory();
    std::os::unix::fs::symlink(&outside, mem.join("ext")).expect("link");
    let ino = |p: &Path| std::fs::metadata(p).expect("stat").ino();
    let (sub, out, out_deeper) = (
        ino(&mem.join("sub")),
        ino(&outside),
        ino(&outside.join("deeper")),
    );
    let stats = mnemon_cli::watch::WatchStats::default();
    let live =
        mnemon_cli::live::LiveMemory::new(memory, mnemon::OpenOptions::default(), Box::new(|_| {}));
    let (stop, rx) = std::sync::mpsc::channel();
    let watched = std::thread::scope(|s| {
        let watcher = s.spawn(|| mnemon_cli::watch::run(&live, &stats, rx, || {}, &|_| {}));
        // The watches are in place once the sub-folder's is (added in one walk at the start).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let mut watched = common::inotify_watched_inodes();
        while !watched.contains(&sub) && std::time::Instant::now() < deadline {
            std::thread::yield_now();
            watched = common::inotify_watched_inodes();
        }
        let _ = stop.send(());
        let ended = watcher.join();
        assert!(ended.is_ok_and(|r| r.is_ok()), "the watcher failed");
        watched
    });
    assert!(
        watched.contains(&sub),
        "memory/sub is not watched: {watched:?}"
    );
    assert!(
        !watched.contains(&out) && !watched.contains(&out_deeper),
        "a folder outside memory/ is watched through a link: {watched:?}"
    );
}

/// A named pipe named like a note (or a link to one) is never opened (an open would wait for a
/// writer): reported by the index with the fix, the rest indexed.
#[test]
fn a_fifo_named_like_a_note_is_reported_not_read() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "ok.md", "fine");
    let mem = memory.dir().memory();
    let status = std::process::Command::new("mkfifo")
        .arg(mem.join("pipe.md"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    std::os::unix::fs::symlink(mem.join("pipe.md"), mem.join("to-pipe.md")).expect("link");
    let r = memory.index().expect("index");
    assert_eq!(r.changed, vec!["ok"]);
    for path in ["pipe.md", "to-pipe.md"] {
        let errors = errors_for(&r, path);
        assert_eq!(errors.len(), 1, "{:?}", r.errors);
        assert!(
            errors[0].contains("a named pipe, not a regular file")
                && errors[0].contains("replace it with a Markdown file"),
            "{}",
            errors[0]
        );
    }
}

/// A frontmatter of `n` nested flow lists (`[[[...]]]`) under `deep:`.
fn nested_frontmatter_note(n: usize, body: &str) -> String {
    format!(
        "---\nname: Nested\ndeep: {}x{}\n---\n{body}\n",
        "[".repeat(n),
        "]".repeat(n)
    )
}

/// A note of deeply nested flow lists costs the YAML parser time super-linear in the depth
/// (issue 27 item 7). Such notes (over the size limit, or under it and nested past the depth
/// limit, or aliasing a billion values) are indexed from their body at once, with a problem
/// naming the limit.
#[test]
fn frontmatter_past_a_size_depth_or_alias_limit_is_not_parsed_and_the_body_is_indexed() {
    let (_tmp, memory) = fresh();
    let big = nested_frontmatter_note(100_000, "zebra crossing body");
    assert!(big.len() > 200_000);
    write_note(&memory, "big.md", &big);
    let under = (MAX_FRONTMATTER_BYTES - 100) / 2;
    write_note(
        &memory,
        "nested.md",
        nested_frontmatter_note(under, "quokka nested body"),
    );
    let mut laughs = String::from("---\nname: Laughs\na0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        laughs.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    laughs.push_str("---\nwombat laughing body\n");
    write_note(&memory, "laughs.md", &laughs);
    let block_deep: String = (0..200)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    write_note(
        &memory,
        "indented.md",
        format!("---\n{block_deep}---\nplatypus indented body\n"),
    );

    // The same nesting in a body (the opening `---` never closes): no YAML parser involved.
    write_note(
        &memory,
        "unclosed.md",
        format!("---\n{}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    );

    let r = memory.index().expect("index");
    assert_eq!(
        r.changed,
        vec!["big", "indented", "laughs", "nested", "unclosed"]
    );
    // No parser ran on it: the only problem named is the missing closing line.
    let unclosed = errors_for(&r, "unclosed.md");
    assert_eq!(unclosed.len(), 1, "{:?}", r.errors);
    assert!(unclosed[0].contains("never closed"), "{unclosed:?}");
    let expect = [
        ("big.md", "over the limit of 64 KiB", "zebra crossing body"),
        (
            "nested.md",
            "may nest deeper than 32 levels (line 3)",
            "quokka nested body",
        ),
        (
            "laughs.md",
            "more than 4 YAML aliases",
            "wombat laughing body",
        ),
        (
            "indented.md",
            "may nest deeper than 32 levels (line 34)",
            "platypus indented body",
        ),
    ];
    for (path, limit, body) in expect {
        let errors = errors_for(&r, path);
        assert_eq!(errors.len(), 1, "{path}: {:?}", r.errors);
        assert!(errors[0].contains(limit), "{path}: {}", errors[0]);
        assert!(
            errors[0].contains("indexed from its body only"),
            "{}",
            errors[0]
        );
        let shown = memory.show(path.trim_end_matches(".md")).expect("indexed");
        assert_eq!(shown.name, None, "{path}: the frontmatter was not read");
        assert_eq!(shown.excerpt, body);
    }
    // Found by the body's words.
    let hits = memory
        .recall(&mnemon::recall::Query::text("zebra crossing"))
        .expect("recall");
    assert_eq!(
        hits.results.first().map(|h| h.id.as_str()),
        Some("big"),
        "{:?}",
        hits.results.iter().map(|h| &h.id).collect::<Vec<_>>()
    );
}

/// Bytes this thread has read through system calls so far (Linux `/proc/thread-self/io`).
fn thread_bytes_read() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/thread-self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|n| n.trim().parse().ok())
}

/// `core` reads a note only as far as the budget can use, and never past the note cap: a huge
/// pinned note read whole would make `core`'s memory grow with it (issue 27 item 9).
#[test]
fn core_reads_a_pinned_note_grown_past_the_cap_only_as_far_as_the_budget_can_use() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "huge.md", "---\npin: true\n---\nsmall for now\n");
    write_note(
        &memory,
        "small.md",
        "---\npin: true\n---\na small pinned note\n",
    );
    memory.index().expect("index");
    // Grown past the note cap after it was indexed: core reads the file as it is now.
    let huge_len = 5 * MAX_NOTE_BYTES;
    let mut text = String::from("---\npin: true\n---\n");
    while text.len() < huge_len {
        text.push_str("a long line of the huge pinned note that no budget can hold\n");
    }
    std::fs::write(memory.dir().memory().join("huge.md"), &text).expect("grow");

    let before = thread_bytes_read();
    let core = memory.core(2000).expect("core");
    let after = thread_bytes_read();
    assert_eq!(core.included, vec!["small"]);
    assert_eq!(core.left_out, vec!["huge"]);
    assert!(core.tokens_used <= 2000, "{}", core.tokens_used);
    assert!(core.text.contains("a small pinned note"));
    let read = after.zip(before).map(|(a, b)| a - b);
    assert!(
        read.is_some_and(|n| n < (MAX_NOTE_BYTES / 4) as u64),
        "core read {read:?} bytes for a budget of 2000 tokens"
    );
}

/// A `d0/d1/.../d{n-1}` path.
fn deep(n: usize) -> String {
    (0..n)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/")
}

/// Notes more than 32 folders deep are not skipped silently with `doctor` saying healthy (issue
/// 27 item 12): each folder past the limit is reported (index and doctor) with the limit and the
/// fix; so is a note a watcher names there. An empty folder there is no problem.
#[test]
fn folders_past_the_depth_limit_are_reported_by_index_doctor_and_a_watcher() {
    let (tmp, memory) = fresh();
    write_note(&memory, &format!("{}/in.md", deep(31)), "in");
    let out_note = format!("{}/out.md", deep(32));
    write_note(&memory, &out_note, "out");
    std::fs::create_dir_all(memory.dir().memory().join(format!("{}/x", deep(40)))).expect("mkdir");
    std::fs::create_dir_all(memory.dir().memory().join("e0").join(deep(33))).expect("mkdir");
    // Empty at the limit: nothing there to skip.
    std::fs::create_dir_all(memory.dir().memory().join("f0").join(deep(31))).expect("mkdir");

    let r = memory.index().expect("index");
    assert_eq!(r.changed, vec![format!("{}/in", deep(31))]);
    let folder = deep(32);
    let errors = errors_for(&r, &folder);
    assert_eq!(r.errors.len(), 2, "{:?}", r.errors);
    assert_eq!(errors.len(), 1, "{:?}", r.errors);
    assert!(
        errors[0].contains("depth limit of 32") && errors[0].contains("move them into a folder"),
        "{}",
        errors[0]
    );
    // The folder at the limit on the e-branch holds a folder: reported too.
    assert!(
        r.errors
            .iter()
            .any(|e| e.path == format!("e0/{}", deep(31))),
        "{:?}",
        r.errors
    );

    // A watcher naming the note: reported by its own path.
    let abs = memory.dir().memory().join(&out_note);
    let r = memory.index_paths(&[abs]).expect("index paths");
    let errors = errors_for(&r, &out_note);
    assert_eq!(errors.len(), 1, "{:?}", r.errors);
    assert!(
        errors[0].contains("over the depth limit of 32"),
        "{}",
        errors[0]
    );

    let (code, v, _) = run(tmp.path(), &["doctor", "--json"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["healthy"], false);
    assert!(message_for(&v["walk_errors"], &folder).is_some(), "{v}");
    let (_, _, text) = run(tmp.path(), &["doctor"]);
    assert!(
        text.contains(&format!("{folder}: folder 32 levels below memory/")),
        "{text}"
    );
}

const POOL: &str = "---\nname: Pool\n---\nThe pgbouncer pool holds 40.\n";
const ROLLBACK: &str = "---\nname: Rollback\n---\nRoll back the deploy with the previous image.\n";

/// A memory holding `notes` (path, text), indexed and closed: its folder and its root.
fn indexed(notes: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, memory) = fresh();
    for (path, text) in notes {
        write_note(&memory, path, text);
    }
    memory.index().expect("index");
    let root = memory.dir().root().to_path_buf();
    (tmp, root)
}

/// Every folder and file below `dir` open to everyone (the unprivileged user included).
fn open_to_all(dir: &Path) {
    chmod(dir, 0o777);
    for e in std::fs::read_dir(dir).expect("ls") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            open_to_all(&p);
        } else {
            chmod(&p, 0o666);
        }
    }
}

/// A folder of `memory/` that could not be read was taken for deleted: its notes left the index
/// silently (recall stopped finding them, `show` said to run `mnemon index`). A changed note
/// that could not be read made `doctor` call the store damaged, and `doctor --fix` then dropped
/// it. Both are kept as the index last read them, and reported as unreadable, not as damage.
#[test]
fn notes_that_cannot_be_read_stay_in_the_index_and_are_no_damage() {
    let (tmp, memory) = fresh();
    write_note(
        &memory,
        "runbooks/rollback.md",
        "---\nname: Rollback\n---\nRoll back the deploy.\n",
    );
    write_note(
        &memory,
        "pool.md",
        "---\nname: Pool\n---\nThe pgbouncer pool holds 40.\n",
    );
    memory.index().expect("index");
    let root = memory.dir().root().to_path_buf();
    drop(memory);
    open_to_all(tmp.path());
    let dir = root.to_str().expect("utf-8");
    chmod(&root.join("memory/runbooks"), 0o000);
    std::fs::write(
        root.join("memory/pool.md"),
        "---\nname: Pool\n---\nThe pgbouncer pool holds 40, edited.\n",
    )
    .expect("edit");
    chmod(&root.join("memory/pool.md"), 0o000);
    let Some(index) = run_unprivileged(&["index", "--dir", dir, "--json"]) else {
        return; // root without setpriv: permissions cannot be tried here
    };
    let v: Value = serde_json::from_slice(&index.stdout).unwrap_or(Value::Null);
    assert_eq!(
        v["notes"],
        2,
        "{v} {}",
        String::from_utf8_lossy(&index.stderr)
    );
    assert_eq!(v["removed"], serde_json::json!([]), "{v}");
    assert!(message_for(&v["errors"], "runbooks").is_some(), "{v}");
    assert!(message_for(&v["errors"], "pool.md").is_some(), "{v}");
    let recall =
        run_unprivileged(&["recall", "--dir", dir, "--json", "roll back the deploy"]).expect("run");
    let v: Value = serde_json::from_slice(&recall.stdout).unwrap_or(Value::Null);
    assert_eq!(v["results"][0]["id"], "runbooks/rollback", "{v}");
    let doctor = run_unprivileged(&["doctor", "--dir", dir]).expect("run");
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(1), "{text}");
    assert!(!text.contains("damaged"), "{text}");
    assert!(text.contains("index: ok"), "{text}");
    assert!(text.contains("pool.md: cannot read the note"), "{text}");
    chmod(&root.join("memory/runbooks"), 0o777);
}

/// A lexical segment the user cannot read (owner, mode) was reported as "damaged": it is
/// reported as unreadable, and the index is still rebuilt from the notes and recall answers.
#[test]
fn an_unreadable_lexical_segment_is_called_unreadable_not_damaged() {
    let (tmp, root) = indexed(&[("pool.md", POOL)]);
    open_to_all(tmp.path());
    let segment = std::fs::read_dir(root.join("index"))
        .expect("ls")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("lex-"))
        })
        .expect("a lexical segment");
    chmod(&segment, 0o000);
    let dir = root.to_str().expect("utf-8");
    let Some(recall) = run_unprivileged(&["recall", "--dir", dir, "--json", "pgbouncer pool"])
    else {
        return; // root without setpriv: permissions cannot be tried here
    };
    let log = String::from_utf8_lossy(&recall.stderr);
    let v: Value = serde_json::from_slice(&recall.stdout).unwrap_or(Value::Null);
    assert_eq!(v["results"][0]["id"], "pool", "{v} {log}");
    assert!(log.contains("cannot be read"), "{log}");
    assert!(!log.contains("damaged"), "{log}");
}

/// A memory folder this process may read but not write (a read-only mount or checkout, a
/// folder of another user) refused every command, `recall` and `events verify` included, with
/// "open for reading and writing graph.redb: Permission denied". Reading commands now answer
/// from the index as it was written, say so once, and record nothing; writing commands say
/// what needs to write.
#[test]
fn a_memory_folder_this_process_may_only_read_answers_and_records_nothing() {
    let (tmp, memory) = fresh();
    write_note(&memory, "runbooks/rollback.md", ROLLBACK);
    write_note(&memory, "pool.md", POOL);
    memory.index().expect("index");
    memory
        .recall(&mnemon::recall::Query::text("rollback"))
        .expect("recall");
    let root = memory.dir().root().to_path_buf();
    drop(memory);
    let body = tmp.path().join("body.txt");
    std::fs::write(&body, "A new note's text.\n").expect("write body");
    // Written after the index: `show` cannot index it here and must not advise `mnemon index`
    // as if that could run.
    std::fs::write(
        root.join("memory/later.md"),
        "# Later\n\nWritten after indexing.\n",
    )
    .expect("write a later note");
    // Readable by everyone, writable by the owner (root) alone.
    fn read_only_for_others(dir: &Path) {
        chmod(dir, 0o755);
        for e in std::fs::read_dir(dir).expect("ls") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                read_only_for_others(&p);
            } else {
                chmod(&p, 0o644);
            }
        }
    }
    read_only_for_others(tmp.path());
    let events_before = std::fs::read_dir(root.join("events")).expect("ls").count();
    let dir = root.to_str().expect("utf-8");
    let Some(recall) =
        run_unprivileged(&["recall", "--dir", dir, "--json", "roll back the deploy"])
    else {
        return; // root without setpriv: permissions cannot be tried here
    };
    let log = String::from_utf8_lossy(&recall.stderr);
    if !running_as_root() {
        return; // run as the tests' user, who owns the files: nothing to try
    }
    assert_eq!(recall.status.code(), Some(0), "{log}");
    let v: Value = serde_json::from_slice(&recall.stdout).unwrap_or(Value::Null);
    assert_eq!(v["results"][0]["id"], "runbooks/rollback", "{v} {log}");
    for args in [
        vec!["show", "--dir", dir, "pool"],
        vec!["stats", "--dir", dir, "runbooks/rollback"],
        vec!["core", "--dir", dir],
        vec!["events", "verify", "--dir", dir],
    ] {
        let out = run_unprivileged(&args).expect("run");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let later = run_unprivileged(&["show", "--dir", dir, "later"]).expect("run");
    let log = String::from_utf8_lossy(&later.stderr);
    assert_eq!(later.status.code(), Some(3), "{log}");
    assert!(
        log.contains("is not in the index (written since the folder was last indexed")
            && log.contains("where the folder is writable"),
        "{log}"
    );
    let index = run_unprivileged(&["index", "--dir", dir]).expect("run");
    let log = String::from_utf8_lossy(&index.stderr);
    assert_eq!(index.status.code(), Some(3), "{log}");
    assert!(log.contains("indexing the notes needs to write"), "{log}");
    let body = body.to_str().expect("utf-8");
    let write =
        run_unprivileged(&["write", "--dir", dir, "new-note", "--from", body]).expect("run");
    let log = String::from_utf8_lossy(&write.stderr);
    assert_eq!(write.status.code(), Some(3), "{log}");
    assert!(log.contains("writing a note needs to write"), "{log}");
    let doctor = run_unprivileged(&["doctor", "--dir", dir]).expect("run");
    let log = String::from_utf8_lossy(&doctor.stderr);
    assert_eq!(doctor.status.code(), Some(3), "{log}");
    assert!(
        log.contains("doctor (it brings the index up to date"),
        "{log}"
    );
    // Nothing was written: no segment for the recalls, no note.
    assert_eq!(
        std::fs::read_dir(root.join("events")).expect("ls").count(),
        events_before
    );
    assert!(!root.join("memory/new-note.md").exists());
}

/// Only `events/` read-only (the index writable): `recall` failed with exit 3 ("creating the
/// segment failed"). It answers, says once that it records nothing, and `feedback`, which is
/// nothing but a record, says why it cannot.
#[test]
fn a_read_only_events_folder_answers_recalls_without_recording_them() {
    let (tmp, root) = indexed(&[("runbooks/rollback.md", ROLLBACK)]);
    open_to_all(tmp.path());
    chmod(&root.join("events"), 0o755);
    let dir = root.to_str().expect("utf-8");
    let Some(recall) =
        run_unprivileged(&["recall", "--dir", dir, "--json", "roll back the deploy"])
    else {
        return; // root without setpriv: permissions cannot be tried here
    };
    let log = String::from_utf8_lossy(&recall.stderr);
    if !running_as_root() {
        return; // run as the tests' user, who owns events/: nothing to try
    }
    assert_eq!(recall.status.code(), Some(0), "{log}");
    assert!(
        log.contains("recalls are answered and not recorded"),
        "{log}"
    );
    let v: Value = serde_json::from_slice(&recall.stdout).unwrap_or(Value::Null);
    assert_eq!(v["results"][0]["id"], "runbooks/rollback", "{v}");
    assert_eq!(
        std::fs::read_dir(root.join("events")).expect("ls").count(),
        0
    );
    let feedback =
        run_unprivileged(&["feedback", "--dir", dir, "--used", "runbooks/rollback"]).expect("run");
    let log = String::from_utf8_lossy(&feedback.stderr);
    assert_eq!(feedback.status.code(), Some(3), "{log}");
    assert!(log.contains("events/"), "{log}");
    chmod(&root.join("events"), 0o777);
}

/// A damaged store this process may only read: the error said "delete graph.redb to rebuild
/// it", which this process cannot do, or only "move aside …: Permission denied" without a word
/// of the damage. It now says the store is damaged and where the fix can run.
#[test]
fn a_damaged_store_this_process_may_only_read_says_where_the_fix_can_run() {
    let (tmp, root) = indexed(&[("pool.md", POOL)]);
    let recorded = bin()
        .args([
            "recall",
            "--dir",
            root.to_str().expect("utf-8"),
            "pgbouncer",
        ])
        .output()
        .expect("recall");
    assert!(recorded.status.success());
    let store = root.join("index/graph.redb");
    let mut bytes = std::fs::read(&store).expect("read");
    bytes[..64].fill(0xff);
    std::fs::write(&store, &bytes).expect("damage");
    open_to_all(tmp.path());
    chmod(&root.join("index"), 0o755);
    chmod(&store, 0o644);
    let dir = root.to_str().expect("utf-8");
    let Some(recall) = run_unprivileged(&["recall", "--dir", dir, "pgbouncer"]) else {
        return; // root without setpriv: permissions cannot be tried here
    };
    if !running_as_root() {
        return; // run as the tests' user, who owns the store: nothing to try
    }
    let log = String::from_utf8_lossy(&recall.stderr);
    assert_eq!(recall.status.code(), Some(3), "{log}");
    assert!(log.contains("damaged"), "{log}");
    assert!(
        log.contains("doctor --fix` where the folder is writable"),
        "{log}"
    );
    assert!(!log.contains("delete"), "{log}");
    assert!(store.exists(), "nothing moved");
    // The event log does not live in the store: it is read and verified all the same.
    let verify = run_unprivileged(&["events", "verify", "--dir", dir, "--json"]).expect("run");
    let log = String::from_utf8_lossy(&verify.stderr);
    assert_eq!(verify.status.code(), Some(0), "{log}");
    let v: Value = serde_json::from_slice(&verify.stdout).unwrap_or(Value::Null);
    assert_eq!(v["healthy"], true, "{v}");
    assert!(
        v["segments"][0]["events"].as_u64() >= Some(2),
        "the recall's query and hit: {v}"
    );
    let dump = run_unprivileged(&["events", "dump", "--dir", dir, "--json"]).expect("run");
    let v: Value = serde_json::from_slice(&dump.stdout).unwrap_or(Value::Null);
    assert_eq!(v["events"][0]["type"], "query", "{v}");
    assert_eq!(v["events"][0]["query"], "pgbouncer", "{v}");
}
