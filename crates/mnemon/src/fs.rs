//! The file-system seam: every byte of the event log, the snapshot and compaction goes through
//! [`Fs`], and so does every file mnemon replaces ([`write_atomic`]), so tests can swap in an
//! implementation that fails or "crashes" at a chosen call (the crash-point tests crash at every
//! call in turn).
//! [`RealFs`] is the one used in production.

use crate::error::{Error, Result};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// [`Fs::list`] with whether each name is a folder (or a link to one). Real file systems say
    /// so in the listing itself for all but links; the default asks each name.
    fn list_kinds(&self, dir: &Path) -> io::Result<Vec<(String, bool)>> {
        Ok(self
            .list(dir)?
            .into_iter()
            .map(|name| {
                let folder = self.list(&dir.join(&name)).is_ok();
                (name, folder)
            })
            .collect())
    }
    /// Size of a file in bytes.
    fn len(&self, path: &Path) -> io::Result<u64>;
    /// Make a folder's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Create a folder and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Last modification time, ms since the Unix epoch.
    fn modified_ms(&self, path: &Path) -> io::Result<i64>;
    /// Set a file's modification time (ms since the Unix epoch).
    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()>;
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

/// Open `path` with `opts`, refusing anything but a regular file, without blocking on it: a
/// named pipe put where a derived file belongs would block the open or the first read until a
/// writer came, and a device (`/dev/zero`) would be read until memory runs out. The error says
/// what the path is and to move it away; its kind is [`io::ErrorKind::InvalidData`], which the
/// readers of derived files treat as damage (rebuilt, replaced by rename).
pub fn open_regular(path: &Path, opts: &mut std::fs::OpenOptions) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let refused = |path: &Path| -> io::Error {
        let kind = std::fs::symlink_metadata(path)
            .map(|m| crate::notes::file_kind(m.file_type()))
            .unwrap_or("special file");
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is a {kind}, not a regular file: mnemon keeps only regular files there; move it away",
                path.display()
            ),
        )
    };
    let f = match opts.custom_flags(libc::O_NONBLOCK).open(path) {
        Ok(f) => f,
        // A pipe opened for writing with no reader.
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Err(refused(path)),
        Err(e) => return Err(e),
    };
    let meta = f.metadata()?;
    if meta.is_dir() {
        // As opening a folder for writing fails: what callers that move folders aside look for.
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    if !meta.is_file() {
        return Err(refused(path));
    }
    Ok(f)
}

/// [`open_regular`] for reading.
pub fn open_regular_read(path: &Path) -> io::Result<std::fs::File> {
    open_regular(path, std::fs::OpenOptions::new().read(true))
}

/// A lock file at `path`, created if missing, never truncated (other processes may hold it),
/// opened only when it is a regular file ([`open_regular`]).
pub fn open_lock_file(path: &Path) -> io::Result<std::fs::File> {
    open_regular(
        path,
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
    )
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
        let f = open_regular(path, std::fs::OpenOptions::new().append(true))?;
        Ok(Box::new(RealFile(f)))
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(open_regular_read(path)?))
    }
    fn open_read_at(&self, path: &Path, offset: u64) -> io::Result<Box<dyn Read + Send>> {
        use std::io::Seek;
        let mut f = open_regular_read(path)?;
        f.seek(io::SeekFrom::Start(offset))?;
        Ok(Box::new(f))
    }
    fn map(&self, path: &Path) -> io::Result<Mapped> {
        let f = open_regular_read(path)?;
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
    fn list_kinds(&self, dir: &Path) -> io::Result<Vec<(String, bool)>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            if let Some(name) = e.file_name().to_str() {
                // From the directory entry where the file system records it: no call per name
                // but for a link, which is followed.
                let folder = match e.file_type() {
                    Ok(t) if t.is_symlink() => {
                        std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir())
                    }
                    Ok(t) => t.is_dir(),
                    Err(_) => false,
                };
                out.push((name.to_string(), folder));
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
    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        let at = std::time::UNIX_EPOCH
            + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
        std::fs::File::options()
            .write(true)
            .open(path)?
            .set_modified(at)
    }
    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        let f = open_lock_file(path)?;
        match f.try_lock() {
            Ok(()) => Ok(Some(LockGuard(Box::new(f)))),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

/// How durable a replacement by [`write_atomic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The new file is fsynced before the rename and its folder after it: once the call
    /// returns, the new file survives a power loss. For state that is not derived from anything
    /// else (the snapshot, compressed event segments).
    Durable,
    /// Rename only: readers (other processes included) see the old file or the new one, whole,
    /// but after a power loss the file may be the old one, or torn. For derived files that are
    /// checked when read and rebuilt when bad (the lexical index, the graph cache): an update
    /// then costs no fsync of its own.
    RenameOnly,
}

/// The device and inode of the file `path` names (links followed), `None` when it is gone or
/// cannot be read: tells a file from one that replaced it under the same name. Elsewhere than
/// Unix the identity is unknown (`None`).
#[cfg(unix)]
pub fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Elsewhere than Unix the identity is unknown (`None`).
#[cfg(not(unix))]
pub fn file_identity(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// A name for a temporary file beside `path`, unique across processes and threads:
/// `.tmp-<name>-<pid>-<nanos>-<n>`. Hidden, so no folder listing takes it for a real file; the
/// `.tmp-` prefix is what the cleanups of `index/` and `events/` remove once it is old.
pub fn temp_path(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(
        "{TEMP_PREFIX}{name}-{}-{nanos}-{n}",
        std::process::id()
    ))
}

/// Move what stands where mnemon keeps a derived file (a damaged file, or a folder made by
/// hand or by a tool) to `<path>.damaged`, replacing what an earlier repair put there, so that
/// the file can be written there again. Returns where it went.
pub fn move_aside_as_damaged(fs: &dyn Fs, path: &Path) -> io::Result<PathBuf> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(".damaged");
    let aside = PathBuf::from(aside);
    match fs.rename(path, &aside) {
        Err(_) if remove_folder_aside(&aside) => fs.rename(path, &aside)?,
        renamed => renamed?,
    }
    Ok(aside)
}

/// Remove a folder at `aside`, where a damaged file of `index/` is moved (`<name>.damaged`):
/// one moved there by an earlier repair (a folder made by hand or a tool where the file
/// belongs, again). A rename replaces a file there, never a folder that is not empty, so
/// without this every later repair of that file failed. Whether a folder was removed (a link
/// is not followed nor removed: a rename replaces it).
fn remove_folder_aside(aside: &Path) -> bool {
    let is_folder = std::fs::symlink_metadata(aside).is_ok_and(|m| m.is_dir());
    is_folder && std::fs::remove_dir_all(aside).is_ok()
}

/// Prefix of every temporary file name mnemon makes ([`temp_path`]).
pub const TEMP_PREFIX: &str = ".tmp-";

/// Replace `path` by the concatenation of `parts`, atomically (see [`write_atomic_with`]).
pub fn write_atomic(
    fs: &dyn Fs,
    path: &Path,
    durability: Durability,
    parts: &[&[u8]],
) -> Result<()> {
    write_atomic_with(fs, path, durability, |file| {
        for bytes in parts {
            file.write_all(bytes)
                .map_err(|e| Error::io("write", path, e))?;
        }
        Ok(())
    })
}

/// Replace `path` by the file `write` fills, atomically: every file mnemon replaces goes
/// through here. A new temp file beside `path` ([`temp_path`], so the rename stays within one
/// folder); `write`; with [`Durability::Durable`] an fsync of it; a rename over `path`; with
/// [`Durability::Durable`] an fsync of the folder. A crash at any step leaves `path` as it was or
/// the new file whole (after a power loss, for [`Durability::RenameOnly`], possibly torn). On an
/// error before the rename the temp file is removed and `path` is untouched.
pub fn write_atomic_with(
    fs: &dyn Fs,
    path: &Path,
    durability: Durability,
    write: impl FnOnce(&mut dyn FsFile) -> Result<()>,
) -> Result<()> {
    let tmp = temp_path(path);
    let mut file = fs
        .create_new(&tmp)
        .map_err(|e| Error::io("create temp file", &tmp, e))?;
    let written = write(file.as_mut()).and_then(|()| match durability {
        Durability::Durable => file.sync().map_err(|e| Error::io("fsync", &tmp, e)),
        Durability::RenameOnly => Ok(()),
    });
    drop(file);
    let renamed = written.and_then(|()| {
        fs.rename(&tmp, path)
            .map_err(|e| Error::io("rename into place", path, e))
    });
    if let Err(e) = renamed {
        let _ = fs.remove(&tmp);
        return Err(e);
    }
    if durability == Durability::Durable {
        let dir = path.parent().unwrap_or(Path::new("."));
        fs.sync_dir(dir)
            .map_err(|e| Error::io("fsync folder", dir, e))?;
    }
    Ok(())
}

pub use mem::MemFs;
mod mem;

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &[u8] = b"the old file";
    const NEW: &[u8] = b"the new file, longer than the old one";

    fn setup() -> (MemFs, PathBuf) {
        let fs = MemFs::new();
        let path = PathBuf::from("/d/f");
        fs.put(&path, OLD, 0);
        (fs, path)
    }

    /// Calls one clean replacement makes.
    fn calls(durability: Durability) -> u64 {
        let (fs, path) = setup();
        let base = fs.calls();
        write_atomic(&fs, &path, durability, &[&NEW[..5], &NEW[5..]]).unwrap();
        let total = fs.calls() - base;
        assert_eq!(fs.get(&path).unwrap(), NEW);
        assert_eq!(
            fs.list(Path::new("/d")).unwrap(),
            vec!["f"],
            "no temp file left"
        );
        total
    }

    /// A power loss at every call of a replacement (and just after it) leaves the old file or
    /// the new one, whole; once a durable replacement returned, the new one.
    #[test]
    fn a_crash_at_any_call_of_a_replacement_leaves_the_old_file_or_the_new_one() {
        for durability in [Durability::Durable, Durability::RenameOnly] {
            let total = calls(durability);
            assert!(total >= 3, "{durability:?}: {total} calls");
            for k in 1..=total + 1 {
                for tear in [false, true] {
                    let (fs, path) = setup();
                    fs.crash_at(fs.calls() + k);
                    let result = write_atomic(&fs, &path, durability, &[&NEW[..5], &NEW[5..]]);
                    assert_eq!(result.is_ok(), k > total, "{durability:?} crash at {k}");
                    let image = fs.crash_image(tear);
                    let bytes = image.get(&path);
                    assert!(
                        bytes.as_deref() == Some(OLD) || bytes.as_deref() == Some(NEW),
                        "{durability:?}, crash at {k}, tear {tear}: {bytes:?}"
                    );
                    if result.is_ok() && durability == Durability::Durable {
                        assert_eq!(bytes.as_deref(), Some(NEW), "durable once returned");
                    }
                    // The temp file never comes back under the final name or its own.
                    for name in image.list(Path::new("/d")).unwrap() {
                        assert_eq!(name, "f", "{durability:?}, crash at {k}");
                    }
                }
            }
        }
    }

    /// An I/O error at any call leaves the old file or the new one, and no temp file.
    #[test]
    fn an_io_error_at_any_call_of_a_replacement_leaves_no_temp_file() {
        for durability in [Durability::Durable, Durability::RenameOnly] {
            for k in 1..=calls(durability) {
                let (fs, path) = setup();
                fs.fail_at(fs.calls() + k);
                let err =
                    write_atomic(&fs, &path, durability, &[&NEW[..5], &NEW[5..]]).unwrap_err();
                assert!(matches!(err, Error::Io { .. }), "{err}");
                let bytes = fs.get(&path);
                assert!(
                    bytes.as_deref() == Some(OLD) || bytes.as_deref() == Some(NEW),
                    "{durability:?}, error at {k}: {bytes:?}"
                );
                assert_eq!(fs.list(Path::new("/d")).unwrap(), vec!["f"], "error at {k}");
            }
        }
    }

    /// What `RenameOnly` gives up: a later fsync of the folder (by anything) makes the new name
    /// durable before its bytes are, so a power loss can leave the file empty. Readers of such
    /// files check them and rebuild.
    #[test]
    fn a_rename_only_replacement_can_come_back_empty_after_a_power_loss() {
        let (fs, path) = setup();
        write_atomic(&fs, &path, Durability::RenameOnly, &[NEW]).unwrap();
        assert_eq!(fs.crash_image(false).get(&path).as_deref(), Some(OLD));
        fs.sync_dir(Path::new("/d")).unwrap();
        assert_eq!(fs.crash_image(false).get(&path).as_deref(), Some(&b""[..]));
    }

    #[test]
    fn temp_names_are_hidden_unique_and_beside_the_file() {
        let a = temp_path(Path::new("/d/lexical.manifest"));
        let b = temp_path(Path::new("/d/lexical.manifest"));
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(Path::new("/d")));
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(".tmp-lexical.manifest-"), "{name}");
    }
}
