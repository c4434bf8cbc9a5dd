//! Which segments are live? The lexical manifest: a small checksummed file naming the live
//! segment files and, per segment, its deleted doc numbers. It is replaced atomically (temp file,
//! rename: [`crate::fs::write_atomic`]), so a reader sees the old or the new set, never a mix.
//! Byte layout: `format-spec/lexical.md`.

use crate::error::{Error, Result};
use crate::fs::{Durability, Fs};
use std::io::Read;
use std::path::Path;

/// File name of the manifest inside `index/`.
pub const MANIFEST_FILE: &str = "lexical.manifest";
/// First 8 bytes.
pub const MAGIC: [u8; 8] = *b"\x89MNLM\r\n\x1a";
/// Format version written by this build.
pub const VERSION: u16 = 1;
/// Most segments listed (a limit on everything).
pub const MAX_SEGMENTS: usize = 1024;

/// One live segment as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentEntry {
    /// File name inside `index/` (`lex-<generation>-<n>.seg`).
    pub file: String,
    /// The segment's body checksum (must equal its footer's).
    pub body_crc: u32,
    pub doc_count: u32,
    /// Deleted doc numbers, strictly increasing, each `< doc_count`.
    pub deleted: Vec<u32>,
}

/// The manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// Incremented on every change; segment files of generation g are named after it.
    pub generation: u64,
    pub segments: Vec<SegmentEntry>,
}

/// Why manifest bytes cannot be used. The caller reports a damaged index file, and the lexical
/// index is rebuilt from the notes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    #[error("{len} bytes is too short for a lexical manifest")]
    TooShort { len: usize },
    #[error("checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    Checksum { stored: u32, computed: u32 },
    #[error("bad magic: not a mnemon lexical manifest")]
    Magic,
    /// Another format version (an older or newer mnemon wrote it).
    #[error("format version {found}, this build reads {VERSION}")]
    Version { found: u16 },
    /// A field runs past the end of the bytes.
    #[error("truncated: a field at byte {at} runs past the end")]
    Truncated { at: usize },
    #[error("{count} segments is over the limit of {MAX_SEGMENTS}")]
    TooManySegments { count: u32 },
    #[error("a segment file name is not UTF-8")]
    FileNameNotUtf8,
    #[error("invalid segment file name {file:?}")]
    FileName { file: String },
    #[error("{file}: {deleted} deletions, more than its {docs} docs")]
    MoreDeletionsThanDocs {
        file: String,
        deleted: u32,
        docs: u32,
    },
    /// A deleted doc number not above the one before it, or not below the doc count.
    #[error("{file}: deleted doc {doc} out of order or range")]
    Deletion { file: String, doc: u32 },
    #[error("{bytes} trailing bytes")]
    Trailing { bytes: usize },
}

/// Reads the manifest body front to back.
struct Cursor<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], ManifestError> {
        let truncated = ManifestError::Truncated { at: self.pos };
        let end = self.pos.checked_add(n).ok_or(truncated.clone())?;
        let s = self.body.get(self.pos..end).ok_or(truncated)?;
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> std::result::Result<[u8; N], ManifestError> {
        let at = self.pos;
        self.take(N)?
            .try_into()
            .map_err(|_| ManifestError::Truncated { at })
    }
}

fn valid_file_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && !s.starts_with('.')
}

impl Manifest {
    /// Encode (format-spec/lexical.md, "Manifest").
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + self.segments.len() * 32);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.generation.to_le_bytes());
        out.extend_from_slice(&(self.segments.len() as u32).to_le_bytes());
        for s in &self.segments {
            debug_assert!(valid_file_name(&s.file));
            debug_assert!(s.deleted.windows(2).all(|w| w[0] < w[1]));
            out.extend_from_slice(&(s.file.len() as u16).to_le_bytes());
            out.extend_from_slice(s.file.as_bytes());
            out.extend_from_slice(&s.body_crc.to_le_bytes());
            out.extend_from_slice(&s.doc_count.to_le_bytes());
            out.extend_from_slice(&(s.deleted.len() as u32).to_le_bytes());
            for d in &s.deleted {
                out.extend_from_slice(&d.to_le_bytes());
            }
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decode and check everything; the error says what is wrong.
    pub fn decode(b: &[u8]) -> std::result::Result<Manifest, ManifestError> {
        if b.len() < 32 {
            return Err(ManifestError::TooShort { len: b.len() });
        }
        let (body, crc) = b.split_at(b.len() - 4);
        let stored = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
        let computed = crc32fast::hash(body);
        if computed != stored {
            return Err(ManifestError::Checksum { stored, computed });
        }
        if body[..8] != MAGIC {
            return Err(ManifestError::Magic);
        }
        let mut r = Cursor { body, pos: 8 };
        let version = u16::from_le_bytes(r.array()?);
        if version != VERSION {
            return Err(ManifestError::Version { found: version });
        }
        r.take(6)?;
        let generation = u64::from_le_bytes(r.array()?);
        let count = u32::from_le_bytes(r.array()?);
        if count as usize > MAX_SEGMENTS {
            return Err(ManifestError::TooManySegments { count });
        }
        let mut segments = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let len = u16::from_le_bytes(r.array()?);
            let file = std::str::from_utf8(r.take(usize::from(len))?)
                .map_err(|_| ManifestError::FileNameNotUtf8)?
                .to_string();
            if !valid_file_name(&file) {
                return Err(ManifestError::FileName { file });
            }
            let body_crc = u32::from_le_bytes(r.array()?);
            let doc_count = u32::from_le_bytes(r.array()?);
            let n_del = u32::from_le_bytes(r.array()?);
            if n_del > doc_count {
                return Err(ManifestError::MoreDeletionsThanDocs {
                    file,
                    deleted: n_del,
                    docs: doc_count,
                });
            }
            let mut deleted = Vec::with_capacity(n_del as usize);
            for _ in 0..n_del {
                let d = u32::from_le_bytes(r.array()?);
                if d >= doc_count || deleted.last().is_some_and(|&p| p >= d) {
                    return Err(ManifestError::Deletion { file, doc: d });
                }
                deleted.push(d);
            }
            segments.push(SegmentEntry {
                file,
                body_crc,
                doc_count,
                deleted,
            });
        }
        if r.pos != body.len() {
            return Err(ManifestError::Trailing {
                bytes: body.len() - r.pos,
            });
        }
        Ok(Manifest {
            generation,
            segments,
        })
    }

    /// Read the manifest in `index_dir`; `Ok(None)` when there is none yet.
    pub fn load(fs: &dyn Fs, index_dir: &Path) -> Result<Option<Manifest>> {
        let path = index_dir.join(MANIFEST_FILE);
        let mut bytes = Vec::new();
        match fs
            .open_read(&path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // A folder, or a named pipe or device (`fs::open_regular`), where the file belongs.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::IsADirectory | std::io::ErrorKind::InvalidData
                ) =>
            {
                let what = if e.kind() == std::io::ErrorKind::IsADirectory {
                    "a folder"
                } else {
                    "something other than a regular file"
                };
                let aside = crate::fs::move_aside_as_damaged(fs, &path)
                    .map_err(|e| Error::io("move aside", &path, e))?;
                return Err(Error::Corrupt {
                    path,
                    reason: format!(
                        "{what} stood where the file belongs; moved to {}",
                        aside.display()
                    ),
                });
            }
            Err(e) => return Err(Error::io("read", &path, e)),
        }
        Manifest::decode(&bytes)
            .map(Some)
            .map_err(|e| Error::Corrupt {
                path,
                reason: e.to_string(),
            })
    }

    /// Replace the manifest in `index_dir` atomically, not durably ([`DURABILITY`]).
    pub fn store(&self, fs: &dyn Fs, index_dir: &Path) -> Result<()> {
        let path = index_dir.join(MANIFEST_FILE);
        crate::fs::write_atomic(fs, &path, DURABILITY, &[&self.encode()])
    }
}

/// How the lexical index's files (segments and the manifest) are replaced: atomically, so readers
/// (other processes included) see the old file or the new one, never a partial one; not fsynced.
///
/// The lexical index is derived, and the store records the generation each update published (in
/// the same durable commit as the notes' new state). After a power loss the files may be older
/// than that generation, or torn; `Memory::open` then finds the index behind the store, or failing
/// verification, and rebuilds it from the notes. This keeps a one-note update at one fsync (the
/// store's) instead of five.
pub const DURABILITY: Durability = Durability::RenameOnly;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips_and_a_flipped_bit_or_a_cut_is_refused() {
        let m = Manifest {
            generation: 7,
            segments: vec![SegmentEntry {
                file: "lex-0000000000000007-0.seg".into(),
                body_crc: 0xdead_beef,
                doc_count: 10,
                deleted: vec![1, 5],
            }],
        };
        let b = m.encode();
        assert_eq!(Manifest::decode(&b).unwrap(), m);
        for i in 0..b.len() {
            let mut bad = b.clone();
            bad[i] ^= 1;
            assert!(Manifest::decode(&bad).is_err(), "flip at {i}");
        }
        assert!(Manifest::decode(&b[..b.len() - 1]).is_err());
    }

    fn manifest(generation: u64) -> Manifest {
        Manifest {
            generation,
            segments: (0..generation)
                .map(|n| SegmentEntry {
                    file: format!("lex-{generation:016x}-{n}.seg"),
                    body_crc: n as u32,
                    doc_count: 3,
                    deleted: vec![n as u32],
                })
                .collect(),
        }
    }

    /// The manifest is replaced through the `Fs` seam (`crate::fs::write_atomic`; it used to be
    /// written with the real file system only). A crash at any call of a replacement leaves the
    /// old manifest or the new one; a power loss after something else fsynced `index/` (the
    /// snapshot does) can keep the new name without its bytes, and `load` then refuses the file
    /// as damaged (the index is rebuilt from the notes), never reading another set of segments.
    #[test]
    fn a_crash_while_replacing_the_manifest_leaves_a_whole_one_or_a_refused_one() {
        use crate::fs::MemFs;
        let dir = Path::new("/index");
        let (old, new) = (manifest(1), manifest(2));
        let setup = || {
            let fs = MemFs::new();
            fs.put(&dir.join(MANIFEST_FILE), &old.encode(), 0);
            fs
        };
        let fs = setup();
        let base = fs.calls();
        new.store(&fs, dir).unwrap();
        let total = fs.calls() - base;
        assert_eq!(Manifest::load(&fs, dir).unwrap(), Some(new.clone()));
        for k in 1..=total + 1 {
            for tear in [false, true] {
                let fs = setup();
                fs.crash_at(fs.calls() + k);
                let stored = new.store(&fs, dir).is_ok();
                assert_eq!(stored, k > total, "crash at {k}");
                let found = Manifest::load(&fs.crash_image(tear), dir)
                    .unwrap_or_else(|e| panic!("crash at {k}: {e}"))
                    .expect("a manifest");
                assert!(found == old || found == new, "crash at {k}: {found:?}");
            }
        }
        let fs = setup();
        new.store(&fs, dir).unwrap();
        fs.sync_dir(dir).unwrap();
        match Manifest::load(&fs.crash_image(true), dir) {
            Err(Error::Corrupt { path, .. }) => assert_eq!(path, dir.join(MANIFEST_FILE)),
            other => panic!("an empty manifest must be refused: {other:?}"),
        }
    }
}
