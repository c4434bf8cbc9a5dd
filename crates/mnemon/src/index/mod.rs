//! Which notes match these words? The lexical index: a tokenizer, per-field term counts, immutable
//! fst segments, and the set of live segments with their deletions.

pub mod compound;
pub mod fields;
pub mod forms;
pub mod interner;
pub mod joined;
pub mod lexical;
pub mod manifest;
pub mod scoring;
pub mod segment;
pub mod spelling;
pub mod tokenize;

pub use lexical::{LexHit, LexicalIndex, TermMatch};

/// `count` short texts of chars drawn from `alphabet` (at most 39 each), the same for the same
/// `seed`: input for the tests that check a fast scan against its rule read straight.
#[cfg(test)]
pub(crate) fn random_texts(alphabet: &str, seed: u64, count: usize) -> Vec<String> {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let len = (next() % 40) as usize;
            (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect()
        })
        .collect()
}
