//! The terms of a run of CJK chars, written without spaces between words: its overlapping
//! bigrams, and for indexing every single char too, so that a question of one char finds it.

/// Index terms of a CJK run: `c0, c0c1, c1, c1c2, ..., c(n-1)`; a one-char run gives `c0`.
pub(super) fn for_each_cjk_index_term(run: &str, mut f: impl FnMut(&str)) {
    let mut chars = run.char_indices();
    if chars.next().is_none() {
        return;
    }
    let mut prev = 0;
    for (i, c) in chars {
        f(&run[prev..i]);
        f(&run[prev..i + c.len_utf8()]);
        prev = i;
    }
    f(&run[prev..]);
}

/// Query terms of a CJK run: its bigrams, or the single char of a one-char run.
pub(super) fn for_each_cjk_query_term(run: &str, mut f: impl FnMut(&str)) {
    let mut chars = run.char_indices();
    if chars.next().is_none() {
        return;
    }
    let mut prev = 0;
    let mut any = false;
    for (i, c) in chars {
        f(&run[prev..i + c.len_utf8()]);
        prev = i;
        any = true;
    }
    if !any {
        f(run);
    }
}
