//! How a lexical match scores: the BM25F parameters of the index's search, and what a query word
//! matched through typo or prefix expansion weighs. The ranking above the index (evidence, the
//! walk, priors) is in `ranking`; these are the index's own, so that it imports nothing above it.

use super::fields::FIELD_COUNT;

/// BM25 term-frequency saturation: higher lets repeated words count longer.
pub const BM25_K1: f32 = 1.2;
/// Field weights (id/slug, name, description, tags, body): a word in the title says more about
/// the note than the same word deep in the body.
pub const FIELD_WEIGHTS: [f32; FIELD_COUNT] = [2.5, 3.0, 1.8, 2.0, 1.0];
/// Length normalisation per field: 1 penalises long fields fully, 0 not at all. Short fields
/// (ids, names, tags) are nearly constant in length, so normalising them adds only noise.
pub const FIELD_LENGTH_NORM: [f32; FIELD_COUNT] = [0.2, 0.3, 0.5, 0.2, 0.75];
/// A query term that matched only through typo tolerance counts this much: a near miss must not
/// beat an exact hit.
pub const FUZZY_TERM_WEIGHT: f32 = 0.6;
/// A typo-tolerant match keeps this many leading characters of the query term exact: typos there
/// are rare, and it bounds the dictionary walk to one branch of the first character instead of
/// the whole dictionary.
pub const FUZZY_PREFIX_CHARS: usize = 1;
/// A last query term matched as a prefix counts this much.
pub const PREFIX_TERM_WEIGHT: f32 = 0.7;
/// At most this many dictionary terms are taken per fuzzy or prefix expansion (cost bound).
pub const MAX_EXPANSIONS_PER_TERM: usize = 8;
