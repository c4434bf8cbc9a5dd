//! The file-system seam: every byte of the event log, the snapshot and compaction goes through
//! [`Fs`], so tests can swap in an implementation that fails or "crashes" at a chosen call
//! (the crash-point tests crash at every call in turn). [`RealFs`] is the one used in production.

use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

/// A file opened for appending.
pub trait FsFile: Send {
    /// Write all of `buf` at the end of the file (into the OS; not durable until `sync`).
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;
    /// Make everything written so far durable (fsync).
    fn sync(&mut self) -> io::Result<()>;
    /// Cut the file back to `len` bytes (what a failed append left past `len` goes away).
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

/// Read-only bytes of a whole file (a memory map for [`RealFs`]).
pub type Mapped = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// The file operations mnemon's logs and snapshots need.
pub trait Fs: Send + Sync {
    /// Create `path`, failing if it exists (two writers never share a file).
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>>;
    /// Open an existing file for appending.
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn FsFile>>;
    /// Stream a file.
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn Read + Send>>;
    /// Stream a file from byte `offset` on.
    fn open_read_at(&self, path: &Path, offset: u64) -> io::Result<Box<dyn Read + Send>>;
    /// Map a whole file read-only.
    fn map(&self, path: &Path) -> io::Result<Mapped>;
    /// Rename atomically (replacing `to`).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Give the file `from` a second name `to`, failing with `AlreadyExists` when `to` exists:
    /// publishes a complete file under its final name without ever replacing another.
    fn link_new(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Remove a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// File names in `dir` (not paths), any order.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Size of a file in bytes.
    fn len(&self, path: &Path) -> io::Result<u64>;
    /// Make a folder's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Create a folder and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Last modification time, ms since the Unix epoch.
    fn modified_ms(&self, path: &Path) -> io::Result<i64>;
    /// Take an exclusive lock named by `path` without waiting: `Ok(None)` when another holder has
    /// it. The lock is released when the guard is dropped (or the process dies). The lock belongs
    /// to the file, not the name: a lock taken through one name of a file is held through its
    /// other names (see [`Fs::link_new`]).
    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>>;
}

/// Holds a lock from [`Fs::try_lock`] until dropped.
pub struct LockGuard(#[allow(dead_code)] Box<dyn Send + Sync>);

impl LockGuard {
    /// Wrap whatever keeps the lock held.
    pub fn new(inner: Box<dyn Send + Sync>) -> Self {
        LockGuard(inner)
    }
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

struct RealFile(std::fs::File);

impl FsFile for RealFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        io::Write::write_all(&mut self.0, buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
}

struct Map(memmap2::Mmap);

impl AsRef<[u8]> for Map {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Fs for RealFs {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let f = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)?;
        Ok(Box::new(RealFile(f)))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let f = std::fs::OpenOptions::new().append(true).open(path)?;
        Ok(Box::new(RealFile(f)))
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(std::fs::File::open(path)?))
    }
    fn open_read_at(&self, path: &Path, offset: u64) -> io::Result<Box<dyn Read + Send>> {
        use std::io::Seek;
        let mut f = std::fs::File::open(path)?;
        f.seek(io::SeekFrom::Start(offset))?;
        Ok(Box::new(f))
    }
    fn map(&self, path: &Path) -> io::Result<Mapped> {
        let f = std::fs::File::open(path)?;
        if f.metadata()?.len() == 0 {
            // Mapping an empty file fails on some systems; an empty slice is the same thing.
            return Ok(Arc::new(Vec::new()));
        }
        // SAFETY: mnemon never modifies a file it maps: snapshots are replaced by rename, never
        // written in place, so the mapping stays valid while it lives.
        let m = unsafe { memmap2::Mmap::map(&f)? };
        Ok(Arc::new(Map(m)))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn link_new(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            if let Some(name) = e.file_name().to_str() {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }
    fn len(&self, path: &Path) -> io::Result<u64> {
        Ok(std::fs::metadata(path)?.len())
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::File::open(dir)?.sync_all()
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }
    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        let t = std::fs::metadata(path)?.modified()?;
        Ok(t.duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0))
    }
    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        match f.try_lock() {
            Ok(()) => Ok(Some(LockGuard(Box::new(f)))),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

pub use mem::MemFs;
mod mem;
