//! Every ranking constant in one place. Each says what it trades off; nothing in recall uses an
//! inline number instead. Changing one changes ranking for every query set alike: tune on
//! mechanisms, never on individual queries.

use crate::notes::{EdgeKind, NoteType, Provenance};

// ---- Lexical (BM25F) -------------------------------------------------------------------------

/// BM25 term-frequency saturation: higher lets repeated words count longer.
pub const BM25_K1: f32 = 1.2;
/// Field weights (id/slug, name, description, tags, body): a word in the title says more about
/// the note than the same word deep in the body.
pub const FIELD_WEIGHTS: [f32; 5] = [2.5, 3.0, 1.8, 2.0, 1.0];
/// Length normalisation per field: 1 penalises long fields fully, 0 not at all. Short fields
/// (ids, names, tags) are nearly constant in length, so normalising them adds only noise.
pub const FIELD_LENGTH_NORM: [f32; 5] = [0.2, 0.3, 0.5, 0.2, 0.75];
/// A query term that matched only through typo tolerance counts this much: a near miss must not
/// beat an exact hit.
pub const FUZZY_TERM_WEIGHT: f32 = 0.6;
/// A typo-tolerant match keeps this many leading characters of the query term exact: typos there
/// are rare, and it bounds the dictionary walk to one branch (10k notes: 2 ms -> 0.1 ms per term).
pub const FUZZY_PREFIX_CHARS: usize = 1;
/// A last query term matched as a prefix counts this much.
pub const PREFIX_TERM_WEIGHT: f32 = 0.7;
/// At most this many dictionary terms are taken per fuzzy or prefix expansion (cost bound).
pub const MAX_EXPANSIONS_PER_TERM: usize = 8;

// ---- Score floor -----------------------------------------------------------------------------

/// A direct hit must match at least one query term with an idf this high (BM25 idf
/// `ln(1 + (N - df + 0.5) / (df + 0.5))`; 0.45 is a term in about 60 % of the notes): a query that
/// shares only a stop word or one very common word with the corpus returns nothing.
pub const MIN_MATCH_IDF: f32 = 0.45;
/// A direct hit needs at least this BM25F score (a floor against single weak matches in long
/// notes). Lower admits weaker matches.
pub const MIN_LEXICAL_SCORE: f32 = 0.5;
/// A direct hit needs at least this fraction of the best hit's lexical score: cuts the long tail
/// of one-word matches under a strong hit. Lower returns more, noisier direct hits.
pub const MIN_RELATIVE_LEXICAL: f32 = 0.2;
/// A note recalled before stays a direct hit down to this fraction of the best hit's score: past
/// use is evidence that a weak match is still the note meant (this is how reinforcement reaches
/// notes the query alone ranks below the floor). Never below `MIN_LEXICAL_SCORE`.
pub const MIN_RELATIVE_LEXICAL_USED: f32 = 0.05;
/// With anchors, a lexical hit outside the anchors' neighbourhood needs at least this fraction of
/// the best hit's score: the anchors say what the question is about.
pub const MIN_UNANCHORED_RELATIVE: f32 = 0.5;
/// A direct hit that the walk from another seed also reaches gets this share of that path's
/// score on top: two signals agreeing outrank one.
pub const GRAPH_SUPPORT_WEIGHT: f32 = 0.5;
/// Final results below this score are dropped (`--min-score` overrides it).
pub const DEFAULT_MIN_SCORE: f32 = 0.05;
/// At most this many direct hits seed the graph walk: more widens recall, costs time.
pub const MAX_SEEDS: usize = 24;

// ---- Graph walk ------------------------------------------------------------------------------

/// Default BFS depth from the direct hits.
pub const DEFAULT_DEPTH: u8 = 2;
/// Deepest BFS allowed (a limit on everything).
pub const MAX_DEPTH: u8 = 5;
/// Score kept per hop: lower keeps neighbours further below their seed.
pub const HOP_DECAY: f32 = 0.5;
/// Walking an edge against its direction (from its target back to its source) keeps this much of
/// the forward weight: a note that links here is related, a little less than one linked from here.
pub const REVERSE_EDGE_FACTOR: f32 = 0.85;
/// Nodes expanded by one walk at most, best first (cost bound: each expansion reads two edge
/// lists from the store).
pub const MAX_EXPANSIONS: usize = 96;
/// Edges followed from one node at most (hubs with thousands of links are sampled by weight).
pub const MAX_FANOUT: usize = 64;

/// Out-degree up to which an edge's source is not a hub.
pub const HUB_OUT_DEGREE: u32 = 10;

/// Damping of an edge by its source's out-degree, `min(1, sqrt(HUB_OUT_DEGREE / degree))`: a note
/// that links to everything (an index, a map of content) says little about each target.
pub fn hub_damping(source_out_degree: u32) -> f32 {
    if source_out_degree <= HUB_OUT_DEGREE {
        1.0
    } else {
        (HUB_OUT_DEGREE as f32 / source_out_degree as f32).sqrt()
    }
}

/// The walk's weight of one edge followed in its direction: kind, provenance, confidence and hub
/// damping, multiplied in this order (the graph keeps it per edge, computed once; followed
/// backwards it is multiplied by [`REVERSE_EDGE_FACTOR`]).
pub fn edge_weight(
    kind: EdgeKind,
    provenance: Provenance,
    confidence: f32,
    source_out_degree: u32,
) -> f32 {
    edge_kind_weight(kind)
        * provenance_weight(provenance)
        * confidence
        * hub_damping(source_out_degree)
}

/// Weight of an edge kind (facts from the original system). A hand-written link must never rank
/// below an inferred one, so every declared kind outweighs both co-occurrence kinds.
pub fn edge_kind_weight(kind: EdgeKind) -> f32 {
    match kind {
        EdgeKind::References => 1.0,
        EdgeKind::PartOf => 0.9,
        EdgeKind::DerivedFrom => 0.8,
        EdgeKind::Supersedes => 0.7,
        EdgeKind::Contradicts => 0.6,
        EdgeKind::CoOccursSlug => 0.55,
        EdgeKind::CoOccursToken => 0.45,
    }
}

/// Extra factor by provenance: hand-written links at full strength, inferred ones a little less.
pub fn provenance_weight(p: Provenance) -> f32 {
    match p {
        Provenance::Frontmatter | Provenance::InlineLink => 1.0,
        Provenance::Synthesized => 0.9,
    }
}

// ---- Co-occurrence synthesis -----------------------------------------------------------------

/// Synthesized co-occurrence edges kept per note (both kinds together): more adds weak neighbours.
pub const CO_OCCURRENCE_CAP: usize = 5;
/// Minimum TF-IDF cosine for a token co-occurrence edge.
pub const MIN_TOKEN_COSINE: f32 = 0.3;
/// Terms of a note used to find co-occurrence candidates (its highest TF-IDF terms).
pub const CO_OCCURRENCE_PROBE_TERMS: usize = 12;
/// A term in more notes than this is too common to find candidates with (cost bound at 100k).
pub const CO_OCCURRENCE_MAX_DF: usize = 400;
/// Slug-prefix clusters larger than this are not linked all-to-all (cost and noise bound).
pub const MAX_SLUG_CLUSTER: usize = 12;
/// Confidence of a `derived_from` edge inferred from a project note linking a user note.
pub const SYNTH_DERIVED_CONFIDENCE: f32 = 0.7;
/// Minimum shared leading slug words for a slug cluster (`deploy-canary` / `deploy-rollback`).
pub const SLUG_PREFIX_WORDS: usize = 1;

// ---- Node priors -----------------------------------------------------------------------------

/// The largest note-type weight (recall's bound for skipping candidates that cannot enter the top
/// k; `max_type_weight_bounds_every_type` checks it).
pub const MAX_TYPE_WEIGHT: f32 = 1.2;

/// Multiplier by note type (original: project 1.2, feedback 1.1, user 1.0, index 0.9, reference
/// 0.8): favours notes about the work at hand over reference material.
pub fn note_type_weight(t: NoteType) -> f32 {
    match t {
        NoteType::Project => 1.2,
        NoteType::Feedback => 1.1,
        NoteType::User => 1.0,
        NoteType::Index => 0.9,
        NoteType::Reference => 0.8,
        NoteType::Unknown => 1.0,
    }
}

/// Reinforcement per recall, `REINFORCE_COEF * ln(1 + recall_count)`: saturates, so a popular note
/// cannot beat a directly relevant one.
pub const REINFORCE_COEF: f32 = 0.15;
/// Importance bonus per point (1..=10): importance 10 adds 2.0, enough to beat a weak BFS rank.
pub const IMPORTANCE_COEF: f32 = 0.20;
/// Half-life of the recency bonus, in days, on max(last_recalled_at, updated_at).
pub const RECENCY_HALF_LIFE_DAYS: f32 = 90.0;
/// Size of the recency bonus for a note touched (edited or recalled) today: one importance point.
/// It breaks ties between near equals and lets a note in use today edge past an old one of about
/// the same score. 0.10 gave the same cold figures and lower warm ones (loopal-58 per-query 5x MRR
/// 0.916 against 0.934; generated 1k notes 0.947 against 0.961).
pub const RECENCY_WEIGHT: f32 = 0.20;
/// Score multiplier once a note's ttl has expired: stale facts sink but stay findable.
pub const TTL_EXPIRED_FACTOR: f32 = 0.5;
/// Multiplier when less than [`TTL_WARN_FRACTION`] of the ttl is left.
pub const TTL_NEAR_FACTOR: f32 = 0.85;
/// Fraction of the ttl left under which a note counts as close to expiring.
pub const TTL_WARN_FRACTION: f32 = 0.2;

/// Seconds per day.
pub const DAY_S: i64 = 86_400;

/// Reinforcement bonus for `recall_count` past recalls.
pub fn reinforcement(recall_count: u64) -> f32 {
    REINFORCE_COEF * (1.0 + recall_count as f32).ln()
}

/// Importance bonus (0 when unset).
pub fn importance_bonus(importance: u8) -> f32 {
    IMPORTANCE_COEF * f32::from(importance.min(10))
}

/// Recency bonus for a note last touched at `touched_s` (Unix seconds), seen at `now_s`.
pub fn recency_bonus(touched_s: Option<i64>, now_s: i64) -> f32 {
    let Some(t) = touched_s else { return 0.0 };
    let age_days = ((now_s - t).max(0) as f32) / DAY_S as f32;
    RECENCY_WEIGHT * 0.5f32.powf(age_days / RECENCY_HALF_LIFE_DAYS)
}

/// TTL multiplier: 1 when fresh or no ttl, smaller when close to or past expiry.
pub fn ttl_factor(ttl_days: Option<u32>, updated_s: Option<i64>, now_s: i64) -> f32 {
    let (Some(ttl), Some(updated)) = (ttl_days, updated_s) else {
        return 1.0;
    };
    let ttl_s = i64::from(ttl) * DAY_S;
    let age_s = now_s - updated;
    if age_s >= ttl_s {
        TTL_EXPIRED_FACTOR
    } else if (ttl_s - age_s) as f32 <= TTL_WARN_FRACTION * ttl_s as f32 {
        TTL_NEAR_FACTOR
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_kinds_outrank_inferred_ones() {
        let inferred = [EdgeKind::CoOccursSlug, EdgeKind::CoOccursToken];
        for k in EdgeKind::ALL.into_iter().filter(|k| !inferred.contains(k)) {
            for i in inferred {
                assert!(
                    edge_kind_weight(k) * provenance_weight(Provenance::InlineLink)
                        > edge_kind_weight(i) * provenance_weight(Provenance::Synthesized)
                );
            }
        }
    }

    #[test]
    fn max_type_weight_bounds_every_type() {
        // Recall skips a neighbour whose score under this bound cannot enter the top k.
        for t in [
            NoteType::Project,
            NoteType::Feedback,
            NoteType::User,
            NoteType::Index,
            NoteType::Reference,
            NoteType::Unknown,
        ] {
            assert!(note_type_weight(t) <= MAX_TYPE_WEIGHT, "{t:?}");
        }
        assert_eq!(note_type_weight(NoteType::Project), MAX_TYPE_WEIGHT);
    }

    #[test]
    fn bonuses_follow_the_formulas() {
        assert_eq!(reinforcement(0), 0.0);
        assert!((reinforcement(5) - 0.15 * 6f32.ln()).abs() < 1e-6);
        assert!((importance_bonus(10) - 2.0).abs() < 1e-6);
        let now = 1_000 * DAY_S;
        assert!((recency_bonus(Some(now - 90 * DAY_S), now) - RECENCY_WEIGHT / 2.0).abs() < 1e-6);
        assert_eq!(recency_bonus(None, now), 0.0);
        assert_eq!(
            ttl_factor(Some(10), Some(now - 11 * DAY_S), now),
            TTL_EXPIRED_FACTOR
        );
        assert_eq!(
            ttl_factor(Some(10), Some(now - 9 * DAY_S), now),
            TTL_NEAR_FACTOR
        );
        assert_eq!(ttl_factor(Some(10), Some(now - DAY_S), now), 1.0);
        assert_eq!(ttl_factor(None, Some(0), now), 1.0);
    }
}
