//! One word written three ways: closed up (`rollback`, `email`, `oncall`), hyphened
//! (`roll-back`, `e-mail`, `on-call`) or apart (`roll back`, `e mail`, `on call`).
//!
//! The tokenizer splits a hyphened word into its pieces, so `on-call` is `on` and `call`, and a
//! question writing `oncall` met nothing of it; a question writing `roll back` met nothing of a
//! note that writes `rollback`. Two rules join the forms:
//!
//! * **Index side.** A word of two pieces of ASCII letters joined by one hyphen (`-`, U+2010 or
//!   U+2011), not part of a longer chain, is also indexed closed up (`on-call` gives `on`, `call`
//!   and `oncall`), stemmed like any word ([`for_each_hyphened`]). It adds no length to its
//!   field: the pieces already did.
//! * **Question side.** Two neighbouring words of the question, hyphened or apart (by any
//!   space, a no-break space included), whose closed form the memory holds are matched by it
//!   too: the closed term is added to the matches of one piece (the one the memory lacks as
//!   written, else the rarer) as the word itself, weight 1 ([`close_pairs`]); one word of a note
//!   never counts as two of the question. Two pieces the question hyphens are one word of the
//!   question, which the tokenizer split: the closed term is added to both, as the note writing
//!   the word hyphened matches both (`e-mail` against a note writing `email`, which would
//!   otherwise match one of two words, as a note merely holding `mail` does). Words apart must
//!   have two letters or more each (`a part` is not `apart`), and neither the closed form nor
//!   both pieces may be stop words (`in to` is not `into`).
//!
//! What is not joined: a closed word of the question against a note writing it apart (`rollback`
//! against `roll back`): without word positions, `roll` and `back` anywhere in a note say
//! nothing of them being one word.

use super::lexical::{LexicalIndex, TermMatch};
use super::tokenize::{MAX_TERM_BYTES, Tokenizer, is_stop_word};

/// Fewest letters of a closed form: shorter ones (`ab`, `ox`) are more often two words.
pub const MIN_CLOSED_LETTERS: usize = 4;

/// Fewest letters of each word of a pair written apart.
pub const MIN_APART_LETTERS: usize = 2;

/// Most neighbouring pairs of a question tried (a limit on everything: each costs a dictionary
/// lookup).
pub const MAX_PAIRS: usize = 32;

/// How two neighbouring words of ASCII letters are separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// One hyphen (`-`, U+2010 or U+2011), nothing else.
    Hyphen,
    /// Whitespace only (any Unicode space, the no-break ones included).
    Space,
    /// Anything else (punctuation, a word of digits or of another script between them).
    Other,
}

/// A word of ASCII letters, with the byte range it spans and what separates it from the next
/// word.
#[derive(Debug, Clone, Copy)]
struct Word {
    start: usize,
    end: usize,
    next: Sep,
}

/// Byte length of the hyphen at `at` (`-`, U+2010 or U+2011), 0 if there is none.
fn hyphen_at(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at..) {
        Some([b'-', ..]) => 1,
        Some([0xE2, 0x80, 0x90 | 0x91, ..]) => 3,
        _ => 0,
    }
}

/// The runs of ASCII letters of `text` that are words on their own (not glued to digits or to
/// letters of another script), in order, each with its separation from the next.
fn words(text: &str) -> Vec<Word> {
    let bytes = text.as_bytes();
    let mut out: Vec<Word> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphanumeric() && bytes[i].is_ascii() {
            i += 1;
            continue;
        }
        let start = i;
        if !bytes[i].is_ascii() {
            // A char of another script (or a non-ASCII symbol): skip it whole.
            let len = text[i..].chars().next().map_or(1, char::len_utf8);
            i += len;
            continue;
        }
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let end = i;
        let glued_before = text[..start]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        let glued_after = text[end..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric);
        let letters = bytes[start..end].iter().all(u8::is_ascii_alphabetic);
        if !letters || glued_before || glued_after {
            // Breaks the chain: the word before is not next to the word after.
            if let Some(last) = out.last_mut() {
                last.next = Sep::Other;
            }
            continue;
        }
        if let Some(last) = out.last_mut()
            && last.next != Sep::Other
        {
            let gap = &bytes[last.end..start];
            last.next = if hyphen_at(gap, 0) == gap.len() && !gap.is_empty() {
                Sep::Hyphen
            } else if !gap.is_empty() && text[last.end..start].chars().all(char::is_whitespace) {
                // Any space: a no-break space (U+00A0, U+202F) is one too.
                Sep::Space
            } else {
                Sep::Other
            };
        }
        out.push(Word {
            start,
            end,
            next: Sep::Space,
        });
    }
    if let Some(last) = out.last_mut() {
        last.next = Sep::Other;
    }
    out
}

/// Whether words `k` and `k + 1` are a word of two hyphened pieces, not part of a longer chain
/// (`end-to-end` is three pieces; a chain joined by other marks is an identifier,
/// `index::joined`).
fn hyphened_pair(words: &[Word], k: usize, text: &str) -> bool {
    let bytes = text.as_bytes();
    let w = words[k];
    let Some(n) = words.get(k + 1) else {
        return false;
    };
    if w.next != Sep::Hyphen {
        return false;
    }
    // The chain goes on before or after: a joiner touching the pair's outer edges.
    let joiner = |b: u8| matches!(b, b'-' | b'_' | b'.' | b'/' | b':');
    let before = w.start.checked_sub(1).map(|i| bytes[i]);
    let after = bytes.get(n.end).copied();
    let alnum_at = |i: Option<usize>| {
        i.and_then(|i| bytes.get(i))
            .is_some_and(u8::is_ascii_alphanumeric)
    };
    let chain_before = (before.is_some_and(joiner) && alnum_at(w.start.checked_sub(2)))
        || (w.start >= 3 && hyphen_at(bytes, w.start - 3) == 3 && alnum_at(w.start.checked_sub(4)));
    let chain_after = (after.is_some_and(joiner) && alnum_at(Some(n.end + 1)))
        || (hyphen_at(bytes, n.end) == 3 && alnum_at(Some(n.end + 3)));
    !chain_before && !chain_after
}

/// The closed form of two words of ASCII letters, lower case, if it is long enough to stand for
/// one word and short enough to be a term.
fn closed(a: &str, b: &str, out: &mut String) -> bool {
    let len = a.len() + b.len();
    if !(MIN_CLOSED_LETTERS..=MAX_TERM_BYTES).contains(&len) {
        return false;
    }
    out.clear();
    out.push_str(a);
    out.push_str(b);
    out.make_ascii_lowercase();
    !is_stop_word(out)
}

/// The closed form (lower case, unstemmed) of each word of `text` written as two pieces of
/// letters joined by one hyphen (`on-call` -> `oncall`), in order.
///
/// Every note is read for them: the scan jumps from hyphen to hyphen and reads only the pieces
/// around one (a test checks it against the rule read straight, word by word).
pub fn for_each_hyphened(text: &str, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut buf = String::new();
    let mut at = 0;
    while let Some(off) = memchr::memchr2(b'-', 0xE2, &bytes[at..]) {
        let h = at + off;
        let len = hyphen_at(bytes, h);
        at = h + 1;
        if len == 0 {
            continue;
        }
        // The runs of ASCII letters and digits on each side.
        let mut ls = h;
        while ls > 0 && bytes[ls - 1].is_ascii_alphanumeric() {
            ls -= 1;
        }
        let rs = h + len;
        let mut re = rs;
        while re < bytes.len() && bytes[re].is_ascii_alphanumeric() {
            re += 1;
        }
        let letters = |r: &[u8]| !r.is_empty() && r.iter().all(u8::is_ascii_alphabetic);
        if !letters(&bytes[ls..h]) || !letters(&bytes[rs..re]) {
            continue;
        }
        // Glued to a letter of another script, or one link of a longer chain.
        let glued_before = text[..ls]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        let glued_after = text[re..].chars().next().is_some_and(char::is_alphanumeric);
        if glued_before || glued_after {
            continue;
        }
        let words = [
            Word {
                start: ls,
                end: h,
                next: Sep::Hyphen,
            },
            Word {
                start: rs,
                end: re,
                next: Sep::Other,
            },
        ];
        if hyphened_pair(&words, 0, text) && closed(&text[ls..h], &text[rs..re], &mut buf) {
            f(&buf);
        }
    }
}

/// Each pair of neighbouring words of a question that may be one word written apart or
/// hyphened: `(first, second, closed, hyphened)`, lower case, unstemmed; at most [`MAX_PAIRS`].
pub fn for_each_pair(text: &str, mut f: impl FnMut(&str, &str, &str, bool)) {
    let words = words(text);
    let mut buf = String::new();
    let mut pairs = 0;
    for k in 0..words.len() {
        if pairs >= MAX_PAIRS {
            break;
        }
        let (w, Some(&n)) = (words[k], words.get(k + 1)) else {
            break;
        };
        let ok = match w.next {
            Sep::Hyphen => hyphened_pair(&words, k, text),
            Sep::Space => {
                w.end - w.start >= MIN_APART_LETTERS && n.end - n.start >= MIN_APART_LETTERS
            }
            Sep::Other => false,
        };
        if !ok {
            continue;
        }
        let (a, b) = (&text[w.start..w.end], &text[n.start..n.end]);
        if !closed(a, b, &mut buf) {
            continue;
        }
        // The pieces, lower case, are the two ends of the closed form.
        let (a, b) = buf.split_at(a.len());
        if is_stop_word(a) && is_stop_word(b) {
            continue;
        }
        pairs += 1;
        f(a, b, &buf, w.next == Sep::Hyphen);
    }
}

/// Add to `matches` (the question's words, as [`LexicalIndex::expand`] matched them) the closed
/// form of each pair of neighbouring words of `text` that the memory holds (see the module doc):
/// it matches one piece that is a word of the question as the piece itself would; both pieces
/// when the question writes them hyphened, as one word.
pub fn close_pairs(lex: &LexicalIndex, tok: &Tokenizer, text: &str, matches: &mut [TermMatch]) {
    for_each_pair(text, |a, b, whole, hyphened| {
        // Most pairs are two words no note writes as one: one dictionary lookup each.
        let term = tok.stem_word(whole);
        let df = lex.df(term.as_bytes());
        if df == 0 {
            return;
        }
        let pieces = [tok.stem_word(a), tok.stem_word(b)];
        if pieces.contains(&term) || !matches.iter().any(|m| pieces.contains(&m.term)) {
            return;
        }
        let add = |m: &mut TermMatch| m.add_same_word(term.clone(), df);
        if hyphened {
            // The question writes one word (`e-mail`), which the tokenizer split: the note's
            // closed form (`email`) answers each piece, as the note's own `e-mail` would.
            matches
                .iter_mut()
                .filter(|m| pieces.contains(&m.term))
                .for_each(add);
            return;
        }
        // One word of the note stands for one word of the question: the piece the memory
        // lacks as written, else the rarer (`setup` must not pass as two words of "set up a
        // mesh network").
        if let Some(m) = matches
            .iter_mut()
            .filter(|m| pieces.contains(&m.term))
            .min_by_key(|m| (m.held_as_is(), m.first_df))
        {
            add(m);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hyphened(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_hyphened(text, |w| out.push(w.to_string()));
        out
    }

    /// The rule read straight: every pair of neighbouring words, hyphened.
    fn reference(text: &str) -> Vec<String> {
        let words = words(text);
        let mut buf = String::new();
        let mut out = Vec::new();
        for k in 0..words.len() {
            if !hyphened_pair(&words, k, text) {
                continue;
            }
            let (w, n) = (words[k], words[k + 1]);
            if closed(&text[w.start..w.end], &text[n.start..n.end], &mut buf) {
                out.push(buf.clone());
            }
        }
        out
    }

    #[test]
    fn the_hyphen_to_hyphen_scan_finds_what_the_plain_rule_finds() {
        for text in crate::index::random_texts(
            "aB1 -_./\u{2011}\u{2010}é\n9zz",
            0x9e37_79b9_7f4a_7c15,
            5000,
        ) {
            assert_eq!(hyphened(&text), reference(&text), "{text:?}");
        }
    }

    fn pairs(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_pair(text, |a, b, w, hyphened| {
            let sep = if hyphened { "-" } else { "+" };
            out.push(format!("{a}{sep}{b}={w}"));
        });
        out
    }

    #[test]
    fn a_word_of_two_hyphened_pieces_is_also_held_closed_up() {
        assert_eq!(
            hyphened("Write an E-mail to the on-call engineer; roll-back first."),
            ["email", "oncall", "rollback"]
        );
        // The non-breaking hyphens of word processors join as well.
        assert_eq!(
            hyphened("co\u{2011}operate and re\u{2010}index"),
            ["cooperate", "reindex"]
        );
        // Chains of three pieces, identifiers and pieces with digits are not words.
        assert!(hyphened("end-to-end, fw-4.6, v2-beta, a-b, db/on-call, on-call_x").is_empty());
        // A piece glued to another script is part of a longer word.
        assert!(hyphened("café-bar résumé-writer").is_empty());
        // Too short to be one word, or a stop word closed up.
        assert!(hyphened("a-b in-to").is_empty());
        assert!(hyphened("no hyphen here").is_empty());
    }

    #[test]
    fn neighbouring_words_apart_or_hyphened_are_pairs() {
        assert_eq!(
            pairs("how do I log in, roll back or e-mail"),
            // `how do`: two stop words; `do I`, `or e`: a piece of one letter apart.
            [
                "log+in=login",
                "roll+back=rollback",
                "back+or=backor",
                "e-mail=email"
            ]
        );
        // A no-break space is a space (a question pasted from a page or a word processor).
        assert_eq!(
            pairs("roll\u{a0}back, log\u{202f}in, set\u{a0}\u{a0} up"),
            ["roll+back=rollback", "log+in=login", "set+up=setup"]
        );
        // Punctuation between two words keeps them apart; one letter apart is not a piece.
        assert!(pairs("log. in, a part").is_empty());
        // Words with digits break the pairs around them.
        assert!(pairs("roll v2 back").is_empty());
    }
}
