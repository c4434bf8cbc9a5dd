//! The near-duplicate search: which pairs of sketches resemble each other enough to call the two
//! notes copies. Locality-sensitive hashing finds the candidates (two sketches that agree on both
//! slots of any of [`BANDS`] bands), then each candidate's [`Resemblance`] decides.
//!
//! A pair of notes whose word pairs have Jaccard similarity J agrees on a band with probability
//! J², and on at least one of the 64 bands with probability 1 - (1 - J²)^64: 0.77 at J = 0.15,
//! 0.93 at 0.2, 0.99 at 0.27. The decision needs J >= [`NEAR_DUPLICATE_JACCARD`], so almost every
//! pair that passes it is a candidate, and pairs that share only a topic (J well under 0.1) seldom
//! are: the search costs a sort per band, not a comparison per pair of notes.

use super::sketch::{SKETCH_SLOTS, Sketch};
use rayon::prelude::*;

/// Slots per band.
pub const BAND_ROWS: usize = 2;
/// Bands per sketch.
pub const BANDS: usize = SKETCH_SLOTS / BAND_ROWS;
/// Fewest distinct word pairs a note needs to be called a copy of another: shorter notes ("TODO",
/// a title alone) say too little to be told apart from a coincidence.
pub const MIN_PAIRS: u32 = 5;
/// Least overlap (share of the shorter note's word pairs found in the other) of a near-duplicate.
pub const NEAR_DUPLICATE_OVERLAP: f32 = 0.5;
/// Least Jaccard similarity of a near-duplicate: a short note whose words all occur in a much
/// longer one overlaps it fully, but is a summary of it, not a copy.
pub const NEAR_DUPLICATE_JACCARD: f32 = 0.2;
/// Least overlap of a note a new note may replace ([`Resemblance::is_related`]): the same subject
/// told with much of the same wording, short of a copy.
pub const RELATED_OVERLAP: f32 = 0.3;
/// Least Jaccard similarity of such a note.
pub const RELATED_JACCARD: f32 = 0.1;
/// Largest bucket (sketches agreeing on one band) whose members are all compared with each
/// other. In a bigger one each member is compared with the next only: such a bucket comes from
/// a word pair that most notes have ("of the"), which says nothing about copying, yet a group of
/// identical notes still pairs up, each with the next (and other bands pair the rest). A bucket
/// costs linear, never quadratic, work beyond this size.
pub const MAX_FULL_BUCKET: usize = 32;

/// How much two notes' word pairs coincide, estimated from their sketches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resemblance {
    /// Jaccard similarity of the two pair sets.
    pub jaccard: f32,
    /// Share of the shorter note's pairs that the other has (the similarity reported).
    pub overlap: f32,
    /// Distinct pairs of the shorter note.
    pub shorter_pairs: u32,
}

impl Resemblance {
    /// The two notes say nearly the same thing.
    pub fn is_near_duplicate(&self) -> bool {
        self.shorter_pairs >= MIN_PAIRS
            && self.overlap >= NEAR_DUPLICATE_OVERLAP
            && self.jaccard >= NEAR_DUPLICATE_JACCARD
    }

    /// The two notes share much of their wording, short of copies (a new note may replace the
    /// other).
    pub fn is_related(&self) -> bool {
        self.shorter_pairs >= MIN_PAIRS
            && self.overlap >= RELATED_OVERLAP
            && self.jaccard >= RELATED_JACCARD
    }
}

/// The resemblance of two sketches. With `J` the estimated Jaccard similarity and `n`, `m` the
/// pair counts, the intersection is `J (n + m) / (1 + J)`; the overlap is that over the smaller
/// count, at most 1.
pub fn resemblance(a: &Sketch, b: &Sketch) -> Resemblance {
    let jaccard = a.jaccard(b);
    let shorter_pairs = a.pairs.min(b.pairs);
    let overlap = if shorter_pairs == 0 {
        0.0
    } else {
        let inter = jaccard * (a.pairs as f32 + b.pairs as f32) / (1.0 + jaccard);
        (inter / shorter_pairs as f32).min(1.0)
    };
    Resemblance {
        jaccard,
        overlap,
        shorter_pairs,
    }
}

/// Every pair `(i, j, resemblance)` with `i < j` of `sketches` that [`Resemblance::is_near_duplicate`]
/// (as found by the band search: a pair near the threshold may be missed, see the module docs),
/// most similar first, ties by index.
pub fn near_duplicate_pairs(sketches: &[Sketch]) -> Vec<(u32, u32, Resemblance)> {
    let eligible: Vec<u32> = (0..sketches.len())
        .filter(|&i| sketches[i].pairs >= MIN_PAIRS)
        .filter_map(|i| u32::try_from(i).ok())
        .collect();
    let mut found: Vec<(u32, u32, Resemblance)> = (0..BANDS)
        .into_par_iter()
        .flat_map_iter(|band| {
            let mut keyed: Vec<(u32, u32)> = eligible
                .iter()
                .map(|&i| {
                    let s = &sketches[i as usize].slots;
                    let key =
                        u32::from(s[band * BAND_ROWS]) << 16 | u32::from(s[band * BAND_ROWS + 1]);
                    (key, i)
                })
                .collect();
            keyed.sort_unstable();
            let mut found = Vec::new();
            for bucket in keyed.chunk_by(|x, y| x.0 == y.0) {
                let peers = if bucket.len() <= MAX_FULL_BUCKET {
                    bucket.len()
                } else {
                    1
                };
                for (x, &(_, i)) in bucket.iter().enumerate() {
                    for &(_, j) in bucket.iter().skip(x + 1).take(peers) {
                        // A pair agreeing on several bands is compared once per band: cheaper
                        // than remembering which pairs were compared.
                        let r = resemblance(&sketches[i as usize], &sketches[j as usize]);
                        if r.is_near_duplicate() {
                            found.push((i, j, r));
                        }
                    }
                }
            }
            found
        })
        .collect();
    found.sort_by_key(|x| (x.0, x.1));
    found.dedup_by(|x, y| (x.0, x.1) == (y.0, y.1));
    found.sort_by(|x, y| {
        y.2.overlap
            .total_cmp(&x.2.overlap)
            .then(y.2.jaccard.total_cmp(&x.2.jaccard))
            .then((x.0, x.1).cmp(&(y.0, y.1)))
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(s: &str) -> Sketch {
        Sketch::of_note(None, None, s)
    }

    const POOL: &str = "The connection pool holds twenty connections per worker. At month end the \
        billing batch opens a connection per invoice and the pool runs dry, so requests wait \
        thirty seconds and time out. We raised the pool to forty and made the batch reuse one \
        connection. Watch the pool wait metric on the database dashboard.";

    #[test]
    fn a_copy_with_a_sentence_dropped_and_one_reworded_is_a_near_duplicate() {
        let copy = "The connection pool holds twenty connections per worker. At month end the \
            billing batch opens one connection for each invoice and the pool runs dry, so \
            requests wait thirty seconds and time out. We raised the pool to forty and made the \
            batch reuse one connection.";
        let r = resemblance(&sketch(POOL), &sketch(copy));
        assert!(r.is_near_duplicate(), "{r:?}");
        assert!(r.overlap > 0.7, "{r:?}");
    }

    #[test]
    fn a_note_on_the_same_topic_in_other_words_is_not() {
        let sibling = "Pool sizing: each worker gets twenty database connections by default. \
            Size the pool from the worker count times the peak concurrent queries, and keep \
            headroom for migrations. The database dashboard shows the pool wait time.";
        let r = resemblance(&sketch(POOL), &sketch(sibling));
        assert!(!r.is_near_duplicate(), "{r:?}");
        assert!(r.overlap < 0.3, "{r:?}");
    }

    #[test]
    fn a_short_summary_inside_a_long_note_is_not_a_copy_of_it() {
        let summary = "the pool runs dry at month end";
        let r = resemblance(&sketch(POOL), &sketch(summary));
        assert!(r.overlap > 0.6, "{r:?}");
        assert!(!r.is_near_duplicate(), "{r:?}");
    }

    #[test]
    fn the_band_search_finds_the_copies_among_unrelated_notes_and_only_them() {
        // 300 notes of 60 words each drawn from one vocabulary of 500 words: they share every
        // word, but few word pairs.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next_word = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            format!("t{}", state % 500)
        };
        let mut notes: Vec<String> = (0..300)
            .map(|_| (0..60).map(|_| next_word()).collect::<Vec<_>>().join(" "))
            .collect();
        notes.push(POOL.to_string());
        notes.push(POOL.replace(
            "We raised the pool to forty",
            "Since then the pool is forty",
        ));
        let sketches: Vec<Sketch> = notes.iter().map(|n| sketch(n)).collect();
        let found = near_duplicate_pairs(&sketches);
        let pairs: Vec<(u32, u32)> = found.iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(pairs, vec![(300, 301)]);
    }

    #[test]
    fn many_identical_notes_are_each_paired_with_a_bounded_number_of_peers() {
        let sketches: Vec<Sketch> = (0..200).map(|_| sketch(POOL)).collect();
        let found = near_duplicate_pairs(&sketches);
        // A bucket this big pairs each note with the next one only, never with all 199 others.
        assert_eq!(found.len(), 199);
        assert!(found.iter().all(|f| f.2.overlap == 1.0));
    }
}
