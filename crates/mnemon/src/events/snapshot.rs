//! Folded stats on disk: an rkyv archive behind a checksummed header, written to a temp file and
//! renamed, read through a memory map and validated once at open (format-spec/snapshot.md).
//!
//! The archive carries a watermark per event segment (the offset up to which the segment's events
//! are counted), so open = snapshot + fold of the events after the watermarks. rkyv's validation
//! alone missed some flipped bytes, so the archive also has its own crc32, checked first.

use super::fold::{RecallStats, Stats, Verdicts};
use crate::fs::{Fs, Mapped};
use std::collections::HashMap;
use std::path::Path;

/// File name inside `index/`.
pub const SNAPSHOT_FILE: &str = "stats.snapshot";
/// First 8 bytes.
pub const MAGIC: [u8; 8] = *b"\x89MNSN\r\n\x1a";
/// Format version written by this build.
pub const VERSION: u16 = 2;
/// Header length: a multiple of 16 so the archive after it stays aligned for rkyv.
pub const HEADER_LEN: usize = 32;
pub const H_VERSION: usize = MAGIC.len();
pub const H_RESERVED: usize = H_VERSION + 2;
pub const H_CRC: usize = H_RESERVED + 2;
pub const H_LEN: usize = H_CRC + 4;
pub const H_RESERVED2: usize = H_LEN + 8;

/// One node's folded stats, as archived. Absent values are encoded as `i64::MIN` / 0.
#[derive(Debug, Clone, PartialEq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct StatsRec {
    pub recall_count: u64,
    pub last_recalled_ms: i64,
    pub importance: u8,
    pub importance_tagged_ms: i64,
    pub key_session: String,
    pub key_seq: u64,
    pub used_count: u64,
    pub untied_used: u64,
    pub wrong_count: u64,
    pub last_used_ms: i64,
}

/// What Feedback events said about one note for one question.
#[derive(Debug, Clone, PartialEq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FeedbackRec {
    /// The question, as `events::fold::question_key` keeps it.
    pub question: String,
    pub node: String,
    pub used: u32,
    pub wrong: u32,
}

/// What a snapshot holds.
#[derive(Debug, Clone, PartialEq, Default, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct SnapshotData {
    pub nodes: HashMap<String, StatsRec>,
    /// Segment id (file name without extensions) -> offset in its uncompressed byte stream up to
    /// which its events are counted.
    pub watermarks: HashMap<String, u64>,
    /// Events counted.
    pub events: u64,
    /// Per question and note, sorted by (question, node).
    pub feedback: Vec<FeedbackRec>,
}

impl StatsRec {
    pub fn from_stats(s: &RecallStats) -> StatsRec {
        let (key_session, key_seq) = s.importance_key.clone().unwrap_or_default();
        StatsRec {
            recall_count: s.recall_count,
            last_recalled_ms: s.last_recalled_ms.unwrap_or(i64::MIN),
            importance: s.importance.unwrap_or(0),
            importance_tagged_ms: s.importance_tagged_ms.unwrap_or(i64::MIN),
            key_session,
            key_seq,
            used_count: s.used_count,
            untied_used: s.untied_used,
            wrong_count: s.wrong_count,
            last_used_ms: s.last_used_ms.unwrap_or(i64::MIN),
        }
    }
}

/// Convert an archived record back.
pub fn to_stats(r: &ArchivedStatsRec) -> RecallStats {
    let last = r.last_recalled_ms.to_native();
    let tagged_ms = r.importance_tagged_ms.to_native();
    let has_importance = r.importance > 0;
    let used = r.last_used_ms.to_native();
    RecallStats {
        used_count: r.used_count.to_native(),
        untied_used: r.untied_used.to_native(),
        wrong_count: r.wrong_count.to_native(),
        last_used_ms: (used != i64::MIN).then_some(used),
        recall_count: r.recall_count.to_native(),
        last_recalled_ms: (last != i64::MIN).then_some(last),
        importance: has_importance.then_some(r.importance),
        importance_tagged_ms: has_importance.then_some(tagged_ms),
        importance_key: has_importance
            .then(|| (r.key_session.as_str().to_string(), r.key_seq.to_native())),
    }
}

/// Why a snapshot cannot be used. The caller then folds every event again (the same stats,
/// slower) and writes a new snapshot: nothing needs fixing by hand.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    #[error("cannot read it: {0}")]
    Read(#[source] std::io::Error),
    /// A folder made by hand or a tool stood at the snapshot's path; it was moved out of the way
    /// (else no snapshot could be written there again).
    #[error("a folder stood where the file belongs; moved to {}", aside.display())]
    Folder { aside: std::path::PathBuf },
    #[error("{len} bytes is too short for a snapshot")]
    TooShort { len: usize },
    #[error("bad magic: not a mnemon stats snapshot")]
    Magic,
    /// Another format version (an older or newer mnemon wrote it).
    #[error("format version {found}, this build reads {VERSION}")]
    Version { found: u16 },
    /// The header's archive length is not the file's.
    #[error("archive length {stored} does not match the file ({actual} bytes after the header)")]
    Length { stored: u64, actual: u64 },
    #[error("checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    Checksum { stored: u32, computed: u32 },
    /// The bytes pass the checksum but are not a valid archive of this build's types.
    #[error("archive does not validate: {0}")]
    Archive(#[source] rkyv::rancor::BoxedError),
}

/// An open, verified snapshot.
pub struct Snapshot {
    bytes: SnapshotBytes,
}

enum SnapshotBytes {
    Mapped(Mapped),
    Copied(rkyv::util::AlignedVec<16>),
}

impl Snapshot {
    fn archive(&self) -> &[u8] {
        match &self.bytes {
            SnapshotBytes::Mapped(m) => m.as_ref().as_ref().get(HEADER_LEN..).unwrap_or(&[]),
            SnapshotBytes::Copied(v) => v.as_slice(),
        }
    }

    /// The archived data (validated at open).
    pub fn data(&self) -> &ArchivedSnapshotData {
        // SAFETY: `open` checked the crc and ran rkyv's validation on exactly these bytes, which
        // are immutable (a read-only map of a file that is only ever replaced by rename, or an
        // owned copy).
        unsafe { rkyv::access_unchecked::<ArchivedSnapshotData>(self.archive()) }
    }

    /// Stats of one node.
    pub fn get(&self, id: &str) -> Option<RecallStats> {
        self.data().nodes.get(id).map(to_stats)
    }

    /// Watermark of a segment (0 when the snapshot has not seen it).
    pub fn watermark(&self, segment_id: &str) -> Option<u64> {
        self.data()
            .watermarks
            .get(segment_id)
            .map(|w| w.to_native())
    }

    /// Events counted.
    pub fn events(&self) -> u64 {
        self.data().events.to_native()
    }

    /// The watermarks, owned.
    pub fn watermarks(&self) -> HashMap<String, u64> {
        self.data()
            .watermarks
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_native()))
            .collect()
    }

    /// Everything as an owned fold result plus watermarks.
    pub fn to_owned(&self) -> (Stats, HashMap<String, u64>) {
        let d = self.data();
        let mut stats = Stats {
            nodes: rustc_hash::FxHashMap::with_capacity_and_hasher(
                d.nodes.len(),
                Default::default(),
            ),
            events: d.events.to_native(),
            feedback: Default::default(),
        };
        for (k, v) in d.nodes.iter() {
            stats.nodes.insert(k.as_str().to_string(), to_stats(v));
        }
        for f in d.feedback.iter() {
            stats.feedback.insert(
                (f.question.as_str().to_string(), f.node.as_str().to_string()),
                Verdicts {
                    used: f.used.to_native(),
                    wrong: f.wrong.to_native(),
                },
            );
        }
        let marks = d
            .watermarks
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_native()))
            .collect();
        (stats, marks)
    }

    /// Open and verify the snapshot in `index_dir`. `Ok(None)` when there is none; `Err` when
    /// it cannot be used (the caller re-folds from the events and says why).
    pub fn open(fs: &dyn Fs, index_dir: &Path) -> Result<Option<Snapshot>, SnapshotError> {
        let path = index_dir.join(SNAPSHOT_FILE);
        let map = match fs.map(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                if fs.list(&path).is_ok() {
                    let aside =
                        crate::fs::move_aside_as_damaged(fs, &path).map_err(SnapshotError::Read)?;
                    return Err(SnapshotError::Folder { aside });
                }
                return Err(SnapshotError::Read(e));
            }
        };
        let b: &[u8] = map.as_ref().as_ref();
        if b.len() < HEADER_LEN {
            return Err(SnapshotError::TooShort { len: b.len() });
        }
        if b[..MAGIC.len()] != MAGIC {
            return Err(SnapshotError::Magic);
        }
        let version = u16::from_le_bytes([b[H_VERSION], b[H_VERSION + 1]]);
        if version != VERSION {
            return Err(SnapshotError::Version { found: version });
        }
        let crc = u32::from_le_bytes([b[H_CRC], b[H_CRC + 1], b[H_CRC + 2], b[H_CRC + 3]]);
        let mut l = [0u8; 8];
        l.copy_from_slice(&b[H_LEN..H_LEN + 8]);
        let len = u64::from_le_bytes(l);
        let after_header = (b.len() - HEADER_LEN) as u64;
        if len != after_header {
            return Err(SnapshotError::Length {
                stored: len,
                actual: after_header,
            });
        }
        let archive = &b[HEADER_LEN..];
        let actual = crc32fast::hash(archive);
        if actual != crc {
            return Err(SnapshotError::Checksum {
                stored: crc,
                computed: actual,
            });
        }
        let bytes = if (archive.as_ptr() as usize).is_multiple_of(16) {
            SnapshotBytes::Mapped(map.clone())
        } else {
            let mut v = rkyv::util::AlignedVec::<16>::with_capacity(archive.len());
            v.extend_from_slice(archive);
            SnapshotBytes::Copied(v)
        };
        let snap = Snapshot { bytes };
        rkyv::access::<ArchivedSnapshotData, rkyv::rancor::BoxedError>(snap.archive())
            .map_err(SnapshotError::Archive)?;
        Ok(Some(snap))
    }
}

/// Write a snapshot of `stats` with `watermarks` to `index_dir`, atomically and durably
/// ([`crate::fs::write_atomic`]: a uniquely named temp file, fsync, rename over the old one, fsync
/// of the folder).
pub fn write(
    fs: &dyn Fs,
    index_dir: &Path,
    stats: &Stats,
    watermarks: &HashMap<String, u64>,
) -> crate::Result<()> {
    let data = SnapshotData {
        nodes: stats
            .nodes
            .iter()
            .map(|(k, v)| (k.clone(), StatsRec::from_stats(v)))
            .collect(),
        watermarks: watermarks.clone(),
        events: stats.events,
        feedback: {
            let mut f: Vec<FeedbackRec> = stats
                .feedback
                .iter()
                .map(|((question, node), v)| FeedbackRec {
                    question: question.clone(),
                    node: node.clone(),
                    used: v.used,
                    wrong: v.wrong,
                })
                .collect();
            f.sort_by(|a, b| (&a.question, &a.node).cmp(&(&b.question, &b.node)));
            f
        },
    };
    let path = index_dir.join(SNAPSHOT_FILE);
    let archive = rkyv::to_bytes::<rkyv::rancor::BoxedError>(&data)
        .map_err(|e| crate::Error::io("archive", &path, std::io::Error::other(e.to_string())))?;
    let mut out = Vec::with_capacity(HEADER_LEN + archive.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&archive).to_le_bytes());
    out.extend_from_slice(&(archive.len() as u64).to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_LEN);
    out.extend_from_slice(&archive);
    crate::fs::write_atomic(fs, &path, crate::fs::Durability::Durable, &[&out])
}
