//! Ground-truth files for retrieval evaluation.
//!
//! The format is the one of the Loopal memory eval set (`../shared/eval/loopal-58/ground_truth.yaml`
//! relative to the project root): a top-level `queries:` list whose entries carry an `id`, an
//! optional `description`, a `mode` (`query`, `anchor` or `mixed`), the `query` text and/or the
//! `anchors` list the mode needs, and the graded `relevant` node ids (`{ id, relevance }`, relevance
//! 1..=3). [`load_truth`] / [`parse_truth`] read and validate such a file; every error names the
//! file and says what to fix.
//!
//! Validation rules (checked in file order, first failure wins):
//! - query ids are non-empty and unique;
//! - `mode` is present; `query` mode needs a non-empty `query` and no `anchors`, `anchor` mode needs
//!   a non-empty `anchors` list and no `query`, `mixed` needs both;
//! - anchor ids are non-empty;
//! - `relevant` is present; its ids are non-empty and unique within the query, and every
//!   `relevance` is in 1..=3. An explicit empty list (`relevant: []`) marks a question the memory
//!   has no answer for: it is scored by how little comes back, not by rank;
//! - `kind` (optional) names the kind of question (`paraphrase`, `typo`, `off_topic`, ...): one
//!   word of `[a-z_]`; reports break metrics down by it;
//! - unknown keys are rejected (they are almost always typos such as `anchor:` or `relevence:`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How a query is issued against the engine (see NOTICE.md of the eval set).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Recall by the query text only.
    Query,
    /// Recall from the anchor node ids only.
    Anchor,
    /// Recall by both the query text and the anchors.
    Mixed,
}

/// One graded relevant node of a query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Relevant {
    /// Node id (file name without `.md`).
    pub id: String,
    /// Graded relevance, 1 (marginal) ..= 3 (essential).
    pub relevance: u8,
}

/// One validated ground-truth query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TruthQuery {
    /// Unique query id (e.g. `q01`).
    pub id: String,
    /// Human description; empty when the file has none.
    pub description: String,
    /// How the query is issued.
    pub mode: Mode,
    /// Query text; `Some` (non-blank) exactly for [`Mode::Query`] and [`Mode::Mixed`].
    pub query: Option<String>,
    /// Anchor node ids; non-empty exactly for [`Mode::Anchor`] and [`Mode::Mixed`].
    pub anchors: Vec<String>,
    /// Graded relevant nodes, in file order, ids unique; empty for a question with no answer.
    pub relevant: Vec<Relevant>,
    /// The kind of question (`paraphrase`, `typo`, ...); empty when the file gives none.
    pub kind: String,
}

impl TruthQuery {
    /// The relevant list as `(id, grade)` pairs, the shape the metric functions take.
    pub fn relevant_pairs(&self) -> Vec<(&str, u8)> {
        self.relevant
            .iter()
            .map(|r| (r.id.as_str(), r.relevance))
            .collect()
    }
}

/// A whole validated ground-truth file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Truth {
    /// Queries in file order.
    pub queries: Vec<TruthQuery>,
}

/// Why a ground-truth file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TruthError {
    /// The file could not be read.
    #[error(
        "cannot read ground-truth file {}: {source}; check that the path is right and the file is readable",
        path.display()
    )]
    Io {
        /// File that was being read.
        path: PathBuf,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// The file is not YAML of the expected shape.
    #[error(
        "ground-truth file {} is not valid: {message}; expected a top-level `queries:` list whose \
         entries have `id`, `mode` (query|anchor|mixed), `query` and/or `anchors`, and \
         `relevant: [{{ id, relevance }}]`",
        path.display()
    )]
    Yaml {
        /// File that was being parsed.
        path: PathBuf,
        /// Parser message (includes line and column when known).
        message: String,
    },
    /// The YAML parsed but an entry breaks a rule.
    #[error("ground-truth file {}, query `{query_id}`: {message}", path.display())]
    Invalid {
        /// File that was being validated.
        path: PathBuf,
        /// Offending query id (or `#N` with its 1-based position when the id itself is empty).
        query_id: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Reads and validates a ground-truth file.
pub fn load_truth(path: &Path) -> Result<Truth, TruthError> {
    let text = std::fs::read_to_string(path).map_err(|source| TruthError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_truth(&text, path)
}

/// Parses and validates ground-truth YAML; `path_for_messages` only appears in errors.
pub fn parse_truth(text: &str, path_for_messages: &Path) -> Result<Truth, TruthError> {
    let raw: RawTruth = serde_yaml_ng::from_str(text).map_err(|e| TruthError::Yaml {
        path: path_for_messages.to_path_buf(),
        message: e.to_string(),
    })?;

    if raw.queries.is_empty() {
        return Err(TruthError::Yaml {
            path: path_for_messages.to_path_buf(),
            message: "`queries` is empty: there is nothing to score".to_string(),
        });
    }
    let mut first_position: HashMap<String, usize> = HashMap::new();
    let mut queries = Vec::with_capacity(raw.queries.len());
    for (index, entry) in raw.queries.into_iter().enumerate() {
        let position = index + 1;
        let invalid = |query_id: &str, message: String| TruthError::Invalid {
            path: path_for_messages.to_path_buf(),
            query_id: query_id.to_string(),
            message,
        };

        let id = entry.id.trim().to_string();
        if id.is_empty() {
            return Err(invalid(
                &format!("#{position}"),
                format!("entry #{position} of `queries` has an empty `id`; give it a unique id"),
            ));
        }
        if let Some(first) = first_position.get(&id) {
            return Err(invalid(
                &id,
                format!(
                    "duplicate query id (entries #{first} and #{position}); give each query a \
                     unique id"
                ),
            ));
        }
        first_position.insert(id.clone(), position);

        let Some(mode) = entry.mode else {
            return Err(invalid(
                &id,
                "missing `mode`; set it to `query`, `anchor` or `mixed`".to_string(),
            ));
        };

        let query = entry.query.filter(|q| !q.trim().is_empty());
        let anchors = entry.anchors.unwrap_or_default();
        let (mode_name, needs_query, needs_anchors) = match mode {
            Mode::Query => ("query", true, false),
            Mode::Anchor => ("anchor", false, true),
            Mode::Mixed => ("mixed", true, true),
        };
        let problem = match (
            needs_query,
            query.is_some(),
            needs_anchors,
            !anchors.is_empty(),
        ) {
            (true, false, _, _) => Some(format!(
                "mode `{mode_name}` needs a non-empty `query` text; add `query: \"...\"`{}",
                if mode == Mode::Mixed {
                    " or change the mode to `anchor`"
                } else {
                    ""
                }
            )),
            (_, _, true, false) => Some(format!(
                "mode `{mode_name}` needs a non-empty `anchors` list; add \
                 `anchors: [\"node-id\"]`{}",
                if mode == Mode::Mixed {
                    " or change the mode to `query`"
                } else {
                    ""
                }
            )),
            (false, true, _, _) => Some(format!(
                "mode `{mode_name}` does not use `query`; remove it or change the mode to `mixed`"
            )),
            (_, _, false, true) => Some(format!(
                "mode `{mode_name}` does not use `anchors`; remove them or change the mode to \
                 `mixed`"
            )),
            _ => None,
        };
        if let Some(message) = problem {
            return Err(invalid(&id, message));
        }
        if let Some(n) = anchors.iter().position(|a| a.trim().is_empty()) {
            return Err(invalid(
                &id,
                format!(
                    "anchor #{} is empty; put a node id there or remove it",
                    n + 1
                ),
            ));
        }

        let Some(raw_relevant) = entry.relevant else {
            return Err(invalid(
                &id,
                "`relevant` is missing; list at least one `{ id, relevance }` so the query can \
                 be scored, or write `relevant: []` for a question the memory has no answer for"
                    .to_string(),
            ));
        };
        let kind = entry.kind.unwrap_or_default().trim().to_string();
        if !kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
            return Err(invalid(
                &id,
                format!(
                    "`kind: {kind}` is not one word of a-z and _; write e.g. `kind: paraphrase`"
                ),
            ));
        }
        let mut relevant: Vec<Relevant> = Vec::with_capacity(raw_relevant.len());
        for (n, r) in raw_relevant.into_iter().enumerate() {
            let rid = r.id.trim().to_string();
            if rid.is_empty() {
                return Err(invalid(
                    &id,
                    format!(
                        "relevant entry #{} has an empty `id`; put a node id there",
                        n + 1
                    ),
                ));
            }
            if relevant.iter().any(|seen| seen.id == rid) {
                return Err(invalid(
                    &id,
                    format!(
                        "relevant id `{rid}` is listed twice; keep one entry with its highest grade"
                    ),
                ));
            }
            let relevance = match u8::try_from(r.relevance) {
                Ok(g @ 1..=3) => g,
                _ => {
                    return Err(invalid(
                        &id,
                        format!(
                            "relevant id `{rid}` has relevance {}; use 1, 2 or 3",
                            r.relevance
                        ),
                    ));
                }
            };
            relevant.push(Relevant { id: rid, relevance });
        }

        queries.push(TruthQuery {
            id,
            description: entry.description.unwrap_or_default(),
            mode,
            query,
            anchors,
            relevant,
            kind,
        });
    }
    Ok(Truth { queries })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTruth {
    queries: Vec<RawQuery>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuery {
    id: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    mode: Option<Mode>,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    anchors: Option<Vec<String>>,
    #[serde(default)]
    relevant: Option<Vec<RawRelevant>>,
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRelevant {
    id: String,
    /// Wider than `u8` so out-of-range grades get a validation message instead of a parse error.
    relevance: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Truth, TruthError> {
        parse_truth(text, Path::new("gt.yaml"))
    }

    /// Parses `text`, expects `Invalid` for `want_id`, returns the message.
    fn invalid_message(text: &str, want_id: &str) -> String {
        match parse(text) {
            Err(TruthError::Invalid {
                path,
                query_id,
                message,
            }) => {
                assert_eq!(path, Path::new("gt.yaml"));
                assert_eq!(query_id, want_id);
                message
            }
            other => panic!("expected Invalid for {want_id}, got {other:?}"),
        }
    }

    const GOOD: &str = r#"
queries:
  - id: q1
    description: text only
    mode: query
    query: "twitter rate limit"
    relevant:
      - { id: a, relevance: 3 }
      - { id: b, relevance: 1 }
  - id: q2
    mode: anchor
    anchors: ["a"]
    relevant:
      - { id: b, relevance: 2 }
  - id: q3
    description: both
    mode: mixed
    query: chrome
    anchors: [a, b]
    relevant:
      - id: c
        relevance: 1
"#;

    #[test]
    fn parses_all_modes_and_defaults() {
        let truth = parse(GOOD).unwrap();
        assert_eq!(truth.queries.len(), 3);
        let q1 = &truth.queries[0];
        assert_eq!(q1.id, "q1");
        assert_eq!(q1.description, "text only");
        assert_eq!(q1.mode, Mode::Query);
        assert_eq!(q1.query.as_deref(), Some("twitter rate limit"));
        assert!(q1.anchors.is_empty());
        assert_eq!(
            q1.relevant,
            vec![
                Relevant {
                    id: "a".into(),
                    relevance: 3
                },
                Relevant {
                    id: "b".into(),
                    relevance: 1
                },
            ]
        );
        assert_eq!(q1.relevant_pairs(), vec![("a", 3), ("b", 1)]);
        let q2 = &truth.queries[1];
        assert_eq!(q2.description, "", "missing description becomes empty");
        assert_eq!(q2.mode, Mode::Anchor);
        assert_eq!(q2.query, None);
        assert_eq!(q2.anchors, vec!["a".to_string()]);
        let q3 = &truth.queries[2];
        assert_eq!(q3.mode, Mode::Mixed);
        assert_eq!(q3.query.as_deref(), Some("chrome"));
        assert_eq!(q3.anchors, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(q3.relevant_pairs(), vec![("c", 1)]);
    }

    /// An empty list scored every metric 0 at exit 0, as if recall had failed every query.
    #[test]
    fn empty_query_list_is_an_error() {
        let e = parse("queries: []").unwrap_err().to_string();
        assert!(e.contains("`queries` is empty"), "{e}");
    }

    /// The real eval set, beside the repository (`../shared`, as in CI).
    #[test]
    fn loads_real_loopal_58() {
        let path = crate::fixtures::loopal58().join("ground_truth.yaml");
        let truth = load_truth(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(truth.queries.len(), 58);
        let count = |m: Mode| truth.queries.iter().filter(|q| q.mode == m).count();
        assert_eq!(count(Mode::Query), 30);
        assert_eq!(count(Mode::Anchor), 14);
        assert_eq!(count(Mode::Mixed), 14);
        let q01 = &truth.queries[0];
        assert_eq!(q01.id, "q01");
        assert_eq!(q01.query.as_deref(), Some("twitter rate limit ban"));
        assert_eq!(q01.relevant[0].id, "twitter-rate-limit");
        assert_eq!(q01.relevant[0].relevance, 3);
    }

    #[test]
    fn missing_file_is_io_error_naming_the_path() {
        let path = Path::new("/definitely/not/here/ground_truth.yaml");
        let err = load_truth(path).unwrap_err();
        assert!(matches!(err, TruthError::Io { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("/definitely/not/here/ground_truth.yaml"),
            "{text}"
        );
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn bad_yaml_is_yaml_error() {
        for text in [
            "queries: [",
            "not_queries: []",
            "queries:\n  - id: q1\n    mode: sideways\n    query: x\n    relevant: [{ id: a, relevance: 1 }]\n",
            "queries:\n  - id: q1\n    mode: query\n    query: x\n    relevent: [{ id: a, relevance: 1 }]\n",
            "queries:\n  - id: q1\n    mode: query\n    query: x\n    relevant: [{ id: a, relevance: high }]\n",
            "queries:\n  - mode: query\n    query: x\n    relevant: [{ id: a, relevance: 1 }]\n",
        ] {
            let err = parse(text).unwrap_err();
            assert!(matches!(err, TruthError::Yaml { .. }), "{text:?}: {err:?}");
            let shown = err.to_string();
            assert!(shown.contains("gt.yaml"), "{shown}");
            assert!(shown.contains("queries:"), "{shown}");
        }
    }

    #[test]
    fn query_mode_needs_query() {
        let m = invalid_message(
            "queries:\n  - id: q1\n    mode: query\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q1",
        );
        assert!(m.contains("needs a non-empty `query`"), "{m}");
        let m = invalid_message(
            "queries:\n  - id: q1\n    mode: query\n    query: \"  \"\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q1",
        );
        assert!(m.contains("needs a non-empty `query`"), "{m}");
    }

    #[test]
    fn anchor_mode_needs_anchors() {
        let m = invalid_message(
            "queries:\n  - id: q2\n    mode: anchor\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q2",
        );
        assert!(m.contains("needs a non-empty `anchors`"), "{m}");
        let m = invalid_message(
            "queries:\n  - id: q2\n    mode: anchor\n    anchors: []\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q2",
        );
        assert!(m.contains("needs a non-empty `anchors`"), "{m}");
    }

    #[test]
    fn mixed_mode_needs_both() {
        let m = invalid_message(
            "queries:\n  - id: q3\n    mode: mixed\n    anchors: [b]\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q3",
        );
        assert!(m.contains("`query`"), "{m}");
        let m = invalid_message(
            "queries:\n  - id: q3\n    mode: mixed\n    query: x\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q3",
        );
        assert!(m.contains("`anchors`"), "{m}");
    }

    #[test]
    fn mode_must_match_fields_present() {
        let m = invalid_message(
            "queries:\n  - id: q1\n    mode: query\n    query: x\n    anchors: [b]\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q1",
        );
        assert!(m.contains("does not use `anchors`"), "{m}");
        let m = invalid_message(
            "queries:\n  - id: q2\n    mode: anchor\n    query: x\n    anchors: [b]\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q2",
        );
        assert!(m.contains("does not use `query`"), "{m}");
        let m = invalid_message(
            "queries:\n  - id: q2\n    mode: anchor\n    anchors: [b, \"\"]\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q2",
        );
        assert!(m.contains("anchor #2 is empty"), "{m}");
    }

    #[test]
    fn missing_mode_is_invalid() {
        let m = invalid_message(
            "queries:\n  - id: q1\n    query: x\n    relevant: [{ id: a, relevance: 1 }]\n",
            "q1",
        );
        assert!(m.contains("missing `mode`"), "{m}");
    }

    #[test]
    fn relevance_must_be_1_to_3() {
        for bad in ["0", "4", "-1", "300"] {
            let text = format!(
                "queries:\n  - id: q1\n    mode: query\n    query: x\n    relevant: [{{ id: a, relevance: 2 }}, {{ id: b, relevance: {bad} }}]\n"
            );
            let m = invalid_message(&text, "q1");
            assert!(m.contains(&format!("`b` has relevance {bad}")), "{m}");
            assert!(m.contains("use 1, 2 or 3"), "{m}");
        }
    }

    #[test]
    fn query_ids_must_be_unique_and_non_empty() {
        let m = invalid_message(
            "queries:\n  - id: q1\n    mode: query\n    query: x\n    relevant: [{ id: a, relevance: 1 }]\n  - id: q1\n    mode: query\n    query: y\n    relevant: [{ id: b, relevance: 1 }]\n",
            "q1",
        );
        assert!(m.contains("duplicate query id"), "{m}");
        assert!(m.contains("#1 and #2"), "{m}");
        let m = invalid_message(
            "queries:\n  - id: \"\"\n    mode: query\n    query: x\n    relevant: [{ id: a, relevance: 1 }]\n",
            "#1",
        );
        assert!(m.contains("empty `id`"), "{m}");
    }

    #[test]
    fn relevant_list_rules() {
        let m = invalid_message(
            "queries:\n  - id: q1\n    mode: query\n    query: x\n",
            "q1",
        );
        assert!(m.contains("`relevant` is missing"), "{m}");
        let t = parse_truth(
            "queries:\n  - id: q1\n    kind: off_topic\n    mode: query\n    query: x\n    relevant: []\n",
            Path::new("t.yaml"),
        )
        .expect("an explicit empty list is a question with no answer");
        assert!(t.queries[0].relevant.is_empty());
        assert_eq!(t.queries[0].kind, "off_topic");
        let m = invalid_message(
            "queries:\n  - id: q1\n    kind: Off-Topic\n    mode: query\n    query: x\n    relevant: []\n",
            "q1",
        );
        assert!(m.contains("not one word of a-z and _"), "{m}");
        let m = invalid_message(
            "queries:\n  - id: q1\n    mode: query\n    query: x\n    relevant: [{ id: a, relevance: 1 }, { id: a, relevance: 3 }]\n",
            "q1",
        );
        assert!(m.contains("`a` is listed twice"), "{m}");
        let m = invalid_message(
            "queries:\n  - id: q1\n    mode: query\n    query: x\n    relevant: [{ id: \"\", relevance: 1 }]\n",
            "q1",
        );
        assert!(m.contains("relevant entry #1 has an empty `id`"), "{m}");
    }

    #[test]
    fn invalid_display_names_file_and_query() {
        let err = parse(
            "queries:\n  - id: q9\n    mode: anchor\n    relevant: [{ id: a, relevance: 1 }]\n",
        )
        .unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.starts_with("ground-truth file gt.yaml, query `q9`: "),
            "{shown}"
        );
    }
}
