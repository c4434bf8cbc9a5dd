//! Whether a note writes the words a question matched together, in one passage, or only apart.
//!
//! A question asks about one thing, so a note that answers it tends to hold the question's
//! words near each other: in one paragraph, or under a heading that names the rest. A note that
//! holds two words of an unrelated question ("merge" and "cells", "build" and "table") usually
//! holds them in separate paragraphs, each in its own sense. Recall asks this only of a hit that
//! would otherwise make a partial answer strong (`recall::engine`), reading the note's file.
//!
//! Passages: the note's text is split at blank lines; a heading's words belong to every
//! paragraph under it (to the next heading); the frontmatter block, the top-level `# ` title and
//! the words of the id belong to every paragraph. A fenced code block is one paragraph, and a `#`
//! line inside it is text, not a heading.

use crate::index::tokenize::Tokenizer;

/// How much of a note the check reads: a longer note is not checked (its words count as
/// together), so one recall never tokenizes more than this per note checked.
pub const MAX_PASSAGE_READ_BYTES: usize = 64 * 1024;

/// Whether `text` (a note's file, its id `id`) holds two of `terms` together in one passage.
/// `terms` holds, per matched query term, the index terms it matched through (itself, typo or
/// prefix expansions). Fewer than two terms have nothing to hold together: `true`.
pub fn together(tok: &Tokenizer, id: &str, text: &str, terms: &[&[String]]) -> bool {
    if terms.len() < 2 {
        return true;
    }
    let term_of = |t: &str| terms.iter().position(|exp| exp.iter().any(|e| e == t));
    // Bit i: query term i occurs in the scope.
    let mut everywhere = 0u32;
    let mark = |bits: &mut u32, t: &str| {
        if let Some(i) = term_of(t) {
            *bits |= 1u32 << (i % 32);
        }
    };
    tok.for_each_slug_term(id, |t| mark(&mut everywhere, t));
    let (front, body) = split_front(text);
    tok.for_each_index_term(front, |t| mark(&mut everywhere, t));
    let mut fenced = false;
    for line in body.lines() {
        if is_fence(line.trim()) {
            fenced = !fenced;
        } else if !fenced && line.starts_with("# ") {
            tok.for_each_index_term(line, |t| mark(&mut everywhere, t));
        }
    }
    let enough = |bits: u32| bits.count_ones() >= 2;
    if enough(everywhere) {
        return true;
    }
    let mut heading = 0u32;
    let mut paragraph = 0u32;
    // Inside a fenced code block a `#` line is a comment, not a heading.
    let mut fenced = false;
    for line in body.lines() {
        let trimmed = line.trim();
        let fence = is_fence(trimmed);
        fenced ^= fence;
        if fenced || fence {
            tok.for_each_index_term(line, |t| mark(&mut paragraph, t));
        } else if line.starts_with("# ") {
            continue;
        } else if trimmed.starts_with('#') {
            heading = 0;
            tok.for_each_index_term(trimmed, |t| mark(&mut heading, t));
            paragraph = 0;
        } else if trimmed.is_empty() {
            paragraph = 0;
        } else {
            tok.for_each_index_term(line, |t| mark(&mut paragraph, t));
        }
        if enough(everywhere | heading | paragraph) {
            return true;
        }
    }
    false
}

/// Whether a (trimmed) line opens or closes a fenced code block.
fn is_fence(trimmed: &str) -> bool {
    trimmed.starts_with("```") || trimmed.starts_with("~~~")
}

/// The frontmatter block (delimiters included) and the text below it; no block: empty, all.
fn split_front(text: &str) -> (&str, &str) {
    let rest = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !rest.starts_with("---") {
        return ("", rest);
    }
    let mut at = 0usize;
    for (n, line) in rest.split_inclusive('\n').enumerate() {
        at += line.len();
        if n > 0 && line.trim_end() == "---" {
            return rest.split_at(at);
        }
    }
    ("", rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distinct index terms of `text`.
    fn terms_of(tok: &Tokenizer, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        tok.for_each_index_term(text, |t| {
            if !out.iter().any(|o| o == t) {
                out.push(t.to_string());
            }
        });
        out
    }

    fn expansions(tok: &Tokenizer, words: &[&str]) -> Vec<Vec<String>> {
        words.iter().map(|w| terms_of(tok, w)).collect()
    }

    fn check(text: &str, words: &[&str]) -> bool {
        let tok = Tokenizer::new();
        let exp = expansions(&tok, words);
        let refs: Vec<&[String]> = exp.iter().map(|e| e.as_slice()).collect();
        together(&tok, "notes/some-note", text, &refs)
    }

    const NOTE: &str = "---\nname: Ledger\ntags: [money]\n---\n# Ledger entries\n\n\
        Every transfer is two postings.\nThey always balance.\n\n\
        ## Reconciliation\n\nThe nightly job compares totals with the bank.\n\n\
        The table of accounts is built at start-up.\n";

    #[test]
    fn words_of_one_paragraph_are_together() {
        assert!(check(NOTE, &["transfer", "balance"]));
    }

    #[test]
    fn words_of_two_paragraphs_are_apart() {
        assert!(!check(NOTE, &["transfer", "table"]));
        assert!(!check(NOTE, &["nightly", "table"]));
    }

    #[test]
    fn a_heading_holds_the_words_of_its_section() {
        assert!(check(NOTE, &["reconciliation", "bank"]));
        assert!(check(NOTE, &["reconciliation", "table"]));
        // Not the paragraphs above it.
        assert!(!check(NOTE, &["reconciliation", "postings"]));
    }

    #[test]
    fn the_title_frontmatter_and_id_hold_every_paragraph() {
        assert!(check(NOTE, &["ledger", "table"]));
        assert!(check(NOTE, &["money", "nightly"]));
        assert!(check(NOTE, &["note", "transfer"]));
        assert!(check(NOTE, &["entries", "bank"]));
    }

    #[test]
    fn one_term_is_together_with_itself() {
        assert!(check(NOTE, &["table"]));
        assert!(check(NOTE, &[]));
    }

    #[test]
    fn a_comment_in_a_code_block_is_no_heading() {
        let note = "## Restart\n\n```sh\n# stop the worker first\nsystemctl stop worker\n```\n\n\
            Then start it again.\n\nPayments settle nightly.\n";
        // `# stop ...` inside the fence is neither the title nor a heading: "stop" is in the
        // fenced paragraph only, and "restart" still heads the section.
        assert!(!check(note, &["stop", "payments"]));
        assert!(check(note, &["restart", "payments"]));
        assert!(check(note, &["stop", "systemctl"]));
    }

    #[test]
    fn a_note_without_frontmatter_is_all_body() {
        assert!(!check("alpha beta\n\ngamma delta\n", &["alpha", "gamma"]));
        assert!(check("alpha beta\ngamma delta\n", &["alpha", "gamma"]));
        assert_eq!(split_front("---\nname: x\n"), ("", "---\nname: x\n"));
    }

    /// Passages laid out one by one: the note split into sections at headings and each section
    /// into paragraphs at blank lines (fences kept whole, `# ` titles taken out), each passage
    /// the section's heading, the paragraph and what holds everywhere.
    fn together_by_layout(tok: &Tokenizer, id: &str, text: &str, terms: &[&[String]]) -> bool {
        use std::collections::BTreeSet;
        if terms.len() < 2 {
            return true;
        }
        let of = |text: &str, slug: bool| -> BTreeSet<usize> {
            let mut out = BTreeSet::new();
            let mut add = |t: &str| {
                if let Some(i) = terms.iter().position(|e| e.iter().any(|x| x == t)) {
                    out.insert(i);
                }
            };
            if slug {
                tok.for_each_slug_term(text, &mut add);
            } else {
                tok.for_each_index_term(text, &mut add);
            }
            out
        };
        #[derive(PartialEq)]
        enum Kind {
            Title,
            Heading,
            Blank,
            Text,
        }
        let (front, body) = split_front(text);
        let mut lines = Vec::new();
        let mut fenced = false;
        for line in body.lines() {
            let t = line.trim();
            let kind = if fenced || is_fence(t) {
                Kind::Text
            } else if line.starts_with("# ") {
                Kind::Title
            } else if t.starts_with('#') {
                Kind::Heading
            } else if t.is_empty() {
                Kind::Blank
            } else {
                Kind::Text
            };
            if is_fence(t) {
                fenced = !fenced;
            }
            lines.push((kind, line));
        }
        let mut everywhere = of(id, true);
        everywhere.extend(of(front, false));
        for (_, line) in lines.iter().filter(|(k, _)| *k == Kind::Title) {
            everywhere.extend(of(line, false));
        }
        let mut passages: Vec<BTreeSet<usize>> = vec![everywhere.clone()];
        let mut heading: BTreeSet<usize> = BTreeSet::new();
        let mut paragraph: Vec<&str> = Vec::new();
        let close = |heading: &BTreeSet<usize>,
                     paragraph: &mut Vec<&str>,
                     out: &mut Vec<BTreeSet<usize>>| {
            let mut p = everywhere.clone();
            p.extend(heading.iter().copied());
            for l in paragraph.drain(..) {
                p.extend(of(l, false));
            }
            out.push(p);
        };
        for (kind, line) in &lines {
            match kind {
                Kind::Title => {}
                Kind::Heading => {
                    close(&heading, &mut paragraph, &mut passages);
                    heading = of(line.trim(), false);
                }
                Kind::Blank => close(&heading, &mut paragraph, &mut passages),
                Kind::Text => paragraph.push(line),
            }
        }
        close(&heading, &mut paragraph, &mut passages);
        passages.iter().any(|p| p.len() >= 2)
    }

    const LINES: &[&str] = &[
        "",
        "# alpha beta",
        "## gamma",
        "#delta",
        "  # epsilon",
        "```",
        "~~~",
        "alpha gamma",
        "beta",
        "delta epsilon zeta",
        "zeta",
        "---",
        "name: eta",
        "   ",
    ];
    const WORDS: &[&str] = &[
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "note",
    ];
    const IDS: &[&str] = &["notes/alpha-note", "zeta", "x"];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// The one-pass check answers as the passages laid out one by one do.
        #[test]
        fn the_one_pass_check_agrees_with_the_passages_laid_out(
            front in proptest::bool::ANY,
            picks in proptest::collection::vec(0..LINES.len(), 0..24),
            words in proptest::collection::vec(0..WORDS.len(), 0..4),
            id in 0..IDS.len(),
        ) {
            let mut text = String::new();
            if front {
                text.push_str("---\nname: delta\n---\n");
            }
            for &i in &picks {
                text.push_str(LINES[i]);
                text.push('\n');
            }
            let tok = Tokenizer::new();
            let mut chosen: Vec<&str> = words.iter().map(|&i| WORDS[i]).collect();
            chosen.dedup();
            let exp = expansions(&tok, &chosen);
            let refs: Vec<&[String]> = exp.iter().map(|e| e.as_slice()).collect();
            proptest::prop_assert_eq!(
                together(&tok, IDS[id], &text, &refs),
                together_by_layout(&tok, IDS[id], &text, &refs),
                "{:?} {:?}", text, chosen
            );
        }
    }
}
