//! The fold: events in, per-node statistics out. A pure left fold whose step is commutative and
//! associative, so the same events in any order (any file order, any interleaving) give the same
//! state, and a snapshot plus the events after it equals a full fold.

use super::event::{Event, EventKind};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// What the log says about one node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecallStats {
    /// RecallHit events for this node.
    pub recall_count: u64,
    /// Latest RecallHit time, ms since the epoch.
    pub last_recalled_ms: Option<i64>,
    /// Importance from the winning ImportanceTag.
    pub importance: Option<u8>,
    /// Time of the winning ImportanceTag, ms.
    pub importance_tagged_ms: Option<i64>,
    /// Tie-break key of the winning ImportanceTag: (session, seq). Equal timestamps are
    /// resolved by the larger key, so the winner never depends on reading order.
    pub importance_key: Option<(String, u64)>,
    /// Times an agent said it used this note (Feedback `used`; fetching a note by id is recorded
    /// as such a use).
    pub used_count: u64,
    /// Of `used_count`, the uses tied to no question (a fetch by id, feedback that names no
    /// question): a general signal. Uses tied to a question reach ranking through that question's
    /// terms instead (`recall::learned`).
    pub untied_used: u64,
    /// Times an agent said this note was wrong for its question (Feedback `wrong`).
    pub wrong_count: u64,
    /// Latest use, ms since the epoch.
    pub last_used_ms: Option<i64>,
}

impl RecallStats {
    /// Combine two partial folds (commutative, associative; the empty stats are neutral).
    pub fn merge(&mut self, other: &RecallStats) {
        self.recall_count += other.recall_count;
        self.last_recalled_ms = max_opt(self.last_recalled_ms, other.last_recalled_ms);
        self.used_count += other.used_count;
        self.untied_used += other.untied_used;
        self.wrong_count += other.wrong_count;
        self.last_used_ms = max_opt(self.last_used_ms, other.last_used_ms);
        if let (Some(imp), Some(tagged_ms)) = (other.importance, other.importance_tagged_ms) {
            let key = other.importance_key.clone().unwrap_or_default();
            self.offer_importance(imp, tagged_ms, key);
        }
    }

    fn offer_importance(&mut self, importance: u8, tagged_ms: i64, key: (String, u64)) {
        let wins = match (self.importance_tagged_ms, &self.importance_key) {
            (None, _) => true,
            (Some(cur), cur_key) => {
                (tagged_ms, Some(&key), importance)
                    > (cur, cur_key.as_ref(), self.importance.unwrap_or(0))
            }
        };
        if wins {
            self.importance = Some(importance);
            self.importance_tagged_ms = Some(tagged_ms);
            self.importance_key = Some(key);
        }
    }
}

/// The later of two optional times.
pub(crate) fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// The key a question is kept under in [`Stats::feedback`]: lower case, runs of white space as
/// one space, trimmed. Two phrasings that differ only in case or spacing are one question.
pub fn question_key(query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    for word in query.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// What agents said about the notes recalled for one question: (used, wrong) counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Verdicts {
    pub used: u32,
    pub wrong: u32,
}

/// Folded statistics of every node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Keyed by node id; Fx hashing because recall looks up every candidate.
    pub nodes: FxHashMap<String, RecallStats>,
    /// (question key, node id) -> what Feedback events said about that note for that question
    /// (only feedback that names its question; see [`question_key`]).
    pub feedback: FxHashMap<(String, String), Verdicts>,
    /// Events folded.
    pub events: u64,
}

impl Stats {
    fn node_mut(&mut self, node: &str) -> &mut RecallStats {
        if !self.nodes.contains_key(node) {
            self.nodes.insert(node.to_string(), RecallStats::default());
        }
        self.nodes.get_mut(node).expect("inserted above")
    }

    /// Fold one event from `session`.
    pub fn apply(&mut self, session: &str, e: &Event) {
        self.events += 1;
        match &e.kind {
            EventKind::Query { .. } => {}
            EventKind::RecallHit { node, .. } => {
                let s = self.node_mut(node);
                s.recall_count += 1;
                s.last_recalled_ms = max_opt(s.last_recalled_ms, Some(e.ts_ms));
            }
            EventKind::Feedback {
                query, used, wrong, ..
            } => {
                let key = question_key(query);
                for (list, is_used) in [(used, true), (wrong, false)] {
                    for node in list {
                        let s = self.node_mut(node);
                        if is_used {
                            s.used_count += 1;
                            s.untied_used += u64::from(key.is_empty());
                            s.last_used_ms = max_opt(s.last_used_ms, Some(e.ts_ms));
                        } else {
                            s.wrong_count += 1;
                        }
                        if !key.is_empty() {
                            let v = self
                                .feedback
                                .entry((key.clone(), node.clone()))
                                .or_default();
                            if is_used {
                                v.used = v.used.saturating_add(1);
                            } else {
                                v.wrong = v.wrong.saturating_add(1);
                            }
                        }
                    }
                }
            }
            EventKind::ImportanceTag {
                node, importance, ..
            } => {
                self.nodes
                    .entry(node.clone())
                    .or_default()
                    .offer_importance(*importance, e.ts_ms, (session.to_string(), e.seq));
            }
        }
    }

    /// Combine with another partial fold.
    pub fn merge(&mut self, other: &Stats) {
        self.events += other.events;
        for (k, v) in &other.nodes {
            self.nodes.entry(k.clone()).or_default().merge(v);
        }
        for (k, v) in &other.feedback {
            let mine = self.feedback.entry(k.clone()).or_default();
            mine.used = mine.used.saturating_add(v.used);
            mine.wrong = mine.wrong.saturating_add(v.wrong);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(tagged_ms: i64, seq: u64, imp: u8) -> Event {
        Event {
            ts_ms: tagged_ms,
            seq,
            kind: EventKind::ImportanceTag {
                node: "a".into(),
                importance: imp,
                tags: vec![],
                note: String::new(),
            },
        }
    }

    #[test]
    fn later_tag_wins_whatever_the_reading_order() {
        let mut a = Stats::default();
        a.apply("s2", &tag(200, 0, 3));
        a.apply("s1", &tag(100, 0, 9));
        let mut b = Stats::default();
        b.apply("s1", &tag(100, 0, 9));
        b.apply("s2", &tag(200, 0, 3));
        assert_eq!(a, b);
        assert_eq!(a.nodes["a"].importance, Some(3));
    }

    #[test]
    fn equal_timestamps_break_ties_by_session_then_seq() {
        let mut a = Stats::default();
        a.apply("s1", &tag(100, 5, 4));
        a.apply("s2", &tag(100, 0, 6));
        let mut b = Stats::default();
        b.apply("s2", &tag(100, 0, 6));
        b.apply("s1", &tag(100, 5, 4));
        assert_eq!(a.nodes["a"].importance, Some(6));
        assert_eq!(a, b);
    }
}
