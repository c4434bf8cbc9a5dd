//! Usage stats keyed by graph ordinal, for scoring a recall's candidates.
//!
//! The folded stats are keyed by note id. Looking a string up per candidate reads each
//! candidate's id bytes, scattered over the heap: at 100k notes and about 1 600 candidates per
//! recall that was a quarter of the recall's time, nearly all cache misses. This table maps the
//! ordinals of the nodes that have stats (usually few) to their stats once, is patched from the
//! stats change log after each recorded recall, and is rebuilt when the graph's ordinals may
//! have moved (another store version) or the change log no longer reaches back.

use super::NodeStats;
use crate::events::log::StatsView;
use crate::store::Version;
use crate::store::graph::Graph;
use rustc_hash::FxHashMap;

/// The stats of one note as recall scores them.
pub fn node_stats(view: &StatsView<'_>, id: &str) -> NodeStats {
    let (recall_count, last_ms, importance) = view.node(id);
    NodeStats {
        recall_count,
        last_recalled_at: last_ms.map(|ms| ms.div_euclid(1000)),
        importance,
    }
}

/// Stats of every node that has any, by ordinal of one graph version.
#[derive(Debug, Clone, Default)]
pub struct OrdStats {
    /// The graph version whose ordinals key `by_ord` (`None`: never built).
    graph: Option<Version>,
    /// The stats version folded in.
    stats_version: u64,
    by_ord: FxHashMap<u32, NodeStats>,
}

impl OrdStats {
    /// Stats of ordinal `o` (zero when it has none).
    pub fn get(&self, o: u32) -> NodeStats {
        self.by_ord.get(&o).copied().unwrap_or_default()
    }

    /// Whether the table shows `view` on `graph`'s ordinals.
    pub fn is_current(&self, graph: &Graph, view: &StatsView<'_>) -> bool {
        self.graph == Some(graph.version()) && self.stats_version == view.version()
    }

    /// Bring the table to `view` on `graph`: patch the nodes changed since it was built, or
    /// rebuild it whole.
    pub fn refresh(&mut self, graph: &Graph, view: &StatsView<'_>) {
        if self.is_current(graph, view) {
            return;
        }
        if self.graph == Some(graph.version())
            && let Some(changed) = view.changed_since(self.stats_version)
        {
            for id in changed {
                self.set(graph, view, id);
            }
        } else {
            self.by_ord.clear();
            view.for_each_node(|id| self.set(graph, view, id));
            self.graph = Some(graph.version());
        }
        self.stats_version = view.version();
    }

    fn set(&mut self, graph: &Graph, view: &StatsView<'_>, id: &str) {
        let Some(o) = graph.ord(id) else { return };
        let s = node_stats(view, id);
        if s == NodeStats::default() {
            self.by_ord.remove(&o);
        } else {
            self.by_ord.insert(o, s);
        }
    }
}
