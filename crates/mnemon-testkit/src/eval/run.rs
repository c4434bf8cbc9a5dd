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
use mnemon::Memory;
use mnemon::error::{Error, Result};
use mnemon::recall::{Query, Recall, Source};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Results requested per query (more than the deepest cut-off, so grouping is not truncated).
pub const EVAL_LIMIT: usize = 50;

/// Metrics of one mode (cold, replay, ...). Rank metrics average the questions that have an
/// answer; `no_answer` describes the ones that have none.
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
    /// Rank metrics per question kind (`paraphrase`, `typo`, ...; questions without a kind are
    /// left out).
    pub by_kind: BTreeMap<String, Scores>,
    /// Questions with no answer in the memory (`relevant: []`): how much still came back.
    pub no_answer: NoAnswer,
}

/// How a set of questions with no answer was answered.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct NoAnswer {
    pub queries: usize,
    /// Results returned per question, on average (at the eval's limit of 50).
    pub avg_results: f64,
    /// Share of them answered with nothing at all.
    pub empty_share: f64,
}

/// One question's outcome in a mode.
#[derive(Debug, Clone)]
struct Outcome {
    mode: Mode,
    kind: String,
    /// `None` for a question with no answer.
    scores: Option<Scores>,
    results: usize,
    latency_us: u64,
}

impl ModeReport {
    /// Macro averages of the per-question outcomes, latency percentiles, per-mode and per-kind
    /// averages, and the no-answer summary.
    fn new(outcomes: &[Outcome]) -> Self {
        let scores: Vec<Scores> = outcomes.iter().filter_map(|o| o.scores).collect();
        let avg = macro_average(&scores);
        let mut by_mode: BTreeMap<&'static str, Vec<Scores>> = BTreeMap::new();
        let mut by_kind: BTreeMap<String, Vec<Scores>> = BTreeMap::new();
        for o in outcomes {
            if let Some(s) = o.scores {
                by_mode.entry(mode_name(&o.mode)).or_default().push(s);
                if !o.kind.is_empty() {
                    by_kind.entry(o.kind.clone()).or_default().push(s);
                }
            }
        }
        let empty: Vec<&Outcome> = outcomes.iter().filter(|o| o.scores.is_none()).collect();
        let no_answer = if empty.is_empty() {
            NoAnswer::default()
        } else {
            NoAnswer {
                queries: empty.len(),
                avg_results: empty.iter().map(|o| o.results as f64).sum::<f64>()
                    / empty.len() as f64,
                empty_share: empty.iter().filter(|o| o.results == 0).count() as f64
                    / empty.len() as f64,
            }
        };
        let latencies: Vec<u64> = outcomes.iter().map(|o| o.latency_us).collect();
        ModeReport {
            r5: avg.r5,
            r10: avg.r10,
            p5: avg.p5,
            mrr: avg.mrr,
            ndcg5: avg.ndcg5,
            latency_us_p50: percentile_u64(&latencies, 50.0),
            latency_us_p99: percentile_u64(&latencies, 99.0),
            by_mode: by_mode
                .into_iter()
                .map(|(k, v)| (k, macro_average(&v)))
                .collect(),
            by_kind: by_kind
                .into_iter()
                .map(|(k, v)| (k, macro_average(&v)))
                .collect(),
            no_answer,
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
    Ok(ModeReport::new(&outcomes(memory, truth, before_each)?))
}

fn outcomes(
    memory: &Memory,
    truth: &Truth,
    before_each: &mut dyn FnMut(&Memory, &TruthQuery) -> Result<()>,
) -> Result<Vec<Outcome>> {
    let mut out = Vec::with_capacity(truth.queries.len());
    for t in &truth.queries {
        before_each(memory, t)?;
        let recall = memory.recall(&query_of(t))?;
        let list = retrieved_list(&recall, &t.anchors);
        let refs: Vec<&str> = list.iter().map(String::as_str).collect();
        let scores = (!t.relevant.is_empty()).then(|| score_query(&refs, &t.relevant_pairs()));
        if std::env::var_os("MNEMON_EVAL_TRACE").is_some() {
            trace(t, &recall, &list, scores.as_ref());
        }
        out.push(Outcome {
            mode: t.mode.clone(),
            kind: t.kind.clone(),
            scores,
            results: list.len(),
            latency_us: recall.latency_us,
        });
    }
    Ok(out)
}

/// What the agent of a replay says after each question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Told {
    /// Nothing: the recalls alone are recorded.
    Nothing,
    /// The relevant notes among the first [`FEEDBACK_SEEN`] results, as an agent that read them.
    Seen,
    /// Every relevant note, as an agent that found what recall missed another way (reading the
    /// folder, asking a person) and names it: the feedback that teaches new words.
    Everything,
}

/// Ask every question of `truth` once as an agent would (each recall recorded in the event
/// log), then say what `told` says was used.
fn use_once(memory: &Memory, truth: &Truth, told: Told) -> Result<()> {
    for t in &truth.queries {
        let mut q = query_of(t);
        q.record = true;
        q.caller = "eval-replay".into();
        let recall = memory.recall(&q)?;
        let used: Vec<String> = match told {
            Told::Nothing => continue,
            Told::Seen => retrieved_list(&recall, &t.anchors)
                .into_iter()
                .take(FEEDBACK_SEEN)
                .filter(|id| t.relevant.iter().any(|r| r.id == *id))
                .collect(),
            Told::Everything => t.relevant.iter().map(|r| r.id.clone()).collect(),
        };
        if !used.is_empty() {
            memory.feedback(&used, &[], Some(&q.text))?;
        }
    }
    Ok(())
}

/// Results an agent is taken to have read in the `feedback` mode.
pub const FEEDBACK_SEEN: usize = 10;

/// Print one query's outcome on stderr (set `MNEMON_EVAL_TRACE=1`).
fn trace(t: &TruthQuery, recall: &Recall, list: &[String], s: Option<&Scores>) {
    eprintln!(
        "{} [{:?} {}] {:?} anchors={:?} rr={:.2} r10={:.2} results={} latency_us={}",
        t.id,
        t.mode,
        t.kind,
        t.query,
        t.anchors,
        s.map_or(0.0, |s| s.mrr),
        s.map_or(0.0, |s| s.r10),
        list.len(),
        recall.latency_us
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
    if !corpus.is_dir() {
        return Err(Error::InvalidArgument {
            what: "--corpus",
            message: format!(
                "{} is not a folder: give the folder that holds the corpus' notes (`.md` files)",
                corpus.display()
            ),
        });
    }
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

/// Most warm-up recalls per relevant note of a `warmN` or `perqN` mode.
pub const MAX_WARM_RECALLS: usize = 100;

/// Run the eval in each of `modes` (see the protocol in the module doc): `cold`; `replay` (every
/// question asked once and recorded, as an agent's recalls are, then all scored again);
/// `feedback` (as replay, with feedback after each question on the relevant notes among its
/// first 10 results); `taught` (as feedback, naming every relevant note, found or not); `warmN`
/// (every query's relevant ids recalled N times as anchors at depth 0 before all queries); `impK` (importance K on every relevant id); `perqN` (per query: fresh
/// stats, warm only its relevant ids N times). Each mode runs on its own fresh memory.
pub fn eval(corpus: &Path, truth: &Truth, modes: &[String]) -> Result<EvalReport> {
    eval_taught_by(corpus, truth, None, modes, None)
}

/// [`eval`] scored as of `at_s` (seconds since the Unix epoch) instead of now: recency and TTL
/// weigh the notes' dates against that instant, so the figures are the same on any day (a test's
/// bar must not start failing when a fixture's note comes of age).
pub fn eval_at(corpus: &Path, truth: &Truth, modes: &[String], at_s: i64) -> Result<EvalReport> {
    eval_taught_by(corpus, truth, None, modes, Some(at_s))
}

/// [`eval`], with the `replay`, `feedback` and `taught` modes asking `teach`'s questions (and
/// giving feedback on them) instead of `truth`'s before `truth` is scored: whether what agents
/// taught the memory on some questions carries over to others. `None`: `truth`'s own.
/// `at_s`: score as of that instant (see [`eval_at`]); `None`: now.
pub fn eval_taught_by(
    corpus: &Path,
    truth: &Truth,
    teach: Option<&Truth>,
    modes: &[String],
    at_s: Option<i64>,
) -> Result<EvalReport> {
    let mut out = BTreeMap::new();
    let checked = std::cell::Cell::new(false);
    for mode in modes {
        let tmp = tempfile::tempdir().map_err(|e| Error::io("create temp folder", "", e))?;
        let fresh = |i: usize| -> Result<Memory> {
            let memory = build_memory(corpus, &tmp.path().join(format!("m{i}")).join(".mnemon"))?;
            let memory = match at_s {
                Some(at) => memory.with_clock(mnemon::recall::FixedClock(at)),
                None => memory,
            };
            if !checked.replace(true) {
                check_ids(&memory, corpus, truth, teach)?;
            }
            Ok(memory)
        };
        let bad = || Error::InvalidArgument {
            what: "mode",
            message: format!(
                "`{mode}`: use cold, replay, feedback, taught, warmN, impK or perqN (e.g. warm5, imp10, perq5)"
            ),
        };
        // N of warmN and perqN: warm-up recalls per relevant note, within a bound (a mistyped
        // `warm99999999999` ran for years).
        let warm_n = |n: &str| -> Result<usize> {
            let n: usize = n.parse().map_err(|_| bad())?;
            if n > MAX_WARM_RECALLS {
                return Err(Error::OutOfRange {
                    what: "mode",
                    value: mode.clone(),
                    allowed: format!(
                        "warmN or perqN with N from 0 to {MAX_WARM_RECALLS} (warm-up recalls per \
                         relevant note)"
                    ),
                });
            }
            Ok(n)
        };
        let report = if mode == "cold" {
            run_mode(&fresh(0)?, truth, &mut |_, _| Ok(()))?
        } else if let Some(told) = match mode.as_str() {
            "replay" => Some(Told::Nothing),
            "feedback" => Some(Told::Seen),
            "taught" => Some(Told::Everything),
            _ => None,
        } {
            let memory = fresh(0)?;
            use_once(&memory, teach.unwrap_or(truth), told)?;
            run_mode(&memory, truth, &mut |_, _| Ok(()))?
        } else if let Some(n) = mode.strip_prefix("warm") {
            let n = warm_n(n)?;
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
            let n = warm_n(n)?;
            // A fresh memory per query is the reset: nothing of other queries' warm-up leaks.
            let mut per_query = Vec::with_capacity(truth.queries.len());
            for (i, t) in truth.queries.iter().enumerate() {
                let memory = fresh(i)?;
                warm(&memory, &relevant_ids(t), n)?;
                let one = Truth {
                    queries: vec![t.clone()],
                };
                per_query.extend(outcomes(&memory, &one, &mut |_, _| Ok(()))?);
                drop(memory);
                let _ = std::fs::remove_dir_all(tmp.path().join(format!("m{i}")));
            }
            ModeReport::new(&per_query)
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

/// The ids the ground truth names against the corpus' notes: an anchor that is no note is an
/// error (the recall would fail with advice about `mnemon index`, which does not apply to the
/// eval's own memory); a relevant id that is no note can never be found, which is said on
/// stderr (the query still counts, as a miss).
fn check_ids(memory: &Memory, corpus: &Path, truth: &Truth, teach: Option<&Truth>) -> Result<()> {
    // `stats`: a store lookup by id, without `show`'s read and hash of the note's file.
    let known = |id: &str| -> Result<bool> {
        match memory.stats(id) {
            Ok(_) => Ok(true),
            Err(
                Error::UnknownNode { .. }
                | Error::RemovedNode { .. }
                | Error::InvalidArgument { .. },
            ) => Ok(false),
            Err(e) => Err(e),
        }
    };
    let mut unknown_relevant = Vec::new();
    for (set, t) in std::iter::once(("ground truth", truth)).chain(teach.map(|t| ("--teach", t))) {
        for q in &t.queries {
            for a in &q.anchors {
                if !known(a)? {
                    return Err(Error::InvalidArgument {
                        what: "ground truth",
                        message: format!(
                            "{set} query `{}`: anchor `{a}` is not a note of the corpus {}; \
                             name a note's id (its path below the corpus without `.md`)",
                            q.id,
                            corpus.display()
                        ),
                    });
                }
            }
            for r in &q.relevant {
                if !known(&r.id)? {
                    unknown_relevant.push(format!("`{}` (query `{}`)", r.id, q.id));
                }
            }
        }
    }
    if !unknown_relevant.is_empty() {
        let shown: Vec<&str> = unknown_relevant
            .iter()
            .take(10)
            .map(String::as_str)
            .collect();
        let more = unknown_relevant.len().saturating_sub(shown.len());
        // Not `eprintln!`: a closed stderr must not stop the eval.
        let _ = writeln!(
            std::io::stderr(),
            "mnemon: eval: {} relevant ids are not notes of the corpus {} and can never be \
             found: {}{}; check the ids (a note's path below the corpus without `.md`) and the \
             --corpus",
            unknown_relevant.len(),
            corpus.display(),
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

fn mode_name(m: &Mode) -> &'static str {
    match m {
        Mode::Query => "query",
        Mode::Anchor => "anchor",
        Mode::Mixed => "mixed",
    }
}
