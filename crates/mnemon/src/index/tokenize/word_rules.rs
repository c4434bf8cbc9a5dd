//! Where a word goes on and where it splits, asked of each char by the scanner: whether a char
//! inside a word segment is kept, removed or splits the word ([`classify`]), which apostrophes
//! UAX #29 keeps inside a word, which commas are thousands separators, which contractions would
//! close up into another word, which digits are written raised or lowered. The answers are the
//! same whether the scanner takes its ASCII shortcut or reads the text char by char.

use super::fold::fold_fullwidth;
use crate::notes::script::is_cjk;

/// How a non-CJK char inside a word segment is treated (after fullwidth folding).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum CharClass {
    Keep,
    Drop,
    Split,
}

#[inline]
#[rustfmt::skip]
pub(super) fn classify(c: char) -> CharClass {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            CharClass::Keep
        } else if c == '\'' {
            CharClass::Drop
        } else {
            CharClass::Split
        };
    }
    match c {
        // apostrophes, soft hyphen, zero-width chars, word joiner, BOM
        '\u{2018}' | '\u{2019}' | '\u{02BC}' | '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{2060}'
        | '\u{FEFF}' => CharClass::Drop,
        // UAX #29 MidLetter / MidNum / MidNumLet / ExtendNumLet punctuation (non-ASCII)
        '\u{00B7}' | '\u{0387}' | '\u{055F}' | '\u{05F3}' | '\u{05F4}' | '\u{2027}' | '\u{FE13}'
        | '\u{FE55}' | '\u{2024}' | '\u{FE52}' | '\u{037E}' | '\u{0589}' | '\u{060C}' | '\u{060D}'
        | '\u{066C}' | '\u{07F8}' | '\u{2044}' | '\u{FE10}' | '\u{FE14}' | '\u{FE50}' | '\u{FE54}'
        | '\u{202F}' | '\u{203F}' | '\u{2040}' | '\u{2054}' | '\u{FE33}' | '\u{FE34}'
        | '\u{FE4D}'..='\u{FE4F}' => CharClass::Split,
        _ => CharClass::Keep,
    }
}

/// Whether the tokenizer removes `c` from a word without splitting it (an apostrophe, a soft
/// hyphen, a zero-width or other invisible format char: see [`classify`]).
pub(crate) fn is_removed_in_word(c: char) -> bool {
    classify(fold_fullwidth(c)) == CharClass::Drop
}

/// Whether `c` is an apostrophe (`'`, `‘`, `’`, `ʼ`, fullwidth `＇`).
#[inline]
pub(crate) fn is_apostrophe(c: char) -> bool {
    matches!(
        fold_fullwidth(c),
        '\'' | '\u{2018}' | '\u{2019}' | '\u{02BC}'
    )
}

/// Is `bytes[k]` an apostrophe that UAX #29 keeps inside a word (between two ASCII letters or
/// two ASCII digits)?
#[inline]
pub(super) fn apostrophe_joins(bytes: &[u8], k: usize) -> bool {
    k > 0
        && k + 1 < bytes.len()
        && bytes[k] == b'\''
        && ((bytes[k - 1].is_ascii_alphabetic() && bytes[k + 1].is_ascii_alphabetic())
            || (bytes[k - 1].is_ascii_digit() && bytes[k + 1].is_ascii_digit()))
}

/// Is `bytes[k]` a comma between the digit groups of a number written with thousands separators
/// (`1,000`, `12,500,000`), which is removed, so the number is the one written without them
/// (`1000`)? It is when three digits follow it (and no fourth), and one to three digits come
/// before it, not glued to a letter (`v1,000` is `v1` and `000`), or three after another such
/// comma. A decimal comma (`3,14`) and a list without spaces (`1,2,3`) split as before.
#[inline]
pub(super) fn thousands_comma(bytes: &[u8], k: usize) -> bool {
    if bytes.get(k) != Some(&b',') || k == 0 || !bytes[k - 1].is_ascii_digit() {
        return false;
    }
    let after = &bytes[k + 1..];
    if !(after.len() >= 3
        && after[..3].iter().all(u8::is_ascii_digit)
        && !after.get(3).is_some_and(u8::is_ascii_digit))
    {
        return false;
    }
    let digits = bytes[..k]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let start = k - digits;
    match start.checked_sub(1).map(|i| bytes[i]) {
        Some(b',') if start >= 2 && bytes[start - 2].is_ascii_digit() => digits == 3,
        Some(p) if p.is_ascii_alphanumeric() => false,
        _ => digits <= 3,
    }
}

/// [`thousands_comma`] for the comma at `seg[i]` in a segment with non-ASCII text (fullwidth
/// digits and commas folded): a letter or digit before the digits that is CJK glues nothing
/// (the script change splits there), one of another script does.
pub(super) fn unicode_thousands_comma(seg: &str, i: usize) -> bool {
    let digit = |c: char| fold_fullwidth(c).is_ascii_digit();
    let Some(comma) = seg[i..].chars().next() else {
        return false;
    };
    let mut after = seg[i + comma.len_utf8()..].chars();
    let three = after.by_ref().take(3).filter(|&c| digit(c)).count() == 3;
    if !three || after.next().is_some_and(digit) {
        return false;
    }
    let mut before = seg[..i].chars().rev().peekable();
    let mut digits = 0;
    while before.next_if(|&c| digit(c)).is_some() {
        digits += 1;
    }
    match before.next().map(fold_fullwidth) {
        _ if digits == 0 => false,
        Some(',') if before.next().is_some_and(digit) => digits == 3,
        Some(p) if p.is_alphanumeric() && !is_cjk(p) => false,
        _ => digits <= 3,
    }
}

/// Whether `c` is a digit written raised or lowered (superscripts `⁰¹²³⁴⁵⁶⁷⁸⁹`, subscripts
/// `₀₁₂₃₄₅₆₇₈₉`), which word segmentation does not join to the letters around it.
pub(super) fn is_script_digit(c: char) -> bool {
    matches!(c, '\u{B2}' | '\u{B3}' | '\u{B9}' | '\u{2070}' | '\u{2074}'..='\u{2079}' | '\u{2080}'..='\u{2089}')
}

/// Whether `suffix` (ASCII) is the end of a contraction that is not part of the word it ends:
/// `'ll`, `'d`, `'re`, `'ve`, `'m` (`we'll`, `I'd`, `they're`, `I've`, `I'm`). Closed up, they
/// would make other words (`well`, `id`, `shell`, `wed`, `hell`); `n't` and `'s` stay (`dont` is
/// a stop word, `PgBouncer's` stems to `pgbouncer`).
fn is_contraction(suffix: &[u8]) -> bool {
    matches!(
        suffix,
        [b'l' | b'L', b'l' | b'L']
            | [b'd' | b'D']
            | [b'r' | b'R', b'e' | b'E']
            | [b'v' | b'V', b'e' | b'E']
            | [b'm' | b'M']
    )
}

/// The length of the contraction after the apostrophe at `bytes[k]` (see [`is_contraction`]),
/// when it follows a letter and ends the word: the ASCII letters and digits after it are a
/// contraction, and no apostrophe joins a letter after them.
#[inline]
pub(super) fn contraction_at(bytes: &[u8], k: usize) -> Option<usize> {
    if bytes.get(k) != Some(&b'\'') || k == 0 || !bytes[k - 1].is_ascii_alphabetic() {
        return None;
    }
    let rest = &bytes[k + 1..];
    let n = rest
        .iter()
        .position(|b| !b.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    let ends = !apostrophe_joins(bytes, k + 1 + n);
    (ends && is_contraction(&rest[..n])).then_some(n)
}

/// [`contraction_at`] for the char `c` at `seg[i..]` in a segment with non-ASCII text: `c` is an
/// apostrophe after a letter that is not CJK, the ASCII letters and digits after it (fullwidth ones folded)
/// are a contraction, and after them (and any chars removed inside a word) the segment ends, or
/// a char that splits words, or CJK.
/// Returns the contraction's length in bytes.
pub(super) fn unicode_contraction_at(seg: &str, i: usize, c: char) -> Option<usize> {
    if !is_apostrophe(c) {
        return None;
    }
    // (After CJK, the apostrophe starts a word of its own: the script change splits.)
    let after_letter = seg[..i]
        .chars()
        .next_back()
        .is_some_and(|p| p.is_alphabetic() && !is_cjk(p));
    if !after_letter {
        return None;
    }
    let rest = &seg[i + c.len_utf8()..];
    let mut suffix = [0u8; 3];
    let (mut n, mut bytes) = (0, 0);
    let mut chars = rest.chars();
    let mut after = None;
    for d in chars.by_ref() {
        let f = fold_fullwidth(d);
        if !f.is_ascii_alphanumeric() {
            after = Some(f);
            break;
        }
        if n == suffix.len() {
            return None;
        }
        suffix[n] = f as u8;
        n += 1;
        bytes += d.len_utf8();
    }
    // Chars removed inside a word (another apostrophe) do not end it; what comes next does.
    while after.is_some_and(|a| classify(a) == CharClass::Drop) {
        after = chars.next().map(fold_fullwidth);
    }
    let ends = after.is_none_or(|a| is_cjk(a) || classify(a) == CharClass::Split);
    (ends && is_contraction(&suffix[..n])).then_some(bytes)
}
