//! What an agent asks and what it gets back: `Query`, `Recall`, `Hit`, trails and score
//! explanations.

use crate::notes::{EdgeKind, Provenance};
use crate::ranking;
use serde::Serialize;

/// Most results one recall may return.
pub const MAX_LIMIT: usize = 200;
/// Default number of results.
pub const DEFAULT_LIMIT: usize = 10;
/// Most anchors in one query.
pub const MAX_ANCHORS: usize = 64;
/// Longest query text read, in bytes (see [`readable_part`]).
pub const MAX_QUERY_BYTES: usize = 4096;

/// The part of a question recall reads: all of it up to [`MAX_QUERY_BYTES`]; a longer one is cut
/// after the last whole word that fits (a word cut in two would be searched for as a word of its
/// own, or as the start of one), or at a character boundary when one word fills the limit.
pub fn readable_part(text: &str) -> &str {
    if text.len() <= MAX_QUERY_BYTES {
        return text;
    }
    let mut cut = MAX_QUERY_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let mid_word = head.chars().next_back().is_some_and(char::is_alphanumeric)
        && text[cut..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric);
    if !mid_word {
        return head;
    }
    match head.rfind(|c: char| !c.is_alphanumeric()) {
        Some(i) => &text[..i],
        None => head,
    }
}

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
            depth: ranking::DEFAULT_DEPTH,
            limit: DEFAULT_LIMIT,
            min_score: ranking::DEFAULT_MIN_SCORE,
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
    /// The note the edge leaves.
    pub from: String,
    /// The note it reaches.
    pub to: String,
    /// What the edge says.
    pub kind: EdgeKind,
    /// Who made it: a link in a note, a frontmatter field, or synthesis.
    pub provenance: Provenance,
}

/// A score taken apart (`--explain`): `score = base x (1 + usage) x type_weight x ttl_factor x
/// (1 + min(0.25, importance + recency))`, unless `placed` (the score is then a place next to a
/// note it replaces or that replaces it).
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
    /// learned evidence, the title bonus and `support`; 1 for an anchor; or the decayed score
    /// carried over the trail.
    pub base: f32,
    /// What the other hits linking to this one added to its `base` (a direct hit's graph
    /// support: [`crate::ranking::GRAPH_SUPPORT_WEIGHT`] per unit).
    pub support: f32,
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
    /// Its score is not the product of the parts above: it was placed next to a note it
    /// replaces or that replaces it (right above or right below it, see
    /// `recall::supersession`).
    pub placed: bool,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The note's id.
    pub id: String,
    /// The frontmatter's `name`.
    pub name: Option<String>,
    /// The frontmatter's `description`.
    pub description: Option<String>,
    /// The note's type (JSON key `type`).
    #[serde(rename = "type")]
    pub note_type: &'static str,
    /// The ranking score (higher first); comparable within one recall only.
    pub score: f32,
    /// How the note was reached.
    pub source: Source,
    /// Edges from a direct hit to this note (empty for direct hits).
    pub trail: Vec<TrailEdge>,
    /// The body's first characters.
    pub excerpt: String,
    /// The score taken apart (filled with `Query::explain`).
    pub explain: Explain,
    /// Notes that declare they replace this one (`supersedes` edges into it); empty for a note
    /// nothing replaces. A superseded note ranks below its successor when both are returned.
    pub superseded_by: Vec<String>,
    /// Notes this one contradicts or that contradict it (`contradicts` edges, both directions):
    /// the two disagree, and an agent should weigh them together.
    pub contradicts: Vec<String>,
}

/// A query term as evidence (`--explain`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermWeight {
    /// The term, as the tokenizer made it (folded, stemmed).
    pub term: String,
    /// The idf it weighs in coverage; 0 when too common to say anything.
    pub idf: f32,
    /// Some note holds it (or a word within typo distance), and it is not a name only the
    /// same letters in lower case stand for.
    pub in_memory: bool,
    /// The question writes it as a name (capitalised where no sentence starts); one no note
    /// holds weighs its full idf (`ranking::UNKNOWN_NAME_IDF_SHARE`), and so does one that no
    /// note writes capitalised (it then matches nothing: `in_memory` is false).
    pub name: bool,
    /// Another of the question's terms that this one is a form of ("certifi" of "certif",
    /// stemmed apart, matched only through it): the two count as one word, so this one weighs
    /// nothing.
    pub form_of: Option<String>,
}

/// A lexical hit the score floor turned away, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejected {
    /// The note turned away.
    pub id: String,
    /// The share of the question's informative weight it covered, 0..=1.
    pub coverage: f32,
    /// Which rule of the floor turned it away.
    pub reason: &'static str,
}

/// Why the question's lexical hits passed the score floor or did not (`--explain`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FloorReport {
    /// The question's terms and what each weighs.
    pub terms: Vec<TermWeight>,
    /// The best hits turned away (at most 5), best first.
    pub rejected: Vec<Rejected>,
    /// No direct hit covered much of the question: only the best two were returned (one when
    /// `unknown_weak`), without the notes around them.
    pub weak: bool,
    /// Some hits are strong, none answers enough of the question to vouch for the notes around
    /// them ([`crate::ranking::NEIGHBOUR_COVERAGE`], [`crate::ranking::NEIGHBOUR_WORDS`]):
    /// nothing reached over the graph was returned (a replaced note's successor still is), and
    /// only the best [`crate::ranking::ALONE_QUESTION_RESULTS`] hits.
    pub alone: bool,
    /// A share of the question's information ([`crate::ranking::UNKNOWN_SUBJECT_SHARE`] or
    /// more) is in words no note holds and no hit covers
    /// [`crate::ranking::NEIGHBOUR_COVERAGE`] of it, is named by it or is what feedback says it
    /// means: only the best [`crate::ranking::UNKNOWN_SUBJECT_RESULTS`] were returned (present
    /// only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unknown_subject: bool,
    /// `weak`, and [`crate::ranking::UNKNOWN_WEAK_SHARE`] of the question's information or more
    /// is in words no note holds: only the best [`crate::ranking::UNKNOWN_WEAK_RESULTS`] was
    /// returned (present only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unknown_weak: bool,
    /// Every hit matches only names the question writes (words it writes with a capital) and
    /// none of its other words: only the best [`crate::ranking::NAMES_ONLY_RESULTS`] was
    /// returned, and the notes about the names (their title, description or tags hold one)
    /// among the best [`crate::ranking::NAMED_NOTES_RESULTS`]; nothing reached over the graph
    /// (present only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub names_only: bool,
    /// The share of the question's information in words no note holds, as `unknown_subject`
    /// weighed it (for `--explain`; not in the JSON).
    #[serde(skip)]
    pub unknown_share: f32,
    /// Hits whose notes were read and hold the question's words they match only apart, each in
    /// another passage (`recall::passages`): not enough to bring their neighbours.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub apart: Vec<String>,
    /// The score a note the walk reached needed to be returned: `reached_share` of the best
    /// direct hit's (0 for a question with anchors, without direct hits, `alone` or `names_only`).
    pub reached_floor: f32,
    /// That share ([`crate::ranking::neighbour_share`] of how much of the question the best
    /// direct hit answers; 0 with anchors, `alone` or `names_only`).
    pub reached_share: f32,
    /// The question asks about what was there before ([`crate::ranking::PAST_WORDS`]): a
    /// replaced note ranks above the notes replacing it unless they lead it clearly.
    pub old_first: bool,
    /// The question asks whether something may be done ([`crate::ranking::asks_permission`]):
    /// rules (feedback notes) take the largest type weight, other notes the smallest (present
    /// only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub asks_permission: bool,
    /// Fewer notes than the limit were returned and a direct hit scored under the query's
    /// `min_score`, set above the default (present only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub under_min_score: bool,
    /// The bytes of the question read when it is longer than [`MAX_QUERY_BYTES`] (see
    /// [`readable_part`]) or holds more than [`crate::recall::MAX_QUERY_TERMS`] distinct words
    /// (read up to the last word before the first left out); `None` when all of it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<usize>,
}

/// The answer to a query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recall {
    /// Query id (also the `qid` of its events).
    pub qid: String,
    /// The results, best first.
    pub results: Vec<Hit>,
    /// Why lexical hits passed the floor or not.
    pub floor: FloorReport,
    /// Time spent inside recall, microseconds.
    pub latency_us: u64,
}

// ---- The JSON of a recall ---------------------------------------------------------------------
//
// `mnemon recall --json` and the MCP tool `memory_recall` print a recall as JSON that scripts and
// agents parse: both shapes are contracts. They are rendered here, once. The two front ends turn
// these views into a `serde_json::Value` before printing (as they always have), which writes each
// `f32` widened to `f64`; serialized directly, the same numbers print shorter.

/// The fields of a hit's JSON besides `id`, `name`, `description`, `score`, `source` and `trail`
/// (and `superseded_by` and `contradicts`, in both layouts, when not empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HitFields {
    /// `type`, the note type (`mnemon recall --json`).
    pub note_type: bool,
    /// `excerpt`, the body's first characters (MCP `memory_recall`).
    pub excerpt: bool,
    /// `explain`, the score taken apart (`mnemon recall --json --explain`).
    pub explain: bool,
}

/// The JSON view of one hit. Keys in this order, the optional ones as [`HitFields`] asks: `id`,
/// `name`, `description`, `type`, `score`, `source`, `trail`, `excerpt`, `explain`.
#[derive(Debug, Clone, Serialize)]
pub struct HitJson<'a> {
    id: &'a str,
    name: &'a Option<String>,
    description: &'a Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    note_type: Option<&'static str>,
    score: f32,
    source: Source,
    trail: &'a [TrailEdge],
    #[serde(skip_serializing_if = "Option::is_none")]
    excerpt: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<&'a Explain>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    superseded_by: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    contradicts: &'a [String],
}

impl Hit {
    /// This hit's JSON view with `fields`.
    pub fn json(&self, fields: HitFields) -> HitJson<'_> {
        HitJson {
            id: &self.id,
            name: &self.name,
            description: &self.description,
            note_type: fields.note_type.then_some(self.note_type),
            score: self.score,
            source: self.source,
            trail: &self.trail,
            excerpt: fields.excerpt.then_some(self.excerpt.as_str()),
            explain: fields.explain.then_some(&self.explain),
            superseded_by: &self.superseded_by,
            contradicts: &self.contradicts,
        }
    }
}

/// Which of the two JSON contracts of a recall to render. Both end with `question_read_bytes`
/// when the question was over [`MAX_QUERY_BYTES`] (how much of it was read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecallLayout {
    /// `mnemon recall --json`: `qid`, `results` (hits with `type`), `latency_us`; with `explain`,
    /// each hit's `explain` and then the recall's `floor`.
    Cli {
        /// Include the score explanations (`--explain`).
        explain: bool,
    },
    /// MCP `memory_recall`: `qid`, `latency_us`, `results` (hits with `excerpt`).
    Mcp,
}

/// The JSON view of a recall in one of its layouts ([`Recall::json`]).
#[derive(Debug, Clone, Copy)]
pub struct RecallJson<'a> {
    recall: &'a Recall,
    layout: RecallLayout,
}

impl Recall {
    /// This recall's JSON view in `layout`.
    pub fn json(&self, layout: RecallLayout) -> RecallJson<'_> {
        RecallJson {
            recall: self,
            layout,
        }
    }
}

impl Serialize for RecallJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let r = self.recall;
        let fields = match self.layout {
            RecallLayout::Cli { explain } => HitFields {
                note_type: true,
                excerpt: false,
                explain,
            },
            RecallLayout::Mcp => HitFields {
                excerpt: true,
                ..HitFields::default()
            },
        };
        let hits: Vec<HitJson<'_>> = r.results.iter().map(|h| h.json(fields)).collect();
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("qid", &r.qid)?;
        match self.layout {
            RecallLayout::Cli { explain } => {
                m.serialize_entry("results", &hits)?;
                m.serialize_entry("latency_us", &r.latency_us)?;
                if explain {
                    m.serialize_entry("floor", &r.floor)?;
                }
            }
            RecallLayout::Mcp => {
                m.serialize_entry("latency_us", &r.latency_us)?;
                m.serialize_entry("results", &hits)?;
            }
        }
        // Only for a question over a limit (bytes, distinct words), so that an agent knows what
        // was searched for.
        if let Some(read) = r.floor.read_bytes {
            m.serialize_entry("question_read_bytes", &read)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recall() -> Recall {
        Recall {
            qid: "s-q0".into(),
            results: vec![Hit {
                id: "b".into(),
                name: Some("B".into()),
                description: None,
                note_type: "project",
                score: 0.5,
                source: Source::Neighbor,
                trail: vec![TrailEdge {
                    from: "a".into(),
                    to: "b".into(),
                    kind: EdgeKind::References,
                    provenance: Provenance::Frontmatter,
                }],
                excerpt: "the body".into(),
                explain: Explain::default(),
                superseded_by: Vec::new(),
                contradicts: Vec::new(),
            }],
            floor: FloorReport::default(),
            latency_us: 7,
        }
    }

    /// Keys (in order) and JSON types of an object.
    fn shape(v: &serde_json::Value) -> Vec<(String, &'static str)> {
        let kind = |v: &serde_json::Value| match v {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "bool",
            serde_json::Value::Number(_) => "number",
            serde_json::Value::String(_) => "string",
            serde_json::Value::Array(_) => "array",
            serde_json::Value::Object(_) => "object",
        };
        v.as_object()
            .expect("an object")
            .iter()
            .map(|(k, v)| (k.clone(), kind(v)))
            .collect()
    }

    fn keys(list: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        list.iter().map(|(k, t)| (k.to_string(), *t)).collect()
    }

    /// The two contracts: key order and types of the recall and of one hit, per layout.
    #[test]
    fn recall_json_shapes_are_the_cli_and_mcp_contracts() {
        let r = recall();
        let cli = serde_json::to_value(r.json(RecallLayout::Cli { explain: false })).unwrap();
        assert_eq!(
            shape(&cli),
            keys(&[
                ("qid", "string"),
                ("results", "array"),
                ("latency_us", "number")
            ])
        );
        let hit = &cli["results"][0];
        let common = [
            ("id", "string"),
            ("name", "string"),
            ("description", "null"),
        ];
        let tail = [
            ("score", "number"),
            ("source", "string"),
            ("trail", "array"),
        ];
        let mut want = keys(&common);
        want.push(("type".into(), "string"));
        want.extend(keys(&tail));
        assert_eq!(shape(hit), want);
        assert_eq!(hit["source"], "neighbor");
        assert_eq!(
            shape(&hit["trail"][0]),
            keys(&[
                ("from", "string"),
                ("to", "string"),
                ("kind", "string"),
                ("provenance", "string")
            ])
        );

        let explained = serde_json::to_value(r.json(RecallLayout::Cli { explain: true })).unwrap();
        assert_eq!(
            shape(&explained).last(),
            Some(&("floor".to_string(), "object"))
        );
        assert_eq!(
            shape(&explained["results"][0]).last(),
            Some(&("explain".to_string(), "object"))
        );

        let mcp = serde_json::to_value(r.json(RecallLayout::Mcp)).unwrap();
        assert_eq!(
            shape(&mcp),
            keys(&[
                ("qid", "string"),
                ("latency_us", "number"),
                ("results", "array")
            ])
        );
        let mut want = keys(&common);
        want.extend(keys(&tail));
        want.push(("excerpt".into(), "string"));
        assert_eq!(shape(&mcp["results"][0]), want);
        // Floats print widened to f64 through a Value, as they always have.
        assert_eq!(
            mcp.to_string(),
            r#"{"qid":"s-q0","latency_us":7,"results":[{"id":"b","name":"B","description":null,"score":0.5,"source":"neighbor","trail":[{"from":"a","to":"b","kind":"references","provenance":"frontmatter"}],"excerpt":"the body"}]}"#
        );
    }
}
