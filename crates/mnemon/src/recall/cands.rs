//! The candidates of one recall, by graph ordinal.
//!
//! A walk looks at thousands of edges per recall and many of their ends become candidates, so
//! the table sits on the walk's hot path, where a hash map's hashing and probing would dominate.
//! The table is dense instead: one slot per ordinal, reused from recall to recall (kept per
//! thread), a slot live when its stamp is the current recall's; starting a recall bumps the stamp
//! instead of clearing the slots. The live ordinals are listed in the order they were added, for
//! iteration.
//! Each slot is split in two: a 16-byte hot part (stamp, base, depth, source, support) the walk
//! reads for every edge, four to a cache line, and a cold part (the edge it was reached by, the
//! lexical score) written when a candidate is added and read when the results are built. The
//! two take about 32 bytes per ordinal per table.
//!
//! A slot holds either a candidate or a **left-out leaf**: a node the walk did not add because it
//! could not reach the results, remembered with the best base it was reached with (see
//! `engine::walk`'s leaf floor). A left-out leaf is not a candidate: `get`, `contains`, `len` and
//! the iterators skip it.

use super::query::Source;
use crate::notes::{EdgeKind, Provenance};

/// The edge a candidate was reached by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Via {
    pub parent: u32,
    pub kind: EdgeKind,
    pub provenance: Provenance,
    /// The edge points from `parent` to the candidate (else from the candidate to `parent`).
    pub forward: bool,
}

/// A candidate during the walk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cand {
    pub base: f32,
    pub depth: u8,
    pub source: Source,
    /// The node and edge this candidate was reached from (none for direct hits).
    pub via: Option<Via>,
    pub lexical: f32,
    pub matched: u32,
    /// For direct hits: the best score a walk from another seed brought to it.
    pub support: f32,
}

impl Cand {
    /// A direct hit (an anchor or a lexical match) with relevance `base`.
    pub fn direct(base: f32) -> Cand {
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

/// What a slot holds in the current recall (when its stamp is current).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Held {
    Cand,
    /// A left-out leaf; `base` is the best base it was reached with.
    LeftOut,
}

/// The part of a candidate the walk reads for every edge, 16 bytes: four slots per cache line.
#[derive(Debug, Clone, Copy)]
pub struct Hot {
    stamp: u32,
    held: Held,
    pub base: f32,
    pub depth: u8,
    pub source: Source,
    pub support: f32,
}

/// The rest, written when a candidate is added and read when the results are built.
#[derive(Debug, Clone, Copy)]
struct Cold {
    via: Option<Via>,
    lexical: f32,
    matched: u32,
}

const EMPTY_HOT: Hot = Hot {
    stamp: 0,
    held: Held::Cand,
    base: 0.0,
    depth: 0,
    source: Source::Direct,
    support: 0.0,
};

const EMPTY_COLD: Cold = Cold {
    via: None,
    lexical: 0.0,
    matched: 0,
};

/// What one ordinal's slot holds in the current recall.
pub enum Slot<'a> {
    Empty,
    /// A candidate, its walk part to read or change.
    Cand(&'a mut Hot),
    /// A left-out leaf with the best base it was reached with.
    LeftOut(f32),
}

/// The candidate table (see the module doc). Stamp 0 is never current.
#[derive(Debug, Clone)]
pub struct Cands {
    hot: Vec<Hot>,
    cold: Vec<Cold>,
    stamp: u32,
    /// Ordinals holding a candidate, in the order they became one.
    live: Vec<u32>,
}

impl Default for Cands {
    fn default() -> Self {
        Cands {
            hot: Vec::new(),
            cold: Vec::new(),
            stamp: 1,
            live: Vec::new(),
        }
    }
}

impl Cands {
    /// Empty the table for a recall on a graph of `ordinals` nodes.
    pub fn reset(&mut self, ordinals: usize) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.hot.fill(EMPTY_HOT);
            self.stamp = 1;
        }
        self.grow(ordinals);
        self.live.clear();
    }

    fn grow(&mut self, ordinals: usize) {
        if self.hot.len() < ordinals {
            self.hot.resize(ordinals, EMPTY_HOT);
            self.cold.resize(ordinals, EMPTY_COLD);
        }
    }

    #[inline]
    fn hot_of(&self, o: u32, held: Held) -> Option<&Hot> {
        self.hot
            .get(o as usize)
            .filter(|h| h.stamp == self.stamp && h.held == held)
    }

    /// The candidate at `o`.
    pub fn get(&self, o: u32) -> Option<Cand> {
        let h = self.hot_of(o, Held::Cand)?;
        let c = self.cold.get(o as usize)?;
        Some(Cand {
            base: h.base,
            depth: h.depth,
            source: h.source,
            via: c.via,
            lexical: c.lexical,
            matched: c.matched,
            support: h.support,
        })
    }

    /// The walk's part of the candidate at `o`, to change it.
    #[inline]
    pub fn hot_mut(&mut self, o: u32) -> Option<&mut Hot> {
        match self.slot_mut(o) {
            Slot::Cand(h) => Some(h),
            Slot::LeftOut(_) | Slot::Empty => None,
        }
    }

    /// What the slot of `o` holds, in one read.
    #[inline]
    pub fn slot_mut(&mut self, o: u32) -> Slot<'_> {
        let stamp = self.stamp;
        match self.hot.get_mut(o as usize) {
            Some(h) if h.stamp == stamp => match h.held {
                Held::Cand => Slot::Cand(h),
                Held::LeftOut => Slot::LeftOut(h.base),
            },
            _ => Slot::Empty,
        }
    }

    /// Whether `o` is a candidate.
    pub fn contains(&self, o: u32) -> bool {
        self.hot_of(o, Held::Cand).is_some()
    }

    /// Make `c` the candidate at `o` (replacing a candidate or a left-out leaf there).
    #[inline]
    pub fn insert(&mut self, o: u32, c: Cand) {
        let i = o as usize;
        self.grow(i + 1);
        let stamp = self.stamp;
        let h = &mut self.hot[i];
        if h.stamp != stamp || h.held != Held::Cand {
            self.live.push(o);
        }
        *h = Hot {
            stamp,
            held: Held::Cand,
            base: c.base,
            depth: c.depth,
            source: c.source,
            support: c.support,
        };
        self.cold[i] = Cold {
            via: c.via,
            lexical: c.lexical,
            matched: c.matched,
        };
    }

    /// Record a lexical match at `o`: its score and matched terms, and `base` when that is
    /// higher (a direct hit with that base when `o` is not a candidate yet).
    pub fn add_lexical(&mut self, o: u32, base: f32, lexical: f32, matched: u32) {
        if !self.contains(o) {
            self.insert(o, Cand::direct(base));
        }
        let i = o as usize;
        self.hot[i].base = self.hot[i].base.max(base);
        self.cold[i].lexical = lexical;
        self.cold[i].matched = matched;
    }

    /// The best base `o` was left out with, when it is a left-out leaf.
    #[cfg(test)]
    pub fn left_out_base(&self, o: u32) -> Option<f32> {
        self.hot_of(o, Held::LeftOut).map(|h| h.base)
    }

    /// Record `o`, which holds no candidate, as left out with `base`.
    #[inline]
    pub fn leave_out(&mut self, o: u32, base: f32) {
        let i = o as usize;
        self.grow(i + 1);
        debug_assert!(!self.contains(o), "a candidate is never left out");
        self.hot[i] = Hot {
            stamp: self.stamp,
            held: Held::LeftOut,
            base,
            ..EMPTY_HOT
        };
    }

    /// Hint that `o`'s slot will be read soon.
    #[inline]
    pub fn prefetch(&self, o: u32) {
        crate::prefetch::prefetch(&self.hot, o as usize);
    }

    /// Slots allocated (one per ordinal of the largest graph seen).
    #[cfg(test)]
    pub fn slot_count(&self) -> usize {
        self.hot.len()
    }

    /// Number of candidates.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Every candidate's ordinal and base, in the order they were added.
    pub fn bases(&self) -> impl Iterator<Item = (u32, f32)> {
        self.live.iter().map(|&o| (o, self.hot[o as usize].base))
    }

    /// Every candidate's ordinal, in the order they were added.
    pub fn ords(&self) -> &[u32] {
        &self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_forgets_candidates_and_left_out_leaves_without_clearing() {
        let mut c = Cands::default();
        c.reset(8);
        c.insert(3, Cand::direct(0.5));
        c.leave_out(5, 0.25);
        assert_eq!(c.get(3).map(|c| c.base), Some(0.5));
        assert_eq!(c.get(5), None, "a left-out leaf is not a candidate");
        assert_eq!(c.left_out_base(5), Some(0.25));
        assert_eq!(c.left_out_base(3), None);
        assert_eq!(c.len(), 1);
        // A left-out leaf that becomes a candidate is listed once.
        c.insert(5, Cand::direct(0.75));
        c.insert(5, Cand::direct(0.8));
        assert_eq!(c.ords(), &[3, 5]);
        assert_eq!(c.left_out_base(5), None);
        c.reset(8);
        assert_eq!(
            (c.get(3), c.get(5), c.left_out_base(5), c.len()),
            (None, None, None, 0)
        );
        // An ordinal past the table grows it.
        c.insert(20, Cand::direct(1.0));
        assert_eq!(c.get(20).map(|c| c.base), Some(1.0));
        assert_eq!(c.get(21), None);
    }

    #[test]
    fn stamp_wrap_clears_the_slots() {
        let mut c = Cands::default();
        c.reset(4);
        c.insert(1, Cand::direct(0.5));
        c.stamp = u32::MAX;
        c.hot[2].stamp = u32::MAX;
        c.reset(4);
        assert_eq!(c.stamp, 1);
        assert!(c.hot.iter().all(|s| s.stamp == 0));
        assert_eq!((c.get(1), c.get(2)), (None, None));
    }
}
