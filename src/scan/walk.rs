//! Which note files are below `memory/`, and what is the stat of those the manifest knows?
//!
//! A depth-first walk over `std::fs::read_dir`, each folder's names sorted by their bytes, so
//! the notes come out in the order of `walkdir`'s `sort_by_file_name` (siblings by name, a
//! folder's notes right after its name) without a sort of the whole list. Hidden names are
//! skipped, folders are walked [`MAX_DEPTH`] deep, symlinks are followed while they stay inside
//! `memory/` (a link back to a folder above it is a loop, reported and skipped).
//!
//! Re-scanning an unchanged corpus is a stat of every note and nothing else, so the stat is what
//! this module makes cheap: a known note is stat'ed relative to its folder's open handle
//! (`DirEntry::metadata`, an `fstatat` on the folder's descriptor: no lookup of the path from
//! `/`), on every core, a batch at a time. A new note is not stat'ed here at all: it is read
//! anyway, and its reader takes the stat from the open file. Written on `read_dir` rather than
//! on `walkdir` because `walkdir` stats an entry through its full path, one at a time (100k
//! notes: 0.63 s for a re-scan on `walkdir`, see BENCHMARKS.md).

use super::{MAX_DEPTH, ScanError, Stat};
use crate::notes;
use crate::store::FileEntry;
use std::fs::DirEntry;
use std::path::Path;

/// Known notes stat'ed at once, at most (their folders stay open until then).
const STAT_BATCH: usize = 4096;
/// Folders kept open for a batch of stats, at most (one descriptor each).
const MAX_OPEN_DIRS: usize = 64;
/// Below this many notes a batch is stat'ed on the walk's own thread.
const PARALLEL_STAT_MIN: usize = 256;

/// A note file found by the walk.
#[derive(Debug, Clone)]
pub(super) struct Found {
    /// Its path relative to `memory/`, `/`-separated: its id and `.md` (checked by the walk).
    pub rel: String,
    /// Its manifest entry, when the manifest knows the path.
    pub old: Option<FileEntry>,
    /// Size and mtime, for a note the manifest knows (to tell whether it changed). A new note is
    /// read anyway, and its reader takes them from the open file.
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
) -> Vec<Found> {
    let mut w = Walk {
        root,
        known,
        found: Vec::new(),
        errors,
        pending: Vec::new(),
        open_dirs: 0,
        stat_failed: Vec::new(),
    };
    w.folder(root, "", 0, &mut vec![String::new()]);
    w.flush();
    let Walk {
        mut found,
        stat_failed,
        ..
    } = w;
    if !stat_failed.is_empty() {
        let mut keep = vec![true; found.len()];
        for i in stat_failed {
            keep[i] = false;
        }
        let mut k = keep.iter();
        found.retain(|_| k.next().copied().unwrap_or(true));
    }
    found
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

struct Walk<'a> {
    root: &'a Path,
    known: &'a (dyn Fn(&str) -> Option<FileEntry> + Sync),
    found: Vec<Found>,
    errors: &'a mut Vec<ScanError>,
    /// Known notes waiting for their stat: index in `found`, and the entry to stat.
    pending: Vec<(usize, DirEntry)>,
    /// Folders whose descriptor `pending` keeps open.
    open_dirs: usize,
    /// Indexes in `found` of notes whose stat failed (reported; they leave the list).
    stat_failed: Vec<usize>,
}

impl Walk<'_> {
    fn error(&mut self, path: String, message: String) {
        self.errors.push(ScanError { path, message });
    }

    /// Walk the folder `abs` (`rel` below the root, at `depth`; `ancestors` are the paths of the
    /// folders from the root down to it, for loop detection).
    fn folder(&mut self, abs: &Path, rel: &str, depth: usize, ancestors: &mut Vec<String>) {
        if depth >= MAX_DEPTH {
            return;
        }
        let cannot_read = |e: std::io::Error| format!("cannot read ({e}); check permissions");
        let entries = match std::fs::read_dir(abs) {
            Ok(rd) => rd,
            Err(e) => {
                let path = if rel.is_empty() { "." } else { rel };
                self.error(path.to_string(), cannot_read(e));
                return;
            }
        };
        let mut named: Vec<(std::ffi::OsString, DirEntry)> = Vec::new();
        for entry in entries {
            match entry {
                Ok(e) => {
                    let name = e.file_name();
                    if !name.as_encoded_bytes().starts_with(b".") {
                        named.push((name, e));
                    }
                }
                Err(e) => {
                    let path = if rel.is_empty() { "." } else { rel };
                    self.error(path.to_string(), cannot_read(e));
                }
            }
        }
        named.sort_unstable_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
        let mut waits = false;
        for (name, entry) in named {
            let file_type = entry.file_type();
            let child_rel = match name.to_str() {
                Some(n) if rel.is_empty() => n.to_string(),
                Some(n) => format!("{rel}/{n}"),
                None => {
                    let lossy = name.to_string_lossy();
                    let path = if rel.is_empty() {
                        lossy.into_owned()
                    } else {
                        format!("{rel}/{lossy}")
                    };
                    if file_type.as_ref().is_ok_and(|t| !t.is_file()) {
                        let message = "folder or link name is not valid UTF-8: rename it; \
                            the notes below it were skipped";
                        self.error(path, message.to_string());
                    } else if name.as_encoded_bytes().ends_with(b".md") {
                        let message =
                            "file name is not valid UTF-8: rename the file; the file was skipped";
                        self.error(path, message.to_string());
                    }
                    continue;
                }
            };
            let file_type = match file_type {
                Ok(t) => t,
                Err(e) => {
                    self.error(child_rel, cannot_read(e));
                    continue;
                }
            };
            if file_type.is_symlink() {
                self.link(&entry.path(), child_rel, depth + 1, ancestors);
            } else if file_type.is_dir() {
                ancestors.push(child_rel.clone());
                self.folder(&entry.path(), &child_rel, depth + 1, ancestors);
                ancestors.pop();
            } else if file_type.is_file() && child_rel.ends_with(".md") {
                let Some(index) = self.note(child_rel) else {
                    continue;
                };
                if self.found[index].old.is_some() {
                    self.pending.push((index, entry));
                    waits = true;
                }
            }
        }
        if waits {
            self.open_dirs += 1;
        }
        if self.pending.len() >= STAT_BATCH || self.open_dirs >= MAX_OPEN_DIRS {
            self.flush();
        }
    }

    /// A note at `rel` (a regular file or a link to one): checked, looked up, listed. Its index
    /// in `found`, `None` when its name gives no id (reported).
    fn note(&mut self, rel: String) -> Option<usize> {
        if let Err(message) = notes::id_of_note_path(&rel) {
            self.error(rel, format!("{message}; the file was skipped"));
            return None;
        }
        let old = (self.known)(&rel);
        self.found.push(Found {
            rel,
            old,
            stat: None,
        });
        Some(self.found.len() - 1)
    }

    /// A symlink at `abs` (`rel`, at `depth`): followed when its target is inside the root.
    fn link(&mut self, abs: &Path, rel: String, depth: usize, ancestors: &mut Vec<String>) {
        let target = match abs
            .canonicalize()
            .and_then(|t| Ok((std::fs::metadata(&t)?, t)))
        {
            Ok(t) => t,
            Err(e) => {
                if rel.ends_with(".md") {
                    self.error(rel, format!("broken symlink ({e}): it was skipped"));
                }
                return;
            }
        };
        let (meta, target) = target;
        if !target.starts_with(self.root) {
            self.error(
                rel,
                format!(
                    "symlink to {} outside memory/: it was skipped; copy the note into memory/ instead",
                    target.display()
                ),
            );
            return;
        }
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
                self.error(rel, message);
                return;
            }
            ancestors.push(rel.clone());
            self.folder(abs, &rel, depth, ancestors);
            ancestors.pop();
        } else if meta.is_file() && rel.ends_with(".md") {
            // The target's stat, already at hand (a link's own would not change with the note).
            if let Some(index) = self.note(rel)
                && self.found[index].old.is_some()
            {
                self.found[index].stat = Some(Stat::of(&meta));
            }
        }
    }

    /// Stat the pending notes (on every core when there are many) and close their folders.
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.open_dirs = 0;
        let stats: Vec<std::io::Result<std::fs::Metadata>> = if pending.len() >= PARALLEL_STAT_MIN {
            use rayon::prelude::*;
            pending.par_iter().map(|(_, e)| e.metadata()).collect()
        } else {
            pending.iter().map(|(_, e)| e.metadata()).collect()
        };
        for ((index, _), stat) in pending.iter().zip(stats) {
            match stat {
                Ok(m) => self.found[*index].stat = Some(Stat::of(&m)),
                Err(e) => {
                    let path = self.found[*index].rel.clone();
                    self.error(path, format!("cannot stat ({e})"));
                    self.stat_failed.push(*index);
                }
            }
        }
    }
}
