//! The live lexical index: the segments a manifest names, with their deletions, searched with
//! BM25F under OR semantics; updated by writing a small segment for changed notes and marking
//! their old versions deleted, and kept small by merging segments (tantivy/Lucene style).

mod expand;
mod search;
mod segments;

use expand::ExpansionCache;
pub(crate) use expand::build_typo_builders;
pub use expand::{MAX_FUZZY_TERM_CHARS, warm_typo_builders};
use segments::{FS, deleted_list, merge_if_needed, merge_segments, publish, write_segment};

use super::fields::{DocTerms, FIELD_COUNT};
use super::manifest::{Manifest, SegmentEntry};
use super::segment::{Segment, SegmentBytes, build_segment};
use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;

/// Above this many segments, small ones are merged.
pub const MAX_LIVE_SEGMENTS: usize = 8;
/// A segment with more than this fraction of its docs deleted is merged away.
pub const MAX_DELETED_FRACTION: f32 = 0.5;
/// Temp files in `index/` older than this are leftovers of a crashed writer.
pub const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

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
    /// Bit i set when query term i matched as it is in the note's id, name, description or
    /// tags: what the note says it is about.
    pub titled: u32,
    /// Bit i set when query term i (or one of its expansions) is a word of the note's id: a
    /// question can name the note by its id only with those (`recall::evidence`).
    pub in_id: u32,
    /// Bit i set when query term i (or one of its expansions) is a word of the note's name.
    pub in_name: u32,
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

impl TermMatch {
    /// Whether live notes hold the term as it is (not only typo or prefix expansions of it).
    pub fn held_as_is(&self) -> bool {
        self.expansions.iter().any(|(t, _)| *t == self.term)
    }

    /// Whether `term` is this query term or one of the dictionary terms it matches.
    pub fn answers(&self, term: &str) -> bool {
        self.term == term || self.expansions.iter().any(|(t, _)| t == term)
    }

    /// Match `term` (which `df` live notes hold) as the word itself, weight 1: another way the
    /// notes write it (closed up, `index::compound`; another part of speech, `index::forms`).
    /// Of a word the memory lacks as written it becomes the first match, whose frequency
    /// weighs the word. A term already among the expansions is not added twice.
    pub fn add_same_word(&mut self, term: String, df: u64) {
        if self.expansions.iter().any(|(t, _)| *t == term) {
            return;
        }
        if self.held_as_is() {
            self.expansions.push((term, 1.0));
        } else {
            self.expansions.insert(0, (term, 1.0));
            self.first_df = df;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::expand::ExpansionKind;
    use super::*;
    use crate::index::tokenize::Tokenizer;

    fn doc(tok: &Tokenizer, id: &str, body: &str) -> DocTerms {
        let note = crate::notes::parse_note(id, body.as_bytes());
        DocTerms::from_note(tok, &note)
    }

    fn ids(idx: &LexicalIndex, tok: &Tokenizer, q: &str) -> Vec<String> {
        let m = idx.expand(&tok.query_terms(q), tok);
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

    /// The capped document frequency equals the counted one up to its cap and is above the
    /// cap past it, in segments with and without deletions.
    #[test]
    fn doc_freq_capped_is_the_live_count_up_to_its_cap() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let words = ["alpha", "beta", "gamma", "delta"];
        // Note i holds the first (i % 4) + 1 words: alpha in all, delta in a quarter.
        let docs: Vec<DocTerms> = (0..40)
            .map(|i| doc(&tok, &format!("n{i}"), &words[..=(i % 4)].join(" ")))
            .collect();
        let mut idx = LexicalIndex::rebuild(dir, &docs).unwrap();
        let check = |idx: &LexicalIndex| {
            for w in words.iter().chain(&["absent"]) {
                let term = tok.query_terms(w).terms[0].term.clone();
                let live = idx.doc_freq(&term);
                for cap in 0..=45 {
                    let capped = idx.doc_freq_capped(&term, cap);
                    if live <= cap {
                        assert_eq!(capped, live, "{w} cap {cap}");
                    } else {
                        assert!(capped > cap, "{w} cap {cap}: {capped}");
                    }
                }
            }
        };
        check(&idx);
        // Deletions in the first segment and a second segment holding new versions.
        let edited: Vec<DocTerms> = (0..12)
            .map(|i| doc(&tok, &format!("n{i}"), "delta epsilon"))
            .collect();
        let removed: Vec<String> = (30..36).map(|i| format!("n{i}")).collect();
        idx = idx.update(dir, &edited, &removed, false).unwrap();
        assert!(idx.segment_count() >= 2);
        check(&idx);
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
        let first = idx.expand(&q, &tok);
        assert_eq!(words(&first), vec![vec!["zorblax"], vec!["zorblax"]]);
        assert_eq!(
            idx.expansions.0.len(),
            3,
            "typo x2 and one prefix remembered"
        );
        assert_eq!(idx.expand(&q, &tok), first);
        // Asked again, the index answers from what it remembered, not from its dictionary.
        let planted: Arc<[String]> = vec!["planted".to_string()].into();
        idx.expansions
            .0
            .insert((ExpansionKind::Typo, "zorblix".into()), planted);
        assert_eq!(
            words(&idx.expand(&q, &tok)),
            vec![vec!["planted"], vec!["zorblax"]]
        );
        let idx = idx
            .update(dir, &[doc(&tok, "b", "zorblux")], &["a".into()], true)
            .unwrap();
        assert_eq!(
            words(&idx.expand(&q, &tok)),
            vec![vec!["zorblux"], vec!["zorblux"]]
        );
        assert_eq!(ids(&idx, &tok, "zorblix zorb"), vec!["b"]);
    }

    /// A typo that changes the stem's form, not just one of its letters: `flakey` is two edits
    /// from `flaki` (the stem of `flaky`), but `flaky` is `flakey` with a letter left out.
    #[test]
    fn a_typo_that_changes_the_stem_matches_through_the_word_with_a_letter_left_out() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(
            tmp.path(),
            &[
                doc(&tok, "a", "fix flaky tests"),
                doc(&tok, "b", "kubernetes deployment"),
            ],
        )
        .unwrap();
        assert_eq!(tok.query_terms("flakey").terms[0].term, "flakey");
        assert_eq!(ids(&idx, &tok, "flakey tests"), vec!["a"]);
        let m = idx.expand(&tok.query_terms("flakey "), &tok);
        assert_eq!(
            m[0].expansions,
            vec![(
                "flaki".to_string(),
                crate::index::scoring::FUZZY_TERM_WEIGHT
            )]
        );
        // The first letter is never the one left out (as for edit-distance typos).
        assert!(ids(&idx, &tok, "xflaky ").is_empty());
    }

    /// Two neighbouring letters swapped (`failvoer`) where the stemmer then cuts another suffix:
    /// the typo's stem (`failvoer`) is three edits from the word's (`failov`), the word with the
    /// two letters swapped back is the word.
    #[test]
    fn a_typo_that_swaps_two_letters_matches_through_the_word_swapped_back() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(
            tmp.path(),
            &[
                doc(&tok, "a", "redis failover runbook"),
                doc(&tok, "b", "kubernetes deployment"),
            ],
        )
        .unwrap();
        assert_eq!(tok.query_terms("failvoer").terms[0].term, "failvoer");
        assert_eq!(tok.query_terms("failover").terms[0].term, "failov");
        let m = idx.expand(&tok.query_terms("failvoer "), &tok);
        assert_eq!(
            m[0].expansions,
            vec![(
                "failov".to_string(),
                crate::index::scoring::FUZZY_TERM_WEIGHT
            )]
        );
        assert_eq!(ids(&idx, &tok, "failvoer steps"), vec!["a"]);
        // The first letter stays where it is (as for edit-distance typos).
        assert!(ids(&idx, &tok, "afilover ").is_empty());
    }

    /// A letter left out (`validaton`, `encodng`, and near the start, `elction`): the stemmer no
    /// longer sees the suffix, so the typo's stem (`validaton`) is four edits from the word's
    /// (`valid`); the word with the letter put back is the word.
    #[test]
    fn a_typo_that_leaves_out_a_letter_matches_through_the_word_with_it_put_back() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(
            tmp.path(),
            &[
                doc(&tok, "a", "schema validation of notes"),
                doc(&tok, "b", "video encoding presets"),
                doc(&tok, "c", "new tier pricing"),
                doc(&tok, "d", "ticket validatons2"),
                doc(&tok, "e", "election night results"),
            ],
        )
        .unwrap();
        // A vowel left out of the first half of the word.
        assert_eq!(ids(&idx, &tok, "elction "), vec!["e"]);
        assert_eq!(tok.query_terms("validaton").terms[0].term, "validaton");
        assert_eq!(tok.query_terms("validation").terms[0].term, "valid");
        let m = idx.expand(&tok.query_terms("validaton "), &tok);
        assert_eq!(
            m[0].expansions,
            vec![(
                "valid".to_string(),
                crate::index::scoring::FUZZY_TERM_WEIGHT
            )]
        );
        // A term one edit away with other digits (`validatons2`) is no closer match that would
        // stop the search.
        assert_eq!(ids(&idx, &tok, "validaton "), vec!["a"]);
        assert_eq!(ids(&idx, &tok, "encodng "), vec!["b"]);
        // A word whose stem is under five letters is read as written: "tires" is a word, not
        // a typo of "tiers".
        assert!(ids(&idx, &tok, "tires ").is_empty());
    }

    /// Regression: "srvices datastores overview" found nothing. A letter left out right after
    /// the first (`srvices`) was never put back: the search began one letter later. Its stem
    /// (`srvice`) is two edits from the word's (`servic`).
    #[test]
    fn a_letter_left_out_right_after_the_first_is_put_back() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(
            tmp.path(),
            &[
                doc(&tok, "a", "services and datastores"),
                doc(&tok, "b", "video encoding presets"),
            ],
        )
        .unwrap();
        assert_eq!(tok.query_terms("srvices").terms[0].term, "srvice");
        assert_eq!(ids(&idx, &tok, "srvices "), vec!["a"]);
        // The first letter is still never changed.
        assert!(ids(&idx, &tok, "ervices ").is_empty());
    }

    /// Regression: "rate limting" and "montly biling close" found nothing. The stemmer cuts the
    /// typo short (`limting` -> `limt`, `biling` -> `bile`, `montly` -> `mont`), under the five
    /// letters a typo is looked for in, so the word with its letter put back was never tried.
    #[test]
    fn a_letter_left_out_of_a_word_whose_typo_stems_short_is_put_back() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(
            tmp.path(),
            &[
                doc(&tok, "a", "rate limiting per tenant"),
                doc(&tok, "b", "monthly billing close"),
                doc(&tok, "c", "integration testing"),
                doc(&tok, "d", "tv show schedule"),
                doc(&tok, "e", "contactless fare capping"),
                doc(&tok, "f", "contact list"),
                doc(&tok, "g", "error handling"),
                doc(&tok, "h", "we had lunch"),
            ],
        )
        .unwrap();
        // A double letter typed once, which the stemmer takes off the word (`capping` -> `cap`).
        for (typo, note) in [
            ("limting", "a"),
            ("biling", "b"),
            ("montly", "b"),
            ("tesing", "c"),
            ("caping", "e"),
            ("hadling", "g"),
        ] {
            assert!(
                tok.query_terms(typo).terms[0].term.chars().count() < 5,
                "{typo}"
            );
            assert_eq!(ids(&idx, &tok, &format!("{typo} ")), vec![note], "{typo}");
        }
        // A vowel is not doubled: `hadliing` would stem as `had`, and `hadling` found "we had".
        // A word under six letters is read as written: `shoes` is a word, not `showes`.
        assert!(ids(&idx, &tok, "shoes ").is_empty());
        // A letter put back is tried even when the typo's stem (`contactl`) is one edit from
        // another term (`contact`).
        assert!(ids(&idx, &tok, "contactles ").iter().any(|n| n == "e"));
    }

    #[test]
    fn a_letter_typed_twice_in_a_word_whose_typo_stems_short_is_typed_once() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(
            tmp.path(),
            &[
                doc(&tok, "a", "writing the release notes"),
                doc(&tok, "b", "picture framing shop"),
            ],
        )
        .unwrap();
        assert!(tok.query_terms("writting").terms[0].term.chars().count() < 5);
        assert_eq!(ids(&idx, &tok, "writting "), vec!["a"]);
        // Two letters are not swapped back in such a word: `farming` is a word, not `framing`.
        assert!(tok.query_terms("farming").terms[0].term.chars().count() < 5);
        assert!(ids(&idx, &tok, "farming ").is_empty());
    }

    #[test]
    fn a_wrong_letter_where_the_stemmer_no_longer_finds_the_suffix_is_put_right() {
        let tok = Tokenizer::new();
        let tmp = tempfile::tempdir().unwrap();
        let idx = LexicalIndex::rebuild(
            tmp.path(),
            &[
                doc(&tok, "a", "api key rotation"),
                doc(&tok, "b", "integration tests"),
                doc(&tok, "c", "schema migration review"),
                doc(&tok, "d", "write the report"),
            ],
        )
        .unwrap();
        // A key next to the one meant (`p` for `o`, `w` for `e`) or another vowel (`i` for `o`):
        // the typo's stem is the whole word, two edits or more from the stem of the word meant.
        // Among the first letters too (`rptation`), where only letters some term goes on with
        // are tried.
        for (typo, note) in [
            ("rotatipn", "a"),
            ("intwgration", "b"),
            ("migratiin", "c"),
            ("rptation", "a"),
            ("ibtegration", "b"),
        ] {
            let stem = tok.query_terms(typo).terms[0].term.clone();
            assert!(stem.chars().count() >= 6, "{typo}");
            assert_eq!(ids(&idx, &tok, &format!("{typo} ")), vec![note], "{typo}");
        }
        // Two wrong letters are not one.
        assert!(ids(&idx, &tok, "rotatxyn ").is_empty());
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
