//! One word as a noun and as a verb: `failure` and `failed`, `recovery` and `recover`,
//! `decision` and `decide`.
//!
//! The English stemmer takes off inflections and the derivational endings it knows
//! (`-ation`, `-ment`, `-ness`), but leaves these pairs apart: `failur` against `fail`,
//! `recoveri` against `recov`, `decis` against `decid`. A question asking about a "payment
//! failure" met nothing of a note saying the payment job "failed", and a typo search cannot
//! bridge them (they are two or three letters apart).
//!
//! A question's word also matches the memory's terms that are its stem with one ending of
//! [`ENDINGS`] swapped for its partner, as the word itself (weight 1; [`add_other_forms`]),
//! counted only for a note that holds no other form of the question's word (as a word written
//! closed up is, `index::compound`), and never when the question writes that form itself (one
//! word of a note never counts as two of the question). The endings are the stem-level traces
//! of English's regular noun and verb pairs (`-ure`, `-ery`, `-sion` against `-de`, `-ssion`
//! against `-t`, `-nsion` against `-nd`, `-mption` against `-me`), each kept only where the
//! stem before it is long enough to be a word of its own, so that short words (`sec`, `bus`,
//! `boss`) take no part. Pairs whose two words often mean different things in a project's
//! notes are left out: `product` and `produce`, `subscription` and `subscribe`, `storage` and
//! `store`, `resolution` and `resolve`.

use super::lexical::{LexicalIndex, TermMatch};

/// Stem endings that mark the same word in two parts of speech, `(one, other, root)`: a stem
/// ending in `one` after at least `root` letters is also the word whose stem ends in `other`
/// instead, and the other way around.
pub const ENDINGS: [(&str, &str, usize); 9] = [
    // failure / fail, departure / depart, erasure / erase, disclosure / disclose
    ("ur", "", 4),
    // closure / close
    ("ur", "e", 3),
    // recovery / recover, delivery / deliver, discovery / discover
    ("eri", "", 4),
    // decision / decide, division / divide, provision / provide, collision / collide
    ("is", "id", 3),
    // inclusion / include, exclusion / exclude, conclusion / conclude
    ("us", "ud", 3),
    // invasion / invade, evasion / evade, persuasion / persuade, explosion / explode
    ("as", "ad", 3),
    // permission / permit, submission / submit, admission / admit, transmission / transmit
    ("iss", "it", 3),
    // extension / extend, suspension / suspend, expansion / expand, response / respond
    ("ns", "nd", 3),
    // consumption / consume, assumption / assume, resumption / resume
    ("umpt", "um", 3),
];

/// The stems `stem` stands for in another part of speech (see [`ENDINGS`]), unchecked
/// against any dictionary; only for stems of lowercase ASCII letters.
pub fn other_forms(stem: &str) -> impl Iterator<Item = String> + '_ {
    let letters = !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_lowercase());
    ENDINGS
        .iter()
        .filter(move |_| letters)
        .flat_map(|&(one, other, root)| [(one, other, root), (other, one, root)])
        .filter_map(move |(from, to, root)| {
            let base = stem.strip_suffix(from)?;
            (base.len() >= root).then(|| format!("{base}{to}"))
        })
        .filter(move |form| form != stem)
}

/// Add to each of `matches` (the question's words, as [`LexicalIndex::expand`] matched them)
/// the other forms of its word the memory holds (see the module doc), unless the question
/// writes that form itself.
pub fn add_other_forms(lex: &LexicalIndex, matches: &mut [TermMatch]) {
    for i in 0..matches.len() {
        let forms: Vec<(String, u64)> = other_forms(&matches[i].term)
            .filter(|form| !matches.iter().any(|o| o.term == *form))
            .filter_map(|form| {
                let df = lex.df(form.as_bytes());
                (df > 0).then_some((form, df))
            })
            .collect();
        for (form, df) in forms {
            matches[i].add_same_word(form, df);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::tokenize::Tokenizer;

    fn stems_of(words: &[&str]) -> Vec<String> {
        let tok = Tokenizer::new();
        words.iter().map(|w| tok.stem_word(w)).collect()
    }

    /// Each pair the endings are for: the stemmer keeps them apart, the endings join them.
    #[test]
    fn a_noun_and_its_verb_are_one_word_the_stemmer_keeps_apart() {
        let pairs = [
            ("failure", "failed"),
            ("recovery", "recovered"),
            ("delivery", "deliver"),
            ("decision", "decide"),
            ("inclusion", "include"),
            ("invasion", "invade"),
            ("permission", "permit"),
            ("extension", "extend"),
            ("consumption", "consume"),
            ("closure", "closed"),
        ];
        for (noun, verb) in pairs {
            let s = stems_of(&[noun, verb]);
            assert_ne!(s[0], s[1], "{noun} and {verb} stem apart");
            assert!(
                other_forms(&s[0]).any(|f| f == s[1]),
                "{noun} ({}) stands for {verb} ({})",
                s[0],
                s[1]
            );
            assert!(
                other_forms(&s[1]).any(|f| f == s[0]),
                "{verb} ({}) stands for {noun} ({})",
                s[1],
                s[0]
            );
        }
    }

    /// Short words and words whose endings only look alike take no part.
    #[test]
    fn short_stems_and_unrelated_words_have_no_other_form() {
        for (a, b) in [
            ("security", "sec"),
            ("bus", "bud"),
            ("boss", "bot"),
            ("about", "above"),
            ("station", "stat"),
            ("currency", "current"),
            ("production", "produce"),
            ("subscription", "subscribe"),
            ("storage", "store"),
        ] {
            let s = stems_of(&[a, b]);
            assert!(
                !other_forms(&s[0]).any(|f| f == s[1]),
                "{a} ({}) is not {b} ({})",
                s[0],
                s[1]
            );
        }
        assert_eq!(other_forms("").count(), 0);
        assert_eq!(other_forms("décision").count(), 0);
    }
}
