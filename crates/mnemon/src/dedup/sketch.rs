//! One note's MinHash sketch: [`SKETCH_SLOTS`] minimums over its word pairs, each under its own
//! hash permutation, of which the low 16 bits are kept (b-bit MinHash: two different minimums
//! agree by accident once in 65 536, so the share of agreeing slots estimates the Jaccard
//! similarity of the two pair sets without bias worth correcting).
//!
//! Every step is specified in `format-spec/store.md` (stored sketches must compare equal across
//! builds): words are maximal runs of alphanumeric characters other than CJK ones, and each CJK
//! character alone, lowercased character by character (`char::to_lowercase`, no context rules),
//! each hashed with xxh3-64; a pair `(p, q)` of word hashes is the high 32 bits of
//! `(rotl(p, 29) ^ q) * 0x9E3779B97F4A7C15` (wrapping, 64 bits; a one-word note's only "pair" is
//! `(p, 0)`); slot `i` maps a pair `x` to `a_i * x + b_i` (wrapping, 32 bits) with odd `a_i` and
//! `b_i` drawn from splitmix64 seeded with [`PERMUTATION_SEED`]. The slots work on
//! 32-bit lanes so that one pair updates all of them in a few vector instructions.

use crate::notes::ParsedNote;
use crate::notes::script::is_cjk;
use std::sync::OnceLock;

/// Minimums per sketch. The estimate of a Jaccard similarity J from them has a standard error of
/// sqrt(J(1-J)/128), under 0.045.
pub const SKETCH_SLOTS: usize = 128;
/// Bytes of an encoded sketch: the pair count (u32 LE), then the slots (u16 LE each).
pub const SKETCH_BYTES: usize = 4 + 2 * SKETCH_SLOTS;
/// Seed of the splitmix64 sequence that draws the slots' permutations ("mnemon" in ASCII).
pub const PERMUTATION_SEED: u64 = 0x6D6E_656D_6F6E;
/// Words read per note: a note longer than this is sketched from its beginning (notes are capped
/// at `MAX_NOTE_BYTES`; this bounds the work of a pathological one made of one-letter words).
pub const MAX_SKETCH_WORDS: usize = 64 * 1024;

/// A note's sketch: how many distinct word pairs it has, and the low bits of their minimum hash
/// under each permutation (`u16::MAX` in every slot when it has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sketch {
    /// Distinct word pairs (a note of one word has one "pair": the word).
    pub pairs: u32,
    /// Low 16 bits of each slot's minimum.
    pub slots: [u16; SKETCH_SLOTS],
}

/// Stored sketch bytes that cannot be one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a sketch is {SKETCH_BYTES} bytes, this one is {len}")]
pub struct SketchError {
    /// The length found.
    pub len: usize,
}

/// The slots' permutations: odd multipliers and offsets.
struct Permutations {
    a: [u32; SKETCH_SLOTS],
    b: [u32; SKETCH_SLOTS],
}

/// Build the permutations on this thread, now (see [`crate::build_process_tables`]).
pub(crate) fn build_permutations() {
    permutations();
}

fn permutations() -> &'static Permutations {
    static PERMS: OnceLock<Permutations> = OnceLock::new();
    PERMS.get_or_init(|| {
        let mut state = PERMUTATION_SEED;
        let mut perms = Permutations {
            a: [0; SKETCH_SLOTS],
            b: [0; SKETCH_SLOTS],
        };
        for i in 0..SKETCH_SLOTS {
            perms.a[i] = splitmix64(&mut state) as u32 | 1;
            perms.b[i] = splitmix64(&mut state) as u32 | 1;
        }
        perms
    })
}

/// The next value of a splitmix64 sequence.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A word pair's value: the word hashes combined by one multiply, its high half kept (the
/// best-mixed bits of a product).
fn pair_value(first: u64, second: u64) -> u32 {
    (((first.rotate_left(PAIR_ROTATION) ^ second).wrapping_mul(PAIR_MULTIPLIER)) >> 32) as u32
}

/// Rotation of the first word's hash in [`pair_value`] (so that `a b` and `b a` differ).
const PAIR_ROTATION: u32 = 29;
/// Odd multiplier of [`pair_value`] (2^64 over the golden ratio).
const PAIR_MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// Every slot's minimum of `a * x + b` over `xs`: written over whole arrays so that the compiler
/// turns each pair's update into vector instructions (and into wider ones where [`min_hashes`]
/// finds AVX2).
#[inline(always)]
fn min_hashes_portable(xs: &[u32], perms: &Permutations) -> [u32; SKETCH_SLOTS] {
    let mut mins = [u32::MAX; SKETCH_SLOTS];
    for &x in xs {
        for ((m, a), b) in mins.iter_mut().zip(&perms.a).zip(&perms.b) {
            *m = (*m).min(a.wrapping_mul(x).wrapping_add(*b));
        }
    }
    mins
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn min_hashes_avx2(xs: &[u32], perms: &Permutations) -> [u32; SKETCH_SLOTS] {
    min_hashes_portable(xs, perms)
}

/// [`min_hashes_portable`], with AVX2 when the processor has it (the same integer arithmetic,
/// so the same result on every machine).
fn min_hashes(xs: &[u32]) -> [u32; SKETCH_SLOTS] {
    let perms = permutations();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor supports AVX2 (checked just above).
        return unsafe { min_hashes_avx2(xs, perms) };
    }
    min_hashes_portable(xs, perms)
}

impl Sketch {
    /// The sketch of a note's text: its name, description and body, in that order, read as one
    /// run of words (frontmatter lists and dates are not content).
    pub fn of_note(name: Option<&str>, description: Option<&str>, body: &str) -> Sketch {
        let mut words = Vec::new();
        let mut lower = String::new();
        for part in [name.unwrap_or(""), description.unwrap_or(""), body] {
            push_word_hashes(part, &mut lower, &mut words);
        }
        Sketch::of_word_hashes(&words)
    }

    /// [`Sketch::of_note`] of a parsed note.
    pub fn of_parsed(note: &ParsedNote) -> Sketch {
        Sketch::of_note(
            note.meta.name.as_deref(),
            note.meta.description.as_deref(),
            &note.body,
        )
    }

    /// The sketch of a sequence of word hashes (xxh3-64 of each lowercased word).
    fn of_word_hashes(words: &[u64]) -> Sketch {
        let mut pairs: Vec<u32> = match words {
            [only] => vec![pair_value(*only, 0)],
            _ => words.windows(2).map(|p| pair_value(p[0], p[1])).collect(),
        };
        pairs.sort_unstable();
        pairs.dedup();
        let mut slots = [u16::MAX; SKETCH_SLOTS];
        if !pairs.is_empty() {
            for (s, m) in slots.iter_mut().zip(min_hashes(&pairs)) {
                *s = m as u16;
            }
        }
        Sketch {
            pairs: u32::try_from(pairs.len()).unwrap_or(u32::MAX),
            slots,
        }
    }

    /// The stored bytes (`format-spec/store.md`).
    pub fn to_bytes(&self) -> [u8; SKETCH_BYTES] {
        let mut out = [0u8; SKETCH_BYTES];
        out[..4].copy_from_slice(&self.pairs.to_le_bytes());
        for (chunk, s) in out[4..].chunks_exact_mut(2).zip(self.slots) {
            chunk.copy_from_slice(&s.to_le_bytes());
        }
        out
    }

    /// Read stored bytes back; only the length can be wrong (every value is a valid sketch).
    pub fn from_bytes(bytes: &[u8]) -> Result<Sketch, SketchError> {
        if bytes.len() != SKETCH_BYTES {
            return Err(SketchError { len: bytes.len() });
        }
        let mut pairs = [0u8; 4];
        pairs.copy_from_slice(&bytes[..4]);
        let mut slots = [0u16; SKETCH_SLOTS];
        for (s, chunk) in slots.iter_mut().zip(bytes[4..].chunks_exact(2)) {
            *s = u16::from_le_bytes([chunk[0], chunk[1]]);
        }
        Ok(Sketch {
            pairs: u32::from_le_bytes(pairs),
            slots,
        })
    }

    /// The share of slots on which two sketches agree: an estimate of the Jaccard similarity of
    /// their pair sets (0 when either note has no pairs).
    pub fn jaccard(&self, other: &Sketch) -> f32 {
        if self.pairs == 0 || other.pairs == 0 {
            return 0.0;
        }
        let same = self
            .slots
            .iter()
            .zip(other.slots.iter())
            .filter(|(a, b)| a == b)
            .count();
        same as f32 / SKETCH_SLOTS as f32
    }
}

/// Per byte: the lowercased ASCII letter or digit, [`SEPARATOR`] for other ASCII, [`NON_ASCII`]
/// for the bytes of longer UTF-8 characters.
const BYTE_CLASS: [u8; 256] = {
    let mut t = [SEPARATOR; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            t[b] = c.to_ascii_lowercase();
        } else if c >= 0x80 {
            t[b] = NON_ASCII;
        }
        b += 1;
    }
    t
};
const SEPARATOR: u8 = 0;
const NON_ASCII: u8 = 0x80;

/// Append the hash of each lowercased word of `text` (maximal runs of alphanumeric characters
/// other than CJK ones, and each CJK character alone), up to [`MAX_SKETCH_WORDS`] in all. ASCII is read a byte at a time through [`BYTE_CLASS`]; a
/// word with other characters is lowercased by `char::to_lowercase`.
fn push_word_hashes(text: &str, lower: &mut String, out: &mut Vec<u64>) {
    let bytes = text.as_bytes();
    let mut word = [0u8; 64];
    let mut i = 0;
    while i < bytes.len() && out.len() < MAX_SKETCH_WORDS {
        let start = i;
        let mut len = 0;
        let mut ascii = true;
        while i < bytes.len() {
            let class = BYTE_CLASS[usize::from(bytes[i])];
            if class == SEPARATOR {
                break;
            }
            if class != NON_ASCII {
                if len < word.len() {
                    word[len] = class;
                }
                len += 1;
                i += 1;
                continue;
            }
            // A multi-byte character: a CJK one is a word of its own (those scripts put no
            // spaces between words), another alphanumeric one continues the word, anything
            // else ends it.
            match text[i..].chars().next() {
                Some(c) if is_cjk(c) => {
                    if i == start {
                        ascii = false;
                        i += c.len_utf8();
                    }
                    break;
                }
                Some(c) if c.is_alphanumeric() => {
                    ascii = false;
                    i += c.len_utf8();
                }
                _ => break,
            }
        }
        if i == start {
            // Not part of a word: skip one character.
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let h = if ascii && len <= word.len() {
            xxhash_rust::xxh3::xxh3_64(&word[..len])
        } else {
            lower.clear();
            lower.extend(text[start..i].chars().flat_map(char::to_lowercase));
            xxhash_rust::xxh3::xxh3_64(lower.as_bytes())
        };
        out.push(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact Jaccard similarity of two texts' pair sets, the value the sketch estimates.
    fn exact(a: &str, b: &str) -> f32 {
        let set = |s: &str| -> std::collections::HashSet<String> {
            let words: Vec<String> = s
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            words.windows(2).map(|p| p.join(" ")).collect()
        };
        let (x, y) = (set(a), set(b));
        x.intersection(&y).count() as f32 / x.union(&y).count() as f32
    }

    #[test]
    fn identical_texts_agree_on_every_slot_and_case_and_punctuation_do_not_matter() {
        let a = Sketch::of_note(None, None, "The pool times out at month end.");
        let b = Sketch::of_note(None, None, "the POOL -- times out, at month end");
        assert_eq!(a, b);
        assert_eq!(a.jaccard(&b), 1.0);
        assert_eq!(a.pairs, 6);
    }

    #[test]
    fn estimate_is_within_three_standard_errors_of_the_exact_jaccard() {
        let base: Vec<String> = (0..400).map(|i| format!("w{}", i * 7 % 389)).collect();
        let a = base.join(" ");
        let b = base[100..].join(" ") + " extra words here";
        let exact = exact(&a, &b);
        let est = Sketch::of_note(None, None, &a).jaccard(&Sketch::of_note(None, None, &b));
        let se = (exact * (1.0 - exact) / SKETCH_SLOTS as f32).sqrt();
        assert!(
            (est - exact).abs() <= 3.0 * se + 0.01,
            "est {est} exact {exact}"
        );
        assert!(exact > 0.6 && exact < 0.9, "{exact}");
    }

    #[test]
    fn bytes_round_trip_and_a_wrong_length_is_refused() {
        let s = Sketch::of_note(Some("Name"), Some("desc"), "some body text here");
        assert_eq!(Sketch::from_bytes(&s.to_bytes()), Ok(s));
        assert_eq!(Sketch::from_bytes(&[0; 7]), Err(SketchError { len: 7 }));
    }

    #[test]
    fn an_empty_note_has_no_pairs_and_resembles_nothing() {
        let e = Sketch::of_note(None, None, " -- ");
        assert_eq!(e.pairs, 0);
        assert_eq!(e.jaccard(&e), 0.0);
        let one = Sketch::of_note(None, None, "word");
        assert_eq!(one.pairs, 1);
    }

    #[test]
    fn permutations_and_pair_hashes_are_pinned() {
        // Stored sketches are compared across builds: none of these may ever change.
        let p = permutations();
        let mut state = PERMUTATION_SEED;
        let first = splitmix64(&mut state);
        assert_eq!(p.a[0], first as u32 | 1);
        assert_eq!(p.b[0], splitmix64(&mut state) as u32 | 1);
        let s = Sketch::of_note(None, None, "Alpha beta");
        assert_eq!(s.pairs, 1);
        let x = pair_value(
            xxhash_rust::xxh3::xxh3_64(b"alpha"),
            xxhash_rust::xxh3::xxh3_64(b"beta"),
        );
        assert_eq!(
            x,
            ((xxhash_rust::xxh3::xxh3_64(b"alpha").rotate_left(29)
                ^ xxhash_rust::xxh3::xxh3_64(b"beta"))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                >> 32) as u32
        );
        assert_eq!(
            s.slots[5],
            p.a[5].wrapping_mul(x).wrapping_add(p.b[5]) as u16
        );
    }

    #[test]
    fn the_vector_path_computes_what_the_portable_one_does() {
        let xs: Vec<u32> = (0..1000u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        assert_eq!(min_hashes(&xs), min_hashes_portable(&xs, permutations()));
    }

    /// The word hashes as the format specifies them, the slow way.
    fn reference_word_hashes(text: &str) -> Vec<u64> {
        let mut words: Vec<String> = vec![String::new()];
        for c in text.chars() {
            if is_cjk(c) {
                words.push(c.to_string());
                words.push(String::new());
            } else if c.is_alphanumeric() {
                words.last_mut().unwrap().extend(c.to_lowercase());
            } else {
                words.push(String::new());
            }
        }
        words
            .iter()
            .filter(|w| !w.is_empty())
            .map(|w| xxhash_rust::xxh3::xxh3_64(w.as_bytes()))
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn word_hashes_match_the_reference(text in "([a-zA-Z0-9 _.,-]|[ÄéßİΣ中池ｶ한]|\\PC){0,80}") {
            let mut out = Vec::new();
            push_word_hashes(&text, &mut String::new(), &mut out);
            proptest::prop_assert_eq!(out, reference_word_hashes(&text));
        }
    }

    #[test]
    fn long_and_mixed_words_hash_like_the_reference() {
        let text = format!("{} Straße-ÉCOLE x{}y ΟΔΟΣ", "A".repeat(100), "é".repeat(40));
        let mut out = Vec::new();
        push_word_hashes(&text, &mut String::new(), &mut out);
        assert_eq!(out, reference_word_hashes(&text));
        assert_eq!(out.len(), 5);
    }

    #[test]
    fn each_cjk_character_is_a_word() {
        let mut out = Vec::new();
        push_word_hashes("连接池abc月末", &mut String::new(), &mut out);
        let h = |w: &str| xxhash_rust::xxh3::xxh3_64(w.as_bytes());
        assert_eq!(
            out,
            vec![h("连"), h("接"), h("池"), h("abc"), h("月"), h("末")]
        );
    }

    #[test]
    fn non_ascii_words_are_lowercased_too() {
        let a = Sketch::of_note(None, None, "Größe der Verbindungen ÄNDERN");
        let b = Sketch::of_note(None, None, "größe der verbindungen ändern");
        assert_eq!(a, b);
    }
}
