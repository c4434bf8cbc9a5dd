//! Retrieval metrics for the memory eval, following the protocol of the Loopal eval set
//! (`../shared/eval/loopal-58/NOTICE.md`): per query R@5, R@10, P@5, MRR (reciprocal rank of the
//! first relevant hit) and nDCG@5 with graded gains `rel / log2(rank + 1)` and the ideal DCG from
//! the grades sorted in descending order; then the macro average over all queries.
//!
//! Conventions (the NOTICE is silent on these, so they are fixed here):
//! - ranks start at 1; the "top k" of a list shorter than k is the whole list;
//! - P@k divides by `k`, not by `min(k, retrieved.len())`: a short list is not rewarded;
//! - a relevant id retrieved more than once counts only at its first position (later copies
//!   still occupy their rank but score nothing); a relevant id listed more than once counts once,
//!   with its highest grade; grade 0 means "not relevant" and is ignored;
//! - every metric is 0 when there is nothing relevant or `k == 0`.
//!
//! The caller removes anchor ids and de-duplicates the retrieved list before scoring, as the
//! protocol requires; the rules above only keep results sane if it did not.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

/// Distinct relevant ids with their (highest) grade; grade-0 entries dropped.
fn grade_map<'a>(relevant: &[(&'a str, u8)]) -> HashMap<&'a str, u8> {
    let mut grades: HashMap<&str, u8> = HashMap::with_capacity(relevant.len());
    for &(id, grade) in relevant {
        if grade == 0 {
            continue;
        }
        let entry = grades.entry(id).or_insert(grade);
        *entry = (*entry).max(grade);
    }
    grades
}

/// Number of distinct relevant ids among the first `k` retrieved.
fn hits_at(retrieved: &[&str], grades: &HashMap<&str, u8>, k: usize) -> usize {
    let mut seen: HashSet<&str> = HashSet::new();
    retrieved
        .iter()
        .take(k)
        .filter(|id| grades.contains_key(**id) && seen.insert(**id))
        .count()
}

/// Recall at `k`: `|relevant ∩ top k| / |relevant|`, 0 when nothing is relevant.
///
/// `retrieved`: ranked ids (already with anchor ids removed and de-duplicated by the caller);
/// `relevant`: (id, grade 1..=3).
pub fn recall_at(retrieved: &[&str], relevant: &[(&str, u8)], k: usize) -> f64 {
    let grades = grade_map(relevant);
    if grades.is_empty() {
        return 0.0;
    }
    hits_at(retrieved, &grades, k) as f64 / grades.len() as f64
}

/// Precision at `k`: `|relevant ∩ top k| / k` (always divided by `k`, even when fewer than `k`
/// ids were retrieved), 0 when `k == 0`.
///
/// `retrieved`: ranked ids (already with anchor ids removed and de-duplicated by the caller);
/// `relevant`: (id, grade 1..=3).
pub fn precision_at(retrieved: &[&str], relevant: &[(&str, u8)], k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    let grades = grade_map(relevant);
    hits_at(retrieved, &grades, k) as f64 / k as f64
}

/// Reciprocal rank: `1 / rank` of the first relevant id (ranks from 1), 0 if none is retrieved.
///
/// `retrieved`: ranked ids (already with anchor ids removed and de-duplicated by the caller);
/// `relevant`: (id, grade 1..=3).
pub fn reciprocal_rank(retrieved: &[&str], relevant: &[(&str, u8)]) -> f64 {
    let grades = grade_map(relevant);
    retrieved
        .iter()
        .position(|id| grades.contains_key(*id))
        .map_or(0.0, |index| 1.0 / (index + 1) as f64)
}

/// Normalised DCG at `k`: `DCG@k / IDCG@k` with `DCG@k = Σ_{rank ≤ k} grade / log2(rank + 1)`
/// (ranks from 1) and `IDCG@k` the same sum over the relevant grades sorted in descending order,
/// truncated to `k`. 0 when nothing is relevant or `k == 0`.
///
/// `retrieved`: ranked ids (already with anchor ids removed and de-duplicated by the caller);
/// `relevant`: (id, grade 1..=3).
pub fn ndcg_at(retrieved: &[&str], relevant: &[(&str, u8)], k: usize) -> f64 {
    let grades = grade_map(relevant);
    let mut ideal: Vec<u8> = grades.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(index, &grade)| gain(grade, index + 1))
        .sum();
    if idcg == 0.0 {
        return 0.0;
    }
    let mut seen: HashSet<&str> = HashSet::new();
    let dcg: f64 = retrieved
        .iter()
        .take(k)
        .enumerate()
        .filter_map(|(index, id)| {
            let grade = *grades.get(id)?;
            seen.insert(*id).then(|| gain(grade, index + 1))
        })
        // Not `sum()`: an empty float sum is -0.0, which prints as "-0.000".
        .fold(0.0, |total, g| total + g);
    dcg / idcg
}

/// Discounted gain of `grade` at 1-based `rank`.
fn gain(grade: u8, rank: usize) -> f64 {
    f64::from(grade) / ((rank + 1) as f64).log2()
}

/// The per-query metrics the eval reports (and, via [`macro_average`], their means).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Scores {
    /// Recall at 5.
    pub r5: f64,
    /// Recall at 10.
    pub r10: f64,
    /// Precision at 5 (divided by 5).
    pub p5: f64,
    /// Reciprocal rank of the first relevant id (mean reciprocal rank once averaged).
    pub mrr: f64,
    /// Graded nDCG at 5.
    pub ndcg5: f64,
}

/// All metrics of one query.
///
/// `retrieved`: ranked ids (already with anchor ids removed and de-duplicated by the caller);
/// `relevant`: (id, grade 1..=3).
pub fn score_query(retrieved: &[&str], relevant: &[(&str, u8)]) -> Scores {
    Scores {
        r5: recall_at(retrieved, relevant, 5),
        r10: recall_at(retrieved, relevant, 10),
        p5: precision_at(retrieved, relevant, 5),
        mrr: reciprocal_rank(retrieved, relevant),
        ndcg5: ndcg_at(retrieved, relevant, 5),
    }
}

/// Macro average: the mean of each field over the queries; all zero for empty input.
pub fn macro_average(per_query: &[Scores]) -> Scores {
    if per_query.is_empty() {
        return Scores::default();
    }
    let n = per_query.len() as f64;
    let mean = |field: fn(&Scores) -> f64| per_query.iter().map(field).fold(0.0, |t, x| t + x) / n;
    Scores {
        r5: mean(|s| s.r5),
        r10: mean(|s| s.r10),
        p5: mean(|s| s.p5),
        mrr: mean(|s| s.mrr),
        ndcg5: mean(|s| s.ndcg5),
    }
}

/// p-th percentile (0..=100) by nearest-rank on a copy (sorted); 0 for empty.
///
/// Nearest rank: the value at 1-based rank `ceil(p / 100 * n)`, clamped to `1..=n`, so `p = 0`
/// gives the minimum and `p = 100` the maximum. `p` outside 0..=100 is clamped; NaN counts as 0.
pub fn percentile_u64(values: &[u64], p: f64) -> u64 {
    if values.is_empty() {
        return 0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
    // Multiply before dividing so whole-number products (e.g. 99 * 100 / 100) stay exact.
    let rank = (p * n as f64 / 100.0).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tolerance for float results whose expected value is written as a formula.
    fn close(actual: f64, expected: f64) {
        assert!(
            (actual - expected).abs() < 1e-12,
            "actual {actual} != expected {expected}"
        );
    }

    const RETRIEVED: [&str; 5] = ["a", "x", "b", "y", "c"];
    const RELEVANT: [(&str, u8); 4] = [("a", 3), ("b", 2), ("c", 1), ("d", 3)];

    #[test]
    fn worked_example_all_metrics() {
        // Hits in the top 5: a (rank 1), b (rank 3), c (rank 5) -> 3 of the 4 relevant.
        // R@5 = 3/4.
        assert_eq!(recall_at(&RETRIEVED, &RELEVANT, 5), 0.75);
        // R@10: the list has only 5 ids, same 3 hits -> 3/4.
        assert_eq!(recall_at(&RETRIEVED, &RELEVANT, 10), 0.75);
        // P@5 = 3/5.
        assert_eq!(precision_at(&RETRIEVED, &RELEVANT, 5), 0.6);
        // First relevant is a at rank 1 -> RR = 1.
        assert_eq!(reciprocal_rank(&RETRIEVED, &RELEVANT), 1.0);
        // DCG@5 = 3/log2(2) + 2/log2(4) + 1/log2(6) = 3 + 1 + 0.38685280723454163 = 4.386852807234542
        // Ideal grades sorted desc: 3, 3, 2, 1 ->
        // IDCG@5 = 3/log2(2) + 3/log2(3) + 2/log2(4) + 1/log2(5)
        //        = 3 + 1.8927892607143724 + 1 + 0.43067655807339306 = 6.323465818787765.
        // nDCG@5 = 4.386852807234542 / 6.323465818787765 = 0.6937418391984792
        let dcg = 3.0 / 2f64.log2() + 2.0 / 4f64.log2() + 1.0 / 6f64.log2();
        let idcg = 3.0 / 2f64.log2() + 3.0 / 3f64.log2() + 2.0 / 4f64.log2() + 1.0 / 5f64.log2();
        let ndcg = ndcg_at(&RETRIEVED, &RELEVANT, 5);
        close(ndcg, dcg / idcg);
        assert!((ndcg - 0.693_741_839_198_479).abs() < 1e-12, "{ndcg}");

        let s = score_query(&RETRIEVED, &RELEVANT);
        assert_eq!(s.r5, 0.75);
        assert_eq!(s.r10, 0.75);
        assert_eq!(s.p5, 0.6);
        assert_eq!(s.mrr, 1.0);
        close(s.ndcg5, dcg / idcg);
    }

    #[test]
    fn first_relevant_at_rank_three() {
        let retrieved = ["x", "y", "a", "b"];
        let relevant = [("a", 2), ("b", 1)];
        // First relevant a at rank 3 -> RR = 1/3.
        assert_eq!(reciprocal_rank(&retrieved, &relevant), 1.0 / 3.0);
        // Both relevant within the top 5 -> R@5 = 2/2 = 1; P@5 = 2/5 (divided by 5, not by 4).
        assert_eq!(recall_at(&retrieved, &relevant, 5), 1.0);
        assert_eq!(precision_at(&retrieved, &relevant, 5), 0.4);
        // Top 3 holds only a -> R@3 = 1/2, P@3 = 1/3; top 2 holds none -> 0.
        assert_eq!(recall_at(&retrieved, &relevant, 3), 0.5);
        assert_eq!(precision_at(&retrieved, &relevant, 3), 1.0 / 3.0);
        assert_eq!(recall_at(&retrieved, &relevant, 2), 0.0);
        // DCG@5 = 2/log2(4) + 1/log2(5) = 1 + 0.43067655807339306;
        // IDCG@5 = 2/log2(2) + 1/log2(3) = 2 + 0.6309297535714575.
        close(
            ndcg_at(&retrieved, &relevant, 5),
            (2.0 / 4f64.log2() + 1.0 / 5f64.log2()) / (2.0 / 2f64.log2() + 1.0 / 3f64.log2()),
        );
    }

    #[test]
    fn nothing_relevant_retrieved_is_zero() {
        let retrieved = ["x", "y", "z"];
        let relevant = [("a", 3)];
        let s = score_query(&retrieved, &relevant);
        assert_eq!(s, Scores::default());
        // Empty retrieved list.
        assert_eq!(score_query(&[], &relevant), Scores::default());
    }

    #[test]
    fn empty_relevant_or_zero_k_is_zero() {
        assert_eq!(score_query(&RETRIEVED, &[]), Scores::default());
        assert_eq!(recall_at(&RETRIEVED, &RELEVANT, 0), 0.0);
        assert_eq!(precision_at(&RETRIEVED, &RELEVANT, 0), 0.0);
        assert_eq!(ndcg_at(&RETRIEVED, &RELEVANT, 0), 0.0);
        // Grade 0 means not relevant.
        assert_eq!(score_query(&RETRIEVED, &[("a", 0)]), Scores::default());
    }

    /// Regression: a query that found none of its notes printed nDCG "-0.000" (an empty float
    /// sum is -0.0).
    #[test]
    fn nothing_found_is_positive_zero() {
        let none = ndcg_at(&["x", "y"], &RELEVANT, 5);
        assert!(none == 0.0 && none.is_sign_positive(), "{none}");
        let mean = macro_average(&[score_query(&["x"], &RELEVANT)]).ndcg5;
        assert_eq!(format!("{mean:.3}"), "0.000");
    }

    #[test]
    fn perfect_ranking_scores_one() {
        // Retrieved in ideal order: DCG == IDCG -> nDCG exactly 1.
        let retrieved = ["a", "d", "b", "c"];
        assert_eq!(ndcg_at(&retrieved, &RELEVANT, 5), 1.0);
        assert_eq!(recall_at(&retrieved, &RELEVANT, 5), 1.0);
        // 4 hits / 5.
        assert_eq!(precision_at(&retrieved, &RELEVANT, 5), 0.8);
    }

    #[test]
    fn ideal_dcg_truncated_to_k() {
        // Six relevant of grade 1; two retrieved at ranks 1 and 2.
        // DCG@5 = 1/log2(2) + 1/log2(3); IDCG@5 = Σ_{r=1..5} 1/log2(r+1) (only 5 of the 6 count).
        let relevant = [("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1), ("f", 1)];
        let retrieved = ["a", "b"];
        let idcg: f64 = (1..=5).map(|r| 1.0 / ((r + 1) as f64).log2()).sum();
        close(
            ndcg_at(&retrieved, &relevant, 5),
            (1.0 + 1.0 / 3f64.log2()) / idcg,
        );
    }

    #[test]
    fn duplicates_not_double_counted() {
        // a appears at ranks 1 and 2; the second copy scores nothing but takes its rank.
        let retrieved = ["a", "a", "b"];
        let relevant = [("a", 3), ("b", 2)];
        // Distinct hits in top 5: a, b -> R@5 = 2/2, P@5 = 2/5.
        assert_eq!(recall_at(&retrieved, &relevant, 5), 1.0);
        assert_eq!(precision_at(&retrieved, &relevant, 5), 0.4);
        // Top 2 is a, a -> one distinct hit: R@2 = 1/2, P@2 = 1/2.
        assert_eq!(recall_at(&retrieved, &relevant, 2), 0.5);
        assert_eq!(precision_at(&retrieved, &relevant, 2), 0.5);
        // DCG@5 = 3/log2(2) + 2/log2(4) = 3 + 1 = 4; IDCG@5 = 3/log2(2) + 2/log2(3) = 3 + 1.2618595.
        close(
            ndcg_at(&retrieved, &relevant, 5),
            4.0 / (3.0 + 2.0 / 3f64.log2()),
        );
        assert!(ndcg_at(&retrieved, &relevant, 5) <= 1.0);

        // A relevant id listed twice counts once, with its highest grade:
        // |relevant| = 1 -> R@5 = 1/1; nDCG = (3/1) / (3/1) = 1.
        let relevant_dup = [("a", 1), ("a", 3)];
        assert_eq!(recall_at(&["a"], &relevant_dup, 5), 1.0);
        assert_eq!(ndcg_at(&["a"], &relevant_dup, 5), 1.0);
    }

    #[test]
    fn macro_average_means_each_field() {
        let a = Scores {
            r5: 1.0,
            r10: 1.0,
            p5: 0.4,
            mrr: 1.0,
            ndcg5: 0.5,
        };
        let b = Scores {
            r5: 0.5,
            r10: 0.0,
            p5: 0.2,
            mrr: 0.25,
            ndcg5: 0.0,
        };
        // (1 + 0.5)/2 = 0.75, (1 + 0)/2 = 0.5, (0.4 + 0.2)/2 = 0.3 (float: 0.30000000000000004),
        // (1 + 0.25)/2 = 0.625, (0.5 + 0)/2 = 0.25.
        let m = macro_average(&[a, b]);
        assert_eq!(m.r5, 0.75);
        assert_eq!(m.r10, 0.5);
        close(m.p5, 0.3);
        assert_eq!(m.mrr, 0.625);
        assert_eq!(m.ndcg5, 0.25);
        assert_eq!(macro_average(&[]), Scores::default());
        assert_eq!(macro_average(&[a]), a);
    }

    #[test]
    fn percentile_nearest_rank() {
        let values: Vec<u64> = (1..=100).collect();
        // ceil(50/100 * 100) = 50 -> 50; ceil(99/100 * 100) = 99 -> 99.
        assert_eq!(percentile_u64(&values, 50.0), 50);
        assert_eq!(percentile_u64(&values, 99.0), 99);
        assert_eq!(percentile_u64(&values, 100.0), 100);
        assert_eq!(percentile_u64(&values, 0.0), 1);
        // ceil(99.5) = 100; ceil(0.1) = 1.
        assert_eq!(percentile_u64(&values, 99.5), 100);
        assert_eq!(percentile_u64(&values, 0.1), 1);
        // Input order does not matter and is not modified.
        let unsorted = [30, 10, 20];
        // n = 3: p50 -> ceil(1.5) = 2 -> 20; p34 -> ceil(1.02) = 2 -> 20; p33 -> ceil(0.99) = 1 -> 10.
        assert_eq!(percentile_u64(&unsorted, 50.0), 20);
        assert_eq!(percentile_u64(&unsorted, 34.0), 20);
        assert_eq!(percentile_u64(&unsorted, 33.0), 10);
        assert_eq!(unsorted, [30, 10, 20]);
        assert_eq!(percentile_u64(&[], 50.0), 0);
        assert_eq!(percentile_u64(&[7], 99.0), 7);
        // Out of range is clamped; NaN counts as 0.
        assert_eq!(percentile_u64(&values, 150.0), 100);
        assert_eq!(percentile_u64(&values, -5.0), 1);
        assert_eq!(percentile_u64(&values, f64::NAN), 1);
    }
}
