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

/// Whether a folded word is a stop word (see [`STOP_WORDS`]).
pub(crate) fn is_stop_word(surface: &str) -> bool {
    surface.len() <= 10 && STOP_WORDS.binary_search(&surface).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_sorted_and_folded() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(
            STOP_WORDS
                .iter()
                .all(|w| w.len() <= 10 && w.bytes().all(|b| b.is_ascii_lowercase()))
        );
        assert!(STOP_WORDS.len() >= 120);
    }
}
