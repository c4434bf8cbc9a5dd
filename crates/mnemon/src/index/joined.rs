//! Identifiers written with dots, slashes, underscores or colons between their parts
//! (`2026.04.1`, `db/clickhouse/migrations`, `max_client_conn`, `canopy-fw-4.6`), or as three
//! hyphened words or more (`bw-freeze-gate`): indexed whole, beside the parts the tokenizer
//! splits them into.
//!
//! The tokenizer splits `4.6.3` into `4`, `6` and `3`, so a question "canopy-fw 4.6.3" finds every
//! note that holds those three numbers anywhere, and a note holding them apart can rank above the
//! one that writes the version. With the whole indexed too, recall adds the whole to the lexical
//! score of the notes that write it as written, or longer after a joiner (`24.11` in a note that
//! writes `24.11.x`; `recall::engine`); the parts stay the question's terms, so which notes pass
//! the floor does not change, and a note that writes the parts apart ("max deliver" for
//! `max_deliver`) is still found. A number whose parts are all small (`24.11`: each could be a
//! day or a count, which weigh little, see `recall::evidence::is_generic`) counts in the floor
//! as a word of its own.
//!
//! A joined identifier is a run of ASCII letters and digits in pieces, each two pieces joined by
//! exactly one of `.` `_` `/` `:` `-`, with no space: at least two pieces, at most
//! [`MAX_PIECES`], at most [`MAX_TERM_BYTES`] bytes, folded to lower case. Two pieces joined by
//! a hyphen and made of letters only (`read-only`, `blue-green`, `month-end`) are words of prose
//! as often as names of things: the parts alone stand for them. From
//! [`MIN_HYPHENED_PIECES`] pieces on (`bw-freeze-gate`, `lumen-erasure-sub`) such a chain is a
//! name (a gate, a flag, a queue) far more often than prose, and a prose chain held whole
//! (`end-to-end`) only adds to the notes writing it as written. A joined term
//! holds a joiner, which no other term does (the tokenizer splits on them), so it never meets a
//! word.

use super::tokenize::MAX_TERM_BYTES;

/// Most pieces a joined identifier may have (a limit on everything; longer runs are paths or
/// dotted chains better found by their parts).
pub const MAX_PIECES: usize = 8;

/// Whether `b` joins the pieces of an identifier (`.` `_` `/` `:` `-`).
pub fn is_joiner(b: u8) -> bool {
    JOINERS[usize::from(b)]
}

/// The joiner bytes, as a table: the scan tests every byte of every note.
static JOINERS: [bool; 256] = {
    let mut t = [false; 256];
    t[b'.' as usize] = true;
    t[b'_' as usize] = true;
    t[b'/' as usize] = true;
    t[b':' as usize] = true;
    t[b'-' as usize] = true;
    t
};

/// Whether an index term is a joined identifier (it holds a joiner; no word of the tokenizer
/// does).
pub fn is_joined_term(term: &str) -> bool {
    term.bytes().any(is_joiner)
}

/// Pieces a chain of letters joined only by hyphens needs to be held whole.
pub const MIN_HYPHENED_PIECES: usize = 3;

/// Letters and digits a joined identifier needs at least: `A/B`, `I/O` or `0.5` say too little
/// to rank by.
pub const MIN_ALNUM: usize = 3;

/// Each joined identifier of `text` in order, folded to lower case.
///
/// Most text has few joiners, and most of those end a sentence: the scan jumps from joiner to
/// joiner and reads a chain only around one with a letter or digit on each side.
pub fn for_each_joined(text: &str, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let alnum = |at: usize| bytes.get(at).is_some_and(u8::is_ascii_alphanumeric);
    let mut folded = String::new();
    // Where the next chain may start: no chain starts before the end of the last one.
    let mut from = 0;
    let mut at = 0;
    while let Some(off) = bytes[at..].iter().position(|&b| is_joiner(b)) {
        let j = at + off;
        at = j + 1;
        if j == 0 || !alnum(j - 1) || !alnum(j + 1) || j <= from {
            continue;
        }
        // The chain's start: back over letters and digits, and single joiners between them.
        let mut start = j;
        while start > from {
            let joins = start >= 2 && is_joiner(bytes[start - 1]) && alnum(start - 2);
            if !alnum(start - 1) && !joins {
                break;
            }
            start -= 1;
        }
        // Its pieces, forward: piece (joiner piece)*.
        let mut i = start;
        let mut end;
        let mut qualifies = false;
        let mut pieces = 0usize;
        loop {
            let p = i;
            while alnum(i) {
                i += 1;
            }
            pieces += 1;
            qualifies |= bytes[p..i].iter().any(u8::is_ascii_digit);
            end = i;
            if !(i < bytes.len() && is_joiner(bytes[i]) && alnum(i + 1)) {
                break;
            }
            qualifies |= bytes[i] != b'-';
            i += 1;
        }
        from = end;
        at = end;
        // A run that goes on into other letters (`café.menu`, `a.b` inside a longer word of
        // another script) is not an identifier of this kind.
        let clean_edges = (start == 0 || !is_word_byte(bytes[start - 1]))
            && (end == bytes.len() || !is_word_byte(bytes[end]));
        let letters_digits = end - start - (pieces - 1);
        if (qualifies || pieces >= MIN_HYPHENED_PIECES)
            && (2..=MAX_PIECES).contains(&pieces)
            && letters_digits >= MIN_ALNUM
            && end - start <= MAX_TERM_BYTES
            && clean_edges
        {
            folded.clear();
            folded.push_str(&text[start..end]);
            folded.make_ascii_lowercase();
            f(&folded);
        }
    }
}

/// A byte that would make a run part of a longer word: a letter or digit of another script (a
/// UTF-8 byte of a non-ASCII char).
fn is_word_byte(b: u8) -> bool {
    !b.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule read straight: every chain from every start, left to right.
    fn reference(text: &str) -> Vec<String> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if !bytes[i].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let start = i;
            let (mut qualifies, mut pieces) = (false, 0usize);
            let mut end;
            loop {
                let p = i;
                while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                pieces += 1;
                qualifies |= bytes[p..i].iter().any(u8::is_ascii_digit);
                end = i;
                let joined = i + 1 < bytes.len()
                    && is_joiner(bytes[i])
                    && bytes[i + 1].is_ascii_alphanumeric();
                if !joined {
                    break;
                }
                qualifies |= bytes[i] != b'-';
                i += 1;
            }
            let clean = (start == 0 || bytes[start - 1].is_ascii())
                && (end == bytes.len() || bytes[end].is_ascii());
            if (qualifies || pieces >= MIN_HYPHENED_PIECES)
                && (2..=MAX_PIECES).contains(&pieces)
                && end - start - (pieces - 1) >= MIN_ALNUM
                && end - start <= MAX_TERM_BYTES
                && clean
            {
                out.push(text[start..end].to_ascii_lowercase());
            }
        }
        out
    }

    #[test]
    fn the_joiner_to_joiner_scan_finds_what_the_plain_rule_finds() {
        for text in crate::index::random_texts("aB1 .-_/:é\n9z", 0x2545_f491_4f6c_dd1d, 3000) {
            let mut got = Vec::new();
            for_each_joined(&text, |w| got.push(w.to_string()));
            assert_eq!(got, reference(&text), "{text:?}");
        }
    }

    fn joined(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_joined(text, |w| out.push(w.to_string()));
        out
    }

    #[test]
    fn versions_paths_snake_case_and_hyphened_names_are_joined_prose_hyphens_are_not() {
        assert_eq!(
            joined("ship canopy-fw 4.6.3 from db/clickhouse/migrations, see Max_Client_Conn."),
            ["4.6.3", "db/clickhouse/migrations", "max_client_conn"]
        );
        assert_eq!(
            joined("v2.1 on 2026-04-22 at 10:30"),
            ["v2.1", "2026-04-22", "10:30"]
        );
        assert!(joined("a read-only, blue-green month-end; end. Start").is_empty());
        // Three words and more joined by hyphens name a thing.
        assert_eq!(
            joined("the bw-freeze-gate policy, end-to-end, not bw-gate"),
            ["bw-freeze-gate", "end-to-end"]
        );
        // A hyphen joins when a piece has a digit; double joiners and edges break a chain.
        assert_eq!(joined("fw-4.6 a..b c/ d_"), ["fw-4.6"]);
        // Too many pieces, or a run glued to another script, is no identifier.
        assert!(joined("a.b.c.d.e.f.g.h.i").is_empty());
        assert!(joined("café.menu").is_empty());
        assert!(joined("A/B testing, I/O, 0.5 s").is_empty());
        assert!(is_joined_term("4.6.3") && !is_joined_term("clickhous"));
    }
}
