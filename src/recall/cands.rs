//! The candidates of one recall, by graph ordinal.
//!
//! A walk at 10k notes looks at about 2 000 edges per recall and at 100k about 1 600 candidates
//! end in the table: as a hash map, hashing and probing were half of the walk's time. The table
//! is dense instead: one slot per ordinal, reused from recall to recall (kept per thread), a slot
//! live when its stamp is the current recall's; starting a recall bumps the stamp instead of
//! clearing the slots. The live ordinals are listed in the order they were added, for iteration.
//!
//! A slot holds either a candidate or a **left-out leaf**: a node the walk did not add because it
//! could not reach the results, remembered with the best base it was reached with (see
//! `engine::LeafFloor`). A left-out leaf is not a candidate: `get`, `iter` and `len` skip it.

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
    /// A left-out leaf; `cand.base` is the best base it was reached with.
    LeftOut,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    stamp: u32,
    held: Held,
    cand: Cand,
}

const EMPTY: Slot = Slot {
    stamp: 0,
    held: Held::Cand,
    cand: Cand::EMPTY,
};

impl Cand {
    const EMPTY: Cand = Cand {
        base: 0.0,
        depth: 0,
        source: Source::Direct,
        via: None,
        lexical: 0.0,
        matched: 0,
        support: 0.0,
    };
}

/// The candidate table (see the module doc). Stamp 0 is never current.
#[derive(Debug, Clone)]
pub struct Cands {
    slots: Vec<Slot>,
    stamp: u32,
    /// Ordinals holding a candidate, in the order they became one.
    live: Vec<u32>,
}

impl Default for Cands {
    fn default() -> Self {
        Cands {
            slots: Vec::new(),
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
            self.slots.fill(EMPTY);
            self.stamp = 1;
        }
        if self.slots.len() < ordinals {
            self.slots.resize(ordinals, EMPTY);
        }
        self.live.clear();
    }

    fn slot(&self, o: u32) -> Option<&Slot> {
        self.slots.get(o as usize).filter(|s| s.stamp == self.stamp)
    }

    /// The candidate at `o`.
    #[inline]
    pub fn get(&self, o: u32) -> Option<&Cand> {
        self.slot(o)
            .filter(|s| s.held == Held::Cand)
            .map(|s| &s.cand)
    }

    /// The candidate at `o`, to change it.
    #[inline]
    pub fn get_mut(&mut self, o: u32) -> Option<&mut Cand> {
        let stamp = self.stamp;
        self.slots
            .get_mut(o as usize)
            .filter(|s| s.stamp == stamp && s.held == Held::Cand)
            .map(|s| &mut s.cand)
    }

    /// Whether `o` is a candidate.
    pub fn contains(&self, o: u32) -> bool {
        self.get(o).is_some()
    }

    /// Make `c` the candidate at `o` (replacing a candidate or a left-out leaf there).
    #[inline]
    pub fn insert(&mut self, o: u32, c: Cand) {
        let i = o as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, EMPTY);
        }
        let stamp = self.stamp;
        let s = &mut self.slots[i];
        if s.stamp != stamp || s.held != Held::Cand {
            self.live.push(o);
        }
        *s = Slot {
            stamp,
            held: Held::Cand,
            cand: c,
        };
    }

    /// The candidate at `o`, first made `c` when there is none.
    pub fn get_or_insert(&mut self, o: u32, c: Cand) -> &mut Cand {
        if !self.contains(o) {
            self.insert(o, c);
        }
        let i = o as usize;
        &mut self.slots[i].cand
    }

    /// The best base `o` was left out with, when it is a left-out leaf.
    #[inline]
    pub fn left_out_base(&self, o: u32) -> Option<f32> {
        self.slot(o)
            .filter(|s| s.held == Held::LeftOut)
            .map(|s| s.cand.base)
    }

    /// Record `o`, which holds no candidate, as left out with `base`.
    #[inline]
    pub fn leave_out(&mut self, o: u32, base: f32) {
        let i = o as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, EMPTY);
        }
        debug_assert!(!self.contains(o), "a candidate is never left out");
        self.slots[i] = Slot {
            stamp: self.stamp,
            held: Held::LeftOut,
            cand: Cand {
                base,
                ..Cand::EMPTY
            },
        };
    }

    /// Hint that `o`'s slot will be read soon.
    #[inline]
    pub fn prefetch(&self, o: u32) {
        crate::prefetch::prefetch(&self.slots, o as usize);
    }

    /// Number of candidates.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Every candidate with its ordinal, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Cand)> {
        self.live.iter().map(|&o| (o, &self.slots[o as usize].cand))
    }

    /// Every candidate's ordinal, in the order they were added.
    pub fn ords(&self) -> &[u32] {
        &self.live
    }

    /// The candidate at an ordinal from [`Cands::ords`], to change it.
    pub fn by_ord_mut(&mut self, o: u32) -> &mut Cand {
        &mut self.slots[o as usize].cand
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
        c.slots[2].stamp = u32::MAX;
        c.reset(4);
        assert_eq!(c.stamp, 1);
        assert!(c.slots.iter().all(|s| s.stamp == 0));
        assert_eq!((c.get(1), c.get(2)), (None, None));
    }
}
