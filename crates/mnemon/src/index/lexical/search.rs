//! BM25F search over the live segments with OR semantics, MaxScore-pruned: the exact top k
//! without scoring every document a common word matches; and the term statistics synthesis reads.

use super::*;
use crate::index::fields::{FIELD_COUNT, ID_FIELD, NAME_FIELD, SUMMARY_FIELDS};
use crate::index::segment::Posting;
use crate::prefetch::prefetch;
use fst::Streamer;
use std::collections::HashMap;

/// One document's running BM25F state during a search.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct DocAcc {
    score: f32,
    matched: u32,
    exact: u32,
    titled: u32,
    in_id: u32,
    in_name: u32,
    best_idf: f32,
    /// In the segment's `touched` list (a note of a closed-up word's list is put there before
    /// any list is read, see [`MAX_CLOSED_NOTES_AHEAD`]).
    seen: bool,
    /// In a closed-up word's list, found so before any list is read: only such a note can
    /// still take weight from those lists.
    closed: bool,
}

/// A segment whose lists of words written closed up (`index::compound`) hold at most this many
/// notes has those notes taken as found before any list is read. A closed-up word is rare and
/// weighs much, and counts only for a note holding no other form of its query word: bounded
/// by it, every note of a common word's list would otherwise have to be scored, as it might
/// still take that weight from the closed-up list read last. Once its notes are found, a note
/// first met in another list cannot: the bound for new notes leaves the closed-up lists out.
pub(super) const MAX_CLOSED_NOTES_AHEAD: u64 = 4096;

/// Postings decoded ahead of scoring, and seek targets looked ahead, for [`prefetch`].
pub(super) const PREFETCH_BATCH: usize = 16;

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
pub(super) struct Scratch {
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

/// The `k`-th best score of the `touched` documents (`k >= 1`, at most `touched.len()`),
/// selected among those scoring `at_least` or more when `k` of them do, else among all.
///
/// The search passes the segment's last `k`-th best score: scores only rise, and a note let go
/// scored under the threshold, so at least `k` notes still reach it and the selection looks at
/// the few notes above it, not at every note a common word found. Unless the threshold was the
/// floor of the segments already searched, above this one's `k`-th best: notes between the two
/// may have been let go, and then the selection is over every note (its result is under that
/// floor, which the threshold keeps).
fn kth_score(
    acc: &[DocAcc],
    touched: &[u32],
    scores: &mut Vec<f32>,
    k: usize,
    at_least: f32,
) -> f32 {
    debug_assert!(k >= 1 && k <= touched.len());
    scores.clear();
    scores.extend(
        touched
            .iter()
            .map(|&d| acc[d as usize].score)
            .filter(|&s| s >= at_least),
    );
    if scores.len() < k {
        scores.clear();
        scores.extend(touched.iter().map(|&d| acc[d as usize].score));
    }
    let (_, t, _) = scores.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    *t
}

impl LexicalIndex {
    /// BM25F pseudo term frequency: field counts weighted and length-normalised per field.
    pub(super) fn field_tf(&self, tfs: &[u16; FIELD_COUNT], lens: &[u32; FIELD_COUNT]) -> f32 {
        let mut tf = 0.0f32;
        for (f, (&count, &len)) in tfs.iter().zip(lens).enumerate() {
            if count > 0 {
                let b = crate::index::scoring::FIELD_LENGTH_NORM[f];
                let norm = 1.0 - b + b * len as f32 / self.avg_field_lens[f];
                tf += crate::index::scoring::FIELD_WEIGHTS[f] * f32::from(count) / norm;
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
    /// documents already found instead of scoring most of the corpus. The lists of words written
    /// closed up (`index::compound`) come last: each counts only for a note matching its query
    /// term through no other list.
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
            /// The query term itself, or the word written closed up (`index::compound`): not a
            /// typo or prefix expansion of it.
            exact: bool,
            /// The word written closed up: it counts only for a note that holds no other form
            /// of the query term (a note writing `on-call` holds `call` and `oncall`, and
            /// matches `call` once). Read after every other list, so what the note holds is
            /// known.
            closed: bool,
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
                    // Weight 1: the word itself, or the word written closed up
                    // (`index::compound`); typo and prefix expansions weigh less.
                    exact: *term == m.term || *weight >= 1.0,
                    closed: *term != m.term && *weight >= 1.0,
                    at,
                });
            }
        }
        terms.sort_by(|a, b| {
            a.closed
                .cmp(&b.closed)
                .then_with(|| b.w.total_cmp(&a.w))
                .then_with(|| a.term.cmp(b.term))
        });
        // rest[j]: the most the lists j.. can add to one document; rest_open[j]: the same
        // without the closed-up lists, for a note in none of them.
        let mut rest = vec![0.0f32; terms.len() + 1];
        let mut rest_open = vec![0.0f32; terms.len() + 1];
        for j in (0..terms.len()).rev() {
            let bound = terms[j].w * (crate::index::scoring::BM25_K1 + 1.0);
            rest[j] = rest[j + 1] + bound;
            rest_open[j] = rest_open[j + 1] + if terms[j].closed { 0.0 } else { bound };
        }
        let closed_from = terms.iter().position(|t| t.closed);
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
                // The notes of the closed-up lists, found ahead when they are few: a note first
                // met in another list is then bounded without them.
                let closed_ahead = closed_from.is_some_and(|first| {
                    let notes: u64 = terms[first..]
                        .iter()
                        .filter_map(|t| offsets[t.at + si].map(|o| l.live_df_at(o)))
                        .sum();
                    notes <= MAX_CLOSED_NOTES_AHEAD
                });
                if closed_ahead && let Some(first) = closed_from {
                    for t in &terms[first..] {
                        let Some(postings) = offsets[t.at + si].and_then(|o| l.seg.postings_at(o))
                        else {
                            continue;
                        };
                        for p in postings {
                            let d = p.doc as usize;
                            if l.deleted.get(d).copied().unwrap_or(true) {
                                continue;
                            }
                            if let Some(a) = acc.get_mut(d) {
                                a.closed = true;
                                if !a.seen {
                                    a.seen = true;
                                    touched.push(p.doc);
                                }
                            }
                        }
                    }
                }
                let rest_new = if closed_ahead { &rest_open } else { &rest };
                // This segment's `limit`-th best score so far (it only rises).
                let mut seg_kth = f32::NEG_INFINITY;
                for (
                    j,
                    SearchTerm {
                        qi,
                        w,
                        idf,
                        exact,
                        closed,
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
                        seg_kth = kth_score(acc, touched, kth, limit.max(1), seg_kth);
                        seg_kth.max(done_kth)
                    };
                    let admit_new = rest_new[j] >= threshold;
                    if !admit_new && touched.is_empty() {
                        break;
                    }
                    let add = |p: Posting, a: &mut DocAcc| {
                        let bit = 1u32 << (qi % 32);
                        // Where the note holds the term, whether or not it counts for the
                        // score: a closed-up word its id writes is the id's word all the same.
                        a.in_id |= if p.tfs[ID_FIELD] > 0 { bit } else { 0 };
                        a.in_name |= if p.tfs[NAME_FIELD] > 0 { bit } else { 0 };
                        if *closed && a.matched & bit != 0 {
                            return;
                        }
                        let tf = self.field_tf(&p.tfs, &l.seg.field_lens(p.doc));
                        a.score += w * tf * (crate::index::scoring::BM25_K1 + 1.0)
                            / (crate::index::scoring::BM25_K1 + tf);
                        a.matched |= bit;
                        if *exact {
                            a.exact |= bit;
                            if p.tfs[..SUMMARY_FIELDS].iter().any(|&c| c > 0) {
                                a.titled |= bit;
                            }
                        }
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
                                if !a.seen {
                                    a.seen = true;
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
                        // A note that cannot reach the threshold now never will (the threshold
                        // only rises, what the lists left can add only falls): it is let go, so
                        // that the lists after this one, and the threshold, look at fewer.
                        sorted.clear();
                        for &d in touched.iter() {
                            let a = &mut acc[d as usize];
                            // With the closed-up lists' notes found ahead, a note in none of them
                            // can take nothing from those lists.
                            let left = if closed_ahead && !a.closed {
                                rest_open[j]
                            } else {
                                rest[j]
                            };
                            if a.score + left >= threshold {
                                sorted.push(d);
                            } else {
                                *a = DocAcc::default();
                            }
                        }
                        // `touched` is kept in doc order from here: a few sorted runs (this
                        // order, then each list's new notes), which a stable sort merges in
                        // linear time.
                        sorted.sort();
                        touched.clear();
                        touched.extend_from_slice(sorted);
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
                // The cut: only a note scoring at least the segment's last `limit`-th best score
                // can make it (scores only rose since), so the selection looks at those alone.
                // When fewer reach it (see `kth_score`), the notes under it are under the
                // floor of the segments already searched too, and no hit either.
                sorted.clear();
                sorted.extend(
                    touched
                        .iter()
                        .copied()
                        .filter(|&d| acc[d as usize].score >= seg_kth),
                );
                if sorted.len() > limit {
                    // Equal scores are ordered by id, as the final list is: which of them makes
                    // the cut must not depend on where a note sits in which segment.
                    sorted.select_nth_unstable_by(limit, |a, b| {
                        acc[*b as usize]
                            .score
                            .total_cmp(&acc[*a as usize].score)
                            .then_with(|| l.seg.id(*a).cmp(l.seg.id(*b)))
                    });
                    sorted.truncate(limit);
                }
                for &doc in sorted.iter() {
                    let a = acc[doc as usize];
                    // A note found ahead that no list scored (its closed-up word counted for
                    // nothing) is no hit.
                    if a.matched != 0 && a.score >= done_kth {
                        done_scores.push(a.score);
                        hits.push(LexHit {
                            id: l.seg.id(doc),
                            score: a.score,
                            matched: a.matched,
                            exact: a.exact,
                            titled: a.titled,
                            in_id: a.in_id,
                            in_name: a.in_name,
                            max_idf: a.best_idf,
                        });
                    }
                }
                for &doc in touched.iter() {
                    acc[doc as usize] = DocAcc::default();
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

    /// Live documents holding `term` when they are at most `cap`, else some number above
    /// `cap`: what co-occurrence asks of every word of a note (is it rare enough to probe?)
    /// without counting the live holders of a common word one by one in a segment with
    /// deletions (a walk over most of the corpus's postings for each common word).
    pub fn doc_freq_capped(&self, term: &str, cap: u64) -> u64 {
        let over = cap.saturating_add(1);
        let mut live = 0u64;
        for l in &self.segments {
            let Some(off) = l.seg.term_offset(term.as_bytes()) else {
                continue;
            };
            // At most all of the segment's deleted documents are among the term's.
            let surely_live = l
                .seg
                .doc_freq_at(off)
                .saturating_sub(l.entry.deleted.len() as u64);
            if live.saturating_add(surely_live) > cap {
                return over;
            }
            live += l.live_df_at(off);
            if live > cap {
                return over;
            }
        }
        live
    }

    /// Whether a live note writes a word of ASCII letters whose index term is `term` (its stem:
    /// `zoe` for `Zoës`) with a capital letter somewhere (its name mark, see
    /// `index::fields::NAME_MARK`).
    pub fn writes_capitalised(&self, term: &str) -> bool {
        self.capitalised_df(term) > 0
    }

    /// How many live notes write a word whose index term is `term` with a capital letter
    /// somewhere (see [`LexicalIndex::writes_capitalised`]).
    pub fn capitalised_df(&self, term: &str) -> u64 {
        self.df(crate::index::fields::name_mark(term).as_bytes())
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Selecting among the notes at or above a floor that `k` of them reach gives the `k`-th
        /// best score of them all, as the search's pruning needs it to, and looks at those notes
        /// alone; above a floor fewer reach, at every note.
        #[test]
        fn the_kth_score_above_a_floor_is_the_kth_score_of_all(
            scores in proptest::collection::vec(0u16..50, 1..200),
            k_seed in any::<usize>(),
            floor_seed in any::<usize>(),
        ) {
            let acc: Vec<DocAcc> = scores
                .iter()
                .map(|&s| DocAcc { score: f32::from(s) / 4.0, ..DocAcc::default() })
                .collect();
            let touched: Vec<u32> = (0..acc.len() as u32).rev().collect();
            let k = 1 + k_seed % touched.len();
            let mut sorted: Vec<f32> = acc.iter().map(|a| a.score).collect();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let want = sorted[k - 1];
            // Any floor at or under the k-th best: the k-th best of an earlier moment.
            let floor = sorted[k - 1 + floor_seed % (sorted.len() - k + 1)];
            let mut buf = Vec::new();
            prop_assert_eq!(kth_score(&acc, &touched, &mut buf, k, f32::NEG_INFINITY), want);
            prop_assert_eq!(buf.len(), touched.len());
            prop_assert_eq!(kth_score(&acc, &touched, &mut buf, k, floor), want);
            let above = sorted.iter().filter(|&&s| s >= floor).count();
            prop_assert_eq!(buf.len(), above);
            // A floor over the k-th best (notes let go under another segment's floor).
            let over = want + 0.5;
            prop_assert_eq!(kth_score(&acc, &touched, &mut buf, k, over), want);
            prop_assert_eq!(buf.len(), touched.len());
        }
    }
}
