//! What a char becomes in a term: fullwidth forms made ASCII, lower case, accents dropped, a
//! compatibility form (`ﬁ`, `²`, `𝐝`) the letters and digits it stands for. Names and recall's
//! evidence fold words with [`fold_word_into`], the same rules, so that they meet the index's
//! terms.

use super::word_rules::{CharClass, classify};
use crate::notes::script::is_cjk;

/// Whether `c` is a combining diacritical mark (U+0300..=U+036F: the accents of Latin, Greek
/// and Cyrillic letters). Other scripts' combining marks (Devanagari vowel signs, Hebrew points)
/// are part of their letters and stay.
pub(crate) fn is_accent(c: char) -> bool {
    ('\u{0300}'..='\u{036F}').contains(&c)
}

/// `c` lower-cased and without accents, char by char into `f`: a letter whose canonical
/// decomposition is a base letter and accents gives the base (`É` -> `e`, `ñ` -> `n`, `ё` -> `е`,
/// `ά` -> `α`), an accent on its own (text written decomposed, as macOS names files) gives
/// nothing, and the letters no decomposition reaches give their usual Latin spelling (`ß` ->
/// `ss`, `æ` -> `ae`, `œ` -> `oe`, `ø` -> `o`, `ł` -> `l`, `đ` and `ð` -> `d`, `þ` -> `th`,
/// `ı` -> `i`, `ħ` -> `h`, `ŧ` -> `t`), the Greek final sigma `ς` its other form `σ` (as Unicode
/// case folding does: `ΛΌΓΟΣ` is `λόγος`). A letter or digit written in a compatibility form
/// ([`compat_letters`]: the ligatures of typeset text `ﬁ ﬂ ﬀ`, `ſ`, the micro sign `µ`,
/// superscripts `²`, mathematical letters `𝐝`, Arabic presentation forms) gives the letters
/// and digits it stands for, folded the same way. So `resume`, `résumé` and
/// `re\u{301}sume\u{301}` are one word, as in SQLite FTS5's default tokenizer, and so are
/// `ﬁrewall` and `firewall`.
pub(super) fn fold_accents(c: char, mut f: impl FnMut(char)) {
    for l in c.to_lowercase() {
        if is_accent(l) {
            continue;
        }
        match l {
            'ß' => "ss".chars().for_each(&mut f),
            'æ' => "ae".chars().for_each(&mut f),
            'œ' => "oe".chars().for_each(&mut f),
            'þ' => "th".chars().for_each(&mut f),
            'ø' => f('o'),
            'ł' => f('l'),
            'đ' | 'ð' => f('d'),
            'ı' => f('i'),
            'ħ' => f('h'),
            'ŧ' => f('t'),
            'ς' => f('σ'),
            _ if l.is_ascii() => f(l),
            _ => {
                // Only a decomposition into a base and accents is folded: any other part
                // (a Hangul jamo, a nukta) means the char is a letter of its own.
                let (mut base, mut n, mut other) = (l, 0, false);
                unicode_normalization::char::decompose_canonical(l, |d| {
                    if n == 0 {
                        base = d;
                    } else if !is_accent(d) {
                        other = true;
                    }
                    n += 1;
                });
                if n > 1 && !other {
                    f(base);
                } else if n > 1 || !compat_letters(l, &mut f) {
                    f(l);
                }
            }
        }
    }
}

/// Whether `u` is in a block holding compatibility forms of letters or digits (Latin-1 and Latin
/// Extended, the Greek letter symbols `ϐ ϑ ϕ ϰ ϱ ϲ ϵ`, phonetic modifiers, super- and
/// subscripts, letterlike symbols and number forms, enclosed alphanumerics, alphabetic and Arabic
/// presentation forms, mathematical alphanumerics, and a few letters elsewhere): the letters of
/// the scripts most text is written in are not looked up. A test checks that every char outside
/// CJK with such a form is in one.
fn in_compat_block(u: u32) -> bool {
    matches!(u,
        0x00A0..=0x02FF
        | 0x03D0..=0x03FF
        | 0x0558
        | 0x0587..=0x058C
        | 0x0675..=0x0678
        | 0x0E33
        | 0x0EB3
        | 0x0EDC..=0x0EDD
        | 0x0F77..=0x0F79
        | 0x10FC
        | 0x1D2C..=0x1DBF
        | 0x1E9A
        | 0x2070..=0x218F
        | 0x2460..=0x24FF
        | 0x2C7C..=0x2C7D
        | 0x2D6F
        | 0x3192..=0x33FF
        | 0xA69C..=0xA69D
        | 0xA770
        | 0xA7F1..=0xA7F9
        | 0xAB5C..=0xAB69
        | 0xFB00..=0xFDFF
        | 0xFE70..=0xFEFF
        | 0xFF00..=0xFFEF
        | 0x10780..=0x107BF
        | 0x1CC00..=0x1CEBF
        | 0x1D400..=0x1D7FF
        | 0x1DF00..=0x1DFFF
        | 0x1E030..=0x1E08F
        | 0x1EE00..=0x1EEFF
        | 0x1F100..=0x1F2FF
        | 0x1FBF0..=0x1FBF9
    )
}

/// The letters and digits `l` (a lower-cased char without a canonical decomposition) stands
/// for, when it is a compatibility form of them (its compatibility decomposition: `ﬁ` -> `fi`,
/// `²` -> `2`, `𝐃` -> `d`, `µ` -> `μ`, `ǅ` -> `dz`), folded into `f`; false (and nothing given)
/// when it is not one, or stands for more than letters and digits (`½` is `1⁄2`, `℃` is `°C`).
fn compat_letters(l: char, f: &mut dyn FnMut(char)) -> bool {
    if !in_compat_block(l as u32) {
        return false;
    }
    let mut parts = [' '; 18];
    let (mut n, mut letters) = (0, true);
    unicode_normalization::char::decompose_compatible(l, |d| {
        if n < parts.len() {
            parts[n] = d;
        }
        n += 1;
        letters &=
            is_accent(d) || classify(d) == CharClass::Drop || (d.is_alphanumeric() && !is_cjk(d));
    });
    if n > parts.len() || !letters || (n == 1 && parts[0] == l) {
        return false;
    }
    for &d in &parts[..n] {
        if classify(d) != CharClass::Drop {
            // A part has no decomposition of its own: this only lower-cases it and drops accents.
            fold_accents(d, &mut *f);
        }
    }
    true
}

/// `word` folded as the tokenizer folds each char (fullwidth forms to ASCII, lower case,
/// accents dropped: `Siobhán` -> `siobhan`, `ＭＡＸ` -> `max`; apostrophes and invisible chars
/// removed: `O'Brien` -> `obrien`), into `out` (cleared first).
pub(crate) fn fold_word_into(word: &str, out: &mut String) {
    out.clear();
    // Most words are ASCII letters: no char to fold but the case.
    if word.bytes().all(|b| b.is_ascii_alphabetic()) {
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    for c in word.chars() {
        let c = fold_fullwidth(c);
        if classify(c) != CharClass::Drop {
            fold_accents(c, |l| out.push(l));
        }
    }
}

/// Fullwidth ASCII variants (U+FF01..U+FF5E) -> ASCII.
#[inline]
pub(super) fn fold_fullwidth(c: char) -> char {
    let u = c as u32;
    if (0xFF01..=0xFF5E).contains(&u) {
        char::from_u32(u - 0xFEE0).unwrap_or(c)
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chars are looked up for a compatibility form only in the blocks of [`in_compat_block`]:
    /// every char outside CJK that has one standing for letters and digits is in one.
    #[test]
    fn every_compatibility_form_of_letters_is_in_a_block_looked_up() {
        let mut missed = Vec::new();
        for c in (0x80..=0x3_FFFFu32).filter_map(char::from_u32) {
            if is_cjk(c) || in_compat_block(c as u32) {
                continue;
            }
            let mut canonical = Vec::new();
            unicode_normalization::char::decompose_canonical(c, |d| canonical.push(d));
            let mut parts = Vec::new();
            unicode_normalization::char::decompose_compatible(c, |d| parts.push(d));
            let letters = parts
                .iter()
                .all(|&d| is_accent(d) || (d.is_alphanumeric() && !is_cjk(d)));
            if canonical == [c] && parts != [c] && letters {
                missed.push(format!("{:04X}", c as u32));
            }
        }
        assert!(missed.is_empty(), "{missed:?}");
    }
}
