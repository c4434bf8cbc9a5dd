//! What changed in `memory/`? Walking the notes, diffing them against the manifest and parsing
//! only the files that changed.
//!
//! A file whose [`Stat`] (size, mtime, ctime, inode) matches the manifest is not opened at all,
//! so re-scanning an unchanged corpus reads no note contents. A file whose stat changed is read and hashed; if the
//! hash matches, only the manifest is refreshed. Everything else is parsed (in parallel when there
//! are many). Files that disappeared leave the graph; a rename is a removal plus an addition.

use crate::background::{FREE_LATER_MIN_ITEMS, free_later};
use crate::notes::{self, MAX_NOTE_BYTES, ParsedNote, Problem, ProblemKind};
use crate::store::{Batch, EdgeValue, FileEntry, NodeRecord, NoteUpdate};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::OnceLock;
use walk::Found;

mod walk;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Characters of body kept in a node record for display.
pub const EXCERPT_CHARS: usize = 280;
/// Most components (folders and the file name) of a note's path below `memory/`: a folder
/// `MAX_DEPTH` levels down is reported and not listed. Bounds the walk through link chains and
/// hostile trees (and the folder descriptors a walk holds open).
pub const MAX_DEPTH: usize = 32;
/// Above this many files to parse, parsing is spread over threads.
const PARALLEL_THRESHOLD: usize = 256;
/// Threads reading and parsing notes, per core (reads from a cold page cache wait on the disk).
const READ_THREADS_PER_CORE: usize = 3;
/// At most this many reading threads.
const MAX_READ_THREADS: usize = 32;

/// The report for a folder `depth` levels below `memory/` that is not listed (its notes would
/// be over [`MAX_DEPTH`]).
fn too_deep_folder_message(depth: usize) -> String {
    format!(
        "folder {depth} levels below memory/: notes in it would be over the depth limit of \
         {MAX_DEPTH} path parts (folders and file name), so the notes below it were skipped; \
         move them into a folder nearer memory/"
    )
}

/// The report for a note path of `parts` components, over [`MAX_DEPTH`].
fn too_deep_note_message(parts: usize) -> String {
    format!(
        "note {parts} path parts below memory/, over the depth limit of {MAX_DEPTH} (folders \
         and file name): it was skipped; move it into a folder nearer memory/"
    )
}

/// A file-level error found while scanning (the note may still be indexed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScanError {
    /// Path relative to `memory/` (or the absolute path when it is outside).
    pub path: String,
    /// What is wrong, and the fix.
    pub message: String,
}

/// What a scan compares with a note's manifest entry to tell whether the file changed without
/// reading it: size, mtime, and the inode's change time and number. The change time is set by
/// the kernel on every write and cannot be set back by a program (`touch -d`, `cp -p` and
/// tools that restore an mtime can set the mtime back), and a file put in place by a rename
/// (editors' and `git`'s way of saving) is another inode: an edit that keeps size and mtime
/// is still seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
    pub(crate) ino: u64,
}

impl Stat {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stat {
        let (ctime_ns, ino) = change_time_and_inode(meta);
        Stat {
            size: meta.len(),
            mtime_ns: mtime_ns(meta),
            ctime_ns,
            ino,
        }
    }

    /// Whether `self` and `other` may be the stat of one version of a file: equal, except that
    /// an unsettled ctime ([`FileEntry::UNSETTLED_CTIME_NS`]) matches any.
    pub(crate) fn may_be(&self, other: &Stat) -> bool {
        let unsettled = |s: &Stat| s.ctime_ns == FileEntry::UNSETTLED_CTIME_NS;
        self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && self.ino == other.ino
            && (self.ctime_ns == other.ctime_ns || unsettled(self) || unsettled(other))
    }

    /// The stat `entry` recorded.
    pub(crate) fn of_entry(entry: &FileEntry) -> Stat {
        Stat {
            size: entry.size,
            mtime_ns: entry.mtime_ns,
            ctime_ns: entry.ctime_ns,
            ino: entry.ino,
        }
    }
}

/// A file's inode change time (nanoseconds since the Unix epoch) and inode number; (0, 0) where
/// the platform has none.
#[cfg(unix)]
fn change_time_and_inode(meta: &std::fs::Metadata) -> (i64, u64) {
    use std::os::unix::fs::MetadataExt;
    let ns = meta
        .ctime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.ctime_nsec());
    (ns, meta.ino())
}

#[cfg(not(unix))]
fn change_time_and_inode(_meta: &std::fs::Metadata) -> (i64, u64) {
    (0, 0)
}

/// What a scan found, ready to apply to the store.
#[derive(Debug, Default)]
pub struct ScanOutcome {
    /// The store changes.
    pub batch: Batch,
    /// The notes that were (re-)parsed, for the index layers above the store. Their edges
    /// have moved into `batch.upserts` (`parsed[i]` is `batch.upserts[i]`'s note).
    pub parsed: Vec<ParsedNote>,
    /// Ids that left the corpus.
    pub removed: Vec<String>,
    /// Errors of the walk itself (unreadable folders, symlink loops, bad file names).
    pub walk_errors: Vec<ScanError>,
    /// What could not be read (`memory/`-relative): folders whose listing failed (`""` for
    /// `memory/` itself) and notes whose read failed. The notes below or at them are kept as the
    /// index has them, not removed nor compared: unreadable is not gone.
    pub unread: Vec<String>,
    /// The first open or listing that failed because too many files were open
    /// ([`crate::error::is_out_of_files`]): what was not read is not the notes' fault, and the
    /// scan is no answer; the caller fails with it.
    pub out_of_files: Option<crate::Error>,
}

impl ScanOutcome {
    /// `Err` when a file was left unread because too many files were open: such a scan is no
    /// picture of the notes (see [`ScanOutcome::out_of_files`]).
    pub fn check_complete(&mut self) -> crate::Result<()> {
        self.out_of_files.take().map_or(Ok(()), Err)
    }

    /// Whether the note file `path` (`memory/`-relative) is at or below what could not be read.
    pub fn unread_covers(&self, path: &str) -> bool {
        covered(&self.unread, path)
    }
}

/// Whether `path` is one of `unread` or below one of its folders.
fn covered(unread: &[String], path: &str) -> bool {
    unread.iter().any(|u| {
        u.is_empty()
            || path == u
            || path
                .strip_prefix(u.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Walk `memory_dir`, compare against `manifest`, and parse what changed.
pub fn scan<S: BuildHasher + Sync>(
    memory_dir: &Path,
    manifest: &HashMap<String, FileEntry, S>,
) -> ScanOutcome {
    let mut out = ScanOutcome::default();
    let (root, found) = walk_notes(memory_dir, &|rel| manifest.get(rel).copied(), &mut out);
    compare_and_read(&root, found, manifest, out)
}

/// [`scan`] with the manifest given by `load`, which runs on a thread of its own while the walk
/// lists the folders (reading a large manifest from the store takes about as long as listing
/// the folders, so the two overlap). The walk waits for the manifest before it looks a note up.
/// Returns the manifest too (the caller frees it); `load`'s error ends the scan before any note
/// is read.
pub fn scan_while_loading<S, E>(
    memory_dir: &Path,
    load: impl FnOnce() -> Loaded<S, E> + Send,
) -> std::result::Result<(ScanOutcome, HashMap<String, FileEntry, S>), E>
where
    S: BuildHasher + Send + Sync,
    E: Send + Sync,
{
    // `None` inside when `load` panicked (the panic is raised again when the threads join).
    let cell: OnceLock<Option<Loaded<S, E>>> = OnceLock::new();
    let mut out = ScanOutcome::default();
    let (root, found) = std::thread::scope(|s| {
        s.spawn(|| {
            let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load));
            let (value, panic) = match loaded {
                Ok(v) => (Some(v), None),
                Err(p) => (None, Some(p)),
            };
            // Set before a panic is raised again, so that no lookup waits forever.
            let _ = cell.set(value);
            if let Some(p) = panic {
                std::panic::resume_unwind(p);
            }
        });
        let known = |rel: &str| match cell.wait() {
            Some(Ok(m)) => m.get(rel).copied(),
            _ => None,
        };
        walk_notes(memory_dir, &known, &mut out)
    });
    match cell.into_inner() {
        Some(Some(Ok(manifest))) => {
            let out = compare_and_read(&root, found, &manifest, out);
            Ok((out, manifest))
        }
        Some(Some(Err(e))) => Err(e),
        // A panic of `load` was raised when the scope ended.
        _ => unreachable!("the manifest loader neither returned nor panicked"),
    }
}

/// What a manifest loader gave.
type Loaded<S, E> = std::result::Result<HashMap<String, FileEntry, S>, E>;

/// The notes below `memory_dir` (canonical root and what the walk found), walk errors in `out`.
fn walk_notes(
    memory_dir: &Path,
    known: &(dyn Fn(&str) -> Option<FileEntry> + Sync),
    out: &mut ScanOutcome,
) -> (PathBuf, Vec<Found>) {
    // No folder, no notes: every note of the manifest is then removed.
    let (root, found) = match memory_dir.canonicalize() {
        Ok(root) => {
            let found = walk::walk(
                &root,
                known,
                &mut out.walk_errors,
                &mut out.unread,
                &mut out.out_of_files,
            );
            (root, found)
        }
        Err(e) => {
            out.walk_errors.push(ScanError {
                path: memory_dir.display().to_string(),
                message: format!("cannot open the notes folder ({e}); run `mnemon init`"),
            });
            (PathBuf::new(), Vec::new())
        }
    };
    report_unicode_twins(&found, &mut out.walk_errors);
    report_case_twins(&found, &mut out.walk_errors);
    // Errors by the path they show (lossy for a name that is not UTF-8, absolute for one outside
    // the folder): for the rest, the same order as the notes.
    out.walk_errors.sort_by(|a, b| path_order(&a.path, &b.path));
    (root, found)
}

/// Report notes whose paths are the same text in two Unicode normal forms (`résumé.md` written
/// precomposed and `re\u{301}sume\u{301}.md` as macOS writes names): on most Linux file systems
/// they are two files that look alike, and an id typed either way names only one of them. Both
/// stay indexed. Only non-ASCII paths are looked at.
fn report_unicode_twins(found: &[Found], errors: &mut Vec<ScanError>) {
    use unicode_normalization::UnicodeNormalization;
    let mut by_form: HashMap<String, Vec<&str>> = HashMap::new();
    for f in found.iter().filter(|f| !f.rel.is_ascii()) {
        by_form
            .entry(f.rel.nfc().collect())
            .or_default()
            .push(f.rel.as_str());
    }
    for (_, mut paths) in by_form.into_iter().filter(|(_, p)| p.len() > 1) {
        paths.sort_unstable();
        for p in &paths {
            let others: Vec<&str> = paths.iter().copied().filter(|o| o != p).collect();
            errors.push(ScanError {
                path: (*p).to_string(),
                message: format!(
                    "`{}` is the same name as {} in another Unicode normal form: two notes that look \
                    alike; merge them into one file",
                    notes::with_marks_shown(p),
                    names_shown(&others)
                ),
            });
        }
    }
}

/// `paths` quoted, marks shown, comma-separated: the other twins a message names.
fn names_shown(paths: &[&str]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .map(|o| format!("`{}`", notes::with_marks_shown(o)))
        .collect();
    shown.join(", ")
}

/// Report notes whose paths differ only in letter case (`Deploy.md` and `deploy.md`,
/// `Runbooks/x.md` and `runbooks/x.md`; `Résumé.md` and `re\u{301}sumé.md` too, in case and
/// normal form): on macOS and Windows, and on any case-insensitive file system, they are one
/// file, so a checkout or a sync there keeps one of them and loses the other. Both stay
/// indexed. A folder of lower-case ASCII names (the common one) costs one pass over its
/// bytes; otherwise each path is hashed with its letters folded and only paths whose hashes
/// meet are compared.
fn report_case_twins(found: &[Found], errors: &mut Vec<ScanError>) {
    use std::hash::Hasher;
    use unicode_normalization::UnicodeNormalization;
    if found.iter().all(|f| {
        f.rel
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    }) {
        return;
    }
    // The normal form of an ASCII path is itself.
    let folded = |p: &str| p.nfc().flat_map(char::to_lowercase).collect::<Vec<char>>();
    let mut keyed: Vec<(u64, u32)> = found
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut h = rustc_hash::FxHasher::default();
            for c in f.rel.nfc().flat_map(char::to_lowercase) {
                h.write_u32(u32::from(c));
            }
            (h.finish(), i as u32)
        })
        .collect();
    keyed.sort_unstable();
    // Twins in case (and maybe in normal form); twins in normal form alone are
    // `report_unicode_twins`'.
    let twins = |a: &str, b: &str| {
        a != b && folded(a) == folded(b) && ((a.is_ascii() && b.is_ascii()) || !a.nfc().eq(b.nfc()))
    };
    for group in keyed.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        for &(_, i) in group {
            let p = found[i as usize].rel.as_str();
            let mut others: Vec<&str> = group
                .iter()
                .map(|&(_, j)| found[j as usize].rel.as_str())
                .filter(|o| twins(p, o))
                .collect();
            if others.is_empty() {
                continue;
            }
            others.sort_unstable();
            errors.push(ScanError {
                path: p.to_string(),
                message: format!(
                    "`{}` differs from {} only in letter case: on macOS, Windows and any \
                     case-insensitive file system they are one file, and a checkout or sync \
                     there loses one of them; merge them into one file, or rename one",
                    notes::with_marks_shown(p),
                    names_shown(&others)
                ),
            });
        }
    }
}

/// Read what `found` says changed since `manifest`, and list what left it.
fn compare_and_read<S: BuildHasher>(
    root: &Path,
    found: Vec<Found>,
    manifest: &HashMap<String, FileEntry, S>,
    mut out: ScanOutcome,
) -> ScanOutcome {
    let vanished = read_changed(root, &found, &mut out);
    // Every path of the manifest was found when as many found notes were known (the paths
    // found are distinct): the common case of a re-scan needs no set of them.
    let known = found.iter().filter(|f| f.old.is_some()).count();
    if known == manifest.len() && vanished.is_empty() {
        let big = found.len() >= FREE_LATER_MIN_ITEMS;
        free_later(found, big);
        return out;
    }
    let vanished: HashSet<&str> = vanished.iter().map(String::as_str).collect();
    let seen: HashSet<&str> = found
        .iter()
        .map(|f| f.rel.as_str())
        .filter(|rel| !vanished.contains(rel))
        .collect();
    let mut removed: Vec<(String, String)> = manifest
        .keys()
        .filter(|p| !seen.contains(p.as_str()) && !covered(&out.unread, p))
        .filter_map(|p| indexed_id(p).map(|id| (p.clone(), id)))
        .collect();
    removed.sort();
    out.removed = removed.iter().map(|(_, id)| id.clone()).collect();
    out.batch.removals = removed;
    out
}

/// Scan only `paths` (absolute, or relative to `memory_dir`), as a file watcher reports them:
/// each is stat'ed, compared with its manifest entry (`entry_of`), and read, parsed or marked
/// removed; nothing else is walked. Paths that are not notes (other extensions, hidden
/// components) are ignored. `None` when a path needs the full walk's judgement (a symlink, a
/// folder, a folder that is gone, which `notes_under` tells from a file that is gone: whether
/// the manifest holds notes below a relative path): the caller then runs [`scan`].
pub fn scan_paths(
    memory_dir: &Path,
    paths: &[PathBuf],
    entry_of: &dyn Fn(&str) -> Option<FileEntry>,
    notes_under: &dyn Fn(&str) -> bool,
) -> Option<ScanOutcome> {
    let root = memory_dir.canonicalize().ok()?;
    let mut found: Vec<Found> = Vec::new();
    let mut gone: Vec<(String, String)> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = ScanOutcome::default();
    for p in paths {
        let abs = if p.is_absolute() {
            p.clone()
        } else {
            root.join(p)
        };
        let parent = abs.parent()?.canonicalize().ok()?;
        let abs = parent.join(abs.file_name()?);
        let Ok(rel) = abs.strip_prefix(&root) else {
            continue;
        };
        let meta = std::fs::symlink_metadata(&abs);
        if let Ok(m) = &meta
            && (m.file_type().is_symlink() || m.is_dir())
        {
            return None;
        }
        // A watcher reports a removed folder alone (`rm -rf`, moved out, a `git checkout`),
        // not the notes in it: those are found gone by the walk.
        if let Err(e) = &meta
            && e.kind() == std::io::ErrorKind::NotFound
            && notes_under(&rel_display(&root, &abs))
        {
            return None;
        }
        let hidden = rel
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
        if abs.extension().and_then(|e| e.to_str()) != Some("md") || hidden {
            continue;
        }
        let rel_s = rel_display(&root, &abs);
        let parts = rel.components().count();
        if parts > MAX_DEPTH {
            out.walk_errors.push(ScanError {
                path: rel_s,
                message: too_deep_note_message(parts),
            });
            continue;
        }
        if !seen.insert(rel_s.clone()) {
            continue;
        }
        let old = entry_of(&rel_s);
        match meta {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if old.is_some()
                    && let Some(id) = indexed_id(&rel_s)
                {
                    gone.push((rel_s, id));
                }
            }
            Err(e) => out.walk_errors.push(ScanError {
                path: rel_s,
                message: format!("cannot stat ({e})"),
            }),
            Ok(meta) if !meta.is_file() => {}
            Ok(meta) => {
                if let Err(message) = notes::id_from_relative_path(rel) {
                    out.walk_errors.push(ScanError {
                        path: rel_s,
                        message: format!("{message}; the file was skipped"),
                    });
                    continue;
                }
                found.push(Found {
                    rel: rel_s,
                    old,
                    stat: Some(Stat::of(&meta)),
                });
            }
        }
    }
    for rel in read_changed(&root, &found, &mut out) {
        if entry_of(&rel).is_some()
            && let Some(id) = indexed_id(&rel)
        {
            gone.push((rel, id));
        }
    }
    gone.sort();
    out.removed = gone.iter().map(|(_, id)| id.clone()).collect();
    out.batch.removals = gone;
    Some(out)
}

/// The id under which the manifest's note file `rel` was indexed: its path less `.md`, as the
/// id rules of the build that indexed it had it. A name today's rules refuse (a rule added
/// since) still names the note to remove: it would otherwise stay in the index for good.
fn indexed_id(rel: &str) -> Option<String> {
    notes::id_from_relative_path(Path::new(rel))
        .ok()
        .or_else(|| rel.strip_suffix(".md").map(str::to_string))
}

/// Read and parse the found files (below `root`) whose [`Stat`] differs from their manifest
/// entry, into `out`. Returns the files that were gone when they were opened (deleted since
/// the walk listed them): gone, not unreadable.
fn read_changed(root: &Path, found: &[Found], out: &mut ScanOutcome) -> Vec<String> {
    let mut vanished = Vec::new();
    let to_read: Vec<&Found> = found
        .iter()
        .filter(|f| match (f.old, f.stat) {
            (Some(old), Some(st)) => Stat::of_entry(&old) != st,
            _ => true,
        })
        .collect();
    // Sized once: growing them copies every note read so far (and touches fresh pages).
    out.batch.upserts.reserve(to_read.len());
    out.parsed.reserve(to_read.len());
    for r in parse_all(root, &to_read) {
        match r {
            ReadResult::Touched(rel, entry) => out.batch.touched.push((rel, entry)),
            ReadResult::Same => {}
            ReadResult::Vanished(rel) => vanished.push(rel),
            ReadResult::Parsed(update, parsed) => {
                out.batch.upserts.push(*update);
                out.parsed.push(*parsed);
            }
            ReadResult::Unreadable(err) => {
                out.unread.push(err.path.clone());
                out.walk_errors.push(err);
            }
            ReadResult::OutOfFiles(rel, err) => {
                // Kept as unread too: a caller that did not check would not take it for gone.
                out.unread.push(rel);
                out.out_of_files.get_or_insert(err);
            }
        }
    }
    vanished
}

/// A file's mtime in nanoseconds since the Unix epoch (0 when unknown).
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// How long after a change a file's stat is not trusted to show the next one: FAT keeps mtimes
/// in steps of 2 s, many file systems in whole seconds, and the kernel stamps times from a clock
/// that moves in ticks; a write in the same step as the last leaves size, mtime and ctime alike.
const UNSETTLED_NS: i64 = 3_000_000_000;

/// How far ahead of the clock a change time still counts as recent (a file server whose clock
/// runs ahead); further ahead (an mtime set into the future, a clock stepped back) is no recent
/// change, or the file would be read by every scan until the clock caught up.
const AHEAD_NS: i64 = 60_000_000_000;

/// Whether a file with `stat`, read at `now_ns`, changed too recently for its stat to tell the
/// next change (the change time where the platform has one, else the mtime).
fn unsettled(stat: &Stat, now_ns: i64) -> bool {
    let changed_ns = if stat.ctime_ns != 0 {
        stat.ctime_ns
    } else {
        stat.mtime_ns
    };
    changed_ns > now_ns.saturating_sub(UNSETTLED_NS) && changed_ns < now_ns.saturating_add(AHEAD_NS)
}

/// The clock in nanoseconds since the Unix epoch.
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

enum ReadResult {
    Touched(String, FileEntry),
    /// Read again, its bytes and recorded entry unchanged.
    Same,
    /// Deleted since the walk listed it (`memory/`-relative path).
    Vanished(String),
    Parsed(Box<NoteUpdate>, Box<ParsedNote>),
    Unreadable(ScanError),
    /// Not opened or read (`memory/`-relative path) because too many files are open.
    OutOfFiles(String, crate::Error),
}

fn parse_all(root: &Path, files: &[&Found]) -> Vec<ReadResult> {
    if files.len() < PARALLEL_THRESHOLD {
        return files.iter().map(|f| read_one(root, f)).collect();
    }
    use rayon::prelude::*;
    // Reading notes that are not in the page cache waits on the disk, file by file: more threads
    // than cores keep more reads in flight (a read from a cold cache waits on the disk, not on
    // a core).
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(1)
        .saturating_mul(READ_THREADS_PER_CORE)
        .min(MAX_READ_THREADS);
    let parse = || files.par_iter().map(|f| read_one(root, f)).collect();
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(parse),
        Err(_) => parse(),
    }
}

fn read_one(root: &Path, f: &Found) -> ReadResult {
    let unreadable = |e: std::io::Error| {
        if crate::error::is_out_of_files(&e) {
            let err = crate::Error::io("read the note", root.join(&f.rel), e);
            return ReadResult::OutOfFiles(f.rel.clone(), err);
        }
        ReadResult::Unreadable(ScanError {
            path: f.rel.clone(),
            message: format!("cannot read the note ({e}); check its permissions"),
        })
    };
    // Checked at the open, not at the walk: the note may have been swapped for a symlink leaving
    // memory/ (or for a FIFO) since it was listed.
    let (file, meta) = match notes::open_inside(root, &f.rel) {
        Ok(opened) => opened,
        Err(notes::OpenNoteError::Io(e)) if crate::error::is_out_of_files(&e) => {
            let err = crate::Error::io("open the note", root.join(&f.rel), e);
            return ReadResult::OutOfFiles(f.rel.clone(), err);
        }
        Err(notes::OpenNoteError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return ReadResult::Vanished(f.rel.clone());
        }
        Err(e) => {
            return ReadResult::Unreadable(ScanError {
                path: f.rel.clone(),
                message: e.to_string(),
            });
        }
    };
    let stat = f.stat.unwrap_or_else(|| Stat::of(&meta));
    let mut bytes = Vec::with_capacity((stat.size as usize).min(MAX_NOTE_BYTES));
    if let Err(e) = file.take(MAX_NOTE_BYTES as u64).read_to_end(&mut bytes) {
        return unreadable(e);
    }
    let hash = xxhash_rust::xxh3::xxh3_64(&bytes);
    let entry = FileEntry {
        size: stat.size,
        mtime_ns: stat.mtime_ns,
        ctime_ns: if unsettled(&stat, now_ns()) {
            FileEntry::UNSETTLED_CTIME_NS
        } else {
            stat.ctime_ns
        },
        ino: stat.ino,
        hash,
    };
    if let Some(old) = f.old
        && old.hash == hash
        && old.size == stat.size
    {
        if old == entry {
            // Read again as unsettled, and still so: nothing to write.
            return ReadResult::Same;
        }
        return ReadResult::Touched(f.rel.clone(), entry);
    }
    let mut parsed = notes::parse_note(f.id(), &bytes);
    if let Some(why) = notes::why_unlinkable(f.id()) {
        // Indexed all the same (recall finds it), but links meant for it dangle.
        parsed.problems.insert(
            0,
            Problem::new(
                ProblemKind::File,
                format!(
                    "its id `{}` {why}: no link can name this note; rename the file to letters, digits, `-`, `_` and `/`",
                    f.id()
                ),
            ),
        );
    }
    if stat.size > MAX_NOTE_BYTES as u64 {
        parsed.problems.insert(
            0,
            Problem::new(
                ProblemKind::File,
                format!(
                    "note is {} bytes, over the {} MiB limit: only its first {} MiB are indexed; split it into smaller notes",
                    stat.size,
                    MAX_NOTE_BYTES >> 20,
                    MAX_NOTE_BYTES >> 20
                ),
            ),
        );
    }
    let update = NoteUpdate {
        id: f.id().to_string(),
        path: f.rel.clone(),
        record: record_of(&parsed, &f.rel),
        // Moved, not cloned: nothing above the scan reads a parsed note's edges (a clone would
        // copy and later free several strings per edge of every note read).
        edges: std::mem::take(&mut parsed.edges)
            .into_iter()
            .map(|e| EdgeValue {
                other: e.to,
                kind: e.kind,
                provenance: e.provenance,
                confidence: e.confidence,
                source_out_degree: 0,
            })
            .collect(),
        file: entry,
        problems: parsed.problems.clone(),
        // Computed above the scan, and only for small batches (`memory::ingest`).
        sketch: None,
    };
    ReadResult::Parsed(Box::new(update), Box::new(parsed))
}

/// The node record of a parsed note.
pub fn record_of(p: &ParsedNote, rel: &str) -> NodeRecord {
    NodeRecord {
        path: rel.to_string(),
        name: p.meta.name.clone(),
        description: p.meta.description.clone(),
        note_type: p.meta.note_type,
        created_s: p.meta.created_s,
        updated_s: p.meta.updated_s,
        ttl_days: p.meta.ttl_days,
        pin: p.meta.pin,
        tags: p.meta.tags.clone(),
        excerpt: excerpt(&p.body),
    }
}

/// The body's first [`EXCERPT_CHARS`] characters with whitespace runs collapsed (and `…` when
/// cut).
pub fn excerpt(body: &str) -> String {
    // A word at a time while the text is ASCII (its whitespace is then ASCII whitespace, vertical
    // tab included); a word with another byte restarts in chars.
    let is_space = |b: u8| matches!(b, b' ' | b'\t'..=b'\r');
    let bytes = body.as_bytes();
    let mut out = String::with_capacity(EXCERPT_CHARS + 4);
    let mut n = 0;
    let mut i = 0;
    loop {
        while i < bytes.len() && is_space(bytes[i]) {
            i += 1;
        }
        if i == bytes.len() {
            return out;
        }
        let start = i;
        while i < bytes.len() && !is_space(bytes[i]) {
            if !bytes[i].is_ascii() {
                return excerpt_chars(body);
            }
            i += 1;
        }
        let word = &body[start..i];
        if n > 0 {
            out.push(' ');
            n += 1;
        }
        let room = EXCERPT_CHARS.saturating_sub(n);
        if word.len() > room {
            out.push_str(&word[..room]);
            out.push('…');
            return out;
        }
        out.push_str(word);
        n += word.len();
    }
}

/// [`excerpt`] of any text, a char at a time.
fn excerpt_chars(body: &str) -> String {
    let mut out = String::with_capacity(EXCERPT_CHARS + 4);
    let mut n = 0;
    for word in body.split_whitespace() {
        if n > 0 {
            out.push(' ');
            n += 1;
        }
        for c in word.chars() {
            if n >= EXCERPT_CHARS {
                out.push('…');
                return out;
            }
            out.push(c);
            n += 1;
        }
    }
    out
}

/// `/`-separated paths compared component by component (`a.split('/').cmp(b.split('/'))`),
/// as bytes with `/` below every other byte: the same order, since no component holds a byte
/// as low (a NUL), without two splitting iterators per comparison (the walk sorts on one
/// thread, so each comparison's cost is paid in full).
fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let key = |c: u8| if c == b'/' { 0 } else { c };
    match x.iter().zip(y).position(|(p, q)| p != q) {
        Some(i) => key(x[i]).cmp(&key(y[i])),
        None => x.len().cmp(&y.len()),
    }
}

fn rel_display(root: &Path, p: &Path) -> String {
    match p.strip_prefix(root) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => p.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Regression: a note indexed under a name today's id rules refuse (a bidirectional override,
    /// refused since) was never removed: its id did not parse, so neither its deletion nor its
    /// skipping reached the store, and recall returned it for good.
    #[test]
    fn a_note_indexed_under_a_name_now_refused_is_removed_by_its_indexed_id() {
        let tmp = tempfile::tempdir().expect("tmp");
        let entry = FileEntry {
            size: 1,
            mtime_ns: 1,
            ctime_ns: 1,
            ino: 1,
            hash: 1,
        };
        let refused = "x/invoice\u{202E}txt.md";
        assert!(notes::id_from_relative_path(Path::new(refused)).is_err());
        let manifest: HashMap<String, FileEntry> = [(refused.to_string(), entry)].into();
        // Gone from the folder (the file deleted), and present but skipped (still there).
        for present in [false, true] {
            if present {
                std::fs::create_dir_all(tmp.path().join("x")).expect("mkdir");
                std::fs::write(tmp.path().join(refused), "body").expect("write");
            }
            let out = scan(tmp.path(), &manifest);
            assert_eq!(out.removed, ["x/invoice\u{202E}txt"], "present: {present}");
        }
    }

    /// Regression: on a file system keeping times in whole seconds (ext4 with small inodes,
    /// FAT, many network mounts) a note edited in place in the same second as the scan that
    /// read it kept size, mtime and ctime, and no later scan read it again: recall answered
    /// from the old text for good. A note read so soon after a change is recorded unsettled,
    /// and read again by the next scan.
    #[test]
    fn a_same_size_edit_in_the_step_of_the_last_read_is_seen_by_the_next_scan() {
        let tmp = tempfile::tempdir().expect("tmp");
        let note = tmp.path().join("a.md");
        std::fs::write(&note, "the kiwi setting is aaaa\n").expect("write");
        let first = scan(tmp.path(), &HashMap::<String, FileEntry>::new());
        let recorded = first.batch.upserts[0].file;
        assert_eq!(recorded.ctime_ns, FileEntry::UNSETTLED_CTIME_NS);
        std::fs::write(&note, "the kiwi setting is bbbb\n").expect("edit");
        // What a coarse clock leaves: the stat as the edit left it, except that no recorded
        // ctime is a real one.
        let now = Stat::of(&std::fs::metadata(&note).expect("stat"));
        let as_left = FileEntry {
            size: now.size,
            mtime_ns: now.mtime_ns,
            ctime_ns: if recorded.ctime_ns == FileEntry::UNSETTLED_CTIME_NS {
                recorded.ctime_ns
            } else {
                now.ctime_ns
            },
            ino: now.ino,
            hash: recorded.hash,
        };
        let manifest: HashMap<String, FileEntry> = [("a.md".to_string(), as_left)].into();
        let second = scan(tmp.path(), &manifest);
        assert_eq!(second.parsed.len(), 1, "the edit was not read");
        assert!(
            second.parsed[0].body.contains("bbbb"),
            "{:?}",
            second.parsed[0].body
        );

        // Read again unchanged: nothing to write while still unsettled, the settled entry once
        // the change is older (on a slow machine it may be by now).
        let entry = second.batch.upserts[0].file;
        let manifest: HashMap<String, FileEntry> = [("a.md".to_string(), entry)].into();
        let third = scan(tmp.path(), &manifest);
        assert!(third.parsed.is_empty());
        assert!(
            third
                .batch
                .touched
                .iter()
                .all(|(_, e)| e.ctime_ns != FileEntry::UNSETTLED_CTIME_NS),
            "{:?}",
            third.batch.touched
        );
    }

    #[test]
    fn a_stat_is_unsettled_for_three_seconds_after_the_change_it_shows() {
        let now = 1_800_000_000_000_000_000_i64;
        let stat = |mtime_ns, ctime_ns| Stat {
            size: 1,
            mtime_ns,
            ctime_ns,
            ino: 1,
        };
        let s = 1_000_000_000;
        assert!(unsettled(&stat(now - 10 * s, now - s), now));
        assert!(
            !unsettled(&stat(now - s, now - 4 * s), now),
            "the ctime decides"
        );
        assert!(unsettled(&stat(now - 2 * s, 0), now), "no ctime: the mtime");
        assert!(!unsettled(&stat(now - 3 * s, 0), now));
        assert!(
            unsettled(&stat(now - 10 * s, now + s), now),
            "a time a little ahead"
        );
        assert!(!unsettled(&stat(now, now + 3600 * s), now), "an hour ahead");
    }

    /// A note whose manifest entry says to parse it again is parsed, its bytes unchanged.
    #[test]
    fn a_note_marked_for_reparsing_is_parsed_though_its_bytes_are_the_same() {
        let tmp = tempfile::tempdir().expect("tmp");
        std::fs::write(tmp.path().join("a.md"), "alpha\n").expect("write");
        let first = scan(tmp.path(), &HashMap::<String, FileEntry>::new());
        let entry = first.batch.upserts[0].file;
        let manifest: HashMap<String, FileEntry> = [("a.md".to_string(), entry)].into();
        let unchanged = scan(tmp.path(), &manifest);
        assert!(unchanged.parsed.is_empty());
        let marked = FileEntry {
            size: FileEntry::REPARSE_SIZE,
            ..entry
        };
        let manifest: HashMap<String, FileEntry> = [("a.md".to_string(), marked)].into();
        let again = scan(tmp.path(), &manifest);
        assert_eq!(again.parsed.len(), 1);
        assert_eq!(again.batch.upserts[0].file.size, 6);
    }

    /// Regression: a note deleted between the walk's listing and its read was reported as
    /// "cannot read the note (No such file or directory); check its permissions", kept as
    /// unreadable, and failed `doctor`. It is gone: removed when it was indexed, else nothing.
    #[test]
    fn a_note_deleted_after_the_walk_listed_it_is_gone_not_unreadable() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().canonicalize().expect("canonical");
        std::fs::write(root.join("kept.md"), "kept\n").expect("write");
        let entry = FileEntry {
            size: 4,
            mtime_ns: 1,
            ctime_ns: 1,
            ino: 1,
            hash: 1,
        };
        let manifest: HashMap<String, FileEntry> = [("indexed.md".to_string(), entry)].into();
        let found = |rel: &str, old: Option<FileEntry>| Found {
            rel: rel.to_string(),
            old,
            stat: Some(Stat {
                size: 4,
                mtime_ns: 2,
                ctime_ns: 2,
                ino: 2,
            }),
        };
        // Both listed by the walk, then deleted before the read.
        let listed = vec![
            found("indexed.md", Some(entry)),
            found("new.md", None),
            found("kept.md", None),
        ];
        let out = compare_and_read(&root, listed, &manifest, ScanOutcome::default());
        assert!(out.walk_errors.is_empty(), "{:?}", out.walk_errors);
        assert!(out.unread.is_empty(), "{:?}", out.unread);
        assert_eq!(out.removed, ["indexed"]);
        assert_eq!(out.parsed.len(), 1);
        assert_eq!(out.batch.upserts[0].id, "kept");
    }

    const PIECES: &[&str] = &[
        "a", "word", " ", "  ", "\t", "\n", "\r\n", "\u{b}", "\u{c}", "é", "中", "\u{a0}",
        "\u{2003}", "x.y", "…",
    ];

    /// A note listed by the walk, then swapped for a symlink leaving memory/ or for a FIFO
    /// before it is read: refused at the open (never read, never waited on), and reported.
    #[cfg(unix)]
    #[test]
    fn a_note_swapped_after_the_walk_is_checked_when_it_is_read() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("memory");
        std::fs::create_dir_all(&root).expect("mkdir");
        let root = root.canonicalize().expect("canonical");
        std::fs::write(tmp.path().join("secret.md"), "SECRET").expect("write");
        std::os::unix::fs::symlink(tmp.path().join("secret.md"), root.join("a.md")).expect("link");
        let status = std::process::Command::new("mkfifo")
            .arg(root.join("b.md"))
            .status()
            .expect("mkfifo");
        assert!(status.success());
        let found = |rel: &str| Found {
            rel: rel.to_string(),
            old: None,
            stat: None,
        };
        let mut out = ScanOutcome::default();
        read_changed(&root, &[found("a.md"), found("b.md")], &mut out);
        assert!(out.parsed.is_empty(), "{:?}", out.parsed);
        let errors: Vec<(&str, &str)> = out
            .walk_errors
            .iter()
            .map(|e| (e.path.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].0 == "a.md" && errors[0].1.contains("outside memory/"),
            "{errors:?}"
        );
        assert!(
            errors[1].0 == "b.md" && errors[1].1.contains("named pipe"),
            "{errors:?}"
        );
    }

    #[test]
    fn excerpt_cuts_and_collapses() {
        assert_eq!(excerpt("  a \t\n b\u{b}c  "), "a b c");
        let long = "ab ".repeat(200);
        let e = excerpt(&long);
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        assert!(e.ends_with('…'));
        assert_eq!(excerpt("é  b"), "é b");
    }

    proptest! {
        /// Byte order with `/` lowest is component order, on paths with empty components,
        /// prefixes of each other and bytes on both sides of `/`.
        #[test]
        fn path_order_is_component_order(a in "[a/.\\-!é0]{0,12}", b in "[a/.\\-!é0]{0,12}") {
            prop_assert_eq!(path_order(&a, &b), a.split('/').cmp(b.split('/')));
            prop_assert_eq!(path_order(&a, &a), std::cmp::Ordering::Equal);
        }

        /// The ASCII path gives what the char path gives, on any text.
        #[test]
        fn excerpt_equals_the_char_by_char_excerpt(
            picks in proptest::collection::vec(0..PIECES.len(), 0..400)
        ) {
            let text: String = picks.iter().map(|&i| PIECES[i]).collect();
            prop_assert_eq!(excerpt(&text), excerpt_chars(&text));
        }
    }
}
