//! Writing a segment: docs first, then terms in strictly increasing byte order with their
//! postings; `finish` lays out postings, the fst and the footer.

use super::*;
use crate::index::fields::{BatchDoc, DocTerms, FIELD_COUNT, TermBatch};
use crate::index::interner::Interner;

/// One posting as the writer takes it: doc number and per-field term counts.
pub type RawPosting = (u32, [u16; FIELD_COUNT]);

/// Builds one segment in memory.
pub struct SegmentWriter {
    docs: Vec<u8>,
    doc_count: u32,
    field_len_sums: [u64; FIELD_COUNT],
    postings: Vec<u8>,
    fst: fst::MapBuilder<Vec<u8>>,
    term_count: u32,
}

/// Writing failed (a term out of order, or a limit exceeded): a bug in the caller, never a
/// property of the notes. Each text ends with what to do: report it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    #[error("segment writer: more than {MAX_DOCS} docs{BUG}")]
    TooManyDocs,
    #[error("segment writer: id of {bytes} bytes is too long (at most {MAX_ID_BYTES}){BUG}")]
    IdTooLong { bytes: usize },
    /// A posting whose doc number is not above the previous one, or not a doc added.
    #[error("segment writer: posting for doc {doc} out of order or unknown (docs: {docs}){BUG}")]
    PostingOutOfOrder { doc: u32, docs: u32 },
    /// A posting that cannot be encoded, in `term`'s list (of note `note`, when known).
    #[error("segment writer: term {term:?}{}: {source}{BUG}", of_note(note.as_deref()))]
    Posting {
        term: String,
        note: Option<String>,
        source: PostingError,
    },
    /// The dictionary refused a term (not in strictly increasing byte order).
    #[error("segment writer: term order: {0}{BUG}")]
    TermOrder(#[source] fst::Error),
    #[error("segment writer: fst: {0}{BUG}")]
    Dictionary(#[source] fst::Error),
    /// A batch note whose postings end outside the batch's postings.
    #[error("segment writer: batch entries of {note} out of range{BUG}")]
    BatchRange { note: String },
    #[error("segment writer: {terms} terms, more than a segment numbers{BUG}")]
    TooManyTerms { terms: usize },
    #[error("segment writer: more than 4 GiB of distinct terms{BUG}")]
    TermBytes,
    /// A batch posting naming a term number the batch does not have.
    #[error("segment writer: unknown term number {local} in {note}{BUG}")]
    UnknownTermNumber { local: u32, note: String },
    /// The postings area written is not the length it was laid out with.
    #[error("segment writer: postings area of {written} bytes, laid out as {laid_out}{BUG}")]
    AreaLength { written: usize, laid_out: u64 },
}

/// Why one posting cannot be added to its term's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PostingError {
    #[error("listed twice in doc {doc}")]
    ListedTwice { doc: u32 },
    #[error("posting with all counts zero")]
    NoCounts,
}

/// What a [`WriteError`] asks of whoever sees it.
const BUG: &str = "; this is a bug in mnemon: please report it (with the command that failed)";

fn of_note(note: Option<&str>) -> String {
    note.map_or(String::new(), |n| format!(" of {n}"))
}

impl Default for SegmentWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl SegmentWriter {
    pub fn new() -> Self {
        SegmentWriter {
            docs: Vec::new(),
            doc_count: 0,
            field_len_sums: [0; FIELD_COUNT],
            postings: Vec::new(),
            fst: fst::MapBuilder::memory(),
            term_count: 0,
        }
    }

    /// Add a document; returns its doc number (0, 1, 2, ... in call order).
    pub fn add_doc(&mut self, id: &str, field_lens: [u32; FIELD_COUNT]) -> Result<u32, WriteError> {
        if self.doc_count as usize >= MAX_DOCS {
            return Err(WriteError::TooManyDocs);
        }
        let len = u16::try_from(id.len()).map_err(|_| WriteError::IdTooLong { bytes: id.len() })?;
        self.docs.extend_from_slice(&len.to_le_bytes());
        self.docs.extend_from_slice(id.as_bytes());
        for (f, l) in field_lens.iter().enumerate() {
            self.docs.extend_from_slice(&l.to_le_bytes());
            self.field_len_sums[f] += u64::from(*l);
        }
        let n = self.doc_count;
        self.doc_count += 1;
        Ok(n)
    }

    /// Add a term and its postings (doc numbers strictly increasing). Terms must come in strictly
    /// increasing byte order. Empty postings lists are skipped.
    pub fn add_term(&mut self, term: &[u8], postings: &[RawPosting]) -> Result<(), WriteError> {
        if postings.is_empty() {
            return Ok(());
        }
        let offset = self.postings.len() as u64;
        put_varint(&mut self.postings, postings.len() as u64);
        let mut prev: Option<u32> = None;
        for (doc, tfs) in postings {
            if *doc >= self.doc_count || prev.is_some_and(|p| p >= *doc) {
                return Err(WriteError::PostingOutOfOrder {
                    doc: *doc,
                    docs: self.doc_count,
                });
            }
            let delta = doc - prev.map_or(0, |p| p + 1);
            prev = Some(*doc);
            put_posting(&mut self.postings, delta, tfs).map_err(|source| WriteError::Posting {
                term: String::from_utf8_lossy(term).into_owned(),
                note: None,
                source,
            })?;
        }
        self.index_term(term, offset)
    }

    /// Name the postings at `offset` in the dictionary.
    fn index_term(&mut self, term: &[u8], offset: u64) -> Result<(), WriteError> {
        self.fst
            .insert(term, offset)
            .map_err(WriteError::TermOrder)?;
        self.term_count += 1;
        Ok(())
    }

    /// Lay out the segment bytes (format-spec/lexical.md), in the parts they are made of.
    pub fn finish(mut self) -> Result<SegmentBytes, WriteError> {
        let fst = std::mem::replace(&mut self.fst, fst::MapBuilder::memory());
        let fst_bytes = fst.into_inner().map_err(WriteError::Dictionary)?;
        let postings = std::mem::take(&mut self.postings);
        self.finish_with(postings, fst_bytes, self.term_count)
    }

    /// [`SegmentWriter::finish`] with the postings area, the dictionary (naming `term_count`
    /// terms in it) and the term count built elsewhere; this writer gives the documents.
    fn finish_with(
        &self,
        postings: Vec<u8>,
        fst_bytes: Vec<u8>,
        term_count: u32,
    ) -> Result<SegmentBytes, WriteError> {
        let mut head = Vec::with_capacity(HEADER_LEN + self.docs.len());
        head.extend_from_slice(&MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&MIN_READ_VERSION.to_le_bytes());
        head.extend_from_slice(&0u32.to_le_bytes());
        debug_assert_eq!(head.len(), HEADER_LEN);
        let docs_off = head.len() as u64;
        head.extend_from_slice(&self.docs);
        let postings_off = head.len() as u64;
        let fst_off = postings_off + postings.len() as u64;
        let mut body = crc32fast::Hasher::new();
        for part in [&head, &postings, &fst_bytes] {
            body.update(part);
        }
        let body_crc = body.finalize();

        let mut footer = Vec::with_capacity(FOOTER_LEN);
        footer.extend_from_slice(&self.doc_count.to_le_bytes());
        footer.extend_from_slice(&term_count.to_le_bytes());
        for v in [
            docs_off,
            self.docs.len() as u64,
            postings_off,
            postings.len() as u64,
            fst_off,
            fst_bytes.len() as u64,
        ] {
            footer.extend_from_slice(&v.to_le_bytes());
        }
        for s in self.field_len_sums {
            footer.extend_from_slice(&s.to_le_bytes());
        }
        footer.extend_from_slice(&body_crc.to_le_bytes());
        debug_assert_eq!(footer.len(), F_FOOTER_CRC);
        let footer_crc = crc32fast::hash(&footer);
        footer.extend_from_slice(&footer_crc.to_le_bytes());
        footer.extend_from_slice(&END_MAGIC);
        debug_assert_eq!(footer.len(), FOOTER_LEN);
        Ok(SegmentBytes {
            parts: [head, postings, fst_bytes, footer],
        })
    }
}

/// A finished segment's bytes, kept in the parts they were built in (header and docs, postings,
/// fst, footer) and written to the file one after the other: a cold build's postings, the bulk
/// of a segment, are never copied into one buffer (the copy would touch as many fresh pages
/// again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentBytes {
    parts: [Vec<u8>; 4],
}

impl SegmentBytes {
    /// The parts, in file order.
    pub fn parts(&self) -> [&[u8]; 4] {
        [
            &self.parts[0],
            &self.parts[1],
            &self.parts[2],
            &self.parts[3],
        ]
    }

    /// The bytes in one buffer (as the file holds them).
    pub fn to_vec(&self) -> Vec<u8> {
        self.parts.concat()
    }

    /// The file's length.
    pub fn len(&self) -> usize {
        self.parts.iter().map(Vec::len).sum()
    }

    /// Never true for a finished segment (it has a header and a footer).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Append one posting (format-spec/lexical.md): the doc number's distance from the smallest it
/// could have been, the mask of fields with counts, then each non-zero count.
fn put_posting(
    out: &mut Vec<u8>,
    delta: u32,
    tfs: &[u16; FIELD_COUNT],
) -> Result<(), PostingError> {
    let mut mask = 0u8;
    for (f, tf) in tfs.iter().enumerate() {
        if *tf > 0 {
            mask |= 1 << f;
        }
    }
    if mask == 0 {
        return Err(PostingError::NoCounts);
    }
    put_varint(out, u64::from(delta));
    out.push(mask);
    for tf in tfs.iter().filter(|tf| **tf > 0) {
        put_varint(out, u64::from(*tf));
    }
    Ok(())
}

/// Build a segment from documents (doc numbers follow slice order).
pub fn build_segment<D: std::borrow::Borrow<DocTerms>>(
    docs: &[D],
) -> Result<SegmentBytes, WriteError> {
    let mut b = SegmentBuilder::new();
    for d in docs {
        b.add_doc(d.borrow())?;
    }
    b.finish()
}

/// Builds one segment from documents handed over a batch at a time, in doc-number order. Each
/// document's terms are folded into per-term postings already in the segment's byte encoding, so
/// a batch's term tables can be dropped as soon as it is added: a cold build never holds every
/// note's term table, and ends with one segment instead of one per batch and a merge.
/// The bytes equal those of [`SegmentWriter`] given the same documents and postings.
///
/// The terms are split into shards by a hash of the term, each with its own dictionary and
/// lists: a batch is folded on as many cores as there are shards (each shard reads the whole
/// batch and keeps its own terms' postings), and the shards' terms are sorted together when the
/// segment is laid out. The bytes do not depend on the number of shards.
pub struct SegmentBuilder {
    w: SegmentWriter,
    shards: Vec<Shard>,
}

/// Most shards of a [`SegmentBuilder`] (one per core, up to this).
const MAX_SHARDS: usize = 8;

/// The terms of one shard of a [`SegmentBuilder`] and their postings so far.
#[derive(Default)]
struct Shard {
    /// Term -> index into `postings`.
    ids: Interner,
    postings: Vec<TermPostings>,
}

/// One term's postings so far, encoded as `SegmentWriter::add_term` lays them out (without the
/// leading count, known only at the end).
#[derive(Default)]
struct TermPostings {
    count: u32,
    /// The smallest doc number the next posting may have (the last one's + 1).
    next_doc: u32,
    bytes: Vec<u8>,
}

/// The shard of `term` among `shards`.
fn shard_of(term: &str, shards: usize) -> usize {
    use std::hash::BuildHasher;
    if shards <= 1 {
        return 0;
    }
    // The hash's high bits: FxHash mixes into them.
    ((rustc_hash::FxBuildHasher.hash_one(term) >> 32) % shards as u64) as usize
}

impl Default for SegmentBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SegmentBuilder {
    /// A builder with a shard per core of the current thread pool.
    pub fn new() -> Self {
        Self::with_shards(rayon::current_num_threads())
    }

    /// A builder with `shards` shards (clamped to 1..=8).
    pub fn with_shards(shards: usize) -> Self {
        SegmentBuilder {
            w: SegmentWriter::new(),
            shards: (0..shards.clamp(1, MAX_SHARDS))
                .map(|_| Shard::default())
                .collect(),
        }
    }

    /// Documents added so far.
    pub fn doc_count(&self) -> u32 {
        self.w.doc_count
    }

    /// Add a document (the next doc number) with its terms.
    pub fn add_doc(&mut self, d: &DocTerms) -> Result<(), WriteError> {
        let doc = self.w.add_doc(&d.id, d.field_lens)?;
        let n = self.shards.len();
        for (term, tfs) in &d.terms {
            let shard = &mut self.shards[shard_of(term, n)];
            let t = shard.term_number(term)?;
            shard
                .push_posting(t, doc, tfs)
                .map_err(|source| WriteError::Posting {
                    term: term.clone(),
                    note: Some(d.id.clone()),
                    source,
                })?;
        }
        Ok(())
    }

    /// Add a batch's notes (the next doc numbers, in batch order): each distinct term of the
    /// batch is looked up once, each posting is an array index. The shards fold the batch on
    /// every core.
    pub fn add_batch(&mut self, batch: TermBatch<'_>) -> Result<(), WriteError> {
        use rayon::prelude::*;
        let TermBatch {
            terms,
            docs,
            postings,
        } = batch;
        let first = self.w.doc_count;
        let mut start = 0;
        for d in &docs {
            if start > d.end || d.end > postings.len() {
                return Err(WriteError::BatchRange {
                    note: d.id.to_string(),
                });
            }
            self.w.add_doc(d.id, d.field_lens)?;
            start = d.end;
        }
        let n = self.shards.len();
        let shard_of_term: Vec<u8> = terms
            .iter()
            .map(|(_, term)| shard_of(term, n) as u8)
            .collect();
        let fold = |(s, shard): (usize, &mut Shard)| {
            shard.add_batch(s as u8, &terms, &shard_of_term, &docs, &postings, first)
        };
        if n == 1 {
            return self.shards.iter_mut().enumerate().try_for_each(fold);
        }
        self.shards.par_iter_mut().enumerate().try_for_each(fold)
    }

    /// Lay out the segment: terms in byte order, each with its postings (format-spec/lexical.md).
    /// Every term's offset is known from the lengths alone, so the dictionary (the fst) and the
    /// postings area are written at once on two threads; the bytes are those of a term-by-term
    /// [`SegmentWriter`].
    pub fn finish(self) -> Result<SegmentBytes, WriteError> {
        self.lay_out()?.finish()
    }

    /// The segment with its terms in byte order and their postings placed, but its dictionary
    /// and postings area not yet written: what a cold build reads token co-occurrence from
    /// while the dictionary is built beside it ([`LaidOut::postings`]).
    pub fn lay_out(self) -> Result<LaidOut, WriteError> {
        let SegmentBuilder { w, shards } = self;
        debug_assert_eq!(w.term_count, 0, "the builder adds terms only when laid out");
        debug_assert!(
            w.postings.is_empty(),
            "the builder writes no postings area before"
        );
        let terms: usize = shards.iter().map(|s| s.ids.len()).sum();
        u32::try_from(terms).map_err(|_| WriteError::TooManyTerms { terms })?;
        let mut order = Vec::with_capacity(terms);
        let mut end = 0u64;
        for (shard, t) in sorted_terms(&shards) {
            order.push(Placed {
                shard,
                t,
                offset: end,
            });
            let p = &shards[shard as usize].postings[t as usize];
            end += (varint_len(u64::from(p.count)) + p.bytes.len()) as u64;
        }
        Ok(LaidOut {
            w,
            shards,
            order,
            area_len: end,
        })
    }
}

impl Shard {
    /// Fold the terms of `batch` that are this shard's (`shard_of_term[local] == me`) into it;
    /// the batch's notes are docs `first`, `first + 1`, ... (checked in range by the caller).
    fn add_batch(
        &mut self,
        me: u8,
        terms: &Interner,
        shard_of_term: &[u8],
        docs: &[BatchDoc<'_>],
        postings: &[(u32, [u16; FIELD_COUNT])],
        first: u32,
    ) -> Result<(), WriteError> {
        let mut mine = vec![NOT_MINE; terms.len()];
        for (local, term) in terms.iter() {
            if shard_of_term[local as usize] == me {
                mine[local as usize] = self.term_number(term)?;
            }
        }
        let mut start = 0;
        for (doc, d) in (first..).zip(docs) {
            for (local, tfs) in &postings[start..d.end] {
                let Some(&t) = mine.get(*local as usize) else {
                    return Err(WriteError::UnknownTermNumber {
                        local: *local,
                        note: d.id.to_string(),
                    });
                };
                if t == NOT_MINE {
                    continue;
                }
                self.push_posting(t, doc, tfs)
                    .map_err(|source| WriteError::Posting {
                        term: terms.get(*local).to_string(),
                        note: Some(d.id.to_string()),
                        source,
                    })?;
            }
            start = d.end;
        }
        Ok(())
    }

    /// The number of `term`'s postings list (a new, empty one if the term is new).
    fn term_number(&mut self, term: &str) -> Result<u32, WriteError> {
        let t = self
            .ids
            .intern(term)
            .filter(|&t| t != NOT_MINE)
            .ok_or(WriteError::TermBytes)?;
        if t as usize == self.postings.len() {
            self.postings.push(TermPostings::default());
        }
        Ok(t)
    }

    /// Append `doc`'s posting to term `t`'s list, encoded as `SegmentWriter::add_term` would.
    fn push_posting(
        &mut self,
        t: u32,
        doc: u32,
        tfs: &[u16; FIELD_COUNT],
    ) -> Result<(), PostingError> {
        let p = &mut self.postings[t as usize];
        if doc < p.next_doc {
            return Err(PostingError::ListedTwice { doc });
        }
        put_posting(&mut p.bytes, doc - p.next_doc, tfs)?;
        p.next_doc = doc + 1;
        p.count += 1;
        Ok(())
    }
}

/// A batch term that is another shard's (no term number of a shard is this).
const NOT_MINE: u32 = u32::MAX;

/// A term of a laid-out segment: its shard, its number there, its postings' offset.
#[derive(Clone, Copy)]
struct Placed {
    shard: u32,
    t: u32,
    offset: u64,
}

/// A segment whose terms are in byte order and whose postings are placed (each term's offset
/// in the postings area known), before its dictionary and postings area are written
/// ([`SegmentBuilder::lay_out`]). Its terms and postings read as the finished segment's do.
pub struct LaidOut {
    w: SegmentWriter,
    /// The builder's shards: terms and their postings (encoded, without their count).
    shards: Vec<Shard>,
    /// Every term, in byte order.
    order: Vec<Placed>,
    area_len: u64,
}

impl LaidOut {
    /// Number of terms.
    pub fn term_count(&self) -> usize {
        self.order.len()
    }

    /// Documents in the segment.
    pub fn doc_count(&self) -> u32 {
        self.w.doc_count
    }

    /// Term `i` in byte order.
    pub fn term(&self, i: usize) -> &str {
        self.term_of(self.order[i])
    }

    fn term_of(&self, p: Placed) -> &str {
        self.shards[p.shard as usize].ids.get(p.t)
    }

    fn postings_of(&self, p: Placed) -> &TermPostings {
        &self.shards[p.shard as usize].postings[p.t as usize]
    }

    /// The postings of term `i` in byte order (the finished segment's at that term's offset).
    pub fn postings(&self, i: usize) -> Option<PostingsIter<'_>> {
        let p = self.postings_of(*self.order.get(i)?);
        Some(PostingsIter::new(&p.bytes, u64::from(p.count)))
    }

    /// The first term (in byte order) at or after `key`: `term_count()` when none is.
    pub fn first_at_or_after(&self, key: &[u8]) -> usize {
        self.order
            .partition_point(|&p| self.term_of(p).as_bytes() < key)
    }

    /// Build the dictionary and the postings area (on two threads) and lay the segment out:
    /// the bytes of a term-by-term [`SegmentWriter`]. The terms and postings can be read
    /// meanwhile (a cold build's synthesis reads them beside it).
    pub fn finish(&self) -> Result<SegmentBytes, WriteError> {
        let (fst, area) = rayon::join(|| self.dictionary(), || self.postings_area());
        let fst = fst?;
        if area.len() as u64 != self.area_len {
            return Err(WriteError::AreaLength {
                written: area.len(),
                laid_out: self.area_len,
            });
        }
        // `lay_out` checked that the count fits.
        self.w.finish_with(area, fst, self.order.len() as u32)
    }

    /// The dictionary: each term and its postings' offset.
    fn dictionary(&self) -> Result<Vec<u8>, WriteError> {
        let mut fst = fst::MapBuilder::memory();
        for &p in &self.order {
            fst.insert(self.term_of(p).as_bytes(), p.offset)
                .map_err(WriteError::TermOrder)?;
        }
        fst.into_inner().map_err(WriteError::Dictionary)
    }

    /// The postings area: each term's count and postings, in term order.
    fn postings_area(&self) -> Vec<u8> {
        let mut area = Vec::with_capacity(self.area_len as usize);
        for &placed in &self.order {
            let p = self.postings_of(placed);
            put_varint(&mut area, u64::from(p.count));
            area.extend_from_slice(&p.bytes);
        }
        area
    }
}

/// Every shard's terms, as (shard, number), in byte order. Sorted by their first 16 bytes as
/// one integer (big-endian, zero-padded: a shorter string sorts first, as terms hold no NUL
/// byte), so most comparisons are one integer comparison, not a `memcmp` behind two pointers;
/// equal keys (terms sharing their first 16 bytes) fall back to comparing the whole terms.
fn sorted_terms(shards: &[Shard]) -> Vec<(u32, u32)> {
    use rayon::prelude::*;
    let term = |shard: u32, t: u32| shards[shard as usize].ids.get(t);
    let mut keyed: Vec<(u128, u32, u32)> =
        Vec::with_capacity(shards.iter().map(|s| s.ids.len()).sum());
    for (shard, s) in (0u32..).zip(shards) {
        keyed.extend(s.ids.iter().map(|(t, w)| (sort_key(w), shard, t)));
    }
    keyed.par_sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| term(a.1, a.2).cmp(term(b.1, b.2)))
    });
    keyed.into_iter().map(|(_, shard, t)| (shard, t)).collect()
}

/// The first 16 bytes of `s` as a big-endian integer, zero-padded: ordered as the bytes are.
fn sort_key(s: &str) -> u128 {
    let mut head = [0u8; 16];
    let n = s.len().min(16);
    head[..n].copy_from_slice(&s.as_bytes()[..n]);
    u128::from_be_bytes(head)
}

/// Bytes of `v` as an unsigned LEB128 ([`put_varint`]).
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_terms_are_in_byte_order_when_heads_tie_or_differ_in_length() {
        let words = [
            "pool",
            "po",
            "p",
            "poolside",
            "0pool",
            "zz",
            "池",
            "ab",
            "aba",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "abcdefghijklmnopqb",
            "abcdefghijklmnopqa",
            "abcdefghijklmnoo",
            "abcdefghijklmnoz",
            "é",
            "e",
            "ez",
            "~",
        ];
        // Spread over three shards, as a builder's terms are: the order is across shards.
        let mut shards: Vec<Shard> = (0..3).map(|_| Shard::default()).collect();
        for (i, w) in words.iter().enumerate() {
            shards[i % 3].ids.intern(w).unwrap();
        }
        let got: Vec<&str> = sorted_terms(&shards)
            .into_iter()
            .map(|(shard, t)| shards[shard as usize].ids.get(t))
            .collect();
        let mut want: Vec<&str> = words.to_vec();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn varint_len_is_the_length_put_varint_writes() {
        let mut edges = vec![0u64, 1, u64::MAX];
        for bits in 1..64 {
            edges.extend([(1u64 << bits) - 1, 1u64 << bits, (1u64 << bits) + 1]);
        }
        for v in edges {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(varint_len(v), out.len(), "{v}");
        }
    }
    use std::collections::BTreeMap;

    fn doc(id: &str, terms: &[(&str, u16)]) -> DocTerms {
        let mut terms: Vec<(String, [u16; FIELD_COUNT])> = terms
            .iter()
            .map(|(t, n)| (t.to_string(), [0, 0, *n, 0, 1]))
            .collect();
        terms.sort();
        DocTerms {
            id: id.into(),
            field_lens: [1, 2, 3, 4, 5],
            terms,
        }
    }

    /// The writer fed term by term from postings gathered the plain way: what the builder
    /// must equal byte for byte.
    fn reference(docs: &[DocTerms]) -> SegmentBytes {
        let mut w = SegmentWriter::new();
        let mut lists: BTreeMap<&str, Vec<RawPosting>> = BTreeMap::new();
        for d in docs {
            let n = w.add_doc(&d.id, d.field_lens).unwrap();
            for (t, tfs) in &d.terms {
                lists.entry(t).or_default().push((n, *tfs));
            }
        }
        for (t, l) in lists {
            w.add_term(t.as_bytes(), &l).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn builder_fed_in_batches_gives_the_bytes_of_the_writer_fed_term_by_term() {
        let words = ["pool", "size", "db", "retry", "zeta", "alpha", "池", "beta"];
        let docs: Vec<DocTerms> = (0..300)
            .map(|i| {
                let terms: Vec<(&str, u16)> = words
                    .iter()
                    .enumerate()
                    .filter(|(w, _)| (i * 7 + w * 3) % (w + 2) == 0)
                    .map(|(w, t)| (*t, (1 + (i + w) % 300) as u16))
                    .collect();
                doc(&format!("note-{i:04}"), &terms)
            })
            .collect();
        let want = reference(&docs);
        for shards in [1, 2, 3, 8] {
            let mut b = SegmentBuilder::with_shards(shards);
            for batch in docs.chunks(64) {
                for d in batch {
                    b.add_doc(d).unwrap();
                }
            }
            assert_eq!(b.doc_count(), 300);
            assert_eq!(b.finish().unwrap(), want, "{shards} shards");
        }
        assert_eq!(build_segment(&docs).unwrap(), want);
    }

    #[test]
    fn batches_folded_in_any_number_of_shards_give_the_bytes_of_single_docs() {
        use crate::index::tokenize::Tokenizer;
        use crate::notes::parse_note;
        let tok = Tokenizer::new();
        let words = [
            "pool", "sizing", "retry", "db", "池子", "zeta", "alpha", "x9", "it's",
        ];
        let notes: Vec<_> = (0..200)
            .map(|i| {
                let body: Vec<&str> = (0..(i % 13 + 1))
                    .map(|k| words[(i * 7 + k * 3) % words.len()])
                    .collect();
                let text = format!(
                    "---\nname: note {i}\ntags: [{}]\n---\n{}\n",
                    words[i % words.len()],
                    body.join(" ")
                );
                parse_note(&format!("n-{i:03}"), text.as_bytes())
            })
            .collect();
        let refs: Vec<&crate::notes::ParsedNote> = notes.iter().collect();
        let docs: Vec<DocTerms> = notes.iter().map(|n| DocTerms::from_note(&tok, n)).collect();
        let want = build_segment(&docs).unwrap();
        for shards in [1, 2, 3, 8] {
            let mut b = SegmentBuilder::with_shards(shards);
            for chunk in refs.chunks(37) {
                b.add_batch(TermBatch::from_notes(&tok, chunk).unwrap())
                    .unwrap();
            }
            assert_eq!(b.finish().unwrap(), want, "{shards} shards");
        }
    }

    #[test]
    fn builder_refuses_a_term_listed_twice_and_a_posting_with_no_counts() {
        let mut b = SegmentBuilder::new();
        let mut d = doc("a", &[("x", 1)]);
        d.terms.push(d.terms[0].clone());
        let e = b.add_doc(&d).unwrap_err();
        assert!(
            matches!(&e, WriteError::Posting { term, note: Some(note), source: PostingError::ListedTwice { doc: 0 } } if term == "x" && note == "a"),
            "{e}"
        );
        assert!(e.to_string().contains("twice"), "{e}");
        let mut b = SegmentBuilder::new();
        let mut d = doc("a", &[("x", 1)]);
        d.terms[0].1 = [0; FIELD_COUNT];
        let e = b.add_doc(&d).unwrap_err();
        assert!(
            matches!(
                e,
                WriteError::Posting {
                    source: PostingError::NoCounts,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("zero"), "{e}");
    }
}
