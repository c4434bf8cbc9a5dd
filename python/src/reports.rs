//! What the calls return: the library's report types as read-only Python objects. Each has the
//! attributes of the Rust type and `to_dict()`, the report in the shape of its JSON (the keys
//! `mnemon ... --json` prints), ready for `json.dumps` or an agent's tool result.

use crate::convert::to_data;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// `s` as a Python string literal in a `__repr__`.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' | '\'' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A list of strings as Python writes it.
fn quote_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[{}]", quoted.join(", "))
}

/// One recalled note, best first in the list `Memory.recall` returns.
///
/// `score` ranks the hits of one recall (higher first; not comparable across recalls). `source`
/// says how the note was reached: `"direct"` (its words match the question, or it is an anchor),
/// `"neighbor"` (over links from a direct hit, the `trail`), or `"co_occur"` (over an edge mnemon
/// synthesized between notes that share a slug or a vocabulary).
///
/// Hits are values: equal when every field is, and picklable (to hand them to another process).
#[pyclass(frozen, module = "mnemon", name = "Hit")]
pub(crate) struct Hit {
    hit: mnemon::recall::Hit,
    /// `explain=True` was asked: `explain` is filled.
    explain: bool,
}

impl Hit {
    pub(crate) fn new(hit: mnemon::recall::Hit, explain: bool) -> Hit {
        Hit { hit, explain }
    }
}

#[pymethods]
impl Hit {
    /// The note's id: its path below `memory/` without `.md`.
    #[getter]
    fn id(&self) -> &str {
        &self.hit.id
    }

    /// The ranking score (higher first), comparable within one recall only.
    #[getter]
    fn score(&self) -> f64 {
        f64::from(self.hit.score)
    }

    /// How the note was reached: `"direct"`, `"neighbor"` or `"co_occur"` (the library's names,
    /// as in the JSON of `mnemon recall --json`).
    #[getter]
    fn source<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(py, &self.hit.source)
    }

    /// The edges from a direct hit to this note (empty for a direct hit): dicts with the keys
    /// `from`, `to`, `kind` (`"references"`, `"part_of"`, `"derived_from"`, `"supersedes"`,
    /// `"contradicts"`, `"co_occurs_slug"`, `"co_occurs_token"`) and `provenance`
    /// (`"frontmatter"`, `"inline-link"`, `"synthesized"`).
    #[getter]
    fn trail<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(py, &self.hit.trail)
    }

    /// The frontmatter's `name`, or None.
    #[getter]
    fn name(&self) -> Option<&str> {
        self.hit.name.as_deref()
    }

    /// Ids of the notes that declare they replace this one (it ranks below them); empty when
    /// nothing replaces it.
    #[getter]
    fn superseded_by(&self) -> Vec<String> {
        self.hit.superseded_by.clone()
    }

    /// Ids of the notes this one contradicts or that contradict it.
    #[getter]
    fn contradicts(&self) -> Vec<String> {
        self.hit.contradicts.clone()
    }

    /// The frontmatter's `description`, or None.
    #[getter]
    fn description(&self) -> Option<&str> {
        self.hit.description.as_deref()
    }

    /// The note's type: `"user"`, `"feedback"`, `"project"`, `"reference"`, `"index"` or
    /// `"unknown"`.
    #[getter(r#type)]
    fn note_type(&self) -> &'static str {
        self.hit.note_type
    }

    /// The start of the note's body.
    #[getter]
    fn excerpt(&self) -> &str {
        &self.hit.excerpt
    }

    /// The score taken apart (a dict: `lexical`, `coverage`, `learned`, `title_match`, `base`,
    /// `support` (what the hits linking to it added to `base`),
    /// `type_weight`, `ttl_factor`, `usage`, `importance`, `recency`, `matched_terms`, `placed`:
    /// the score is the place next to a note it replaces or that replaces it) when the
    /// recall was asked with `explain=True`, else None.
    #[getter]
    fn explain<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.explain
            .then(|| to_data(py, &self.hit.explain))
            .transpose()
    }

    /// The hit as a dict: `id`, `name`, `description`, `type`, `score`, `source`, `trail`,
    /// `excerpt`, and `explain` when it was asked for.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(
            py,
            &self.hit.json(mnemon::recall::HitFields {
                note_type: true,
                excerpt: true,
                explain: self.explain,
            }),
        )
    }

    /// Pickled as the hit's fields (its JSON, `explain` included) and whether `explain` was asked.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String, bool))> {
        let state = serde_json::to_string(&self.hit)
            .map_err(|e| crate::errors::plain(py, format!("could not pickle a Hit: {e}")))?;
        let restore = py.get_type::<Hit>().getattr("_from_state")?;
        Ok((restore, (state, self.explain)))
    }

    /// A hit from what `__reduce__` gave (for `pickle`).
    #[staticmethod]
    fn _from_state(py: Python<'_>, state: &str, explain: bool) -> PyResult<Hit> {
        let hit = HitState::parse(state).map_err(|e| {
            crate::errors::plain(
                py,
                format!("could not unpickle a Hit ({e}): pickle it again"),
            )
        })?;
        Ok(Hit { hit, explain })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Hit>()
            .is_ok_and(|o| o.get().explain == self.explain && o.get().hit == self.hit)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hit.id.hash(&mut h);
        self.hit.score.to_bits().hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        let source = serde_json::to_value(self.hit.source)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        format!(
            "Hit(id={}, score={:.4}, source={})",
            quote(&self.hit.id),
            self.hit.score,
            quote(&source)
        )
    }
}

/// A pickled [`Hit`]'s fields, read back from the JSON of `mnemon::recall::Hit`. The library's
/// types are written as JSON only; a field added there fails to build here until it is read.
#[derive(serde::Deserialize)]
struct HitState {
    id: String,
    name: Option<String>,
    description: Option<String>,
    #[serde(rename = "type")]
    note_type: String,
    score: f32,
    source: String,
    trail: Vec<TrailState>,
    excerpt: String,
    explain: ExplainState,
    superseded_by: Vec<String>,
    contradicts: Vec<String>,
}

#[derive(serde::Deserialize)]
struct TrailState {
    from: String,
    to: String,
    kind: String,
    provenance: String,
}

#[derive(serde::Deserialize)]
struct ExplainState {
    lexical: f32,
    coverage: f32,
    learned: f32,
    title_match: bool,
    base: f32,
    support: f32,
    type_weight: f32,
    ttl_factor: f32,
    usage: f32,
    importance: f32,
    recency: f32,
    matched_terms: Vec<String>,
    placed: bool,
}

impl HitState {
    fn parse(json: &str) -> Result<mnemon::recall::Hit, String> {
        use mnemon::recall::Source;
        let s: HitState = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let unknown = |what: &str, v: &str| format!("unknown {what} {v:?}");
        let note_type = mnemon::NoteType::ALL
            .into_iter()
            .map(mnemon::NoteType::as_str)
            .find(|t| *t == s.note_type)
            .ok_or_else(|| unknown("type", &s.note_type))?;
        let source = [Source::Direct, Source::Neighbor, Source::CoOccur]
            .into_iter()
            .find(|x| {
                serde_json::to_value(x)
                    .ok()
                    .as_ref()
                    .and_then(|v| v.as_str())
                    == Some(&s.source)
            })
            .ok_or_else(|| unknown("source", &s.source))?;
        let trail = s
            .trail
            .into_iter()
            .map(|t| {
                let kind = mnemon::EdgeKind::ALL
                    .into_iter()
                    .find(|k| k.as_str() == t.kind)
                    .ok_or_else(|| unknown("edge kind", &t.kind))?;
                let provenance = (0..=u8::MAX)
                    .filter_map(mnemon::Provenance::from_code)
                    .find(|p| p.as_str() == t.provenance)
                    .ok_or_else(|| unknown("provenance", &t.provenance))?;
                Ok(mnemon::recall::TrailEdge {
                    from: t.from,
                    to: t.to,
                    kind,
                    provenance,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let e = s.explain;
        Ok(mnemon::recall::Hit {
            id: s.id,
            name: s.name,
            description: s.description,
            note_type,
            score: s.score,
            source,
            trail,
            excerpt: s.excerpt,
            explain: mnemon::recall::Explain {
                lexical: e.lexical,
                coverage: e.coverage,
                learned: e.learned,
                title_match: e.title_match,
                base: e.base,
                support: e.support,
                type_weight: e.type_weight,
                ttl_factor: e.ttl_factor,
                usage: e.usage,
                importance: e.importance,
                recency: e.recency,
                matched_terms: e.matched_terms,
                placed: e.placed,
            },
            superseded_by: s.superseded_by,
            contradicts: s.contradicts,
        })
    }
}

/// A recall with its details (`Memory.recall_report`): the hits, the query id its events carry,
/// the time spent inside the engine, and why lexical matches passed the score floor or not.
/// Equal when every part is, and picklable, as its hits are.
#[pyclass(frozen, module = "mnemon", name = "Recall")]
pub(crate) struct Recall {
    /// The query id, as in the event log (`<session>-q<n>`; under a session given by name
    /// `<session>-p<pid>-q<n>`).
    #[pyo3(get)]
    qid: String,
    /// The results, best first (a list of `Hit`).
    #[pyo3(get)]
    hits: Py<PyList>,
    /// Microseconds spent inside the engine's recall (before its events were written).
    #[pyo3(get)]
    latency_us: u64,
    /// The library's `FloorReport` as its JSON: what `floor` gives, and what a pickle holds.
    floor: serde_json::Value,
    explain: bool,
}

impl Recall {
    pub(crate) fn new(
        py: Python<'_>,
        recall: mnemon::recall::Recall,
        explain: bool,
    ) -> PyResult<Recall> {
        let floor = serde_json::to_value(&recall.floor)
            .map_err(|e| crate::errors::plain(py, format!("could not convert a report: {e}")))?;
        Ok(Recall {
            qid: recall.qid,
            hits: hit_list(py, recall.results, explain)?.unbind(),
            latency_us: recall.latency_us,
            floor,
            explain,
        })
    }
}

/// The hits as a Python list of `Hit`.
pub(crate) fn hit_list(
    py: Python<'_>,
    hits: Vec<mnemon::recall::Hit>,
    explain: bool,
) -> PyResult<Bound<'_, PyList>> {
    let hits = hits
        .into_iter()
        .map(|h| Bound::new(py, Hit::new(h, explain)))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, hits)
}

#[pymethods]
impl Recall {
    /// Why the question's lexical matches passed the score floor or not (a dict: `terms`, each
    /// term with its `idf`, `in_memory`, `name` (the question writes it as a name) and `form_of`
    /// (the question's other term it is a form of, which it counts as);
    /// `rejected`, the best matches turned away with their `coverage` and `reason`; `weak`, true when no match covered much of the question
    /// (so only the best two were returned); `unknown_weak`, present (true) only when the question
    /// is weak and half of it or more is in words no note holds (so only the best one was returned);
    /// `alone`, true when some matches were strong but none covered enough of the question to
    /// vouch for the notes linked to it (so none reached over the graph was returned);
    /// `apart`, present only when some, the ids of matches whose notes hold the question's words
    /// they match only apart, each in another paragraph (so they brought no neighbours);
    /// `unknown_subject`, present (true) only when a fifth or more of the question is in words no note holds
    /// and no match answers most of it (so only the best four were returned); `names_only`,
    /// present (true) only when every match matched nothing of the question but the names it
    /// writes (so only the best one and the notes about those names among the best two were
    /// returned, nothing reached over the graph);
    /// `reached_floor`, the score a note reached over the graph needed, and `reached_share`, that
    /// score's share of the best direct hit's; both 0 with anchors, when `alone` or `names_only`; `old_first`, true when the
    /// question asks about what was there before, so a replaced note ranks above its successors;
    /// `asks_permission`, present (true) only when the question asks whether something may be
    /// done, so rules (feedback notes) weigh most in close calls).
    #[getter]
    fn floor<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(py, &self.floor)
    }

    /// How many bytes of a question over the length or word limit were read (whole words), or None
    /// when the whole question was read: the recall answered that part only.
    #[getter]
    fn question_read_bytes(&self) -> Option<u64> {
        self.floor
            .get("read_bytes")
            .and_then(serde_json::Value::as_u64)
    }

    /// The recall as `mnemon recall --json` prints it (with `--explain` when `explain=True`
    /// was asked): `qid`, `results` (each hit's `to_dict()`), `latency_us`, and `floor`; and
    /// `question_read_bytes` for a question over the length or word limit.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("qid", &self.qid)?;
        let results = PyList::empty(py);
        for hit in self.hits.bind(py).iter() {
            results.append(hit.cast::<Hit>()?.get().to_dict(py)?)?;
        }
        d.set_item("results", results)?;
        d.set_item("latency_us", self.latency_us)?;
        if self.explain {
            d.set_item("floor", self.floor(py)?)?;
        }
        // As the CLI's and the MCP tool's JSON: only for a question over the limit.
        if let Some(read) = self.question_read_bytes() {
            d.set_item("question_read_bytes", read)?;
        }
        Ok(d)
    }

    /// Pickled as its parts: the qid, the hits (each pickled as a `Hit`), the latency, the floor
    /// report's JSON and whether `explain` was asked.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (String, Py<PyList>, u64, String, bool))> {
        let restore = py.get_type::<Recall>().getattr("_from_state")?;
        let state = (
            self.qid.clone(),
            self.hits.clone_ref(py),
            self.latency_us,
            self.floor.to_string(),
            self.explain,
        );
        Ok((restore, state))
    }

    /// A recall from what `__reduce__` gave (for `pickle`).
    #[staticmethod]
    fn _from_state(
        py: Python<'_>,
        qid: String,
        hits: Bound<'_, PyList>,
        latency_us: u64,
        floor: &str,
        explain: bool,
    ) -> PyResult<Recall> {
        let floor = serde_json::from_str(floor).map_err(|e| {
            crate::errors::plain(
                py,
                format!("could not unpickle a Recall ({e}): pickle it again"),
            )
        })?;
        for hit in hits.iter() {
            hit.cast::<Hit>()?;
        }
        Ok(Recall {
            qid,
            hits: hits.unbind(),
            latency_us,
            floor,
            explain,
        })
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<Recall>() else {
            return Ok(false);
        };
        let o = other.get();
        if (&o.qid, o.latency_us, &o.floor, o.explain)
            != (&self.qid, self.latency_us, &self.floor, self.explain)
        {
            return Ok(false);
        }
        self.hits.bind(py).eq(o.hits.bind(py))
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&self.qid, self.latency_us).hash(&mut h);
        h.finish()
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.hits.bind(py).len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.hits.bind(py).try_iter().map(Bound::into_any)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Recall(qid={}, hits={}, latency_us={})",
            quote(&self.qid),
            self.hits.bind(py).len(),
            self.latency_us
        )
    }
}

/// Defines `to_dict()` (the report's JSON shape) and `__repr__` for a report class keeping the
/// library's value in `raw`, with the class's other methods (`{ ... }`).
macro_rules! report_methods {
    ($class:ident, $repr:expr $(, { $($extra:tt)* })?) => {
        #[pymethods]
        impl $class {
            $($($extra)*)?

            /// The report as a dict, with the keys of its JSON (`mnemon ... --json`).
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                to_data(py, &self.raw)
            }

            fn __repr__(&self) -> String {
                #[allow(clippy::redundant_closure_call)]
                ($repr)(self)
            }
        }
    };
}

/// What `Memory.index` did. Empty `changed` and `removed` lists mean nothing changed.
#[pyclass(frozen, module = "mnemon", name = "IndexReport")]
pub(crate) struct IndexReport {
    /// Notes in the index after this scan.
    #[pyo3(get)]
    notes: u64,
    /// Edges in the index after this scan, explicit and synthesized.
    #[pyo3(get)]
    edges: u64,
    /// Ids added or changed by this scan.
    #[pyo3(get)]
    changed: Vec<String>,
    /// Ids that left the memory in this scan.
    #[pyo3(get)]
    removed: Vec<String>,
    /// Wall time of the whole scan, milliseconds.
    #[pyo3(get)]
    elapsed_ms: u64,
    raw: mnemon::IndexReport,
}

impl From<mnemon::IndexReport> for IndexReport {
    fn from(r: mnemon::IndexReport) -> IndexReport {
        IndexReport {
            notes: r.notes,
            edges: r.edges,
            changed: r.changed.clone(),
            removed: r.removed.clone(),
            elapsed_ms: r.elapsed_ms,
            raw: r,
        }
    }
}

report_methods!(
    IndexReport,
    |r: &IndexReport| format!(
        "IndexReport(notes={}, edges={}, changed={}, removed={}, errors={}, elapsed_ms={})",
        r.notes,
        r.edges,
        r.changed.len(),
        r.removed.len(),
        r.raw.errors.len(),
        r.elapsed_ms
    ),
    {
        /// Every current problem (walk errors, then per-note problems): dicts with `path` (below
        /// `memory/`) and `message` (what is wrong, and the fix).
        #[getter]
        fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.errors)
        }
    }
);

/// A note's folded usage statistics (`Memory.stats`, `mnemon stats`). Times are milliseconds
/// since the Unix epoch (in `to_dict()` under the JSON keys `last_recalled_at`,
/// `importance_ts`, `last_used_at`).
#[pyclass(frozen, module = "mnemon", name = "NodeStatsView")]
pub(crate) struct NodeStatsView {
    /// The note's id.
    #[pyo3(get)]
    id: String,
    /// Times the note was returned by a recall.
    #[pyo3(get)]
    recall_count: u64,
    /// When it was last returned by a recall, or None.
    #[pyo3(get)]
    last_recalled_ms: Option<i64>,
    /// The latest importance mark, 1 to 10, or None.
    #[pyo3(get)]
    importance: Option<u8>,
    /// When the latest importance mark was made, or None.
    #[pyo3(get)]
    importance_tagged_ms: Option<i64>,
    /// Times an agent said it used the note (feedback) or fetched it by id.
    #[pyo3(get)]
    used_count: u64,
    /// Of those, the uses tied to no question (fetches, feedback naming no question).
    #[pyo3(get)]
    untied_used: u64,
    /// Times an agent said the note was wrong for its question.
    #[pyo3(get)]
    wrong_count: u64,
    /// When it was last used, or None.
    #[pyo3(get)]
    last_used_ms: Option<i64>,
    raw: mnemon::NodeStatsView,
}

impl From<mnemon::NodeStatsView> for NodeStatsView {
    fn from(s: mnemon::NodeStatsView) -> NodeStatsView {
        NodeStatsView {
            id: s.id.clone(),
            recall_count: s.recall_count,
            last_recalled_ms: s.last_recalled_ms,
            importance: s.importance,
            importance_tagged_ms: s.importance_tagged_ms,
            used_count: s.used_count,
            untied_used: s.untied_used,
            wrong_count: s.wrong_count,
            last_used_ms: s.last_used_ms,
            raw: s,
        }
    }
}

report_methods!(NodeStatsView, |s: &NodeStatsView| format!(
    "NodeStatsView(id={}, recall_count={}, importance={}, used_count={}, wrong_count={})",
    quote(&s.id),
    s.recall_count,
    s.importance
        .map_or_else(|| "None".to_string(), |i| i.to_string()),
    s.used_count,
    s.wrong_count
));

/// A note with its edges both ways (`Memory.show`, `mnemon show`).
#[pyclass(frozen, module = "mnemon", name = "NodeView")]
pub(crate) struct NodeView {
    /// The note's id: its path below `memory/` without `.md`.
    #[pyo3(get)]
    id: String,
    /// The note file, relative to `memory/`.
    #[pyo3(get)]
    path: String,
    /// The frontmatter's `name`, or None.
    #[pyo3(get)]
    name: Option<String>,
    /// The note's type (`"user"`, `"feedback"`, `"project"`, `"reference"`, ...).
    #[pyo3(get, name = "type")]
    note_type: &'static str,
    /// The frontmatter's `description`, or None.
    #[pyo3(get)]
    description: Option<String>,
    /// The frontmatter's `tags`.
    #[pyo3(get)]
    tags: Vec<String>,
    /// Whether the note is pinned into the core view.
    #[pyo3(get)]
    pin: bool,
    /// The frontmatter's `created_at`, Unix seconds, or None.
    #[pyo3(get)]
    created_s: Option<i64>,
    /// The frontmatter's `updated_at`, Unix seconds, or None.
    #[pyo3(get)]
    updated_s: Option<i64>,
    /// Days after `updated_at` (or `created_at`) when the note stops ranking as fresh, or None.
    #[pyo3(get)]
    ttl_days: Option<u32>,
    /// The start of the body, as recall shows it.
    #[pyo3(get)]
    excerpt: String,
    raw: mnemon::NodeView,
}

impl From<mnemon::NodeView> for NodeView {
    fn from(v: mnemon::NodeView) -> NodeView {
        NodeView {
            id: v.id.clone(),
            path: v.path.clone(),
            name: v.name.clone(),
            note_type: v.note_type,
            description: v.description.clone(),
            tags: v.tags.clone(),
            pin: v.pin,
            created_s: v.created_s,
            updated_s: v.updated_s,
            ttl_days: v.ttl_days,
            excerpt: v.excerpt.clone(),
            raw: v,
        }
    }
}

report_methods!(
    NodeView,
    |v: &NodeView| format!(
        "NodeView(id={}, type={}, edges_out={}, edges_in={})",
        quote(&v.id),
        quote(v.note_type),
        v.raw.edges_out.len(),
        v.raw.edges_in.len()
    ),
    {
        /// Edges leaving the note: dicts with `to`, `kind`, `provenance`, `confidence` (0 to 1)
        /// and `dangling` (the target is not a note).
        #[getter]
        fn edges_out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.edges_out)
        }

        /// Edges arriving at the note: dicts with `from`, `kind`, `provenance`, `confidence`.
        #[getter]
        fn edges_in<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.edges_in)
        }

        /// The sha256 (hex) of the note file as it is now: pass it as `expected_sha256` to
        /// `Memory.write_note` to replace the note. None when the file cannot be read.
        #[getter]
        fn sha256(&self) -> Option<String> {
            self.raw.sha256.clone()
        }
    }
);

/// What `Memory.feedback` recorded.
#[pyclass(frozen, module = "mnemon", name = "FeedbackReport")]
pub(crate) struct FeedbackReport {
    /// The recall it is about ("" when the question given is not this process's last recall).
    #[pyo3(get)]
    qid: String,
    /// The question the verdicts are for ("" when none is known: then only the notes' use
    /// counts change).
    #[pyo3(get)]
    query: String,
    /// The notes recorded as used (each once).
    #[pyo3(get)]
    used: Vec<String>,
    /// The notes recorded as wrong for the question (each once).
    #[pyo3(get)]
    wrong: Vec<String>,
    raw: mnemon::FeedbackReport,
}

impl From<mnemon::FeedbackReport> for FeedbackReport {
    fn from(r: mnemon::FeedbackReport) -> FeedbackReport {
        FeedbackReport {
            qid: r.qid.clone(),
            query: r.query.clone(),
            used: r.used.clone(),
            wrong: r.wrong.clone(),
            raw: r,
        }
    }
}

report_methods!(FeedbackReport, |r: &FeedbackReport| format!(
    "FeedbackReport(qid={}, query={}, used={}, wrong={})",
    quote(&r.qid),
    quote(&r.query),
    quote_list(&r.used),
    quote_list(&r.wrong)
));

/// The core view (`Memory.core`): the pinned and important notes rendered as Markdown into a
/// token budget, for a system prompt. `str(view)` is the text.
#[pyclass(frozen, module = "mnemon", name = "CoreView")]
pub(crate) struct CoreView {
    /// The rendered Markdown.
    #[pyo3(get)]
    text: String,
    /// Estimated tokens of `text`.
    #[pyo3(get)]
    tokens_used: usize,
    /// The budget it was rendered into.
    #[pyo3(get)]
    budget_tokens: usize,
    /// Ids of the notes in `text`, in order.
    #[pyo3(get)]
    included: Vec<String>,
    /// Ids of the notes that qualified but did not fit.
    #[pyo3(get)]
    left_out: Vec<String>,
    /// Ids of pinned or important notes left out because a newer note replaces them.
    #[pyo3(get)]
    superseded: Vec<String>,
    raw: mnemon::core_view::CoreView,
}

impl From<mnemon::core_view::CoreView> for CoreView {
    fn from(v: mnemon::core_view::CoreView) -> CoreView {
        CoreView {
            text: v.text.clone(),
            tokens_used: v.tokens_used,
            budget_tokens: v.budget_tokens,
            included: v.included.clone(),
            left_out: v.left_out.clone(),
            superseded: v.superseded.clone(),
            raw: v,
        }
    }
}

#[pymethods]
impl CoreView {
    /// The report as a dict, with the keys of its JSON (`mnemon core --json`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(py, &self.raw)
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!(
            "CoreView(tokens_used={}, budget_tokens={}, included={}, left_out={})",
            self.tokens_used,
            self.budget_tokens,
            quote_list(&self.included),
            quote_list(&self.left_out)
        )
    }
}

/// What `Memory.doctor` found. `healthy` is False when any list is non-empty or the index is
/// not ok.
#[pyclass(frozen, module = "mnemon", name = "DoctorReport")]
pub(crate) struct DoctorReport {
    /// Nothing below needs attention.
    #[pyo3(get)]
    healthy: bool,
    /// Notes in the index.
    #[pyo3(get)]
    notes: u64,
    /// Edges in the index, explicit and synthesized.
    #[pyo3(get)]
    edges: u64,
    /// Files holding conflict markers.
    #[pyo3(get)]
    conflicts: Vec<String>,
    /// Where the index store differs from the notes (`mnemon doctor --fix` rebuilds it).
    #[pyo3(get)]
    store_damage: Vec<String>,
    raw: mnemon::DoctorReport,
}

impl From<mnemon::DoctorReport> for DoctorReport {
    fn from(r: mnemon::DoctorReport) -> DoctorReport {
        DoctorReport {
            healthy: r.healthy,
            notes: r.notes,
            edges: r.edges,
            conflicts: r.conflicts.clone(),
            store_damage: r.store_damage.clone(),
            raw: r,
        }
    }
}

report_methods!(
    DoctorReport,
    |r: &DoctorReport| format!(
        "DoctorReport(healthy={}, notes={}, edges={})",
        if r.healthy { "True" } else { "False" },
        r.notes,
        r.edges
    ),
    {
        /// Links to ids no note has: dicts with `from`, `to`, `kind`, `provenance`.
        #[getter]
        fn dangling<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.dangling)
        }

        /// Notes with problems: dicts with `path`, `kind`, `message` (what is wrong and the fix).
        #[getter]
        fn note_errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.note_errors)
        }

        /// Pairs of notes that say nearly the same thing and are not linked: dicts with `a`,
        /// `b` (ids, `a` < `b`) and `similarity` (0..1), most similar first.
        #[getter]
        fn near_duplicates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.near_duplicates)
        }

        /// What the walk of `memory/` could not read or refused: dicts with `path`, `message`.
        #[getter]
        fn walk_errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.walk_errors)
        }

        /// The derived index's health: a dict with `path`, `schema_version`, `ok`, `message`.
        #[getter]
        fn index<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.index)
        }

        /// Notes that replace each other in a circle (`supersedes` from each to the next, back
        /// to the first), each cycle a list of ids, sorted: recall ignores these edges for
        /// ranking until one of the notes stops declaring it.
        #[getter]
        fn supersede_cycles(&self) -> Vec<Vec<String>> {
            self.raw.supersede_cycles.clone()
        }

        /// Pairs of notes that say they contradict each other (`contradicts`): dicts with `a`
        /// and `b` (ids, `a` < `b`). Not errors: for a person to settle.
        #[getter]
        fn contradictions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            to_data(py, &self.raw.contradictions)
        }

        /// Near-duplicate pairs found beyond the ones `near_duplicates` lists.
        #[getter]
        fn near_duplicates_omitted(&self) -> usize {
            self.raw.near_duplicates_omitted
        }
    }
);
