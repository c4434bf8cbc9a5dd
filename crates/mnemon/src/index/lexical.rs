//! The live lexical index: the segments a manifest names, with their deletions, searched with
//! BM25F under OR semantics; updated by writing a small segment for changed notes and marking
//! their old versions deleted, and kept small by merging segments (tantivy/Lucene style).

use super::fields::{DocTerms, FIELD_COUNT};
use super::manifest::{Manifest, SegmentEntry};
use super::segment::writer::WriteError;
use super::segment::{Posting, Segment, SegmentBytes, SegmentWriter, build_segment};
use super::tokenize::{QueryTerm, QueryTerms};
use crate::error::{Error, Result};
use crate::prefetch::prefetch;
use crate::ranking;
use fst::{Automaton, IntoStreamer, Streamer};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Above this many segments, small ones are merged.
pub const MAX_LIVE_SEGMENTS: usize = 8;
/// A segment with more than this fraction of its docs deleted is merged away.
pub const MAX_DELETED_FRACTION: f32 = 0.5;
/// Temp files in `index/` older than this are leftovers of a crashed writer.
pub const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(3600);
/// Longest query term (chars) given typo tolerance: Levenshtein automata grow with length.
pub const MAX_FUZZY_TERM_CHARS: usize = 24;

/// Dictionary terms an expansion found, with their document frequency summed over the segments
/// whose streams listed them (from the dictionary value at hand, not a second lookup). Each
/// segment's stream lists every term of the expansion it holds, so the sums are the terms' full
/// document frequencies unless a stream was cut short (`complete` false): then they are looked
/// up again.
struct Found {
    df: HashMap<String, u64>,
    complete: bool,
}

impl Default for Found {
    fn default() -> Self {
        Found {
            df: HashMap::new(),
            complete: true,
        }
    }
}

impl Found {
    fn add(&mut self, l: &Live, term: &str, off: u64) {
        *self.df.entry(term.to_string()).or_default() += l.live_df_at(off);
    }
}

/// The Levenshtein DFA builders (distance 1 and 2, transposition costs 1), built once: building
/// a builder is costly, building a DFA from one is cheap (fst's own Levenshtein type builds its
/// whole DFA eagerly, for every query term).
fn typo_builder(dist: u8) -> &'static levenshtein_automata::LevenshteinAutomatonBuilder {
    static ONE: std::sync::OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> =
        std::sync::OnceLock::new();
    static TWO: std::sync::OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> =
        std::sync::OnceLock::new();
    let cell = if dist <= 1 { &ONE } else { &TWO };
    cell.get_or_init(|| levenshtein_automata::LevenshteinAutomatonBuilder::new(dist.min(2), true))
}

/// Build the typo DFA builders on a background thread, so the first query that needs one does
/// not pay for it (called when an index is opened).
pub fn warm_typo_builders() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(|| {
            typo_builder(1);
            typo_builder(2);
        });
    });
}

/// A Levenshtein DFA as an fst automaton.
struct TypoAutomaton(levenshtein_automata::DFA);

impl fst::Automaton for TypoAutomaton {
    type State = u32;
    fn start(&self) -> u32 {
        self.0.initial_state()
    }
    fn is_match(&self, state: &u32) -> bool {
        matches!(
            self.0.distance(*state),
            levenshtein_automata::Distance::Exact(_)
        )
    }
    fn can_match(&self, state: &u32) -> bool {
        *state != levenshtein_automata::SINK_STATE
    }
    fn accept(&self, state: &u32, byte: u8) -> u32 {
        self.0.transition(*state, byte)
    }
}

/// One document's running BM25F state during a search.
#[derive(Debug, Clone, Copy, Default)]
struct DocAcc {
    score: f32,
    matched: u32,
    exact: u32,
    best_idf: f32,
}

/// Postings decoded ahead of scoring, and seek targets looked ahead, for [`prefetch`].
const PREFETCH_BATCH: usize = 16;

thread_local! {
    /// Per-thread search scratch, one slot per document of the largest segment seen, all zero
    /// between searches (a search resets only the slots it touched): no per-query allocation or
    /// clearing proportional to the corpus.
    static SCRATCH: std::cell::RefCell<Scratch> = const {
        std::cell::RefCell::new(Scratch {
            acc: Vec::new(),
            touched: Vec::new(),
            kth: Vec::new(),
            sorted: Vec::new(),
            done_scores: Vec::new(),
        })
    };
}

/// A search's working memory, kept per thread so that a search allocates only its hits.
struct Scratch {
    /// Score slots by document number (see `SCRATCH`).
    acc: Vec<DocAcc>,
    /// Documents of the current segment with a score, in the order they got one.
    touched: Vec<u32>,
    /// Scores, to select the `limit`-th best.
    kth: Vec<f32>,
    /// Documents to seek to, in doc order.
    sorted: Vec<u32>,
    /// The best scores of the segments already searched.
    done_scores: Vec<f32>,
}

/// One segment in the live set.
struct Live {
    entry: SegmentEntry,
    seg: Arc<Segment>,
    deleted: Vec<bool>,
    /// Live document frequency per postings offset, for a segment with deleted documents (its
    /// postings still list them): counted once, then looked up.
    live_df: std::sync::Mutex<rustc_hash::FxHashMap<u64, u64>>,
}

/// The live document frequencies a segment keeps counted, at most (then it starts afresh).
const MAX_COUNTED_TERMS: usize = 1 << 16;

impl Live {
    fn live_count(&self) -> usize {
        self.seg.doc_count() as usize - self.entry.deleted.len()
    }

    /// Live documents holding the term whose postings are at `off`: what a clean build of the
    /// live notes would count, so scores do not depend on the history of updates.
    fn live_df_at(&self, off: u64) -> u64 {
        if self.entry.deleted.is_empty() {
            return self.seg.doc_freq_at(off);
        }
        if let Ok(cache) = self.live_df.lock()
            && let Some(&df) = cache.get(&off)
        {
            return df;
        }
        let df = self.seg.postings_at(off).map_or(0, |postings| {
            postings
                .filter(|p| !self.deleted.get(p.doc as usize).copied().unwrap_or(true))
                .count() as u64
        });
        if let Ok(mut cache) = self.live_df.lock() {
            if cache.len() >= MAX_COUNTED_TERMS {
                cache.clear();
            }
            cache.insert(off, df);
        }
        df
    }
}

/// A lexical hit.
#[derive(Debug, Clone, PartialEq)]
pub struct LexHit<'a> {
    /// The note's id, borrowed from the index.
    pub id: &'a str,
    /// BM25F score.
    pub score: f32,
    /// Bit i set when query term i matched.
    pub matched: u32,
    /// Bit i set when query term i matched as it is (not only through a typo or prefix
    /// expansion).
    pub exact: u32,
    /// The highest idf among the terms it matched (how distinctive its best match is).
    pub max_idf: f32,
}

/// How one query term matched the dictionary.
#[derive(Debug, Clone, PartialEq)]
pub struct TermMatch {
    /// The query term.
    pub term: String,
    /// Dictionary terms used, with their weight (1 exact; less for typo or prefix expansions).
    pub expansions: Vec<(String, f32)>,
    /// Live document frequency of the first expansion (the term itself when live notes hold
    /// it); 0 when there is none.
    pub first_df: u64,
}

/// The live lexical index.
pub struct LexicalIndex {
    generation: u64,
    segments: Vec<Live>,
    live_docs: u64,
    avg_field_lens: [f32; FIELD_COUNT],
    /// Typo and prefix expansions already found in this index, by kind and query term.
    expansions: ExpansionCache,
}

/// At most this many expansions (typo or prefix, per query term) are remembered per index.
pub const EXPANSION_CACHE_TERMS: usize = 4096;

/// Typo and prefix expansions of query terms, remembered for the life of one index (they depend
/// only on its dictionary, which never changes; an update opens a new index). Finding one walks
/// the dictionary with a Levenshtein automaton built for the term, work that grows with the
/// dictionary and the distance, and an agent's queries repeat their words.
struct ExpansionCache(quick_cache::sync::Cache<(ExpansionKind, String), Arc<[String]>>);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ExpansionKind {
    Typo,
    Prefix,
}

impl Default for ExpansionCache {
    fn default() -> Self {
        ExpansionCache(quick_cache::sync::Cache::new(EXPANSION_CACHE_TERMS))
    }
}

impl ExpansionCache {
    fn get_or_find(
        &self,
        kind: ExpansionKind,
        term: &str,
        find: impl FnOnce() -> Vec<String>,
    ) -> Arc<[String]> {
        let key = (kind, term.to_string());
        if let Some(found) = self.0.get(&key) {
            return found;
        }
        let found: Arc<[String]> = find().into();
        self.0.insert(key, found.clone());
        found
    }
}

impl LexicalIndex {
    /// An empty index (no manifest yet).
    pub fn empty() -> Self {
        LexicalIndex {
            generation: 0,
            segments: Vec::new(),
            live_docs: 0,
            avg_field_lens: [1.0; FIELD_COUNT],
            expansions: ExpansionCache::default(),
        }
    }

    /// Open the index described by the manifest in `index_dir`. `Ok(None)` when there is no
    /// manifest; `Err(Corrupt)` when the manifest or a segment fails verification.
    pub fn open(index_dir: &Path) -> Result<Option<LexicalIndex>> {
        LexicalIndex::open_reusing(index_dir, None)
    }

    /// Like [`LexicalIndex::open`], reusing the already verified segments of `current` that the
    /// manifest still lists (segments are immutable: same file name and checksum, same bytes), so
    /// picking up another process's update costs only its new segments.
    pub fn open_reusing(
        index_dir: &Path,
        current: Option<&LexicalIndex>,
    ) -> Result<Option<LexicalIndex>> {
        warm_typo_builders();
        let Some(manifest) = Manifest::load(FS, index_dir)? else {
            return Ok(None);
        };
        let mut segments = Vec::with_capacity(manifest.segments.len());
        for entry in manifest.segments {
            let path = index_dir.join(&entry.file);
            let known = current.and_then(|c| {
                c.segments
                    .iter()
                    .find(|l| l.entry.file == entry.file && l.entry.body_crc == entry.body_crc)
                    .map(|l| l.seg.clone())
            });
            if let Some(seg) = known {
                segments.push(Live::new(entry, seg));
                continue;
            }
            let seg = Segment::open(&path).map_err(|e| Error::Corrupt {
                path: path.clone(),
                reason: e.to_string(),
            })?;
            if seg.body_crc() != entry.body_crc || seg.doc_count() != entry.doc_count {
                return Err(Error::Corrupt {
                    path,
                    reason: "segment does not match the manifest (crc or doc count)".into(),
                });
            }
            segments.push(Live::new(entry, Arc::new(seg)));
        }
        Ok(Some(LexicalIndex::from_parts(
            manifest.generation,
            segments,
        )))
    }

    fn from_parts(generation: u64, segments: Vec<Live>) -> Self {
        let mut live_docs = 0u64;
        let mut sums = [0u64; FIELD_COUNT];
        for l in &segments {
            live_docs += l.live_count() as u64;
            let s = l.seg.field_len_sums();
            for f in 0..FIELD_COUNT {
                sums[f] += s[f];
            }
            for (doc, del) in l.deleted.iter().enumerate() {
                if *del {
                    let lens = l.seg.field_lens(doc as u32);
                    for f in 0..FIELD_COUNT {
                        sums[f] = sums[f].saturating_sub(u64::from(lens[f]));
                    }
                }
            }
        }
        let mut avg_field_lens = [1.0f32; FIELD_COUNT];
        if live_docs > 0 {
            for f in 0..FIELD_COUNT {
                avg_field_lens[f] = (sums[f] as f32 / live_docs as f32).max(1.0);
            }
        }
        LexicalIndex {
            generation,
            segments,
            live_docs,
            avg_field_lens,
            expansions: ExpansionCache::default(),
        }
    }

    /// Live documents.
    pub fn live_docs(&self) -> u64 {
        self.live_docs
    }

    /// The only segment, when there is exactly one and none of its documents is deleted (what a
    /// cold build leaves): its postings are then exactly the live ones, and its document
    /// frequencies the index's.
    pub fn sole_segment(&self) -> Option<&Segment> {
        match self.segments.as_slice() {
            [l] if !l.deleted.iter().any(|d| *d) => Some(&l.seg),
            _ => None,
        }
    }

    /// Number of live segments.
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// Replace the whole index with one segment of `docs`.
    pub fn rebuild(index_dir: &Path, docs: &[DocTerms]) -> Result<LexicalIndex> {
        LexicalIndex::empty().update(index_dir, docs, &[], true)
    }

    /// Replace the whole index with `segment` (built by a
    /// [`SegmentBuilder`](super::segment::writer::SegmentBuilder) of the notes `ids`; `None` for
    /// no notes), published at a generation above `generation` (the store's record of the last
    /// one published, which a rebuilt index must not fall behind).
    pub fn rebuild_after(
        index_dir: &Path,
        segment: Option<SegmentBytes>,
        ids: &[&str],
        generation: u64,
    ) -> Result<LexicalIndex> {
        LexicalIndex {
            generation,
            ..LexicalIndex::empty()
        }
        .update_with(index_dir, segment, ids, &[], true)
    }

    /// The generation of the manifest this index was opened from or published as.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A new index with `added` (new or changed notes) indexed and `removed` ids gone, written
    /// (segment files, then the manifest; not fsynced: see `manifest::DURABILITY`).
    /// `replace_all` drops every old segment.
    pub fn update(
        &self,
        index_dir: &Path,
        added: &[DocTerms],
        removed: &[String],
        replace_all: bool,
    ) -> Result<LexicalIndex> {
        let segment = if added.is_empty() {
            None
        } else {
            let mut docs: Vec<&DocTerms> = added.iter().collect();
            docs.sort_by(|a, b| a.id.cmp(&b.id));
            docs.dedup_by(|a, b| a.id == b.id);
            Some(build_segment(&docs).map_err(|e| Error::Corrupt {
                path: index_dir.to_path_buf(),
                reason: e.to_string(),
            })?)
        };
        let ids: Vec<&str> = added.iter().map(|d| d.id.as_str()).collect();
        self.update_with(index_dir, segment, &ids, removed, replace_all)
    }

    /// [`LexicalIndex::update`] with the new notes' segment already built (by a
    /// [`SegmentBuilder`](super::segment::writer::SegmentBuilder), a batch of notes at a time):
    /// `added` names the notes in it, whose old versions are deleted.
    pub fn update_with(
        &self,
        index_dir: &Path,
        segment: Option<SegmentBytes>,
        added: &[&str],
        removed: &[String],
        replace_all: bool,
    ) -> Result<LexicalIndex> {
        let generation = self.generation + 1;
        let mut segments: Vec<Live> = if replace_all {
            Vec::new()
        } else {
            self.segments.iter().map(Live::share).collect()
        };
        // Old versions of changed notes and removed notes are deleted where they live.
        let gone: rustc_hash::FxHashSet<&str> = removed
            .iter()
            .map(String::as_str)
            .chain(added.iter().copied())
            .collect();
        // A watcher's update names a note or two: compare lengths first instead of hashing every
        // id of the corpus, so a small update does not cost a pass that grows with the corpus.
        let few: Vec<&str> = if gone.len() <= 16 {
            gone.iter().copied().collect()
        } else {
            Vec::new()
        };
        let is_gone = |id: &str| {
            if few.is_empty() {
                gone.contains(id)
            } else {
                few.iter().any(|g| g.len() == id.len() && *g == id)
            }
        };
        if !gone.is_empty() {
            for l in &mut segments {
                let mut changed = false;
                for (doc, id) in l.seg.ids().iter().enumerate() {
                    if !l.deleted[doc] && is_gone(id) {
                        l.deleted[doc] = true;
                        changed = true;
                    }
                }
                if changed {
                    l.entry.deleted = deleted_list(&l.deleted);
                    if let Ok(counted) = l.live_df.get_mut() {
                        counted.clear();
                    }
                }
            }
        }
        let mut written = Vec::new();
        if let Some(bytes) = segment {
            let live = write_segment(index_dir, generation, 0, &bytes)?;
            written.push(live.entry.file.clone());
            segments.push(live);
        }
        segments.retain(|l| l.live_count() > 0);
        let segments = merge_if_needed(index_dir, generation, segments, &mut written)?;
        publish(index_dir, generation, segments)
    }

    /// The same index with every live segment merged into one (deleted docs dropped): what a
    /// cold build ends with, since each segment costs a dictionary lookup per query term and a
    /// search of its own. Returns a clone when there is one segment already.
    pub fn merged(&self, index_dir: &Path) -> Result<LexicalIndex> {
        let segments: Vec<Live> = self.segments.iter().map(Live::share).collect();
        if segments.len() < 2 && segments.iter().all(|l| l.entry.deleted.is_empty()) {
            return Ok(LexicalIndex::from_parts(self.generation, segments));
        }
        let generation = self.generation + 1;
        let bytes = merge_segments(&segments).map_err(|e| Error::Corrupt {
            path: index_dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        let live = write_segment(index_dir, generation, 0, &bytes)?;
        let segments: Vec<Live> = if live.live_count() > 0 {
            vec![live]
        } else {
            Vec::new()
        };
        publish(index_dir, generation, segments)
    }

    /// How each query term matches the dictionary: exact, else typo-tolerant (Levenshtein
    /// distance 1 for 5+ chars, 2 for 9+, same first character), plus prefix expansions of an unfinished last term.
    pub fn expand(&self, q: &QueryTerms) -> Vec<TermMatch> {
        let n = q.terms.len();
        q.terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut expansions = Vec::new();
                let term_df = self.df(t.term.as_bytes());
                let exact = term_df > 0;
                if exact {
                    expansions.push((t.term.clone(), 1.0));
                } else if !t.cjk {
                    let typos = self
                        .expansions
                        .get_or_find(ExpansionKind::Typo, &t.term, || self.fuzzy(t));
                    for e in typos.iter() {
                        expansions.push((e.clone(), ranking::FUZZY_TERM_WEIGHT));
                    }
                }
                // An unfinished last word: complete it, unless it already is a word here.
                if i + 1 == n && q.last_is_prefix && !t.cjk && !exact {
                    let completions =
                        self.expansions
                            .get_or_find(ExpansionKind::Prefix, &t.surface, || {
                                self.prefixed(&t.surface)
                            });
                    for e in completions.iter() {
                        if !expansions.iter().any(|(x, _)| x == e) {
                            expansions.push((e.clone(), ranking::PREFIX_TERM_WEIGHT));
                        }
                    }
                }
                let first_df = match expansions.first() {
                    _ if exact => term_df,
                    Some((first, _)) => self.df(first.as_bytes()),
                    None => 0,
                };
                TermMatch {
                    term: t.term.clone(),
                    expansions,
                    first_df,
                }
            })
            .collect()
    }

    /// Live documents holding `term`.
    fn df(&self, term: &[u8]) -> u64 {
        self.segments
            .iter()
            .filter_map(|l| l.seg.term_offset(term).map(|o| l.live_df_at(o)))
            .sum()
    }

    /// Dictionary terms within the allowed edit distance of `t`, most frequent first.
    fn fuzzy(&self, t: &QueryTerm) -> Vec<String> {
        let chars = t.term.chars().count();
        let dist = if chars >= 9 {
            2
        } else if chars >= 5 {
            1
        } else {
            return Vec::new();
        };
        if chars > MAX_FUZZY_TERM_CHARS {
            return Vec::new();
        }
        // The first characters must match (Lucene's `prefixLength`): typos there are rare, and
        // it confines the DFA to one branch of the dictionary instead of all of it.
        let fixed: String = t.term.chars().take(ranking::FUZZY_PREFIX_CHARS).collect();
        let aut = fst::automaton::Str::new(&fixed)
            .starts_with()
            .intersection(TypoAutomaton(typo_builder(dist).build_dfa(&t.term)));
        let mut found = Found::default();
        for l in &self.segments {
            let mut s = l.seg.terms().search(&aut).into_stream();
            while let Some((k, off)) = s.next() {
                if let Ok(k) = std::str::from_utf8(k) {
                    found.add(l, k, off);
                }
                if found.df.len() > 64 {
                    found.complete = false;
                    break;
                }
            }
        }
        self.top_by_df(found)
    }

    /// Dictionary terms starting with `prefix` (other than `prefix` itself), most frequent first.
    fn prefixed(&self, prefix: &str) -> Vec<String> {
        if prefix.chars().count() < 2 {
            return Vec::new();
        }
        let aut = fst::automaton::Str::new(prefix).starts_with();
        let mut found = Found::default();
        for l in &self.segments {
            let mut s = l.seg.terms().search(aut.clone()).into_stream();
            while let Some((k, off)) = s.next() {
                if k != prefix.as_bytes()
                    && let Ok(k) = std::str::from_utf8(k)
                {
                    found.add(l, k, off);
                }
                if found.df.len() > 256 {
                    found.complete = false;
                    break;
                }
            }
        }
        self.top_by_df(found)
    }

    /// The most frequent of the `found` terms.
    fn top_by_df(&self, found: Found) -> Vec<String> {
        let complete = found.complete;
        let mut v: Vec<(u64, String)> = found
            .df
            .into_iter()
            .map(|(t, df)| (if complete { df } else { self.df(t.as_bytes()) }, t))
            // A term only deleted documents hold is not in a clean build's dictionary.
            .filter(|(df, _)| *df > 0)
            .collect();
        v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        v.truncate(ranking::MAX_EXPANSIONS_PER_TERM);
        v.into_iter().map(|(_, t)| t).collect()
    }

    /// BM25F pseudo term frequency: field counts weighted and length-normalised per field.
    fn field_tf(&self, tfs: &[u16; FIELD_COUNT], lens: &[u32; FIELD_COUNT]) -> f32 {
        let mut tf = 0.0f32;
        for (f, (&count, &len)) in tfs.iter().zip(lens).enumerate() {
            if count > 0 {
                let b = ranking::FIELD_LENGTH_NORM[f];
                let norm = 1.0 - b + b * len as f32 / self.avg_field_lens[f];
                tf += ranking::FIELD_WEIGHTS[f] * f32::from(count) / norm;
            }
        }
        tf
    }

    /// BM25F search with OR semantics over expanded terms; the best `limit` hits.
    ///
    /// Exact top-`limit` with MaxScore pruning: term lists are read rarest first (highest upper
    /// bound of their BM25 contribution, `weight * idf * (k1 + 1)`); once `limit` documents are
    /// scored, a document first met in a later list is skipped when even the sum of the remaining
    /// lists' bounds cannot lift it to the current `limit`-th score. Common words then only add to
    /// documents already found instead of scoring most of the corpus.
    pub fn search(&self, matches: &[TermMatch], limit: usize) -> Vec<LexHit<'_>> {
        let n = self.live_docs.max(1) as f32;
        /// One dictionary term of the query, as the search reads it.
        struct SearchTerm<'t> {
            /// Which query term it expands (its bit in `matched`).
            qi: usize,
            term: &'t str,
            /// Expansion weight x idf.
            w: f32,
            idf: f32,
            /// The query term itself, not an expansion of it.
            exact: bool,
            /// Where its per-segment postings offsets start in `offsets`.
            at: usize,
        }
        // idf once per dictionary term (document frequency summed over segments), and where
        // each segment keeps the term's postings: one dictionary lookup per term and segment.
        let mut terms: Vec<SearchTerm<'_>> = Vec::new();
        let mut offsets: Vec<Option<u64>> = Vec::new();
        for (qi, m) in matches.iter().enumerate() {
            for (term, weight) in &m.expansions {
                let at = offsets.len();
                offsets.extend(
                    self.segments
                        .iter()
                        .map(|l| l.seg.term_offset(term.as_bytes())),
                );
                let df: u64 = self
                    .segments
                    .iter()
                    .zip(&offsets[at..])
                    .filter_map(|(l, off)| off.map(|o| l.live_df_at(o)))
                    .sum();
                let df = df as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                terms.push(SearchTerm {
                    qi,
                    term: term.as_str(),
                    w: weight * idf,
                    idf,
                    exact: *term == m.term,
                    at,
                });
            }
        }
        terms.sort_by(|a, b| b.w.total_cmp(&a.w).then_with(|| a.term.cmp(b.term)));
        // rest[j]: the most the lists j.. can add to one document.
        let mut rest = vec![0.0f32; terms.len() + 1];
        for j in (0..terms.len()).rev() {
            rest[j] = rest[j + 1] + terms[j].w * (ranking::BM25_K1 + 1.0);
        }
        let mut hits = Vec::new();
        SCRATCH.with_borrow_mut(|scratch| {
            let Scratch {
                acc,
                touched,
                kth,
                sorted,
                done_scores,
            } = scratch;
            done_scores.clear();
            // The `limit`-th best score of the segments already searched: a floor for the rest
            // (a note lives in one segment, so the floors of disjoint doc sets combine).
            let mut done_kth = f32::NEG_INFINITY;
            // Largest segment first: its floor prunes the small ones.
            let mut order: Vec<(usize, &Live)> = self.segments.iter().enumerate().collect();
            order.sort_by_key(|(_, l)| std::cmp::Reverse(l.live_count()));
            debug_assert_eq!(offsets.len(), terms.len() * self.segments.len());
            for (si, l) in order {
                let docs = l.seg.doc_count() as usize;
                if acc.len() < docs {
                    acc.resize(docs, DocAcc::default());
                }
                touched.clear();
                for (
                    j,
                    SearchTerm {
                        qi,
                        w,
                        idf,
                        exact,
                        at,
                        ..
                    },
                ) in terms.iter().enumerate()
                {
                    let Some(off) = offsets[at + si] else {
                        continue;
                    };
                    let Some(postings) = l.seg.postings_at(off) else {
                        continue;
                    };
                    // The `limit`-th best score so far is a lower bound of the final one.
                    let threshold = if touched.len() < limit.max(1) {
                        done_kth
                    } else {
                        kth.clear();
                        kth.extend(touched.iter().map(|&d| acc[d as usize].score));
                        let at = limit.max(1) - 1;
                        let (_, t, _) = kth.select_nth_unstable_by(at, |a, b| b.total_cmp(a));
                        t.max(done_kth)
                    };
                    let admit_new = rest[j] >= threshold;
                    if !admit_new && touched.is_empty() {
                        break;
                    }
                    let add = |p: Posting, a: &mut DocAcc| {
                        let tf = self.field_tf(&p.tfs, &l.seg.field_lens(p.doc));
                        a.score += w * tf * (ranking::BM25_K1 + 1.0) / (ranking::BM25_K1 + tf);
                        a.matched |= 1u32 << (qi % 32);
                        a.exact |= u32::from(*exact) << (qi % 32);
                        a.best_idf = a.best_idf.max(*idf);
                    };
                    if admit_new {
                        // Decoded a batch at a time, the batch's score slots and field lengths
                        // requested ahead, so their cache misses overlap.
                        let mut batch = [Posting::default(); PREFETCH_BATCH];
                        let mut postings = postings.peekable();
                        while postings.peek().is_some() {
                            let mut n = 0;
                            for (slot, p) in batch.iter_mut().zip(postings.by_ref()) {
                                prefetch(acc, p.doc as usize);
                                l.seg.prefetch_field_lens(p.doc);
                                *slot = p;
                                n += 1;
                            }
                            for &p in &batch[..n] {
                                let d = p.doc as usize;
                                if l.deleted.get(d).copied().unwrap_or(true) {
                                    continue;
                                }
                                let Some(a) = acc.get_mut(d) else { continue };
                                if a.matched == 0 {
                                    touched.push(p.doc);
                                }
                                add(p, a);
                            }
                        }
                    } else {
                        // Only documents already found can still change, and only those whose
                        // score plus what the lists left can add still reaches the threshold
                        // can end in the top `limit`: seek to each of them (in doc order)
                        // instead of decoding the whole list.
                        let Some(mut postings) = l.seg.seekable_postings_at(off) else {
                            continue;
                        };
                        sorted.clear();
                        sorted.extend(
                            touched
                                .iter()
                                .filter(|&&d| acc[d as usize].score + rest[j] >= threshold),
                        );
                        sorted.sort_unstable();
                        for (i, &d) in sorted.iter().enumerate() {
                            if let Some(&ahead) = sorted.get(i + PREFETCH_BATCH) {
                                l.seg.prefetch_field_lens(ahead);
                            }
                            if let Some(p) = postings.seek(d)
                                && let Some(a) = acc.get_mut(d as usize)
                            {
                                add(p, a);
                            }
                        }
                    }
                }
                if touched.len() > limit {
                    // Equal scores are ordered by id, as the final list is: which of them makes
                    // the cut must not depend on where a note sits in which segment.
                    touched.select_nth_unstable_by(limit, |a, b| {
                        acc[*b as usize]
                            .score
                            .total_cmp(&acc[*a as usize].score)
                            .then_with(|| l.seg.id(*a).cmp(l.seg.id(*b)))
                    });
                }
                for (i, &doc) in touched.iter().enumerate() {
                    let a = std::mem::take(&mut acc[doc as usize]);
                    if i < limit && a.score >= done_kth {
                        done_scores.push(a.score);
                        hits.push(LexHit {
                            id: l.seg.id(doc),
                            score: a.score,
                            matched: a.matched,
                            exact: a.exact,
                            max_idf: a.best_idf,
                        });
                    }
                }
                if done_scores.len() >= limit.max(1) {
                    let at = limit.max(1) - 1;
                    let (_, t, _) = done_scores.select_nth_unstable_by(at, |a, b| b.total_cmp(a));
                    done_kth = *t;
                    done_scores.sort_unstable_by(|a, b| b.total_cmp(a));
                    done_scores.truncate(limit.max(1));
                }
            }
        });
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(b.id)));
        hits.truncate(limit);
        hits
    }

    /// Every live document's terms with tf-idf weights, for co-occurrence (see `cooccur`):
    /// for each of `terms`, the postings as (id, per-field counts).
    pub fn postings_of(&self, term: &str) -> Vec<(&str, [u16; FIELD_COUNT])> {
        let mut out = Vec::new();
        for l in &self.segments {
            if let Some(p) = l.seg.postings(term.as_bytes()) {
                for p in p {
                    if !l.deleted.get(p.doc as usize).copied().unwrap_or(true) {
                        out.push((l.seg.id(p.doc), p.tfs));
                    }
                }
            }
        }
        out
    }

    /// Live documents holding `term`.
    pub fn doc_freq(&self, term: &str) -> u64 {
        self.df(term.as_bytes())
    }

    /// The terms the live documents `ids` hold, each with those of `ids` that hold it (their
    /// places in `ids`, ascending); a term more than `max_df` live documents hold may be left
    /// out. What an update
    /// needs to know of the notes it replaces or removes, whose old text is gone: found by
    /// reading the dictionary of each segment holding one of them (no per-document term list is
    /// kept).
    pub fn terms_of(&self, ids: &[&str], max_df: u64) -> HashMap<String, Vec<usize>> {
        let mut out: HashMap<String, Vec<usize>> = HashMap::new();
        if ids.is_empty() {
            return out;
        }
        let wanted: HashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        for l in &self.segments {
            // (doc, index in `ids`), in doc order.
            let docs: Vec<(u32, usize)> = l
                .seg
                .ids()
                .iter()
                .enumerate()
                .filter(|(d, _)| !l.deleted.get(*d).copied().unwrap_or(true))
                .filter_map(|(d, id)| wanted.get(&**id).map(|&i| (d as u32, i)))
                .collect();
            let (Some(&(first, _)), Some(&(last, _))) = (docs.first(), docs.last()) else {
                continue;
            };
            // A list longer than this holds more than `max_df` live documents.
            let longest = max_df.saturating_add(l.entry.deleted.len() as u64);
            let mut stream = l.seg.terms().stream();
            while let Some((term, off)) = stream.next() {
                let Some(postings) = l.seg.postings_at(off) else {
                    continue;
                };
                if postings.len() > longest {
                    continue;
                }
                let mut holders: Vec<usize> = Vec::new();
                for p in postings {
                    if p.doc > last {
                        break;
                    }
                    if p.doc >= first
                        && let Ok(k) = docs.binary_search_by_key(&p.doc, |&(d, _)| d)
                    {
                        holders.push(docs[k].1);
                    }
                }
                if holders.is_empty() {
                    continue;
                }
                let Ok(term) = std::str::from_utf8(term) else {
                    continue;
                };
                if l.live_df_at(off) > max_df {
                    continue;
                }
                out.entry(term.to_string()).or_default().extend(holders);
            }
        }
        for holders in out.values_mut() {
            holders.sort_unstable();
        }
        out
    }
}

impl Live {
    fn new(entry: SegmentEntry, seg: Arc<Segment>) -> Live {
        let mut deleted = vec![false; seg.doc_count() as usize];
        for d in &entry.deleted {
            if let Some(slot) = deleted.get_mut(*d as usize) {
                *slot = true;
            }
        }
        Live {
            entry,
            seg,
            deleted,
            live_df: Default::default(),
        }
    }
    /// The same segment for a new live set (its deletions may change: nothing counted is kept).
    fn share(&self) -> Live {
        Live {
            entry: self.entry.clone(),
            seg: self.seg.clone(),
            deleted: self.deleted.clone(),
            live_df: Default::default(),
        }
    }
}

/// Make `segments` the live set of `generation`: write the manifest naming them, delete the
/// segment files it no longer names.
fn publish(index_dir: &Path, generation: u64, segments: Vec<Live>) -> Result<LexicalIndex> {
    let manifest = Manifest {
        generation,
        segments: segments.iter().map(|l| l.entry.clone()).collect(),
    };
    manifest.store(FS, index_dir)?;
    remove_unlisted_segments(index_dir, &manifest);
    Ok(LexicalIndex::from_parts(generation, segments))
}

fn deleted_list(deleted: &[bool]) -> Vec<u32> {
    deleted
        .iter()
        .enumerate()
        .filter(|(_, d)| **d)
        .map(|(i, _)| i as u32)
        .collect()
}

/// The file system the index's files are written to and read from: the real one, since segments
/// are read through memory maps of real files.
const FS: &dyn crate::fs::Fs = &crate::fs::RealFs;

fn segment_file_name(generation: u64, n: u32) -> String {
    format!("lex-{generation:016x}-{n}.seg")
}

fn write_segment(index_dir: &Path, generation: u64, n: u32, bytes: &SegmentBytes) -> Result<Live> {
    let file = segment_file_name(generation, n);
    let path = index_dir.join(&file);
    crate::fs::write_atomic(FS, &path, super::manifest::DURABILITY, &bytes.parts())?;
    let seg = Segment::open(&path).map_err(|e| Error::Corrupt {
        path: path.clone(),
        reason: format!("just written and unreadable: {e}"),
    })?;
    let entry = SegmentEntry {
        file,
        body_crc: seg.body_crc(),
        doc_count: seg.doc_count(),
        deleted: Vec::new(),
    };
    Ok(Live::new(entry, Arc::new(seg)))
}

/// Tiered merging: when there are too many segments, merge all but the largest if they are small
/// next to it, else everything; segments mostly deleted are always merged.
fn merge_if_needed(
    index_dir: &Path,
    generation: u64,
    mut segments: Vec<Live>,
    written: &mut Vec<String>,
) -> Result<Vec<Live>> {
    let too_deleted =
        |l: &Live| l.entry.deleted.len() as f32 > MAX_DELETED_FRACTION * l.seg.doc_count() as f32;
    if segments.len() <= MAX_LIVE_SEGMENTS && !segments.iter().any(too_deleted) {
        return Ok(segments);
    }
    segments.sort_by_key(|l| std::cmp::Reverse(l.live_count()));
    let largest = segments.first().map_or(0, Live::live_count);
    let rest: usize = segments.iter().skip(1).map(Live::live_count).sum();
    let merge_all = rest * 4 >= largest || segments.first().is_some_and(too_deleted);
    let (keep, merge): (Vec<Live>, Vec<Live>) = if merge_all {
        (Vec::new(), segments)
    } else {
        let mut it = segments.into_iter();
        let first = it.next().into_iter().collect();
        (first, it.collect())
    };
    if merge.len() < 2 && merge.iter().all(|l| l.entry.deleted.is_empty()) {
        let mut all = keep;
        all.extend(merge);
        return Ok(all);
    }
    let bytes = merge_segments(&merge).map_err(|e| Error::Corrupt {
        path: index_dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let live = write_segment(index_dir, generation, 1 + written.len() as u32, &bytes)?;
    written.push(live.entry.file.clone());
    let mut out = keep;
    if live.live_count() > 0 {
        out.push(live);
    }
    Ok(out)
}

/// Why segments could not be merged.
#[derive(Debug, thiserror::Error)]
enum MergeError {
    /// The dictionary of segment `file` names postings outside it (the segment is damaged).
    #[error("segment {file}: its dictionary names postings at offset {offset}, outside it")]
    PostingsOffset { file: String, offset: u64 },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Merge segments into one, dropping deleted docs (docs renumbered in segment order).
fn merge_segments(segs: &[Live]) -> std::result::Result<SegmentBytes, MergeError> {
    let mut w = SegmentWriter::new();
    let mut remap: Vec<Vec<Option<u32>>> = Vec::with_capacity(segs.len());
    for l in segs {
        let mut m = Vec::with_capacity(l.seg.doc_count() as usize);
        for doc in 0..l.seg.doc_count() {
            if l.deleted[doc as usize] {
                m.push(None);
            } else {
                let n = w.add_doc(l.seg.id(doc), l.seg.field_lens(doc))?;
                m.push(Some(n));
            }
        }
        remap.push(m);
    }
    let mut op = fst::map::OpBuilder::new();
    for l in segs {
        op = op.add(l.seg.terms());
    }
    let mut union = op.union();
    let mut buf = Vec::new();
    while let Some((term, values)) = union.next() {
        buf.clear();
        let mut vals: Vec<_> = values.to_vec();
        vals.sort_by_key(|v| v.index);
        for v in vals {
            let l = &segs[v.index];
            let Some(postings) = l.seg.postings_at(v.value) else {
                return Err(MergeError::PostingsOffset {
                    file: l.entry.file.clone(),
                    offset: v.value,
                });
            };
            for p in postings {
                if let Some(Some(n)) = remap[v.index].get(p.doc as usize) {
                    buf.push((*n, p.tfs));
                }
            }
        }
        w.add_term(term, &buf)?;
    }
    Ok(w.finish()?)
}

/// Delete segment files (and stale temp files) of `index_dir` that the manifest does not list.
/// Best effort: a file another process still maps stays readable until it unmaps it.
fn remove_unlisted_segments(index_dir: &Path, manifest: &Manifest) {
    let Ok(dir) = std::fs::read_dir(index_dir) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let unlisted_segment = name.starts_with("lex-")
            && name.ends_with(".seg")
            && !manifest.segments.iter().any(|s| s.file == name);
        // Temp files of a crashed writer; an old age keeps a live writer's temp file safe.
        let stale_temp = name.starts_with(crate::fs::TEMP_PREFIX)
            && e.metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_TEMP_AGE);
        if unlisted_segment || stale_temp {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::tokenize::Tokenizer;

    fn doc(tok: &Tokenizer, id: &str, body: &str) -> DocTerms {
        let note = crate::notes::parse_note(id, body.as_bytes());
        DocTerms::from_note(tok, &note)
    }

    fn ids(idx: &LexicalIndex, tok: &Tokenizer, q: &str) -> Vec<String> {
        let m = idx.expand(&tok.query_terms(q));
        idx.search(&m, 10)
            .into_iter()
            .map(|h| h.id.to_string())
            .collect()
    }

    #[test]
    fn update_delete_merge_keep_one_live_version() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut idx = LexicalIndex::rebuild(
            dir,
            &[
                doc(&tok, "a", "postgres pool sizing"),
                doc(&tok, "b", "deploy rollback"),
            ],
        )
        .unwrap();
        assert_eq!(ids(&idx, &tok, "pool"), vec!["a"]);
        for i in 0..20 {
            let body = format!("redis failover drill number{i}");
            idx = idx
                .update(dir, &[doc(&tok, "a", &body)], &[], false)
                .unwrap();
            assert!(idx.segment_count() <= MAX_LIVE_SEGMENTS + 1);
        }
        assert_eq!(idx.live_docs(), 2);
        assert!(ids(&idx, &tok, "pool").is_empty(), "old version deleted");
        assert_eq!(ids(&idx, &tok, "number19"), vec!["a"]);
        assert!(ids(&idx, &tok, "number3").is_empty());
        idx = idx.update(dir, &[], &["b".to_string()], false).unwrap();
        assert!(ids(&idx, &tok, "rollback").is_empty());
        // Reopening from disk gives the same answers.
        let again = LexicalIndex::open(dir).unwrap().unwrap();
        assert_eq!(again.live_docs(), 1);
        assert_eq!(ids(&again, &tok, "failover"), vec!["a"]);
        let files = std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_str()
                    .unwrap()
                    .ends_with(".seg")
            })
            .count();
        assert_eq!(files, again.segment_count(), "unlisted segments removed");
    }

    #[test]
    fn merged_index_is_one_segment_with_the_same_answers() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut idx =
            LexicalIndex::rebuild(dir, &[doc(&tok, "a", "postgres pool sizing")]).unwrap();
        idx = idx
            .update(dir, &[doc(&tok, "b", "pool rollback drill")], &[], false)
            .unwrap();
        idx = idx
            .update(
                dir,
                &[doc(&tok, "c", "redis pool pool")],
                &["a".to_string()],
                false,
            )
            .unwrap();
        assert_eq!(idx.segment_count(), 2, "a fully deleted segment is dropped");
        let before = ids(&idx, &tok, "pool");
        let merged = idx.merged(dir).unwrap();
        assert_eq!(merged.segment_count(), 1);
        assert_eq!(merged.live_docs(), 2);
        assert_eq!(ids(&merged, &tok, "pool"), before);
        assert_eq!(before, vec!["c", "b"]);
        let again = LexicalIndex::open(dir).unwrap().unwrap();
        assert_eq!(again.segment_count(), 1);
        assert_eq!(ids(&again, &tok, "pool"), before);
    }

    #[test]
    fn reopening_after_another_writer_reuses_unchanged_segments() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let mine = LexicalIndex::rebuild(tmp.path(), &[doc(&tok, "a", "alpha")]).unwrap();
        // "Another process" adds a note through its own view.
        let theirs = LexicalIndex::open(tmp.path()).unwrap().unwrap();
        theirs
            .update(tmp.path(), &[doc(&tok, "b", "beta")], &[], false)
            .unwrap();
        let fresh = LexicalIndex::open_reusing(tmp.path(), Some(&mine))
            .unwrap()
            .unwrap();
        assert_eq!(fresh.live_docs(), 2);
        assert_eq!(ids(&fresh, &tok, "beta"), vec!["b"]);
        assert!(
            Arc::ptr_eq(&fresh.segments[0].seg, &mine.segments[0].seg),
            "the unchanged segment was reused, not re-read"
        );
    }

    /// Expansions are remembered per index: asked again, the same index gives the same
    /// expansions without walking its dictionary; an updated index (a new dictionary) finds its
    /// own, so a word added since is found and a word gone since is not.
    #[test]
    fn remembered_expansions_belong_to_one_index() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let words = |m: &[TermMatch]| -> Vec<Vec<String>> {
            m.iter()
                .map(|m| m.expansions.iter().map(|(t, _)| t.clone()).collect())
                .collect()
        };
        let q = tok.query_terms("zorblix zorb");
        let idx = LexicalIndex::rebuild(dir, &[doc(&tok, "a", "zorblax")]).unwrap();
        let first = idx.expand(&q);
        assert_eq!(words(&first), vec![vec!["zorblax"], vec!["zorblax"]]);
        assert_eq!(
            idx.expansions.0.len(),
            3,
            "typo x2 and one prefix remembered"
        );
        assert_eq!(idx.expand(&q), first);
        // Asked again, the index answers from what it remembered, not from its dictionary.
        let planted: Arc<[String]> = vec!["planted".to_string()].into();
        idx.expansions
            .0
            .insert((ExpansionKind::Typo, "zorblix".into()), planted);
        assert_eq!(
            words(&idx.expand(&q)),
            vec![vec!["planted"], vec!["zorblax"]]
        );
        let idx = idx
            .update(dir, &[doc(&tok, "b", "zorblux")], &["a".into()], true)
            .unwrap();
        assert_eq!(
            words(&idx.expand(&q)),
            vec![vec!["zorblux"], vec!["zorblux"]]
        );
        assert_eq!(ids(&idx, &tok, "zorblix zorb"), vec!["b"]);
    }

    #[test]
    fn typos_within_the_distance_and_an_unfinished_last_word_match() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(
            tmp.path(),
            &[
                doc(&tok, "a", "pgbouncer connection pooling"),
                doc(&tok, "b", "kubernetes deployment"),
            ],
        )
        .unwrap();
        assert_eq!(ids(&idx, &tok, "pgbouncr"), vec!["a"], "distance 1");
        assert_eq!(
            ids(&idx, &tok, "kubernetis"),
            vec!["b"],
            "distance 1 at 10 chars"
        );
        assert_eq!(
            ids(&idx, &tok, "kubernets"),
            vec!["b"],
            "distance 1 at 9 chars"
        );
        assert_eq!(ids(&idx, &tok, "connection pgbou"), vec!["a"]);
        assert!(
            ids(&idx, &tok, "pgb ").is_empty(),
            "finished word: no prefix"
        );
        assert_eq!(
            ids(&idx, &tok, "kube"),
            vec!["b"],
            "prefix of the last term"
        );
    }

    #[test]
    fn damaged_segment_is_reported_as_corrupt() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(tmp.path(), &[doc(&tok, "a", "x y z")]).unwrap();
        drop(idx);
        let seg = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "seg"))
            .unwrap();
        let mut b = std::fs::read(&seg).unwrap();
        b[20] ^= 0xff;
        std::fs::write(&seg, b).unwrap();
        let err = LexicalIndex::open(tmp.path()).err().unwrap();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    }
}
