//! The scanner and the store together: the loopal-58 corpus, incremental re-scans, and each bad
//! input the foundation issue lists.

mod common;

use common::{copy_into, fresh, loopal_fixtures, write_note};
use mnemon::notes::{EdgeKind, Provenance};
use std::collections::BTreeSet;

/// Count `related:` entries and distinct `[[link]]` targets of a note by hand, independently of
/// the parser (line-based, good enough for the fixtures' simple YAML).
fn count_links_by_hand(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut related = BTreeSet::new();
    let mut inline = BTreeSet::new();
    let mut parts = text.splitn(3, "---\n");
    parts.next();
    let fm = parts.next().unwrap_or("");
    let body = parts.next().unwrap_or("");
    let mut in_related = false;
    for line in fm.lines() {
        if let Some(rest) = line.strip_prefix("related:") {
            in_related = true;
            let rest = rest.trim();
            if let Some(list) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    related.insert(item.to_string());
                }
                in_related = false;
            }
            continue;
        }
        if in_related {
            if let Some(item) = line.trim_start().strip_prefix("- ") {
                related.insert(item.trim().to_string());
            } else {
                in_related = false;
            }
        }
    }
    let mut rest = body;
    while let Some(i) = rest.find("[[") {
        let after = &rest[i + 2..];
        let Some(j) = after.find("]]") else { break };
        let inner = &after[..j];
        let id = inner.split(['|', '#']).next().unwrap_or("").trim();
        inline.insert(id.to_string());
        rest = &after[j + 2..];
    }
    (related, inline)
}

#[test]
fn loopal_fixtures_index_as_73_notes_with_every_link_an_edge() {
    let fixtures = loopal_fixtures();
    let (_tmp, memory) = fresh();
    assert_eq!(copy_into(&memory, &fixtures), 73);
    let report = memory.index().unwrap();
    assert_eq!(report.notes, 73);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.changed.len(), 73);

    let edges = memory.edges().unwrap();
    let mut want_fm = BTreeSet::new();
    let mut want_inline = BTreeSet::new();
    for e in std::fs::read_dir(&fixtures).unwrap() {
        let path = e.unwrap().path();
        let id = path.file_stem().unwrap().to_str().unwrap().to_string();
        let (related, inline) = count_links_by_hand(&std::fs::read_to_string(&path).unwrap());
        for to in related {
            want_fm.insert((id.clone(), to));
        }
        for to in inline {
            want_inline.insert((id.clone(), to));
        }
    }
    let got = |prov: Provenance| -> BTreeSet<(String, String)> {
        edges
            .iter()
            .filter(|e| e.provenance == prov && e.kind == EdgeKind::References)
            .map(|e| (e.from.clone(), e.to.clone()))
            .collect()
    };
    assert!(
        want_fm.len() > 100 && want_inline.len() > 50,
        "hand count too small"
    );
    assert_eq!(got(Provenance::Frontmatter), want_fm);
    assert_eq!(got(Provenance::InlineLink), want_inline);

    // A second scan right after changes nothing.
    let again = memory.index().unwrap();
    assert!(again.changed.is_empty(), "{:?}", again.changed);
    assert!(again.removed.is_empty());
    assert_eq!(again.notes, 73);
    assert_eq!(again.edges, report.edges);
}

// Unix: the entry is settled by its ctime, and the edit below keeps the mtime.
#[cfg(unix)]
#[test]
fn unchanged_stat_means_contents_are_not_read() {
    use mnemon::store::{FileEntry, MANIFEST, STORE_FILE};
    use redb::ReadableTable as _;
    let (tmp, memory) = fresh();
    let path = write_note(&memory, "a.md", "---\nname: A\n---\nlinks [[b]]\n");
    write_note(&memory, "b.md", "b body");
    memory.index().unwrap();
    drop(memory);
    // The manifest's hash of a.md no longer matches its bytes, its stat still does: a scan that
    // read the file would re-parse it and report it changed.
    {
        let db = redb::Database::builder()
            .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
            .open(tmp.path().join(".mnemon/index").join(STORE_FILE))
            .unwrap();
        let w = db.begin_write().unwrap();
        {
            let mut t = w.open_table(MANIFEST).unwrap();
            let stored = t.get("a.md").unwrap().unwrap().value().to_vec();
            let mut e = FileEntry::decode(&stored).unwrap();
            e.hash ^= 1;
            // Settled, as it is once the note is some seconds old (an entry recorded right
            // after a change is read again by the next scan).
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::metadata(&path).unwrap();
            e.ctime_ns = m.ctime() * 1_000_000_000 + m.ctime_nsec();
            t.insert("a.md", e.encode().as_slice()).unwrap();
        }
        w.commit().unwrap();
    }
    let memory = mnemon::Memory::open(tmp.path().join(".mnemon")).unwrap();
    let r = memory.index().unwrap();
    assert!(r.changed.is_empty(), "contents were read: {:?}", r.changed);
    assert_eq!(memory.show("a").unwrap().name.as_deref(), Some("A"));
    // A write (new ctime, whatever the size and mtime) makes the scan read and re-parse it.
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, "---\nname: Z\n---\nlinks [[c]]\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let r = memory.index().unwrap();
    assert_eq!(r.changed, vec!["a"]);
    let a = memory.show("a").unwrap();
    assert_eq!(a.name.as_deref(), Some("Z"));
    assert_eq!(a.edges_out.len(), 1);
    assert_eq!(a.edges_out[0].to, "c");
    assert!(a.edges_out[0].dangling);
    // The old edge's mirror is gone from b.
    assert!(memory.show("b").unwrap().edges_in.is_empty());
}

#[test]
fn touched_but_identical_file_is_not_changed() {
    let (_tmp, memory) = fresh();
    let path = write_note(&memory, "a.md", "body");
    memory.index().unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(10))
        .unwrap();
    let r = memory.index().unwrap();
    assert!(r.changed.is_empty());
}

#[test]
fn deleted_and_renamed_notes_leave_the_graph() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "a.md", "[[b]] [[c]]");
    write_note(&memory, "b.md", "[[a]]");
    write_note(&memory, "c.md", "c");
    let r = memory.index().unwrap();
    assert_eq!((r.notes, r.edges), (3, 3));

    std::fs::remove_file(memory.dir().memory().join("b.md")).unwrap();
    std::fs::rename(
        memory.dir().memory().join("c.md"),
        memory.dir().memory().join("d.md"),
    )
    .unwrap();
    let r = memory.index().unwrap();
    assert_eq!(r.removed, vec!["b", "c"]);
    assert_eq!(r.changed, vec!["d"]);
    assert_eq!((r.notes, r.edges), (2, 2), "a's links stay, now dangling");
    let a = memory.show("a").unwrap();
    assert!(a.edges_out.iter().all(|e| e.dangling));
    assert!(a.edges_in.is_empty(), "b's edge into a left with b");
    let doctor = memory.doctor().unwrap();
    assert!(!doctor.healthy);
    let dangling: Vec<_> = doctor.dangling.iter().map(|d| d.to.as_str()).collect();
    assert_eq!(dangling, vec!["b", "c"]);
}

/// Regression: a missing note named in the frontmatter and by a `[[link]]` was listed
/// twice by doctor, the two lines alike: each says where the note writes it.
#[test]
fn a_dangling_link_says_where_the_note_writes_it() {
    let (_tmp, memory) = fresh();
    write_note(
        &memory,
        "a.md",
        "---\nname: A\nrelated: [ghost]\n---\nSee [[ghost]] for more.\n",
    );
    memory.index().unwrap();
    let doctor = memory.doctor().unwrap();
    let found: Vec<_> = doctor
        .dangling
        .iter()
        .map(|d| (d.to.as_str(), d.provenance))
        .collect();
    assert_eq!(
        found,
        vec![
            ("ghost", mnemon::notes::Provenance::Frontmatter),
            ("ghost", mnemon::notes::Provenance::InlineLink)
        ]
    );
}

#[test]
fn bad_inputs_never_abort_a_scan_and_are_reported() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "good.md", "---\nname: Good\n---\nfine [[yaml]]\n");
    write_note(
        &memory,
        "yaml.md",
        "---\nname: [unclosed\n---\nbody survives [[good]]\n",
    );
    write_note(&memory, "latin1.md", b"caf\xe9 au lait [[good]]".as_slice());
    let mut big = b"---\nname: Big\n---\n".to_vec();
    big.resize(50 << 20, b'x');
    write_note(&memory, "big.md", &big);
    write_note(&memory, "empty.md", "");
    write_note(&memory, "selfish.md", "me [[selfish]] and [[good]]");
    write_note(&memory, "escape.md", "[[../../etc/passwd]] [[/etc/passwd]]");
    write_note(
        &memory,
        "conflict.md",
        "a\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n",
    );
    std::os::unix::fs::symlink(memory.dir().memory(), memory.dir().memory().join("loop")).unwrap();

    let r = memory.index().unwrap();
    assert_eq!(
        r.notes, 8,
        "every readable note is indexed: {:?}",
        r.changed
    );
    let msg_for = |path: &str| -> Vec<String> {
        r.errors
            .iter()
            .filter(|e| e.path == path)
            .map(|e| e.message.clone())
            .collect()
    };
    assert!(msg_for("yaml.md")[0].contains("not valid YAML"));
    assert!(msg_for("latin1.md")[0].contains("UTF-8"));
    assert!(msg_for("big.md")[0].contains("over the 4 MiB limit"));
    assert!(msg_for("empty.md")[0].contains("empty note"));
    assert!(msg_for("selfish.md")[0].contains("links to itself"));
    assert_eq!(msg_for("escape.md").len(), 2);
    assert!(
        msg_for("escape.md")
            .iter()
            .all(|m| m.contains("not a valid id"))
    );
    assert!(msg_for("conflict.md")[0].contains("merge-conflict"));
    assert!(
        msg_for("loop")[0].contains("symlink loop"),
        "{:?}",
        r.errors
    );
    assert!(msg_for("good.md").is_empty());

    // The malformed-YAML note is still indexed from its body.
    let yaml = memory.show("yaml").unwrap();
    assert_eq!(yaml.name, None);
    assert_eq!(yaml.edges_out[0].to, "good");
    // No edge points outside memory/ and no self edge exists.
    for e in memory.edges().unwrap() {
        assert!(!e.to.contains(".."), "{e:?}");
        assert_ne!(e.from, e.to);
    }
    let doctor = memory.doctor().unwrap();
    assert!(!doctor.healthy);
    assert_eq!(doctor.conflicts, vec!["conflict.md"]);
    assert_eq!(doctor.walk_errors.len(), 1, "{:?}", doctor.walk_errors);
}

/// Regression: `x.MD` (written so on a case-insensitive disk, or by another tool) was passed
/// over in silence: not indexed, and `doctor` said healthy. It is reported with the rename that
/// indexes it; other files of `memory/` stay unreported.
#[test]
fn a_note_ending_in_upper_case_md_is_reported_with_its_rename() {
    let (_t, memory) = fresh();
    write_note(&memory, "x.MD", "gamma note\n");
    write_note(&memory, "y.Md", "delta note\n");
    write_note(&memory, "ok.md", "epsilon note\n");
    write_note(&memory, "readme.txt", "not a note\n");
    let r = memory.index().unwrap();
    assert_eq!(r.notes, 1);
    let mut errors: Vec<(&str, &str)> = r
        .errors
        .iter()
        .map(|e| (e.path.as_str(), e.message.as_str()))
        .collect();
    errors.sort_unstable();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].0, "x.MD");
    assert!(errors[0].1.contains("rename it to `x.md`"), "{errors:?}");
    assert_eq!(errors[1].0, "y.Md");
    assert!(errors[1].1.contains("rename it to `y.md`"), "{errors:?}");
    assert!(!memory.doctor().unwrap().healthy);
}

/// A sync tool's or merge tool's conflict copy of a note was indexed as a note like any other,
/// and doctor called it a near-duplicate at most: it is a merge conflict, named with the note it
/// copies and the fix (the copy stays indexed: it may hold the only copy of an edit).
#[test]
fn conflict_copies_are_reported_as_merge_conflicts() {
    let (_tmp, memory) = fresh();
    let text = "---\nname: Pool\n---\nThe pool holds forty connections.\n";
    write_note(&memory, "ops/pool.md", text);
    write_note(&memory, "ops/pool (conflicted copy 2026-12-05).md", text);
    write_note(
        &memory,
        "ops/pool.sync-conflict-20261205-101010-ABCDEFG.md",
        text,
    );
    write_note(&memory, "release (2026).md", "Not a copy of anything.\n");
    let r = memory.index().unwrap();
    let mut named: Vec<&str> = r.errors.iter().map(|e| e.path.as_str()).collect();
    named.sort();
    assert_eq!(
        named,
        [
            "ops/pool (conflicted copy 2026-12-05).md",
            "ops/pool.sync-conflict-20261205-101010-ABCDEFG.md"
        ]
    );
    assert!(
        r.errors.iter().all(|e| e
            .message
            .contains("merge what differs into memory/ops/pool.md")),
        "{:?}",
        r.errors
    );
    let doctor = memory.doctor().unwrap();
    assert!(!doctor.healthy);
    assert_eq!(doctor.conflicts.len(), 2, "{:?}", doctor.conflicts);
    assert!(memory.show("ops/pool (conflicted copy 2026-12-05)").is_ok());
    // A copy whose original is gone may be the only copy: the fix says to rename it.
    assert!(
        r.errors
            .iter()
            .all(|e| e.message.contains("rename this file to it")),
        "{:?}",
        r.errors
    );
}

#[test]
fn show_refuses_ids_outside_memory() {
    let (_tmp, memory) = fresh();
    let err = memory.show("../etc/passwd").unwrap_err();
    assert!(err.to_string().contains("cannot leave memory/"), "{err}");
    let err = memory.show("nope").unwrap_err();
    assert!(err.to_string().contains("no note with id `nope`"), "{err}");
}

#[test]
fn subfolders_give_slash_ids() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "runbooks/deploy.md", "[[runbooks/rollback]]");
    write_note(&memory, "runbooks/rollback.md", "x");
    let r = memory.index().unwrap();
    assert_eq!(r.changed, vec!["runbooks/deploy", "runbooks/rollback"]);
    let v = memory.show("runbooks/rollback").unwrap();
    assert_eq!(v.edges_in[0].from, "runbooks/deploy");
    assert_eq!(v.path, "runbooks/rollback.md");
}

/// The walk sorts the found notes itself (walkdir's `sort_by_file_name` parsed two file names per
/// comparison): the order must stay walkdir's, a folder's notes right after the folder's name among
/// its siblings, which is not the order of the relative paths as strings (`a.md` < `a/x.md`).
#[test]
fn notes_are_found_in_walkdirs_sorted_order() {
    let (_tmp, memory) = fresh();
    let rels = [
        "b.md",
        "a/x.md",
        "a-b.md",
        "a.md",
        "a/b/c.md",
        "a b.md",
        "A.md",
        "é.md",
        "a/é/z.md",
        "a.b/y.md",
        "a0.md",
    ];
    for rel in rels {
        write_note(&memory, rel, "x");
    }
    let root = memory.dir().memory().canonicalize().unwrap();
    let reference: Vec<String> = walkdir::WalkDir::new(&root)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(&root).unwrap();
            rel.to_str().unwrap().to_string()
        })
        .collect();
    let outcome = mnemon::scan::scan(&root, &std::collections::HashMap::new());
    let found: Vec<&str> = outcome
        .batch
        .upserts
        .iter()
        .map(|u| u.path.as_str())
        .collect();
    assert_eq!(found, reference);
    assert_eq!(found.len(), rels.len());
    // Not the order of the paths as strings.
    let mut as_strings = found.clone();
    as_strings.sort();
    assert_ne!(found, as_strings);
}

/// A re-scan looks at a folder's entries a chunk of 512 at a time, on every core, while the
/// folder is listed (a folder's listing comes in the file system's order, not by name), stats
/// known notes relative to their folder, and puts them back in name order: each stat must land
/// on its own note. A folder of 1300 notes (three chunks) beside 70 folders of 5: notes changed,
/// removed and added in the big folder and in the small ones, and only those are reported, in
/// order.
#[test]
fn stats_looked_at_in_chunks_land_on_their_own_notes() {
    let (_tmp, memory) = fresh();
    for n in 0..1300 {
        write_note(&memory, &format!("big/n{n:04}.md"), format!("note {n}"));
    }
    for f in 0..70 {
        for n in 0..5 {
            write_note(
                &memory,
                &format!("f{f:02}/n{n}.md"),
                format!("note {f} {n}"),
            );
        }
    }
    assert_eq!(memory.index().unwrap().notes, 1650);
    let r = memory.index().unwrap();
    assert!(r.changed.is_empty() && r.removed.is_empty(), "{r:?}");

    write_note(&memory, "big/n0700.md", "note 700, now longer");
    write_note(&memory, "big/n1299.md", "note 1299, now longer");
    std::fs::remove_file(memory.dir().memory().join("big/n0003.md")).unwrap();
    write_note(&memory, "big/n0512b.md", "new in the big folder");
    write_note(&memory, "f37/n2.md", "note 37 2, now longer");
    std::fs::remove_file(memory.dir().memory().join("f12/n4.md")).unwrap();
    write_note(&memory, "f69/n9.md", "new");
    let r = memory.index().unwrap();
    assert_eq!(
        r.changed,
        vec!["big/n0512b", "big/n0700", "big/n1299", "f37/n2", "f69/n9"]
    );
    assert_eq!(r.removed, vec!["big/n0003", "f12/n4"]);
    assert_eq!(r.notes, 1650);
    let r = memory.index().unwrap();
    assert!(r.changed.is_empty() && r.removed.is_empty(), "{r:?}");
}

/// A link inside a sub-folder back to that sub-folder is a loop too (the walk must know every
/// ancestor, not only `memory/`): reported once, not walked 32 folders deep.
#[test]
fn symlink_loop_below_the_root_is_reported_not_walked() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "a/x.md", "x");
    let mem = memory.dir().memory();
    std::os::unix::fs::symlink(mem.join("a"), mem.join("a/back")).unwrap();
    let r = memory.index().unwrap();
    assert_eq!(r.notes, 1, "{:?}", r.changed);
    let loops: Vec<_> = r.errors.iter().filter(|e| e.path == "a/back").collect();
    assert_eq!(loops.len(), 1, "{:?}", r.errors);
    assert!(
        loops[0].message.contains("symlink loop back to memory/a"),
        "{}",
        loops[0].message
    );
}

/// Links that lead to each other (`loopa -> loopb -> loopa`) were skipped without a word when
/// their names did not end in `.md`, and a looping `x.md` was called "broken": either may have
/// been meant for a folder of notes. Each is reported as a loop.
#[test]
fn links_that_lead_to_each_other_are_reported_as_a_loop_whatever_their_names() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "a.md", "alpha");
    let mem = memory.dir().memory();
    std::os::unix::fs::symlink("loopb", mem.join("loopa")).unwrap();
    std::os::unix::fs::symlink("loopa", mem.join("loopb")).unwrap();
    std::os::unix::fs::symlink("self.md", mem.join("self.md")).unwrap();
    // A dangling link to something that is no note stays none of the memory's business.
    std::os::unix::fs::symlink("nowhere", mem.join("dangling")).unwrap();
    let r = memory.index().unwrap();
    assert_eq!(r.notes, 1, "{:?}", r.changed);
    let mut said: Vec<(&str, bool)> = r
        .errors
        .iter()
        .map(|e| (e.path.as_str(), e.message.starts_with("symlink loop")))
        .collect();
    said.sort();
    assert_eq!(
        said,
        [("loopa", true), ("loopb", true), ("self.md", true)],
        "{:?}",
        r.errors
    );
}

/// Links leaving `memory/` are reported and skipped, a folder's as a note's. A link to a note or
/// a folder the walk lists anyway was followed, and its notes indexed twice under two ids (both
/// returned by recall, and called near-duplicates by doctor): it is reported and skipped. A link
/// to what the walk does not list by itself (a hidden folder) is followed, and the stat of a
/// linked note is its target's (an edit through the target is seen by the next re-scan).
#[test]
fn symlinks_are_followed_inside_memory_and_refused_outside() {
    let (tmp, memory) = fresh();
    let mem = memory.dir().memory();
    write_note(&memory, "real/a.md", "a");
    write_note(&memory, ".kept/k.md", "k");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("o.md"), "o").unwrap();
    std::os::unix::fs::symlink(&outside, mem.join("ext")).unwrap();
    std::os::unix::fs::symlink(outside.join("o.md"), mem.join("o.md")).unwrap();
    std::os::unix::fs::symlink(mem.join("real"), mem.join("alias")).unwrap();
    std::os::unix::fs::symlink(mem.join("real/a.md"), mem.join("l.md")).unwrap();
    std::os::unix::fs::symlink(mem.join(".kept"), mem.join("kept")).unwrap();
    std::os::unix::fs::symlink(mem.join(".kept/k.md"), mem.join("k.md")).unwrap();
    std::os::unix::fs::symlink(mem.join("gone.md"), mem.join("broken.md")).unwrap();
    let r = memory.index().unwrap();
    assert_eq!(r.changed, vec!["k", "kept/k", "real/a"]);
    let message = |p: &str| {
        r.errors
            .iter()
            .find(|e| e.path == p)
            .map(|e| e.message.clone())
            .unwrap_or_default()
    };
    assert!(message("ext").contains("outside memory/"), "{:?}", r.errors);
    assert!(
        message("o.md").contains("outside memory/"),
        "{:?}",
        r.errors
    );
    assert!(
        message("broken.md").contains("broken symlink"),
        "{:?}",
        r.errors
    );
    assert!(
        message("alias").contains("symlink to memory/real, which is indexed where it is"),
        "{:?}",
        r.errors
    );
    assert!(
        message("l.md").contains("symlink to memory/real/a.md, which is indexed where it is"),
        "{:?}",
        r.errors
    );
    assert_eq!(r.errors.len(), 5, "{:?}", r.errors);

    write_note(&memory, ".kept/k.md", "k, edited through its target");
    let r = memory.index().unwrap();
    assert_eq!(r.changed, vec!["k", "kept/k"]);
}

/// Folders are walked 32 deep: a note 32 components down is found, one 33 down is not.
#[test]
fn notes_are_found_32_folders_deep_and_no_deeper() {
    let (_tmp, memory) = fresh();
    let deep = |n: usize| {
        (0..n)
            .map(|i| format!("d{i}"))
            .collect::<Vec<_>>()
            .join("/")
    };
    write_note(&memory, &format!("{}/in.md", deep(31)), "in");
    write_note(&memory, &format!("{}/out.md", deep(32)), "out");
    let r = memory.index().unwrap();
    assert_eq!(r.changed, vec![format!("{}/in", deep(31))]);
}

/// A name that is not UTF-8 gives no id: the note, or the folder and the notes below it, are
/// reported by path (lossy) and skipped; the rest is indexed.
#[test]
fn names_that_are_not_utf8_are_reported_and_skipped() {
    use std::os::unix::ffi::OsStrExt;
    let (_tmp, memory) = fresh();
    write_note(&memory, "good.md", "fine");
    let mem = memory.dir().memory();
    std::fs::write(mem.join(std::ffi::OsStr::from_bytes(b"caf\xe9.md")), "x").unwrap();
    let bad_dir = mem.join(std::ffi::OsStr::from_bytes(b"d\xff"));
    std::fs::create_dir(&bad_dir).unwrap();
    std::fs::write(bad_dir.join("inner.md"), "y").unwrap();
    let r = memory.index().unwrap();
    assert_eq!(r.changed, vec!["good"]);
    let file = r.errors.iter().find(|e| e.path == "caf\u{fffd}.md");
    assert!(
        file.is_some_and(|e| e.message.contains("file name is not valid UTF-8")),
        "{:?}",
        r.errors
    );
    let folder = r.errors.iter().find(|e| e.path == "d\u{fffd}");
    assert!(
        folder.is_some_and(|e| e.message.contains("notes below it were skipped")),
        "{:?}",
        r.errors
    );
}

/// `mnemon index` loads the manifest on a thread of its own while the walk lists the folders:
/// the walk's lookups must wait for it and use it. A note the manifest knows with its current
/// stat is not read, one it does not know is, and one only it names is removed: over a folder of
/// 600 notes (two chunks looked at while the listing goes on) and a sub-folder.
#[test]
fn manifest_loaded_beside_the_walk_is_what_the_notes_are_compared_with() {
    use mnemon::store::FileEntry;
    let (_tmp, memory) = fresh();
    for n in 0..600 {
        write_note(&memory, &format!("n{n:03}.md"), format!("note {n}"));
    }
    write_note(&memory, "sub/deep.md", "deep");
    let root = memory.dir().memory();
    let entry_of = |rel: &str| {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(root.join(rel)).unwrap();
        let mtime = meta.modified().unwrap();
        let mtime_ns = mtime
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i64;
        FileEntry {
            size: meta.len(),
            mtime_ns,
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
            hash: 0,
        }
    };
    let load = || -> Result<std::collections::HashMap<String, FileEntry>, String> {
        // Slower than the listing of the folder, so that lookups have to wait for it.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut m: std::collections::HashMap<String, FileEntry> = (0..600)
            .filter(|n| *n != 417)
            .map(|n| format!("n{n:03}.md"))
            .map(|rel| (rel.clone(), entry_of(&rel)))
            .collect();
        m.insert("sub/deep.md".into(), entry_of("sub/deep.md"));
        m.insert("gone.md".into(), entry_of("n000.md"));
        Ok(m)
    };
    let (outcome, manifest) = mnemon::scan::scan_while_loading(&root, load).unwrap();
    assert_eq!(manifest.len(), 601);
    let read: Vec<&str> = outcome
        .batch
        .upserts
        .iter()
        .map(|u| u.path.as_str())
        .collect();
    assert_eq!(read, vec!["n417.md"]);
    assert_eq!(outcome.removed, vec!["gone"]);
    assert!(outcome.walk_errors.is_empty(), "{:?}", outcome.walk_errors);
}

/// A manifest that cannot be loaded ends the scan with its error; one whose loader panics raises
/// the panic instead of leaving the walk waiting for it.
#[test]
fn manifest_loader_errors_and_panics_end_the_scan() {
    use mnemon::store::FileEntry;
    type Manifest = std::collections::HashMap<String, FileEntry>;
    let (_tmp, memory) = fresh();
    for n in 0..600 {
        write_note(&memory, &format!("n{n:03}.md"), format!("note {n}"));
    }
    let root = memory.dir().memory();
    let failed = mnemon::scan::scan_while_loading(&root, || -> Result<Manifest, String> {
        Err("store unreadable".into())
    });
    assert_eq!(failed.err(), Some("store unreadable".to_string()));
    let panicked = std::panic::catch_unwind(|| {
        mnemon::scan::scan_while_loading(&root, || -> Result<Manifest, String> {
            panic!("loader panicked")
        })
    });
    assert!(panicked.is_err());
}

/// A `write` killed before its rename left its temp file (`.tmp-note-*`) in the note's folder
/// of `memory/`, which git tracks and nothing cleaned. The scan removes such files once they
/// are an hour old (a live writer's is newer) and leaves other hidden files alone.
#[test]
fn a_killed_writes_temp_file_is_removed_once_stale() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "kw/a.md", "a");
    let folder = memory.dir().memory().join("kw");
    let stale = folder.join(".tmp-note-17035-1764900000000000000-2");
    let fresh_temp = folder.join(".tmp-note-17036-1764900000000000000-0");
    let user = folder.join(".tmp-notes-of-mine");
    for p in [&stale, &fresh_temp, &user] {
        std::fs::write(p, "half a note").unwrap();
    }
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    for p in [&stale, &user] {
        std::fs::File::options()
            .write(true)
            .open(p)
            .and_then(|f| f.set_modified(two_hours_ago))
            .unwrap();
    }
    let r = memory.index().unwrap();
    assert_eq!(r.changed, vec!["kw/a"]);
    assert!(!stale.exists(), "the stale temp file is removed");
    assert!(fresh_temp.exists(), "a live writer's temp file is kept");
    assert!(user.exists(), "another hidden file is kept");
}

/// Regression: an edit that kept a note's size, with its mtime set back afterwards (`touch -d`,
/// `cp -p`, a tool restoring times), was never seen by `index`: recall kept the old text, and
/// only `doctor` noticed, calling it damage.
#[test]
fn an_edit_that_keeps_size_and_mtime_is_seen_by_the_next_index() {
    let (_tmp, memory) = fresh();
    write_note(
        &memory,
        "pool.md",
        "---\nname: Pool size\n---\nThe pool holds forty connections.\n",
    );
    memory.index().unwrap();
    let path = memory.dir().memory().join("pool.md");
    let before = std::fs::metadata(&path).unwrap();
    let text = "---\nname: Pool size\n---\nThe pool holds fifty connections.\n";
    assert_eq!(
        text.len() as u64,
        before.len(),
        "the premise: the same size"
    );
    std::fs::write(&path, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(before.modified().unwrap())
        .unwrap();
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    assert_eq!(after.len(), before.len());

    let outcome = memory.index().unwrap();
    assert_eq!(outcome.changed, vec!["pool".to_string()], "{outcome:?}");
    let hits = |q: &str| {
        let mut q = mnemon::recall::Query::text(q);
        q.record = false;
        memory.recall(&q).unwrap().results.len()
    };
    assert_eq!(hits("fifty connections"), 1);
    assert_eq!(hits("forty"), 0);
    let report = memory.doctor().unwrap();
    assert!(report.healthy, "{report:?}");
}

/// Regression: the scan indexed `weird#hash.md` or ` lead.md` without a word, though no
/// `[[...]]` link can name them (`write` refuses such ids): links meant for them dangled to
/// `weird` or `lead`. Such a note is indexed and reported with the fix.
#[test]
fn a_note_no_link_can_name_is_indexed_and_reported() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "weird#hash.md", "hash body words");
    write_note(&memory, " lead.md", "lead body words");
    write_note(&memory, "plain.md", "plain body words");
    let report = memory.index().unwrap();
    assert_eq!(report.notes, 3);
    let problems: Vec<String> = memory
        .doctor()
        .unwrap()
        .note_errors
        .into_iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("weird#hash.md:") && p.contains("holds `#`")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(" lead.md:") && p.contains("begins or ends with a space")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .all(|p| p.contains("no link can name this note"))
    );
}

/// Two note files whose names are the same text in two Unicode normal forms (one precomposed,
/// one decomposed as macOS writes names) look alike but are two notes: the scan says so, names
/// the difference, and keeps both indexed; `doctor` is unhealthy until they are merged.
#[test]
fn names_in_two_unicode_normal_forms_are_reported_as_look_alike_twins() {
    let (_tmp, memory) = common::fresh();
    let composed = "résumé.md";
    let decomposed = "re\u{301}sume\u{301}.md";
    common::write_note(&memory, composed, "---\nname: One\n---\nfirst\n");
    common::write_note(&memory, decomposed, "---\nname: Two\n---\nsecond\n");
    common::write_note(&memory, "café.md", "---\nname: Alone\n---\nthird\n");
    let report = memory.index().expect("index");
    assert_eq!(report.notes, 3);
    let twins: Vec<&str> = report
        .errors
        .iter()
        .filter(|e| e.message.contains("another Unicode normal form"))
        .map(|e| e.path.as_str())
        .collect();
    assert_eq!(twins.len(), 2, "{:?}", report.errors);
    assert!(
        twins.contains(&composed) && twins.contains(&decomposed),
        "{twins:?}"
    );
    assert!(
        report
            .errors
            .iter()
            .any(|e| e.message.contains("re\\u{301}sume\\u{301}")),
        "the message shows the marks: {:?}",
        report.errors
    );
    let doctor = memory.doctor().expect("doctor");
    assert!(!doctor.healthy);
}

/// `Deploy.md` beside `deploy.md` (a `write Deploy` on Linux, a teammate's rename) is one file
/// on macOS and Windows: a checkout or sync there loses one of them, and nothing said so. The
/// scan names both; `doctor` is unhealthy until they are merged or one is renamed.
#[cfg(target_os = "linux")]
#[test]
fn names_that_differ_only_in_case_are_reported_as_twins() {
    let (_tmp, memory) = common::fresh();
    common::write_note(&memory, "deploy.md", "---\nname: One\n---\nhelm\n");
    common::write_note(&memory, "Deploy.md", "---\nname: Two\n---\nterraform\n");
    common::write_note(&memory, "ops/Pool.md", "---\nname: Three\n---\npool\n");
    common::write_note(&memory, "Ops/pool.md", "---\nname: Four\n---\npool\n");
    common::write_note(&memory, "deployment.md", "---\nname: Alone\n---\nfive\n");
    // In case and in normal form at once.
    common::write_note(&memory, "Résumé.md", "---\nname: Six\n---\ncv\n");
    common::write_note(
        &memory,
        "re\u{301}sume\u{301}.md",
        "---\nname: Seven\n---\ncv\n",
    );
    let report = memory.index().expect("index");
    assert_eq!(report.notes, 7);
    let mut twins: Vec<&str> = report
        .errors
        .iter()
        .filter(|e| e.message.contains("only in letter case"))
        .map(|e| e.path.as_str())
        .collect();
    twins.sort_unstable();
    assert_eq!(
        twins,
        [
            "Deploy.md",
            "Ops/pool.md",
            "Résumé.md",
            "deploy.md",
            "ops/Pool.md",
            "re\u{301}sume\u{301}.md"
        ],
        "{:?}",
        report.errors
    );
    assert!(
        !report
            .errors
            .iter()
            .any(|e| e.message.contains("another Unicode normal form")),
        "told once, as a case twin: {:?}",
        report.errors
    );
    assert!(
        report
            .errors
            .iter()
            .any(|e| e.path == "Deploy.md" && e.message.contains("`deploy.md`")),
        "each names the other: {:?}",
        report.errors
    );
    let doctor = memory.doctor().expect("doctor");
    assert!(!doctor.healthy);
}

/// Regression: `memory/` moved away while a server had the folder open: its next re-index
/// found no note, removed every one from the index, and recall answered nothing without a
/// word. Indexing now refuses while the notes folder is gone, naming it, and the index keeps
/// answering; with the folder back, indexing goes on as before.
#[test]
fn a_notes_folder_moved_away_is_an_error_not_every_note_removed() {
    let (tmp, m) = fresh();
    write_note(
        &m,
        "pool.md",
        "---\nname: Pool sizing\n---\nThe pgbouncer pool holds 20.\n",
    );
    m.index().unwrap();
    let memory = m.dir().memory();
    let aside = tmp.path().join("moved");
    std::fs::rename(&memory, &aside).unwrap();
    let e = m.index().unwrap_err().to_string();
    assert!(
        e.contains("is gone") && e.contains("put the notes folder back"),
        "{e}"
    );
    let e = m
        .index_paths(&[memory.join("pool.md")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("is gone"), "{e}");
    // A write says the same (it said "open folder ...: No such file or directory"), and makes
    // no notes folder holding only its note.
    let e = m
        .write_note(&mnemon::WriteRequest::new("retry", "Retries back off."))
        .unwrap_err();
    assert!(
        matches!(e, mnemon::Error::NotAMemoryFolder { .. })
            && e.to_string().contains("put the notes folder back"),
        "{e}"
    );
    assert!(!memory.exists());
    let ids = |m: &mnemon::Memory| -> Vec<String> {
        m.recall(&mnemon::recall::Query::text("pgbouncer pool"))
            .unwrap()
            .results
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids(&m), ["pool"], "the index still answers");
    std::fs::rename(&aside, &memory).unwrap();
    assert_eq!(m.index().unwrap().notes, 1);
    assert_eq!(ids(&m), ["pool"]);
}

/// A note removed (here by hand; git does the same on a pull) while the event log keeps its
/// history: `stats` and `show` said to run `mnemon index` "if you just added it", which was
/// already done. They say that the file is gone and where to look.
#[test]
fn a_removed_note_with_a_history_is_named_as_removed() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "kept.md", "---\nname: Kept\n---\nStill here.\n");
    write_note(&memory, "gone.md", "---\nname: Gone\n---\nSoon removed.\n");
    memory.index().unwrap();
    memory.set_importance("gone", 9, &[], "").unwrap();
    std::fs::remove_file(memory.dir().memory().join("gone.md")).unwrap();
    memory.index().unwrap();
    for e in [
        memory.stats("gone").unwrap_err(),
        memory.show("gone").unwrap_err(),
    ] {
        assert!(matches!(e, mnemon::Error::RemovedNode { .. }), "{e}");
        assert!(
            e.to_string().contains("its file is gone from memory/"),
            "{e}"
        );
    }
    // An id that never was a note is still a spelling matter.
    let e = memory.stats("never").unwrap_err();
    assert!(matches!(e, mnemon::Error::UnknownNode { .. }), "{e}");
}

/// `mnemon show ops/Pool-Sizing` said "check the spelling" while `ops/pool-sizing` existed:
/// ids are case-sensitive, and the message now names the id that differs in case only.
#[test]
fn an_id_differing_in_case_only_names_the_note_it_means() {
    let (_tmp, memory) = fresh();
    write_note(
        &memory,
        "ops/pool-sizing.md",
        "---\nname: Pool sizing\n---\nTwenty connections.\n",
    );
    memory.index().unwrap();
    let e = memory.show("ops/Pool-Sizing").unwrap_err();
    match &e {
        mnemon::Error::UnknownNode { id, meant } => {
            assert_eq!(id, "ops/Pool-Sizing");
            assert_eq!(meant.as_deref(), Some("ops/pool-sizing"));
        }
        other => panic!("{other}"),
    }
    assert!(
        e.to_string()
            .ends_with("ids are case-sensitive: use `ops/pool-sizing`"),
        "{e}"
    );
    // The same for feedback and importance, which name ids too.
    let e = memory
        .set_importance("OPS/POOL-SIZING", 5, &[], "")
        .unwrap_err();
    assert!(e.to_string().contains("use `ops/pool-sizing`"), "{e}");
    // No twin: the spelling advice stays.
    let e = memory.show("ops/pool-sizes").unwrap_err();
    assert!(
        matches!(&e, mnemon::Error::UnknownNode { meant: None, .. }),
        "{e}"
    );
}

/// `recall` with the anchor `../x` said "no note with id `../x`; run `mnemon index` if you just
/// added it" (Python: NotFound), where `show ../x` says the id is invalid.
#[test]
fn an_anchor_no_id_can_be_is_a_bad_argument_not_a_missing_note() {
    let (_tmp, memory) = fresh();
    write_note(&memory, "a.md", "---\nname: A\n---\nAlpha.\n");
    memory.index().unwrap();
    for bad in ["../x", "/etc/passwd", ""] {
        let mut q = mnemon::recall::Query::anchors([bad]);
        q.record = false;
        let e = memory.recall(&q).unwrap_err();
        assert!(
            matches!(
                &e,
                mnemon::Error::InvalidArgument {
                    what: "anchors",
                    ..
                }
            ),
            "{bad}: {e}"
        );
    }
    let mut q = mnemon::recall::Query::anchors(["missing"]);
    q.record = false;
    assert!(matches!(
        memory.recall(&q).unwrap_err(),
        mnemon::Error::UnknownNode { .. }
    ));
}
