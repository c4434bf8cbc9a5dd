//! Synthesized edges, computed at index time for each changed note: slug-prefix clusters
//! (`deploy-canary` ~ `deploy-rollback`), TF-IDF token similarity found through the inverted
//! index (no O(n^2) pass: only notes sharing a note's most distinctive terms are candidates), and
//! `derived_from` from project notes that link user notes.

use crate::index::LexicalIndex;
use crate::index::fields::{DocTerms, FIELD_COUNT};
use crate::index::segment::{LaidOut, PostingsIter, Segment};
use crate::notes::{EdgeKind, NoteType, Provenance};
use crate::ranking;
use crate::store::EdgeValue;
use fst::{IntoStreamer, Streamer};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// The slug-cluster key of an id: its folder plus its first `-`-separated word and the `-`
/// (`runbooks/deploy-rollback` -> `runbooks/deploy-`), or `None` for one-word slugs.
pub fn slug_prefix(id: &str) -> Option<String> {
    let (folder, last) = match id.rfind('/') {
        Some(i) => (&id[..=i], &id[i + 1..]),
        None => ("", id),
    };
    let words: Vec<&str> = last.split('-').collect();
    if words.len() <= ranking::SLUG_PREFIX_WORDS || words[0].is_empty() {
        return None;
    }
    Some(format!(
        "{folder}{}-",
        words[..ranking::SLUG_PREFIX_WORDS].join("-")
    ))
}

/// Slug co-occurrence edges of `id` given its cluster (ids sharing its prefix, itself included).
/// Clusters larger than `MAX_SLUG_CLUSTER` are too generic and give nothing.
pub fn slug_edges(id: &str, cluster: &[String]) -> Vec<EdgeValue> {
    if cluster.len() < 2 || cluster.len() > ranking::MAX_SLUG_CLUSTER {
        return Vec::new();
    }
    let confidence = 1.0 / (cluster.len() - 1) as f32;
    cluster
        .iter()
        .filter(|o| o.as_str() != id)
        .map(|o| EdgeValue {
            other: o.clone(),
            kind: EdgeKind::CoOccursSlug,
            provenance: Provenance::Synthesized,
            confidence,
            source_out_degree: 0,
        })
        .collect()
}

/// Can `term` be a probe term? Single characters (a CJK char, a letter) are too common a link,
/// and a name mark is no word of the text, nor a joined identifier (its parts are).
pub fn is_probe_term(term: &str) -> bool {
    term.chars().nth(1).is_some()
        && !crate::index::fields::is_name_mark(term)
        && !crate::index::joined::is_joined_term(term)
}

/// The idf of a term in `df` notes, or `None` for a term too rare (one note) or too common to
/// probe (in more than `max_df` notes: [`probe_max_df`]). It is taken against a fixed number of
/// notes ([`ranking::CO_OCCURRENCE_REFERENCE_NOTES`]), not the corpus size: a note's
/// co-occurrence edges then depend only on the notes that share its terms (and, in a memory
/// small enough that `max_df` follows its size, on that size), so an update recomputes those
/// notes' edges and no others, and ends where a clean build of the same notes ends.
fn probe_idf(df: usize, max_df: usize) -> Option<f32> {
    (2..=max_df).contains(&df).then(|| {
        (ranking::CO_OCCURRENCE_REFERENCE_NOTES / df as f32)
            .ln()
            .max(0.0)
    })
}

/// Whether `term`, held by `df` live notes, is a term a note probes for co-occurrence with
/// (when it is among the note's heaviest).
pub fn can_probe(term: &str, df: u64, max_df: usize) -> bool {
    is_probe_term(term) && usize::try_from(df).is_ok_and(|df| probe_idf(df, max_df).is_some())
}

/// The most notes a probe term may be in, in an index of `live_docs` notes: at most
/// `CO_OCCURRENCE_MAX_DF`, and at most a share of the notes (a word most notes of a small memory
/// hold tells none of them apart).
pub fn probe_max_df(live_docs: u64) -> usize {
    let share =
        usize::try_from(live_docs / ranking::CO_OCCURRENCE_MAX_DF_SHARE).unwrap_or(usize::MAX);
    share.min(ranking::CO_OCCURRENCE_MAX_DF)
}

/// Whether `e` is an edge synthesized at index time (a slug cluster, token co-occurrence,
/// `derived_from` from a link), not one the note's text states.
pub fn is_index_synthesized(e: &EdgeValue) -> bool {
    e.provenance == Provenance::Synthesized
        && matches!(
            e.kind,
            EdgeKind::CoOccursSlug | EdgeKind::CoOccursToken | EdgeKind::DerivedFrom
        )
}

/// A probe term's TF-IDF weight in a note that holds it `tfs` times per field.
fn probe_weight(tfs: &[u16; FIELD_COUNT], idf: f32) -> f32 {
    let tf: u32 = tfs.iter().map(|x| u32::from(*x)).sum();
    tf_weight(tf) * idf
}

/// `1 + ln(tf)`, the weight of a term held `tf` times: looked up below [`TF_WEIGHTS`] (a pass
/// over every posting computed a logarithm per posting; most terms are held once).
fn tf_weight(tf: u32) -> f32 {
    TF_WEIGHT_TABLE
        .get(tf as usize)
        .copied()
        .unwrap_or_else(|| ln_weight(tf))
}

/// `1 + ln(tf)`, computed.
fn ln_weight(tf: u32) -> f32 {
    1.0 + (tf as f32).ln()
}

/// Term counts whose weight [`tf_weight`] looks up.
const TF_WEIGHTS: usize = 16;

/// `TF_WEIGHT_TABLE[tf]` is `ln_weight(tf)`: the same bits.
static TF_WEIGHT_TABLE: std::sync::LazyLock<[f32; TF_WEIGHTS]> =
    std::sync::LazyLock::new(|| std::array::from_fn(|tf| ln_weight(tf as u32)));

/// Build [`TF_WEIGHT_TABLE`] on this thread, now (see [`crate::build_process_tables`]).
pub(crate) fn build_weight_table() {
    std::sync::LazyLock::force(&TF_WEIGHT_TABLE);
}

/// The probe terms of `doc` with their weights, heaviest first (ties by term).
fn probes_of<'d>(doc: &'d DocTerms, lex: &LexicalIndex) -> Vec<(&'d str, f32)> {
    let max_df = probe_max_df(lex.live_docs());
    probes_with(doc, |t| lex.doc_freq_capped(t, max_df as u64), max_df)
}

/// The probe terms of `doc` with their weights, heaviest first (ties by term), with each
/// term's live document frequency from `df` (exact up to `max_df`, any number above it past
/// that), in an index whose [`probe_max_df`] is `max_df`.
pub fn probes_with(doc: &DocTerms, df: impl Fn(&str) -> u64, max_df: usize) -> Vec<(&str, f32)> {
    let mut probes: Vec<(&str, f32)> = doc
        .terms
        .iter()
        .filter(|(t, _)| is_probe_term(t))
        .filter_map(|(t, tfs)| {
            probe_idf(df(t) as usize, max_df).map(|idf| (t.as_str(), probe_weight(tfs, idf)))
        })
        .collect();
    probes.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    probes.truncate(ranking::CO_OCCURRENCE_PROBE_TERMS);
    probes
}

/// The probe floor of `doc` in `lex`: the weight of its lightest probe term when it has all
/// `CO_OCCURRENCE_PROBE_TERMS` of them, else 0. A term of the note weighing less than this
/// (before and after a change to its holders) is no probe of the note, so the change leaves the
/// note's co-occurrence as it was.
pub fn probe_floor(doc: &DocTerms, lex: &LexicalIndex) -> f32 {
    floor_of_probes(&probes_of(doc, lex))
}

/// The probe floor of a note whose probes are `probes` (see [`probe_floor`]).
pub fn floor_of_probes(probes: &[(&str, f32)]) -> f32 {
    floor_of(probes.iter().map(|p| p.1))
}

/// The floor of probe weights given heaviest first.
fn floor_of(weights: impl Iterator<Item = f32>) -> f32 {
    weights
        .enumerate()
        .last()
        .filter(|(i, _)| i + 1 == PROBE_TERMS)
        .map_or(0.0, |(_, w)| w)
}

/// The weight of a term held `tfs` times per field by a note, in `df` notes: `None` when the
/// term cannot be a probe term at that frequency.
pub fn probe_weight_at(
    term: &str,
    tfs: &[u16; FIELD_COUNT],
    df: u64,
    max_df: usize,
) -> Option<f32> {
    if !is_probe_term(term) {
        return None;
    }
    let idf = probe_idf(usize::try_from(df).ok()?, max_df)?;
    Some(probe_weight(tfs, idf))
}

/// Token co-occurrence edges of `doc`: candidates are the notes sharing its highest TF-IDF terms
/// (each term in at most `CO_OCCURRENCE_MAX_DF` notes); similarity is the TF-IDF-weighted share of
/// those terms the candidate holds. At most `cap` edges, best first, similarity >= threshold.
pub fn token_edges(
    doc: &DocTerms,
    lex: &LexicalIndex,
    exclude: &[&str],
    cap: usize,
) -> Vec<EdgeValue> {
    if cap == 0 {
        return Vec::new();
    }
    let probes = probes_of(doc, lex);
    edges_of_probes(
        &doc.id,
        &probes,
        |t| lex.postings_of(t).into_iter().map(|(id, _)| id),
        exclude,
        cap,
    )
}

/// [`token_edges`] of the note `id` whose probes are `probes` ([`probes_with`]), with the notes
/// holding each probe term from `holders`.
pub fn edges_of_probes<'a, I: IntoIterator<Item = &'a str>>(
    id: &str,
    probes: &[(&str, f32)],
    holders: impl Fn(&str) -> I,
    exclude: &[&str],
    cap: usize,
) -> Vec<EdgeValue> {
    if cap == 0 {
        return Vec::new();
    }
    let total: f32 = probes.iter().map(|(_, w)| w * w).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let mut acc: FxHashMap<&str, f32> = FxHashMap::default();
    for (t, w) in probes {
        for other in holders(t) {
            if other != id {
                *acc.entry(other).or_default() += w * w;
            }
        }
    }
    let sims: Vec<(&str, f32)> = acc
        .into_iter()
        .map(|(id, s)| (id, s / total))
        .filter(|(id, s)| *s >= ranking::MIN_TOKEN_COSINE && !exclude.contains(id))
        .collect();
    best_token_edges(sims, cap)
}

/// The `cap` most similar of `sims` (similarity, then id), as token co-occurrence edges.
fn best_token_edges(mut sims: Vec<(&str, f32)>, cap: usize) -> Vec<EdgeValue> {
    // Best first, ties by id: a total order (ids are distinct), so selecting the best `cap`
    // before sorting them gives the same list as sorting all.
    let order = |a: &(&str, f32), b: &(&str, f32)| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0));
    if cap == 0 {
        return Vec::new();
    }
    if sims.len() > cap {
        sims.select_nth_unstable_by(cap - 1, order);
        sims.truncate(cap);
    }
    sims.sort_unstable_by(order);
    sims.into_iter()
        .map(|(id, s)| EdgeValue {
            other: id.to_string(),
            kind: EdgeKind::CoOccursToken,
            provenance: Provenance::Synthesized,
            confidence: s.min(1.0),
            source_out_degree: 0,
        })
        .collect()
}

/// Token co-occurrence for every document of a lone segment at once (what a cold build leaves),
/// found term by term: one pass over the dictionary picks each document's probe terms, so notes
/// are not tokenized a second time and no term is looked up once per document. The documents of
/// each term some document probes with are then decoded once into a flat list, not once per
/// document that probes with it. [`Self::edges`] gives exactly what [`token_edges`] gives the
/// same document (same weights, same order of summation, same ties; pinned by
/// `segment_probes_give_the_edges_of_token_edges`).
pub struct SegmentProbes<'a, S: ProbeSource = Segment> {
    seg: &'a S,
    /// `PROBE_TERMS` slots per document: (weight, probe term), best first. While the dictionary
    /// is read the term is its postings offset; after it, its number in `term_bounds` (`NO_TERM`
    /// for a term of weight zero, which adds nothing and is not decoded).
    slots: Vec<(f32, u64)>,
    /// Slots in use per document.
    used: Vec<u8>,
    /// The documents of every probe term, in doc order, one term after another.
    docs: Vec<u32>,
    /// Probe term `t`'s documents are `docs[term_bounds[t]..term_bounds[t + 1]]`.
    term_bounds: Vec<usize>,
}

const PROBE_TERMS: usize = ranking::CO_OCCURRENCE_PROBE_TERMS;
/// A decoded slot's term when it has none (see [`SegmentProbes::term_docs`]: no documents).
const NO_TERM: u64 = u64::MAX;
const _: () = assert!(PROBE_TERMS <= u8::MAX as usize);

/// One part of the dictionary read: its probe terms' postings offsets in byte order, its best
/// slots per document (weight, index in those terms) and its slots in use per document.
type Part = (Vec<u64>, Vec<(f32, u32)>, Vec<u8>);

/// A part's keys: from the first (included), to the second (excluded); `None`: unbounded.
pub type KeyRange = (Option<&'static [u8]>, Option<&'static [u8]>);

/// What [`SegmentProbes`] reads of a lone segment: its documents' ids, its terms in byte order,
/// and each term's postings. A finished [`Segment`] gives them from its dictionary; a
/// [`LaidOutDocs`] from a segment being built, before its dictionary exists.
pub trait ProbeSource: Sync {
    /// Documents in the segment.
    fn doc_count(&self) -> u32;
    /// The id of document `doc`.
    fn id(&self, doc: u32) -> &str;
    /// `f(term, list)` for each term in `range`, in byte order: `list` names the term's
    /// postings for [`ProbeSource::postings`].
    fn each_term(&self, range: KeyRange, f: impl FnMut(&[u8], u64));
    /// The postings `list` names (`None` for a name `each_term` never gave).
    fn postings(&self, list: u64) -> Option<PostingsIter<'_>>;
}

impl ProbeSource for Segment {
    fn doc_count(&self) -> u32 {
        Segment::doc_count(self)
    }

    fn id(&self, doc: u32) -> &str {
        Segment::id(self, doc)
    }

    fn each_term(&self, (from, to): KeyRange, mut f: impl FnMut(&[u8], u64)) {
        let mut range = self.terms().range();
        if let Some(from) = from {
            range = range.ge(from);
        }
        if let Some(to) = to {
            range = range.lt(to);
        }
        let mut stream = range.into_stream();
        while let Some((term, off)) = stream.next() {
            f(term, off);
        }
    }

    fn postings(&self, list: u64) -> Option<PostingsIter<'_>> {
        self.postings_at(list)
    }
}

/// A segment being built ([`LaidOut`]) with its documents' ids (doc number order): the probes of
/// the segment it will be, read before its dictionary is built.
pub struct LaidOutDocs<'a> {
    pub laid: &'a LaidOut,
    pub ids: &'a [&'a str],
}

impl ProbeSource for LaidOutDocs<'_> {
    fn doc_count(&self) -> u32 {
        self.laid.doc_count()
    }

    fn id(&self, doc: u32) -> &str {
        self.ids.get(doc as usize).copied().unwrap_or("")
    }

    fn each_term(&self, (from, to): KeyRange, mut f: impl FnMut(&[u8], u64)) {
        let start = from.map_or(0, |k| self.laid.first_at_or_after(k));
        let end = to.map_or(self.laid.term_count(), |k| self.laid.first_at_or_after(k));
        for i in start..end.max(start) {
            f(self.laid.term(i).as_bytes(), i as u64);
        }
    }

    fn postings(&self, list: u64) -> Option<PostingsIter<'_>> {
        self.laid.postings(usize::try_from(list).ok()?)
    }
}

/// Parts of the dictionary read in parallel by [`SegmentProbes::new`], at most (each holds its own
/// slots: 8 bytes x `PROBE_TERMS` per document).
const MAX_PROBE_PARTS: usize = 4;

/// Where the dictionary is cut into `parts` parts (1..=4), as the first key of every part but
/// the first: fixed letters that share out the lowercase words of English text (digits come
/// before them, CJK after them). A part may hold more terms than another; what the parts give
/// together does not depend on where they are cut.
fn part_starts(parts: usize) -> &'static [&'static [u8]] {
    match parts {
        0 | 1 => &[],
        2 => &[b"m"],
        3 => &[b"f", b"p"],
        _ => &[b"d", b"l", b"s"],
    }
}

/// Keep `(w, t)` among `doc`'s best `PROBE_TERMS` in `slots` (an equal weight keeps the term
/// offered first).
fn offer<T: Copy>(slots: &mut [(f32, T)], used: &mut [u8], doc: usize, w: f32, t: T) {
    let Some(used) = used.get_mut(doc) else {
        return;
    };
    let Some(slots) = slots.get_mut(doc * PROBE_TERMS..(doc + 1) * PROBE_TERMS) else {
        return;
    };
    let n = usize::from(*used);
    // Full, and the lightest kept weighs at least `w` (the slots are heaviest first): the
    // common case once a note's first terms are in, decided without a search.
    if n == PROBE_TERMS && slots[PROBE_TERMS - 1].0.total_cmp(&w).is_ge() {
        return;
    }
    let at = slots[..n].partition_point(|s| s.0.total_cmp(&w).is_ge());
    if at == PROBE_TERMS {
        return;
    }
    let end = (n + 1).min(PROBE_TERMS);
    slots.copy_within(at..end - 1, at + 1);
    slots[at] = (w, t);
    *used = end as u8;
}

impl<'a> SegmentProbes<'a, Segment> {
    /// Probe terms of every document of `seg`, which must be an index's sole segment
    /// ([`LexicalIndex::sole_segment`]).
    pub fn new(seg: &'a Segment) -> SegmentProbes<'a, Segment> {
        Self::in_parts(seg, rayon::current_num_threads())
    }
}

impl<'a, S: ProbeSource> SegmentProbes<'a, S> {
    /// Probe terms of every document of `seg`, the sole segment of an index (none of its
    /// documents deleted), reading the dictionary in `parts` parts (clamped to 1..=4) in
    /// parallel: the same probes whatever the number.
    pub fn in_parts(seg: &'a S, parts: usize) -> SegmentProbes<'a, S> {
        let docs = seg.doc_count() as usize;
        // The segment is the whole index: its documents are the live ones.
        let max_df = probe_max_df(u64::from(seg.doc_count()));
        // Consecutive parts of the dictionary (in byte order) are read on every core, each
        // keeping its probe terms' offsets and its own best slots per document (a term index,
        // not an offset: half the bytes); then the parts are offered in term order. That
        // keeps what one pass over all the terms keeps: a term outside its part's best is outside
        // the best of all, and among equal weights the earlier term, which is in the same or an
        // earlier part, is offered first and so kept.
        let starts = part_starts(parts.clamp(1, MAX_PROBE_PARTS));
        let bounds: Vec<KeyRange> = (0..=starts.len())
            .map(|i| {
                let from = i.checked_sub(1).map(|j| starts[j]);
                (from, starts.get(i).copied())
            })
            .collect();
        let partial: Vec<Part> = bounds
            .par_iter()
            .map(|&range| {
                let mut terms: Vec<u64> = Vec::new();
                let mut slots = vec![(0.0, 0); docs * PROBE_TERMS];
                let mut used = vec![0; docs];
                seg.each_term(range, |term, off| {
                    if !std::str::from_utf8(term).is_ok_and(is_probe_term) {
                        return;
                    }
                    let Some(postings) = seg.postings(off) else {
                        return;
                    };
                    let Some(idf) = probe_idf(postings.len() as usize, max_df) else {
                        return;
                    };
                    let t = terms.len() as u32;
                    terms.push(off);
                    for p in postings {
                        offer(
                            &mut slots,
                            &mut used,
                            p.doc as usize,
                            probe_weight(&p.tfs, idf),
                            t,
                        );
                    }
                });
                (terms, slots, used)
            })
            .collect();
        let mut probes = SegmentProbes {
            seg,
            slots: vec![(0.0, 0); docs * PROBE_TERMS],
            used: vec![0; docs],
            docs: Vec::new(),
            term_bounds: vec![0],
        };
        for (terms, slots, used) in partial {
            for (d, &n) in used.iter().enumerate() {
                for &(w, t) in &slots[d * PROBE_TERMS..d * PROBE_TERMS + usize::from(n)] {
                    let off = terms[t as usize];
                    offer(&mut probes.slots, &mut probes.used, d, w, off);
                }
            }
        }
        probes.decode_probe_terms();
        probes
    }

    /// The segment the probes were read from.
    pub fn source(&self) -> &'a S {
        self.seg
    }

    /// Decode the documents of every term a slot holds, once per term, and point the slots at
    /// them. A term whose weight is zero adds nothing to any sum and is not decoded.
    fn decode_probe_terms(&mut self) {
        // Each term once, numbered in the order the slots first name it.
        let mut index: FxHashMap<u64, u64> = FxHashMap::default();
        let mut offsets: Vec<u64> = Vec::new();
        for (d, &used) in self.used.iter().enumerate() {
            for slot in &mut self.slots[d * PROBE_TERMS..d * PROBE_TERMS + usize::from(used)] {
                if slot.0 * slot.0 == 0.0 {
                    // `edges` skips it too; an index no term has, whatever happens.
                    slot.1 = NO_TERM;
                    continue;
                }
                let off = slot.1;
                slot.1 = *index.entry(off).or_insert_with(|| {
                    offsets.push(off);
                    (offsets.len() - 1) as u64
                });
            }
        }
        // Decoded on every core, then laid end to end in that order.
        let seg = self.seg;
        let lists: Vec<Vec<u32>> = offsets
            .par_iter()
            .map(|&off| {
                seg.postings(off)
                    .into_iter()
                    .flatten()
                    .map(|p| p.doc)
                    .collect()
            })
            .collect();
        self.docs.reserve(lists.iter().map(Vec::len).sum());
        self.term_bounds.reserve(lists.len());
        for list in lists {
            self.docs.extend_from_slice(&list);
            self.term_bounds.push(self.docs.len());
        }
    }

    /// The documents of probe term `t` (none for `NO_TERM`).
    fn term_docs(&self, t: u64) -> &[u32] {
        let Some(t) = usize::try_from(t)
            .ok()
            .filter(|&t| t < self.term_bounds.len() - 1)
        else {
            return &[];
        };
        self.docs
            .get(self.term_bounds[t]..self.term_bounds[t + 1])
            .unwrap_or(&[])
    }

    /// The probe floor of document `doc` (see [`probe_floor`]).
    pub fn floor(&self, doc: u32) -> f32 {
        let d = doc as usize;
        let Some(&used) = self.used.get(d) else {
            return 0.0;
        };
        floor_of(
            self.slots[d * PROBE_TERMS..d * PROBE_TERMS + usize::from(used)]
                .iter()
                .map(|s| s.0),
        )
    }

    /// A scratch accumulator for [`Self::edges`] (one per thread).
    pub fn accumulator(&self) -> Accumulator {
        Accumulator {
            sums: vec![0.0; self.seg.doc_count() as usize],
            touched: Vec::new(),
        }
    }

    /// Token co-occurrence edges of document `doc`, as [`token_edges`] computes them, with the
    /// notes to leave out given by their doc numbers (numbers, not ids: comparing each of a
    /// note's candidates with every id it excludes would cost a `memcmp` apiece).
    pub fn edges(
        &self,
        doc: u32,
        exclude: &[u32],
        cap: usize,
        acc: &mut Accumulator,
    ) -> Vec<EdgeValue> {
        let d = doc as usize;
        let Some(&used) = self.used.get(d) else {
            return Vec::new();
        };
        if cap == 0 {
            return Vec::new();
        }
        let probes = &self.slots[d * PROBE_TERMS..d * PROBE_TERMS + usize::from(used)];
        let total: f32 = probes.iter().map(|(w, _)| w * w).sum();
        if total <= 0.0 {
            return Vec::new();
        }
        for &(w, t) in probes {
            let add = w * w;
            // Adding zero changes no sum (all are >= 0): such a term is skipped, so a sum is
            // zero exactly until its document is first touched.
            if add == 0.0 {
                continue;
            }
            for &o in self.term_docs(t) {
                if o == doc {
                    continue;
                }
                let Some(sum) = acc.sums.get_mut(o as usize) else {
                    continue;
                };
                if *sum == 0.0 {
                    acc.touched.push(o);
                }
                *sum += add;
            }
        }
        let mut sims: Vec<(&str, f32)> = Vec::new();
        for &o in &acc.touched {
            let s = std::mem::take(&mut acc.sums[o as usize]) / total;
            if s >= ranking::MIN_TOKEN_COSINE && !exclude.contains(&o) {
                sims.push((self.seg.id(o), s));
            }
        }
        acc.touched.clear();
        best_token_edges(sims, cap)
    }
}

/// Per-document similarity sums of [`SegmentProbes::edges`], reset after each document.
pub struct Accumulator {
    sums: Vec<f32>,
    touched: Vec<u32>,
}

/// `derived_from` edges of a project note towards the user notes it references.
pub fn derived_from_user_edges(
    note_type: NoteType,
    edges: &[EdgeValue],
    type_of: &dyn Fn(&str) -> Option<NoteType>,
) -> Vec<EdgeValue> {
    if note_type != NoteType::Project {
        return Vec::new();
    }
    let mut out: Vec<EdgeValue> = Vec::new();
    for e in edges.iter().filter(|e| e.kind == EdgeKind::References) {
        if type_of(&e.other) == Some(NoteType::User) && !out.iter().any(|o| o.other == e.other) {
            out.push(EdgeValue {
                other: e.other.clone(),
                kind: EdgeKind::DerivedFrom,
                provenance: Provenance::Synthesized,
                confidence: ranking::SYNTH_DERIVED_CONFIDENCE,
                source_out_degree: 0,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn name_marks_and_single_characters_are_never_probes() {
        assert!(is_probe_term("stripe"));
        assert!(!is_probe_term("x"));
        assert!(!is_probe_term(&crate::index::fields::name_mark("stripe")));
    }

    #[test]
    fn the_dictionary_is_cut_into_the_parts_asked_for_in_key_order() {
        for parts in 0..=MAX_PROBE_PARTS + 2 {
            let starts = part_starts(parts.clamp(1, MAX_PROBE_PARTS));
            assert_eq!(starts.len(), parts.clamp(1, MAX_PROBE_PARTS) - 1, "{parts}");
            assert!(starts.iter().all(|s| !s.is_empty()), "{parts}");
            assert!(starts.windows(2).all(|w| w[0] < w[1]), "{parts}");
        }
    }

    #[test]
    fn the_tf_weight_table_gives_the_computed_bits() {
        for tf in [0u16, 1, 2, 3, 7, 15, 16, 17, 100, u16::MAX] {
            for field in 0..FIELD_COUNT {
                let mut tfs = [0u16; FIELD_COUNT];
                tfs[field] = tf;
                tfs[(field + 1) % FIELD_COUNT] = tf / 2;
                let sum: u32 = tfs.iter().map(|x| u32::from(*x)).sum();
                let want = ln_weight(sum) * 2.5;
                let got = probe_weight(&tfs, 2.5);
                assert_eq!(got.to_bits(), want.to_bits(), "tfs {tfs:?}");
            }
        }
    }

    proptest! {
        /// `offer` keeps each document's heaviest `PROBE_TERMS` offers, heaviest first, an equal
        /// weight keeping the term offered first: what a stable sort of all offers keeps.
        #[test]
        fn offer_keeps_the_head_of_a_stable_sort(weights in proptest::collection::vec(0u8..8, 0..60)) {
            let mut slots = vec![(0.0f32, 0usize); PROBE_TERMS];
            let mut used = vec![0u8; 1];
            for (t, &w) in weights.iter().enumerate() {
                offer(&mut slots, &mut used, 0, f32::from(w), t);
            }
            let mut want: Vec<(f32, usize)> =
                weights.iter().enumerate().map(|(t, &w)| (f32::from(w), t)).collect();
            want.sort_by(|a, b| b.0.total_cmp(&a.0));
            want.truncate(PROBE_TERMS);
            prop_assert_eq!(&slots[..usize::from(used[0])], &want[..]);
        }

        /// Selecting the best `cap` before sorting keeps what sorting everything keeps, ties
        /// (equal weights, broken by id) included.
        #[test]
        fn best_token_edges_is_the_head_of_a_full_sort(
            weights in proptest::collection::vec(0u8..4, 0..40),
            cap in 0usize..12,
        ) {
            let ids: Vec<String> = (0..weights.len()).map(|i| format!("n{:02}", (i * 7) % 40)).collect();
            let mut seen = std::collections::HashSet::new();
            let sims: Vec<(&str, f32)> = ids
                .iter()
                .zip(&weights)
                .filter(|(id, _)| seen.insert(id.as_str()))
                .map(|(id, &w)| (id.as_str(), f32::from(w) / 4.0))
                .collect();
            let mut want = sims.clone();
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            want.truncate(cap);
            let got: Vec<(String, f32)> = best_token_edges(sims, cap)
                .into_iter()
                .map(|e| (e.other, e.confidence))
                .collect();
            let want: Vec<(String, f32)> = want.into_iter().map(|(id, s)| (id.to_string(), s)).collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn slug_prefix_is_the_folder_and_first_word_and_none_for_one_word() {
        assert_eq!(slug_prefix("deploy-canary").as_deref(), Some("deploy-"));
        assert_eq!(
            slug_prefix("runbooks/deploy-rollback").as_deref(),
            Some("runbooks/deploy-")
        );
        assert_eq!(slug_prefix("index"), None);
        assert_eq!(slug_prefix("-x"), None);
    }

    #[test]
    fn slug_cluster_confidence_is_one_over_n_minus_one() {
        let cluster: Vec<String> = ["a-1", "a-2", "a-3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = slug_edges("a-1", &cluster);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].confidence, 0.5);
        assert!(e.iter().all(|x| x.other != "a-1"));
        let big: Vec<String> = (0..=ranking::MAX_SLUG_CLUSTER)
            .map(|i| format!("a-{i}"))
            .collect();
        assert!(slug_edges("a-1", &big).is_empty());
    }

    #[test]
    fn derived_from_only_for_project_to_user() {
        let edges = vec![
            EdgeValue {
                other: "u".into(),
                kind: EdgeKind::References,
                provenance: Provenance::InlineLink,
                confidence: 1.0,
                source_out_degree: 0,
            },
            EdgeValue {
                other: "r".into(),
                kind: EdgeKind::References,
                provenance: Provenance::InlineLink,
                confidence: 1.0,
                source_out_degree: 0,
            },
        ];
        let type_of = |id: &str| {
            Some(if id == "u" {
                NoteType::User
            } else {
                NoteType::Reference
            })
        };
        let d = derived_from_user_edges(NoteType::Project, &edges, &type_of);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].other, "u");
        assert_eq!(d[0].kind, EdgeKind::DerivedFrom);
        assert!(derived_from_user_edges(NoteType::Feedback, &edges, &type_of).is_empty());
    }
}
