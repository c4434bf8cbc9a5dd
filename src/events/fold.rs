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
    pub last_recalled_at: Option<i64>,
    /// Importance from the winning ImportanceTag.
    pub importance: Option<u8>,
    /// Time of the winning ImportanceTag, ms.
    pub importance_ts: Option<i64>,
    /// Tie-break key of the winning ImportanceTag: (session, seq). Equal timestamps are
    /// resolved by the larger key, so the winner never depends on reading order.
    pub importance_key: Option<(String, u64)>,
}

impl RecallStats {
    /// Combine two partial folds (commutative, associative; the empty stats are neutral).
    pub fn merge(&mut self, other: &RecallStats) {
        self.recall_count += other.recall_count;
        self.last_recalled_at = max_opt(self.last_recalled_at, other.last_recalled_at);
        if let (Some(imp), Some(ts)) = (other.importance, other.importance_ts) {
            let key = other.importance_key.clone().unwrap_or_default();
            self.offer_importance(imp, ts, key);
        }
    }

    fn offer_importance(&mut self, importance: u8, ts: i64, key: (String, u64)) {
        let wins = match (self.importance_ts, &self.importance_key) {
            (None, _) => true,
            (Some(cur), cur_key) => {
                (ts, Some(&key), importance) > (cur, cur_key.as_ref(), self.importance.unwrap_or(0))
            }
        };
        if wins {
            self.importance = Some(importance);
            self.importance_ts = Some(ts);
            self.importance_key = Some(key);
        }
    }
}

fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// Folded statistics of every node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Keyed by node id; Fx hashing because recall looks up every candidate.
    pub nodes: FxHashMap<String, RecallStats>,
    /// Events folded.
    pub events: u64,
}

impl Stats {
    /// Fold one event from `session`.
    pub fn apply(&mut self, session: &str, e: &Event) {
        self.events += 1;
        match &e.kind {
            EventKind::Query { .. } => {}
            EventKind::RecallHit { node, .. } => {
                let s = match self.nodes.get_mut(node.as_str()) {
                    Some(s) => s,
                    None => self.nodes.entry(node.clone()).or_default(),
                };
                s.recall_count += 1;
                s.last_recalled_at = max_opt(s.last_recalled_at, Some(e.ts_ms));
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(ts: i64, seq: u64, imp: u8) -> Event {
        Event {
            ts_ms: ts,
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
