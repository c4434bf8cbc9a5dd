//! The core view: the notes that must always be in an agent's context, rendered into a token
//! budget. Derived from ordinary notes on every call, so it never silently freezes when full: it
//! reports the tokens used and the ids it left out.
//!
//! Order: notes with `pin: true` first, then notes with an importance mark (highest first, then
//! most recalled), ties by id. A note that does not fit is left out and the next ones are still
//! tried (a smaller one may fit). Token estimate: one token per CJK character plus one per four
//! other characters (rounded up), the usual rule of thumb for English text.

use serde::Serialize;

/// Default budget (tokens).
pub const DEFAULT_BUDGET_TOKENS: usize = 2000;
/// Largest budget accepted.
pub const MAX_BUDGET_TOKENS: usize = 200_000;

/// The rendered core view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoreView {
    pub text: String,
    pub tokens_used: usize,
    pub budget_tokens: usize,
    pub included: Vec<String>,
    pub left_out: Vec<String>,
}

/// A note offered to the core view.
#[derive(Debug, Clone)]
pub struct CoreNote {
    pub id: String,
    pub pin: bool,
    pub importance: u8,
    pub recall_count: u64,
    /// The rendered block for this note.
    pub block: String,
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

/// Order `notes` and fit them into `budget` tokens.
pub fn render(mut notes: Vec<CoreNote>, budget: usize) -> CoreView {
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
        let t = estimate_tokens(&n.block);
        if used + t <= budget {
            used += t;
            text.push_str(&n.block);
            included.push(n.id);
        } else {
            left_out.push(n.id);
        }
    }
    CoreView {
        text,
        tokens_used: used,
        budget_tokens: budget,
        included,
        left_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(id: &str, pin: bool, importance: u8, words: usize) -> CoreNote {
        CoreNote {
            id: id.into(),
            pin,
            importance,
            recall_count: 0,
            block: "word ".repeat(words),
        }
    }

    #[test]
    fn pinned_first_then_importance_and_never_fails_when_full() {
        let v = render(
            vec![
                note("imp9", false, 9, 20),
                note("pinned", true, 0, 20),
                note("huge", false, 10, 1000),
                note("imp3", false, 3, 20),
            ],
            60,
        );
        // 20 x "word " = 100 chars = 25 tokens: pinned + imp9 = 50; huge (1250) and imp3 (75 > 60)
        // do not fit.
        assert_eq!(v.included, vec!["pinned", "imp9"]);
        assert_eq!(v.left_out, vec!["huge", "imp3"]);
        assert_eq!(v.tokens_used, 50);
        let roomy = render(vec![note("a", false, 1, 20), note("b", false, 1, 1000)], 30);
        assert_eq!((roomy.included.len(), roomy.left_out.len()), (1, 1));
    }

    #[test]
    fn token_estimate() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("数据库"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }
}
