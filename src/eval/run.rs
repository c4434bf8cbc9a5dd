//! `mnemon eval`: build a temporary memory from a corpus folder, run every ground-truth query
//! with the loopal-58 protocol, and report macro metrics overall and per mode, with in-process
//! recall latency.
//!
//! Protocol (`../shared/eval/loopal-58/NOTICE.md`): query mode recalls the text at depth 2,
//! anchor mode the anchors at depth 2, mixed both. The retrieved list is direct hits, then
//! neighbours, then co-occurring notes (each group in score order), de-duplicated, with the
//! query's anchors removed before scoring.

use super::metrics::{Scores, macro_average, percentile_u64, score_query};
use super::truth::{Mode, Truth, TruthQuery};
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::recall::{Query, Recall, Source};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Results requested per query (more than the deepest cut-off, so grouping is not truncated).
pub const EVAL_LIMIT: usize = 50;

/// Metrics of one mode (cold, warm, ...).
#[derive(Debug, Clone, Serialize)]
pub struct ModeReport {
    pub r5: f64,
    pub r10: f64,
    pub p5: f64,
    pub mrr: f64,
    pub ndcg5: f64,
    pub latency_us_p50: u64,
    pub latency_us_p99: u64,
    pub by_mode: BTreeMap<&'static str, Scores>,
}

impl ModeReport {
    /// Macro averages of per-query scores, latency percentiles, and per-mode averages.
    fn new(
        scores: &[Scores],
        latencies_us: &[u64],
        by_mode: BTreeMap<&'static str, Vec<Scores>>,
    ) -> Self {
        let avg = macro_average(scores);
        ModeReport {
            r5: avg.r5,
            r10: avg.r10,
            p5: avg.p5,
            mrr: avg.mrr,
            ndcg5: avg.ndcg5,
            latency_us_p50: percentile_u64(latencies_us, 50.0),
            latency_us_p99: percentile_u64(latencies_us, 99.0),
            by_mode: by_mode
                .into_iter()
                .map(|(k, v)| (k, macro_average(&v)))
                .collect(),
        }
    }
}

/// The whole eval report.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub queries: usize,
    pub modes: BTreeMap<String, ModeReport>,
}

/// The query a ground-truth entry asks.
pub fn query_of(t: &TruthQuery) -> Query {
    let mut q = match t.mode {
        Mode::Query => Query::text(t.query.clone().unwrap_or_default()),
        Mode::Anchor => Query::anchors(t.anchors.clone()),
        Mode::Mixed => Query {
            text: t.query.clone().unwrap_or_default(),
            anchors: t.anchors.clone(),
            ..Query::default()
        },
    };
    q.depth = 2;
    q.limit = EVAL_LIMIT;
    q.caller = "eval".into();
    // Measuring must not reinforce: later queries would be ranked by earlier ones.
    q.record = false;
    q
}

/// The retrieved list the protocol scores: grouped by source, de-duplicated, anchors removed.
pub fn retrieved_list(recall: &Recall, anchors: &[String]) -> Vec<String> {
    let mut hits: Vec<_> = recall.results.iter().collect();
    hits.sort_by(|a, b| {
        let rank = |s: Source| match s {
            Source::Direct => 0,
            Source::Neighbor => 1,
            Source::CoOccur => 2,
        };
        rank(a.source)
            .cmp(&rank(b.source))
            .then(b.score.total_cmp(&a.score))
    });
    let mut out: Vec<String> = Vec::with_capacity(hits.len());
    for h in hits {
        if !anchors.contains(&h.id) && !out.contains(&h.id) {
            out.push(h.id.clone());
        }
    }
    out
}

/// Run every query of `truth` cold against `memory`; `before_each` runs before each query (warm-up
/// modes reset and warm there).
pub fn run_mode(
    memory: &Memory,
    truth: &Truth,
    before_each: &mut dyn FnMut(&Memory, &TruthQuery) -> Result<()>,
) -> Result<ModeReport> {
    let mut all = Vec::with_capacity(truth.queries.len());
    let mut per_mode: BTreeMap<&'static str, Vec<Scores>> = BTreeMap::new();
    let mut latencies = Vec::with_capacity(truth.queries.len());
    for t in &truth.queries {
        before_each(memory, t)?;
        let recall = memory.recall(&query_of(t))?;
        latencies.push(recall.latency_us);
        let list = retrieved_list(&recall, &t.anchors);
        let refs: Vec<&str> = list.iter().map(String::as_str).collect();
        let s = score_query(&refs, &t.relevant_pairs());
        if std::env::var_os("MNEMON_EVAL_TRACE").is_some() {
            trace(t, &recall, &list, &s);
        }
        all.push(s);
        per_mode.entry(mode_name(&t.mode)).or_default().push(s);
    }
    Ok(ModeReport::new(&all, &latencies, per_mode))
}

/// Print one query's outcome on stderr (set `MNEMON_EVAL_TRACE=1`).
fn trace(t: &TruthQuery, recall: &Recall, list: &[String], s: &Scores) {
    eprintln!(
        "{} [{:?}] {:?} anchors={:?} rr={:.2} r10={:.2} latency_us={}",
        t.id, t.mode, t.query, t.anchors, s.mrr, s.r10, recall.latency_us
    );
    for (i, id) in list.iter().take(10).enumerate() {
        let grade = t
            .relevant
            .iter()
            .find(|r| &r.id == id)
            .map_or(0, |r| r.relevance);
        let hit = recall.results.iter().find(|h| &h.id == id);
        eprintln!(
            "  {:>2} {} {id} {:.3} {:?}",
            i + 1,
            if grade > 0 {
                format!("*{grade}")
            } else {
                "  ".into()
            },
            hit.map_or(0.0, |h| h.score),
            hit.map(|h| h.source)
        );
    }
    for r in &t.relevant {
        if !list.iter().take(10).any(|id| *id == r.id) {
            eprintln!("     missing {} (grade {})", r.id, r.relevance);
        }
    }
}

/// Build a temporary memory holding the `.md` files of `corpus` (recursively).
pub fn build_memory(corpus: &Path, root: &Path) -> Result<Memory> {
    let memory = Memory::init(root)?;
    let dst = memory.dir().memory();
    for e in walkdir::WalkDir::new(corpus).sort_by_file_name() {
        let e = e.map_err(|e| Error::io("read corpus", corpus, e.into()))?;
        if !e.file_type().is_file() || e.path().extension().is_none_or(|x| x != "md") {
            continue;
        }
        let Ok(rel) = e.path().strip_prefix(corpus) else {
            continue;
        };
        let target = dst.join(rel);
        if let Some(p) = target.parent() {
            std::fs::create_dir_all(p).map_err(|e| Error::io("create folder", p, e))?;
        }
        std::fs::copy(e.path(), &target).map_err(|e| Error::io("copy to", &target, e))?;
    }
    memory.index()?;
    Ok(memory)
}

/// The cold eval of `truth` on `corpus`.
pub fn eval_cold(corpus: &Path, truth: &Truth) -> Result<EvalReport> {
    eval(corpus, truth, &["cold".to_string()])
}

/// Warm `ids` by recalling each as an anchor at depth 0, `times` times.
fn warm(memory: &Memory, ids: &[&str], times: usize) -> Result<()> {
    for _ in 0..times {
        for id in ids {
            let mut q = Query::anchors([*id]).with_depth(0);
            q.caller = "eval-warmup".into();
            memory.recall(&q)?;
        }
    }
    Ok(())
}

fn relevant_ids(t: &TruthQuery) -> Vec<&str> {
    t.relevant.iter().map(|r| r.id.as_str()).collect()
}

/// Run the eval in each of `modes` (see the protocol in the module doc): `cold`; `warmN` (every
/// query's relevant ids recalled N times as anchors at depth 0 before all queries); `impK`
/// (importance K on every relevant id); `perqN` (per query: fresh stats, warm only its relevant
/// ids N times). Each mode runs on its own fresh memory.
pub fn eval(corpus: &Path, truth: &Truth, modes: &[String]) -> Result<EvalReport> {
    let mut out = BTreeMap::new();
    for mode in modes {
        let tmp = tempfile::tempdir().map_err(|e| Error::io("create temp folder", "", e))?;
        let fresh = |i: usize| -> Result<Memory> {
            build_memory(corpus, &tmp.path().join(format!("m{i}")).join(".mnemon"))
        };
        let bad = || Error::InvalidArgument {
            what: "mode",
            message: format!("`{mode}`: use cold, warmN, impK or perqN (e.g. warm5, imp10, perq5)"),
        };
        let report = if mode == "cold" {
            run_mode(&fresh(0)?, truth, &mut |_, _| Ok(()))?
        } else if let Some(n) = mode.strip_prefix("warm") {
            let n: usize = n.parse().map_err(|_| bad())?;
            let memory = fresh(0)?;
            for t in &truth.queries {
                warm(&memory, &relevant_ids(t), n)?;
            }
            run_mode(&memory, truth, &mut |_, _| Ok(()))?
        } else if let Some(k) = mode.strip_prefix("imp") {
            let k: u8 = k.parse().map_err(|_| bad())?;
            let memory = fresh(0)?;
            for t in &truth.queries {
                for id in relevant_ids(t) {
                    memory.set_importance(id, k, &[], "eval")?;
                }
            }
            run_mode(&memory, truth, &mut |_, _| Ok(()))?
        } else if let Some(n) = mode.strip_prefix("perq") {
            let n: usize = n.parse().map_err(|_| bad())?;
            // A fresh memory per query is the reset: nothing of other queries' warm-up leaks.
            let mut per_query = Vec::with_capacity(truth.queries.len());
            for (i, t) in truth.queries.iter().enumerate() {
                let memory = fresh(i)?;
                warm(&memory, &relevant_ids(t), n)?;
                let one = Truth {
                    queries: vec![t.clone()],
                };
                per_query.push((t.mode.clone(), run_mode(&memory, &one, &mut |_, _| Ok(()))?));
                drop(memory);
                let _ = std::fs::remove_dir_all(tmp.path().join(format!("m{i}")));
            }
            combine(&per_query)
        } else {
            return Err(bad());
        };
        out.insert(mode.clone(), report);
    }
    Ok(EvalReport {
        queries: truth.queries.len(),
        modes: out,
    })
}

/// Macro-average single-query reports.
fn combine(per_query: &[(Mode, ModeReport)]) -> ModeReport {
    let scores: Vec<Scores> = per_query
        .iter()
        .map(|(_, r)| Scores {
            r5: r.r5,
            r10: r.r10,
            p5: r.p5,
            mrr: r.mrr,
            ndcg5: r.ndcg5,
        })
        .collect();
    let mut by: BTreeMap<&'static str, Vec<Scores>> = BTreeMap::new();
    for ((m, _), s) in per_query.iter().zip(&scores) {
        by.entry(mode_name(m)).or_default().push(*s);
    }
    let lat: Vec<u64> = per_query.iter().map(|(_, r)| r.latency_us_p50).collect();
    ModeReport::new(&scores, &lat, by)
}

fn mode_name(m: &Mode) -> &'static str {
    match m {
        Mode::Query => "query",
        Mode::Anchor => "anchor",
        Mode::Mixed => "mixed",
    }
}
