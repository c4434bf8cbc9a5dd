//! Notes that replace other notes, and notes that disagree: `supersedes` and `contradicts` edges
//! read off the graph for ranking and for what a result says about itself.
//!
//! A note that another note declares it replaces (`supersedes:` or "This replaces [[x]]") ranks
//! below its successors whenever both are returned and the question finds them about as well
//! (they take its place, it keeps its rank under them). When a question finds only the old note,
//! or finds it far better, the old note answers it and the newest successor is returned right
//! below it. Chains (a replaced by b, b by c) resolve to the newest; a note on a cycle of
//! `supersedes` edges (which `doctor` reports) is left as ranked.

use crate::graph::Graph;
use crate::notes::EdgeKind;
use crate::ranking;

/// Longest chain of successors followed (a longer one is treated like a cycle: left as ranked).
pub const MAX_CHAIN: usize = 16;

/// The notes that declare they replace `o` (sources of `supersedes` edges into it).
pub fn successors(graph: &Graph, o: u32) -> impl Iterator<Item = u32> + '_ {
    let inn = if graph.has_supersedes() {
        graph.inn(o)
    } else {
        &[]
    };
    inn.iter()
        .filter(move |e| e.kind == EdgeKind::Supersedes && e.other != o)
        .map(|e| e.other)
}

/// Whether `o` has a successor.
pub fn is_superseded(graph: &Graph, o: u32) -> bool {
    successors(graph, o).next().is_some()
}

/// Every note replacing `o`, directly or down a chain, and the newest of them (those nothing
/// replaces), each sorted by ordinal. `None` when `o` is on a cycle of `supersedes` edges or a
/// chain is longer than [`MAX_CHAIN`]; both empty when nothing replaces `o`.
pub fn chain(graph: &Graph, o: u32) -> Option<Chain<u32>> {
    let walked = chain_by(o, |&x| {
        Ok::<_, std::convert::Infallible>(successors(graph, x).collect())
    });
    match walked {
        Ok(c) => c,
        Err(never) => match never {},
    }
}

/// Every note replacing one, down its chains, and the newest of them (each sorted).
pub type Chain<K> = (Vec<K>, Vec<K>);

/// [`chain`] over any note keys, `successors` giving each one's successors (the graph's
/// ordinals for recall, the store's ids for the core view).
pub fn chain_by<K: Clone + Ord, E>(
    o: K,
    mut successors: impl FnMut(&K) -> Result<Vec<K>, E>,
) -> Result<Option<Chain<K>>, E> {
    let mut later: Vec<K> = Vec::new();
    let mut newest = Vec::new();
    let mut frontier = successors(&o)?;
    let mut steps = 0usize;
    while !frontier.is_empty() {
        steps += 1;
        if steps > MAX_CHAIN {
            return Ok(None);
        }
        let mut next = Vec::new();
        for s in frontier {
            if s == o {
                return Ok(None);
            }
            if later.contains(&s) {
                continue;
            }
            let before = next.len();
            next.extend(successors(&s)?);
            if next.len() == before {
                newest.push(s.clone());
            }
            later.push(s);
        }
        frontier = next;
    }
    later.sort_unstable();
    newest.sort_unstable();
    newest.dedup();
    Ok(Some((later, newest)))
}

/// The newest notes replacing `o` (see [`chain`]).
pub fn newest_successors(graph: &Graph, o: u32) -> Option<Vec<u32>> {
    chain(graph, o).map(|(_, newest)| newest)
}

/// The notes `o` contradicts or that contradict it, sorted by ordinal, without repeats.
pub fn contradicting(graph: &Graph, o: u32) -> Vec<u32> {
    if !graph.has_contradicts() {
        return Vec::new();
    }
    let mut v: Vec<u32> = graph
        .out(o)
        .iter()
        .chain(graph.inn(o))
        .filter(|e| e.kind == EdgeKind::Contradicts && e.other != o)
        .map(|e| e.other)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Lift the notes replacing each superseded note in `scored` (not on a cycle) to just above it
/// when they rank at or below it and the question finds them about as well (so a chain a -> b ->
/// c ranks c, b, a): the successor takes the old note's place and the old note keeps its rank
/// under it, ahead of everything it led. A successor the question finds far less (the old note's
/// evidence leads by more than [`ranking::CLEAR_LEAD`]) comes right below the old note instead:
/// the question is about what only the old note says (an old file name, a retired setting),
/// which the answer must show first, with what replaced it next. `key` gives an entry's ordinal
/// and score, `evidence` a note's evidence for the question before priors (0 for a note the
/// question does not find), `set` changes a score.
///
/// A question about what was there before (`old_first`: [`ranking::asks_about_the_past`]) turns
/// this around: the old note is lifted above the successors it ranks below unless one of them
/// leads it by more than [`ranking::CLEAR_LEAD`] (a chain a -> b -> c then ranks a, b, c).
pub fn lift_successors<T>(
    graph: &Graph,
    scored: &mut [T],
    key: impl Fn(&T) -> (u32, f32),
    evidence: impl Fn(u32) -> f32,
    set: impl Fn(&mut T, f32),
    old_first: bool,
) {
    if !graph.has_supersedes() {
        return;
    }
    // Each replaced note's entry, and every note replacing it down its chain.
    let olds: Vec<(usize, Vec<u32>)> = (0..scored.len())
        .filter_map(|i| {
            let (o, _) = key(&scored[i]);
            if !is_superseded(graph, o) {
                return None;
            }
            chain(graph, o).map(|(later, _)| (i, later))
        })
        .collect();
    if old_first {
        lift_olds(&olds, scored, key, evidence, set);
        return;
    }
    // Per entry: the score of an old note it was placed under, which no later lift may reach.
    let mut under = vec![f32::INFINITY; scored.len()];
    for _ in 0..=MAX_CHAIN {
        let mut moved = false;
        for (i, later) in &olds {
            let (old, old_score) = key(&scored[*i]);
            let bar = evidence(old) / ranking::CLEAR_LEAD;
            for (j, entry) in scored.iter_mut().enumerate() {
                let (x, score) = key(entry);
                if score > old_score || later.binary_search(&x).is_err() {
                    continue;
                }
                let place = if evidence(x) >= bar {
                    next_above(old_score)
                } else {
                    under[j] = under[j].min(old_score);
                    next_below(old_score)
                };
                if place > score && place < under[j] {
                    set(entry, place);
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    }
}

/// [`lift_successors`] for a question about what was there before: each replaced note in
/// `scored` (`olds`: its entry and the notes replacing it) goes right above the highest of its
/// successors that ranks above it without leading it by more than [`ranking::CLEAR_LEAD`].
fn lift_olds<T>(
    olds: &[(usize, Vec<u32>)],
    scored: &mut [T],
    key: impl Fn(&T) -> (u32, f32),
    evidence: impl Fn(u32) -> f32,
    set: impl Fn(&mut T, f32),
) {
    for _ in 0..=MAX_CHAIN {
        let mut moved = false;
        for (i, later) in olds {
            let (old, old_score) = key(&scored[*i]);
            let bar = evidence(old) * ranking::CLEAR_LEAD;
            let top = scored
                .iter()
                .map(&key)
                .filter(|&(x, score)| {
                    score >= old_score && later.binary_search(&x).is_ok() && evidence(x) <= bar
                })
                .map(|(_, score)| score)
                .fold(f32::NEG_INFINITY, f32::max);
            if top.is_finite() && next_above(top) > old_score {
                set(&mut scored[*i], next_above(top));
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
}

/// The largest f32 below `x` (for finite positive `x`; `x` itself at zero or below).
pub fn next_below(x: f32) -> f32 {
    if x > 0.0 && x.is_finite() {
        f32::from_bits(x.to_bits() - 1)
    } else {
        x
    }
}

/// The smallest f32 above `x` (for finite `x`).
pub fn next_above(x: f32) -> f32 {
    if x >= 0.0 && x.is_finite() {
        f32::from_bits(x.to_bits() + 1)
    } else {
        x + f32::EPSILON
    }
}
