//! Which note files are below `memory/`, and what is the stat of those the manifest knows?
//!
//! A depth-first walk over `std::fs::read_dir`, each folder's names sorted by their bytes, so
//! the notes come out in the order of `walkdir`'s `sort_by_file_name` (siblings by name, a
//! folder's notes right after its name) without a sort of the whole list. Hidden names are
//! skipped, folders are walked [`MAX_DEPTH`] deep (a deeper folder holding anything is reported,
//! not listed), symlinks are followed while they stay inside `memory/` and lead where the walk
//! does not go by itself (a hidden folder, one too deep): a link to a note or folder the walk
//! lists anyway would index those notes twice, and a link back to a folder above it is a loop;
//! both are reported and skipped.
//!
//! Re-scanning an unchanged corpus is a stat of every note and nothing else, so the stat is what
//! this module makes cheap: a known note is stat'ed relative to its folder's open handle
//! (`DirEntry::metadata`, an `fstatat` on the folder's descriptor: no lookup of the path from
//! `/`). A folder's file entries are looked at (each name checked, looked up in the manifest
//! and, when known, stat'ed) a chunk at a time on every core while the folder is still being
//! listed (one `read_dir`, the part no second core can share), then put in name order with its
//! folders and symlinks; the sub-folders are walked on every core, each into its own listing,
//! and the listings are merged in name order. A new note is not stat'ed here at all: it is read
//! anyway, and its reader takes the stat from the open file. Written on `read_dir` rather than
//! on `walkdir` because `walkdir` stats an entry through its full path, one at a time, and a
//! re-scan is mostly those stats. A folder's descriptor stays open while the folders below it
//! are walked: the walks in progress, at most [`MAX_DEPTH`] deep on each thread, bound the
//! descriptors open at once.

use super::{MAX_DEPTH, ScanError, Stat};
use crate::notes;
use crate::store::FileEntry;
use rayon::prelude::*;
use std::ffi::{OsStr, OsString};
use std::fs::DirEntry;
use std::path::Path;
use std::sync::Mutex;

/// Entries of a folder handed to another core at once while the folder is listed.
const LOOK_CHUNK: usize = 512;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A note file found by the walk.
#[derive(Debug, Clone)]
pub(super) struct Found {
    /// Its path relative to `memory/`, `/`-separated: its id and `.md` (checked by the walk).
    pub rel: String,
    /// Its manifest entry, when the manifest knows the path.
    pub old: Option<FileEntry>,
    /// Its stat, for a note the manifest knows (to tell whether it changed). A new note is read
    /// anyway, and its reader takes it from the open file.
    pub stat: Option<Stat>,
}

impl Found {
    /// The note's id: its path less `.md`.
    pub fn id(&self) -> &str {
        self.rel.strip_suffix(".md").unwrap_or(&self.rel)
    }
}

/// The note files below `root` (canonical), in `walkdir`'s sorted order, each with the entry
/// `known` gives for its path and, when there is one, its stat. Errors go to `errors`.
pub(super) fn walk(
    root: &Path,
    known: &(dyn Fn(&str) -> Option<FileEntry> + Sync),
    errors: &mut Vec<ScanError>,
    unread: &mut Vec<String>,
    out_of_files: &mut Option<crate::Error>,
) -> Vec<Found> {
    let w = Walk { root, known };
    let mut out = Listing::default();
    // The whole walk runs in the thread pool, so that a folder's entries and its sub-folders
    // are shared out without a hand-over between threads per folder.
    rayon::scope(|_| w.folder(root, "", 0, &[String::new()], &mut out));
    errors.append(&mut out.errors);
    unread.append(&mut out.unread);
    if out_of_files.is_none() {
        *out_of_files = out.out_of_files.take();
    }
    out.found
}

/// Whether the folder `abs` has an entry that is not hidden (or cannot be listed: then it may).
fn holds_anything(abs: &Path) -> bool {
    match std::fs::read_dir(abs) {
        Ok(mut rd) => rd.any(|e| {
            e.map_or(true, |e| {
                !e.file_name().as_encoded_bytes().starts_with(b".")
            })
        }),
        Err(_) => true,
    }
}

/// A folder's (device, inode), to recognise it again through a symlink.
fn dir_identity(p: &Path) -> Option<(u64, u64)> {
    identity(&std::fs::metadata(p).ok()?)
}

#[cfg(unix)]
fn identity(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// What the walk shares between its threads.
struct Walk<'a> {
    root: &'a Path,
    known: &'a (dyn Fn(&str) -> Option<FileEntry> + Sync),
}

/// What a folder and everything below it hold, in order.
#[derive(Default)]
struct Listing {
    found: Vec<Found>,
    errors: Vec<ScanError>,
    /// Folders whose listing failed, whole or in part.
    unread: Vec<String>,
    /// The first listing that failed because too many files were open.
    out_of_files: Option<crate::Error>,
}

impl Listing {
    fn error(&mut self, path: String, message: String) {
        self.errors.push(ScanError { path, message });
    }

    fn append(&mut self, mut other: Listing) {
        self.found.append(&mut other.found);
        self.errors.append(&mut other.errors);
        self.unread.append(&mut other.unread);
        if self.out_of_files.is_none() {
            self.out_of_files = other.out_of_files.take();
        }
    }
}

/// What one file entry of a folder is, once looked at (on any thread).
enum Entry {
    /// A note file, checked, looked up and (when known) stat'ed.
    Note(Found),
    /// Something to report instead.
    Problem(ScanError),
    /// Not a note (another kind of file, another extension).
    Other,
}

/// An entry of a folder, in the folder's name order.
enum Item {
    /// A file entry, looked at.
    Looked(Entry),
    /// A folder to walk, by its path below the root.
    Folder(String, DirEntry),
    /// A symlink to follow (or refuse), by its path below the root.
    Link(String, DirEntry),
}

fn problem(path: String, message: String) -> Entry {
    Entry::Problem(ScanError { path, message })
}

/// The prefix of the temp file `write` fills before renaming it over a note
/// (`memory::write::place`, named by `fs::temp_path`).
const NOTE_TEMP_PREFIX: &[u8] = b".tmp-note-";

/// Remove `entry` when it is a temp file of a `write` that was killed before its rename, old
/// enough that no live writer still fills it: `memory/` is the user's (and git's), and nothing
/// else would ever remove it. Best effort.
fn remove_if_stale_note_temp(name: &OsStr, entry: &DirEntry) {
    if !name.as_encoded_bytes().starts_with(NOTE_TEMP_PREFIX) {
        return;
    }
    let stale = entry
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > crate::index::lexical::STALE_TEMP_AGE);
    if stale {
        let _ = std::fs::remove_file(entry.path());
    }
}

/// Why a folder or note cannot be read, with the fix that matches the cause.
fn cannot_read(e: std::io::Error) -> String {
    let fix = match e.raw_os_error() {
        #[cfg(unix)]
        Some(libc::ENAMETOOLONG) => "shorten the folder or file names on this path",
        #[cfg(unix)]
        Some(libc::EIO) => "the disk reports a read error; check it and restore the file",
        _ if e.kind() == std::io::ErrorKind::PermissionDenied => {
            "check permissions (the user running mnemon must be able to read it)"
        }
        _ => "check that it can be read",
    };
    format!("cannot read ({e}); {fix}")
}

fn child_rel(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    }
}

impl Walk<'_> {
    /// Walk the folder `abs` (`rel` below the root, at `depth`; `ancestors` are the paths of the
    /// folders from the root down to it, for loop detection) into `out`.
    fn folder(&self, abs: &Path, rel: &str, depth: usize, ancestors: &[String], out: &mut Listing) {
        if depth >= MAX_DEPTH {
            // Not walked: the limit stops link chains and hostile trees. Said once per folder
            // that holds anything, so that no note goes missing unreported.
            if holds_anything(abs) {
                out.error(rel.to_string(), super::too_deep_folder_message(depth));
            }
            return;
        }
        let here = || if rel.is_empty() { "." } else { rel }.to_string();
        let entries = match std::fs::read_dir(abs) {
            Ok(rd) => rd,
            Err(e) if crate::error::is_out_of_files(&e) => {
                out.unread.push(rel.to_string());
                out.out_of_files
                    .get_or_insert(crate::Error::io("list the folder", abs, e));
                return;
            }
            Err(e) => {
                out.error(here(), cannot_read(e));
                out.unread.push(rel.to_string());
                return;
            }
        };
        // File entries are looked at a chunk at a time while the listing goes on (on every
        // core); folders and links wait for the name order.
        let known = self.known;
        let look = |(name, entry): (OsString, DirEntry)| {
            let e = look_at(rel, &name, entry, known);
            (name, Item::Looked(e))
        };
        let chunks: Mutex<Vec<Vec<(OsString, Item)>>> = Mutex::new(Vec::new());
        let mut items: Vec<(OsString, Item)> = Vec::new();
        rayon::in_place_scope(|s| {
            let mut chunk: Vec<(OsString, DirEntry)> = Vec::new();
            let hand_over = |chunk: Vec<(OsString, DirEntry)>| {
                let (chunks, look) = (&chunks, &look);
                s.spawn(move |_| {
                    let looked: Vec<_> = chunk.into_iter().map(look).collect();
                    lock(chunks).push(looked);
                });
            };
            for entry in entries {
                let e = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        out.error(here(), cannot_read(e));
                        out.unread.push(rel.to_string());
                        continue;
                    }
                };
                let name = e.file_name();
                if name.as_encoded_bytes().starts_with(b".") {
                    remove_if_stale_note_temp(&name, &e);
                    continue;
                }
                match (name.to_str(), e.file_type()) {
                    (Some(n), Ok(t)) if t.is_dir() => {
                        let item = Item::Folder(child_rel(rel, n), e);
                        items.push((name, item));
                    }
                    (Some(n), Ok(t)) if t.is_symlink() => {
                        let item = Item::Link(child_rel(rel, n), e);
                        items.push((name, item));
                    }
                    _ => {
                        chunk.push((name, e));
                        if chunk.len() == LOOK_CHUNK {
                            hand_over(std::mem::take(&mut chunk));
                        }
                    }
                }
            }
            items.extend(chunk.into_iter().map(look));
        });
        let looked = chunks.into_inner().unwrap_or_else(|p| p.into_inner());
        items.extend(looked.into_iter().flatten());
        let by_name = |a: &(OsString, Item), b: &(OsString, Item)| {
            a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes())
        };
        if items.len() > LOOK_CHUNK {
            items.par_sort_unstable_by(by_name);
        } else {
            items.sort_unstable_by(by_name);
        }
        // The sub-folders (and links), walked on every core, each into its own listing.
        let below: Vec<(&str, &DirEntry, bool)> = items
            .iter()
            .filter_map(|(_, item)| match item {
                Item::Folder(r, e) => Some((r.as_str(), e, false)),
                Item::Link(r, e) => Some((r.as_str(), e, true)),
                Item::Looked(_) => None,
            })
            .collect();
        let walk_below = |&(child, entry, is_link): &(&str, &DirEntry, bool)| {
            let mut listing = Listing::default();
            let mut chain = ancestors.to_vec();
            if is_link {
                self.link(&entry.path(), child, depth + 1, &chain, &mut listing);
            } else {
                chain.push(child.to_string());
                self.folder(&entry.path(), child, depth + 1, &chain, &mut listing);
            }
            listing
        };
        let listings: Vec<Listing> = if below.len() > 1 {
            below.par_iter().map(walk_below).collect()
        } else {
            below.iter().map(walk_below).collect()
        };
        let mut listings = listings.into_iter();
        for (_, item) in items {
            match item {
                Item::Looked(Entry::Note(found)) => out.found.push(found),
                Item::Looked(Entry::Problem(e)) => out.errors.push(e),
                Item::Looked(Entry::Other) => {}
                Item::Folder(..) | Item::Link(..) => {
                    if let Some(l) = listings.next() {
                        out.append(l);
                    }
                }
            }
        }
    }

    /// A symlink at `abs` (`rel`, at `depth`): followed when its target is inside the root.
    fn link(&self, abs: &Path, rel: &str, depth: usize, ancestors: &[String], out: &mut Listing) {
        let target = match abs
            .canonicalize()
            .and_then(|t| Ok((std::fs::metadata(&t)?, t)))
        {
            Ok(t) => t,
            // A link that loops may have been meant for a folder of notes as well as for one
            // note: said whatever its name. Another broken link is said only for a note's name
            // (a dangling link to anything else is not the memory's business).
            Err(e) if is_loop(&e) => {
                out.error(
                    rel.to_string(),
                    "symlink loop (it leads back to itself through links): it was skipped; \
                     remove or fix the link"
                        .to_string(),
                );
                return;
            }
            Err(e) => {
                if rel.ends_with(".md") {
                    out.error(
                        rel.to_string(),
                        format!("broken symlink ({e}): it was skipped"),
                    );
                }
                return;
            }
        };
        let (meta, target) = target;
        if !target.starts_with(self.root) {
            out.error(rel.to_string(), notes::outside_message(&target));
            return;
        }
        // A link to a folder or note the walk reaches anyway would index its notes twice, under
        // two ids, and recall would return both.
        let alias = |out: &mut Listing| -> bool {
            let Ok(inside) = target.strip_prefix(self.root) else {
                return false;
            };
            if !reached_by_the_walk(inside) {
                return false;
            }
            out.error(
                rel.to_string(),
                format!(
                    "symlink to memory/{}, which is indexed where it is: it was skipped, so its notes are not indexed twice; remove the link",
                    inside.display()
                ),
            );
            true
        };
        if meta.is_dir() {
            // The ancestors' identities are looked up only here: links to folders are rare.
            let id = identity(&meta);
            let looped = ancestors
                .iter()
                .find(|a| id.is_some() && dir_identity(&self.root.join(a.as_str())) == id);
            if let Some(anc) = looped {
                let message = format!(
                    "symlink loop back to memory/{anc}: it was skipped; remove or fix the link"
                );
                out.error(rel.to_string(), message);
                return;
            }
            if alias(out) {
                return;
            }
            let mut chain = ancestors.to_vec();
            chain.push(rel.to_string());
            self.folder(abs, rel, depth, &chain, out);
        } else if meta.is_file() && rel.ends_with(".md") {
            if alias(out) {
                return;
            }
            // The target's stat, already at hand (a link's own would not change with the note).
            match note(rel.to_string(), self.known, || Ok(meta)) {
                Entry::Note(found) => out.found.push(found),
                Entry::Problem(e) => out.errors.push(e),
                Entry::Other => {}
            }
        } else if rel.ends_with(".md") {
            let kind = notes::file_kind(meta.file_type());
            out.error(rel.to_string(), notes::not_regular_message(kind));
        }
    }
}

/// Whether `e` says a path's symlinks lead back to themselves (`ELOOP`).
fn is_loop(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Whether the walk lists `inside` (a path below the root, symlinks resolved) by itself: no
/// hidden part, at most [`MAX_DEPTH`] parts.
fn reached_by_the_walk(inside: &Path) -> bool {
    let parts: Vec<_> = inside.components().collect();
    !parts.is_empty()
        && parts.len() <= MAX_DEPTH
        && parts
            .iter()
            .all(|c| !c.as_os_str().as_encoded_bytes().starts_with(b"."))
}

/// What the entry `name` of the folder `rel` is: a note (checked against its id, looked up in
/// `known` and, when known, stat'ed through the folder's descriptor), a folder or a symlink to
/// follow, a problem to report, or nothing of ours.
fn look_at(
    rel: &str,
    name: &OsStr,
    entry: DirEntry,
    known: &(dyn Fn(&str) -> Option<FileEntry> + Sync),
) -> Entry {
    let file_type = entry.file_type();
    let child_rel = match name.to_str() {
        Some(n) => child_rel(rel, n),
        None => {
            let path = child_rel(rel, &name.to_string_lossy());
            return if file_type.as_ref().is_ok_and(|t| !t.is_file()) {
                let message = "folder or link name is not valid UTF-8: rename it; \
                    the notes below it were skipped";
                problem(path, message.to_string())
            } else if name.as_encoded_bytes().ends_with(b".md") {
                let message = "file name is not valid UTF-8: rename the file; the file was skipped";
                problem(path, message.to_string())
            } else {
                Entry::Other
            };
        }
    };
    let file_type = match file_type {
        Ok(t) => t,
        Err(e) => return problem(child_rel, cannot_read(e)),
    };
    // (Folders and links with a valid name are not looked at here.)
    if !child_rel.ends_with(".md") {
        // `x.MD` is a note to its writer (a case-insensitive disk, another tool), not to the
        // scan: said, not passed over in silence.
        let stem_len = child_rel.len().saturating_sub(3);
        if file_type.is_file()
            && child_rel
                .get(stem_len..)
                .is_some_and(|ext| ext.eq_ignore_ascii_case(".md"))
            && let Some(stem) = child_rel.get(..stem_len)
        {
            return problem(
                child_rel.clone(),
                format!(
                    "ends in `{}`, and notes end in `.md` in lower case: rename it to \
                     `{stem}.md` to index it; the file was skipped",
                    &child_rel[stem_len..]
                ),
            );
        }
        return Entry::Other;
    }
    if !file_type.is_file() {
        // A named pipe, socket or device named like a note: never opened, reported.
        return problem(
            child_rel,
            notes::not_regular_message(notes::file_kind(file_type)),
        );
    }
    note(child_rel, known, || entry.metadata())
}

/// The note at `rel`: checked against its id, looked up in `known` and, when known, stat'ed by
/// `stat_of` (through the folder's descriptor, or a link's target's stat already at hand).
fn note(
    rel: String,
    known: &(dyn Fn(&str) -> Option<FileEntry> + Sync),
    stat_of: impl FnOnce() -> std::io::Result<std::fs::Metadata>,
) -> Entry {
    if let Err(message) = notes::id_of_note_path(&rel) {
        return problem(rel, format!("{message}; the file was skipped"));
    }
    let old = known(&rel);
    let stat = match old {
        None => None,
        Some(_) => match stat_of() {
            Ok(m) => Some(Stat::of(&m)),
            Err(e) => return problem(rel, format!("cannot stat ({e})")),
        },
    };
    Entry::Note(Found { rel, old, stat })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a path too long for the file system was reported with "check permissions".
    #[test]
    fn an_unreadable_path_names_the_fix_its_cause_needs() {
        #[cfg(unix)]
        {
            let long = cannot_read(std::io::Error::from_raw_os_error(libc::ENAMETOOLONG));
            assert!(long.contains("shorten the folder or file names"), "{long}");
            assert!(!long.contains("permissions"), "{long}");
        }
        let denied = cannot_read(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert!(denied.contains("check permissions"), "{denied}");
    }
}
