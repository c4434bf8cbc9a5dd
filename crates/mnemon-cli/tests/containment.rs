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
    let (tmp, root) = indexed_folder();
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

fn indexed_folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, m) = fresh();
    write_note(
        &m,
        "pool.md",
        "---\nname: Pool size\n---\nThe pgbouncer pool holds 40 connections.\n",
    );
    m.index().expect("index");
    let root = m.dir().root().to_path_buf();
    (tmp, root)
}

/// Replace `path` (a folder or file of the memory folder) by a symlink to a new place outside.
fn symlink_outside(tmp: &std::path::Path, path: &std::path::Path) -> std::path::PathBuf {
    let outside = tmp.join("outside").join(path.file_name().expect("name"));
    std::fs::create_dir_all(outside.parent().expect("parent")).expect("mkdir");
    if path.exists() {
        std::fs::rename(path, &outside).expect("move");
    } else {
        std::fs::write(&outside, b"").expect("write");
    }
    std::os::unix::fs::symlink(&outside, path).expect("symlink");
    outside
}

/// Every file below `dir` with its length and modification time.
fn listing(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read") {
            let e = e.expect("entry");
            let m = e.metadata().expect("meta");
            if m.is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path(), m.len(), m.modified().expect("mtime")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn symlinked_events_or_index_folder_is_refused_and_nothing_is_written_through_it() {
    for part in ["events", "index"] {
        let (tmp, root) = indexed_folder();
        let outside = symlink_outside(tmp.path(), &root.join(part));
        let before = listing(&outside);
        let err = match Memory::open(&root) {
            Ok(_) => panic!("{part}: a symlinked folder was followed"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("symbolic link"), "{err}");
        assert!(
            err.contains(&root.join(part).display().to_string()),
            "{err}"
        );
        // Every command refuses the same way, init included, and writes nothing there.
        for args in [
            vec!["index"],
            vec!["recall", "pgbouncer pool"],
            vec!["importance", "pool", "5"],
            vec!["compact"],
            vec!["init"],
        ] {
            let out = common::bin()
                .arg("--dir")
                .arg(&root)
                .args(&args)
                .output()
                .expect("run");
            assert!(!out.status.success(), "{part} {args:?} succeeded");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("symbolic link"),
                "{part} {args:?}: {stderr}"
            );
        }
        assert_eq!(
            listing(&outside),
            before,
            "{part}: written through the link"
        );
    }
}

#[test]
fn symlinked_file_inside_index_or_events_is_refused() {
    for (part, file) in [("index", "graph.redb"), ("events", "evil.seg")] {
        let (tmp, root) = indexed_folder();
        let link = root.join(part).join(file);
        let outside = symlink_outside(tmp.path(), &link);
        let len_before = std::fs::metadata(&outside).expect("meta").len();
        let err = match Memory::open(&root) {
            Ok(_) => panic!("{part}/{file}: followed"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(&link.display().to_string()), "{err}");
        assert_eq!(
            std::fs::metadata(&outside).expect("meta").len(),
            len_before,
            "{part}/{file}: written through the link"
        );
    }
}

/// `events verify` refused to read the log when a link or a file stood in `index/` (or at it):
/// it checked the whole folder as a command that writes does, though it reads only `events/`
/// (README: "reads the log alone, whatever state the index is in"). It reads the log, follows
/// no link in `index/`, and still refuses a link in `events/`.
#[test]
fn events_verify_reads_the_log_whatever_stands_in_the_index_folder() {
    let verify = |root: &std::path::Path| {
        let out = common::bin()
            .arg("--dir")
            .arg(root)
            .args(["events", "verify"])
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let recorded = |root: &std::path::Path| {
        let m = Memory::open(root).expect("open");
        let r = m
            .recall(&Query::text("pgbouncer pool connections"))
            .expect("recall");
        assert_eq!(ids(&r), ["pool"]);
    };
    for case in [
        "index/graph.redb",
        "index/stats.snapshot",
        "index",
        "index as a file",
    ] {
        let (tmp, root) = indexed_folder();
        recorded(&root);
        let path = root.join(case.trim_end_matches(" as a file"));
        if case.ends_with(" as a file") {
            std::fs::remove_dir_all(&path).expect("rm");
            std::fs::write(&path, b"not a folder").expect("write");
        } else {
            symlink_outside(tmp.path(), &path);
        }
        let (code, stdout, stderr) = verify(&root);
        assert_eq!(code, Some(0), "{case}: {stdout} {stderr}");
        assert!(
            stdout.contains(": 2 events, 0 damaged ranges"),
            "{case}: {stdout}"
        );
        assert!(stdout.ends_with("healthy\n"), "{case}: {stdout}");
    }
    let (tmp, root) = indexed_folder();
    let link = root.join("events/evil.seg");
    symlink_outside(tmp.path(), &link);
    let (code, _, stderr) = verify(&root);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains(&link.display().to_string()), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
}

#[test]
fn symlinked_gitignore_is_left_alone_with_a_notice() {
    let (tmp, root) = indexed_folder();
    let gitignore = root.join(".gitignore");
    std::fs::remove_file(&gitignore).expect("rm");
    let outside = symlink_outside(tmp.path(), &gitignore);
    let m = Memory::open(&root).expect("open");
    let notices = m.take_notices().join("\n");
    assert!(notices.contains("symbolic link"), "{notices}");
    assert_eq!(std::fs::read(&outside).expect("read"), b"");
    // The memory still works.
    assert_eq!(ids(&look(&m, "pgbouncer pool connections")), ["pool"]);
    let out = common::bin()
        .arg("--dir")
        .arg(&root)
        .arg("init")
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&outside).expect("read"), b"");
}

/// An immutable store (`chattr +i`) is not damage: nothing is moved aside, the file and the fix
/// are named, and it is read as it is (opened read-only).
#[test]
fn permission_error_on_the_store_is_named_and_nothing_is_moved_aside() {
    let (_tmp, root) = indexed_folder();
    let store = root.join("index/graph.redb");
    let set = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&store)
        .status();
    if !set.is_ok_and(|s| s.success()) {
        eprintln!(
            "skipped: chattr +i is not available here (needs root and ext4-like file system)"
        );
        return;
    }
    let result = Memory::open(&root).map(|m| m.read_only());
    let out = common::bin()
        .arg("--dir")
        .arg(&root)
        .args(["recall", "pgbouncer pool"])
        .output()
        .expect("run");
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(&store)
        .status();
    // Read, not written: the store opens read-only and recall answers, saying why once.
    assert_eq!(
        result.expect("opened read-only"),
        Some(std::io::ErrorKind::PermissionDenied)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("pool"));
    assert!(stderr.contains("graph.redb"), "{stderr}");
    assert!(stderr.contains("read-only for this process"), "{stderr}");
    assert!(stderr.contains("lsattr"), "{stderr}");
    assert!(
        !root.join("index/graph.redb.damaged").exists(),
        "moved aside"
    );
    // With the flag cleared, the same store opens as it was.
    let m = Memory::open(&root).expect("open");
    assert_eq!(m.show("pool").expect("show").id, "pool");
}

/// A memory of linked notes (links both ways, tags, a pinned note), indexed.
fn linked_memory() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, m) = fresh();
    let topics = [
        "pgbouncer",
        "postgres",
        "deploy",
        "rollback",
        "canary",
        "grafana",
        "alerts",
        "oncall",
        "runbook",
        "backup",
        "replica",
        "vacuum",
    ];
    for (i, t) in topics.iter().enumerate() {
        let next = topics[(i + 1) % topics.len()];
        let pin = if i == 0 { "pin: true\n" } else { "" };
        write_note(
            &m,
            &format!("{t}-notes.md"),
            format!(
                "---\nname: {t} notes\ntags: [ops, {t}]\n{pin}---\nHow we run {t} in production: \
                 sizing, failure modes and the {next} side. See [[{next}-notes]].\n"
            ),
        );
    }
    m.index().expect("index");
    let root = m.dir().root().to_path_buf();
    (tmp, root)
}

fn mnemon(root: &std::path::Path, args: &[&str]) -> std::process::Output {
    common::bin()
        .arg("--dir")
        .arg(root)
        .args(args)
        .output()
        .expect("run")
}

/// The ids and scores a fresh process answers `q` with (nothing recorded).
fn answers(root: &std::path::Path, q: &str) -> Vec<(String, String)> {
    let m = Memory::open(root).expect("open");
    look(&m, q)
        .results
        .iter()
        .map(|h| (h.id.clone(), format!("{:.5}", h.score)))
        .collect()
}

const QUESTIONS: [&str; 4] = [
    "pgbouncer sizing",
    "deploy rollback canary",
    "oncall runbook failure modes",
    "replica vacuum",
];

#[test]
fn damaged_store_bytes_are_found_by_doctor_and_fixed_to_a_clean_rebuild() {
    let (_clean_tmp, clean) = linked_memory();
    let want: Vec<_> = QUESTIONS.iter().map(|q| answers(&clean, q)).collect();
    // A note's text inside the store altered in place (same length: redb cannot tell).
    let (_tmp, root) = linked_memory();
    let store = root.join("index/graph.redb");
    let mut bytes = std::fs::read(&store).expect("read");
    let needle = b"failure modes and the deploy side";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("excerpt in the store");
    bytes[at..at + 7].copy_from_slice(b"FAILURE");
    std::fs::write(&store, &bytes).expect("write");

    let out = mnemon(&root, &["doctor", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let damage = report["store_damage"].as_array().expect("store_damage");
    assert!(
        damage
            .iter()
            .any(|d| d.as_str().is_some_and(|d| d.contains("postgres-notes"))),
        "{damage:?}"
    );
    assert_eq!(report["healthy"], false);

    let fixed = mnemon(&root, &["doctor", "--fix"]);
    assert_eq!(
        fixed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fixed.stdout)
    );
    assert!(root.join("index/graph.redb.damaged").exists());
    let got: Vec<_> = QUESTIONS.iter().map(|q| answers(&root, q)).collect();
    assert_eq!(got, want);
}

/// The store's bytes differ from run to run (each store has a random epoch), so the same flips
/// land on other structures each run: rounds enough that a damage redb reports in a way not yet
/// taken for damage (a read past the file's end, a table of other types) shows up.
#[test]
fn flipped_bits_in_the_store_never_crash_and_doctor_fix_restores_clean_answers() {
    let (_clean_tmp, clean) = linked_memory();
    let want: Vec<_> = QUESTIONS.iter().map(|q| answers(&clean, q)).collect();
    let (_tmp, base) = linked_memory();
    let original = std::fs::read(base.join("index/graph.redb")).expect("read");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..48 {
        let mut bytes = original.clone();
        for _ in 0..8 {
            let i = (next() % bytes.len() as u64) as usize;
            bytes[i] ^= 1 << (next() % 8);
        }
        std::fs::write(base.join("index/graph.redb"), &bytes).expect("write");
        let _ = std::fs::remove_file(base.join("index/graph.cache"));
        // Every command answers (a message at most), none panics.
        let doctor = mnemon(&base, &["doctor"]);
        assert!(
            matches!(doctor.status.code(), Some(0 | 1)),
            "round {round}: doctor {:?}: {}",
            doctor.status,
            String::from_utf8_lossy(&doctor.stderr)
        );
        let recall = mnemon(&base, &["recall", "pgbouncer sizing"]);
        assert_eq!(
            recall.status.code(),
            Some(0),
            "round {round}: {}",
            String::from_utf8_lossy(&recall.stderr)
        );
        let fixed = mnemon(&base, &["doctor", "--fix"]);
        assert_eq!(
            fixed.status.code(),
            Some(0),
            "round {round}: {}{}",
            String::from_utf8_lossy(&fixed.stdout),
            String::from_utf8_lossy(&fixed.stderr)
        );
        // A panic inside redb on damaged bytes is a repair, said in one line, not a Rust panic.
        for o in [&doctor, &recall, &fixed] {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!err.contains("RUST_BACKTRACE"), "round {round}: {err}");
        }
        let got: Vec<_> = QUESTIONS.iter().map(|q| answers(&base, q)).collect();
        assert_eq!(got, want, "round {round}");
        // Start the next round from the undamaged store.
        drop(std::fs::remove_file(base.join("index/graph.redb.damaged")));
    }
}

/// Bytes flipped in redb's allocator pages leave reads working; redb panics only when the
/// store is closed, writing its allocator state, after the command printed its answer. The
/// command then ran again on a rebuilt store: two answers on stdout (two JSON objects), every
/// recall and feedback recorded twice, and `doctor --json` printed "healthy" and then an error.
/// Where such bytes lie depends on the store's history (its commits) and layout, so the test
/// flips 4 bytes at every 4-byte step of each page's first KiB until some reach redb's close;
/// no flip may ever print twice.
#[test]
fn damage_found_when_the_store_closes_neither_repeats_the_command_nor_its_events() {
    let (_tmp, base) = linked_memory();
    let original = std::fs::read(base.join("index/graph.redb")).expect("read");
    let page = 4096;
    let mut at_close = 0;
    'pages: for start in (0..original.len()).step_by(page) {
        for within in (0usize..1024).step_by(4) {
            let at = start + within;
            if at + 4 > original.len() {
                continue;
            }
            let mut bytes = original.clone();
            for b in &mut bytes[at..at + 4] {
                *b ^= 0xff;
            }
            let damaged = tempfile::tempdir().expect("tempdir");
            for sub in ["memory", "index"] {
                copy_dir(&base.join(sub), &damaged.path().join(sub));
            }
            std::fs::write(damaged.path().join("index/graph.redb"), &bytes).expect("write");
            let recall = mnemon(damaged.path(), &["--json", "recall", "pgbouncer sizing"]);
            let stdout = String::from_utf8_lossy(&recall.stdout);
            let stderr = String::from_utf8_lossy(&recall.stderr);
            assert!(
                stdout.lines().count() <= 1,
                "offset {at}: one answer: {stdout}"
            );
            if !stderr.contains("turned out damaged after this command printed its output") {
                continue;
            }
            at_close += 1;
            assert_eq!(recall.status.code(), Some(0), "offset {at}: {stderr}");
            let answer: serde_json::Value = serde_json::from_str(&stdout).expect("one object");
            assert_eq!(answer["results"][0]["id"], "pgbouncer-notes", "offset {at}");
            let dump = mnemon(damaged.path(), &["events", "dump"]);
            let queries = String::from_utf8_lossy(&dump.stdout)
                .lines()
                .filter(|l| l.contains("\"type\":\"query\""))
                .count();
            assert_eq!(queries, 1, "offset {at}: the recall is recorded once");
            // The next command finds the store moved aside and rebuilds it.
            assert!(damaged.path().join("index/graph.redb.damaged").exists());
            assert_eq!(
                answers(damaged.path(), "pgbouncer sizing")[0].0,
                "pgbouncer-notes"
            );

            let again = tempfile::tempdir().expect("tempdir");
            for sub in ["memory", "index"] {
                copy_dir(&base.join(sub), &again.path().join(sub));
            }
            std::fs::write(again.path().join("index/graph.redb"), &bytes).expect("write");
            let doctor = mnemon(again.path(), &["--json", "doctor"]);
            let stdout = String::from_utf8_lossy(&doctor.stdout);
            let stderr = String::from_utf8_lossy(&doctor.stderr);
            assert!(
                stdout.lines().count() <= 1,
                "offset {at}: one report: {stdout}"
            );
            serde_json::from_str::<serde_json::Value>(&stdout).expect("one JSON object");
            if stderr.contains("turned out damaged after this command printed its output") {
                assert_eq!(doctor.status.code(), Some(1), "offset {at}: {stderr}");
            }
            if at_close >= 1 {
                break 'pages;
            }
        }
    }
    assert!(at_close > 0, "no flip reached redb's close");
}

/// A folder where a file of index/ belongs (made by hand or by a tool) stopped every command
/// with "Is a directory", and `doctor --fix` could not repair it.
#[test]
fn a_folder_where_an_index_file_belongs_is_moved_aside_and_the_file_rebuilt() {
    let (_clean_tmp, clean) = linked_memory();
    let want = answers(&clean, "pgbouncer sizing");
    for file in ["graph.redb", "lexical.manifest", "stats.snapshot"] {
        let (_tmp, base) = linked_memory();
        let path = base.join("index").join(file);
        let _ = std::fs::remove_file(&path);
        std::fs::create_dir_all(path.join("inside")).expect("mkdir");
        let first = mnemon(&base, &["recall", "pgbouncer sizing"]);
        let stderr = String::from_utf8_lossy(&first.stderr);
        assert_eq!(first.status.code(), Some(0), "{file}: {stderr}");
        assert!(stderr.contains("a folder stood where"), "{file}: {stderr}");
        assert!(
            path.is_file() || !path.exists(),
            "{file}: the folder is gone"
        );
        assert!(
            base.join("index")
                .join(format!("{file}.damaged"))
                .join("inside")
                .is_dir()
        );
        let second = mnemon(&base, &["recall", "pgbouncer sizing"]);
        let stderr = String::from_utf8_lossy(&second.stderr);
        assert!(
            !stderr.contains("a folder stood"),
            "{file}: said once: {stderr}"
        );
        assert_eq!(answers(&base, "pgbouncer sizing"), want, "{file}");
    }
    // The lock file holds nothing to rebuild, and other processes may be waiting on it: the
    // message says what to do.
    let (_tmp, base) = linked_memory();
    let lock = base.join("index/write.lock");
    let _ = std::fs::remove_file(&lock);
    std::fs::create_dir(&lock).expect("mkdir");
    std::fs::write(
        base.join("memory/new-note.md"),
        "---\nname: New\n---\nNew text.\n",
    )
    .expect("write");
    let index = mnemon(&base, &["index"]);
    let stderr = String::from_utf8_lossy(&index.stderr);
    assert_eq!(index.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("write.lock"), "{stderr}");
    assert!(stderr.contains("move the folder away"), "{stderr}");
}

/// A folder where a file of index/ belongs, a second time (the first one moved aside to
/// `<file>.damaged`, which still holds it): the rename onto that folder failed with "Directory
/// not empty", and every command, `doctor --fix` too, stopped at exit 3 with no fix named. The
/// earlier folder is replaced, as an earlier damaged file is.
#[test]
fn a_folder_where_an_index_file_belongs_again_is_moved_aside_over_the_first() {
    let (_clean_tmp, clean) = linked_memory();
    let want = answers(&clean, "pgbouncer sizing");
    for file in ["graph.redb", "lexical.manifest", "stats.snapshot"] {
        let (_tmp, base) = linked_memory();
        let path = base.join("index").join(file);
        let aside = base.join("index").join(format!("{file}.damaged"));
        let _ = std::fs::remove_file(&path);
        std::fs::create_dir_all(aside.join("first")).expect("mkdir");
        std::fs::create_dir_all(path.join("second")).expect("mkdir");
        let out = mnemon(&base, &["recall", "pgbouncer sizing"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{file}: {stderr}");
        assert!(stderr.contains("a folder stood where"), "{file}: {stderr}");
        assert!(!stderr.contains("not empty"), "{file}: {stderr}");
        assert!(aside.join("second").is_dir(), "{file}");
        assert!(!aside.join("first").exists(), "{file}");
        assert!(!path.is_dir(), "{file}");
        assert_eq!(answers(&base, "pgbouncer sizing"), want, "{file}");
        let doctor = mnemon(&base, &["doctor"]);
        assert_eq!(
            doctor.status.code(),
            Some(0),
            "{file}: {}",
            String::from_utf8_lossy(&doctor.stdout)
        );
    }
}

/// `from`'s files and folders copied into `to`, modification times kept (a note newer than
/// the index would be indexed again, and the damage met while writing, not at close).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
            let mtime = e.metadata().expect("metadata").modified().expect("mtime");
            std::fs::File::options()
                .write(true)
                .open(&dest)
                .and_then(|f| f.set_modified(mtime))
                .expect("set mtime");
        }
    }
}

#[test]
fn doctor_is_healthy_when_a_note_says_it_replaces_another() {
    let (_tmp, m) = fresh();
    write_note(
        &m,
        "old-pool.md",
        "---\nname: Old pool\n---\nThe pool was 20.\n",
    );
    write_note(
        &m,
        "new-pool.md",
        "---\nname: New pool\nsupersedes: [old-pool]\n---\nThis replaces [[old-pool]]: the pool is 40.\n",
    );
    m.index().expect("index");
    let report = m.doctor().expect("doctor");
    assert!(report.store_damage.is_empty(), "{:?}", report.store_damage);
    assert!(report.healthy);
}

/// `write` through a linked folder below memory/ exited 3 (a failure of the environment) while a
/// link at the note's own path exited 2: both are the id's choice, so both are bad arguments.
/// memory/ itself a link leaves no id to choose: a failure, exit 3.
#[test]
fn write_through_a_linked_folder_is_a_bad_argument_and_a_linked_memory_folder_a_failure() {
    let (tmp, root) = indexed_folder();
    let outside = tmp.path().join("elsewhere");
    std::fs::create_dir(&outside).expect("mkdir");
    std::os::unix::fs::symlink(&outside, root.join("memory/ext")).expect("link");
    let write = |id: &str| {
        common::output_with_stdin(
            common::bin()
                .arg("--dir")
                .arg(&root)
                .args(["write", id, "--name", "X"]),
            b"a body\n",
        )
        .expect("run")
    };
    let out = write("ext/x");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("memory/ext is a symbolic link"), "{stderr}");
    assert!(stderr.contains("choose an id outside"), "{stderr}");
    assert!(std::fs::read_dir(&outside).expect("ls").next().is_none());

    let body = tmp.path().join("body.txt");
    std::fs::write(&body, "a body\n").expect("write");
    let (_memory_outside, root) = {
        let (tmp, root) = indexed_folder();
        let outside = symlink_outside(tmp.path(), &root.join("memory"));
        ((tmp, outside), root)
    };
    let out = common::bin()
        .arg("--dir")
        .arg(&root)
        .args(["write", "x", "--name", "X", "--from"])
        .arg(&body)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
}

/// `mnemon --dir root args…`, killed and failed after 30 s: a hang fails the test, not CI.
fn mnemon_within_30s(root: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut child = common::bin()
        .arg("--dir")
        .arg(root)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("mnemon {args:?} still ran after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(status.success());
}

/// A named pipe where a file of index/ belongs blocked every command forever (the open, or the
/// first read, waited for a writer), and a device there (`/dev/zero`) was read until memory ran
/// out. Derived files are opened only when they are regular files: a pipe is damage, moved
/// aside and rebuilt; at the lock file, which holds nothing to rebuild, the command stops and
/// says what is there.
#[test]
fn a_named_pipe_where_an_index_file_belongs_blocks_nothing() {
    let (_clean_tmp, clean) = linked_memory();
    let want = answers(&clean, "pgbouncer sizing");
    for file in [
        "graph.cache",
        "lexical.manifest",
        "stats.snapshot",
        "segment",
    ] {
        let (_tmp, base) = linked_memory();
        mnemon(&base, &["recall", "pgbouncer sizing"]);
        let index = base.join("index");
        let path = if file == "segment" {
            std::fs::read_dir(&index)
                .expect("ls")
                .map(|e| e.expect("entry").path())
                .find(|p| p.extension().is_some_and(|x| x == "seg"))
                .expect("a segment")
        } else {
            index.join(file)
        };
        let _ = std::fs::remove_file(&path);
        mkfifo(&path);
        let out = mnemon_within_30s(&base, &["recall", "pgbouncer sizing"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{file}: {stderr}");
        assert_eq!(answers(&base, "pgbouncer sizing"), want, "{file}");
    }
    let (_tmp, base) = linked_memory();
    let lock = base.join("index/write.lock");
    let _ = std::fs::remove_file(&lock);
    mkfifo(&lock);
    std::fs::write(
        base.join("memory/new-note.md"),
        "---\nname: New\n---\nNew text.\n",
    )
    .expect("write");
    let out = mnemon_within_30s(&base, &["index"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("write.lock is a named pipe, not a regular file"),
        "{stderr}"
    );
    assert!(stderr.contains("move it away"), "{stderr}");
}

/// A named pipe where the index store belongs blocked `recall` forever: redb was handed the
/// pipe, failed on it, and the pipe, moved aside as damage, was then read to see whether a
/// stopped process had left it half-created (the read waited for a writer). It is moved aside
/// without being read, said to be a named pipe, and the store rebuilt from the notes.
#[test]
fn a_named_pipe_where_the_index_store_belongs_is_moved_aside_unread() {
    let (_clean_tmp, clean) = linked_memory();
    let want = answers(&clean, "pgbouncer sizing");
    let (_tmp, base) = linked_memory();
    let store = base.join("index/graph.redb");
    std::fs::remove_file(&store).expect("rm");
    mkfifo(&store);
    let out = mnemon_within_30s(&base, &["recall", "pgbouncer sizing"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "a named pipe stood where the index store {} belongs; moved it to {}",
            store.display(),
            base.join("index/graph.redb.damaged").display()
        )),
        "{stderr}"
    );
    assert!(std::fs::metadata(&store).expect("stat").is_file());
    assert_eq!(answers(&base, "pgbouncer sizing"), want);
    let out = mnemon_within_30s(&base, &["doctor"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A named pipe at the memory folder's `.gitignore` blocked every command, `init` too: the file
/// was read to look for mnemon's rules, and the read waited for a writer. The pipe is named and
/// left alone, and the command runs.
#[test]
fn a_named_pipe_at_gitignore_blocks_no_command() {
    let (_clean_tmp, clean) = linked_memory();
    let want = answers(&clean, "pgbouncer sizing");
    let (_tmp, base) = linked_memory();
    let gitignore = base.join(".gitignore");
    std::fs::remove_file(&gitignore).expect("rm");
    mkfifo(&gitignore);
    for args in [
        &["recall", "pgbouncer sizing"][..],
        &["index"],
        &["doctor"],
        &["init"],
    ] {
        let out = mnemon_within_30s(&base, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "could not update .gitignore: read {0}: {0} is a named pipe, not a regular file",
                gitignore.display()
            )),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("move it away"), "{args:?}: {stderr}");
    }
    use std::os::unix::fs::FileTypeExt;
    let kept = std::fs::symlink_metadata(&gitignore).expect("stat");
    assert!(kept.file_type().is_fifo());
    assert_eq!(answers(&base, "pgbouncer sizing"), want);
}

#[cfg(unix)]
/// A memory in `tmp` holding `n` notes `n0.md`.. named `Note i` with the body `body(i)`, closed
/// again: its root.
fn memory_of_notes(
    tmp: &std::path::Path,
    n: usize,
    body: impl Fn(usize) -> String,
) -> std::path::PathBuf {
    let m = Memory::init(tmp).expect("init");
    for i in 0..n {
        std::fs::write(
            m.dir().memory().join(format!("n{i}.md")),
            format!("---\nname: Note {i}\n---\n{}\n", body(i)),
        )
        .expect("write");
    }
    m.dir().root().to_path_buf()
}

/// `mnemon ARGS` under the shell limit `limit` (`-n 9`, `-f 16`), with stdin closed: (exit
/// code, stdout, stderr).
#[cfg(unix)]
fn mnemon_limited(root: &std::path::Path, limit: &str, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit {limit} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_mnemon"))
        .arg("--dir")
        .arg(root)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Regression: under a low open-file limit (`ulimit -n`), `index` left hundreds of notes
/// unread, called each "cannot read the note ...; check its permissions" and exited 0; `serve`
/// and `watch` panicked in tokio's signal setup (exit 101). Now a command either does all of
/// its work or fails at exit 3 with the limit named, whatever the limit.
#[cfg(unix)]
#[test]
fn a_low_open_file_limit_fails_whole_and_names_the_limit() {
    let tmp = tempfile::tempdir().expect("tmp");
    let notes = 600;
    let root = memory_of_notes(tmp.path(), notes, |i| format!("body {i}"));
    let (mut done, mut refused) = (0, 0);
    for limit in 5..=16 {
        std::fs::remove_dir_all(root.join("index")).expect("rm index");
        let (code, out, err) = mnemon_limited(&root, &format!("-n {limit}"), &["index", "--json"]);
        match code {
            0 => {
                let v: serde_json::Value = serde_json::from_str(&out).expect("json");
                assert_eq!(v["notes"], notes, "limit {limit}: {v} {err}");
                assert!(!err.contains("cannot read"), "limit {limit}: {err}");
                done += 1;
            }
            3 => {
                assert!(err.contains("ulimit -n"), "limit {limit}: {err}");
                refused += 1;
            }
            _ => panic!("limit {limit}: exit {code}: {err}"),
        }
        let (code, _, err) =
            mnemon_limited(&root, &format!("-n {limit}"), &["watch", "--for", "0"]);
        assert!(
            code == 0 || (code == 3 && err.contains("ulimit -n")),
            "watch, limit {limit}: exit {code}: {err}"
        );
        // No client on stdin: `serve` fails at exit 3 whatever the limit, never by a panic.
        let (code, _, err) = mnemon_limited(&root, &format!("-n {limit}"), &["serve"]);
        assert!(
            code == 3 && !err.contains("panicked"),
            "serve, limit {limit}: exit {code}: {err}"
        );
    }
    assert!(refused > 0, "no limit was low enough to matter");
    assert!(done > 0, "no limit was high enough to index");

    // `doctor --fix` took the notes it could not open for store damage and moved the healthy
    // store aside.
    let out = mnemon(&root, &["index"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let mut doctor_refused = 0;
    for limit in 5..=16 {
        let (code, out, err) = mnemon_limited(&root, &format!("-n {limit}"), &["doctor", "--fix"]);
        doctor_refused += usize::from(code == 3);
        assert!(
            code == 0 || (code == 3 && err.contains("ulimit -n")),
            "doctor, limit {limit}: exit {code}: {out} {err}"
        );
        assert!(
            !out.contains("damaged") && !err.contains("damaged"),
            "limit {limit}: {out} {err}"
        );
        let aside = std::fs::read_dir(root.join("index"))
            .expect("index")
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().contains("damaged"));
        assert!(!aside, "limit {limit}: a store was moved aside");
    }
    assert!(doctor_refused > 0, "no limit was low enough for doctor");
}

/// Regression: under a file-size limit (`ulimit -f`), `index` was killed by SIGXFSZ: exit 153
/// and not a word. The write fails instead, named with the limit, and the next run without it
/// indexes.
#[cfg(unix)]
#[test]
fn a_file_size_limit_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = memory_of_notes(tmp.path(), 200, |i| {
        format!("body {i} with words about pools and rollbacks")
    });
    let (code, _, err) = mnemon_limited(&root, "-f 8", &["index"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("File too large") && err.contains("ulimit -f"),
        "{err}"
    );
    let out = mnemon(&root, &["index", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["notes"], 200, "{v}");
}

/// Regression: when indexing a note failed after `write` had written its file (here the store
/// may not grow past a file-size limit), the error was the bare I/O error: the caller took the
/// write for failed, and its retry was refused as `exists`. The error says the note is saved,
/// with its sha256, and the next index reads it.
#[cfg(unix)]
#[test]
fn a_note_written_but_not_indexed_is_said_to_be_saved() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = memory_of_notes(tmp.path(), 60, |i| {
        format!("body {i} about pools, rollbacks and canaries")
    });
    Memory::open(&root).expect("open").index().expect("index");
    let store_len = std::fs::metadata(root.join("index/graph.redb"))
        .expect("store")
        .len();
    // A body well under the limit (`ulimit -f` counts blocks of 512 or 1024 bytes), a store
    // over it: the note is written, the store cannot take it.
    let body: String = (0..1500).map(|i| format!("okapi{i} ")).collect();
    assert!(
        store_len > 40 * 1024 && body.len() < 20 * 1024,
        "{store_len}"
    );
    let body_file = tmp.path().join("body.txt");
    std::fs::write(&body_file, &body).expect("body");
    let from = body_file.to_string_lossy().into_owned();
    let (code, _, err) = mnemon_limited(
        &root,
        "-f 80",
        &["write", "big", "--name", "Big", "--from", &from],
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("memory/big.md was written (sha256 ")
            && err.contains("indexing it failed")
            && err.contains("do not write it again"),
        "{err}"
    );
    assert!(root.join("memory/big.md").is_file());
    let out = mnemon(&root, &["index", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = mnemon(&root, &["recall", "--json", "okapi1234"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["results"][0]["id"], "big", "{v}");
}

/// `mnemon --dir ROOT ARGS` as a user whom file modes bind ([`common::run_unprivileged`]).
#[cfg(unix)]
fn mnemon_bound_by_modes(root: &std::path::Path, args: &[&str]) -> Option<std::process::Output> {
    let root = root.to_str().expect("a UTF-8 temp path");
    common::run_unprivileged(&[&["--dir", root], args].concat())
}

/// Give every folder below `root` (itself included) mode `dirs` and every file mode `files`.
#[cfg(unix)]
fn set_modes_below(root: &std::path::Path, dirs: u32, files: u32) {
    for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
        let dir = entry.file_type().is_dir();
        common::chmod(entry.path(), if dir { dirs } else { files });
    }
}

/// Regression: a note whose synthesized edges a change elsewhere moved, unreadable at that
/// moment (its folder's mode 000), kept its old edges for good: nothing about the file itself
/// changes when the folder's mode is restored, so no scan read it again. An edge to a deleted
/// note stayed, and `doctor` called it store damage. The note is parsed again by the next scan.
#[cfg(unix)]
#[test]
fn a_note_unreadable_when_its_edges_moved_is_recomputed_once_readable() {
    let tmp = tempfile::tempdir().expect("tmp");
    let top = tmp.path().join("m");
    std::fs::create_dir_all(top.join("memory/d")).expect("mkdir");
    let memory = top.join("memory");
    for i in 1..=6 {
        std::fs::write(
            memory.join(format!("n{i}.md")),
            format!("Note {i} about generic things like coffee and weather number {i}.\n"),
        )
        .expect("write");
    }
    std::fs::write(
        memory.join("d/a.md"),
        "The zorblax quintessence gallimaufry calibration for the flux capacitor.\n",
    )
    .expect("write");
    std::fs::write(
        memory.join("b.md"),
        "Zorblax quintessence gallimaufry tuning: the flux capacitor drifts.\n",
    )
    .expect("write");
    // Every folder on the way open to the user the modes bind.
    for dir in [tmp.path(), &top, &memory, &memory.join("d")] {
        common::chmod(dir, 0o777);
    }
    let run = |args: &[&str]| mnemon_bound_by_modes(&top, args);
    let Some(out) = run(&["index"]) else {
        eprintln!("skipped: running as root without setpriv");
        return;
    };
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let edges_of_a = || -> Vec<String> {
        let out = run(&["show", "d/a", "--json"]).expect("show");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["edges_out"]
            .as_array()
            .expect("edges_out")
            .iter()
            .filter_map(|e| e["to"].as_str())
            .map(str::to_string)
            .collect()
    };
    assert!(
        edges_of_a().contains(&"b".to_string()),
        "{:?}",
        edges_of_a()
    );

    common::chmod(&memory.join("d"), 0o000);
    std::fs::remove_file(memory.join("b.md")).expect("rm");
    let out = run(&["index"]).expect("index");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    common::chmod(&memory.join("d"), 0o777);
    let out = run(&["index"]).expect("index");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        !edges_of_a().contains(&"b".to_string()),
        "{:?}",
        edges_of_a()
    );
    let out = run(&["doctor", "--json"]).expect("doctor");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// A memory folder below `tmp` holding one note, indexed, then `index/` made read-only (its
/// files writable) and the note edited: its root.
#[cfg(unix)]
fn indexed_then_read_only_and_edited(tmp: &std::path::Path) -> std::path::PathBuf {
    let top = tmp.join("m");
    std::fs::create_dir_all(top.join("memory")).expect("mkdir");
    std::fs::write(
        top.join("memory/pool.md"),
        "---\nname: Pool sizing\n---\nThe pgbouncer pool holds 20.\n",
    )
    .expect("write");
    let out = mnemon(&top, &["index"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    set_modes_below(tmp, 0o777, 0o666);
    common::chmod(&top.join("index"), 0o555);
    std::fs::write(
        top.join("memory/pool.md"),
        "---\nname: Pool sizing\n---\nThe pgbouncer pool holds 25 now.\n",
    )
    .expect("edit");
    top
}

/// Regression: with `index/` made read-only but its files writable, every command that found a
/// note changed failed at exit 3 ("create temp file ...: Permission denied"): the store opened
/// for writing, and the lexical index beside it could not be. The index is read as it is, as
/// with a read-only store file.
#[cfg(unix)]
#[test]
fn a_read_only_index_folder_answers_from_the_index_as_it_is() {
    let tmp = tempfile::tempdir().expect("tmp");
    let top = indexed_then_read_only_and_edited(tmp.path());
    let Some(out) = mnemon_bound_by_modes(&top, &["recall", "--json", "pgbouncer pool"]) else {
        eprintln!("skipped: running as root without setpriv");
        return;
    };
    common::chmod(&top.join("index"), 0o777);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["results"][0]["id"], "pool", "{v}");
}

/// A server on an index it may only read answered recalls from the index as last written and
/// said that notes had changed since only on its stderr, which no agent reads: its recall
/// answers say it, with how many.
#[cfg(unix)]
#[test]
fn a_server_on_a_read_only_index_says_in_its_answers_that_notes_changed_since() {
    let tmp = tempfile::tempdir().expect("tmp");
    let top = indexed_then_read_only_and_edited(tmp.path());
    let Some(mut server) = common::mcp::Server::start_unprivileged(&top) else {
        common::chmod(&top.join("index"), 0o777);
        eprintln!("skipped: running as root without setpriv");
        return;
    };
    let call = |server: &mut common::mcp::Server, id: u64| {
        let r = server.rpc(
            id,
            "tools/call",
            serde_json::json!({"name": "memory_recall", "arguments": {"query": "pgbouncer pool"}}),
        );
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .to_string();
        serde_json::from_str::<serde_json::Value>(&text).expect("json")
    };
    let v = call(&mut server, 2);
    assert_eq!(v["results"][0]["id"], "pool", "{v}");
    let warning = v["warning"].as_str().unwrap_or_default();
    assert!(
        warning.contains("may only read the index, and 1 note changed"),
        "{v}"
    );
    // Every answer says it, not only the first.
    let again = call(&mut server, 3);
    assert_eq!(again["warning"], v["warning"], "{again}");
    assert!(server.finish());
    common::chmod(&top.join("index"), 0o777);
    // Writable again, and indexed: nothing to warn about.
    assert_eq!(mnemon(&top, &["index"]).status.code(), Some(0));
    let mut server = common::mcp::Server::start(&top);
    let fresh = call(&mut server, 2);
    assert!(fresh.get("warning").is_none(), "{fresh}");
    assert!(server.finish());
}

/// Regression: `doctor` run by a user who may not read a note called the memory healthy when
/// the note was unchanged since it was indexed: the index's scan never opens such a note, and
/// doctor's full parse met the failure but only kept the note out of its comparison.
#[cfg(unix)]
#[test]
fn doctor_names_a_note_it_may_not_read_though_the_note_is_unchanged() {
    let tmp = tempfile::tempdir().expect("tmp");
    let top = tmp.path().join("m");
    std::fs::create_dir_all(top.join("memory")).expect("mkdir");
    std::fs::write(top.join("memory/public.md"), "public otters\n").expect("write");
    std::fs::write(
        top.join("memory/secret.md"),
        "a private body about walruses\n",
    )
    .expect("write");
    set_modes_below(tmp.path(), 0o777, 0o666);
    // The note's mode is set before it is indexed: its stat then never changes again.
    common::chmod(&top.join("memory/secret.md"), 0o600);
    assert_eq!(mnemon(&top, &["index"]).status.code(), Some(0));
    // Settled entries: read again once their change is older than the scan's window.
    std::thread::sleep(std::time::Duration::from_millis(3200));
    assert_eq!(mnemon(&top, &["index"]).status.code(), Some(0));
    set_modes_below(&top.join("index"), 0o777, 0o666);
    set_modes_below(&top.join("events"), 0o777, 0o666);
    let Some(out) = mnemon_bound_by_modes(&top, &["doctor", "--json"]) else {
        eprintln!("skipped: running as root without setpriv");
        return;
    };
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(out.status.code(), Some(1), "{v}");
    assert_eq!(v["healthy"], false, "{v}");
    let named: Vec<&str> = v["walk_errors"]
        .as_array()
        .expect("walk_errors")
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert_eq!(named, ["secret.md"], "{v}");
}

/// Regression: `show` on an index this process may only read gave the indexed (old) text of a
/// note edited since, beside the sha256 of the edited file: a replacement written with that
/// sha256 would overwrite an edit nobody saw. It says the note changed, as `recall` does.
#[cfg(unix)]
#[test]
fn show_on_a_read_only_index_refuses_a_note_changed_since() {
    let tmp = tempfile::tempdir().expect("tmp");
    let top = tmp.path().join("m");
    std::fs::create_dir_all(top.join("memory")).expect("mkdir");
    std::fs::write(top.join("memory/walrus.md"), "the walrus count is 1111\n").expect("write");
    std::fs::write(top.join("memory/otter.md"), "the otter count is 7\n").expect("write");
    assert_eq!(mnemon(&top, &["index"]).status.code(), Some(0));
    set_modes_below(tmp.path(), 0o755, 0o644);
    std::fs::write(top.join("memory/walrus.md"), "the walrus count is 2222\n").expect("edit");
    let Some(out) = mnemon_bound_by_modes(&top, &["show", "walrus", "--json"]) else {
        eprintln!("skipped: running as root without setpriv");
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("changed since the folder was last indexed"),
        "{err}"
    );
    let out = mnemon_bound_by_modes(&top, &["show", "otter", "--json"]).expect("show");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        v["excerpt"]
            .as_str()
            .is_some_and(|e| e.contains("otter count is 7")),
        "{v}"
    );
}

/// A file named `memory` where the notes folder belongs: every command said to run `mnemon
/// init`, and `init` then failed ("a file stands where this folder belongs"). The first message
/// says to move the file. A folder at `.gitignore` was said to be a file of index/, rebuilt
/// from the notes: it is a file mnemon makes again, as those are.
#[test]
fn a_file_where_the_notes_folder_belongs_is_named_with_the_fix() {
    let tmp = tempfile::tempdir().expect("tmp");
    let top = tmp.path().join("m");
    std::fs::create_dir_all(&top).expect("mkdir");
    std::fs::write(top.join("memory"), "not a folder").expect("write");
    let out = mnemon(&top, &["recall", "x"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a file where the notes folder belongs: move it away"),
        "{err}"
    );
    std::fs::remove_file(top.join("memory")).expect("rm");
    std::fs::create_dir_all(top.join("memory")).expect("mkdir");
    std::fs::create_dir_all(top.join(".gitignore")).expect("mkdir");
    let out = mnemon(&top, &["recall", "x"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(".gitignore"), "{err}");
    assert!(err.contains("mnemon makes the file again"), "{err}");
}

/// `index/graph.redb` with an id's bytes made invalid UTF-8 wherever the store holds it (a read
/// of it panics inside redb).
fn damage_an_id(root: &std::path::Path) {
    let store = root.join("index/graph.redb");
    let mut bytes = std::fs::read(&store).expect("read");
    let needle = b"deploy-notes";
    let mut damaged = 0;
    let mut at = 0;
    while let Some(found) = bytes[at..].windows(needle.len()).position(|w| w == needle) {
        bytes[at + found + 3] ^= 0xFF;
        damaged += 1;
        at += found + needle.len();
    }
    assert!(damaged > 0, "the id in the store");
    std::fs::write(&store, &bytes).expect("write");
}

/// Regression: `write` on a damaged store ran a second time once the store was rebuilt. With
/// the body on stdin the second run found stdin drained ("the body is empty": the caller's text
/// lost); a replacement the first run had already written was refused by the second as "changed
/// since it was read", exit 1. The write is done once and reported as done.
#[test]
fn a_write_that_finds_the_store_damaged_is_done_once_and_reported_written() {
    let (_tmp, root) = linked_memory();
    damage_an_id(&root);
    let out = common::output_with_stdin(
        common::bin()
            .arg("--dir")
            .arg(&root)
            .args(["write", "new-note", "--name", "New note"]),
        b"my important text about sourdough\n",
    )
    .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("index store was damaged"), "{stderr}");
    let written = std::fs::read_to_string(root.join("memory/new-note.md")).expect("written");
    assert!(
        written.ends_with("my important text about sourdough\n"),
        "{written}"
    );
    assert_eq!(
        ids(&look(&Memory::open(&root).expect("open"), "sourdough")),
        ["new-note"]
    );

    let (_tmp, root) = linked_memory();
    let sha = mnemon::sha256_hex(
        &std::fs::read(root.join("memory/postgres-notes.md")).expect("read the note"),
    );
    damage_an_id(&root);
    let body = root.join("body.txt");
    std::fs::write(&body, "replacement about sourdough, see [[deploy-notes]]\n").expect("body");
    let out = mnemon(
        &root,
        &[
            "write",
            "postgres-notes",
            "--from",
            body.to_str().expect("utf-8 path"),
            "--expected-sha256",
            &sha,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.contains("index store was damaged"), "{stderr}");
    assert!(stdout.contains("replacing the note"), "{stdout}");
    let written = std::fs::read_to_string(root.join("memory/postgres-notes.md")).expect("read");
    assert!(
        written.ends_with("replacement about sourdough, see [[deploy-notes]]\n"),
        "{written}"
    );
    assert_eq!(
        ids(&look(&Memory::open(&root).expect("open"), "sourdough")).first(),
        Some(&"postgres-notes")
    );
}

/// Regression: a store this process may not read at all (`chmod 000`, another user's) was
/// reported as "damaged and cannot be rebuilt by this process": it is a permission to fix, said
/// as one, and the store is left as it is.
#[test]
fn an_unreadable_store_is_a_permission_to_fix_not_damage() {
    let (tmp, root) = indexed_folder();
    // `nobody` must reach the folder, and may write nothing but what it could anyway.
    common::chmod(tmp.path(), 0o755);
    for d in [
        root.clone(),
        root.join("memory"),
        root.join("index"),
        root.join("events"),
    ] {
        common::chmod(&d, 0o755);
    }
    let store = root.join("index/graph.redb");
    common::chmod(&store, 0o000);
    let before = std::fs::read(&store).expect("root reads it");
    let Some(out) = common::run_unprivileged(&[
        "--dir",
        root.to_str().expect("utf-8 path"),
        "recall",
        "pgbouncer pool",
    ]) else {
        eprintln!("skipped: no way to run as another user here");
        return;
    };
    if !common::running_as_root() && std::fs::File::open(&store).is_ok() {
        eprintln!("skipped: this user reads a file of mode 000");
        return;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("graph.redb"), "{stderr}");
    assert!(stderr.contains("ls -l"), "{stderr}");
    assert!(!stderr.contains("damaged"), "{stderr}");
    assert_eq!(std::fs::read(&store).expect("root reads it"), before);
    assert!(!root.join("index/graph.redb.damaged").exists());
}
