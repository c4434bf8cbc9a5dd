//! An in-memory [`Fs`] for tests and fuzzing that can fail or "crash" at a chosen call.
//!
//! It keeps, per file, the live bytes and the bytes made durable by the last `sync`, and per
//! folder, the live names and the names made durable by the last `sync_dir` (creations, renames and
//! removals are not durable until their folder is synced, as on a real disk). Every operation
//! counts as one call. With `fail_at(n)` the n-th call returns an I/O error and later calls work;
//! with `crash_at(n)` the n-th call and every later one fail, and [`MemFs::crash_image`] then gives
//! what a disk would hold after power loss: durable names and durable bytes, plus (optionally) a
//! torn prefix of each file's unsynced tail. With `set_space(Some(n))` the disk holds `n` bytes: a
//! write that does not fit writes what fits and fails with `StorageFull`, as a full disk does.

use super::{Fs, FsFile, LockGuard, Mapped};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Default)]
struct Inode {
    live: Vec<u8>,
    durable: Vec<u8>,
    mtime_ms: i64,
}

#[derive(Debug, Default)]
struct State {
    inodes: Vec<Inode>,
    /// Live namespace: path -> inode.
    live: BTreeMap<PathBuf, usize>,
    /// Durable namespace: path -> inode.
    durable: BTreeMap<PathBuf, usize>,
    dirs: BTreeSet<PathBuf>,
    calls: u64,
    /// Calls in this range fail with an I/O error.
    fail: std::ops::Range<u64>,
    crash_at: Option<u64>,
    crashed: bool,
    locks: BTreeSet<LockKey>,
    /// Bytes the disk holds (`None`: unlimited).
    space: Option<u64>,
    clock_ms: i64,
    /// Readers fail with an I/O error after this many bytes.
    read_limit: Option<u64>,
}

/// What a lock is held on: the file a path names (as `flock` does), or the name itself when no
/// file has it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum LockKey {
    Inode(usize),
    Name(PathBuf),
}

/// The in-memory file system. Cheap to clone (shared state).
#[derive(Debug, Clone, Default)]
pub struct MemFs {
    st: Arc<Mutex<State>>,
}

fn err(msg: &str) -> io::Error {
    io::Error::other(msg.to_string())
}

impl State {
    /// The inode a live path names.
    fn inode(&self, path: &Path) -> io::Result<usize> {
        self.live
            .get(path)
            .copied()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    }

    /// Bytes held by the files that have a name.
    fn used(&self) -> u64 {
        let inodes: BTreeSet<usize> = self.live.values().copied().collect();
        inodes
            .into_iter()
            .map(|i| self.inodes[i].live.len() as u64)
            .sum()
    }

    /// Count a call; fail it if it is the chosen one.
    fn tick(&mut self) -> io::Result<()> {
        if self.crashed {
            return Err(err("simulated crash: the machine is down"));
        }
        self.calls += 1;
        if self.crash_at == Some(self.calls) {
            self.crashed = true;
            return Err(err("simulated crash"));
        }
        if self.fail.contains(&self.calls) {
            return Err(err("simulated I/O error"));
        }
        Ok(())
    }
}

impl MemFs {
    /// An empty file system.
    pub fn new() -> Self {
        MemFs::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.st.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Calls made so far.
    pub fn calls(&self) -> u64 {
        self.lock().calls
    }
    /// Make call `n` (1-based, counting from the start) fail with an I/O error.
    pub fn fail_at(&self, n: u64) {
        self.fail_calls(n, 1);
    }
    /// Make `count` calls from call `n` on fail with an I/O error (a fault that lasts).
    pub fn fail_calls(&self, n: u64, count: u64) {
        self.lock().fail = n..n.saturating_add(count);
    }
    /// Bytes held by the files that have a name.
    pub fn used(&self) -> u64 {
        self.lock().used()
    }
    /// Make call `n` and every later call fail, as if the machine lost power.
    pub fn crash_at(&self, n: u64) {
        self.lock().crash_at = Some(n);
    }
    /// Whether the simulated crash happened.
    pub fn crashed(&self) -> bool {
        self.lock().crashed
    }
    /// Make every reader opened from now on fail after `bytes` bytes (`None`: never).
    pub fn set_read_limit(&self, bytes: Option<u64>) {
        self.lock().read_limit = bytes;
    }

    /// Limit the disk to `bytes` bytes in all (`None`: unlimited): writes past it fail with
    /// `StorageFull` after writing what fits.
    pub fn set_space(&self, bytes: Option<u64>) {
        self.lock().space = bytes;
    }

    /// Set the clock used for modification times (ms since the epoch).
    pub fn set_clock_ms(&self, ms: i64) {
        self.lock().clock_ms = ms;
    }

    /// What a disk holds after a power loss now: the durable namespace with durable bytes; with
    /// `tear`, each file also keeps the first half of its unsynced appended bytes (a torn write).
    pub fn crash_image(&self, tear: bool) -> MemFs {
        let st = self.lock();
        let mut out = State {
            dirs: st.dirs.clone(),
            clock_ms: st.clock_ms,
            ..State::default()
        };
        let mut map: BTreeMap<usize, usize> = BTreeMap::new();
        for (path, &ino) in &st.durable {
            let new = *map.entry(ino).or_insert_with(|| {
                let old = &st.inodes[ino];
                let mut data = old.durable.clone();
                if tear && old.live.len() > data.len() && old.live.starts_with(&data) {
                    let extra = (old.live.len() - data.len()) / 2;
                    data.extend_from_slice(&old.live[old.durable.len()..old.durable.len() + extra]);
                }
                out.inodes.push(Inode {
                    live: data.clone(),
                    durable: data,
                    mtime_ms: old.mtime_ms,
                });
                out.inodes.len() - 1
            });
            out.live.insert(path.clone(), new);
            out.durable.insert(path.clone(), new);
        }
        MemFs {
            st: Arc::new(Mutex::new(out)),
        }
    }

    /// Put a file in place directly (durable), for test setup.
    pub fn put(&self, path: &Path, bytes: &[u8], mtime_ms: i64) {
        let mut st = self.lock();
        st.inodes.push(Inode {
            live: bytes.to_vec(),
            durable: bytes.to_vec(),
            mtime_ms,
        });
        let ino = st.inodes.len() - 1;
        st.live.insert(path.to_path_buf(), ino);
        st.durable.insert(path.to_path_buf(), ino);
        if let Some(parent) = path.parent() {
            st.dirs.insert(parent.to_path_buf());
        }
    }

    /// The live bytes of a file, for assertions.
    pub fn get(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.lock();
        st.live.get(path).map(|&i| st.inodes[i].live.clone())
    }
}

struct MemFile {
    fs: MemFs,
    ino: usize,
}

impl FsFile for MemFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut st = self.fs.lock();
        st.tick()?;
        let now_ms = st.clock_ms;
        let fits = match st.space {
            Some(space) => usize::try_from(space.saturating_sub(st.used())).unwrap_or(usize::MAX),
            None => usize::MAX,
        };
        let node = &mut st.inodes[self.ino];
        node.live.extend_from_slice(&buf[..buf.len().min(fits)]);
        node.mtime_ms = now_ms;
        if fits < buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "simulated full disk: no space left on device",
            ));
        }
        Ok(())
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        let mut st = self.fs.lock();
        st.tick()?;
        let node = &mut st.inodes[self.ino];
        node.live
            .truncate(usize::try_from(len).unwrap_or(usize::MAX));
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        let mut st = self.fs.lock();
        st.tick()?;
        let node = &mut st.inodes[self.ino];
        node.durable = node.live.clone();
        Ok(())
    }
}

impl Fs for MemFs {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let mut st = self.lock();
        st.tick()?;
        if st.live.contains_key(path) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "exists"));
        }
        let now_ms = st.clock_ms;
        st.inodes.push(Inode {
            mtime_ms: now_ms,
            ..Inode::default()
        });
        let ino = st.inodes.len() - 1;
        st.live.insert(path.to_path_buf(), ino);
        drop(st);
        Ok(Box::new(MemFile {
            fs: self.clone(),
            ino,
        }))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let mut st = self.lock();
        st.tick()?;
        let ino = st.inode(path)?;
        drop(st);
        Ok(Box::new(MemFile {
            fs: self.clone(),
            ino,
        }))
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        self.open_read_at(path, 0)
    }
    fn open_read_at(&self, path: &Path, offset: u64) -> io::Result<Box<dyn Read + Send>> {
        let mut st = self.lock();
        st.tick()?;
        let ino = st.inode(path)?;
        let data = st.inodes[ino].live.clone();
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(data.len());
        let cursor = io::Cursor::new(data[start..].to_vec());
        Ok(match st.read_limit {
            Some(limit) => Box::new(LimitedReader {
                inner: cursor,
                left: limit,
            }),
            None => Box::new(cursor),
        })
    }
    fn map(&self, path: &Path) -> io::Result<Mapped> {
        let mut st = self.lock();
        st.tick()?;
        let ino = st.inode(path)?;
        Ok(Arc::new(st.inodes[ino].live.clone()))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.lock();
        st.tick()?;
        let ino = st
            .live
            .remove(from)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))?;
        st.live.insert(to.to_path_buf(), ino);
        Ok(())
    }
    fn link_new(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.lock();
        st.tick()?;
        let ino = st.inode(from)?;
        if st.live.contains_key(to) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "exists"));
        }
        st.live.insert(to.to_path_buf(), ino);
        Ok(())
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut st = self.lock();
        st.tick()?;
        st.live
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut st = self.lock();
        st.tick()?;
        if !st.dirs.contains(dir) {
            return Err(io::Error::new(io::ErrorKind::NotFound, "no such folder"));
        }
        Ok(st
            .live
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
            .collect())
    }
    fn len(&self, path: &Path) -> io::Result<u64> {
        let mut st = self.lock();
        st.tick()?;
        let ino = st.inode(path)?;
        Ok(st.inodes[ino].live.len() as u64)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut st = self.lock();
        st.tick()?;
        let in_dir = |p: &PathBuf| p.parent() == Some(dir);
        let live: Vec<(PathBuf, usize)> = st
            .live
            .iter()
            .filter(|(p, _)| in_dir(p))
            .map(|(p, i)| (p.clone(), *i))
            .collect();
        st.durable.retain(|p, _| !in_dir(p));
        st.durable.extend(live);
        Ok(())
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut st = self.lock();
        st.tick()?;
        let mut d = Some(dir);
        while let Some(x) = d {
            st.dirs.insert(x.to_path_buf());
            d = x.parent();
        }
        Ok(())
    }
    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        let mut st = self.lock();
        st.tick()?;
        let ino = st.inode(path)?;
        Ok(st.inodes[ino].mtime_ms)
    }
    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        let mut st = self.lock();
        st.tick()?;
        let ino = st.inode(path)?;
        st.inodes[ino].mtime_ms = ms;
        Ok(())
    }
    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        let mut st = self.lock();
        let key = match st.live.get(path) {
            Some(&ino) => LockKey::Inode(ino),
            None => LockKey::Name(path.to_path_buf()),
        };
        if !st.locks.insert(key.clone()) {
            return Ok(None);
        }
        drop(st);
        Ok(Some(LockGuard::new(Box::new(MemLock {
            fs: self.clone(),
            key,
        }))))
    }
}

/// A reader that fails after a number of bytes (a disk error midway through a file).
struct LimitedReader<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for LimitedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 && !buf.is_empty() {
            return Err(err("simulated read error midway"));
        }
        let max = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..max])?;
        if n == 0 {
            return Ok(0);
        }
        self.left -= n as u64;
        Ok(n)
    }
}

struct MemLock {
    fs: MemFs,
    key: LockKey,
}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.fs.lock().locks.remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsynced_names_and_bytes_vanish_in_a_crash() {
        let fs = MemFs::new();
        let dir = Path::new("/e");
        fs.create_dir_all(dir).unwrap();
        let mut f = fs.create_new(&dir.join("a")).unwrap();
        f.write_all(b"hello").unwrap();
        f.sync().unwrap();
        let img = fs.crash_image(false);
        assert!(
            img.get(&dir.join("a")).is_none(),
            "name not durable before sync_dir"
        );
        fs.sync_dir(dir).unwrap();
        f.write_all(b" world").unwrap();
        let img = fs.crash_image(false);
        assert_eq!(img.get(&dir.join("a")).unwrap(), b"hello");
        let img = fs.crash_image(true);
        assert_eq!(img.get(&dir.join("a")).unwrap(), b"hello wo");
    }

    #[test]
    fn a_full_disk_writes_what_fits_and_a_lock_follows_the_file_through_its_names() {
        let fs = MemFs::new();
        let dir = Path::new("/e");
        fs.create_dir_all(dir).unwrap();
        fs.set_space(Some(8));
        let mut f = fs.create_new(&dir.join("a")).unwrap();
        let e = f.write_all(b"0123456789").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert_eq!(fs.get(&dir.join("a")).unwrap(), b"01234567");
        f.truncate(3).unwrap();
        assert_eq!(fs.used(), 3);
        fs.set_space(None);
        f.write_all(b"3").unwrap();
        let lock = fs.try_lock(&dir.join("a")).unwrap();
        assert!(lock.is_some());
        fs.link_new(&dir.join("a"), &dir.join("b")).unwrap();
        assert!(fs.try_lock(&dir.join("b")).unwrap().is_none(), "same file");
        let e = fs.link_new(&dir.join("a"), &dir.join("b")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        fs.remove(&dir.join("a")).unwrap();
        assert_eq!(fs.get(&dir.join("b")).unwrap(), b"0123");
        drop(lock);
        assert!(fs.try_lock(&dir.join("b")).unwrap().is_some());
    }

    #[test]
    fn crash_at_fails_everything_after() {
        let fs = MemFs::new();
        fs.crash_at(2);
        fs.create_dir_all(Path::new("/e")).unwrap();
        assert!(fs.list(Path::new("/e")).is_err());
        assert!(fs.list(Path::new("/e")).is_err());
        assert!(fs.crashed());
    }
}
