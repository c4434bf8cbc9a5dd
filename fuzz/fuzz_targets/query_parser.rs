//! The tokenizer on arbitrary text (the bytes as UTF-8, lossily). `query_terms` must never panic
//! and must return at most `MAX_QUERY_TERMS` terms, none empty, none over `MAX_TERM_BYTES` bytes
//! (term and surface), no duplicate `term`, a CJK term equal to its surface, and
//! `last_is_prefix` false when there is no term; it must give the same answer twice (the stem
//! cache must not change results). `index_terms` on the same text must give no empty term and
//! none over `MAX_TERM_BYTES`, and every query term must be among them ("query terms meet index
//! terms"); so must every part kept aside for a word with case humps (at most `MAX_PARTS`).
//! The closed forms of words written in two pieces (`index::compound`), on the index side and
//! the question's, must be lower-case ASCII letters of `MIN_CLOSED_LETTERS..=MAX_TERM_BYTES`,
//! each made of its two pieces, at most `MAX_PAIRS` pairs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mnemon::index::compound::{MAX_PAIRS, MIN_CLOSED_LETTERS, for_each_hyphened, for_each_pair};
use mnemon::index::tokenize::{MAX_PARTS, MAX_QUERY_TERMS, MAX_TERM_BYTES, Tokenizer};
use std::collections::HashSet;
use std::sync::OnceLock;

static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let t = TOKENIZER.get_or_init(Tokenizer::new);
    let text = String::from_utf8_lossy(data);

    let q = t.query_terms(&text);
    assert!(
        q.terms.len() <= MAX_QUERY_TERMS,
        "{} query terms",
        q.terms.len()
    );
    let mut seen = HashSet::new();
    for qt in &q.terms {
        assert!(!qt.term.is_empty(), "empty query term: {q:?}");
        assert!(
            qt.term.len() <= MAX_TERM_BYTES,
            "query term of {} bytes: {:?}",
            qt.term.len(),
            qt.term
        );
        assert!(!qt.surface.is_empty(), "empty surface: {qt:?}");
        assert!(
            qt.surface.len() <= MAX_TERM_BYTES,
            "surface of {} bytes: {:?}",
            qt.surface.len(),
            qt.surface
        );
        assert!(
            seen.insert(qt.term.as_str()),
            "duplicate query term {:?}",
            qt.term
        );
        if qt.cjk {
            assert_eq!(qt.term, qt.surface, "CJK term differs from its surface");
        }
        assert!(
            qt.parts.len() <= MAX_PARTS,
            "{} parts: {qt:?}",
            qt.parts.len()
        );
        for p in &qt.parts {
            assert!(
                !p.term.is_empty() && p.term.len() <= MAX_TERM_BYTES,
                "part {p:?}"
            );
        }
    }
    if q.terms.is_empty() {
        assert!(!q.last_is_prefix, "prefix flag without terms");
    }
    assert_eq!(t.query_terms(&text), q, "second parse differs");

    let mut idx = Vec::new();
    t.index_terms(&text, &mut idx);
    for term in &idx {
        assert!(!term.is_empty(), "empty index term");
        assert!(
            term.len() <= MAX_TERM_BYTES,
            "index term of {} bytes: {term:?}",
            term.len()
        );
    }
    let closed_ok = |w: &str| {
        (MIN_CLOSED_LETTERS..=MAX_TERM_BYTES).contains(&w.len())
            && w.bytes().all(|b| b.is_ascii_lowercase())
    };
    for_each_hyphened(&text, |w| assert!(closed_ok(w), "closed form {w:?}"));
    let mut pairs = 0;
    for_each_pair(&text, |a, b, w, _hyphened| {
        pairs += 1;
        assert!(
            closed_ok(w) && w == format!("{a}{b}"),
            "pair {a:?} {b:?} -> {w:?}"
        );
    });
    assert!(pairs <= MAX_PAIRS, "{pairs} pairs");
    let idx: HashSet<&str> = idx.iter().map(String::as_str).collect();
    for qt in &q.terms {
        assert!(
            idx.contains(qt.term.as_str()),
            "query term {:?} not among the index terms of the same text",
            qt.term
        );
        for p in &qt.parts {
            assert!(
                idx.contains(p.term.as_str()),
                "part {:?} of {:?} not among the index terms",
                p.term,
                qt.term
            );
        }
    }
});
