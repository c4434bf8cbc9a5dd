//! Numbering the distinct strings of a build: [`Interner`] gives each new string the next number
//! and keeps every string once, in one growing buffer.
//!
//! A build looks up every word of every note, where a `HashMap<Box<str>, u32>` would make each
//! distinct string its own heap allocation and compare every hit against a key behind a
//! pointer: a cache miss per word, on the build's hottest path.
//! Here a slot holds the first 16 bytes of its string inline, so a hit on a string of at most 16
//! bytes (nearly every word) is decided inside the table, and a longer one compares the rest in
//! the shared buffer. Nothing is allocated per string.

use super::tokenize::pack16;
use hashbrown::HashTable;

/// The most bytes of strings an interner holds (its offsets are `u32`).
pub const MAX_INTERNED_BYTES: usize = u32::MAX as usize;

/// Distinct strings, numbered 0, 1, 2, ... in the order they were first interned.
#[derive(Default)]
pub struct Interner {
    table: HashTable<Slot>,
    /// Every string, one after another, in number order.
    text: String,
    /// End of string `n` in `text` (it starts where string `n - 1` ends).
    ends: Vec<u32>,
}

/// One string of the table: its first 16 bytes as two little-endian words, zero-padded (a
/// string's padding is told from NUL bytes by its length), its length and its number.
#[derive(Clone, Copy)]
struct Slot {
    head: [u64; 2],
    len: u32,
    id: u32,
}

/// What a lookup needs of the string looked for: computed once per lookup.
struct Probe<'s> {
    s: &'s str,
    head: [u64; 2],
    hash: u64,
}

impl<'s> Probe<'s> {
    #[inline(always)]
    fn new(s: &'s str) -> Probe<'s> {
        let b = s.as_bytes();
        let head = head16(b);
        Probe {
            s,
            head,
            hash: hash_of(head, b),
        }
    }
}

/// The hash of string `b` whose first 16 bytes are `head`. A string of at most 16 bytes hashes
/// from `head` and its length alone, so a slot rehashes itself when the table grows (no read
/// of the string buffer).
#[inline(always)]
fn hash_of(head: [u64; 2], b: &[u8]) -> u64 {
    let mut hash = fold_mul(head[0] ^ SEED[0], head[1] ^ SEED[1] ^ b.len() as u64);
    // Past the first 16 bytes, 16 more at a time.
    let mut rest = b.get(16..).unwrap_or_default();
    while !rest.is_empty() {
        let n = rest.len().min(16);
        let [x, y] = head16(&rest[..n]);
        hash = fold_mul(x ^ hash, y ^ SEED[2]);
        rest = &rest[n..];
    }
    hash
}

const SEED: [u64; 3] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
];

/// The product's high and low halves folded together: every input bit reaches the low bits
/// (the table's bucket index) and the high ones (its tag).
#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// The first 16 bytes of `b` (fewer if shorter) as two little-endian words, zero-padded.
#[inline]
fn head16(b: &[u8]) -> [u64; 2] {
    match b.len() {
        0 => [0, 0],
        1..=16 => pack16(b),
        _ => pack16(&b[..16]),
    }
}

/// Where string `id` lies in the buffer, given each string's end.
#[inline]
fn span(ends: &[u32], id: u32) -> std::ops::Range<usize> {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    start..ends[i] as usize
}

/// Stands in for a string of at most 16 bytes when only its length is read.
const PAD: [u8; 16] = [0; 16];

impl Interner {
    pub fn new() -> Interner {
        Interner::default()
    }

    /// An interner with room for `strings` strings of `bytes` bytes in all before it grows.
    pub fn with_capacity(strings: usize, bytes: usize) -> Interner {
        Interner {
            table: HashTable::with_capacity(strings),
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(strings),
        }
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String number `id`. Panics if `id >= self.len()` (a caller's bug: numbers come from here).
    pub fn get(&self, id: u32) -> &str {
        &self.text[span(&self.ends, id)]
    }

    /// The number of `s`, if it was interned.
    #[inline]
    pub fn find(&self, s: &str) -> Option<u32> {
        let p = Probe::new(s);
        self.find_probe(&p)
    }

    #[inline]
    fn find_probe(&self, p: &Probe<'_>) -> Option<u32> {
        let len = p.s.len();
        self.table
            .find(p.hash, |slot| {
                slot.head == p.head
                    && slot.len as usize == len
                    && (len <= 16 || self.get(slot.id).as_bytes()[16..] == p.s.as_bytes()[16..])
            })
            .map(|slot| slot.id)
    }

    /// The number of `s`: its old one, or the next one if `s` is new. `None` when the interner
    /// is full ([`MAX_INTERNED_BYTES`] or `u32::MAX` strings); nothing is added then.
    #[inline]
    pub fn intern(&mut self, s: &str) -> Option<u32> {
        let p = Probe::new(s);
        if let Some(id) = self.find_probe(&p) {
            return Some(id);
        }
        self.insert_new(&p)
    }

    /// Adds a string known to be absent.
    fn insert_new(&mut self, p: &Probe<'_>) -> Option<u32> {
        let id = u32::try_from(self.ends.len())
            .ok()
            .filter(|&n| n < u32::MAX)?;
        let end = self.text.len() + p.s.len();
        if end > MAX_INTERNED_BYTES {
            return None;
        }
        self.text.push_str(p.s);
        self.ends.push(end as u32);
        let slot = Slot {
            head: p.head,
            len: p.s.len() as u32,
            id,
        };
        let Interner { table, text, ends } = self;
        table.insert_unique(p.hash, slot, |s| {
            if s.len <= 16 {
                // Only the length of the string matters past its head: no read of `text`.
                let len = s.len as usize;
                return hash_of(s.head, &PAD[..len]);
            }
            hash_of(s.head, &text.as_bytes()[span(ends, s.id)])
        });
        Some(id)
    }

    /// Every string with its number, in number order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u32, &str)> + '_ {
        (0..self.ends.len() as u32).map(|id| (id, self.get(id)))
    }
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interner")
            .field("strings", &self.len())
            .field("bytes", &self.text.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn numbers_follow_first_sight() {
        let mut i = Interner::new();
        assert_eq!(i.intern("pool"), Some(0));
        assert_eq!(i.intern("size"), Some(1));
        assert_eq!(i.intern("pool"), Some(0));
        assert_eq!(i.find("size"), Some(1));
        assert_eq!(i.find("siz"), None);
        assert_eq!(i.len(), 2);
        assert_eq!(i.get(1), "size");
        assert_eq!(i.iter().collect::<Vec<_>>(), vec![(0, "pool"), (1, "size")]);
    }

    /// Strings that share their first 16 bytes, differ only in length or in trailing NULs are
    /// different strings.
    #[test]
    fn long_strings_and_padding_are_told_apart() {
        let words = [
            "",
            "\0",
            "a",
            "a\0",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "abcdefghijklmnopr",
            "abcdefghijklmnop\0",
            "abcdefghijklmnopqrstuvwxyz0123456789",
            "abcdefghijklmnopqrstuvwxyz0123456780",
            "数据库连接池的大小",
        ];
        let mut i = Interner::new();
        for (n, w) in words.iter().enumerate() {
            assert_eq!(i.intern(w), Some(n as u32), "{w:?}");
        }
        for (n, w) in words.iter().enumerate() {
            assert_eq!(i.find(w), Some(n as u32), "{w:?}");
            assert_eq!(i.get(n as u32), *w);
        }
    }

    proptest! {
        /// Against a `HashMap`: the same numbers for any strings, through growth of the table.
        #[test]
        fn agrees_with_a_hash_map(words in proptest::collection::vec("[a-c\u{0}é]{0,20}", 0..400)) {
            let mut i = Interner::new();
            let mut model: HashMap<String, u32> = HashMap::new();
            for w in &words {
                let next = model.len() as u32;
                let want = *model.entry(w.clone()).or_insert(next);
                prop_assert_eq!(i.intern(w), Some(want));
            }
            prop_assert_eq!(i.len(), model.len());
            for (w, n) in &model {
                prop_assert_eq!(i.find(w), Some(*n));
                prop_assert_eq!(i.get(*n), w.as_str());
            }
        }
    }
}
