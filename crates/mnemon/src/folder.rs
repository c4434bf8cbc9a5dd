//! Where is the memory? Finding, creating and laying out a memory folder.
//!
//! A memory folder (by default `.mnemon/`, found by walking up from the working directory like git
//! finds `.git/`) holds three parts:
//!
//! ```text
//! .mnemon/
//!   .gitignore   ignores index/, mnemon's hidden files in events/ and notes' temporary files (this folder's own .gitignore; the enclosing repository's is never edited)
//!   memory/      one Markdown note per topic: the source of truth
//!   events/      one append-only segment per session
//!   index/       derived files (redb store, lexical index, snapshots): rebuildable, git-ignored
//! ```
//!
//! `--dir DIR` and `MNEMON_DIR` name the memory folder itself (the folder holding `memory/`); a
//! folder that contains `.mnemon/` is accepted too.

use crate::error::{Error, Result};
/// What tells a file of the folder (the index store, a sub-folder of `memory/`) from one that
/// replaced it under its name: a process that holds it long compares the two.
pub use crate::fs::file_identity;
use std::path::{Path, PathBuf};

/// Name of the memory folder created by `mnemon init` and looked for when walking up.
pub const DEFAULT_FOLDER_NAME: &str = ".mnemon";
/// The ignore rule written to the memory folder's `.gitignore`.
pub const GITIGNORE_RULE: &[u8] = b"/index/";
/// The rule for mnemon's own hidden files in `events/` (the compaction lock, temporaries of
/// segments being created or compressed): never segments, so never worth sharing.
pub const GITIGNORE_EVENTS_RULE: &[u8] = b"/events/.*";
/// The rule for a note's temporary file, which `write` renames over the note (one left by a
/// killed write is removed by the scan once it is an hour old): never a note, never to commit.
pub const GITIGNORE_NOTE_TEMP_RULE: &[u8] = b"/memory/**/.tmp-note-*";

/// Paths of one memory folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryDir {
    root: PathBuf,
}

impl MemoryDir {
    /// Use `root` as the memory folder without checking it.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        MemoryDir { root: root.into() }
    }

    /// Resolve the memory folder: `explicit` (from `--dir` or `MNEMON_DIR`) wins, else walk up from
    /// `cwd` looking for `.mnemon/`.
    pub fn locate(explicit: Option<&Path>, cwd: &Path) -> Result<Self> {
        if let Some(dir) = explicit {
            let dir = if dir.is_absolute() {
                dir.to_path_buf()
            } else {
                cwd.join(dir)
            };
            if dir.join("memory").is_dir() {
                return Ok(MemoryDir::at(dir));
            }
            let nested = dir.join(DEFAULT_FOLDER_NAME);
            if nested.join("memory").is_dir() {
                return Ok(MemoryDir::at(nested));
            }
            if !crate::layout::lost_its_notes(&dir) && crate::layout::lost_its_notes(&nested) {
                return Err(Error::not_a_memory_folder(nested));
            }
            return Err(Error::not_a_memory_folder(dir));
        }
        let mut here = Some(cwd);
        while let Some(dir) = here {
            let candidate = dir.join(DEFAULT_FOLDER_NAME);
            if candidate.join("memory").is_dir() {
                return Ok(MemoryDir::at(candidate));
            }
            // Not a parent's memory in its place: this project's notes are what is missing.
            if crate::layout::lost_its_notes(&candidate) {
                return Err(Error::not_a_memory_folder(candidate));
            }
            here = dir.parent();
        }
        Err(Error::NoMemoryFolder {
            start: cwd.to_path_buf(),
        })
    }

    /// Create the layout under `root` (idempotent), and give it as an absolute path. `.gitignore`
    /// is written when the memory is opened (`Memory::open_with`).
    pub fn init(root: impl Into<PathBuf>) -> Result<Self> {
        let dir = MemoryDir::at(root);
        if dir.root().as_os_str().is_empty() {
            return Err(Error::InvalidArgument {
                what: "memory folder",
                message: "the path is empty: give the project's folder or its `.mnemon` (`.` \
                          for the current folder)"
                    .into(),
            });
        }
        if dir.root().exists() && !dir.root().is_dir() {
            return Err(Error::InvalidArgument {
                what: "memory folder",
                message: format!(
                    "{} is a file, not a folder: give the folder to make the memory in (or the \
                     project folder, which gets `.mnemon/`), or move the file away",
                    dir.root().display()
                ),
            });
        }
        let resolved = resolved(dir.root());
        if resolved.parent().is_none() {
            return Err(Error::InvalidArgument {
                what: "memory folder",
                message: format!(
                    "{} is the file system's root: a memory folder there would put memory/, \
                     events/ and index/ at the root; give the project's folder or its `.mnemon`",
                    dir.root().display()
                ),
            });
        }
        // `init --dir DIR/memory` (or a folder below it) would nest a second memory folder
        // inside the notes: its files would be indexed as notes of the outer one. Inside
        // `DIR/index` it would be deleted with the derived index (and is git-ignored), inside
        // `DIR/events` listed as stray files of the log. Both the path as written and as
        // resolved are checked: a `memory/` that is a link to the notes is such a folder too.
        let lexical = std::path::absolute(dir.root()).unwrap_or_else(|_| dir.root().to_path_buf());
        for inner in lexical.ancestors().chain(resolved.ancestors()) {
            let Some(outer) = inner.parent() else {
                continue;
            };
            let why = match inner.file_name().and_then(|n| n.to_str()) {
                Some("memory") => "the notes folder",
                Some("index") => "the index folder (derived: deleted and rebuilt at any time)",
                Some("events") => "the event log folder",
                _ => continue,
            };
            if crate::layout::is_memory_layout(outer) {
                return Err(Error::InvalidArgument {
                    what: "memory folder",
                    message: format!(
                        "{} is inside {why} {} of the memory folder {}: a memory folder there \
                         would not keep its notes; use `--dir {}`, or a folder outside it",
                        dir.root().display(),
                        inner.display(),
                        outer.display(),
                        outer.display()
                    ),
                });
            }
        }
        dir.check_contained()?;
        // Followed: `memory/` may be a link to the notes (the scan reads through it); links at
        // `events/` and `index/` were refused above.
        for sub in [dir.memory(), dir.events(), dir.index()] {
            match std::fs::metadata(&sub) {
                Ok(m) if !m.is_dir() => {
                    return Err(Error::io(
                        "create folder",
                        &sub,
                        std::io::Error::other(
                            "a file stands where this folder belongs: move it away (or give \
                             another --dir)",
                        ),
                    ));
                }
                _ => {}
            }
            std::fs::create_dir_all(&sub).map_err(|e| Error::io("create folder", &sub, e))?;
        }
        // Absolute, as `locate` gives it: a relative one would name another folder once the
        // process changes its working directory (Python's `os.chdir`).
        Ok(MemoryDir::at(lexical))
    }

    /// Refuse a layout in which writing would leave the folder: `events/` or `index/` (or a file
    /// in them) that is a symbolic link. Reading notes through links is the scanner's business
    /// (links that stay inside `memory/` are fine there); these folders are only mnemon's.
    pub fn check_contained(&self) -> Result<()> {
        self.check_index_contained()?;
        self.check_events_contained()
    }

    /// [`MemoryDir::check_contained`] for `index/` alone.
    pub fn check_index_contained(&self) -> Result<()> {
        check_holds_no_link(
            self.index(),
            "Remove the link (not its target) and let mnemon recreate the folder: it holds only \
             files rebuilt from the notes and events.",
        )
    }

    /// [`MemoryDir::check_contained`] for `events/` alone: what a command that reads only the
    /// event log needs (`events verify`, whatever state `index/` is in).
    pub fn check_events_contained(&self) -> Result<()> {
        check_holds_no_link(
            self.events(),
            "Replace the link by a real folder holding the segments: remove the link, then \
             `mkdir` it and copy the segments from the link's target into it.",
        )
    }

    /// The memory folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `memory/`: the notes.
    pub fn memory(&self) -> PathBuf {
        self.root.join("memory")
    }
    /// `events/`: the per-session event segments.
    pub fn events(&self) -> PathBuf {
        self.root.join("events")
    }
    /// `index/`: derived, rebuildable files.
    pub fn index(&self) -> PathBuf {
        self.root.join("index")
    }
    /// `index/graph.redb`: the index store (nodes, edges, problems).
    pub fn store_file(&self) -> PathBuf {
        self.index().join(crate::layout::STORE_FILE)
    }
    /// The memory folder's own `.gitignore`.
    pub fn gitignore(&self) -> PathBuf {
        self.root.join(".gitignore")
    }

    /// Make sure `.gitignore` ignores `index/`, comparing bytes (never decoding the file), so a
    /// file that is not UTF-8 still gets the rule at most once (failure mode 5). Returns whether
    /// the file was changed.
    pub fn ensure_gitignore(&self) -> Result<bool> {
        let path = self.gitignore();
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::Symlinked {
                target: std::fs::read_link(&path).unwrap_or_default(),
                path,
                fix: format!(
                    "It is left as it is; replace it by a real file holding the lines `{}`, \
                     `{}` and `{}` so git ignores the derived files and mnemon's own temporaries.",
                    String::from_utf8_lossy(GITIGNORE_RULE),
                    String::from_utf8_lossy(GITIGNORE_EVENTS_RULE),
                    String::from_utf8_lossy(GITIGNORE_NOTE_TEMP_RULE),
                ),
            });
        }
        // Opened only as a regular file (`fs::open_regular`): a named pipe there would block
        // every command's open until some process wrote to it.
        let mut existing = Vec::new();
        match crate::fs::open_regular_read(&path) {
            Ok(file) => {
                use std::io::Read;
                (&file)
                    .read_to_end(&mut existing)
                    .map_err(|e| Error::io("read", &path, e))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("read", &path, e)),
        }
        let Some(addition) = gitignore_addition(&existing) else {
            return Ok(false);
        };
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io("open for append", &path, e))?;
        file.write_all(&addition)
            .map_err(|e| Error::io("append to", &path, e))?;
        Ok(true)
    }
}

/// Refuse `sub` (`index/` or `events/`) when it, or a file in it or in its `archive/`, is a
/// symbolic link (`fix` says what to do), or when it is not a folder.
fn check_holds_no_link(sub: PathBuf, fix: &str) -> Result<()> {
    let refuse = |path: PathBuf, fix: String| -> Result<()> {
        let target = std::fs::read_link(&path).unwrap_or_default();
        Err(Error::Symlinked { path, target, fix })
    };
    match std::fs::symlink_metadata(&sub) {
        Ok(m) if m.file_type().is_symlink() => return refuse(sub, fix.to_string()),
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(Error::io(
                "use folder",
                &sub,
                std::io::Error::other("not a folder; move this file away"),
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("inspect", &sub, e)),
    }
    for nested in [sub.clone(), sub.join("archive")] {
        let entries = match std::fs::read_dir(&nested) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            // A file at `archive/` holds no link out of the folder: the event log
            // treats it as no archive and says so (`events::log::list_archive`), so it
            // stops no command.
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory && nested != sub => {
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                return Err(Error::io(
                    "use folder",
                    &nested,
                    std::io::Error::other("not a folder; move this file away"),
                ));
            }
            Err(e) => return Err(Error::io("read folder", &nested, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("read folder", &nested, e))?;
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            if is_link {
                return refuse(
                    entry.path(),
                    format!(
                        "Replace the link by the file itself (or remove it) in {}.",
                        nested.display()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// The bytes to append to a `.gitignore` holding `existing` so that it ignores `index/`,
/// mnemon's hidden files in `events/` and the temporary files of notes being written, or
/// `None` when lines already do. Lines are compared as bytes after trimming ASCII whitespace;
/// `index`, `index/`, `/index` and `/index/` all count, as do `events/.*` and `/events/.*`.
pub fn gitignore_addition(existing: &[u8]) -> Option<Vec<u8>> {
    let has = |rules: &[&[u8]]| {
        existing
            .split(|&b| b == b'\n')
            .any(|line| rules.contains(&line.trim_ascii()))
    };
    let missing: Vec<&[u8]> = [
        (!has(&[b"index", b"index/", b"/index", b"/index/"])).then_some(GITIGNORE_RULE),
        (!has(&[b"events/.*", b"/events/.*"])).then_some(GITIGNORE_EVENTS_RULE),
        (!has(&[GITIGNORE_NOTE_TEMP_RULE, b".tmp-note-*"])).then_some(GITIGNORE_NOTE_TEMP_RULE),
    ]
    .into_iter()
    .flatten()
    .collect();
    if missing.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        out.push(b'\n');
    }
    for rule in missing {
        out.extend_from_slice(rule);
        out.push(b'\n');
    }
    Some(out)
}

/// `path` made absolute, with its longest existing prefix resolved (symbolic links, `..`) and
/// the rest as given: what a folder about to be created will be.
fn resolved(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let path = path.as_path();
    let mut rest = Vec::new();
    let mut here = path;
    loop {
        if let Ok(real) = here.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (here.parent(), here.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                here = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `events/archive` a file (made by hand or a tool) failed every command, first with the
    /// OS's "Not a directory", then with the fix but still failing. It holds no link out of the
    /// folder, so the layout is accepted, and the event log names it with the fix.
    #[test]
    fn a_file_where_the_archive_folder_belongs_is_named_with_the_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = MemoryDir::init(tmp.path().join(".mnemon")).unwrap();
        std::fs::create_dir_all(dir.events()).unwrap();
        std::fs::write(dir.events().join("archive"), "x").unwrap();
        dir.check_contained().unwrap();
        let listed = crate::events::log::list_archive(&crate::fs::RealFs, &dir.events()).unwrap();
        let e = listed.unusable.unwrap_or_default();
        assert!(e.contains("events/archive is a file, not a folder"), "{e}");
        assert!(e.contains("move that file away"), "{e}");
        assert!(listed.segs.is_empty());
    }

    /// Regression: `init --dir /` made a memory folder at the file system's root, and `init`
    /// in a folder below another memory's `memory/` was accepted (its notes were then indexed
    /// as the outer memory's); only `memory/` itself was refused. A file where a folder of the
    /// layout belongs was "File exists".
    #[test]
    fn init_refuses_the_root_folders_inside_notes_and_files_in_the_way() {
        let tmp = tempfile::tempdir().unwrap();
        let outer = MemoryDir::init(tmp.path().join("outer")).unwrap();
        std::fs::create_dir_all(outer.memory().join("runbooks")).unwrap();
        for inside in [
            outer.memory(),
            outer.memory().join("runbooks"),
            outer.memory().join("runbooks/new/deeper"),
            outer.root().join("memory/../memory/runbooks"),
        ] {
            let e = MemoryDir::init(&inside).unwrap_err().to_string();
            assert!(e.contains("inside the notes folder"), "{inside:?}: {e}");
            assert!(!inside.join("index").exists(), "{inside:?}");
        }
        let e = MemoryDir::init("/").unwrap_err().to_string();
        assert!(e.contains("file system's root"), "{e}");
        // An empty path was called the root too.
        let e = MemoryDir::init("").unwrap_err().to_string();
        assert!(e.contains("the path is empty"), "{e}");
        // A folder merely named `memory` elsewhere is fine, and so is one beside a project's
        // own `index/` (no events/, no index store: no memory folder).
        MemoryDir::init(tmp.path().join("memory/project")).unwrap();
        std::fs::create_dir_all(tmp.path().join("src/memory")).unwrap();
        std::fs::create_dir_all(tmp.path().join("src/index")).unwrap();
        MemoryDir::init(tmp.path().join("src/memory/cache")).unwrap();
        // A `memory/` that links to the notes elsewhere: a memory folder (the scan reads
        // through the link), and init through the link is inside the notes too.
        let linked = tmp.path().join("linked");
        std::fs::create_dir_all(tmp.path().join("notes-elsewhere")).unwrap();
        std::fs::create_dir_all(&linked).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("notes-elsewhere"), linked.join("memory"))
            .unwrap();
        MemoryDir::init(&linked).unwrap();
        let e = MemoryDir::init(linked.join("memory"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("inside the notes folder"), "{e}");
        let blocked = tmp.path().join("blocked");
        std::fs::create_dir_all(&blocked).unwrap();
        std::fs::write(blocked.join("memory"), "x").unwrap();
        let e = MemoryDir::init(&blocked).unwrap_err().to_string();
        assert!(e.contains("a file stands where this folder belongs"), "{e}");
    }

    #[test]
    fn addition_is_none_when_rule_present_in_non_utf8_file() {
        let mut bytes = vec![0xff, 0xfe, b'\n'];
        bytes.extend_from_slice(b"  /index/ \r\nevents/.*\n.tmp-note-*\n");
        assert_eq!(gitignore_addition(&bytes), None);
    }

    #[test]
    fn addition_adds_newline_when_missing() {
        assert_eq!(
            gitignore_addition(b"target"),
            Some(b"\n/index/\n/events/.*\n/memory/**/.tmp-note-*\n".to_vec())
        );
        assert_eq!(
            gitignore_addition(b""),
            Some(b"/index/\n/events/.*\n/memory/**/.tmp-note-*\n".to_vec())
        );
    }

    /// A `.gitignore` written by an earlier build (the index rule alone) gets the events rule
    /// once: `git add -A` committed the compaction lock and could commit temporaries.
    #[test]
    fn addition_adds_only_the_rule_that_is_missing() {
        assert_eq!(
            gitignore_addition(b"/index/\n/memory/**/.tmp-note-*\n"),
            Some(b"/events/.*\n".to_vec())
        );
        assert_eq!(
            gitignore_addition(b"/events/.*\n/memory/**/.tmp-note-*\n"),
            Some(b"/index/\n".to_vec())
        );
        // A write killed between its temporary file and the rename left the file in memory/,
        // where `git add -A` committed it as a note.
        assert_eq!(
            gitignore_addition(b"/index/\n/events/.*\n"),
            Some(b"/memory/**/.tmp-note-*\n".to_vec())
        );
    }

    /// What the rules ignore, as git reads them: the temporaries of notes at any depth of
    /// `memory/`, never a note.
    #[test]
    fn git_ignores_note_temporaries_and_no_note() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = MemoryDir::init(tmp.path().join(".mnemon")).unwrap();
        assert!(dir.ensure_gitignore().unwrap());
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .current_dir(dir.root())
                .args(args)
                .output()
        };
        let Ok(init) = git(&["init", "-q"]) else {
            return; // no git on this machine
        };
        assert!(init.status.success());
        std::fs::create_dir_all(dir.memory().join("a/b")).unwrap();
        for p in [
            "memory/.tmp-note-1-2-0",
            "memory/a/b/.tmp-note-3-4-0",
            "memory/a/b/n.md",
        ] {
            std::fs::write(dir.root().join(p), "x").unwrap();
        }
        let out = git(&["status", "--porcelain", "--untracked-files=all"]).unwrap();
        let listed = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(listed.contains("memory/a/b/n.md"), "{listed}");
        assert!(!listed.contains(".tmp-note-"), "{listed}");
    }

    #[test]
    fn locate_walks_up_and_honours_explicit() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = MemoryDir::init(tmp.path().join(".mnemon")).unwrap();
        let deep = tmp.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(MemoryDir::locate(None, &deep).unwrap(), dir);
        // explicit: the folder itself, or its parent holding .mnemon/
        assert_eq!(MemoryDir::locate(Some(dir.root()), &deep).unwrap(), dir);
        assert_eq!(MemoryDir::locate(Some(tmp.path()), &deep).unwrap(), dir);
        let err = MemoryDir::locate(Some(&deep), &deep).unwrap_err();
        assert!(err.to_string().contains("mnemon init"), "{err}");
    }

    /// `--dir` at a file, or at the notes folder, was told to run `init` there: on a file that
    /// fails, and on the notes folder it nests a second memory folder inside the notes.
    #[test]
    fn a_wrong_dir_is_told_the_right_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = MemoryDir::init(tmp.path().join(".mnemon")).unwrap();
        let root = dir.root().display().to_string();
        let notes = dir.memory();
        let err = MemoryDir::locate(Some(&notes), tmp.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("`--dir {root}`")) && !err.contains("init"),
            "{err}"
        );
        let refused = MemoryDir::init(&notes).unwrap_err().to_string();
        assert!(refused.contains(&format!("`--dir {root}`")), "{refused}");
        assert!(!notes.join("memory").exists() && !notes.join("index").exists());
        let file = tmp.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let err = MemoryDir::locate(Some(&file), tmp.path())
            .unwrap_err()
            .to_string();
        let parent = tmp.path().display().to_string();
        assert!(
            err.contains("it is a file") && err.contains(&format!("`--dir {parent}`")),
            "{err}"
        );
        // A note, `index/` or `events/` of a memory folder: that folder, never `init` there
        // (a note's folder, the notes folder, was the advice for a note and was refused next).
        let note = notes.join("a.md");
        std::fs::write(&note, "x").unwrap();
        for inside in [note, dir.index(), dir.events()] {
            let err = MemoryDir::locate(Some(&inside), tmp.path())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("`--dir {root}`")) && !err.contains("init"),
                "{err}"
            );
        }
        // Elsewhere below a memory folder, a folder of its own may become one.
        let beside = dir.root().join("drafts");
        std::fs::create_dir_all(&beside).unwrap();
        let err = MemoryDir::locate(Some(&beside), tmp.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("mnemon init --dir"), "{err}");
    }

    /// A project's `.mnemon/memory` removed (by hand, by a checkout) while its event log and
    /// index stayed: the walk up went on and answered from a parent folder's memory (a home
    /// folder's), and `--dir` said only "run `mnemon init`".
    #[test]
    fn a_memory_folder_that_lost_its_notes_is_named_not_passed_over() {
        let tmp = tempfile::tempdir().unwrap();
        let outer = MemoryDir::init(tmp.path().join(".mnemon")).unwrap();
        let project = tmp.path().join("project");
        let inner = MemoryDir::init(project.join(".mnemon")).unwrap();
        std::fs::create_dir_all(inner.index()).unwrap();
        std::fs::write(inner.index().join(crate::layout::STORE_FILE), b"x").unwrap();
        let sub = project.join("src");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(MemoryDir::locate(None, &sub).unwrap(), inner);
        std::fs::remove_dir_all(inner.memory()).unwrap();
        for err in [
            MemoryDir::locate(None, &sub).unwrap_err(),
            MemoryDir::locate(Some(&project), &sub).unwrap_err(),
            MemoryDir::locate(Some(inner.root()), &sub).unwrap_err(),
        ] {
            let text = err.to_string();
            assert!(
                text.starts_with(&format!(
                    "{} is not a mnemon memory folder",
                    inner.root().display()
                )) && text.contains("it was one, whose notes folder is gone")
                    && text.contains(&format!("`mnemon init --dir {}`", inner.root().display())),
                "{text}"
            );
        }
        // Folders merely named index/ and events/ are a project's own: the advice is `init`.
        let plain = tmp.path().join("web");
        std::fs::create_dir_all(plain.join("index")).unwrap();
        std::fs::create_dir_all(plain.join("events")).unwrap();
        let text = MemoryDir::locate(Some(&plain), &sub)
            .unwrap_err()
            .to_string();
        assert!(text.contains("; run `mnemon init --dir"), "{text}");
        // Init there again brings the memory back, the walk finds it, not the outer one.
        MemoryDir::init(inner.root()).unwrap();
        assert_eq!(MemoryDir::locate(None, &sub).unwrap(), inner);
        assert_ne!(inner, outer);
    }

    /// `init` inside another memory's `index/` made a memory whose notes the documented
    /// `rm -rf index/` deleted (and git ignored); inside `events/` its folders were stray files of
    /// the outer log. Refused, as inside the notes.
    #[test]
    fn init_refuses_the_index_and_event_folders_of_another_memory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = MemoryDir::init(tmp.path().join(".mnemon")).unwrap();
        let root = dir.root().display().to_string();
        for inside in [dir.index(), dir.events().join("nested")] {
            let refused = MemoryDir::init(&inside).unwrap_err().to_string();
            assert!(refused.contains(&format!("`--dir {root}`")), "{refused}");
            assert!(!inside.join("memory").exists(), "{}", inside.display());
        }
    }
}
