//! Reading a segment: map the file, verify magic, version and both checksums, then serve the doc
//! table, the term dictionary (fst) and postings. Nothing is read before the checksums pass: the
//! fst constructor does not verify its input, and corrupt input could panic it.

use super::*;
use crate::index::fields::FIELD_COUNT;
use memmap2::Mmap;
use std::path::Path;
use std::sync::Arc;

/// A byte range of a shared mmap (what the fst reads from).
#[derive(Clone)]
pub struct MmapSlice {
    map: Arc<Mmap>,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for MmapSlice {
    fn as_ref(&self) -> &[u8] {
        // Bounds were checked against the map's length when the slice was made.
        self.map.get(self.start..self.end).unwrap_or(&[])
    }
}

/// An open, verified segment.
pub struct Segment {
    map: Arc<Mmap>,
    fst: fst::Map<MmapSlice>,
    postings: std::ops::Range<usize>,
    ids: Vec<Box<str>>,
    field_lens: Vec<[u32; FIELD_COUNT]>,
    field_len_sums: [u64; FIELD_COUNT],
    body_crc: u32,
    /// Skip tables of long postings lists, built on first use.
    skips: std::sync::Mutex<SkipTables>,
}

/// Lists at least this long get a skip table when first searched by [`Segment::seekable_postings`].
pub const SKIP_MIN_POSTINGS: u64 = 1024;
/// One skip entry per this many postings: a seek decodes the doc numbers of at most this many
/// postings before its target, and a table costs one byte per posting.
const SKIP_EVERY: u64 = 16;
/// The most skip entries a segment keeps (16 MiB); past it the tables are dropped and built
/// again as lists are sought, so that a long-running server's memory stays bounded.
const MAX_CACHED_SKIP_ENTRIES: usize = 1 << 20;

/// Where a block of [`SKIP_EVERY`] postings starts: its first doc and the iterator state before
/// it. A list whose numbers do not fit gets no entries from there on (its seeks walk).
#[derive(Debug, Clone, Copy)]
pub struct SkipEntry {
    first_doc: u32,
    /// The doc number the block's first gap counts from.
    next_doc: u32,
    /// Where the block's first posting starts, in bytes from the list's start.
    at: u32,
    /// Postings left from the block's first on.
    left: u32,
}

impl SkipEntry {
    /// The entry of a block whose first posting is `first_doc`, with the iterator at byte `pos`
    /// of a list starting at byte `start`, at `next_doc`, `left` postings to go; `None` when a
    /// number does not fit.
    fn new(first_doc: u64, start: usize, pos: usize, next_doc: u64, left: u64) -> Option<Self> {
        Some(SkipEntry {
            first_doc: u32::try_from(first_doc).ok()?,
            next_doc: u32::try_from(next_doc).ok()?,
            at: u32::try_from(pos.checked_sub(start)?).ok()?,
            left: u32::try_from(left).ok()?,
        })
    }
}

/// A segment's skip tables, by postings offset, with the number of entries they hold.
#[derive(Default)]
pub(crate) struct SkipTables {
    by_list: rustc_hash::FxHashMap<u64, Arc<[SkipEntry]>>,
    entries: usize,
}

impl SkipTables {
    /// Keep `table` for the list at `off`, dropping every table first when the entries kept
    /// would pass `max_entries`.
    fn remember(&mut self, off: u64, table: Arc<[SkipEntry]>, max_entries: usize) {
        if self.entries + table.len() > max_entries {
            self.by_list.clear();
            self.entries = 0;
        }
        self.entries += table.len();
        if let Some(old) = self.by_list.insert(off, table) {
            self.entries -= old.len();
        }
    }
}

/// One decoded posting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Posting {
    pub doc: u32,
    pub tfs: [u16; FIELD_COUNT],
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// Why a segment file cannot be used. The caller reports it as a damaged index file, and the
/// lexical index is rebuilt from the notes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SegmentError {
    #[error("cannot open: {0}")]
    Open(#[source] std::io::Error),
    #[error("cannot map: {0}")]
    Map(#[source] std::io::Error),
    #[error("{len} bytes is too short for a segment")]
    TooShort { len: usize },
    #[error("bad magic: not a mnemon lexical segment")]
    Magic,
    /// Written for readers this build is not (a newer mnemon, or an older format).
    #[error(
        "format version {version} (needs a reader of version {min_reader}); this build reads \
         {MIN_READ_VERSION}..={VERSION}"
    )]
    Version { version: u16, min_reader: u16 },
    #[error("bad end magic: truncated or not a segment")]
    EndMagic,
    #[error("footer checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    FooterChecksum { stored: u32, computed: u32 },
    #[error("checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    Checksum { stored: u32, computed: u32 },
    /// A section the footer places (`offset`, `len`) outside the body.
    #[error("{section} section at offset {offset}, {len} bytes long, is outside the body")]
    Section {
        section: &'static str,
        offset: u64,
        len: u64,
    },
    #[error("{count} docs is over the limit of {MAX_DOCS}")]
    TooManyDocs { count: u64 },
    #[error("doc table truncated at doc {doc}")]
    DocTableTruncated { doc: usize },
    #[error("doc {doc}: id is not UTF-8")]
    IdNotUtf8 { doc: usize },
    #[error("doc table has {bytes} trailing bytes")]
    DocTableTrailing { bytes: usize },
    #[error("term dictionary: {0}")]
    Dictionary(#[source] fst::Error),
}

impl Segment {
    /// Open and verify the segment file at `path`. The error says what is wrong with it.
    pub fn open(path: &Path) -> Result<Segment, SegmentError> {
        let file = crate::fs::open_regular_read(path).map_err(SegmentError::Open)?;
        // SAFETY: segment files are immutable once renamed into place; writers never modify or
        // truncate them (a replaced segment is a new file), so the mapping does not change under us.
        let map = unsafe { Mmap::map(&file) }.map_err(SegmentError::Map)?;
        Segment::from_map(Arc::new(map))
    }

    fn from_map(map: Arc<Mmap>) -> Result<Segment, SegmentError> {
        let b: &[u8] = &map;
        if b.len() < HEADER_LEN + FOOTER_LEN {
            return Err(SegmentError::TooShort { len: b.len() });
        }
        if b[..MAGIC.len()] != MAGIC {
            return Err(SegmentError::Magic);
        }
        let version = u16_at(b, HEADER_VERSION_OFFSET);
        let min_reader = u16_at(b, HEADER_MIN_READER_OFFSET);
        if min_reader > VERSION || version < MIN_READ_VERSION {
            return Err(SegmentError::Version {
                version,
                min_reader,
            });
        }
        let fstart = b.len() - FOOTER_LEN;
        let footer = &b[fstart..];
        if footer[F_END_MAGIC..] != END_MAGIC {
            return Err(SegmentError::EndMagic);
        }
        let footer_crc = u32_at(footer, F_FOOTER_CRC);
        let computed = crc32fast::hash(&footer[..F_FOOTER_CRC]);
        if computed != footer_crc {
            return Err(SegmentError::FooterChecksum {
                stored: footer_crc,
                computed,
            });
        }
        let body_crc = u32_at(footer, F_BODY_CRC);
        let actual = crc32fast::hash(&b[..fstart]);
        if actual != body_crc {
            return Err(SegmentError::Checksum {
                stored: body_crc,
                computed: actual,
            });
        }
        let doc_count = u32_at(footer, F_DOC_COUNT);
        let section = |section: &'static str, off_at: usize, len_at: usize| {
            let (offset, len) = (u64_at(footer, off_at), u64_at(footer, len_at));
            let range = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(len).ok())
                .and_then(|(off, len)| Some(off..off.checked_add(len)?))
                .filter(|r| r.start >= HEADER_LEN && r.end <= fstart);
            range.ok_or(SegmentError::Section {
                section,
                offset,
                len,
            })
        };
        let docs = section("doc table", F_DOCS_OFF, F_DOCS_LEN)?;
        let postings = section("postings", F_POSTINGS_OFF, F_POSTINGS_LEN)?;
        let fst_range = section("term dictionary", F_FST_OFF, F_FST_LEN)?;
        let mut field_len_sums = [0u64; FIELD_COUNT];
        for (f, s) in field_len_sums.iter_mut().enumerate() {
            *s = u64_at(footer, F_FIELD_LEN_SUMS + 8 * f);
        }
        let doc_count = usize::try_from(doc_count)
            .ok()
            .filter(|&n| n <= MAX_DOCS)
            .ok_or(SegmentError::TooManyDocs {
                count: u64::from(doc_count),
            })?;
        let mut ids = Vec::with_capacity(doc_count);
        let mut field_lens = Vec::with_capacity(doc_count);
        let d = &b[docs.clone()];
        let mut pos = 0usize;
        for n in 0..doc_count {
            let bad = || SegmentError::DocTableTruncated { doc: n };
            let len = usize::from(u16::from_le_bytes(
                d.get(pos..pos + 2)
                    .ok_or_else(bad)?
                    .try_into()
                    .map_err(|_| bad())?,
            ));
            pos += 2;
            let id = std::str::from_utf8(d.get(pos..pos + len).ok_or_else(bad)?)
                .map_err(|_| SegmentError::IdNotUtf8 { doc: n })?;
            pos += len;
            let mut lens = [0u32; FIELD_COUNT];
            for l in lens.iter_mut() {
                let raw = d.get(pos..pos + 4).ok_or_else(bad)?;
                *l = u32_at(raw, 0);
                pos += 4;
            }
            ids.push(Box::from(id));
            field_lens.push(lens);
        }
        if pos != d.len() {
            return Err(SegmentError::DocTableTrailing {
                bytes: d.len() - pos,
            });
        }
        let slice = MmapSlice {
            map: map.clone(),
            start: fst_range.start,
            end: fst_range.end,
        };
        let fst = fst::Map::new(slice).map_err(SegmentError::Dictionary)?;
        Ok(Segment {
            map,
            fst,
            postings,
            ids,
            field_lens,
            field_len_sums,
            body_crc,
            skips: std::sync::Mutex::new(SkipTables::default()),
        })
    }

    /// Number of docs (deleted ones included).
    pub fn doc_count(&self) -> u32 {
        self.ids.len() as u32
    }
    /// The id of doc `doc`.
    pub fn id(&self, doc: u32) -> &str {
        self.ids.get(doc as usize).map(|s| &**s).unwrap_or("")
    }
    /// All ids in doc order.
    pub fn ids(&self) -> &[Box<str>] {
        &self.ids
    }
    /// Token counts per field of doc `doc`.
    pub fn field_lens(&self, doc: u32) -> [u32; FIELD_COUNT] {
        self.field_lens
            .get(doc as usize)
            .copied()
            .unwrap_or([0; FIELD_COUNT])
    }
    /// Hint that `field_lens(doc)` will be read soon (see `index::prefetch`).
    #[inline(always)]
    pub fn prefetch_field_lens(&self, doc: u32) {
        crate::prefetch::prefetch(&self.field_lens, doc as usize);
    }
    /// Sum of field lengths over all docs.
    pub fn field_len_sums(&self) -> [u64; FIELD_COUNT] {
        self.field_len_sums
    }
    /// The body checksum stored in the footer (the manifest cross-checks it).
    pub fn body_crc(&self) -> u32 {
        self.body_crc
    }
    /// The term dictionary.
    pub fn terms(&self) -> &fst::Map<MmapSlice> {
        &self.fst
    }

    /// Postings of `term`, if present.
    pub fn postings(&self, term: &[u8]) -> Option<PostingsIter<'_>> {
        self.postings_at(self.term_offset(term)?)
    }

    /// The dictionary value of `term` (its postings' offset), if the segment has it.
    pub fn term_offset(&self, term: &[u8]) -> Option<u64> {
        self.fst.get(term)
    }

    /// Documents (live or deleted) holding the term at dictionary value `off`.
    pub fn doc_freq_at(&self, off: u64) -> u64 {
        self.postings_at(off).map_or(0, |p| p.len())
    }

    /// Postings at a dictionary value (offset into the postings section).
    pub fn postings_at(&self, off: u64) -> Option<PostingsIter<'_>> {
        let buf = self.map.get(self.postings.clone())?;
        let mut pos = usize::try_from(off).ok()?;
        let count = get_varint(buf, &mut pos)?;
        Some(PostingsIter {
            buf,
            start: pos,
            pos,
            left: count,
            next_doc: 0,
            pending: None,
            skips: None,
            skip_at: 0,
        })
    }

    /// Postings at dictionary value `off` (see [`Segment::term_offset`]) for
    /// [`PostingsIter::seek`]: a long list carries its skip table (built once per segment and
    /// term, a pass that decodes no term frequencies), so a seek jumps to the block holding its
    /// target instead of walking every posting before it.
    pub fn seekable_postings_at(&self, off: u64) -> Option<PostingsIter<'_>> {
        let mut it = self.postings_at(off)?;
        if it.left < SKIP_MIN_POSTINGS {
            return Some(it);
        }
        let cached = self
            .skips
            .lock()
            .ok()
            .and_then(|m| m.by_list.get(&off).cloned());
        let table = match cached {
            Some(t) => t,
            None => {
                let t: Arc<[SkipEntry]> = skip_table(&it).into();
                if let Ok(mut m) = self.skips.lock() {
                    m.remember(off, t.clone(), MAX_CACHED_SKIP_ENTRIES);
                }
                t
            }
        };
        it.skips = Some(table);
        Some(it)
    }
}

/// The skip table of a fresh iterator's list (stops early on malformed bytes).
fn skip_table(it: &PostingsIter<'_>) -> Vec<SkipEntry> {
    let mut out = Vec::with_capacity((it.left / SKIP_EVERY + 1) as usize);
    let (buf, mut pos, mut next_doc, mut left) = (it.buf, it.pos, it.next_doc, it.left);
    let mut i = 0u64;
    while left > 0 {
        let before = (pos, next_doc, left);
        let Some(delta) = get_varint(buf, &mut pos) else {
            break;
        };
        let Some(doc) = next_doc.checked_add(delta) else {
            break;
        };
        if i.is_multiple_of(SKIP_EVERY) {
            let Some(entry) = SkipEntry::new(doc, it.start, before.0, before.1, before.2) else {
                return out;
            };
            out.push(entry);
        }
        let Some(&mask) = buf.get(pos) else { break };
        pos += 1;
        for f in 0..FIELD_COUNT {
            if mask & (1 << f) != 0 && skip_varint(buf, &mut pos).is_none() {
                return out;
            }
        }
        next_doc = doc + 1;
        left -= 1;
        i += 1;
    }
    out
}

/// Step over one varint without building its value.
#[inline]
fn skip_varint(buf: &[u8], pos: &mut usize) -> Option<()> {
    for _ in 0..10 {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if b & 0x80 == 0 {
            return Some(());
        }
    }
    None
}

/// Iterator over one term's postings. Stops early (never panics) on malformed bytes.
pub struct PostingsIter<'a> {
    buf: &'a [u8],
    /// Where the list's first posting starts in `buf` (skip entries count from it).
    start: usize,
    pos: usize,
    left: u64,
    next_doc: u64,
    /// A posting [`PostingsIter::seek`] decoded past its target, kept for the next seek.
    pending: Option<Posting>,
    /// Block starts of this list, when it is long (see [`Segment::seekable_postings`]).
    skips: Option<Arc<[SkipEntry]>>,
    /// Skip entries before this one start at or before an earlier seek target.
    skip_at: usize,
}

impl<'a> PostingsIter<'a> {
    /// The `count` postings encoded from the start of `buf` (a list's bytes after its count).
    pub fn new(buf: &'a [u8], count: u64) -> PostingsIter<'a> {
        PostingsIter {
            buf,
            start: 0,
            pos: 0,
            left: count,
            next_doc: 0,
            pending: None,
            skips: None,
            skip_at: 0,
        }
    }
}

impl PostingsIter<'_> {
    /// The posting of `doc` if the list holds it. Postings of smaller docs are passed over without
    /// decoding their term frequencies. Seek targets must increase; do not mix with `next()`.
    pub fn seek(&mut self, doc: u32) -> Option<Posting> {
        if let Some(p) = self.pending {
            if p.doc > doc {
                return None;
            }
            self.pending = None;
            if p.doc == doc {
                return Some(p);
            }
        }
        if let Some(sk) = &self.skips {
            // The last block starting at or before `doc`, if it lies ahead. Targets increase,
            // so the search gallops on from the last block found (most seeks of a query land in
            // the same or the next few blocks) before a binary search of the range it brackets.
            let (mut lo, mut hi, mut step) = (self.skip_at, self.skip_at, 1);
            while let Some(e) = sk.get(hi) {
                if e.first_doc > doc {
                    break;
                }
                lo = hi + 1;
                hi += step;
                step *= 2;
            }
            let hi = hi.min(sk.len());
            let i = lo + sk[lo..hi].partition_point(|e| e.first_doc <= doc);
            self.skip_at = i;
            if let Some(e) = i.checked_sub(1).and_then(|i| sk.get(i))
                && let block = self.start + e.at as usize
                && block > self.pos
            {
                self.pos = block;
                self.next_doc = u64::from(e.next_doc);
                self.left = u64::from(e.left);
            }
        }
        while self.left > 0 {
            let d = self
                .next_doc
                .checked_add(get_varint(self.buf, &mut self.pos)?)?;
            let mask = *self.buf.get(self.pos)?;
            self.pos += 1;
            self.left -= 1;
            self.next_doc = d + 1;
            if d < u64::from(doc) {
                for f in 0..FIELD_COUNT {
                    if mask & (1 << f) != 0 {
                        skip_varint(self.buf, &mut self.pos)?;
                    }
                }
                continue;
            }
            let mut tfs = [0u16; FIELD_COUNT];
            for (f, tf) in tfs.iter_mut().enumerate() {
                if mask & (1 << f) != 0 {
                    *tf = u16::try_from(get_varint(self.buf, &mut self.pos)?).unwrap_or(u16::MAX);
                }
            }
            let p = Posting {
                doc: u32::try_from(d).ok()?,
                tfs,
            };
            if p.doc == doc {
                return Some(p);
            }
            self.pending = Some(p);
            return None;
        }
        None
    }

    /// Number of postings not yet returned.
    pub fn len(&self) -> u64 {
        self.left
    }
    /// Whether no postings are left.
    pub fn is_empty(&self) -> bool {
        self.left == 0
    }
}

impl Iterator for PostingsIter<'_> {
    type Item = Posting;
    fn next(&mut self) -> Option<Posting> {
        if self.left == 0 {
            return None;
        }
        let delta = get_varint(self.buf, &mut self.pos)?;
        let doc = self.next_doc.checked_add(delta)?;
        let mask = *self.buf.get(self.pos)?;
        self.pos += 1;
        let mut tfs = [0u16; FIELD_COUNT];
        for (f, tf) in tfs.iter_mut().enumerate() {
            if mask & (1 << f) != 0 {
                *tf = u16::try_from(get_varint(self.buf, &mut self.pos)?).unwrap_or(u16::MAX);
            }
        }
        self.left -= 1;
        self.next_doc = doc + 1;
        Some(Posting {
            doc: u32::try_from(doc).ok()?,
            tfs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::fields::DocTerms;

    fn doc(id: &str, terms: &[(&str, [u16; 5])]) -> DocTerms {
        DocTerms {
            id: id.into(),
            field_lens: [1, 2, 3, 4, 5],
            terms: terms.iter().map(|(t, f)| (t.to_string(), *f)).collect(),
        }
    }

    fn write(dir: &Path, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.join("s.seg");
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn a_built_segment_reads_back_its_ids_field_lengths_and_postings() {
        let docs = vec![
            doc("a", &[("pool", [0, 1, 0, 0, 3]), ("size", [1, 0, 0, 0, 0])]),
            doc("b", &[("pool", [0, 0, 0, 0, 1])]),
        ];
        let bytes = build_segment(&docs).unwrap().to_vec();
        let tmp = tempfile::tempdir().unwrap();
        let seg = Segment::open(&write(tmp.path(), &bytes)).unwrap();
        assert_eq!(seg.doc_count(), 2);
        assert_eq!(seg.id(1), "b");
        assert_eq!(seg.field_lens(0), [1, 2, 3, 4, 5]);
        assert_eq!(seg.field_len_sums(), [2, 4, 6, 8, 10]);
        let p: Vec<_> = seg.postings(b"pool").unwrap().collect();
        assert_eq!(
            p,
            vec![
                Posting {
                    doc: 0,
                    tfs: [0, 1, 0, 0, 3]
                },
                Posting {
                    doc: 1,
                    tfs: [0, 0, 0, 0, 1]
                }
            ]
        );
        assert!(seg.postings(b"nope").is_none());
    }

    #[test]
    fn every_flipped_byte_is_caught() {
        let docs = vec![doc("a", &[("x", [1, 0, 0, 0, 0])])];
        let bytes = build_segment(&docs).unwrap().to_vec();
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert!(
                Segment::open(&write(tmp.path(), &bad)).is_err(),
                "flip at {i} accepted"
            );
        }
        for cut in [0, 10, bytes.len() - 1] {
            assert!(Segment::open(&write(tmp.path(), &bytes[..cut])).is_err());
        }
    }

    #[test]
    fn seek_with_and_without_skip_table_matches_a_linear_scan() {
        // "common" in 3000 docs with varying field counts (long list: gets a skip table),
        // "short" in every 7th doc (no table).
        let docs: Vec<DocTerms> = (0..3000u16)
            .map(|i| {
                let mut t = vec![("common", [i % 3, 0, i % 2, 0, 1 + i % 5])];
                if i % 7 == 0 {
                    t.push(("short", [0, 0, 0, 0, 2]));
                }
                doc(&format!("d{i:05}"), &t)
            })
            .collect();
        let bytes = build_segment(&docs).unwrap().to_vec();
        let tmp = tempfile::tempdir().unwrap();
        let seg = Segment::open(&write(tmp.path(), &bytes)).unwrap();
        for term in [&b"common"[..], b"short"] {
            let all: Vec<Posting> = seg.postings(term).unwrap().collect();
            for step in [1u32, 3, 15, 16, 17, 64, 65, 200, 2999] {
                let mut targets: Vec<u32> =
                    (0..3000).step_by(step as usize).chain([2999]).collect();
                targets.dedup();
                let mut it = seg
                    .seekable_postings_at(seg.term_offset(term).unwrap())
                    .unwrap();
                let got: Vec<Posting> = targets.iter().filter_map(|&d| it.seek(d)).collect();
                let want: Vec<Posting> = targets
                    .iter()
                    .filter_map(|&d| all.iter().find(|p| p.doc == d).copied())
                    .collect();
                assert_eq!(got, want, "term {term:?} step {step}");
            }
        }
        assert!(
            seg.skips.lock().unwrap().by_list.len() == 1,
            "only the long list has a table"
        );
    }

    /// A server that seeks into every long list of a large segment keeps at most the bound of
    /// skip entries: past it the tables go and are built again.
    #[test]
    fn skip_tables_past_their_bound_are_dropped_not_kept() {
        let entry = SkipEntry {
            first_doc: 0,
            next_doc: 0,
            at: 0,
            left: 1,
        };
        let table = |n: usize| -> Arc<[SkipEntry]> { vec![entry; n].into() };
        let mut tables = SkipTables::default();
        tables.remember(1, table(6), 10);
        tables.remember(2, table(4), 10);
        assert_eq!((tables.by_list.len(), tables.entries), (2, 10));
        tables.remember(3, table(1), 10);
        assert_eq!((tables.by_list.len(), tables.entries), (1, 1));
        assert!(tables.by_list.contains_key(&3));
        tables.remember(3, table(2), 10);
        assert_eq!((tables.by_list.len(), tables.entries), (1, 2));
    }
}
