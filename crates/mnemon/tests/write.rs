//! Writing notes through mnemon (`Memory::write_note`): a new note is recallable when the call
//! returns and reads back with its fields; a note is replaced only with the sha256 of the file as
//! it is now; bad ids, oversized or empty bodies, and folders that are links or files are refused
//! with the fix, and nothing is ever written outside `memory/`.

mod common;

use common::{fresh, write_note};
use mnemon::recall::Query;
use mnemon::{
    Error, Memory, NoteType, NoteWriteError, OnDuplicate, WriteRefusal, WriteRequest, sha256_hex,
};
use std::path::{Path, PathBuf};

fn ask(memory: &Memory, text: &str) -> Vec<String> {
    let mut q = Query::text(text);
    q.record = false;
    let found = memory.recall(&q).expect("recall");
    found.results.into_iter().map(|h| h.id).collect()
}

/// Every file and folder below `root` (links not followed), relative, sorted, leaving out the
/// derived `index/` and the `events/` log.
fn tree(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| {
            e.path()
                .strip_prefix(root)
                .expect("below root")
                .to_path_buf()
        })
        .filter(|p| {
            !p.starts_with(".mnemon/index")
                && !p.starts_with(".mnemon/events")
                && !p.starts_with("index")
                && !p.starts_with("events")
        })
        .collect();
    out.sort();
    out
}

fn pool_request() -> WriteRequest {
    WriteRequest {
        name: Some("Pool sizing: \"the\" limit # not a comment".into()),
        description: Some("Why the connection pool times out".into()),
        note_type: Some(NoteType::Project),
        tags: vec!["postgres".into(), " pool ".into(), "postgres".into()],
        related: vec!["[[ops/deploy]]".into()],
        pin: Some(true),
        ..WriteRequest::new(
            "ops/pool-sizing",
            "The connection pool times out at 20 connections under month-end load.",
        )
    }
}

#[test]
fn a_new_note_is_recallable_at_once_and_reads_back_with_its_fields() {
    let (tmp, m) = fresh();
    let out = m.write_note(&pool_request()).expect("write");
    assert!(out.written && out.created, "{out:?}");
    assert_eq!(out.refused, None);
    assert_eq!(out.path, "memory/ops/pool-sizing.md");
    let file = tmp.path().join(".mnemon/memory/ops/pool-sizing.md");
    let bytes = std::fs::read(&file).expect("note file");
    assert_eq!(out.sha256.as_deref(), Some(sha256_hex(&bytes).as_str()));
    assert!(
        out.message.starts_with("created memory/ops/pool-sizing.md"),
        "{}",
        out.message
    );

    // Recallable without an index call.
    assert_eq!(ask(&m, "connection pool month-end")[0], "ops/pool-sizing");

    // The file parses back, as the scan reads it, with the fields asked (normalized).
    let parsed = mnemon::notes::parse_note("ops/pool-sizing", &bytes);
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(
        parsed.meta.name.as_deref(),
        Some("Pool sizing: \"the\" limit # not a comment")
    );
    assert_eq!(
        parsed.meta.description.as_deref(),
        Some("Why the connection pool times out")
    );
    assert_eq!(parsed.meta.note_type, NoteType::Project);
    assert_eq!(parsed.meta.tags, vec!["postgres", "pool"]);
    assert_eq!(parsed.meta.related, vec!["ops/deploy"]);
    assert!(parsed.meta.pin);
    assert!(parsed.meta.created_s.is_some() && parsed.meta.updated_s.is_some());
    assert_eq!(
        parsed.body,
        "The connection pool times out at 20 connections under month-end load.\n"
    );

    let shown = m.show("ops/pool-sizing").expect("show");
    assert_eq!(shown.path, "ops/pool-sizing.md");
    assert_eq!(shown.note_type, "project");
    assert!(shown.pin);
    assert_eq!(shown.sha256, out.sha256);
}

#[test]
fn a_note_is_replaced_only_with_the_sha256_of_the_file_as_it_is_now() {
    let (tmp, m) = fresh();
    let first = m.write_note(&pool_request()).expect("write");
    let file = tmp.path().join(".mnemon/memory/ops/pool-sizing.md");
    let before = std::fs::read(&file).expect("note file");

    // Exists, no hash: refused with the current sha256 and how to get it.
    let mut again = pool_request();
    again.body = "The pool now times out at 50 connections after the pgbouncer upgrade.".into();
    let out = m.write_note(&again).expect("write");
    assert!(!out.written && !out.created);
    assert_eq!(out.refused, Some(WriteRefusal::Exists));
    assert_eq!(out.sha256, first.sha256);
    assert!(out.message.contains("expected_sha256"), "{}", out.message);
    assert_eq!(std::fs::read(&file).expect("file"), before, "untouched");

    // A stale hash: refused, the file untouched, the current sha256 reported.
    again.expected_sha256 = Some(sha256_hex(b"what someone read long ago"));
    let out = m.write_note(&again).expect("write");
    assert_eq!(out.refused, Some(WriteRefusal::Stale));
    assert_eq!(out.sha256, first.sha256);
    assert!(
        out.message.contains(first.sha256.as_deref().unwrap()),
        "{}",
        out.message
    );
    assert_eq!(std::fs::read(&file).expect("file"), before, "untouched");
    // `on_duplicate: create` concerns near-duplicates only: it never overrides a stale hash.
    again.on_duplicate = OnDuplicate::Create;
    let out = m.write_note(&again).expect("write");
    assert_eq!(out.refused, Some(WriteRefusal::Stale));
    assert_eq!(std::fs::read(&file).expect("file"), before, "untouched");

    // The hash `show` gives (upper case is fine): replaced, re-indexed at once.
    again.expected_sha256 = m.show("ops/pool-sizing").expect("show").sha256;
    again.expected_sha256 = again.expected_sha256.map(|h| h.to_uppercase());
    let out = m.write_note(&again).expect("write");
    assert!(out.written && !out.created, "{out:?}");
    assert!(out.message.starts_with("replaced"), "{}", out.message);
    let after = std::fs::read(&file).expect("file");
    assert_eq!(out.sha256.as_deref(), Some(sha256_hex(&after).as_str()));
    assert_ne!(out.sha256, first.sha256);
    assert_eq!(ask(&m, "pgbouncer upgrade")[0], "ops/pool-sizing");
    assert!(ask(&m, "month-end").is_empty(), "the old text is gone");
    assert_eq!(m.index().expect("index").notes, 1, "one note, not two");
    // created_at is kept from the note replaced.
    let created = |b: &[u8]| mnemon::notes::parse_note("x", b).meta.created_s;
    assert_eq!(created(&after), created(&before));

    // A hash given for a note that is gone: refused as missing, nothing created.
    std::fs::remove_file(&file).expect("rm");
    again.expected_sha256 = out.sha256.clone();
    let out = m.write_note(&again).expect("write");
    assert_eq!(out.refused, Some(WriteRefusal::Missing));
    assert_eq!(out.sha256, None);
    assert!(!file.exists());
}

/// Regression: `pin: false` given to replace a pinned note (MCP `memory_write`) kept it pinned:
/// the request could not tell "unpin" from "not given". `Some(false)` unpins, `None` keeps.
#[test]
fn a_replacement_unpins_only_when_told_and_keeps_the_pin_otherwise() {
    let (_tmp, m) = fresh();
    m.write_note(&pool_request()).expect("write");
    assert!(m.show("ops/pool-sizing").expect("show").pin);
    let replace = |pin: Option<bool>, body: &str| {
        let mut again = pool_request();
        again.pin = pin;
        again.body = body.into();
        again.expected_sha256 = m.show("ops/pool-sizing").expect("show").sha256;
        let out = m.write_note(&again).expect("write");
        assert!(out.written, "{out:?}");
        m.show("ops/pool-sizing").expect("show").pin
    };
    assert!(
        replace(None, "Kept pinned: the pool holds 20."),
        "None keeps the pin"
    );
    assert!(
        !replace(Some(false), "Unpinned: the pool holds 30."),
        "false unpins"
    );
    assert!(!replace(None, "Still unpinned: the pool holds 40."));
    assert!(replace(Some(true), "Pinned again: the pool holds 50."));

    // A note written by hand says `pinned: true` (read as `pin`): unpinning removes that key
    // too (the check that the note reads back as given refused the write).
    let (tmp, m) = fresh();
    let file = write_note(
        &m,
        "hand.md",
        "---\nname: Hand\npinned: true\n---\nBy hand.\n",
    );
    m.index().expect("index");
    assert!(m.show("hand").expect("show").pin);
    let mut unpin = WriteRequest::new("hand", "By hand, unpinned.");
    unpin.pin = Some(false);
    unpin.expected_sha256 = m.show("hand").expect("show").sha256;
    let out = m.write_note(&unpin).expect("write");
    assert!(out.written, "{out:?}");
    assert!(!m.show("hand").expect("show").pin);
    let text = std::fs::read_to_string(&file).expect("read");
    let front = text.split("---\n").nth(1).unwrap_or_default();
    assert!(!front.contains("pin"), "{text}");
    drop(tmp);
}

/// Regression: replacing a note wrote a new file with the default mode and this process's
/// owner: a note kept private (`chmod 600`) became readable by all, and a note its user owned,
/// replaced by a write run as root, became root's (its user could no longer edit it). The
/// replacement keeps owner, group and mode, as an editor saving by rename does.
#[cfg(unix)]
#[test]
fn a_replaced_note_keeps_its_owner_group_and_mode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (tmp, m) = fresh();
    m.write_note(&pool_request()).expect("write");
    let file = tmp.path().join(".mnemon/memory/ops/pool-sizing.md");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).expect("chown");
    }
    let mut again = pool_request();
    again.body = "The pool now times out at 50 connections after the pgbouncer upgrade.".into();
    again.expected_sha256 = m.show("ops/pool-sizing").expect("show").sha256;
    let out = m.write_note(&again).expect("write");
    assert!(out.written, "{out:?}");
    let meta = std::fs::metadata(&file).expect("stat");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
    if root {
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    }
    assert!(
        std::fs::read_to_string(&file)
            .expect("read")
            .contains("pgbouncer upgrade")
    );
}

#[test]
fn bad_ids_are_refused_with_the_fix_and_nothing_is_written_anywhere() {
    let (tmp, m) = fresh();
    let before = tree(tmp.path());
    for (id, says) in [
        ("../x", "cannot leave memory/"),
        ("a/../../x", "cannot leave memory/"),
        ("/etc/x", "ids are relative to memory/"),
        ("", "empty id"),
        ("a\\b", "use / between folders"),
        ("a//b", "empty path component"),
        ("bad\u{1}char", "control character"),
        (".hidden", "remove the leading dot"),
        ("a/.git/x", "remove the leading dot"),
        ("C:/x", "drive prefix"),
        ("decisions/pool.md", "so use `decisions/pool`"),
        ("x.MD", "so use `x`"),
        (
            "ops/pool (conflicted copy 2026-12-05)",
            "write to `ops/pool`, or choose another id",
        ),
    ] {
        let e = m
            .write_note(&WriteRequest::new(id, "some body"))
            .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::Write { .. }) && text.contains(says),
            "{id:?}: {text}"
        );
        assert!(
            text.starts_with(&format!("cannot write note `{id}`")),
            "{text}"
        );
    }
    let long = "x".repeat(mnemon::args::MAX_NAME_BYTES);
    let e = m.write_note(&WriteRequest::new(long, "b")).unwrap_err();
    assert!(e.to_string().contains("use a shorter name"), "{e}");
    assert_eq!(tree(tmp.path()), before, "nothing written");
    assert!(!tmp.path().join("x.md").exists() && !tmp.path().join(".mnemon/x.md").exists());
}

#[test]
fn bodies_that_cannot_be_a_note_are_refused_with_the_fix() {
    let (tmp, m) = fresh();
    let before = tree(tmp.path());
    let refused = |req: WriteRequest| -> NoteWriteError {
        match m.write_note(&req) {
            Err(Error::Write { reason, .. }) => reason,
            other => panic!("{other:?}"),
        }
    };
    let max = mnemon::args::MAX_NOTE_BYTES;
    let e = refused(WriteRequest::new("big", "x".repeat(max + 1)));
    assert_eq!(
        e,
        NoteWriteError::TooLarge {
            bytes: max + 1,
            max
        }
    );
    assert!(e.to_string().contains("split it into smaller notes"), "{e}");
    // The body alone fits; with its frontmatter it does not.
    let e = refused(WriteRequest::new("big", "x".repeat(max - 5)));
    assert!(
        matches!(e, NoteWriteError::TooLarge { bytes, .. } if bytes > max),
        "{e}"
    );
    assert_eq!(
        refused(WriteRequest::new("e", " \n\t")),
        NoteWriteError::EmptyBody
    );
    let e = refused(WriteRequest::new("fm", "---\nname: x\n---\nbody"));
    assert_eq!(e, NoteWriteError::BodyHasFrontmatter);
    assert!(e.to_string().contains("pass name, description"), "{e}");
    // What the scan would report as a problem is refused with the problem's text.
    let mut own = WriteRequest::new("self", "body");
    own.supersedes = vec!["self".into()];
    let e = refused(own);
    assert!(e.to_string().contains("links to itself"), "{e}");
    // A refusal writes nothing: it does not say the link "was ignored", as the scan's text does.
    assert!(!e.to_string().contains("ignored"), "{e}");
    let e = refused(WriteRequest::new(
        "conflict",
        "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> x\n",
    ));
    assert!(e.to_string().contains("merge-conflict"), "{e}");
    let mut bad_link = WriteRequest::new("l", "body");
    bad_link.related = vec!["../../etc/passwd".into()];
    let e = refused(bad_link);
    assert!(
        e.to_string().contains("`related` entry `../../etc/passwd`"),
        "{e}"
    );
    let mut bad_hash = WriteRequest::new("h", "body");
    bad_hash.expected_sha256 = Some("abc".into());
    assert!(matches!(
        refused(bad_hash),
        NoteWriteError::BadSha256 { .. }
    ));
    assert_eq!(tree(tmp.path()), before, "nothing written");
}

#[cfg(unix)]
#[test]
fn links_and_files_on_the_way_are_refused_and_nothing_is_written_outside() {
    let (tmp, m) = fresh();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    let secret = outside.join("secret.md");
    std::fs::write(&secret, "SECRET").expect("write");
    let memory = m.dir().memory();
    std::os::unix::fs::symlink(&outside, memory.join("out")).expect("link");
    std::os::unix::fs::symlink(&secret, memory.join("alias.md")).expect("link");
    std::fs::write(memory.join("plain"), "a file").expect("write");

    // A linked folder on the way, at any depth.
    for id in ["out/x", "out/deeper/x", "out/secret"] {
        let e = m.write_note(&WriteRequest::new(id, "body")).unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Write { reason: NoteWriteError::LinkedFolder { path, .. }, .. }
                    if path == "memory/out"
            ),
            "{id}: {e}"
        );
        assert!(
            e.to_string().contains("replace the link by a folder"),
            "{e}"
        );
    }
    // A link at the note's own path is never followed, nor replaced.
    let mut req = WriteRequest::new("alias", "body");
    req.expected_sha256 = Some(sha256_hex(b"SECRET"));
    let e = m.write_note(&req).unwrap_err();
    assert!(
        e.to_string().contains("symbolic link, not a regular file"),
        "{e}"
    );
    assert!(
        std::fs::symlink_metadata(memory.join("alias.md"))
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert!(e.to_string().contains("never follows a link"), "{e}");
    // A folder or a named pipe at the note's path: refused with advice for what it is.
    std::fs::create_dir(memory.join("dir.md")).expect("mkdir");
    let e = m.write_note(&WriteRequest::new("dir", "body")).unwrap_err();
    assert!(
        e.to_string().contains("is a folder, not a regular file"),
        "{e}"
    );
    assert!(!e.to_string().contains("link"), "{e}");
    let fifo = std::ffi::CString::new(memory.join("pipe.md").as_os_str().as_encoded_bytes())
        .expect("path");
    // SAFETY: a NUL-terminated path living across the call.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let e = m
        .write_note(&WriteRequest::new("pipe", "body"))
        .unwrap_err();
    assert!(
        e.to_string().contains("named pipe, not a regular file"),
        "{e}"
    );
    assert!(
        e.to_string().contains("move it away") && !e.to_string().contains("link"),
        "{e}"
    );
    // A file where a folder should be.
    let e = m
        .write_note(&WriteRequest::new("plain/x", "body"))
        .unwrap_err();
    assert!(
        e.to_string().contains("memory/plain is not a folder"),
        "{e}"
    );

    let listed: Vec<_> = std::fs::read_dir(&outside)
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(listed, vec![std::ffi::OsString::from("secret.md")]);
    assert_eq!(std::fs::read(&secret).expect("read"), b"SECRET");

    // memory/ itself a link: refused too.
    let (tmp2, m2) = fresh();
    let real = tmp2.path().join("real-memory");
    std::fs::rename(m2.dir().memory(), &real).expect("mv");
    std::os::unix::fs::symlink(&real, m2.dir().memory()).expect("link");
    let e = m2.write_note(&WriteRequest::new("x", "body")).unwrap_err();
    assert!(matches!(e, Error::Symlinked { .. }), "{e}");
    assert!(std::fs::read_dir(&real).expect("ls").next().is_none());
}

#[test]
fn subfolder_ids_create_their_folders_and_leave_no_temp_file() {
    let (_tmp, m) = fresh();
    let out = m
        .write_note(&WriteRequest::new(
            "runbooks/db/failover",
            "Promote the replica with pg_ctl promote, then repoint pgbouncer.",
        ))
        .expect("write");
    assert!(out.written && out.created);
    assert_eq!(out.path, "memory/runbooks/db/failover.md");
    assert_eq!(ask(&m, "promote replica")[0], "runbooks/db/failover");
    assert_eq!(
        m.show("runbooks/db/failover").expect("show").path,
        "runbooks/db/failover.md"
    );
    let folder = m.dir().memory().join("runbooks/db");
    let names: Vec<_> = std::fs::read_dir(&folder)
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("failover.md")]);
    // A second note in the same, now existing, folder.
    let out = m
        .write_note(&WriteRequest::new(
            "runbooks/db/backup",
            "Nightly pg_basebackup at 02:00.",
        ))
        .expect("write");
    assert!(out.written);
    assert_eq!(m.index().expect("index").notes, 2);
}

#[test]
fn a_write_into_a_memory_never_indexed_keeps_the_notes_already_there_recallable() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join(".mnemon");
    {
        let m = Memory::init(&root).expect("init");
        write_note(
            &m,
            "kafka.md",
            "---\nname: Kafka\n---\nKafka retention is seven days.\n",
        );
    }
    let m = Memory::open(&root).expect("open");
    let out = m
        .write_note(&WriteRequest::new(
            "redis",
            "Redis eviction policy is allkeys-lru.",
        ))
        .expect("write");
    assert!(out.written);
    assert_eq!(ask(&m, "kafka retention")[0], "kafka");
    assert_eq!(ask(&m, "redis eviction")[0], "redis");
}

/// Replacing a note's body through `write` (the README's own example: `--from new-body.md
/// --expected-sha256 ...`) dropped its name, type, tags and links, and every key mnemon does not
/// write (`ttl_days`, `part_of`, a user's own): the replacement keeps what the request leaves out.
#[test]
fn a_replacement_keeps_the_frontmatter_the_request_leaves_out() {
    let (tmp, m) = fresh();
    let file = tmp.path().join(".mnemon/memory/ops/pool-sizing.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "---\nname: Pool sizing\ntype: reference\ntags: [postgres]\nttl_days: 30\npart_of: [ops]\nowner: dana\nrelated: [ops/deploy]\ncreated_at: 2026-01-20\n---\nThe pool times out at 20.\n",
    )
    .unwrap();
    m.index().unwrap();
    let mut body_only = WriteRequest::new("ops/pool-sizing", "The pool times out at 50 now.");
    body_only.expected_sha256 = m.show("ops/pool-sizing").unwrap().sha256;
    let out = m.write_note(&body_only).expect("write");
    assert!(out.written, "{out:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed = mnemon::notes::parse_note("ops/pool-sizing", text.as_bytes());
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(parsed.meta.name.as_deref(), Some("Pool sizing"));
    assert_eq!(parsed.meta.note_type, NoteType::Reference);
    assert_eq!(parsed.meta.tags, ["postgres"]);
    assert_eq!(parsed.meta.ttl_days, Some(30));
    assert_eq!(parsed.meta.part_of, ["ops"]);
    assert_eq!(parsed.meta.related, ["ops/deploy"]);
    assert!(text.contains("owner: dana"), "{text}");
    assert_eq!(parsed.body, "The pool times out at 50 now.\n");
    // The key order of the file is kept; created_at stays, updated_at is new.
    assert!(
        text.starts_with("---\nname: Pool sizing\ntype: reference\n"),
        "{text}"
    );
    assert_eq!(parsed.meta.created_s, Some(1_768_867_200));
    assert!(parsed.meta.updated_s.is_some());

    // What the request gives replaces what was there.
    let mut retitled = WriteRequest::new("ops/pool-sizing", "The pool times out at 50 now.");
    retitled.name = Some("Pool limits".into());
    retitled.tags = vec!["pgbouncer".into()];
    retitled.expected_sha256 = out.sha256.clone();
    assert!(m.write_note(&retitled).expect("write").written);
    let parsed = mnemon::notes::parse_note("x", &std::fs::read(&file).unwrap());
    assert_eq!(parsed.meta.name.as_deref(), Some("Pool limits"));
    assert_eq!(parsed.meta.tags, ["pgbouncer"]);
    assert_eq!(parsed.meta.related, ["ops/deploy"]);
    assert_eq!(parsed.meta.ttl_days, Some(30));
}

/// Regression: a replacement wrote the kept frontmatter anew through the YAML serializer: the
/// user's comments were gone, and strings lost their quotes (`since: "2026-01-01"` read back as
/// a date by YAML 1.1 readers, `flag: "yes"` as a boolean). The replaced text is edited in place:
/// the lines of the keys the request sets change, every other line stays as written.
#[test]
fn a_replacement_keeps_comments_and_quoting_of_the_lines_it_does_not_set() {
    let (tmp, m) = fresh();
    let file = tmp.path().join(".mnemon/memory/pool.md");
    let kept = "# ask Bob before changing ttl\nname: Pool   # owner: Bob\nttl_days: 30\n\
                since: \"2026-01-01\"\nflag: \"yes\"\n";
    std::fs::write(
        &file,
        format!("---\n{kept}tags:\n  - x   # the first\n  - y\n---\nOld body.\n"),
    )
    .unwrap();
    m.index().unwrap();
    let mut req = WriteRequest::new("pool", "New body.");
    req.tags = vec!["a".into()];
    req.expected_sha256 = m.show("pool").unwrap().sha256;
    let out = m.write_note(&req).expect("write");
    assert!(out.written, "{out:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(&format!("---\n{kept}tags:\n- a\nupdated_at: ")),
        "{text}"
    );
    assert!(text.ends_with("---\nNew body.\n"), "{text}");
    let parsed = mnemon::notes::parse_note("pool", text.as_bytes());
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(parsed.meta.name.as_deref(), Some("Pool"));
    assert_eq!(parsed.meta.tags, ["a"]);
    assert_eq!(parsed.meta.ttl_days, Some(30));
}

/// Regression: replacing a note whose frontmatter had a problem (one bad value such as
/// `pin: maybe`, an unknown type, a key mnemon warns about) wrote the replacement from the
/// request alone: its name, tags and every other key were gone, at exit 0. Such a note keeps
/// its keys, the faulty ones included (they are the user's to fix); only a frontmatter that
/// does not parse at all (YAML with a duplicate key) refuses the replacement, naming the
/// problem, and the file keeps its bytes.
#[test]
fn a_replacement_keeps_a_frontmatter_with_problems_and_refuses_one_that_does_not_parse() {
    let (tmp, m) = fresh();
    let memory = tmp.path().join(".mnemon/memory");
    let replace = |id: &str, text: &str| {
        std::fs::write(memory.join(format!("{id}.md")), text).unwrap();
        m.index().unwrap();
        let mut req = WriteRequest::new(id, "A new body.");
        req.expected_sha256 = m.show(id).unwrap().sha256;
        m.write_note(&req)
    };
    for (id, text) in [
        (
            "one-bad-value",
            "---\nname: One bad\nowner: bob\ntags: [keep]\npin: maybe\n---\nA note.\n",
        ),
        (
            "warned-keys",
            "---\nname: Warned\ntype: decision\nupdated: 2025-01-01\ntags: [keep]\n---\nA note.\n",
        ),
    ] {
        let out = replace(id, text).expect("write");
        assert!(out.written, "{id}: {out:?}");
        let now = std::fs::read_to_string(memory.join(format!("{id}.md"))).unwrap();
        assert!(
            now.contains("tags:\n- keep") || now.contains("tags: [keep]"),
            "{now}"
        );
        assert!(now.ends_with("---\nA new body.\n"), "{now}");
        for line in text.lines().skip(1).take_while(|l| *l != "---") {
            if !line.starts_with("tags") {
                assert!(now.contains(line), "{id}: `{line}` kept: {now}");
            }
        }
    }
    let text = "---\nname: First\nname: Second\ntags: [keep]\n---\nA note.\n";
    match replace("duplicate-key", text) {
        Err(Error::Write {
            reason: NoteWriteError::ReplacedFrontmatter { problems },
            ..
        }) => assert!(problems.contains("duplicate entry"), "{problems}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(memory.join("duplicate-key.md")).unwrap(),
        text
    );
}

/// A note whose file name macOS (or git from macOS) wrote decomposed (`re\u{301}sume\u{301}`)
/// was out of reach of its id typed precomposed (`résumé`): `show`, `importance`, `feedback`,
/// `stats` and anchors said "no note with id", and `write` made a second note that looks the
/// same. Each now names the stored note.
#[test]
fn an_id_typed_in_another_unicode_normal_form_names_the_stored_note() {
    let (tmp, memory) = fresh();
    let stored = "policies/re\u{301}sume\u{301}-screening";
    let typed = "policies/résumé-screening";
    assert_ne!(stored, typed);
    write_note(
        &memory,
        &format!("{stored}.md"),
        "---\nname: Screening\n---\nHow candidates are shortlisted.\n",
    );
    write_note(&memory, "other.md", "---\nname: Other\n---\nUnrelated.\n");
    memory.index().expect("index");

    assert_eq!(memory.show(typed).expect("show").id, stored);
    memory
        .set_importance(typed, 8, &[], "")
        .expect("importance");
    let report = memory
        .feedback(&[typed.to_string()], &[], Some("screening"))
        .expect("feedback");
    assert_eq!(report.used, [stored]);
    let stats = memory.stats(typed).expect("stats");
    assert_eq!((stats.id.as_str(), stats.importance), (stored, Some(8)));
    let mut q = Query::anchors([typed]);
    q.record = false;
    let found = memory.recall(&q).expect("recall");
    assert_eq!(found.results[0].id, stored);

    // Writing under the typed form replaces the stored note (with its sha256), no twin.
    let sha = memory.show(stored).expect("show").sha256;
    let mut req = WriteRequest::new(typed, "Shortlisting, revised.");
    req.expected_sha256 = sha;
    let outcome = memory.write_note(&req).expect("write");
    assert!(outcome.written, "{outcome:?}");
    assert_eq!(outcome.id, stored);
    let notes: Vec<PathBuf> = tree(tmp.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    // A name no normal form matches is still unknown.
    assert!(matches!(
        memory.show("policies/résumé"),
        Err(Error::UnknownNode { .. })
    ));
    // A link typed in the other form dangles, and doctor names the note it meant.
    write_note(&memory, "hub.md", format!("See [[{typed}]].\n"));
    memory.index().expect("index");
    let doctor = memory.doctor().expect("doctor");
    let d = doctor
        .dangling
        .iter()
        .find(|d| d.from == "hub")
        .expect("the link dangles");
    assert_eq!(d.other_form_of.as_deref(), Some(stored));
}

/// A link to an id no note has was written without a word (a typo in the id showed only in a
/// later `doctor`); the outcome's message names it. A link to a note that exists is not named.
#[test]
fn a_link_to_an_id_no_note_has_is_named_in_the_outcome() {
    let (_tmp, m) = fresh();
    let mut first = WriteRequest::new("ops/pool", "The pgbouncer pool holds 20 connections.");
    first.related = vec!["ops/no-such-note".into()];
    let out = m.write_note(&first).expect("write");
    assert!(out.written, "{out:?}");
    assert!(
        out.message
            .contains("It links to ops/no-such-note, which no note is yet"),
        "{}",
        out.message
    );
    let mut second = WriteRequest::new("ops/deploy", "Deploys roll out in three waves at noon.");
    second.related = vec!["ops/pool".into()];
    let out = m.write_note(&second).expect("write");
    assert!(out.written, "{out:?}");
    assert!(!out.message.contains("links to"), "{}", out.message);
}

/// `write Deploy` beside an existing `deploy` made a second file that is the same file on macOS
/// and Windows: a checkout there keeps one of them. A new note whose id differs from a note's
/// only in letter case is refused, naming the note; writing that note itself still works.
#[test]
fn a_new_note_differing_from_one_only_in_case_is_refused() {
    let (tmp, memory) = fresh();
    write_note(&memory, "deploy.md", "---\nname: Deploy\n---\nWith helm.\n");
    write_note(
        &memory,
        "runbooks/kafka.md",
        "---\nname: Kafka\n---\nRestart brokers.\n",
    );
    memory.index().expect("index");
    for (id, existing) in [("Deploy", "deploy"), ("Runbooks/Kafka", "runbooks/kafka")] {
        let err = memory
            .write_note(&WriteRequest::new(id, "Another text."))
            .expect_err(id);
        assert!(
            matches!(&err, Error::Write { reason: NoteWriteError::CaseTwin { existing: e, .. }, .. } if e == existing),
            "{err}"
        );
        assert!(err.to_string().contains("only in letter case"), "{err}");
    }
    let notes: Vec<PathBuf> = tree(tmp.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    assert_eq!(notes.len(), 2, "nothing written: {notes:?}");
    // A new id of its own, and the note itself, are written.
    assert!(
        memory
            .write_note(&WriteRequest::new("deploy-notes", "Text."))
            .expect("new")
            .written
    );
    let sha = memory.show("deploy").expect("show").sha256;
    let mut req = WriteRequest::new("deploy", "With helm 3.");
    req.expected_sha256 = sha;
    assert!(memory.write_note(&req).expect("replace").written);
}

/// `write a*b`, `write CON` and `write ops./x` made files a clone of the memory on Windows
/// cannot check out (git there stops at them). A new note with such an id is refused, saying
/// what Windows refuses; a note with one that exists (written by hand on Linux) is replaced.
#[test]
fn a_new_note_whose_id_windows_cannot_hold_is_refused() {
    let (tmp, memory) = fresh();
    for (id, said) in [
        ("a*b", "holds '*'"),
        ("what?", "holds '?'"),
        ("ops/x:y", "holds ':'"),
        ("say\"hi\"", "holds '\"'"),
        (
            "CON",
            "has the part `CON`, a name Windows keeps for a device",
        ),
        ("ops/aux.notes", "has the part `aux.notes`"),
        ("lpt1/plan", "has the part `lpt1`"),
        (
            "ops./x",
            "has the folder `ops.`, whose trailing dot or space Windows drops",
        ),
    ] {
        let err = memory
            .write_note(&WriteRequest::new(id, "Retries back off twice."))
            .expect_err(id);
        assert!(
            matches!(
                &err,
                Error::Write {
                    reason: NoteWriteError::NotPortableId { .. },
                    ..
                }
            ),
            "{id}: {err}"
        );
        let text = err.to_string();
        assert!(
            text.contains(said) && text.contains("on Windows"),
            "{id}: {text}"
        );
    }
    let notes: Vec<PathBuf> = tree(tmp.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    assert!(notes.is_empty(), "nothing written: {notes:?}");
    // Names that only look alike are fine.
    for id in ["console", "con-rules", "ops/aux2", "notes.v2"] {
        let out = memory
            .write_note(&WriteRequest {
                on_duplicate: OnDuplicate::Create,
                ..WriteRequest::new(id, format!("The {id} note."))
            })
            .expect(id);
        assert!(out.written, "{id}: {out:?}");
    }
    // A note that exists under such a name is replaced, not refused.
    write_note(&memory, "a*b.md", "---\nname: Star\n---\nBy hand.\n");
    memory.index().expect("index");
    let mut req = WriteRequest::new("a*b", "Edited by an agent.");
    req.expected_sha256 = memory.show("a*b").expect("show").sha256;
    assert!(memory.write_note(&req).expect("replace").written);
}

/// A note checked out on Windows (`\r\n` line ends) replaced by `write` came back with `\n`
/// line ends and its frontmatter written anew (its comment lost): the in-place edit refused a
/// `\r`. The replacement keeps the comment and writes `\r\n` throughout.
#[test]
fn a_replaced_note_with_windows_line_ends_keeps_them_and_its_comments() {
    let (tmp, memory) = fresh();
    write_note(
        &memory,
        "deploy.md",
        "---\r\nname: Deploy\r\n# why: the team asked\r\ntags: [ops]\r\n---\r\nWith helm.\r\n",
    );
    memory.index().expect("index");
    let mut req = WriteRequest::new("deploy", "With helm 3.\n\nThen argo.\n");
    req.description = Some("How we deploy".into());
    req.expected_sha256 = memory.show("deploy").expect("show").sha256;
    assert!(memory.write_note(&req).expect("replace").written);
    let text = std::fs::read_to_string(tmp.path().join(".mnemon/memory/deploy.md")).unwrap();
    assert!(
        text.starts_with("---\r\nname: Deploy\r\n# why: the team asked\r\n"),
        "{text:?}"
    );
    assert!(text.contains("description: How we deploy\r\n"), "{text:?}");
    assert!(
        text.ends_with("---\r\nWith helm 3.\r\n\r\nThen argo.\r\n"),
        "{text:?}"
    );
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "{text:?}"
    );
    let view = memory.show("deploy").expect("show");
    assert_eq!(view.description.as_deref(), Some("How we deploy"));
    assert_eq!(view.tags, ["ops"]);
    // A file with `\n` line ends stays so.
    write_note(&memory, "plain.md", "---\nname: Plain\n---\nText.\n");
    memory.index().expect("index");
    let mut req = WriteRequest::new("plain", "New text.\n");
    req.expected_sha256 = memory.show("plain").expect("show").sha256;
    assert!(memory.write_note(&req).expect("replace").written);
    let text = std::fs::read_to_string(tmp.path().join(".mnemon/memory/plain.md")).unwrap();
    assert!(!text.contains('\r'), "{text:?}");
}
