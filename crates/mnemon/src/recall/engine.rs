//! One recall: lexical hits and anchors seed a best-first walk over typed edges; every candidate
//! is scored by the policy and the best are returned with their trails.
//!
//! The walk and the scoring run on the in-memory [`Graph`] (node ordinals, no allocation per
//! edge); only the returned notes' records are read from the store.

use super::NodeStats;
use super::cands::{Cand, Cands, Slot, Via};
use super::evidence::{
    DirectInfo, Evidence, forget_names_written_lower, name_words, names_in_phrase,
    proper_name_words, proper_words_starting_sentences, title_matches, with_learned,
};
use super::learned::Learned;
use super::passages;
use super::query::{Explain, FloorReport, Hit, Query, Rejected, Source, TrailEdge};
use super::shown::ShownCache;
use super::supersession;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::index::tokenize::{TermList, Tokenizer};
use crate::index::{LexicalIndex, TermMatch};
use crate::notes::EdgeKind;
use crate::ranking;
use crate::store::LazyReader;
use std::collections::BinaryHeap;

/// Term bits (`LexHit::matched`) are a `u32`: a question matches at most this many terms.
const MAX_MATCHED_TERMS: usize = 32;

thread_local! {
    /// This thread's candidate tables, kept from recall to recall (see [`Cands`]): the recall's
    /// and the one of the walk around its anchors.
    static CANDS: std::cell::RefCell<(Cands, Cands)> =
        std::cell::RefCell::new((Cands::default(), Cands::default()));
}

/// This thread's candidate tables, taken for one recall and given back when it ends, whether it
/// returns results or an error (an unknown anchor, a store error) or unwinds: a recall after a
/// failed one must not allocate and fill the tables anew (they grow with the graph, a few dozen
/// bytes per ordinal each).
struct Tables {
    cands: Cands,
    around: Cands,
}

impl Tables {
    fn take() -> Tables {
        let (cands, around) = CANDS.with_borrow_mut(std::mem::take);
        Tables { cands, around }
    }
}

impl Drop for Tables {
    fn drop(&mut self) {
        let kept = (
            std::mem::take(&mut self.cands),
            std::mem::take(&mut self.around),
        );
        // During thread teardown the slot may be gone or borrowed: then the tables just go.
        let _ = CANDS.try_with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                *c = kept;
            }
        });
    }
}

/// A node waiting to be expanded, packed in one integer whose order is the walk's: the higher
/// base first (as `f32::total_cmp` orders them), then the lower ordinal (a loaded graph numbers
/// notes in id order). The heap sifts with one integer comparison instead of a float total order
/// and a tie-break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Frontier(u64);

impl Frontier {
    fn new(base: f32, ord: u32) -> Frontier {
        Frontier((u64::from(total_order_key(base)) << 32) | u64::from(u32::MAX - ord))
    }
    fn base(self) -> f32 {
        from_total_order_key((self.0 >> 32) as u32)
    }
    fn ord(self) -> u32 {
        u32::MAX - self.0 as u32
    }
}

/// `x`'s bits mapped so that unsigned order is `f32::total_cmp` order (the same flip of the
/// negative values `total_cmp` does, then the sign bit flipped to bias the signed order).
fn total_order_key(x: f32) -> u32 {
    let bits = x.to_bits() as i32;
    let flipped = bits ^ ((((bits >> 31) as u32) >> 1) as i32);
    (flipped as u32) ^ 0x8000_0000
}

/// The inverse of [`total_order_key`].
fn from_total_order_key(key: u32) -> f32 {
    let flipped = (key ^ 0x8000_0000) as i32;
    let bits = flipped ^ ((((flipped >> 31) as u32) >> 1) as i32);
    f32::from_bits(bits as u32)
}

fn is_co_occurrence(kind: EdgeKind) -> bool {
    matches!(kind, EdgeKind::CoOccursSlug | EdgeKind::CoOccursToken)
}

/// Graphs with fewer ordinals walk without cache hints: their candidate slots and edge lists are
/// small enough to stay in the core's cache from one recall to the next, so the hints would only
/// cost instructions. Larger graphs keep them: there nearly every slot and list read is a cache
/// miss, and the hints overlap those misses.
const PREFETCH_MIN_ORDINALS: usize = 4096;

/// Lexical hits below the floor listed in a recall's floor report at most.
const MAX_REJECTED_REPORTED: usize = 5;

/// No leaf floor: a walk that adds every leaf it reaches.
const NO_FLOOR: Option<&fn(u32, f32) -> bool> = None;

/// Best-first walk over typed edges from `seeds` (ordinal, base), at most `max_depth` hops,
/// adding or improving candidates. Co-occurrence edges are followed only from seeds. A walk that
/// reaches a direct hit records it as support instead of replacing it.
///
/// With a leaf floor `skip`, new leaves it names are not added: `skip(ord, base)` is true when a
/// candidate that is never expanded (it sits at the last hop) cannot end in the results with
/// that base. The walk remembers each left-out leaf with the best base it was reached with
/// ([`Cands::leave_out`]), so that it still treats it as known: a later, weaker path to it at a
/// lower depth must not make it a node to expand. The walk is otherwise the same.
///
/// Only nodes that may be expanded go on the heap: a leaf (at `max_depth`) popped from it would
/// be passed over anyway.
fn walk<F: Fn(u32, f32) -> bool>(
    graph: &Graph,
    cands: &mut Cands,
    seeds: &[(u32, f32)],
    max_depth: u8,
    seed_fanout: usize,
    skip: Option<&F>,
) {
    let mut heap: BinaryHeap<Frontier> = seeds
        .iter()
        .map(|&(ord, base)| Frontier::new(base, ord))
        .collect();
    let mut expanded = 0usize;
    // A small graph's tables stay in the cache from one recall to the next: hints would only cost.
    let prefetching = graph.len() >= PREFETCH_MIN_ORDINALS;
    while let Some(top) = heap.pop() {
        let (base, ord) = (top.base(), top.ord());
        let Slot::Cand(cur) = cands.slot_mut(ord) else {
            continue;
        };
        if cur.base > base || cur.depth >= max_depth {
            continue;
        }
        expanded += 1;
        if expanded > ranking::MAX_EXPANSIONS {
            break;
        }
        // The next node to expand is usually the heap's top: its edges load meanwhile.
        if prefetching && let Some(next) = heap.peek() {
            graph.prefetch_edges(next.ord());
        }
        let (depth, from_seed, cur_source) = (cur.depth, cur.depth == 0, cur.source);
        let fanout = if from_seed {
            seed_fanout
        } else {
            ranking::MAX_FANOUT
        };
        let out = graph.out(ord);
        let out = &out[..out.len().min(fanout)];
        let inn = graph.inn(ord);
        let inn = &inn[..inn.len().min(fanout)];
        // The slots of this node's neighbours, scattered over the table, load together.
        if prefetching {
            for e in out.iter().chain(inn) {
                cands.prefetch(e.other);
            }
        }
        let child_depth = depth + 1;
        let base_hop = base * ranking::HOP_DECAY;
        // The floor applies only to leaves: children of this node are leaves or none are.
        let leaf_skip = skip.filter(|_| child_depth >= max_depth);
        let declared_source = if cur_source == Source::CoOccur {
            Source::CoOccur
        } else {
            Source::Neighbor
        };
        for (list, forward) in [(out, true), (inn, false)] {
            // A list is in stored order, sorted by kind code: the co-occurrence kinds (the
            // highest codes) come last, and are followed only from seeds.
            let declared = list.partition_point(|e| !is_co_occurrence(e.kind));
            debug_assert!(list.is_sorted_by_key(|e| is_co_occurrence(e.kind)));
            let (declared, co) = list.split_at(declared);
            let co = if from_seed { co } else { &[] };
            for (part, source) in [(declared, declared_source), (co, Source::CoOccur)] {
                for e in part {
                    let child_base = base_hop * e.walk_weight;
                    let other = e.other;
                    match cands.slot_mut(other) {
                        Slot::Cand(existing) => {
                            if existing.source == Source::Direct {
                                if existing.depth == 0 && other != ord {
                                    existing.support = existing.support.max(child_base);
                                }
                                continue;
                            }
                            if existing.base >= child_base {
                                continue;
                            }
                        }
                        // A left-out leaf only exists with a floor: the floor's own test,
                        // remembered.
                        Slot::LeftOut(b) if b >= child_base => continue,
                        Slot::LeftOut(_) | Slot::Empty => {
                            if let Some(skip) = leaf_skip
                                && skip(other, child_base)
                            {
                                cands.leave_out(other, child_base);
                                continue;
                            }
                        }
                    }
                    cands.insert(
                        other,
                        Cand {
                            base: child_base,
                            depth: child_depth,
                            source,
                            via: Some(Via {
                                parent: ord,
                                kind: e.kind,
                                provenance: e.provenance,
                                forward,
                            }),
                            lexical: 0.0,
                            matched: 0,
                            support: 0.0,
                        },
                    );
                    if child_depth < max_depth {
                        if prefetching {
                            graph.prefetch_lists(other);
                        }
                        heap.push(Frontier::new(child_base, other));
                    }
                }
            }
        }
    }
}

/// The words of `text` of two letters or more written in capitals (`IT`, `US`), folded to lower
/// case: a word that is grammar in lower case names something written so.
fn words_in_capitals(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2 && w.bytes().all(|b| b.is_ascii_uppercase()))
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Edges followed from a seed (an anchor, a direct hit): [`ranking::MAX_FANOUT`], or as many as
/// the results asked for, so `--anchor hub --limit 200` can return 200 of a hub's neighbours.
fn seed_fanout(limit: usize) -> usize {
    ranking::MAX_FANOUT.max(limit)
}

/// A partial answer is strong only when its note holds two of the question's words together:
/// unless a hit is named by the question, answers all of it or is vouched for by feedback, the
/// best [`ranking::MAX_PASSAGE_CHECKS`] hits strong by their words are read in turn until one
/// holds two of its matched informative words in one passage (`passages::together`); those
/// read before it are marked [`DirectInfo::apart`]. Returns their ids. A note that cannot be
/// read, or is longer than the check reads, keeps its strength.
fn mark_words_apart(
    matches: &[TermMatch],
    evidence: &Evidence,
    graph: &Graph,
    cands: &Cands,
    tok: &Tokenizer,
    read_note: &dyn Fn(&str) -> Option<String>,
    direct_info: &mut [(u32, DirectInfo)],
) -> Vec<String> {
    let settled = direct_info.iter().any(|(_, i)| {
        i.is_strong()
            && (i.title_match
                || i.coverage >= ranking::FULL_COVERAGE
                || i.learned >= ranking::STRONG_COVERAGE)
    });
    let mut apart = Vec::new();
    if settled {
        return apart;
    }
    let base = |o: u32| cands.get(o).map_or(0.0, |c| c.base);
    let mut by_words: Vec<usize> = (0..direct_info.len())
        .filter(|&k| direct_info[k].1.is_strong())
        .collect();
    by_words.sort_by(|&a, &b| {
        let (oa, ob) = (direct_info[a].0, direct_info[b].0);
        base(ob)
            .total_cmp(&base(oa))
            .then_with(|| graph.id(oa).cmp(graph.id(ob)))
    });
    for k in by_words.into_iter().take(ranking::MAX_PASSAGE_CHECKS) {
        let o = direct_info[k].0;
        let Some(c) = cands.get(o) else {
            continue;
        };
        let bits = evidence.informative_bits(c.matched);
        let terms: Vec<Vec<String>> = matches
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1u32 << (i % 32)) != 0)
            .map(|(_, m)| m.expansions.iter().map(|(t, _)| t.clone()).collect())
            .collect();
        let refs: Vec<&[String]> = terms.iter().map(Vec::as_slice).collect();
        let id = graph.id(o);
        let Some(text) = read_note(id) else {
            break;
        };
        if passages::together(tok, id, &text, &refs) {
            break;
        }
        direct_info[k].1.apart = true;
        apart.push(id.to_string());
    }
    apart
}

/// The best score a candidate without usage stats can reach from `base`: the largest type
/// weight, no TTL penalty, a full recency bonus.
fn best_without_stats(base: f32) -> f32 {
    ranking::prior_factor(ranking::MAX_TYPE_WEIGHT, 1.0, ranking::RECENCY_WEIGHT) * base
}

/// Run `q` against the lexical index and the graph; `store` (at the graph's version) gives the
/// returned notes' records, through `shown`. `stats` gives each node's usage statistics.
#[allow(clippy::too_many_arguments)]
pub fn run(
    lex: &LexicalIndex,
    graph: &Graph,
    store: &LazyReader<'_>,
    shown: &ShownCache,
    tok: &Tokenizer,
    learned: &Learned,
    q: &Query,
    now_s: i64,
    stats: &impl Fn(u32) -> NodeStats,
    read_note: &dyn Fn(&str) -> Option<String>,
) -> Result<(Vec<Hit>, FloorReport)> {
    // The caller (`Memory::recall`) has checked `q` against `args::query`.
    debug_assert!(q.depth <= crate::ranking::MAX_DEPTH, "unchecked query");
    let text = super::query::readable_part(&q.text);
    let mut tables = Tables::take();
    let Tables { cands, around } = &mut tables;
    cands.reset(graph.len());
    around.reset(graph.len());

    // 1. Anchors: direct hits at full strength.
    let mut anchors: Vec<u32> = Vec::with_capacity(q.anchors.len());
    for a in &q.anchors {
        let Some(o) = graph.ord(a).filter(|o| graph.meta(*o).is_some()) else {
            return Err(Error::UnknownNode {
                id: a.clone(),
                meant: None,
            });
        };
        anchors.push(o);
        cands.insert(o, Cand::direct(1.0));
    }

    // 2. Lexical hits and notes used for earlier questions like this one, each kept only when
    //    its evidence passes the floor, normalised to the best lexical hit.
    let qt = lex.split_unknown_compounds(tok.query_terms(text));
    // A question past its last term read is read no further by any pass below.
    let text = qt.read_to.and_then(|r| text.get(..r)).unwrap_or(text);
    let mut matches = if qt.terms.is_empty() {
        Vec::new()
    } else {
        lex.expand(&qt, tok)
    };
    // Two neighbouring words the notes also write as one (`roll back`, `rollback`).
    crate::index::compound::close_pairs(lex, tok, text, &mut matches);
    // A noun the notes write as a verb, or the other way (`failure`, `failed`).
    crate::index::forms::add_other_forms(lex, &mut matches);
    // The question's words; after them, each identifier it writes joined (by dots, slashes,
    // underscores or colons, or three hyphened words or more) that the memory holds whole
    // (`index::joined`): it adds to the lexical score of the notes that write it as written or
    // longer (`24.11.x`), and takes no part in the floor (its parts, among the words, do; unless
    // they are all small numbers, see `Evidence::of`).
    let words = matches.len();
    crate::index::joined::for_each_joined(text, |whole| {
        if matches.len() < MAX_MATCHED_TERMS && !matches.iter().any(|m| m.term == whole) {
            let df = lex.doc_freq(whole);
            let mut expansions: Vec<(String, f32)> = Vec::new();
            if df > 0 {
                expansions.push((whole.to_string(), 1.0));
            }
            expansions.extend(lex.joined_longer(whole).into_iter().map(|t| (t, 1.0)));
            if let Some((first, _)) = expansions.first() {
                let first_df = if df > 0 { df } else { lex.doc_freq(first) };
                matches.push(TermMatch {
                    term: whole.to_string(),
                    expansions,
                    first_df,
                });
            }
        }
    });
    // A word starting a sentence is a name when most notes holding it write it with a capital
    // ("Joana working hours"; not "Deploy", which notes write in lower case too). Not every
    // note: links and ids write names in lower case (`[[users/joana-figueiredo]]`).
    let names_starting: Vec<String> = proper_words_starting_sentences(text)
        .iter()
        .map(|w| tok.stem_word(w))
        .filter(|t| {
            let df = lex.df(t.as_bytes());
            let capitalised = lex.capitalised_df(t);
            df > 0 && capitalised * 100 >= df * ranking::START_NAME_CAPITALISED_PERCENT
        })
        .collect();
    let name_words = name_words(text);
    let names: Vec<String> = name_words
        .iter()
        .map(|w| tok.stem_word(w))
        .chain(names_starting.iter().cloned())
        .collect();
    forget_names_written_lower(lex, &names, &mut matches);
    // As many lexical hits as the walk takes seeds (or the caller wants results).
    let want = q.limit.max(ranking::MAX_SEEDS);
    let hits = if matches.is_empty() {
        Vec::new()
    } else {
        lex.search(&matches, want)
    };
    let capitals = words_in_capitals(text);
    let evidence = Evidence::of(lex, &qt, &matches, &names, &capitals);
    // The terms that are proper names the question writes and the memory holds as they are.
    let proper: Vec<String> = proper_name_words(text)
        .iter()
        .map(|w| tok.stem_word(w))
        .chain(names_starting)
        .collect();
    let proper_bits = matches
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.expansions.is_empty() && proper.contains(&m.term))
        .fold(0u32, |bits, (i, _)| bits | 1u32 << (i % 32));
    // With anchors, the anchors' neighbourhood is the context: a weak lexical hit outside it is
    // noise, a hit inside it is kept.
    if !anchors.is_empty() && !hits.is_empty() {
        let seeds: Vec<(u32, f32)> = anchors.iter().map(|&a| (a, 1.0)).collect();
        for &(a, base) in &seeds {
            around.insert(a, Cand::direct(base));
        }
        walk(
            graph,
            around,
            &seeds,
            q.depth,
            seed_fanout(q.limit),
            NO_FLOOR,
        );
    }
    let mut learned_of = evidence.learned(&matches, graph, learned);
    let mut floor = FloorReport {
        terms: evidence.terms(&matches[..words], &names),
        rejected: Vec::new(),
        weak: false,
        alone: false,
        unknown_subject: false,
        unknown_weak: false,
        names_only: false,
        unknown_share: evidence.unknown_share(),
        under_min_score: false,
        apart: Vec::new(),
        reached_floor: 0.0,
        reached_share: 0.0,
        old_first: ranking::asks_about_the_past(text),
        asks_permission: anchors.is_empty() && ranking::asks_permission(text),
        read_bytes: Some(text.len()).filter(|&read| read < q.text.len()),
    };
    // The note whose id the question is, as written: its words pass whatever they match (a
    // word every note holds weighs nothing, and still the question names it).
    let question_id = graph.ord(text.trim()).filter(|&o| graph.meta(o).is_some());
    // Each hit's ordinal in the graph (none: another process mid-update, skipped), why its words
    // do not pass the floor (none: they do), its coverage, and whether its note was used before
    // (past use is evidence that a partial match is the note meant). The ordinals first, in a
    // loop of lookups alone: each is a few cache misses in tables the size of the memory, and
    // lookups that do not wait on each other overlap.
    let ords: Vec<Option<u32>> = hits.iter().map(|h| graph.ord(h.id)).collect();
    let verdicts: Vec<(Option<u32>, f32, Option<&'static str>, bool)> = hits
        .iter()
        .zip(&ords)
        .map(|(h, &o)| {
            let o = o.filter(|o| graph.meta(*o).is_some());
            let used = o.is_some_and(|o| {
                let s = stats(o);
                ranking::counts_as_used(s.untied_used, s.wrong_count)
            });
            let coverage = evidence.coverage(h.matched, h.exact);
            if o.is_some() && o == question_id {
                return (o, coverage, None, used);
            }
            let why_not = evidence
                .floor(h.matched, h.exact, h.titled, coverage, used)
                .or_else(|| {
                    // A note that holds the question's words as they are, nearly all of them,
                    // answers it however long it is: the floor is against a single weak match,
                    // and its score falls with the note's length.
                    (h.score < evidence.lexical_floor()
                        && evidence.coverage(h.exact, h.exact) < ranking::FULL_COVERAGE)
                        .then_some("lexical score under the floor")
                });
            (o, coverage, why_not, used)
        })
        .collect();
    // The best passing hit sets the scale.
    let top = hits
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| v.2.is_none())
        .map(|(h, _)| h.score)
        .fold(0.0f32, f32::max);
    let mut direct_info: Vec<(u32, DirectInfo)> = Vec::new();
    let mut id_terms = TermList::default();
    for (h, &(o, coverage, why_not, used)) in hits.iter().zip(&verdicts) {
        let Some(o) = o else {
            continue;
        };
        let learned = learned_of.remove(&o).unwrap_or(0.0);
        let relative = if used {
            ranking::MIN_RELATIVE_LEXICAL_USED
        } else {
            ranking::MIN_RELATIVE_LEXICAL
        };
        let why_not = why_not.or_else(|| {
            (h.score < relative * top && Some(o) != question_id)
                .then_some("far below the best hit's lexical score")
        });
        let lexical_base = if why_not.is_none() {
            // A note whose title, description or tags hold a proper name the question writes
            // (or whose id the question writes as a phrase) is about what the question is
            // about: notes that only mention the name (a meeting log, a post-mortem) do not
            // outrank it on a few more shared words alone; a clear lead in words still wins.
            let about = if h.titled & proper_bits != 0 {
                ranking::TITLED_NAME_BONUS
            } else if names_in_phrase(tok, &matches[..words], h.id, h.in_id, &mut id_terms) {
                ranking::ID_PHRASE_BONUS
            } else {
                0.0
            };
            h.score / top * (1.0 + about)
        } else {
            0.0
        };
        let Some(base) = with_learned(lexical_base, learned) else {
            if floor.rejected.len() < MAX_REJECTED_REPORTED {
                floor.rejected.push(Rejected {
                    id: h.id.to_string(),
                    coverage,
                    reason: why_not.unwrap_or("found wrong for questions like this one"),
                });
            }
            continue;
        };
        if !anchors.is_empty() && base < ranking::MIN_UNANCHORED_RELATIVE && !around.contains(o) {
            continue;
        }
        cands.add_lexical(o, base, h.score, h.matched);
        direct_info.push((
            o,
            DirectInfo {
                coverage,
                learned,
                title_match: false,
                used,
                single: evidence.single(h.matched),
                titled: h.titled,
                in_id: h.in_id,
                in_name: h.in_name,
                words: evidence.words(h.matched),
                apart: false,
            },
        ));
    }
    // What feedback says of the note the question names, when its words found nothing.
    let named_learned = question_id.and_then(|o| learned_of.get(&o).copied());
    // Notes whose words do not match but that earlier questions with these terms were answered
    // with: the bridge feedback builds over other words for the same thing.
    let mut learned_only: Vec<(u32, f32)> = learned_of.into_iter().collect();
    learned_only.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (o, learned) in learned_only {
        let Some(base) = with_learned(0.0, learned) else {
            continue;
        };
        if cands.contains(o) || graph.meta(o).is_none() {
            continue;
        }
        if !anchors.is_empty() && !around.contains(o) {
            continue;
        }
        cands.insert(o, Cand::direct(base));
        direct_info.push((
            o,
            DirectInfo {
                coverage: 0.0,
                learned,
                title_match: false,
                used: false,
                single: false,
                titled: 0,
                in_id: 0,
                in_name: 0,
                words: 0,
                apart: false,
            },
        ));
    }
    // The note the question names by its id, when its words found nothing (all too common to be
    // searched), unless feedback found it wrong for such questions.
    if let Some(o) = question_id
        && anchors.is_empty()
        && words > 0
        && !cands.contains(o)
        && named_learned.is_none_or(|l| l >= 0.0)
    {
        cands.insert(o, Cand::direct(0.0));
        direct_info.push((o, DirectInfo::default()));
    }
    // A question that names a note (its title, its id) means that note.
    title_matches(
        graph,
        store,
        shown,
        tok,
        question_id,
        &matches[..words],
        cands,
        &mut direct_info,
    )?;

    if anchors.is_empty() {
        floor.apart = mark_words_apart(
            &matches[..words],
            &evidence,
            graph,
            cands,
            tok,
            read_note,
            &mut direct_info,
        );
    }

    // A question whose direct hits are all weak (none covers much of it, none is named by it)
    // gets its best few and nothing reached from them.
    floor.weak = anchors.is_empty()
        && !direct_info.is_empty()
        && !direct_info.iter().any(|(_, i)| i.is_strong());
    // ... and if half of it is in words no note holds, it asks about them: its best one.
    floor.unknown_weak = floor.weak && evidence.unknown_share() >= ranking::UNKNOWN_WEAK_SHARE;
    // A question whose hits all match the names it writes and nothing else of it asks about them
    // something no note says (a birthday, a phone number, bakeries in the district a teammate
    // lives in): the notes about the names may help, the notes around them do not.
    let name_bits = matches[..words]
        .iter()
        .enumerate()
        .filter(|(_, m)| names.contains(&m.term))
        .fold(0u32, |bits, (i, _)| bits | 1u32 << (i % 32));
    floor.names_only = anchors.is_empty()
        && evidence.informative_bits(u32::MAX) & !name_bits != 0
        && !direct_info.is_empty()
        && direct_info.iter().all(|(o, i)| {
            let matched = cands.get(*o).map_or(0, |c| c.matched);
            !i.title_match && i.learned <= 0.0 && matched != 0 && matched & !name_bits == 0
        });

    struct Scored {
        ord: u32,
        score: f32,
        /// The score as the policy computed it, before any supersession placement.
        computed: f32,
        type_weight: f32,
        ttl_factor: f32,
        usage: f32,
        importance: f32,
        recency: f32,
    }
    let permission = floor.asks_permission;
    let score_of = |ord: u32, base: f32, st: NodeStats| -> Option<Scored> {
        let meta = graph.meta(ord)?;
        let type_weight = if permission {
            ranking::permission_type_weight(meta.note_type)
        } else {
            ranking::note_type_weight(meta.note_type)
        };
        debug_assert!(type_weight <= ranking::MAX_TYPE_WEIGHT);
        let ttl_factor = ranking::ttl_factor(meta.ttl_days, meta.updated_s, now_s);
        // Being returned is not a use: only a use (or an edit) keeps a note recent.
        // A time far ahead of the clock counts as none, not as the most recent of all.
        let last_used_s = ranking::plausible_time(
            st.last_used_ms.map(|ms| ms.div_euclid(ranking::MS_PER_S)),
            now_s,
        );
        let updated_s = ranking::plausible_time(meta.updated_s, now_s);
        let touched = match (last_used_s, updated_s) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let usage = ranking::usage_bonus(st.untied_used, st.wrong_count);
        let importance = ranking::importance_bonus(st.importance.unwrap_or(0));
        let recency = ranking::recency_bonus(touched, now_s);
        let score = base
            * (1.0 + usage)
            * ranking::prior_factor(type_weight, ttl_factor, importance + recency);
        (score >= q.min_score).then_some(Scored {
            ord,
            score,
            computed: score,
            type_weight,
            ttl_factor,
            usage,
            importance,
            recency,
        })
    };
    // 3. Best-first walk over typed edges from the strongest direct hits. The direct hits'
    //    scores without graph support (which only adds) already bound the `limit`-th best score
    //    from below: a leaf of the walk without usage stats whose best possible score is under
    //    that bound (or under `min_score`) is left out, as step 4 would never score it.
    let mut direct: Vec<f32> = cands
        .bases()
        .filter_map(|(ord, base)| score_of(ord, base, stats(ord)).map(|s| s.score))
        .collect();
    let floor_score = if direct.len() >= q.limit {
        let (_, kth, _) = direct.select_nth_unstable_by(q.limit - 1, |a, b| b.total_cmp(a));
        kth.max(q.min_score)
    } else {
        q.min_score
    };
    let skip_leaf = |ord: u32, base: f32| {
        best_without_stats(base) < floor_score && stats(ord) == NodeStats::default()
    };

    // Neighbours of a weak hit inherit nothing: only anchors and strong hits seed the walk.
    let mut seeds: Vec<(u32, f32)> = cands
        .bases()
        .filter(|(o, _)| {
            direct_info
                .iter()
                .find(|(d, _)| d == o)
                .is_none_or(|(_, i)| i.is_strong())
        })
        .collect();
    seeds.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| graph.id(a.0).cmp(graph.id(b.0)))
    });
    seeds.truncate(ranking::MAX_SEEDS + anchors.len());
    walk(
        graph,
        cands,
        &seeds,
        q.depth,
        seed_fanout(q.limit),
        Some(&skip_leaf),
    );

    // 4. Score candidates with the policy (all in memory); dangling targets drop out. Direct hits
    //    and notes with usage stats are scored first; then another candidate is read only if its
    //    best possible score (no stats: base x the largest type weight + a full recency bonus)
    //    can still enter the top `limit`. Most depth-2 neighbours never touch their node fields.
    let mut scored: Vec<Scored> = Vec::with_capacity(cands.len().min(4 * q.limit + 64));
    // The `limit` best scores so far (as `total_order_key`s), lowest on top: the entry bar for
    // the rest. A score at or under a full heap's top would be pushed and popped again.
    let mut best: BinaryHeap<std::cmp::Reverse<u32>> = BinaryHeap::with_capacity(q.limit);
    let keep = |s: Scored, scored: &mut Vec<Scored>, best: &mut BinaryHeap<_>| {
        let key = total_order_key(s.score);
        if best.len() < q.limit {
            best.push(std::cmp::Reverse(key));
        } else if let Some(mut top) = best.peek_mut()
            && key > top.0
        {
            *top = std::cmp::Reverse(key);
        }
        scored.push(s);
    };
    let mut rest: Vec<(u32, f32)> = Vec::with_capacity(cands.len());
    let mut under_min_score = false;
    let mut reached_with_stats: Vec<(u32, f32, NodeStats)> = Vec::new();
    for i in 0..cands.len() {
        let ord = cands.ords()[i];
        let Some(c) = cands.hot_mut(ord) else {
            continue;
        };
        let st = stats(ord);
        if c.source != Source::Direct {
            if st == NodeStats::default() {
                rest.push((ord, c.base));
            } else {
                reached_with_stats.push((ord, c.base, st));
            }
            continue;
        }
        c.base += ranking::GRAPH_SUPPORT_WEIGHT * c.support;
        match score_of(ord, c.base, st) {
            Some(s) => keep(s, &mut scored, &mut best),
            // A direct hit the caller's own `min_score` left out: `--explain` says so.
            None => {
                under_min_score |=
                    q.min_score > ranking::DEFAULT_MIN_SCORE && graph.meta(ord).is_some()
            }
        }
    }
    // When no hit answers enough of the question to vouch for the notes linked to it, the walk
    // only told the hits how well they support each other: nothing it reached is returned.
    floor.alone = anchors.is_empty()
        && direct_info.iter().any(|(_, i)| i.is_strong())
        && !direct_info
            .iter()
            .any(|(_, i)| i.vouches_for_neighbours(true));
    // A question asking much in words no note holds (a fifth of it) is likely about something
    // else, whatever words it shares with notes: unless a hit answers most of it, its best few
    // are enough.
    floor.unknown_subject = anchors.is_empty()
        && !direct_info.is_empty()
        && !floor.weak
        && !floor.alone
        && !evidence.knows_question()
        && !direct_info
            .iter()
            .any(|(_, i)| i.vouches_for_neighbours(false));
    if floor.alone || floor.names_only {
        rest.clear();
        reached_with_stats.clear();
    }
    // A note the walk reached far below the best direct hit is its tail, not an answer: a
    // question sharing a word or two with one note would otherwise bring back that note's whole
    // neighbourhood. How far below depends on how much of the question the best hit answers. An
    // anchored question asks for the neighbourhood: nothing is cut there.
    let reached_floor = if anchors.is_empty() && !floor.alone && !floor.names_only {
        // Only direct hits are scored so far.
        let best_direct = scored.iter().map(|s| s.score).fold(0.0f32, f32::max);
        let best_strength = direct_info
            .iter()
            .map(|(_, i)| i.strength())
            .fold(0.0f32, f32::max);
        floor.reached_share = ranking::neighbour_share(best_strength);
        floor.reached_share * best_direct
    } else {
        0.0
    };
    floor.reached_floor = reached_floor;
    let above_floor = |s: &Scored| s.score >= reached_floor;
    for (ord, base, st) in reached_with_stats {
        if let Some(s) = score_of(ord, base, st).filter(above_floor) {
            keep(s, &mut scored, &mut best);
        }
    }
    for (ord, base) in rest {
        let bound = best_without_stats(base);
        if bound < reached_floor
            || best.len() >= q.limit
                && best
                    .peek()
                    .is_some_and(|b| bound < from_total_order_key(b.0))
        {
            continue;
        }
        if let Some(s) = score_of(ord, base, NodeStats::default()).filter(above_floor) {
            keep(s, &mut scored, &mut best);
        }
    }
    let by_rank = |a: &Scored, b: &Scored| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| graph.id(a.ord).cmp(graph.id(b.ord)))
    };
    if scored.len() > q.limit {
        scored.select_nth_unstable_by(q.limit, by_rank);
        scored.truncate(q.limit);
    }
    // A note another note declares it replaces brings its newest successor along when the
    // question did not (reached over the `supersedes` edge), right below it; successors the
    // question finds about as well take its place: it ranks right below them.
    let mut brought: Vec<Scored> = Vec::new();
    for s in &scored {
        if !supersession::is_superseded(graph, s.ord) {
            continue;
        }
        let Some(newest) = supersession::newest_successors(graph, s.ord) else {
            continue;
        };
        let Some(c) = cands.get(s.ord) else {
            continue;
        };
        for n in newest {
            if scored.iter().chain(&brought).any(|x| x.ord == n) || graph.meta(n).is_none() {
                continue;
            }
            if cands.get(n).is_none() {
                let provenance = graph
                    .inn(s.ord)
                    .iter()
                    .find(|e| e.kind == EdgeKind::Supersedes)
                    .map_or(crate::notes::Provenance::Frontmatter, |e| e.provenance);
                cands.insert(
                    n,
                    Cand {
                        base: c.base,
                        depth: c.depth.saturating_add(1),
                        source: Source::Neighbor,
                        via: Some(Via {
                            parent: s.ord,
                            kind: EdgeKind::Supersedes,
                            provenance,
                            forward: false,
                        }),
                        lexical: 0.0,
                        matched: 0,
                        support: 0.0,
                    },
                );
            }
            if let Some(mut b) = score_of(n, c.base, stats(n)) {
                b.score = supersession::next_below(s.score);
                brought.push(b);
            }
        }
    }
    let brought_ords: Vec<u32> = brought.iter().map(|b| b.ord).collect();
    scored.extend(brought);
    // A note's evidence before priors: its base when the question found it (graph support
    // included), nothing when it was only reached or brought along.
    let evidence = |o: u32| {
        cands
            .get(o)
            .filter(|c| c.source == Source::Direct)
            .map_or(0.0, |c| c.base)
    };
    supersession::lift_successors(
        graph,
        &mut scored,
        |s| (s.ord, s.score),
        evidence,
        |s, v| s.score = v,
        floor.old_first,
    );
    scored.sort_by(by_rank);
    scored.truncate(q.limit);
    if floor.weak || floor.alone || floor.unknown_subject || floor.names_only {
        // The best notes, and notes agents used before that this question also matches.
        let keep = if floor.names_only {
            ranking::NAMES_ONLY_RESULTS
        } else if floor.unknown_weak {
            ranking::UNKNOWN_WEAK_RESULTS
        } else if floor.weak {
            ranking::WEAK_QUESTION_RESULTS
        } else if floor.alone {
            ranking::ALONE_QUESTION_RESULTS
        } else {
            ranking::UNKNOWN_SUBJECT_RESULTS
        };
        // A successor brought along with a note it replaces stays, uncounted, even when the cut
        // leaves that note out: it is what the note the question matched became.
        let used = |o: u32| direct_info.iter().any(|(d, i)| *d == o && i.used);
        // Of a question matching only its names, the notes about them (their title, description
        // or tags hold one) stay too: "tell me about Maya" has two notes on Maya.
        let about_names = |o: u32| {
            floor.names_only
                && direct_info
                    .iter()
                    .any(|(d, i)| *d == o && i.titled & name_bits != 0)
        };
        let mut i = 0usize;
        scored.retain(|s| {
            if brought_ords.contains(&s.ord) {
                return true;
            }
            i += 1;
            i <= keep || used(s.ord) || (i <= ranking::NAMED_NOTES_RESULTS && about_names(s.ord))
        });
    }

    floor.under_min_score = under_min_score && scored.len() < q.limit;

    // 5. The returned notes: records, trails and explanations.
    let trail_of = |o: u32| -> Vec<TrailEdge> {
        let mut t = Vec::new();
        let mut cur = o;
        while let Some(Some(via)) = cands.get(cur).map(|c| c.via) {
            let (from, to) = if via.forward {
                (via.parent, cur)
            } else {
                (cur, via.parent)
            };
            t.push(TrailEdge {
                from: graph.id(from).to_string(),
                to: graph.id(to).to_string(),
                kind: via.kind,
                provenance: via.provenance,
            });
            cur = via.parent;
            if t.len() > usize::from(ranking::MAX_DEPTH) {
                break;
            }
        }
        t.reverse();
        t
    };
    let mut out: Vec<Hit> = Vec::with_capacity(scored.len());
    let ords: Vec<u32> = scored.iter().map(|s| s.ord).collect();
    let records = shown.read(graph, store, &ords)?;
    for (s, rec) in scored.into_iter().zip(records) {
        let (Some(rec), Some(c)) = (rec, cands.get(s.ord)) else {
            continue;
        };
        let info = direct_info
            .iter()
            .find(|(o, _)| *o == s.ord)
            .map(|(_, i)| *i)
            .unwrap_or_default();
        let explain = Explain {
            lexical: c.lexical,
            coverage: info.coverage,
            learned: info.learned,
            title_match: info.title_match,
            base: c.base,
            type_weight: s.type_weight,
            ttl_factor: s.ttl_factor,
            usage: s.usage,
            importance: s.importance,
            recency: s.recency,
            placed: s.score != s.computed,
            support: if c.source == Source::Direct {
                ranking::GRAPH_SUPPORT_WEIGHT * c.support
            } else {
                0.0
            },
            matched_terms: qt
                .terms
                .iter()
                .enumerate()
                .filter(|(i, _)| c.matched & (1 << (i % 32)) != 0)
                .map(|(_, t)| t.term.clone())
                .collect(),
        };
        out.push(Hit {
            id: graph.id(s.ord).to_string(),
            name: rec.name.clone(),
            description: rec.description.clone(),
            note_type: rec.note_type.as_str(),
            score: s.score,
            source: c.source,
            trail: trail_of(s.ord),
            excerpt: rec.excerpt.clone(),
            explain,
            // A note on a cycle of `supersedes` edges (which `doctor` reports) is ranked as if
            // nothing replaced it, and says so: no successor is named.
            superseded_by: if supersession::is_superseded(graph, s.ord)
                && supersession::chain(graph, s.ord).is_some()
            {
                let mut v: Vec<u32> = supersession::successors(graph, s.ord).collect();
                v.sort_unstable();
                v.dedup();
                v.into_iter().map(|o| graph.id(o).to_string()).collect()
            } else {
                Vec::new()
            },
            contradicts: if graph.has_contradicts() {
                supersession::contradicting(graph, s.ord)
                    .into_iter()
                    .map(|o| graph.id(o).to_string())
                    .collect()
            } else {
                Vec::new()
            },
        });
    }
    Ok((out, floor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use mnemon_testkit::corpus::{GenConfig, generate};

    #[test]
    fn a_word_in_capitals_is_told_from_grammar() {
        assert_eq!(words_in_capitals("ask IT"), ["it"]);
        assert_eq!(words_in_capitals("US visa, SLA"), ["us", "sla"]);
        assert!(words_in_capitals("is it?").is_empty());
        assert!(words_in_capitals("How I Work").is_empty());
        assert!(words_in_capitals("a B c").is_empty());
    }

    /// The graph of a generated corpus of `notes` notes.
    fn generated_graph(notes: usize, seed: u64) -> Graph {
        let tmp = tempfile::tempdir().expect("tempdir");
        generate(&GenConfig::new(notes, seed), tmp.path()).expect("generate");
        let memory = crate::Memory::init(tmp.path()).expect("init");
        memory.index().expect("index");
        let (store, _) = Store::open(&memory.dir().index()).expect("store");
        Graph::load(&store.read().expect("read")).expect("graph")
    }

    /// `count` seeds spread over the graph from `start` (every `step`-th ordinal), bases falling
    /// by `fall` from 1, and the candidate table holding them as direct hits.
    fn seeded(
        graph: &Graph,
        start: u32,
        step: u32,
        count: u32,
        fall: f32,
    ) -> (Vec<(u32, f32)>, Cands) {
        let seeds: Vec<(u32, f32)> = (0..count)
            .map(|i| {
                (
                    (start + i * step) % graph.len() as u32,
                    1.0 - fall * i as f32,
                )
            })
            .filter(|(o, _)| graph.meta(*o).is_some())
            .collect();
        let mut direct = Cands::default();
        direct.reset(graph.len());
        for &(o, b) in &seeds {
            direct.insert(o, Cand::direct(b));
        }
        (seeds, direct)
    }

    #[test]
    fn a_failed_recall_gives_the_candidate_tables_back() {
        let tmp = tempfile::tempdir().expect("tempdir");
        generate(&GenConfig::new(60, 5), tmp.path()).expect("generate");
        let memory = crate::Memory::init(tmp.path()).expect("init");
        memory.index().expect("index");
        let slots = || CANDS.with_borrow(|c| (c.0.slot_count(), c.1.slot_count()));
        let mut ok = Query::text("index worker pool");
        ok.record = false;
        memory.recall(&ok).expect("recall");
        let (after_ok, around_ok) = slots();
        assert!(after_ok >= 60 && around_ok >= 60, "{after_ok} {around_ok}");
        let mut bad = Query::anchors(["no-such-note"]);
        bad.text = ok.text.clone();
        bad.record = false;
        assert!(matches!(
            memory.recall(&bad),
            Err(Error::UnknownNode { id, .. }) if id == "no-such-note"
        ));
        assert_eq!(
            slots(),
            (after_ok, around_ok),
            "tables kept after the error"
        );
    }

    /// A walk that leaves out leaves gives every other candidate exactly as the full walk does
    /// (base, depth, trail, support), and leaves out only leaves its floor names. The floor here
    /// names a fixed pseudo-random half of the notes, so leaves also turn up later on shorter,
    /// weaker paths: a left-out leaf must not then become a node to expand.
    #[test]
    fn walk_with_a_leaf_floor_leaves_out_only_leaves_and_changes_nothing_else() {
        let graph = generated_graph(400, 21);
        let half = |ord: u32| (ord.wrapping_mul(2_654_435_761) >> 7) & 1 == 0;
        let skip = |ord: u32, _base: f32| half(ord);
        let (mut left_out, mut compared) = (0usize, 0usize);
        for start in 0..60u32 {
            // Seeds: a few notes with falling bases, as direct hits.
            let (seeds, direct) = seeded(&graph, start * 37, 11, 6, 0.1);
            let mut full = direct.clone();
            walk(&graph, &mut full, &seeds, 2, ranking::MAX_FANOUT, NO_FLOOR);
            let mut part = direct;
            walk(
                &graph,
                &mut part,
                &seeds,
                2,
                ranking::MAX_FANOUT,
                Some(&skip),
            );
            for &o in full.ords() {
                let c = full.get(o).expect("a listed candidate");
                match part.get(o) {
                    Some(p) => {
                        assert_eq!(
                            (p.base, p.depth, p.support, p.source),
                            (c.base, c.depth, c.support, c.source),
                            "{}",
                            graph.id(o)
                        );
                        let via = |v: Option<Via>| v.map(|v| (v.parent, v.kind, v.forward));
                        assert_eq!(via(p.via), via(c.via), "{}", graph.id(o));
                        compared += 1;
                    }
                    None => {
                        assert_eq!(c.depth, 2, "{} left out but expanded", graph.id(o));
                        assert!(half(o));
                        left_out += 1;
                    }
                }
            }
            assert!(part.ords().iter().all(|&o| full.contains(o)));
        }
        assert!(
            left_out > 500 && compared > 500,
            "{left_out} left out, {compared} compared"
        );
    }
    /// The walk's frontier order as it was written before it was packed into one integer.
    #[derive(Debug, PartialEq)]
    struct RefFrontier {
        base: f32,
        ord: u32,
    }
    impl Eq for RefFrontier {}
    impl PartialOrd for RefFrontier {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for RefFrontier {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.base
                .total_cmp(&other.base)
                .then_with(|| other.ord.cmp(&self.ord))
        }
    }

    #[test]
    fn packed_frontier_orders_as_the_float_total_order_then_the_lower_ordinal() {
        let bases = [
            f32::NEG_INFINITY,
            -1.5,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            1e-30,
            0.25,
            0.2500001,
            1.0,
            3.0e38,
            f32::INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        let ords = [0u32, 1, 7, u32::MAX - 1, u32::MAX];
        let all: Vec<(f32, u32)> = bases
            .iter()
            .flat_map(|&b| ords.iter().map(move |&o| (b, o)))
            .collect();
        for &(b, o) in &all {
            let f = Frontier::new(b, o);
            assert_eq!((f.base().to_bits(), f.ord()), (b.to_bits(), o));
            for &(b2, o2) in &all {
                let want = RefFrontier { base: b, ord: o }.cmp(&RefFrontier { base: b2, ord: o2 });
                assert_eq!(f.cmp(&Frontier::new(b2, o2)), want, "{b} {o} vs {b2} {o2}");
            }
        }
    }

    /// The walk written for clarity, without the graph's per-edge weights or its co-occurrence
    /// edges split off by position: every edge weighed from its fields as it is followed, every
    /// kind tested. [`walk`] must give the same candidates to the last bit.
    fn reference_walk(
        graph: &Graph,
        cands: &mut Cands,
        seeds: &[(u32, f32)],
        max_depth: u8,
        seed_fanout: usize,
    ) {
        let mut heap: BinaryHeap<RefFrontier> = seeds
            .iter()
            .map(|&(ord, base)| RefFrontier { base, ord })
            .collect();
        let mut expanded = 0usize;
        while let Some(RefFrontier { base, ord }) = heap.pop() {
            let Slot::Cand(cur) = cands.slot_mut(ord) else {
                continue;
            };
            if cur.base > base || cur.depth >= max_depth {
                continue;
            }
            expanded += 1;
            if expanded > ranking::MAX_EXPANSIONS {
                break;
            }
            let (depth, from_seed, cur_source) = (cur.depth, cur.depth == 0, cur.source);
            let fanout = if from_seed {
                seed_fanout
            } else {
                ranking::MAX_FANOUT
            };
            let out = graph.out(ord);
            let inn = graph.inn(ord);
            for (list, forward) in [
                (&out[..out.len().min(fanout)], true),
                (&inn[..inn.len().min(fanout)], false),
            ] {
                for e in list {
                    if is_co_occurrence(e.kind) && !from_seed {
                        continue;
                    }
                    let mut w = ranking::edge_kind_weight(e.kind)
                        * ranking::provenance_weight(e.provenance)
                        * e.confidence
                        * ranking::hub_damping(e.source_out_degree);
                    if !forward {
                        w *= ranking::REVERSE_EDGE_FACTOR;
                    }
                    let child_base = base * ranking::HOP_DECAY * w;
                    if let Slot::Cand(existing) = cands.slot_mut(e.other) {
                        if existing.source == Source::Direct {
                            if existing.depth == 0 && e.other != ord {
                                existing.support = existing.support.max(child_base);
                            }
                            continue;
                        }
                        if existing.base >= child_base {
                            continue;
                        }
                    }
                    let source = if is_co_occurrence(e.kind) || cur_source == Source::CoOccur {
                        Source::CoOccur
                    } else {
                        Source::Neighbor
                    };
                    let via = Via {
                        parent: ord,
                        kind: e.kind,
                        provenance: e.provenance,
                        forward,
                    };
                    cands.insert(
                        e.other,
                        Cand {
                            base: child_base,
                            depth: depth + 1,
                            source,
                            via: Some(via),
                            lexical: 0.0,
                            matched: 0,
                            support: 0.0,
                        },
                    );
                    if depth + 1 < max_depth {
                        heap.push(RefFrontier {
                            base: child_base,
                            ord: e.other,
                        });
                    }
                }
            }
        }
    }

    #[test]
    fn walk_equals_the_reference_walk_that_weighs_each_edge_as_it_goes() {
        let graph = generated_graph(400, 33);
        let co = (0..graph.len() as u32)
            .flat_map(|o| graph.out(o))
            .filter(|e| is_co_occurrence(e.kind))
            .count();
        assert!(
            co > 100,
            "the corpus has co-occurrence edges to follow: {co}"
        );
        let mut compared = 0usize;
        for start in 0..40u32 {
            for (depth, fanout) in [(1u8, 2), (2, ranking::MAX_FANOUT), (3, 200)] {
                let (seeds, direct) = seeded(&graph, start * 53, 7, 5, 0.15);
                let mut reference = direct.clone();
                reference_walk(&graph, &mut reference, &seeds, depth, fanout);
                let mut walked = direct;
                walk(&graph, &mut walked, &seeds, depth, fanout, NO_FLOOR);
                assert_eq!(
                    walked.ords(),
                    reference.ords(),
                    "seeds {seeds:?}, depth {depth}"
                );
                for &o in reference.ords() {
                    let (r, w) = (reference.get(o), walked.get(o));
                    let bits = |c: Option<Cand>| {
                        c.map(|c| {
                            (
                                c.base.to_bits(),
                                c.support.to_bits(),
                                c.depth,
                                c.source,
                                c.via,
                            )
                        })
                    };
                    assert_eq!(bits(w), bits(r), "{}", graph.id(o));
                    compared += 1;
                }
            }
        }
        assert!(compared > 2000, "{compared} candidates compared");
    }
}
