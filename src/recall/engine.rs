//! One recall: lexical hits and anchors seed a best-first walk over typed edges; every candidate
//! is scored by the policy and the best are returned with their trails.

use super::policy;
use super::query::{Explain, Hit, Query, Source, TrailEdge};
use super::{MAX_DEPTH_CHECK, NodeStats};
use crate::error::{Error, Result};
use crate::index::LexicalIndex;
use crate::index::tokenize::Tokenizer;
use crate::notes::EdgeKind;
use crate::store::StoreReader;
use std::collections::{BinaryHeap, HashMap};

/// A candidate during the walk.
#[derive(Debug, Clone)]
struct Cand {
    base: f32,
    depth: u8,
    source: Source,
    /// The node and edge this candidate was reached from (none for direct hits).
    via: Option<(String, TrailEdge)>,
    lexical: f32,
    matched: u32,
    /// For direct hits: the best score a walk from another seed brought to it.
    support: f32,
}

impl Cand {
    /// A direct hit (an anchor or a lexical match) with relevance `base`.
    fn direct(base: f32) -> Cand {
        Cand {
            base,
            depth: 0,
            source: Source::Direct,
            via: None,
            lexical: 0.0,
            matched: 0,
            support: 0.0,
        }
    }
}

#[derive(Debug, PartialEq)]
struct Frontier {
    base: f32,
    id: String,
}
impl Eq for Frontier {}
impl PartialOrd for Frontier {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Frontier {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.base
            .total_cmp(&other.base)
            .then_with(|| other.id.cmp(&self.id))
    }
}

fn is_co_occurrence(kind: EdgeKind) -> bool {
    matches!(kind, EdgeKind::CoOccursSlug | EdgeKind::CoOccursToken)
}

/// Best-first walk over typed edges from `seeds` (id, base), at most `max_depth` hops, adding or
/// improving candidates. Co-occurrence edges are followed only from seeds. A walk that reaches a
/// direct hit records it as support instead of replacing it.
fn walk(
    store: &StoreReader<'_>,
    cands: &mut HashMap<String, Cand>,
    seeds: Vec<(String, f32)>,
    max_depth: u8,
) -> Result<()> {
    let mut heap: BinaryHeap<Frontier> = seeds
        .into_iter()
        .map(|(id, base)| Frontier { base, id })
        .collect();
    let mut expanded = 0usize;
    while let Some(Frontier { base, id }) = heap.pop() {
        let Some(cur) = cands.get(&id) else { continue };
        if cur.base > base || cur.depth >= max_depth {
            continue;
        }
        expanded += 1;
        if expanded > policy::MAX_EXPANSIONS {
            break;
        }
        let (depth, from_seed) = (cur.depth, cur.depth == 0);
        let cur_source = cur.source;
        let mut steps: Vec<(String, f32, TrailEdge)> = Vec::new();
        for (edges, forward) in [
            (store.edges_out_limited(&id, policy::MAX_FANOUT)?, true),
            (store.edges_in_limited(&id, policy::MAX_FANOUT)?, false),
        ] {
            for e in edges {
                if is_co_occurrence(e.kind) && !from_seed {
                    continue;
                }
                let mut w = policy::edge_kind_weight(e.kind)
                    * policy::provenance_weight(e.provenance)
                    * e.confidence
                    * policy::hub_damping(e.source_out_degree);
                if !forward {
                    w *= policy::REVERSE_EDGE_FACTOR;
                }
                let (from, to) = if forward {
                    (id.clone(), e.other.clone())
                } else {
                    (e.other.clone(), id.clone())
                };
                steps.push((
                    e.other,
                    base * policy::HOP_DECAY * w,
                    TrailEdge {
                        from,
                        to,
                        kind: e.kind,
                        provenance: e.provenance,
                    },
                ));
            }
        }
        for (other, child_base, edge) in steps {
            if let Some(existing) = cands.get_mut(&other) {
                if existing.source == Source::Direct {
                    if existing.depth == 0 && other != id {
                        existing.support = existing.support.max(child_base);
                    }
                    continue;
                }
                if existing.base >= child_base {
                    continue;
                }
            }
            let source = if is_co_occurrence(edge.kind) || cur_source == Source::CoOccur {
                Source::CoOccur
            } else {
                Source::Neighbor
            };
            cands.insert(
                other.clone(),
                Cand {
                    base: child_base,
                    depth: depth + 1,
                    source,
                    via: Some((id.clone(), edge)),
                    lexical: 0.0,
                    matched: 0,
                    support: 0.0,
                },
            );
            heap.push(Frontier {
                base: child_base,
                id: other,
            });
        }
    }
    Ok(())
}

/// Check a query's ranges; the error says what to fix.
pub fn validate(q: &Query) -> Result<()> {
    if q.text.trim().is_empty() && q.anchors.is_empty() {
        return Err(Error::InvalidArgument {
            what: "query",
            message: "give query text, at least one anchor id, or both".into(),
        });
    }
    if q.depth > MAX_DEPTH_CHECK {
        return Err(Error::InvalidArgument {
            what: "depth",
            message: format!("{} is over the maximum of {MAX_DEPTH_CHECK}", q.depth),
        });
    }
    if q.limit == 0 || q.limit > super::query::MAX_LIMIT {
        return Err(Error::InvalidArgument {
            what: "limit",
            message: format!(
                "{} must be between 1 and {}",
                q.limit,
                super::query::MAX_LIMIT
            ),
        });
    }
    if !q.min_score.is_finite() {
        return Err(Error::InvalidArgument {
            what: "min-score",
            message: "must be a finite number".into(),
        });
    }
    if q.anchors.len() > super::query::MAX_ANCHORS {
        return Err(Error::InvalidArgument {
            what: "anchors",
            message: format!("at most {} anchors", super::query::MAX_ANCHORS),
        });
    }
    Ok(())
}

/// Run `q` against the lexical index and the store. `stats` gives each node's usage statistics.
pub fn run(
    lex: &LexicalIndex,
    store: &StoreReader<'_>,
    tok: &Tokenizer,
    q: &Query,
    now_s: i64,
    stats: &dyn Fn(&str) -> NodeStats,
) -> Result<Vec<Hit>> {
    validate(q)?;
    let mut text = q.text.as_str();
    if text.len() > super::query::MAX_QUERY_BYTES {
        let mut cut = super::query::MAX_QUERY_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text = &text[..cut];
    }
    let mut cands: HashMap<String, Cand> = HashMap::new();

    // 1. Anchors: direct hits at full strength.
    for a in &q.anchors {
        if !store.has_node(a)? {
            return Err(Error::UnknownNode { id: a.clone() });
        }
        cands.insert(a.clone(), Cand::direct(1.0));
    }

    // 2. Lexical hits above the floor, normalised to the best one.
    let qt = tok.query_terms(text);
    let matches = if qt.terms.is_empty() {
        Vec::new()
    } else {
        lex.expand(&qt)
    };
    let want = q.limit.max(policy::MAX_SEEDS) * 2;
    let hits = if matches.is_empty() {
        Vec::new()
    } else {
        lex.search(&matches, want)
    };
    // With anchors, the anchors' neighbourhood is the context: a weak lexical hit outside it is
    // noise, a hit inside it is kept.
    let near_anchors: HashMap<String, Cand> = if q.anchors.is_empty() || hits.is_empty() {
        HashMap::new()
    } else {
        let mut around = cands.clone();
        let seeds = q.anchors.iter().map(|a| (a.clone(), 1.0)).collect();
        walk(store, &mut around, seeds, q.depth)?;
        around
    };
    if let Some(top) = hits.first().map(|h| h.score) {
        let floor = policy::MIN_LEXICAL_SCORE.max(policy::MIN_RELATIVE_LEXICAL * top);
        for h in hits
            .into_iter()
            .filter(|h| h.score >= floor && h.max_idf >= policy::MIN_MATCH_IDF)
        {
            let base = h.score / top;
            if !q.anchors.is_empty()
                && base < policy::MIN_UNANCHORED_RELATIVE
                && !near_anchors.contains_key(&h.id)
            {
                continue;
            }
            let c = cands.entry(h.id).or_insert(Cand::direct(base));
            c.lexical = h.score;
            c.matched = h.matched;
            c.base = c.base.max(base);
        }
    }

    // 3. Best-first walk over typed edges from the strongest direct hits.
    let mut seeds: Vec<(String, f32)> = cands.iter().map(|(id, c)| (id.clone(), c.base)).collect();
    seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    seeds.truncate(policy::MAX_SEEDS + q.anchors.len());
    walk(store, &mut cands, seeds, q.depth)?;
    for c in cands.values_mut() {
        if c.source == Source::Direct {
            c.base += policy::GRAPH_SUPPORT_WEIGHT * c.support;
        }
    }

    // 4. Score with the policy. Reading a note's record costs a store lookup, so candidates are
    // visited in order of an upper bound of their score (type weight and ttl at their maximum),
    // stopping once the bound cannot beat the `limit`-th exact score. Dangling targets drop out.
    let vias: HashMap<String, Option<(String, TrailEdge)>> = cands
        .iter()
        .map(|(id, c)| (id.clone(), c.via.clone()))
        .collect();
    let trail_of = |id: &str| -> Vec<TrailEdge> {
        let mut t = Vec::new();
        let mut cur = id;
        while let Some(Some((parent, edge))) = vias.get(cur) {
            t.push(edge.clone());
            cur = parent;
            if t.len() > usize::from(policy::MAX_DEPTH) {
                break;
            }
        }
        t.reverse();
        t
    };
    let mut order: Vec<(f32, String, Cand, NodeStats)> = cands
        .into_iter()
        .map(|(id, c)| {
            let st = stats(&id);
            let bound = c.base * policy::MAX_TYPE_WEIGHT
                + policy::reinforcement(st.recall_count)
                + policy::importance_bonus(st.importance.unwrap_or(0))
                + policy::RECENCY_WEIGHT;
            (bound, id, c, st)
        })
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut out: Vec<Hit> = Vec::with_capacity(q.limit + 1);
    let mut kth = f32::NEG_INFINITY;
    for (bound, id, c, st) in order {
        if bound < q.min_score || (out.len() >= q.limit && bound < kth) {
            break;
        }
        let Some(rec) = store.node(&id)? else {
            continue;
        };
        let type_weight = policy::note_type_weight(rec.note_type);
        let ttl_factor = policy::ttl_factor(rec.ttl_days, rec.updated_at, now_s);
        let touched = match (st.last_recalled_at, rec.updated_at) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let explain = Explain {
            lexical: c.lexical,
            base: c.base,
            type_weight,
            ttl_factor,
            reinforcement: policy::reinforcement(st.recall_count),
            importance: policy::importance_bonus(st.importance.unwrap_or(0)),
            recency: policy::recency_bonus(touched, now_s),
            matched_terms: qt
                .terms
                .iter()
                .enumerate()
                .filter(|(i, _)| c.matched & (1 << (i % 32)) != 0)
                .map(|(_, t)| t.term.clone())
                .collect(),
        };
        let score = c.base * type_weight * ttl_factor
            + explain.reinforcement
            + explain.importance
            + explain.recency;
        if score < q.min_score {
            continue;
        }
        let trail = trail_of(&id);
        out.push(Hit {
            id,
            name: rec.name,
            description: rec.description,
            note_type: rec.note_type.as_str(),
            score,
            source: c.source,
            trail,
            excerpt: rec.excerpt,
            explain,
        });
        if out.len() >= q.limit {
            out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
            out.truncate(q.limit);
            kth = out.last().map_or(f32::NEG_INFINITY, |h| h.score);
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    out.truncate(q.limit);
    Ok(out)
}
