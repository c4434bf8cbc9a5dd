//! Has any process written the store since I last looked? The store's change count
//! (`index/store.seq`, `format-spec/store.md`): two counters in a small file that every process
//! of the memory maps, so that a recall can tell, by two loads from memory and no system call,
//! that no write transaction started or ended since the one it last read from.
//!
//! A writer adds one to `started` just before its commit and one to `finished` just after it
//! ([`ChangeSeq::counting`]). A reader loads `started`, then `finished`, *before* it begins a read
//! transaction, and keeps the value when the two are equal ([`ChangeSeq::settled`]). While both
//! counters still hold that value, every commit its transaction did not see would have moved
//! `finished` (a commit that ended after the transaction began is counted after it) or `started`
//! (a commit still running, or whose writer died before counting its end), so the transaction's
//! version is still the store's newest. Counters that differ mean a writer is mid-commit or died
//! mid-commit: readers then always begin a transaction (the exact, slower path) until a process
//! that holds the write lock, and so knows that no writer is running, makes them equal again
//! ([`ChangeSeq::settle_after_crash`]).
//!
//! The file is created once, whole (a temp file linked into place), and never truncated,
//! replaced or written other than through the two counters. A file of the wrong size or with a
//! wrong magic or version is never used: every recall then reads the store (the exact path) and
//! the open reports it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// File name inside `index/`.
pub const SEQ_FILE: &str = "store.seq";
/// Size of the file, in bytes.
pub const SEQ_FILE_LEN: usize = 64;
/// Magic at offset 0 (`\x89MNSQ\r\n\x1a`, PNG-style like the other index files).
pub const SEQ_MAGIC: [u8; 8] = *b"\x89MNSQ\r\n\x1a";
/// Format version at offset 8 (`u16`).
pub const SEQ_VERSION: u16 = 1;
/// Offset of `started` (`u64`).
const STARTED_OFF: usize = 16;
/// Offset of `finished` (`u64`).
const FINISHED_OFF: usize = 24;

/// The mapped change counters of one store.
pub struct ChangeSeq {
    map: memmap2::MmapRaw,
    path: PathBuf,
}

impl std::fmt::Debug for ChangeSeq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeSeq")
            .field("path", &self.path)
            .finish()
    }
}

/// Why the counter file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeqError {
    #[error("cannot create or open it: {0}")]
    Io(String),
    #[error("it is {0} bytes long, not {SEQ_FILE_LEN}")]
    Length(u64),
    #[error("its magic number is wrong (not a mnemon change-count file, or damaged)")]
    Magic,
    #[error(
        "it was written by format version {version} for readers of version {min_reader} or newer; \
         this build reads version {SEQ_VERSION}"
    )]
    Version { version: u16, min_reader: u16 },
    #[error("this platform is big-endian; the counters are little-endian")]
    BigEndian,
}

/// The change count of an index folder cannot be used. No data is lost: every reader takes the
/// exact path (a read transaction per look) instead. The text says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "index change count {} is unusable ({source}); every recall reads the store to see other \
     processes' updates (exact, a few microseconds slower). Run `mnemon doctor --fix` when no \
     process has this memory open: it makes a new one",
    path.display()
)]
pub struct UnusableSeq {
    /// The counter file.
    pub path: PathBuf,
    pub source: SeqError,
}

/// The bytes of a new file: magic, version, zero counters.
fn fresh_file() -> [u8; SEQ_FILE_LEN] {
    let mut b = [0u8; SEQ_FILE_LEN];
    b[..8].copy_from_slice(&SEQ_MAGIC);
    b[8..10].copy_from_slice(&SEQ_VERSION.to_le_bytes());
    b[10..12].copy_from_slice(&SEQ_VERSION.to_le_bytes());
    b
}

/// Create `path` whole if it does not exist: the bytes go to a temp file (created with the
/// default permissions, as the other index files) that is then hard-linked to `path`, which fails
/// when another process linked its own first (then that one is used).
fn create_if_missing(dir: &Path, path: &Path) -> std::io::Result<()> {
    if path.exists() {
        return Ok(());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = dir.join(format!(".tmp-seq-{}-{nanos}", std::process::id()));
    let linked = (|| {
        let mut f = File::options().write(true).create_new(true).open(&tmp)?;
        std::io::Write::write_all(&mut f, &fresh_file())?;
        f.sync_all()?;
        match std::fs::hard_link(&tmp, path) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    linked
}

impl ChangeSeq {
    /// Map `index_dir/store.seq`, creating it when it does not exist.
    pub fn open(index_dir: &Path) -> Result<ChangeSeq, SeqError> {
        if cfg!(target_endian = "big") {
            return Err(SeqError::BigEndian);
        }
        let path = index_dir.join(SEQ_FILE);
        let io = |e: std::io::Error| SeqError::Io(e.to_string());
        create_if_missing(index_dir, &path).map_err(io)?;
        let file =
            crate::fs::open_regular(&path, File::options().read(true).write(true)).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len != SEQ_FILE_LEN as u64 {
            return Err(SeqError::Length(len));
        }
        let map = memmap2::MmapOptions::new()
            .len(SEQ_FILE_LEN)
            .map_raw(&file)
            .map_err(io)?;
        let seq = ChangeSeq { map, path };
        seq.check()?;
        Ok(seq)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header, checked (by every reader at every look: a file damaged while mapped stops
    /// being trusted).
    fn check(&self) -> Result<(), SeqError> {
        // SAFETY: the mapping is SEQ_FILE_LEN bytes long, page-aligned, and lives as long as
        // `self`. The bytes are copied out with a volatile read (another process could write them:
        // they are never borrowed as a slice).
        let head: [u8; 12] =
            unsafe { std::ptr::read_volatile(self.map.as_ptr().cast::<[u8; 12]>()) };
        if head[..8] != SEQ_MAGIC {
            return Err(SeqError::Magic);
        }
        let version = u16::from_le_bytes([head[8], head[9]]);
        let min_reader = u16::from_le_bytes([head[10], head[11]]);
        if version < SEQ_VERSION || min_reader > SEQ_VERSION {
            return Err(SeqError::Version {
                version,
                min_reader,
            });
        }
        Ok(())
    }

    fn counter(&self, off: usize) -> &AtomicU64 {
        debug_assert!(off + 8 <= SEQ_FILE_LEN && off.is_multiple_of(8));
        // SAFETY: `off` is 8-aligned inside a page-aligned mapping of SEQ_FILE_LEN bytes that lives
        // as long as `self`; the file is never truncated, and every process touches these 8
        // bytes only through atomic operations.
        unsafe { &*(self.map.as_ptr().add(off) as *const AtomicU64) }
    }

    /// The change count when no write is in flight: `started` and `finished` loaded in that
    /// order and equal. `None` when they differ or the header is no longer valid. Call it
    /// *before* beginning the read transaction whose version the count will stand for.
    pub fn settled(&self) -> Option<u64> {
        self.check().ok()?;
        let started = self.counter(STARTED_OFF).load(Ordering::SeqCst);
        let finished = self.counter(FINISHED_OFF).load(Ordering::SeqCst);
        (started == finished).then_some(finished)
    }

    /// Count one write transaction: `started` now, `finished` when the returned guard drops
    /// (after the commit, whether it succeeded or not).
    pub fn counting(&self) -> Counting<'_> {
        self.counter(STARTED_OFF).fetch_add(1, Ordering::SeqCst);
        Counting { seq: self }
    }

    /// Make the counters equal after a writer died between its two counts. Call it only while
    /// holding the store's write lock (no write transaction can be in flight then). Returns
    /// whether they differed.
    pub fn settle_after_crash(&self) -> bool {
        if self.check().is_err() {
            return false;
        }
        let started = self.counter(STARTED_OFF).load(Ordering::SeqCst);
        // Never down: a writer that does not hold the lock (against the rules) may have counted
        // its end since `started` was loaded.
        let finished = self
            .counter(FINISHED_OFF)
            .fetch_max(started, Ordering::SeqCst);
        finished < started
    }

    /// `(started, finished)` as they are now (for `doctor` and tests).
    pub fn counts(&self) -> (u64, u64) {
        (
            self.counter(STARTED_OFF).load(Ordering::SeqCst),
            self.counter(FINISHED_OFF).load(Ordering::SeqCst),
        )
    }
}

/// One counted write transaction; counts its end when dropped.
pub struct Counting<'s> {
    seq: &'s ChangeSeq,
}

impl Drop for Counting<'_> {
    fn drop(&mut self) {
        self.seq
            .counter(FINISHED_OFF)
            .fetch_add(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_opens_share_the_counters_and_a_write_moves_both() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = ChangeSeq::open(tmp.path()).expect("open a");
        let b = ChangeSeq::open(tmp.path()).expect("open b");
        assert_eq!(a.settled(), Some(0));
        {
            let _w = a.counting();
            assert_eq!(
                b.settled(),
                None,
                "a write in flight is seen by the other mapping"
            );
            assert_eq!(b.counts(), (1, 0));
        }
        assert_eq!(b.settled(), Some(1));
        drop(b.counting());
        assert_eq!(a.settled(), Some(2));
        let bytes = std::fs::read(tmp.path().join(SEQ_FILE)).expect("read");
        assert_eq!(bytes.len(), SEQ_FILE_LEN);
        assert_eq!(&bytes[..8], &SEQ_MAGIC);
        assert_eq!(u64::from_le_bytes(bytes[16..24].try_into().expect("8")), 2);
        assert_eq!(u64::from_le_bytes(bytes[24..32].try_into().expect("8")), 2);
    }

    #[test]
    fn a_writer_that_died_mid_commit_keeps_readers_off_the_fast_path_until_settled() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = ChangeSeq::open(tmp.path()).expect("open");
        std::mem::forget(a.counting()); // started counted, the end never is: a crash
        assert_eq!(a.settled(), None);
        let b = ChangeSeq::open(tmp.path()).expect("reopen");
        assert_eq!(
            b.settled(),
            None,
            "the imbalance is in the file, not the process"
        );
        assert!(b.settle_after_crash());
        assert_eq!(a.settled(), Some(1));
        assert!(!b.settle_after_crash(), "nothing to settle twice");
    }

    #[test]
    fn files_of_another_size_magic_or_version_are_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join(SEQ_FILE);
        std::fs::write(&path, [0u8; 10]).expect("write");
        assert_eq!(
            ChangeSeq::open(tmp.path()).map(|_| ()),
            Err(SeqError::Length(10))
        );
        std::fs::write(&path, [0u8; SEQ_FILE_LEN]).expect("write");
        assert_eq!(
            ChangeSeq::open(tmp.path()).map(|_| ()),
            Err(SeqError::Magic)
        );
        let mut b = fresh_file();
        b[8..10].copy_from_slice(&2u16.to_le_bytes()); // a newer writer that version 1 can read
        std::fs::write(&path, b).expect("write");
        assert_eq!(ChangeSeq::open(tmp.path()).map(|_| ()), Ok(()));
        b[10..12].copy_from_slice(&2u16.to_le_bytes()); // needs a reader of version 2
        std::fs::write(&path, b).expect("write");
        assert_eq!(
            ChangeSeq::open(tmp.path()).map(|_| ()),
            Err(SeqError::Version {
                version: 2,
                min_reader: 2
            })
        );
        // The refused files were left as they were.
        assert_eq!(std::fs::read(&path).expect("read"), b.to_vec());
    }

    #[test]
    fn a_file_damaged_while_mapped_stops_being_trusted() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = ChangeSeq::open(tmp.path()).expect("open");
        assert_eq!(a.settled(), Some(0));
        let path = tmp.path().join(SEQ_FILE);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[0] ^= 0xff;
        // Written in place (same inode, as a stray write would): the mapping sees it.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
            .expect("damage");
        assert_eq!(a.settled(), None);
        assert!(!a.settle_after_crash());
    }
}
