//! Writing a segment: docs first, then terms in strictly increasing byte order with their
//! postings; `finish` lays out postings, the fst and the footer.

use super::*;
use crate::index::fields::{DocTerms, FIELD_COUNT};
use rustc_hash::FxHashMap;

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

/// Writing failed (a term out of order, or a limit exceeded): a bug in the caller.
#[derive(Debug, thiserror::Error)]
#[error("segment writer: {0}")]
pub struct WriteError(pub String);

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
            return Err(WriteError(format!("more than {MAX_DOCS} docs")));
        }
        let len = u16::try_from(id.len())
            .map_err(|_| WriteError(format!("id of {} bytes is too long", id.len())))?;
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
                return Err(WriteError(format!(
                    "posting for doc {doc} out of order or unknown (docs: {})",
                    self.doc_count
                )));
            }
            let delta = doc - prev.map_or(0, |p| p + 1);
            prev = Some(*doc);
            put_varint(&mut self.postings, u64::from(delta));
            let mut mask = 0u8;
            for (f, tf) in tfs.iter().enumerate() {
                if *tf > 0 {
                    mask |= 1 << f;
                }
            }
            if mask == 0 {
                return Err(WriteError("posting with all counts zero".into()));
            }
            self.postings.push(mask);
            for tf in tfs.iter().filter(|tf| **tf > 0) {
                put_varint(&mut self.postings, u64::from(*tf));
            }
        }
        self.fst
            .insert(term, offset)
            .map_err(|e| WriteError(format!("term order: {e}")))?;
        self.term_count += 1;
        Ok(())
    }

    /// Lay out the segment bytes (format-spec/lexical.md).
    pub fn finish(self) -> Result<Vec<u8>, WriteError> {
        let fst_bytes = self
            .fst
            .into_inner()
            .map_err(|e| WriteError(format!("fst: {e}")))?;
        let mut out = Vec::with_capacity(
            HEADER_LEN + self.docs.len() + self.postings.len() + fst_bytes.len() + FOOTER_LEN,
        );
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&MIN_READ_VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        debug_assert_eq!(out.len(), HEADER_LEN);
        let docs_off = out.len() as u64;
        out.extend_from_slice(&self.docs);
        let postings_off = out.len() as u64;
        out.extend_from_slice(&self.postings);
        let fst_off = out.len() as u64;
        out.extend_from_slice(&fst_bytes);
        let body_crc = crc32fast::hash(&out);

        let mut footer = Vec::with_capacity(FOOTER_LEN);
        footer.extend_from_slice(&self.doc_count.to_le_bytes());
        footer.extend_from_slice(&self.term_count.to_le_bytes());
        for v in [
            docs_off,
            self.docs.len() as u64,
            postings_off,
            self.postings.len() as u64,
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
        out.extend_from_slice(&footer);
        Ok(out)
    }
}

/// Build a segment from documents (doc numbers follow slice order).
pub fn build_segment<D: std::borrow::Borrow<DocTerms>>(docs: &[D]) -> Result<Vec<u8>, WriteError> {
    let mut w = SegmentWriter::new();
    let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
    let mut lists: Vec<Vec<RawPosting>> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for d in docs {
        let d: &DocTerms = d.borrow();
        let doc = w.add_doc(&d.id, d.field_lens)?;
        for (term, tfs) in &d.terms {
            let t = *ids.entry(term.as_str()).or_insert_with(|| {
                names.push(term.as_str());
                lists.push(Vec::new());
                (names.len() - 1) as u32
            });
            lists[t as usize].push((doc, *tfs));
        }
    }
    let mut order: Vec<u32> = (0..names.len() as u32).collect();
    order.sort_unstable_by(|a, b| names[*a as usize].cmp(names[*b as usize]));
    for t in order {
        w.add_term(names[t as usize].as_bytes(), &lists[t as usize])?;
    }
    w.finish()
}
