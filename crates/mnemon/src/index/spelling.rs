//! British spellings folded to American ones before stemming: `normalise`, `normalisation`,
//! `colour`, `centre`, `licence` become `normalize`, `normalization`, `color`, `center`,
//! `license`, so that a question in one spelling meets notes written in the other. The stemmer
//! alone keeps them apart (`normalis` against `normal`), and they are too far apart for the typo
//! search.
//!
//! The fold runs on both sides (notes and questions) on a folded word of ASCII letters, before
//! the stemmer, so a rule only has to be consistent, not right: `promise` becoming `promize`
//! everywhere changes nothing a question can see. What it must not do is merge two different
//! words; hence the `-ise` rule keeps words with fewer than three letters before `is` (`rise`,
//! `wise`, `raise`, `noise`), and the other families (`-our`, `-re`, `-ence`, `-ogue`, single
//! words) come from a list of roots, each with the endings its forms take.

use std::borrow::Cow;

/// Endings of the `-ise` family (British, American), longest first: a word that ends in one of
/// them, with at least [`MIN_ISE_STEM`] letters before it, takes the American ending.
const ISE_ENDINGS: [(&str, &str); 16] = [
    ("isational", "izational"),
    ("isations", "izations"),
    ("isation", "ization"),
    ("isable", "izable"),
    ("ising", "izing"),
    ("isers", "izers"),
    ("ysing", "yzing"),
    ("ysers", "yzers"),
    ("ised", "ized"),
    ("ises", "izes"),
    ("iser", "izer"),
    ("ysed", "yzed"),
    ("yses", "yzes"),
    ("yser", "yzer"),
    ("ise", "ize"),
    ("yse", "yze"),
];

/// Letters a word needs before its `-ise` ending for the ending to be folded: `rise`, `wise`,
/// `raise`, `noise` are no `-ize` verbs.
const MIN_ISE_STEM: usize = 3;

/// British roots with their American spelling, for the families no suffix rule can tell apart
/// (`-our` also ends `hour` and `four`; `-re` ends `more` and `store`).
const ROOTS: [(&str, &str); 40] = [
    ("acknowledgement", "acknowledgment"),
    ("aluminium", "aluminum"),
    ("analogue", "analog"),
    ("armour", "armor"),
    ("artefact", "artifact"),
    ("behaviour", "behavior"),
    ("calibre", "caliber"),
    ("catalogue", "catalog"),
    ("centre", "center"),
    ("clamour", "clamor"),
    ("colour", "color"),
    ("defence", "defense"),
    ("dialogue", "dialog"),
    ("endeavour", "endeavor"),
    ("favour", "favor"),
    ("fervour", "fervor"),
    ("fibre", "fiber"),
    ("flavour", "flavor"),
    ("grey", "gray"),
    ("harbour", "harbor"),
    ("honour", "honor"),
    ("humour", "humor"),
    ("judgement", "judgment"),
    ("labour", "labor"),
    ("licence", "license"),
    ("litre", "liter"),
    ("manoeuvre", "maneuver"),
    ("metre", "meter"),
    ("neighbour", "neighbor"),
    ("odour", "odor"),
    ("offence", "offense"),
    ("practise", "practice"),
    ("pretence", "pretense"),
    ("programme", "program"),
    ("rigour", "rigor"),
    ("rumour", "rumor"),
    ("savour", "savor"),
    ("sombre", "somber"),
    ("theatre", "theater"),
    ("vapour", "vapor"),
];

/// What may follow a root in a word it spells (`colours`, `coloured`, `colourful`,
/// `behavioural`, `favourite`, `neighbourhood`, `kilometres` ...). Anything else is another word
/// that merely starts with the same letters (`programmer`, `greyhound` stay as they are).
const ROOT_ENDINGS: [&str; 24] = [
    "", "s", "d", "ed", "ing", "al", "ally", "ful", "fully", "less", "ite", "ites", "able", "ably",
    "er", "ers", "ist", "ists", "ism", "hood", "hoods", "ly", "ry", "y",
];

/// Roots of [`ROOTS`] also folded inside a longer word (`kilometre`, `millilitre`,
/// `epicentre`).
const INNER_ROOTS: [(&str, &str); 3] =
    [("centre", "center"), ("litre", "liter"), ("metre", "meter")];

/// The American spelling of a folded word of ASCII letters (`word` itself when it has none;
/// any other text comes back as it is, since every rule is in lower-case ASCII). Runs on every
/// word the stemmer has not seen: most words leave after a binary search of the roots and a look
/// at their last nine letters.
pub fn american(word: &str) -> Cow<'_, str> {
    // A root that starts the word sorts at or before it, and no other root sorts between them
    // (no root starts another).
    let next = ROOTS.partition_point(|(british, _)| *british <= word);
    if let Some((british, us)) = next.checked_sub(1).map(|i| ROOTS[i])
        && let Some(rest) = word.strip_prefix(british)
        && ROOT_ENDINGS.contains(&rest)
    {
        return Cow::Owned(format!("{us}{rest}"));
    }
    let bytes = word.as_bytes();
    if bytes.windows(3).any(|w| w == b"tre") {
        for (british, us) in INNER_ROOTS {
            if let Some(at) = word.find(british)
                && let rest = &word[at + british.len()..]
                && ROOT_ENDINGS.contains(&rest)
            {
                return Cow::Owned(format!("{}{us}{rest}", &word[..at]));
            }
        }
    }
    // Every `-ise` ending starts with `is` or `ys` within the word's last nine letters.
    let tail = bytes.len().saturating_sub(9).max(MIN_ISE_STEM);
    let has_ise = bytes
        .get(tail..)
        .is_some_and(|t| t.windows(2).any(|w| matches!(w, [b'i' | b'y', b's'])));
    if has_ise {
        for (british, us) in ISE_ENDINGS {
            if let Some(stem) = word.strip_suffix(british)
                && stem.len() >= MIN_ISE_STEM
            {
                return Cow::Owned(format!("{stem}{us}"));
            }
        }
    }
    Cow::Borrowed(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn british_forms_take_the_american_spelling() {
        for (british, us) in [
            ("normalise", "normalize"),
            ("normalised", "normalized"),
            ("normalising", "normalizing"),
            ("normalisation", "normalization"),
            ("organisational", "organizational"),
            ("prioritises", "prioritizes"),
            ("customisable", "customizable"),
            ("analyse", "analyze"),
            ("analysed", "analyzed"),
            ("colour", "color"),
            ("colourful", "colorful"),
            ("behavioural", "behavioral"),
            ("favourite", "favorite"),
            ("neighbourhood", "neighborhood"),
            ("centre", "center"),
            ("centres", "centers"),
            ("kilometres", "kilometers"),
            ("licence", "license"),
            ("catalogue", "catalog"),
            ("grey", "gray"),
            ("programme", "program"),
            ("practise", "practice"),
        ] {
            assert_eq!(american(british), us, "{british}");
        }
    }

    #[test]
    fn american_words_and_look_alikes_stay_as_they_are() {
        for word in [
            "normalize",
            "color",
            "rise",
            "wise",
            "raise",
            "noise",
            "poise",
            "hour",
            "four",
            "tour",
            "more",
            "store",
            "genre",
            "programmer",
            "greyhound",
            "analysis",
            "base",
            "license",
            "centered",
            "is",
            "crisis",
        ] {
            assert_eq!(american(word), word, "{word}");
        }
    }

    #[test]
    fn roots_are_sorted_and_none_starts_another() {
        for pair in ROOTS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{pair:?}");
            assert!(!pair[1].0.starts_with(pair[0].0), "{pair:?}");
        }
        for inner in INNER_ROOTS {
            assert!(ROOTS.contains(&inner), "{inner:?}");
        }
    }

    #[test]
    fn other_text_comes_back_as_it_is() {
        for word in ["Colour", "NORMALISE", "café", "normalisé", "", "é"] {
            assert_eq!(american(word), word, "{word}");
        }
    }

    #[test]
    fn the_fold_is_idempotent() {
        for word in [
            "normalisation",
            "colours",
            "kilometre",
            "analyse",
            "promise",
            "centre",
        ] {
            let once = american(word).into_owned();
            assert_eq!(american(&once), once, "{word}");
        }
    }
}
