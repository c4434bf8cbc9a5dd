//! Compaction and GC of `events/`: old segments are zstd-compressed by streaming (memory stays
//! bounded whatever the file size), very old ones are moved to `events/archive/`, and leftovers of
//! interrupted runs are removed. Exclusive across processes (a lock file), and every temp file name
//! is unique (pid + nanos), so two compactions never collide (failure mode 2).
//!
//! Order of a compression, and why a crash anywhere is safe (format-spec/events.md):
//! snapshot covering the segment -> write `.tmp-<id>.seg.zst-*` -> fsync -> rename to
//! `<id>.seg.zst` -> fsync folder (these four: `crate::fs::write_atomic_with`) -> remove `<id>.seg`
//! -> fsync folder. If both `<id>.seg` and `<id>.seg.zst` exist (a crash between rename and
//! remove, failure mode 1), readers use the compressed copy and the next compaction removes the
//! orphan.

use super::log::{COMPRESSED_EXT, EventLog, SegmentFile, cannot_open, list_archive, list_segments};
use super::segment::{Holds, compressed_holds};
use crate::error::{Error, Result};
use crate::fs::{Durability, Fs, FsFile, LockGuard, write_atomic_with};
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// Default age after which a segment is compressed.
pub const DEFAULT_COMPRESS_AFTER_DAYS: u32 = 90;
/// Default age after which a compressed segment is archived.
pub const DEFAULT_ARCHIVE_AFTER_DAYS: u32 = 365;
/// zstd level: fast, and its window keeps encoder memory to a few MiB.
pub const ZSTD_LEVEL: i32 = 3;
/// Name of the lock file in `events/` that makes compaction exclusive.
pub const LOCK_FILE: &str = ".compact.lock";
pub use super::segment::{ARCHIVE_DIR, TEMP_PREFIX, compressed_len};
/// Temp files older than this are leftovers of a crashed run.
pub const STALE_TEMP_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;

/// Ages (days since a segment's last write) that trigger compression and archiving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactPolicy {
    /// Segments not written for this many days are compressed (zstd).
    pub compress_after_days: u32,
    /// Compressed segments not written for this many days move to `events/archive/`.
    pub archive_after_days: u32,
}

impl Default for CompactPolicy {
    fn default() -> Self {
        CompactPolicy {
            compress_after_days: DEFAULT_COMPRESS_AFTER_DAYS,
            archive_after_days: DEFAULT_ARCHIVE_AFTER_DAYS,
        }
    }
}

/// What a compaction changed (empty lists: nothing was due).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CompactReport {
    /// Segments compressed (`<id>.seg` -> `<id>.seg.zst`).
    pub compressed: Vec<String>,
    /// Segments moved to `events/archive/`.
    pub archived: Vec<String>,
    /// Files removed: orphans of interrupted compressions, stale temp files.
    pub removed: Vec<String>,
    /// Set when another process was compacting, so this run did nothing.
    pub skipped: Option<String>,
}

/// Adapts an [`FsFile`] to `io::Write`.
struct FileWriter<'a>(&'a mut dyn FsFile);

impl Write for FileWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Stream `src` through a zstd encoder into `dst` (created new), finish the frame and fsync.
pub fn compress_file(fs: &dyn Fs, src: &Path, dst: &Path) -> io::Result<u64> {
    let mut file = fs.create_new(dst)?;
    let total = compress_into(fs, src, file.as_mut())?;
    file.sync()?;
    Ok(total)
}

/// Compress `src` into `out` chunk by chunk (`compressed.rs`; not fsynced). Memory: one chunk
/// and its compressed form, whatever the size of `src`.
pub fn compress_into(fs: &dyn Fs, src: &Path, out: &mut dyn FsFile) -> io::Result<u64> {
    // The frame header records the segment's length, so a reader can tell from the first bytes
    // whether its watermark covers the whole segment (see `compressed_len`). The segment is
    // locked by the caller: its length cannot change while it is compressed.
    let len = fs.len(src)?;
    let mut input = fs.open_read(src)?;
    let mut out = FileWriter(out);
    let total = super::compressed::write_chunks(&mut input, len, ZSTD_LEVEL, &mut out)?;
    Ok(total)
}

/// Whether the segment at `path` has no complete header and holds nothing (see
/// [`super::log::SegmentRead::empty`]). Only short files are read.
pub fn holds_nothing(fs: &dyn Fs, path: &Path, compressed: bool) -> bool {
    let len = if compressed {
        compressed_len(fs, path)
    } else {
        fs.len(path).ok()
    };
    len.is_some_and(|n| n < super::segment::MAX_HEADER_LEN as u64)
        && super::log::read_segment(fs, path, compressed, 0).empty
}

/// The ids of the segments with a compressed copy among `segs` (of `events/`) and `archived`.
fn compressed_ids<'a>(
    segs: &'a [SegmentFile],
    archived: &'a [SegmentFile],
) -> std::collections::HashSet<&'a str> {
    segs.iter()
        .chain(archived)
        .filter(|s| s.compressed)
        .map(|s| s.id.as_str())
        .collect()
}

/// Whether a compressed copy of segment `id` (in `dir` or its archive) holds every byte of the
/// plain file `plain`: then the plain file is a leftover copy. A compressed copy of an earlier
/// build that does not record its length is taken to hold it all (it is the one read); one that
/// says nothing (damaged, cut short, a Git LFS pointer) holds nothing.
fn held_whole(fs: &dyn Fs, dir: &Path, id: &str, plain: &Path) -> bool {
    let name = format!("{id}{COMPRESSED_EXT}");
    let copies = [dir.join(&name), dir.join(ARCHIVE_DIR).join(&name)];
    let Ok(plain_len) = fs.len(plain) else {
        return false;
    };
    copies
        .iter()
        .filter(|c| fs.len(c).is_ok())
        .any(|c| compressed_holds(fs, c) >= Holds::Len(plain_len))
}

impl EventLog {
    /// The lock of the segment file `p` (named `shown` under `events/`): `None` when its writer
    /// holds it, or when the file cannot be opened. Such a file (a named pipe, a file this
    /// process may not read or write) is left as it is, with a notice naming it and the fix, and
    /// compaction goes on with the other segments: one odd file must not stop it for all.
    fn lock_or_leave(&self, p: &Path, shown: &str) -> Option<LockGuard> {
        let fs = self.fs();
        // Opened for reading first, as folds open it: a file they cannot read is told in the
        // same words (and so once); a named pipe is refused there without blocking.
        if let Err(e) = fs.open_read(p) {
            self.leave(shown, &e);
            return None;
        }
        match fs.try_lock(p) {
            Ok(guard) => guard,
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                self.notice(format!(
                    "events/{shown}: compaction leaves it as it is: it cannot be opened for its \
                     lock ({e}); give this process write access to it (ls -l), or move it out \
                     of events/ if it is no segment"
                ));
                None
            }
        }
    }

    /// Say that the file `shown` (under `events/`) is left as it is because it cannot be opened
    /// (`e`). A file gone meanwhile (another compaction, a reader's listing older than the
    /// files) is nothing to tell.
    fn leave(&self, shown: &str, e: &io::Error) {
        if e.kind() != io::ErrorKind::NotFound {
            self.notice(format!("events/{shown}: {}", cannot_open(e)));
        }
    }

    /// Whether a compaction would do anything now (checked at open: a listing and a stat per
    /// segment).
    pub fn compaction_due(&self, policy: CompactPolicy, now_ms: i64) -> bool {
        let fs = self.fs();
        let dir = self.events_dir();
        let Ok((segs, _)) = list_segments(fs, dir) else {
            return false;
        };
        let compress_before_ms = now_ms - i64::from(policy.compress_after_days) * DAY_MS;
        let archive_before_ms = now_ms - i64::from(policy.archive_after_days) * DAY_MS;
        let own = self.own_segment_id();
        let archive = list_archive(fs, dir).unwrap_or_default();
        let archived = archive.segs;
        let compressed = compressed_ids(&segs, &archived);
        segs.iter().any(|s| {
            let p = dir.join(&s.name);
            let modified_ms = fs.modified_ms(&p).unwrap_or(i64::MAX);
            let due = if s.compressed {
                // Nothing can be archived while a file stands where the archive belongs.
                archive.unusable.is_none() && modified_ms < archive_before_ms
            } else {
                Some(&s.id) != own.as_ref()
                    && (modified_ms < compress_before_ms
                        || compressed.contains(s.id.as_str()) && held_whole(fs, dir, &s.id, &p))
            };
            // A file that cannot be opened (a named pipe, one this process may not read) is
            // left as it is by compaction: it alone would make a compaction run at every open.
            // Only files found due are opened, so an open looks at no other.
            due && fs.open_read(&p).is_ok()
        })
    }

    /// Compress, archive and clean up `events/` by `policy`, at time `now_ms`.
    pub fn compact(&self, policy: CompactPolicy, now_ms: i64) -> Result<CompactReport> {
        let fs = self.fs();
        let dir = self.events_dir().to_path_buf();
        let lock_path = dir.join(LOCK_FILE);
        let Some(_lock) = fs
            .try_lock(&lock_path)
            .map_err(|e| Error::io("lock", &lock_path, e))?
        else {
            return Ok(CompactReport {
                skipped: Some("another process is compacting".into()),
                ..CompactReport::default()
            });
        };
        let mut report = CompactReport::default();
        let (segs, _) = list_segments(fs, &dir)?;
        let io = |op: &'static str, p: &Path| {
            let p = p.to_path_buf();
            move |e| Error::io(op, p, e)
        };

        // 1. Plain copies that a compressed copy (here or in the archive) holds whole: left by
        // an interrupted compression, or brought back by a restore or a merge. A plain file that
        // holds more than its compressed copy grew after the copy was made (the log shared
        // through git: one clone compressed a segment another clone's writer went on with): it
        // is the one read, and is compressed again below once due. A file whose writer is alive
        // (its lock held) is never touched.
        let archive_listing = list_archive(fs, &dir)?;
        let archived = archive_listing.segs;
        let compressed = compressed_ids(&segs, &archived);
        let own = self.own_segment_id();
        let mut covered = std::collections::HashSet::new();
        let mut removed_any = false;
        for s in segs
            .iter()
            .filter(|s| !s.compressed && compressed.contains(s.id.as_str()))
        {
            let p = dir.join(&s.name);
            if !held_whole(fs, &dir, &s.id, &p) {
                continue;
            }
            covered.insert(s.name.clone());
            if Some(&s.id) == own.as_ref() {
                continue;
            }
            let Some(_writer_gone) = self.lock_or_leave(&p, &s.name) else {
                continue;
            };
            // Checked again under the lock: a writer may have appended and gone meanwhile.
            if !held_whole(fs, &dir, &s.id, &p) {
                covered.remove(&s.name);
                continue;
            }
            fs.remove(&p).map_err(io("remove", &p))?;
            report.removed.push(s.name.clone());
            removed_any = true;
        }
        // Stale temp files of crashed runs (a live run's temp file is younger).
        for name in fs.list(&dir).map_err(io("list", &dir))? {
            if name.starts_with(TEMP_PREFIX) {
                let p = dir.join(&name);
                if fs.modified_ms(&p).is_ok_and(|m| now_ms - m > STALE_TEMP_MS) {
                    fs.remove(&p).map_err(io("remove", &p))?;
                    report.removed.push(name);
                    removed_any = true;
                }
            }
        }
        // Segments holding nothing: their creation never completed (a crash or a full disk cut
        // it short, or an older build compressed such a file). Readers take them as empty; they
        // go once they are older than any creation in progress and their writer is gone.
        let mut gone = std::collections::HashSet::new();
        for s in &segs {
            let p = dir.join(&s.name);
            if Some(&s.id) == own.as_ref()
                || compressed.contains(s.id.as_str()) && !s.compressed
                || !fs.modified_ms(&p).is_ok_and(|m| now_ms - m > STALE_TEMP_MS)
                || !holds_nothing(fs, &p, s.compressed)
            {
                continue;
            }
            let Some(_writer_gone) = self.lock_or_leave(&p, &s.name) else {
                continue;
            };
            fs.remove(&p).map_err(io("remove", &p))?;
            report.removed.push(s.name.clone());
            gone.insert(s.name.clone());
            removed_any = true;
        }
        if removed_any {
            fs.sync_dir(&dir).map_err(io("fsync folder", &dir))?;
        }

        // 2. Which segments are due.
        let compress_before_ms = now_ms - i64::from(policy.compress_after_days) * DAY_MS;
        let archive_before_ms = now_ms - i64::from(policy.archive_after_days) * DAY_MS;
        let mut due = Vec::new();
        for s in segs.iter().filter(|s| {
            !s.compressed
                && !covered.contains(&s.name)
                && !gone.contains(&s.name)
                && !report.removed.contains(&s.name)
        }) {
            if Some(&s.id) == own.as_ref() {
                continue;
            }
            let p = dir.join(&s.name);
            match fs.modified_ms(&p) {
                Ok(m) if m < compress_before_ms => due.push(s.clone()),
                Ok(_) => {}
                Err(e) => self.leave(&s.name, &e),
            }
        }
        // A segment whose writer is alive holds the segment's lock: it is not touched, whatever
        // its age. The locks are taken before the snapshot, so no append can land after it.
        let mut locked = Vec::new();
        for s in due {
            let src = dir.join(&s.name);
            // A segment without its header is never compressed (it would make a compressed
            // segment without one); it is removed above once it is old enough.
            if holds_nothing(fs, &src, false) {
                continue;
            }
            // A compressed copy already here is replaced only when it is known to hold less.
            let dst = dir.join(format!("{}{COMPRESSED_EXT}", s.id));
            if fs.len(&dst).is_ok()
                && !matches!(
                    (compressed_holds(fs, &dst), fs.len(&src)),
                    (Holds::Len(there), Ok(here)) if there < here
                )
            {
                // A named pipe under the compressed name keeps the segment from being
                // compressed: said, so that it is moved away.
                if let Err(e) = fs.open_read(&dst) {
                    self.leave(&format!("{}{COMPRESSED_EXT}", s.id), &e);
                }
                continue;
            }
            if let Some(guard) = self.lock_or_leave(&src, &s.name) {
                locked.push((s, guard));
            }
        }
        if !locked.is_empty() {
            // The snapshot must cover every byte of a segment before it is compressed: a
            // compressed segment with a watermark is never read again at open.
            self.refresh()?;
            self.write_snapshot()?;
            for (s, _guard) in &locked {
                let src = dir.join(&s.name);
                let dst = dir.join(format!("{}{COMPRESSED_EXT}", s.id));
                let written_ms = fs.modified_ms(&src).map_err(io("stat", &src))?;
                write_atomic_with(fs, &dst, Durability::Durable, |out| {
                    compress_into(fs, &src, out)
                        .map(drop)
                        .map_err(|e| Error::io("compress", &src, e))
                })?;
                // The archive age counts from the segment's last write, not from its
                // compression. Best effort: a failure only delays the archiving.
                let _ = fs.set_modified_ms(&dst, written_ms);
                fs.remove(&src).map_err(io("remove", &src))?;
                fs.sync_dir(&dir).map_err(io("fsync folder", &dir))?;
                report.compressed.push(s.name.clone());
                // A shorter archived copy (the segment grew after another clone compressed it)
                // holds nothing the new one lacks.
                let archived = dir
                    .join(ARCHIVE_DIR)
                    .join(format!("{}{COMPRESSED_EXT}", s.id));
                if fs.len(&archived).is_ok()
                    && matches!(
                        (compressed_len(fs, &archived), compressed_len(fs, &dst)),
                        (Some(there), Some(here)) if there < here
                    )
                {
                    fs.remove(&archived).map_err(io("remove", &archived))?;
                    let archive = dir.join(ARCHIVE_DIR);
                    fs.sync_dir(&archive)
                        .map_err(io("fsync folder", &archive))?;
                    report
                        .removed
                        .push(format!("{ARCHIVE_DIR}/{}", s.id) + COMPRESSED_EXT);
                }
            }
        }

        // 3. Archive old compressed segments, unless a file stands where the archive belongs:
        // then they stay compressed in `events/` (read as before), and the file is left as it is.
        if let Some(n) = archive_listing.unusable {
            self.notice(n);
            return Ok(report);
        }
        let archive = dir.join(ARCHIVE_DIR);
        let (segs, _) = list_segments(fs, &dir)?;
        let mut archived_any = false;
        for s in segs.iter().filter(|s| s.compressed) {
            let p = dir.join(&s.name);
            let old = match fs.modified_ms(&p) {
                Ok(m) => m < archive_before_ms,
                Err(e) => {
                    self.leave(&s.name, &e);
                    false
                }
            };
            if old {
                // A file that cannot be opened (a named pipe under a segment's name) stays
                // where it is: the archive is for segments.
                if let Err(e) = fs.open_read(&p) {
                    self.leave(&s.name, &e);
                    continue;
                }
                if !archived_any {
                    fs.create_dir_all(&archive)
                        .map_err(io("create folder", &archive))?;
                }
                let to = archive.join(&s.name);
                // An archived copy holding more of the segment (merged in from another clone)
                // is kept: this shorter one goes instead of replacing it.
                let longer_there =
                    fs.len(&to).is_ok() && compressed_holds(fs, &to) > compressed_holds(fs, &p);
                if longer_there {
                    fs.remove(&p).map_err(io("remove", &p))?;
                    report.removed.push(s.name.clone());
                } else {
                    fs.rename(&p, &to).map_err(io("rename", &p))?;
                    report.archived.push(s.name.clone());
                }
                archived_any = true;
            }
        }
        if archived_any {
            fs.sync_dir(&archive)
                .map_err(io("fsync folder", &archive))?;
            fs.sync_dir(&dir).map_err(io("fsync folder", &dir))?;
        }
        Ok(report)
    }
}
