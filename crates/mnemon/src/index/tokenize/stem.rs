//! A word's stem: the Snowball English stemmer, run on the word's American spelling, behind a
//! per-thread cache and one shared by all threads. Stemming would otherwise dominate indexing
//! time, and word frequencies are Zipfian, so most words are looked up, not stemmed.

use std::borrow::Cow;
use std::cell::RefCell;

use super::{MAX_TERM_BYTES, Tokenizer};
use crate::index::spelling;

impl Tokenizer {
    /// [`Tokenizer::normalise`] into `term` (cleared first), reusing its allocation.
    pub(super) fn normalise_into(&self, surface: &str, stem: bool, term: &mut String) {
        term.clear();
        if !stem {
            term.push_str(surface);
            return;
        }
        if surface.len() > STEM_KEY_BYTES {
            term.push_str(&self.stem(surface));
            return;
        }
        let cached = STEM_CACHE.try_with(|cache| {
            cache
                .borrow_mut()
                .get_or_stem_into(surface, |w| self.shared_stem(w), term)
        });
        if cached.is_err() {
            term.push_str(&self.shared_stem(surface));
        }
    }

    /// The stem of a word of at most [`STEM_KEY_BYTES`] lowercase ASCII letters that this
    /// thread's cache missed: from [`SHARED_STEMS`] if another thread stemmed it, else stemmed
    /// here and shared (the lock is not held while stemming).
    fn shared_stem(&self, word: &str) -> String {
        self.stem_via(&SHARED_STEMS, word)
    }

    /// [`Tokenizer::shared_stem`] through the cache `shared`. The cache is only a saving: a
    /// word whose lock another thread holds is stemmed here. Never waiting also keeps a process
    /// forked while a thread of its parent held the lock (Python's `os.fork`, `multiprocessing`)
    /// from waiting forever on a lock no thread of its own will release.
    fn stem_via(&self, shared: &std::sync::Mutex<StemCache>, word: &str) -> String {
        let mut out = String::new();
        if let Ok(mut shared) = shared.try_lock()
            && shared.get_into(word, &mut out)
        {
            return out;
        }
        let stem = self.stem(word);
        if let Ok(mut shared) = shared.try_lock() {
            shared.put(word, &stem);
        }
        stem
    }

    /// Stems a lowercase ASCII word, in its American spelling ([`spelling::american`]);
    /// never returns an empty or over-long term.
    fn stem(&self, word: &str) -> String {
        let word = spelling::american(word);
        let word = word.as_ref();
        let mut term = match self.stemmer.stem(word) {
            Cow::Borrowed(s) if !s.is_empty() => s.to_owned(),
            Cow::Owned(s) if !s.is_empty() => s,
            _ => word.to_owned(),
        };
        if term.len() > MAX_TERM_BYTES {
            let mut cut = MAX_TERM_BYTES;
            while !term.is_char_boundary(cut) {
                cut -= 1;
            }
            term.truncate(cut);
        }
        term
    }
}

/// Longest word memoised by the stem cache (longer words are rarer and stemmed directly).
const STEM_KEY_BYTES: usize = 16;
/// log2 of the number of stem cache sets (8192 sets of 2 slots of 32 bytes: 512 KB per
/// thread, zero-initialised, so pages only become resident as they are used).
const STEM_CACHE_BITS: u32 = 13;

/// Stems shared by every thread, behind the per-thread caches: a word stemmed on one core is not
/// stemmed again on another. A build looks here only on a per-thread miss, which is rare next
/// to the words looked up; without it, each core would stem every distinct word it met, the
/// vocabulary's stemming repeated once per core.
static SHARED_STEMS: std::sync::Mutex<StemCache> =
    std::sync::Mutex::new(StemCache { sets: Vec::new() });

thread_local! {
    /// Per-thread memo of `word -> stem` (the stemmer is always English; key the cache by
    /// language if that ever becomes configurable): Snowball stemming
    /// would otherwise dominate indexing time, and word frequencies are Zipfian.
    static STEM_CACHE: RefCell<StemCache> = const { RefCell::new(StemCache { sets: Vec::new() }) };
}

/// A 2-way set-associative cache with inline keys and values (a set is one 64-byte cache line,
/// no pointer chasing). A slot is `[key lo, key hi, meta, tail]`: the key is the word's ASCII
/// bytes, little-endian, zero-padded (words never contain NUL, so the padding is unambiguous;
/// an all-zero key marks an empty slot); the stem is `word[..p]` followed by up to 8 ASCII `tail`
/// bytes, with `meta = p | tail_len << 8`. A miss evicts the older slot of its set.
struct StemCache {
    sets: Vec<[[u64; 4]; 2]>,
}

/// Packs 1..=16 bytes into two zero-padded little-endian words.
#[inline]
pub(in crate::index) fn pack16(b: &[u8]) -> [u64; 2] {
    let n = b.len();
    debug_assert!((1..=16).contains(&n));
    // Whole-word loads (the branches are on `n`, which the callers' slicing already checked).
    let le8 = |i: usize| {
        b.get(i..)
            .and_then(|r| r.first_chunk::<8>())
            .map_or(0, |c| u64::from_le_bytes(*c))
    };
    let le4 = |i: usize| {
        b.get(i..)
            .and_then(|r| r.first_chunk::<4>())
            .map_or(0, |c| u64::from(u32::from_le_bytes(*c)))
    };
    if n >= 8 {
        // The second load overlaps the first; shift out the bytes before index 8.
        let hi = if n > 8 {
            le8(n - 8) >> (8 * (16 - n))
        } else {
            0
        };
        [le8(0), hi]
    } else if n >= 4 {
        // Overlapping loads: the shared bytes are equal, so OR-ing them is exact.
        [le4(0) | (le4(n - 4) << (8 * (n - 4))), 0]
    } else {
        let mut lo = 0;
        for (i, &x) in b.iter().enumerate() {
            lo |= u64::from(x) << (8 * i);
        }
        [lo, 0]
    }
}

impl StemCache {
    /// `word`'s key and set.
    #[inline]
    fn key_of(word: &str) -> ([u64; 2], usize) {
        debug_assert!(!word.is_empty() && word.len() <= STEM_KEY_BYTES && word.is_ascii());
        let [k0, k1] = pack16(word.as_bytes());
        let h = (k0.rotate_left(5) ^ k1).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        ([k0, k1], (h >> (64 - STEM_CACHE_BITS)) as usize)
    }

    /// The sets, allocated on first use.
    fn sets(&mut self) -> &mut [[[u64; 4]; 2]] {
        if self.sets.is_empty() {
            // Written, not `vec![..; n]`: zeroed memory from the allocator is the shared zero
            // page until written, so each page's first store here would fault a second time to
            // copy it and flush its mapping on every core.
            // `black_box` keeps the compiler from turning the writes back into a zeroed
            // allocation (best effort: only a measure of the faults shows it held).
            let mut sets = Vec::with_capacity(1 << STEM_CACHE_BITS);
            sets.resize_with(1 << STEM_CACHE_BITS, || std::hint::black_box([[0; 4]; 2]));
            self.sets = sets;
        }
        &mut self.sets
    }

    /// Appends `word`'s stem to `out` if the cache holds it.
    fn get_into(&mut self, word: &str, out: &mut String) -> bool {
        let ([k0, k1], idx) = Self::key_of(word);
        for slot in self.sets()[idx].iter() {
            if slot[0] == k0 && slot[1] == k1 {
                let p = (slot[2] & 0xFF) as usize;
                let tail_len = ((slot[2] >> 8) & 0xFF) as usize;
                out.push_str(&word[..p]);
                for i in 0..tail_len {
                    out.push(char::from((slot[3] >> (8 * i)) as u8));
                }
                return true;
            }
        }
        false
    }

    /// Remembers `stem` as `word`'s (if it fits a slot: a prefix of the word and up to 8 ASCII
    /// bytes), evicting the older slot of its set.
    fn put(&mut self, word: &str, stem: &str) {
        let ([k0, k1], idx) = Self::key_of(word);
        let p = stem
            .bytes()
            .zip(word.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let tail = &stem.as_bytes()[p..];
        if !stem.is_empty() && tail.len() <= 8 && tail.is_ascii() {
            let mut packed = 0u64;
            for (i, &b) in tail.iter().enumerate() {
                packed |= u64::from(b) << (8 * i);
            }
            let set = &mut self.sets()[idx];
            set[1] = set[0];
            set[0] = [k0, k1, p as u64 | (tail.len() as u64) << 8, packed];
        }
    }

    /// The stem of `word`, appended to `out` (from the cache, else computed and remembered).
    fn get_or_stem_into(
        &mut self,
        word: &str,
        stem: impl FnOnce(&str) -> String,
        out: &mut String,
    ) {
        if self.get_into(word, out) {
            return;
        }
        let t = stem(word);
        self.put(word, &t);
        out.push_str(&t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack16_is_exact() {
        let word = b"abcdefghijklmnop";
        for n in 1..=16 {
            let mut want = [0u64; 2];
            for (i, &b) in word[..n].iter().enumerate() {
                want[i / 8] |= u64::from(b) << (8 * (i % 8));
            }
            assert_eq!(pack16(&word[..n]), want, "n = {n}");
        }
    }

    #[test]
    fn stem_cache_matches_stemmer() {
        let t = Tokenizer::new();
        let mut words: Vec<String> =
            "deploying sizing happy relational generously ponies caresses \
            agreed hopping dying news skies a zz abcdefghijklmnop abcdefghijklmnopq \
            internationalization"
                .split_whitespace()
                .map(str::to_owned)
                .collect();
        // Enough distinct words to force evictions in every set.
        let stems = [
            "connect", "pool", "size", "deploy", "happ", "rel", "gener", "pon", "x",
        ];
        let suffixes = [
            "", "s", "ed", "ing", "ion", "ional", "ly", "ies", "iness", "ization",
        ];
        for i in 0..40_000usize {
            let mut w = String::from(stems[i % stems.len()]);
            for d in i.to_string().bytes() {
                w.push(char::from(b'a' + (d - b'0')));
            }
            w.push_str(suffixes[(i / 7) % suffixes.len()]);
            words.push(w);
        }
        for _ in 0..2 {
            for w in &words {
                assert_eq!(t.normalise(w, true), t.stem(w), "{w}");
            }
        }
        assert_eq!(t.normalise("sizing", true), "size");
        assert_eq!(t.normalise("happy", true), "happi");
    }

    #[test]
    fn a_word_stemmed_on_one_thread_is_shared_with_the_others() {
        let t = Tokenizer::new();
        // A cache of the test's own (the process's is shared with the tests running beside).
        let shared = std::sync::Mutex::new(StemCache { sets: Vec::new() });
        let words = ["queuing", "deployments", "happily", "zz"];
        std::thread::scope(|s| {
            s.spawn(|| {
                for w in words {
                    assert_eq!(t.stem_via(&shared, w), t.stem(w), "{w}");
                }
            });
        });
        for w in words {
            let mut out = String::new();
            let held = shared.lock().expect("lock").get_into(w, &mut out);
            assert!(held, "{w}: the cache holds what another thread stemmed");
            assert_eq!(out, t.stem(w), "{w}");
            // And a thread that asks again gets it from there, the same.
            assert_eq!(t.stem_via(&shared, w), t.stem(w), "{w}");
        }
    }

    /// A process forked while a thread of its parent held the shared cache's lock (a Python
    /// `os.fork` beside a recalling thread) inherits the lock held, and no thread of its own
    /// releases it: stemming waited forever. The word is stemmed without the cache.
    #[test]
    fn a_stem_cache_lock_held_elsewhere_is_not_waited_for() {
        let t = Tokenizer::new();
        let shared = std::sync::Mutex::new(StemCache { sets: Vec::new() });
        let held = shared.lock().expect("lock");
        for w in ["queuing", "deployments"] {
            assert_eq!(t.stem_via(&shared, w), t.stem(w), "{w}");
        }
        drop(held);
    }
}
