//! What an agent asks and what it gets back: `Query`, `Recall`, `Hit`, trails and score
//! explanations.

use super::policy;
use crate::notes::{EdgeKind, Provenance};
use serde::Serialize;

/// Most results one recall may return.
pub const MAX_LIMIT: usize = 200;
/// Default number of results.
pub const DEFAULT_LIMIT: usize = 10;
/// Most anchors in one query.
pub const MAX_ANCHORS: usize = 64;
/// Longest query text accepted, in bytes (longer text is cut at a char boundary).
pub const MAX_QUERY_BYTES: usize = 4096;

/// A recall request.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Free text (natural language or keywords); may be empty when anchors are given.
    pub text: String,
    /// Node ids to start from; each is a direct hit of this recall.
    pub anchors: Vec<String>,
    /// BFS depth over typed edges (allowed: [`crate::args::DEPTH`]).
    pub depth: u8,
    /// Results wanted (allowed: [`crate::args::LIMIT`]).
    pub limit: usize,
    /// Results scoring below this are dropped (any finite number: [`crate::args::min_score`]).
    pub min_score: f32,
    /// Who asked (recorded in the event log).
    pub caller: String,
    /// Record this recall in the event log (it then reinforces what it returned). `false` for
    /// look-ups that must not change future rankings, such as measuring an eval.
    pub record: bool,
}

impl Default for Query {
    fn default() -> Self {
        Query {
            text: String::new(),
            anchors: Vec::new(),
            depth: policy::DEFAULT_DEPTH,
            limit: DEFAULT_LIMIT,
            min_score: policy::DEFAULT_MIN_SCORE,
            caller: "library".into(),
            record: true,
        }
    }
}

impl Query {
    /// A text query with default settings.
    pub fn text(text: impl Into<String>) -> Self {
        Query {
            text: text.into(),
            ..Query::default()
        }
    }
    /// An anchor query with default settings.
    pub fn anchors<S: Into<String>>(ids: impl IntoIterator<Item = S>) -> Self {
        Query {
            anchors: ids.into_iter().map(Into::into).collect(),
            ..Query::default()
        }
    }
    /// Set the depth.
    pub fn with_depth(mut self, depth: u8) -> Self {
        self.depth = depth;
        self
    }
    /// Set the limit.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

/// How a result was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A lexical hit or an anchor.
    Direct,
    /// Reached over typed edges from a direct hit.
    Neighbor,
    /// Reached over a synthesized co-occurrence edge.
    CoOccur,
}

/// One edge of a trail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrailEdge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    pub provenance: Provenance,
}

/// A score taken apart (`--explain`): `score = base x (1 + usage) x type_weight x ttl_factor x
/// (1 + min(0.25, importance + recency))`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Explain {
    /// BM25F score of a direct lexical hit (0 otherwise).
    pub lexical: f32,
    /// Share of the question's information the note's words match (direct hits; 0 otherwise).
    pub coverage: f32,
    /// What feedback on earlier questions with these terms says of the note (-1..=1).
    pub learned: f32,
    /// The question is the note's title or id.
    pub title_match: bool,
    /// Evidence before priors: the lexical score normalised to the best passing hit, plus
    /// learned evidence and the title bonus; 1 for an anchor; or the decayed score carried over
    /// the trail.
    pub base: f32,
    /// Note-type multiplier.
    pub type_weight: f32,
    /// TTL multiplier.
    pub ttl_factor: f32,
    /// Usage reinforcement: `0.6 * ln(1 + uses apart from a question)` (at most 1), less for
    /// notes found wrong.
    pub usage: f32,
    /// `0.02 * importance`.
    pub importance: f32,
    /// Recency bonus (90-day half-life on the last use or edit).
    pub recency: f32,
    /// Query terms the note matched.
    pub matched_terms: Vec<String>,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub id: String,
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "type")]
    pub note_type: &'static str,
    pub score: f32,
    pub source: Source,
    /// Edges from a direct hit to this note (empty for direct hits).
    pub trail: Vec<TrailEdge>,
    /// The body's first characters.
    pub excerpt: String,
    pub explain: Explain,
}

/// A query term as evidence (`--explain`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermWeight {
    pub term: String,
    /// The idf it weighs in coverage; 0 when too common to say anything.
    pub idf: f32,
    /// Some note holds it (or a word within typo distance).
    pub in_memory: bool,
}

/// A lexical hit the score floor turned away, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejected {
    pub id: String,
    pub coverage: f32,
    pub reason: &'static str,
}

/// Why the question's lexical hits passed the score floor or did not (`--explain`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FloorReport {
    /// The question's terms and what each weighs.
    pub terms: Vec<TermWeight>,
    /// The best hits turned away (at most 5), best first.
    pub rejected: Vec<Rejected>,
    /// No direct hit covered much of the question: only the best two were returned, without the
    /// notes around them.
    pub weak: bool,
}

/// The answer to a query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recall {
    /// Query id (also the `qid` of its events).
    pub qid: String,
    pub results: Vec<Hit>,
    /// Why lexical hits passed the floor or not.
    pub floor: FloorReport,
    /// Time spent inside recall, microseconds.
    pub latency_us: u64,
}
