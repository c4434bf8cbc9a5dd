//! Byte encodings of the values kept in the redb store (format-spec/store.md is the reference).
//!
//! All integers are little-endian; strings are a `u32` byte length followed by UTF-8 bytes. Every
//! decoder checks lengths and codes and returns [`CodecError`] instead of panicking: the store is a
//! derived file, and a damaged one is rebuilt from the notes.

use crate::notes::{EdgeKind, NoteType, Problem, ProblemKind, Provenance};

/// Version byte at the start of every node record.
pub const NODE_RECORD_VERSION: u8 = 1;
/// Longest string accepted by the decoder (bytes): a limit on everything.
pub const MAX_STRING_BYTES: usize = 64 << 20;
/// Most list entries accepted by the decoder.
pub const MAX_LIST_LEN: u32 = 1 << 20;

const FLAG_PIN: u8 = 1 << 0;
const FLAG_CREATED: u8 = 1 << 1;
const FLAG_UPDATED: u8 = 1 << 2;
const FLAG_TTL: u8 = 1 << 3;
const FLAG_NAME: u8 = 1 << 4;
const FLAG_DESCRIPTION: u8 = 1 << 5;

/// A value in the store failed to decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {reason}")]
pub struct CodecError {
    pub what: &'static str,
    pub reason: String,
}

fn err(what: &'static str, reason: impl Into<String>) -> CodecError {
    CodecError {
        what,
        reason: reason.into(),
    }
}

/// A node as stored: everything recall needs to show and score a note without reading it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeRecord {
    /// Path of the note relative to `memory/`.
    pub path: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub note_type: NoteType,
    /// The frontmatter's `created_at`, Unix seconds.
    pub created_s: Option<i64>,
    /// The frontmatter's `updated_at`, Unix seconds.
    pub updated_s: Option<i64>,
    pub ttl_days: Option<u32>,
    pub pin: bool,
    pub tags: Vec<String>,
    /// The first characters of the body, for display.
    pub excerpt: String,
}

/// One edge as seen from one end: the other end's id plus kind, provenance, confidence and the
/// out-degree of the edge's source (how many distinct notes it links to: a note that links to
/// everything says little about each; recall damps such edges).
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeValue {
    pub other: String,
    pub kind: EdgeKind,
    pub provenance: Provenance,
    pub confidence: f32,
    /// Set by the store when it writes the edge (`Store::apply`); callers may leave it 0.
    pub source_out_degree: u32,
}

/// What the store remembers of a note file, to skip unchanged files on the next scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileEntry {
    pub size: u64,
    pub mtime_ns: i64,
    /// The inode's change time, nanoseconds since the Unix epoch (0 where there is none).
    pub ctime_ns: i64,
    /// The inode number (0 where there is none).
    pub ino: u64,
    /// xxh3-64 of the file bytes read.
    pub hash: u64,
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        debug_assert!(s.len() <= MAX_STRING_BYTES);
        self.u32(u32::try_from(s.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Reader<'a> {
    what: &'static str,
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        if self.buf.len() < n {
            return Err(err(
                self.what,
                format!("truncated: need {n} bytes, {} left", self.buf.len()),
            ));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, CodecError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, CodecError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, CodecError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f32(&mut self) -> Result<f32, CodecError> {
        Ok(f32::from_le_bytes(self.array()?))
    }
    fn str(&mut self) -> Result<String, CodecError> {
        self.str_ref().map(str::to_string)
    }
    fn str_ref(&mut self) -> Result<&'a str, CodecError> {
        let len = self.u32()? as usize;
        if len > MAX_STRING_BYTES {
            return Err(err(
                self.what,
                format!("string of {len} bytes is over the limit"),
            ));
        }
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes).map_err(|_| err(self.what, "string is not UTF-8"))
    }
    fn end(&self) -> Result<(), CodecError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(err(self.what, format!("{} trailing bytes", self.buf.len())))
        }
    }
}

impl NodeRecord {
    /// Encode (format-spec/store.md, "nodes").
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(
            64 + self.excerpt.len() + self.path.len(),
        ));
        let mut flags = 0;
        for (set, bit) in [
            (self.pin, FLAG_PIN),
            (self.created_s.is_some(), FLAG_CREATED),
            (self.updated_s.is_some(), FLAG_UPDATED),
            (self.ttl_days.is_some(), FLAG_TTL),
            (self.name.is_some(), FLAG_NAME),
            (self.description.is_some(), FLAG_DESCRIPTION),
        ] {
            if set {
                flags |= bit;
            }
        }
        w.u8(NODE_RECORD_VERSION);
        w.u8(self.note_type.code());
        w.u8(flags);
        w.i64(self.created_s.unwrap_or(0));
        w.i64(self.updated_s.unwrap_or(0));
        w.u32(self.ttl_days.unwrap_or(0));
        w.str(&self.path);
        w.str(self.name.as_deref().unwrap_or(""));
        w.str(self.description.as_deref().unwrap_or(""));
        w.u32(u32::try_from(self.tags.len()).unwrap_or(u32::MAX));
        for t in &self.tags {
            w.str(t);
        }
        w.str(&self.excerpt);
        w.0
    }

    /// Decode; every field is checked.
    pub fn decode(bytes: &[u8]) -> Result<NodeRecord, CodecError> {
        let mut tags = Vec::new();
        let r = NodeRecordRef::decode_with_tags(bytes, |t| tags.push(t.to_string()))?;
        Ok(NodeRecord {
            path: r.path.to_string(),
            name: r.name.map(str::to_string),
            description: r.description.map(str::to_string),
            note_type: r.note_type,
            created_s: r.created_s,
            updated_s: r.updated_s,
            ttl_days: r.ttl_days,
            pin: r.pin,
            tags,
            excerpt: r.excerpt.to_string(),
        })
    }
}

/// A node record borrowed from its bytes, tags left out: what a recall shows of a note, read
/// without allocating the fields it does not show.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeRecordRef<'a> {
    pub path: &'a str,
    pub name: Option<&'a str>,
    pub description: Option<&'a str>,
    pub note_type: NoteType,
    pub created_s: Option<i64>,
    pub updated_s: Option<i64>,
    pub ttl_days: Option<u32>,
    pub pin: bool,
    pub excerpt: &'a str,
}

impl<'a> NodeRecordRef<'a> {
    /// Decode; every field is checked exactly as [`NodeRecord::decode`] checks it (the tags
    /// too, though they are not kept).
    pub fn decode(bytes: &'a [u8]) -> Result<NodeRecordRef<'a>, CodecError> {
        Self::decode_with_tags(bytes, |_| {})
    }

    /// The fields recall scores by (type, `updated_s`, `ttl_days`), read from the record's fixed
    /// head: its version, type code and length are checked, its strings are not read (the graph
    /// load needs these three of every node; [`NodeRecordRef::decode`] checks the rest when a
    /// note is shown).
    pub fn decode_scoring(
        bytes: &[u8],
    ) -> Result<(NoteType, Option<i64>, Option<u32>), CodecError> {
        let mut r = Reader {
            what: "node record",
            buf: bytes,
        };
        let h = RecordHead::read(&mut r)?;
        Ok((
            h.note_type,
            h.has(FLAG_UPDATED).then_some(h.updated_s),
            h.has(FLAG_TTL).then_some(h.ttl_days),
        ))
    }

    fn decode_with_tags(
        bytes: &'a [u8],
        mut tag: impl FnMut(&'a str),
    ) -> Result<NodeRecordRef<'a>, CodecError> {
        let mut r = Reader {
            what: "node record",
            buf: bytes,
        };
        let h = RecordHead::read(&mut r)?;
        let path = r.str_ref()?;
        let name = r.str_ref()?;
        let description = r.str_ref()?;
        let n_tags = r.u32()?;
        if n_tags > MAX_LIST_LEN {
            return Err(err(
                "node record",
                format!("{n_tags} tags is over the limit"),
            ));
        }
        for _ in 0..n_tags {
            tag(r.str_ref()?);
        }
        let excerpt = r.str_ref()?;
        r.end()?;
        Ok(NodeRecordRef {
            path,
            name: h.has(FLAG_NAME).then_some(name),
            description: h.has(FLAG_DESCRIPTION).then_some(description),
            note_type: h.note_type,
            created_s: h.has(FLAG_CREATED).then_some(h.created_s),
            updated_s: h.has(FLAG_UPDATED).then_some(h.updated_s),
            ttl_days: h.has(FLAG_TTL).then_some(h.ttl_days),
            pin: h.has(FLAG_PIN),
            excerpt,
        })
    }
}

/// A node record's fixed head: version, type, flags, the two dates and the TTL (23 bytes).
struct RecordHead {
    note_type: NoteType,
    flags: u8,
    created_s: i64,
    updated_s: i64,
    ttl_days: u32,
}

impl RecordHead {
    /// Read and check the head (version and type code).
    fn read(r: &mut Reader<'_>) -> Result<RecordHead, CodecError> {
        let version = r.u8()?;
        if version != NODE_RECORD_VERSION {
            return Err(err(
                "node record",
                format!("unknown record version {version}"),
            ));
        }
        let type_code = r.u8()?;
        let note_type = NoteType::from_code(type_code)
            .ok_or_else(|| err("node record", format!("unknown note type code {type_code}")))?;
        Ok(RecordHead {
            note_type,
            flags: r.u8()?,
            created_s: r.i64()?,
            updated_s: r.i64()?,
            ttl_days: r.u32()?,
        })
    }

    fn has(&self, bit: u8) -> bool {
        self.flags & bit != 0
    }
}

impl EdgeValue {
    /// Encode (format-spec/store.md, "Edge value").
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(EDGE_VALUE_FIXED_BYTES + self.other.len());
        self.borrowed().encode_into(&mut out);
        out
    }

    /// Decode; kind and provenance codes and the id are checked.
    pub fn decode(bytes: &[u8]) -> Result<EdgeValue, CodecError> {
        EdgeRef::decode(bytes).map(EdgeValue::from)
    }
}

impl From<EdgeRef<'_>> for EdgeValue {
    /// The value with its id copied.
    fn from(e: EdgeRef<'_>) -> EdgeValue {
        EdgeValue {
            other: e.other.to_string(),
            kind: e.kind,
            provenance: e.provenance,
            confidence: e.confidence,
            source_out_degree: e.source_out_degree,
        }
    }
}

impl EdgeValue {
    /// This value as an [`EdgeRef`] borrowing its id.
    pub fn borrowed(&self) -> EdgeRef<'_> {
        EdgeRef {
            other: &self.other,
            kind: self.kind,
            provenance: self.provenance,
            confidence: self.confidence,
            source_out_degree: self.source_out_degree,
        }
    }
}

/// An edge value decoded in place: the id borrows the stored bytes (loading a graph of a million
/// edges allocates no string per edge).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeRef<'a> {
    pub other: &'a str,
    pub kind: EdgeKind,
    pub provenance: Provenance,
    pub confidence: f32,
    pub source_out_degree: u32,
}

impl<'a> EdgeRef<'a> {
    /// Append the encoding (format-spec/store.md, "Edge value") to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(self.kind.code());
        out.push(self.provenance.code());
        out.extend_from_slice(&self.confidence.to_le_bytes());
        out.extend_from_slice(&self.source_out_degree.to_le_bytes());
        out.extend_from_slice(self.other.as_bytes());
    }

    /// Decode with the same checks as [`EdgeValue::decode`].
    pub fn decode(bytes: &'a [u8]) -> Result<EdgeRef<'a>, CodecError> {
        let mut r = Reader {
            what: "edge value",
            buf: bytes,
        };
        let k = r.u8()?;
        let kind =
            EdgeKind::from_code(k).ok_or_else(|| err("edge value", format!("unknown kind {k}")))?;
        let p = r.u8()?;
        let provenance = Provenance::from_code(p)
            .ok_or_else(|| err("edge value", format!("unknown provenance {p}")))?;
        let confidence = r.f32()?;
        if !(0.0..=1.0).contains(&confidence) {
            return Err(err(
                "edge value",
                format!("confidence {confidence} outside 0..=1"),
            ));
        }
        let source_out_degree = r.u32()?;
        let other = std::str::from_utf8(std::mem::take(&mut r.buf))
            .map_err(|_| err("edge value", "id is not UTF-8"))?;
        if other.is_empty() {
            return Err(err("edge value", "empty id"));
        }
        Ok(EdgeRef {
            other,
            kind,
            provenance,
            confidence,
            source_out_degree,
        })
    }
}

impl FileEntry {
    /// A ctime no file has, stored for a file that changed so recently when it was read that a
    /// later write could leave its size, mtime and ctime as they were (file systems that keep
    /// times in whole seconds, or in the kernel's clock ticks): the next scan reads it again
    /// and compares its hash.
    pub const UNSETTLED_CTIME_NS: i64 = i64::MIN;
    /// A size no file has, stored for a note whose synthesized edges could not be recomputed
    /// (it could not be read when a change elsewhere moved them): the next scan parses it
    /// again, whatever its bytes.
    pub const REPARSE_SIZE: u64 = u64::MAX;

    /// Encode (format-spec/store.md, "manifest").
    pub fn encode(&self) -> [u8; 40] {
        let mut out = [0u8; 40];
        out[0..8].copy_from_slice(&self.size.to_le_bytes());
        out[8..16].copy_from_slice(&self.mtime_ns.to_le_bytes());
        out[16..24].copy_from_slice(&self.ctime_ns.to_le_bytes());
        out[24..32].copy_from_slice(&self.ino.to_le_bytes());
        out[32..40].copy_from_slice(&self.hash.to_le_bytes());
        out
    }

    /// Decode a 40-byte manifest value.
    pub fn decode(bytes: &[u8]) -> Result<FileEntry, CodecError> {
        let mut r = Reader {
            what: "manifest entry",
            buf: bytes,
        };
        let e = FileEntry {
            size: r.u64()?,
            mtime_ns: r.i64()?,
            ctime_ns: r.i64()?,
            ino: r.u64()?,
            hash: r.u64()?,
        };
        r.end()?;
        Ok(e)
    }
}

/// Fixed part of an edge value (kind, provenance, confidence, source out-degree), before the id.
pub const EDGE_VALUE_FIXED_BYTES: usize = 10;
/// Longest edge value: the fixed part and an id of at most 512 bytes.
pub const MAX_EDGE_VALUE_BYTES: usize = EDGE_VALUE_FIXED_BYTES + crate::notes::MAX_ID_BYTES;
/// Most entries in one edge list, as the format allows (a note has at most 4096 out-edges; the
/// bound is the one schema v4's in-lists needed, where every note may link to one hub).
pub const MAX_EDGE_LIST_LEN: u32 = 1 << 24;

/// Encode an edge list (format-spec/store.md, "Edge list"): a `u32` count, then each edge value
/// after its `u16` length. `values` must be sorted ascending by bytes with no duplicates (the
/// order recall walks a node's edges in), between 1 and [`MAX_EDGE_LIST_LEN`] of them, each
/// longer than the fixed part and at most [`MAX_EDGE_VALUE_BYTES`]; anything else is refused
/// before a byte is written.
pub fn encode_edge_list<V: AsRef<[u8]>>(values: &[V]) -> Result<Vec<u8>, CodecError> {
    const WHAT: &str = "edge list";
    let n = u32::try_from(values.len())
        .ok()
        .filter(|n| (1..=MAX_EDGE_LIST_LEN).contains(n))
        .ok_or_else(|| {
            err(
                WHAT,
                format!("{} entries is outside 1..=2^24", values.len()),
            )
        })?;
    let mut total = 4;
    let mut last: Option<&[u8]> = None;
    for v in values {
        let v = v.as_ref();
        if !(EDGE_VALUE_FIXED_BYTES < v.len() && v.len() <= MAX_EDGE_VALUE_BYTES) {
            return Err(err(WHAT, format!("an entry of {} bytes", v.len())));
        }
        if last.is_some_and(|l| l >= v) {
            return Err(err(WHAT, "entries not in ascending order"));
        }
        last = Some(v);
        total += 2 + v.len();
    }
    let mut w = Writer(Vec::with_capacity(total));
    w.u32(n);
    for v in values {
        let v = v.as_ref();
        // In range: checked above (at most 522 bytes).
        w.0.extend_from_slice(&(v.len() as u16).to_le_bytes());
        w.0.extend_from_slice(v);
    }
    debug_assert_eq!(w.0.len(), total);
    Ok(w.0)
}

/// Edge values written one after another into one buffer, then encoded as an edge list (sorted,
/// duplicates dropped): a list of n entries costs two reused buffers, not n allocations.
#[derive(Debug, Default)]
pub struct EdgeListBuilder {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl EdgeListBuilder {
    /// Add one entry.
    pub fn push(&mut self, edge: EdgeRef<'_>) {
        edge.encode_into(&mut self.bytes);
        self.ends.push(self.bytes.len());
    }

    /// Encode the entries, sorted and without duplicates, as an edge list (`None` when there are
    /// none) and clear the builder for the next list. Returns the list and its entry count.
    pub fn finish(&mut self) -> Result<Option<(Vec<u8>, usize)>, CodecError> {
        let mut start = 0;
        let mut entries: Vec<&[u8]> = Vec::with_capacity(self.ends.len());
        for &end in &self.ends {
            entries.push(&self.bytes[start..end]);
            start = end;
        }
        entries.sort_unstable();
        entries.dedup();
        let out = if entries.is_empty() {
            None
        } else {
            Some((encode_edge_list(&entries)?, entries.len()))
        };
        self.bytes.clear();
        self.ends.clear();
        Ok(out)
    }
}

/// Split an edge list into its entries (each an edge value, for [`EdgeRef::decode`]), checking
/// the count, every length, the ascending order and that nothing trails.
pub fn decode_edge_list(bytes: &[u8]) -> Result<Vec<&[u8]>, CodecError> {
    const WHAT: &str = "edge list";
    let mut r = Reader {
        what: WHAT,
        buf: bytes,
    };
    let n = r.u32()?;
    if !(1..=MAX_EDGE_LIST_LEN).contains(&n) {
        return Err(err(WHAT, format!("{n} entries is outside 1..=2^24")));
    }
    // Each entry takes at least 2 + 11 bytes: a count the bytes cannot hold is refused before
    // anything is allocated for it.
    if (n as usize).saturating_mul(2 + EDGE_VALUE_FIXED_BYTES + 1) > r.buf.len() {
        return Err(err(
            WHAT,
            format!("truncated: {n} entries in {} bytes", bytes.len()),
        ));
    }
    let mut out: Vec<&[u8]> = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let len = u16::from_le_bytes(r.array()?) as usize;
        if !(EDGE_VALUE_FIXED_BYTES < len && len <= MAX_EDGE_VALUE_BYTES) {
            return Err(err(WHAT, format!("an entry of {len} bytes")));
        }
        let v = r.take(len)?;
        if out.last().is_some_and(|l| *l >= v) {
            return Err(err(WHAT, "entries not in ascending order"));
        }
        out.push(v);
    }
    r.end()?;
    Ok(out)
}

/// Encode a note's problem list (format-spec/store.md, "problems").
pub fn encode_problems(problems: &[Problem]) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.u32(u32::try_from(problems.len()).unwrap_or(u32::MAX));
    for p in problems {
        w.u8(p.kind.code());
        w.str(&p.message);
    }
    w.0
}

/// Change-log tag: the entry lists the touched ids.
const CHANGES_LIST: u8 = 0;
/// Change-log tag: the transaction touched too many ids to list; readers reload everything.
const CHANGES_ALL: u8 = 1;

/// Encode a change-log entry (format-spec/store.md, "changes"): the ids, or "everything" when
/// there are more than `max_ids`.
pub fn encode_changes(ids: &[&str], max_ids: usize) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    if ids.len() > max_ids {
        w.u8(CHANGES_ALL);
        return w.0;
    }
    w.u8(CHANGES_LIST);
    w.u32(u32::try_from(ids.len()).unwrap_or(u32::MAX));
    for id in ids {
        w.str(id);
    }
    w.0
}

/// Decode a change-log entry: `Some(ids)`, or `None` for "everything".
pub fn decode_changes(bytes: &[u8]) -> Result<Option<Vec<String>>, CodecError> {
    let mut r = Reader {
        what: "change-log entry",
        buf: bytes,
    };
    match r.u8()? {
        CHANGES_ALL => {
            r.end()?;
            Ok(None)
        }
        CHANGES_LIST => {
            let n = r.u32()?;
            if n > MAX_LIST_LEN {
                return Err(err(
                    "change-log entry",
                    format!("{n} ids is over the limit"),
                ));
            }
            let mut out = Vec::with_capacity(n.min(1024) as usize);
            for _ in 0..n {
                out.push(r.str()?);
            }
            r.end()?;
            Ok(Some(out))
        }
        t => Err(err("change-log entry", format!("unknown tag {t}"))),
    }
}

/// Decode a problem list.
pub fn decode_problems(bytes: &[u8]) -> Result<Vec<Problem>, CodecError> {
    let mut r = Reader {
        what: "problem list",
        buf: bytes,
    };
    let n = r.u32()?;
    if n > MAX_LIST_LEN {
        return Err(err(
            "problem list",
            format!("{n} entries is over the limit"),
        ));
    }
    let mut out = Vec::with_capacity(n.min(16) as usize);
    for _ in 0..n {
        let c = r.u8()?;
        let kind = ProblemKind::from_code(c)
            .ok_or_else(|| err("problem list", format!("unknown problem code {c}")))?;
        out.push(Problem {
            kind,
            message: r.str()?,
        });
    }
    r.end()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_record_round_trips_and_rejects_damage() {
        let rec = NodeRecord {
            path: "a/b.md".into(),
            name: Some("Name".into()),
            description: None,
            note_type: NoteType::Feedback,
            created_s: Some(1),
            updated_s: None,
            ttl_days: Some(30),
            pin: true,
            tags: vec!["x".into(), "y".into()],
            excerpt: "body".into(),
        };
        let bytes = rec.encode();
        assert_eq!(NodeRecord::decode(&bytes).unwrap(), rec);
        assert!(NodeRecord::decode(&bytes[..bytes.len() - 1]).is_err());
        // The borrowed decode reads the same fields and refuses the same damage, tags included.
        let r = NodeRecordRef::decode(&bytes).unwrap();
        assert_eq!(
            (r.path, r.name, r.description, r.note_type, r.excerpt),
            ("a/b.md", Some("Name"), None, NoteType::Feedback, "body")
        );
        assert_eq!(
            (r.created_s, r.updated_s, r.ttl_days, r.pin),
            (Some(1), None, Some(30), true)
        );
        assert!(NodeRecordRef::decode(&bytes[..bytes.len() - 1]).is_err());
        let mut bad_tag = bytes.clone();
        let at = bytes.windows(5).position(|w| w == b"\x01\0\0\0x").unwrap() + 4;
        bad_tag[at] = 0xff;
        assert!(
            NodeRecordRef::decode(&bad_tag)
                .unwrap_err()
                .reason
                .contains("UTF-8")
        );
        // The scoring head: the three fields, whatever follows; damage within the head refused.
        assert_eq!(
            NodeRecordRef::decode_scoring(&bytes).unwrap(),
            (NoteType::Feedback, None, Some(30))
        );
        assert!(NodeRecordRef::decode_scoring(&bytes[..22]).is_err());
        let mut bad = bytes.clone();
        bad[0] = NODE_RECORD_VERSION + 1;
        assert!(
            NodeRecordRef::decode_scoring(&bad)
                .unwrap_err()
                .reason
                .contains("record version")
        );
        let mut bad = bytes.clone();
        bad[1] = 99;
        assert!(
            NodeRecord::decode(&bad)
                .unwrap_err()
                .reason
                .contains("type code 99")
        );
        assert!(
            NodeRecordRef::decode_scoring(&bad)
                .unwrap_err()
                .reason
                .contains("type code 99")
        );
        let mut long = bytes;
        long.push(0);
        assert!(
            NodeRecord::decode(&long)
                .unwrap_err()
                .reason
                .contains("trailing")
        );
    }

    #[test]
    fn edge_value_layout_matches_spec() {
        let e = EdgeValue {
            other: "b".into(),
            kind: EdgeKind::Supersedes,
            provenance: Provenance::Synthesized,
            confidence: 0.5,
            source_out_degree: 3,
        };
        // kind 4, provenance 3, 0.5f32 LE = 00 00 00 3f, degree 3 LE, then "b"
        assert_eq!(e.encode(), vec![4, 3, 0, 0, 0, 0x3f, 3, 0, 0, 0, b'b']);
        assert_eq!(EdgeValue::decode(&e.encode()).unwrap(), e);
        assert!(EdgeValue::decode(&[9, 1, 0, 0, 0, 0, 0, 0, 0, 0, b'b']).is_err());
        assert!(EdgeValue::decode(&[1, 1, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn edge_list_layout_matches_spec() {
        // The example of format-spec/store.md, "Edge list".
        let a = [1, 1, 0, 0, 0x80, 0x3f, 2, 0, 0, 0, b'b'];
        let b = [1, 1, 0, 0, 0x80, 0x3f, 2, 0, 0, 0, b'c'];
        let list = encode_edge_list(&[&a[..], &b[..]]).unwrap();
        let mut want = vec![2, 0, 0, 0, 11, 0];
        want.extend_from_slice(&a);
        want.extend_from_slice(&[11, 0]);
        want.extend_from_slice(&b);
        assert_eq!(list, want);
        assert_eq!(decode_edge_list(&list).unwrap(), vec![&a[..], &b[..]]);
        // Out of order, duplicated, empty, too short an entry: refused on both sides.
        assert!(encode_edge_list(&[&b[..], &a[..]]).is_err());
        assert!(encode_edge_list(&[&a[..], &a[..]]).is_err());
        assert!(encode_edge_list::<&[u8]>(&[]).is_err());
        assert!(encode_edge_list(&[&a[..10]]).is_err());
        let mut swapped = vec![2, 0, 0, 0, 11, 0];
        swapped.extend_from_slice(&b);
        swapped.extend_from_slice(&[11, 0]);
        swapped.extend_from_slice(&a);
        assert!(
            decode_edge_list(&swapped)
                .unwrap_err()
                .reason
                .contains("order")
        );
        assert!(decode_edge_list(&[0, 0, 0, 0]).is_err());
        assert!(decode_edge_list(&list[..list.len() - 1]).is_err());
        let mut trailing = list.clone();
        trailing.push(0);
        assert!(
            decode_edge_list(&trailing)
                .unwrap_err()
                .reason
                .contains("trailing")
        );
        // A count the bytes cannot hold is refused before anything is allocated for it.
        assert!(decode_edge_list(&[0xff, 0xff, 0xff, 0x00, 11, 0]).is_err());
    }

    #[test]
    fn list_builder_sorts_and_drops_duplicates() {
        let edge = |other| EdgeRef {
            other,
            kind: EdgeKind::References,
            provenance: Provenance::Frontmatter,
            confidence: 1.0,
            source_out_degree: 2,
        };
        let encoded = |id| {
            let mut v = Vec::new();
            edge(id).encode_into(&mut v);
            v
        };
        // The layout of `EdgeValue::encode`.
        assert_eq!(
            encoded("a"),
            EdgeValue::decode(&encoded("a")).unwrap().encode()
        );
        let mut b = EdgeListBuilder::default();
        for id in ["c", "b", "c", "a"] {
            b.push(edge(id));
        }
        let (list, n) = b.finish().unwrap().unwrap();
        assert_eq!(n, 3);
        let want = [encoded("a"), encoded("b"), encoded("c")];
        let want: Vec<&[u8]> = want.iter().map(Vec::as_slice).collect();
        assert_eq!(decode_edge_list(&list).unwrap(), want);
        // Cleared for the next list; an empty one gives no list.
        assert_eq!(b.finish().unwrap(), None);
    }

    #[test]
    fn change_log_layout_matches_spec() {
        // tag 0, one id, "a"; and tag 1 (everything) once over the limit.
        assert_eq!(
            encode_changes(&["a"], 4),
            vec![0, 1, 0, 0, 0, 1, 0, 0, 0, b'a']
        );
        assert_eq!(
            decode_changes(&encode_changes(&["a", "b/c"], 4)).unwrap(),
            Some(vec!["a".to_string(), "b/c".to_string()])
        );
        assert_eq!(encode_changes(&["a", "b"], 1), vec![1]);
        assert_eq!(decode_changes(&[1]).unwrap(), None);
        assert!(decode_changes(&[2]).is_err());
        assert!(decode_changes(&[1, 0]).is_err());
        assert!(decode_changes(&[0, 2, 0, 0, 0, 1, 0, 0, 0, b'a']).is_err());
    }

    #[test]
    fn manifest_and_problems_round_trip() {
        let f = FileEntry {
            size: 7,
            mtime_ns: -3,
            ctime_ns: 1_700_000_000_123_456_789,
            ino: u64::MAX - 1,
            hash: 42,
        };
        assert_eq!(FileEntry::decode(&f.encode()).unwrap(), f);
        // A v12 entry (24 bytes) is not read as a v13 one.
        assert!(FileEntry::decode(&f.encode()[..24]).is_err());
        let p = vec![Problem::new(ProblemKind::Conflict, "x")];
        assert_eq!(decode_problems(&encode_problems(&p)).unwrap(), p);
    }
}
