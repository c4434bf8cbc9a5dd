//! Usage stats keyed by graph ordinal, for scoring a recall's candidates.
//!
//! The folded stats are keyed by note id. Looking a string up per candidate reads each
//! candidate's id bytes, scattered over the heap: on a large graph, with many candidates per
//! recall, those cache misses would weigh on every recall. This table maps the ordinals of the
//! nodes that have stats (usually few) to their stats once, is patched from the stats change log
//! after each recorded recall, and is rebuilt when the graph's ordinals may have moved (another
//! store version) or the change log no longer reaches back.

use super::NodeStats;
use crate::events::log::StatsView;
use crate::graph::Graph;
use crate::store::Version;
use rustc_hash::FxHashMap;

/// The stats of one note as recall scores them.
pub fn node_stats(view: &StatsView<'_>, id: &str) -> NodeStats {
    let f = view.node(id);
    NodeStats {
        recall_count: f.recall_count,
        last_recalled_ms: f.last_recalled_ms,
        importance: f.importance,
        used_count: f.used_count,
        untied_used: f.untied_used,
        wrong_count: f.wrong_count,
        last_used_ms: f.last_used_ms,
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
    /// Bit `o` set when `by_ord` holds `o`: a walk asks about thousands of nodes per recall,
    /// nearly all without stats, and a bit test is cheaper than a hash probe.
    has: Vec<u64>,
}

impl OrdStats {
    /// Stats of ordinal `o` (zero when it has none).
    #[inline]
    pub fn get(&self, o: u32) -> NodeStats {
        if !self.has(o) {
            return NodeStats::default();
        }
        self.by_ord.get(&o).copied().unwrap_or_default()
    }

    fn has(&self, o: u32) -> bool {
        self.has
            .get(o as usize / 64)
            .is_some_and(|w| w & (1 << (o % 64)) != 0)
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
            self.has.clear();
            view.for_each_node(|id| self.set(graph, view, id));
            self.graph = Some(graph.version());
        }
        self.stats_version = view.version();
    }

    fn set(&mut self, graph: &Graph, view: &StatsView<'_>, id: &str) {
        let Some(o) = graph.ord(id) else { return };
        let s = node_stats(view, id);
        let (word, bit) = (o as usize / 64, 1u64 << (o % 64));
        if s == NodeStats::default() {
            self.by_ord.remove(&o);
            if let Some(w) = self.has.get_mut(word) {
                *w &= !bit;
            }
        } else {
            self.by_ord.insert(o, s);
            if self.has.len() <= word {
                self.has.resize(word + 1, 0);
            }
            self.has[word] |= bit;
        }
    }
}
