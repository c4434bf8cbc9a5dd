//! The core view: the notes that must always be in an agent's context, rendered into a token
//! budget. Derived from ordinary notes on every call, so it never silently freezes when full: it
//! reports the tokens used and the ids it left out.
//!
//! Order: notes with `pin: true` first, then notes with an importance mark (highest first, then
//! most recalled), ties by id. A note that does not fit is left out and the next ones are still
//! tried (a smaller one may fit). Token estimate: one token per CJK character plus one per four
//! other characters (rounded up), the usual rule of thumb for English text.
//!
//! A note's body is read for the tokens still left and no further ([`body_read_limit`]): a text
//! longer than that cannot fit, so a huge pinned note costs a bounded read, not its size.

use serde::Serialize;

/// Default budget (tokens).
pub const DEFAULT_BUDGET_TOKENS: usize = 2000;
/// Largest budget accepted.
pub const MAX_BUDGET_TOKENS: usize = 200_000;

/// The rendered core view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoreView {
    /// The rendered Markdown, ready for a system prompt.
    pub text: String,
    /// Estimated tokens of `text`.
    pub tokens_used: usize,
    /// The budget it was rendered into.
    pub budget_tokens: usize,
    /// Ids of the notes in `text`, in order.
    pub included: Vec<String>,
    /// Ids of the notes that qualified but did not fit.
    pub left_out: Vec<String>,
    /// Ids of pinned or important notes left out because a newer note replaces them (a
    /// `supersedes` edge into them; notes on a cycle of such edges are kept).
    pub superseded: Vec<String>,
}

/// A note offered to the core view.
#[derive(Debug, Clone)]
pub struct CoreNote {
    /// The note's id.
    pub id: String,
    /// Pinned notes come first.
    pub pin: bool,
    /// Its latest importance mark (0: none).
    pub importance: u8,
    /// Times it was returned by a recall (orders notes of equal importance).
    pub recall_count: u64,
}

/// Bytes of UTF-8 text that can hold no more than one token of the estimate: four characters
/// (see [`estimate_tokens`]) of at most four bytes each. A text longer than
/// `tokens * MAX_BYTES_PER_TOKEN` bytes has more than `tokens` tokens (an invalid byte becomes one
/// replacement character, so lossy text counts no fewer).
pub const MAX_BYTES_PER_TOKEN: usize = 16;

/// Bytes of a note file to read so that a body of `body_tokens` tokens is read whole, its
/// frontmatter and fences included: never past the scanner's note cap.
pub fn body_read_limit(body_tokens: usize) -> usize {
    // The fences' bytes: `---\r\n` twice, and a byte-order mark.
    const FENCE_BYTES: usize = 13;
    crate::notes::MAX_FRONTMATTER_BYTES
        .saturating_add(FENCE_BYTES)
        .saturating_add(body_tokens.saturating_mul(MAX_BYTES_PER_TOKEN))
        .min(crate::notes::MAX_NOTE_BYTES)
}

/// The body of the note file `reader` (frontmatter cut off, trimmed) when it may fit in
/// `body_tokens`: reads at most [`body_read_limit`] bytes (plus one, to know there is more).
/// `None` when the file is longer than that and under the note cap: its body cannot fit. A note
/// over the cap gives its first `MAX_NOTE_BYTES` bytes' body, as the index does.
pub fn read_body(
    reader: impl std::io::Read,
    body_tokens: usize,
) -> std::io::Result<Option<String>> {
    let limit = body_read_limit(body_tokens);
    let (bytes, more) = crate::notes::read_bounded(reader, limit)?;
    if more && limit < crate::notes::MAX_NOTE_BYTES {
        return Ok(None);
    }
    let text = match std::str::from_utf8(&bytes) {
        // Cut at the cap inside a character: what is before it (as the index reads it).
        Err(e) if e.error_len().is_none() && more => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()])
        }
        _ => crate::notes::decode_note(&bytes).0,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    Ok(Some(
        crate::notes::split_frontmatter(text).1.trim().to_string(),
    ))
}

/// Estimated tokens of `text` (see the module doc).
pub fn estimate_tokens(text: &str) -> usize {
    let mut cjk = 0usize;
    let mut other = 0usize;
    for c in text.chars() {
        if matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
        {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    cjk + other.div_ceil(4)
}

/// Order `notes` and fit them into `budget` tokens. `block_of(note, tokens_left)` renders a
/// note's block when it may fit in `tokens_left` (`None` when it cannot: the note is left out);
/// it is asked in order, so a note is read only for the tokens still left.
pub fn render(
    mut notes: Vec<CoreNote>,
    budget: usize,
    mut block_of: impl FnMut(&CoreNote, usize) -> Option<String>,
) -> CoreView {
    notes.sort_by(|a, b| {
        b.pin
            .cmp(&a.pin)
            .then(b.importance.cmp(&a.importance))
            .then(b.recall_count.cmp(&a.recall_count))
            .then(a.id.cmp(&b.id))
    });
    let mut text = String::new();
    let mut used = 0usize;
    let mut included = Vec::new();
    let mut left_out = Vec::new();
    for n in notes {
        let left = budget - used;
        let fits = block_of(&n, left).and_then(|block| {
            let t = estimate_tokens(&block);
            (t <= left).then_some((block, t))
        });
        match fits {
            Some((block, t)) => {
                used += t;
                text.push_str(&block);
                included.push(n.id);
            }
            None => left_out.push(n.id),
        }
    }
    CoreView {
        text,
        tokens_used: used,
        budget_tokens: budget,
        included,
        left_out,
        superseded: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(id: &str, pin: bool, importance: u8) -> CoreNote {
        CoreNote {
            id: id.into(),
            pin,
            importance,
            recall_count: 0,
        }
    }

    /// Renders `notes` (with their word counts) as blocks of `word ` repeated.
    fn render_words(notes: &[(&str, bool, u8, usize)], budget: usize) -> CoreView {
        let words: std::collections::HashMap<&str, usize> =
            notes.iter().map(|n| (n.0, n.3)).collect();
        let list = notes.iter().map(|n| note(n.0, n.1, n.2)).collect();
        render(list, budget, |n, _| {
            Some("word ".repeat(words[n.id.as_str()]))
        })
    }

    #[test]
    fn pinned_first_then_importance_and_never_fails_when_full() {
        let v = render_words(
            &[
                ("imp9", false, 9, 20),
                ("pinned", true, 0, 20),
                ("huge", false, 10, 1000),
                ("imp3", false, 3, 20),
            ],
            60,
        );
        // 20 x "word " = 100 chars = 25 tokens: pinned + imp9 = 50; huge (1250) and imp3 (75 > 60)
        // do not fit.
        assert_eq!(v.included, vec!["pinned", "imp9"]);
        assert_eq!(v.left_out, vec!["huge", "imp3"]);
        assert_eq!(v.tokens_used, 50);
        let roomy = render_words(&[("a", false, 1, 20), ("b", false, 1, 1000)], 30);
        assert_eq!((roomy.included.len(), roomy.left_out.len()), (1, 1));
    }

    #[test]
    fn each_note_is_offered_the_tokens_still_left_and_one_that_cannot_fit_is_left_out() {
        let mut offered = Vec::new();
        let v = render(
            vec![note("a", true, 0), note("b", true, 0), note("c", true, 0)],
            100,
            |n, left| {
                offered.push((n.id.clone(), left));
                match n.id.as_str() {
                    "a" => Some("x".repeat(160)),
                    "b" => None,
                    _ => Some("y".repeat(40)),
                }
            },
        );
        assert_eq!(
            offered,
            vec![("a".into(), 100), ("b".into(), 60), ("c".into(), 60)]
        );
        assert_eq!(v.included, vec!["a", "c"]);
        assert_eq!(v.left_out, vec!["b"]);
        assert_eq!(v.tokens_used, 50);
    }

    /// A reader that counts the bytes handed out.
    struct Counting<R> {
        inner: R,
        read: usize,
    }

    impl<R: std::io::Read> std::io::Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read += n;
            Ok(n)
        }
    }

    #[test]
    fn core_reads_a_huge_pinned_note_only_as_far_as_the_budget_can_use() {
        use std::io::Read;
        let huge = b"---\npin: true\n---\n".chain(std::io::repeat(b'x').take(100 << 20));
        let mut counted = Counting {
            inner: huge,
            read: 0,
        };
        let body = read_body(&mut counted, DEFAULT_BUDGET_TOKENS).expect("read");
        assert_eq!(body, None, "a body longer than the budget cannot fit");
        assert_eq!(counted.read, body_read_limit(DEFAULT_BUDGET_TOKENS) + 1);
        assert!(counted.read < 1 << 20, "{} bytes read", counted.read);

        // The largest budget still reads below the note cap.
        assert!(body_read_limit(MAX_BUDGET_TOKENS) < crate::notes::MAX_NOTE_BYTES);
        assert_eq!(
            body_read_limit(usize::MAX),
            crate::notes::MAX_NOTE_BYTES,
            "never past the note cap"
        );
    }

    #[test]
    fn a_body_that_may_fit_is_read_whole_without_its_frontmatter() {
        let note = "\u{feff}---\nname: A\n---\n\n  the body  \n";
        let body = read_body(note.as_bytes(), 10).expect("read");
        assert_eq!(body.as_deref(), Some("the body"));
        // As long as the limit exactly: still whole.
        let text = "z".repeat(body_read_limit(1));
        let body = read_body(text.as_bytes(), 1).expect("read");
        assert_eq!(body.map(|b| b.len()), Some(text.len()));
    }

    /// Text longer than `tokens * MAX_BYTES_PER_TOKEN` bytes has more than `tokens` tokens,
    /// whatever its characters: what lets `read_body` stop there.
    #[test]
    fn more_bytes_than_the_bound_means_more_tokens() {
        for unit in ["a", " ", "é", "数", "😀", "\u{fffd}"] {
            for tokens in [0usize, 1, 7, 100] {
                let mut text = String::new();
                while text.len() <= tokens * MAX_BYTES_PER_TOKEN {
                    text.push_str(unit);
                }
                assert!(estimate_tokens(&text) > tokens, "{unit:?} x {tokens}");
            }
        }
    }

    #[test]
    fn one_token_per_cjk_char_and_per_four_other_chars_rounded_up() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("数据库"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }
}
