//! Which segments are live? The lexical manifest: a small checksummed file naming the live
//! segment files and, per segment, its deleted doc numbers. It is replaced atomically (temp file,
//! fsync, rename, fsync of the folder), so a reader sees the old or the new set, never a mix.
//! Byte layout: `format-spec/lexical.md`.

use crate::error::{Error, Result};
use std::io::Write;
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
    pub fn load(index_dir: &Path) -> Result<Option<Manifest>> {
        let path = index_dir.join(MANIFEST_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", &path, e)),
        };
        Manifest::decode(&bytes)
            .map(Some)
            .map_err(|e| Error::Corrupt {
                path,
                reason: e.to_string(),
            })
    }

    /// Replace the manifest in `index_dir` atomically (not durably: see [`replace_file`]).
    pub fn store(&self, index_dir: &Path) -> Result<()> {
        let path = index_dir.join(MANIFEST_FILE);
        replace_file(index_dir, &path, &[&self.encode()])
    }
}

/// Write `parts`, one after the other, to `path` through a uniquely named temp file in `dir`:
/// write, then rename into place. Readers (other processes included) see the old file or the new
/// one, never a partial one.
///
/// Nothing is fsynced: the lexical index is derived, and the store records the generation each
/// update published (in the same durable commit as the notes' new state). After a power loss
/// the files may be older than that generation, or torn; `Memory::open` then finds the index
/// behind the store, or failing verification, and rebuilds it from the notes. This keeps a
/// one-note update at one fsync (the store's) instead of five.
pub fn replace_file(dir: &Path, path: &Path, parts: &[&[u8]]) -> Result<()> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(|e| Error::io("create temp file in", dir, e))?;
    for bytes in parts {
        tmp.write_all(bytes)
            .map_err(|e| Error::io("write", tmp.path(), e))?;
    }
    tmp.persist(path)
        .map_err(|e| Error::io("rename into place", path, e.error))?;
    Ok(())
}

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
}
