//! Which words a question leaves out: a compact English stop-word list, matched on the folded,
//! unstemmed form. Indexing keeps them; a question of stop words only is searched by them.

/// Query stop words (folded, apostrophes removed), sorted for binary search.
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "arent", "as", "at", "be", "because", "been", "before", "being", "below", "between",
    "both", "but", "by", "can", "could", "did", "didnt", "do", "does", "doesnt", "doing", "dont",
    "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
    "here", "hers", "herself", "him", "himself", "his", "how", "hows", "i", "if", "im", "in",
    "into", "is", "isnt", "it", "its", "itself", "ive", "just", "may", "me", "might", "more",
    "most", "must", "my", "myself", "no", "nor", "not", "now", "of", "on", "once", "only", "or",
    "other", "our", "ours", "ourselves", "own", "same", "she", "should", "so", "some", "such",
    "than", "that", "thats", "the", "their", "theirs", "them", "themselves", "then", "there",
    "theres", "these", "they", "this", "those", "through", "to", "too", "until", "very", "was",
    "wasnt", "we", "were", "what", "whats", "when", "where", "which", "while", "who", "whom",
    "whose", "why", "will", "with", "would", "you", "your", "youre", "yours", "yourself",
];

/// Longest stop word, in bytes.
const MAX_STOP_WORD_BYTES: usize = 10;

/// A word of at most 15 bytes as one number: its bytes big-endian, then its length. Numbers
/// compare as the words do (byte by byte, a prefix first), so [`STOP_WORDS`]' order is theirs,
/// and a search compares integers instead of calling `memcmp` on each probe.
const fn key(word: &[u8]) -> u128 {
    let mut k = 0u128;
    let mut i = 0;
    while i < 15 {
        let b = if i < word.len() { word[i] } else { 0 };
        k = k << 8 | b as u128;
        i += 1;
    }
    k << 8 | word.len() as u128
}

/// [`STOP_WORDS`] as [`key`]s, in the same (ascending) order.
const STOP_KEYS: [u128; STOP_WORDS.len()] = {
    let mut keys = [0u128; STOP_WORDS.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = key(STOP_WORDS[i].as_bytes());
        i += 1;
    }
    keys
};

/// Whether a folded word is a stop word (see [`STOP_WORDS`]).
pub(crate) fn is_stop_word(surface: &str) -> bool {
    surface.len() <= MAX_STOP_WORD_BYTES
        && STOP_KEYS.binary_search(&key(surface.as_bytes())).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_sorted_and_folded() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(
            STOP_WORDS.iter().all(
                |w| w.len() <= MAX_STOP_WORD_BYTES && w.bytes().all(|b| b.is_ascii_lowercase())
            )
        );
        assert!(STOP_WORDS.len() >= 120);
        assert!(STOP_KEYS.windows(2).all(|k| k[0] < k[1]));
    }

    #[test]
    fn the_keyed_search_finds_what_the_list_holds() {
        for w in STOP_WORDS {
            assert!(is_stop_word(w), "{w}");
        }
        // Prefixes and extensions of stop words (a NUL byte included: the length tells them
        // apart), and words past the longest.
        for w in [
            "",
            "ab",
            "abo",
            "abouts",
            "the\0",
            "th",
            "them\0",
            "yourselves",
            "yourselfs",
            "x",
        ] {
            assert!(!is_stop_word(w), "{w:?}");
        }
        assert!(!is_stop_word("themselvesx"));
        assert!(!is_stop_word("network"));
    }
}
