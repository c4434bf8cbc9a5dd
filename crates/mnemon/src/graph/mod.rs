//! What does recall walk? The store's nodes and edges as a dense in-memory adjacency: node ids
//! become `u32` ordinals, each node keeps its out- and in-edges in the store's order, and the
//! few fields scoring needs (type, TTL, updated_s). A recall then walks and scores without a
//! single redb lookup or allocation per edge; only the returned notes' records are read.
//!
//! The graph is a cache of one store [`Version`]. [`Graph::refresh`] brings it to a reader's
//! version by patching only the nodes the store's change log names (one write transaction of
//! another process costs a few lookups per changed note), and reloads everything when the log does
//! not reach back far enough or the store was recreated. Ordinals of removed nodes stay allocated
//! (without a record) until the next full load.

use crate::error::Result;
use crate::notes::{EdgeKind, NoteType, Provenance};
use crate::prefetch::prefetch;
use crate::ranking;
use crate::store::codec::{EdgeRef, NodeRecord};
use crate::store::{StoreReader, Version};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;

pub mod file;

/// What [`Graph::refresh`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    /// The graph was at the reader's version already.
    Unchanged,
    /// This many nodes were patched from the store's change log.
    Patched(usize),
    /// The whole graph was loaded from the store.
    Loaded,
}

/// One edge as the walk sees it, from one end: `other` is the other end's ordinal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphEdge {
    pub other: u32,
    pub kind: EdgeKind,
    pub provenance: Provenance,
    pub confidence: f32,
    /// Distinct targets of the edge's source (hub damping).
    pub source_out_degree: u32,
    /// The walk's weight of this edge from this end ([`ranking::edge_weight`], times
    /// [`ranking::REVERSE_EDGE_FACTOR`] in an in-list): computed once when the edge is loaded, not
    /// on every step of every recall.
    pub walk_weight: f32,
}

impl GraphEdge {
    /// This edge as its target's in-list holds it: `other` is the source, walked backwards.
    fn mirror(&self, source: u32) -> GraphEdge {
        GraphEdge {
            other: source,
            walk_weight: self.walk_weight * ranking::REVERSE_EDGE_FACTOR,
            ..*self
        }
    }
}

/// What scoring needs of a node without reading its record.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NodeMeta {
    pub note_type: NoteType,
    pub ttl_days: Option<u32>,
    /// The note's `updated_at`, Unix seconds.
    pub updated_s: Option<i64>,
}

impl NodeMeta {
    fn of(rec: &NodeRecord) -> NodeMeta {
        NodeMeta {
            note_type: rec.note_type,
            ttl_days: rec.ttl_days,
            updated_s: rec.updated_s,
        }
    }
}

/// The in-memory adjacency of one store version.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    version: Version,
    ids: Vec<Box<str>>,
    ord: FxHashMap<Box<str>, u32>,
    /// `None` for ids that are only named by edges (dangling links) or were removed.
    meta: Vec<Option<NodeMeta>>,
    out: Vec<Vec<GraphEdge>>,
    inn: Vec<Vec<GraphEdge>>,
    /// Edges of kind `supersedes` and of kind `contradicts`: recall reads neither kind off a
    /// note's lists when the graph has none (most memories).
    verdict_edges: [usize; 2],
}

/// Where an edge kind is counted in `Graph::verdict_edges`.
fn verdict_slot(kind: EdgeKind) -> Option<usize> {
    match kind {
        EdgeKind::Supersedes => Some(0),
        EdgeKind::Contradicts => Some(1),
        _ => None,
    }
}

impl Graph {
    /// Load the whole graph as `reader` sees it.
    pub fn load(reader: &StoreReader<'_>) -> Result<Graph> {
        let mut g = Graph {
            version: reader.version()?,
            ..Graph::default()
        };
        reader.for_each_node(|id, (note_type, updated_s, ttl_days)| {
            let o = g.intern(id);
            g.meta[o as usize] = Some(NodeMeta {
                note_type,
                ttl_days,
                updated_s,
            });
        })?;
        let mut last: Option<u32> = None;
        reader.for_each_out_edge(|from, len, e| {
            let f = match last {
                Some(o) if g.id(o) == from => o,
                _ => {
                    let o = g.intern(from);
                    g.out[o as usize].reserve_exact(len);
                    o
                }
            };
            last = Some(f);
            let to = g.intern(e.other);
            let edge = edge_of(to, e);
            // Out-lists arrive in stored order; in-lists are sorted once below.
            g.out[f as usize].push(edge);
            g.inn[to as usize].push(edge.mirror(f));
        })?;
        // The sources arrive in id order (the out-edge table's key order, bytes compared), so an
        // in-list already holds its edges of equal key in id order: a stable sort by the key
        // alone gives the stored order without comparing one id (comparing ids would touch
        // their scattered bytes for most in-edges).
        for list in &mut g.inn {
            list.sort_by_key(order_key);
        }
        debug_assert!(g.inn.iter().all(|l| {
            let ids = &g.ids;
            l.is_sorted_by(|a, b| stored_order(ids, a, b).is_le())
        }));
        g.recount();
        Ok(g)
    }

    /// Bring the graph to `reader`'s version: patch the nodes the change log names, or reload.
    pub fn refresh(&mut self, reader: &StoreReader<'_>) -> Result<Refreshed> {
        let v = reader.version()?;
        if v == self.version {
            return Ok(Refreshed::Unchanged);
        }
        let changed = if v.epoch == self.version.epoch && v.generation > self.version.generation {
            reader.changes_since(self.version.generation, v.generation)?
        } else {
            None
        };
        let Some(changed) = changed else {
            *self = Graph::load(reader)?;
            return Ok(Refreshed::Loaded);
        };
        for id in &changed {
            self.replace_node(reader, id)?;
        }
        self.version = v;
        Ok(Refreshed::Patched(changed.len()))
    }

    /// Re-read one node and its out-edges from the store (its in-edges belong to other nodes).
    fn replace_node(&mut self, reader: &StoreReader<'_>, id: &str) -> Result<()> {
        let o = self.intern(id);
        let old = std::mem::take(&mut self.out[o as usize]);
        for e in old {
            self.inn[e.other as usize].retain(|x| x.other != o);
            self.tally(e.kind, false);
        }
        self.meta[o as usize] = reader.node(id)?.as_ref().map(NodeMeta::of);
        let mut out = Vec::new();
        for e in reader.edges_out(id)? {
            let to = self.intern(&e.other);
            out.push(edge_of(to, e.borrowed()));
        }
        for e in &out {
            self.tally(e.kind, true);
            let mirror = e.mirror(o);
            let ids = &self.ids;
            let list = &mut self.inn[e.other as usize];
            let at = list
                .binary_search_by(|x| stored_order(ids, x, &mirror))
                .unwrap_or_else(|i| i);
            list.insert(at, mirror);
        }
        self.out[o as usize] = out;
        Ok(())
    }

    /// Count an edge of `kind` in (`added`) or out.
    fn tally(&mut self, kind: EdgeKind, added: bool) {
        if let Some(i) = verdict_slot(kind) {
            let n = &mut self.verdict_edges[i];
            *n = if added { *n + 1 } else { n.saturating_sub(1) };
        }
    }

    /// Count the edges of every out-list anew (a whole graph, loaded or decoded; a patch counts
    /// as it goes).
    pub(crate) fn recount(&mut self) {
        let mut n = [0; 2];
        for e in self.out.iter().flatten() {
            if let Some(i) = verdict_slot(e.kind) {
                n[i] += 1;
            }
        }
        self.verdict_edges = n;
    }

    /// Whether any note declares it replaces another (`supersedes` edges).
    pub fn has_supersedes(&self) -> bool {
        self.verdict_edges[0] > 0
    }

    /// Whether any two notes are said to contradict each other (`contradicts` edges).
    pub fn has_contradicts(&self) -> bool {
        self.verdict_edges[1] > 0
    }

    fn intern(&mut self, id: &str) -> u32 {
        if let Some(o) = self.ord.get(id) {
            return *o;
        }
        let o = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        self.ids.push(id.into());
        self.ord.insert(id.into(), o);
        self.meta.push(None);
        self.out.push(Vec::new());
        self.inn.push(Vec::new());
        o
    }

    /// The store version this graph reflects.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The ordinal of `id`, if any node or edge names it.
    pub fn ord(&self, id: &str) -> Option<u32> {
        self.ord.get(id).copied()
    }

    /// The id of ordinal `o`.
    pub fn id(&self, o: u32) -> &str {
        self.ids.get(o as usize).map_or("", |s| s)
    }

    /// Scoring fields of `o`, or `None` when no note has that id (a dangling target).
    pub fn meta(&self, o: u32) -> Option<&NodeMeta> {
        self.meta.get(o as usize).and_then(|m| m.as_ref())
    }

    /// Edges leaving `o`, in the store's order.
    pub fn out(&self, o: u32) -> &[GraphEdge] {
        self.out.get(o as usize).map_or(&[], |v| v)
    }

    /// Edges arriving at `o` (`other` is the source), in the store's order.
    pub fn inn(&self, o: u32) -> &[GraphEdge] {
        self.inn.get(o as usize).map_or(&[], |v| v)
    }

    /// Hint that `o`'s edge lists will be read soon: loads their headers (where each list is).
    pub fn prefetch_lists(&self, o: u32) {
        prefetch(&self.out, o as usize);
        prefetch(&self.inn, o as usize);
    }

    /// Hint that `o`'s edges will be read soon: loads the first lines of both lists (the rest
    /// follow sequentially). Cheap when [`Graph::prefetch_lists`] ran a little earlier.
    pub fn prefetch_edges(&self, o: u32) {
        for list in [self.out(o), self.inn(o)] {
            for i in (0..list.len().min(EDGES_PREFETCHED)).step_by(EDGES_PER_LINE) {
                prefetch(list, i);
            }
        }
    }

    /// Number of ordinals (notes plus ids only named by edges).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No ordinals at all.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Every edge as (from, to, kind, provenance, confidence) ids, for tests and checks.
    pub fn edge_list(&self) -> Vec<(String, String, EdgeKind, Provenance, f32)> {
        let mut out = Vec::new();
        for (f, list) in self.out.iter().enumerate() {
            for e in list {
                out.push((
                    self.id(f as u32).to_string(),
                    self.id(e.other).to_string(),
                    e.kind,
                    e.provenance,
                    e.confidence,
                ));
            }
        }
        out.sort_by(|a, b| {
            (&a.0, &a.1, a.2, a.3)
                .cmp(&(&b.0, &b.1, b.2, b.3))
                .then(a.4.total_cmp(&b.4))
        });
        out
    }
}

/// [`stored_order`] up to the other end's id.
fn order_key(e: &GraphEdge) -> (u8, u8, [u8; 4], [u8; 4]) {
    (
        e.kind.code(),
        e.provenance.code(),
        e.confidence.to_le_bytes(),
        e.source_out_degree.to_le_bytes(),
    )
}

/// Edges per 64-byte cache line.
const EDGES_PER_LINE: usize = 64 / std::mem::size_of::<GraphEdge>();
/// Edges of each list [`Graph::prefetch_edges`] asks for.
const EDGES_PREFETCHED: usize = 4 * EDGES_PER_LINE;

/// The walk's weight of `e` from its list's end (`reverse`: an in-list, walked backwards).
fn edge_weight_of(e: &GraphEdge, reverse: bool) -> f32 {
    let w = ranking::edge_weight(e.kind, e.provenance, e.confidence, e.source_out_degree);
    if reverse {
        w * ranking::REVERSE_EDGE_FACTOR
    } else {
        w
    }
}

fn edge_of(other: u32, e: EdgeRef<'_>) -> GraphEdge {
    let mut edge = GraphEdge {
        other,
        kind: e.kind,
        provenance: e.provenance,
        confidence: e.confidence,
        source_out_degree: e.source_out_degree,
        walk_weight: 0.0,
    };
    edge.walk_weight = edge_weight_of(&edge, false);
    edge
}

/// The order a stored edge list keeps its entries in: by the encoded bytes (kind, provenance, confidence
/// LE, degree LE, then the id), so a walk that takes the first `MAX_FANOUT` edges takes the same
/// ones whether the graph was loaded or patched.
fn stored_order(ids: &[Box<str>], a: &GraphEdge, b: &GraphEdge) -> Ordering {
    order_key(a).cmp(&order_key(b)).then_with(|| {
        let ia = ids.get(a.other as usize).map_or("", |s| s);
        let ib = ids.get(b.other as usize).map_or("", |s| s);
        ia.as_bytes().cmp(ib.as_bytes())
    })
}
