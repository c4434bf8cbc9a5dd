//! Which indexed terms does a query word stand for? Typo (Levenshtein DFA) and prefix expansion
//! over the segments' dictionaries, remembered per index so that repeated words cost one lookup.

use super::*;
use crate::index::tokenize::{QueryTerm, QueryTerms, Tokenizer};
use fst::{Automaton, IntoStreamer, Streamer};
use std::collections::HashMap;
use std::sync::Arc;

/// Longest query term (chars) given typo tolerance: Levenshtein automata grow with length.
pub const MAX_FUZZY_TERM_CHARS: usize = 24;

/// Dictionary terms an expansion found, with their document frequency summed over the segments
/// whose streams listed them (from the dictionary value at hand, not a second lookup). Each
/// segment's stream lists every term of the expansion it holds, so the sums are the terms' full
/// document frequencies unless a stream was cut short (`complete` false): then they are looked
/// up again.
pub(super) struct Found {
    df: HashMap<String, u64>,
    complete: bool,
}

impl Default for Found {
    fn default() -> Self {
        Found {
            df: HashMap::new(),
            complete: true,
        }
    }
}

impl Found {
    fn add(&mut self, l: &Live, term: &str, off: u64) {
        // A joined identifier is asked for only as the question writes it, never as the typo or
        // the completion of a word (`index::joined`).
        if crate::index::joined::is_joined_term(term) {
            return;
        }
        *self.df.entry(term.to_string()).or_default() += l.live_df_at(off);
    }
}

/// The Levenshtein DFA builders (distance 1 and 2, transposition costs 1), built once: building
/// a builder is costly, building a DFA from one is cheap (fst's own Levenshtein type builds its
/// whole DFA eagerly, for every query term).
pub(super) fn typo_builder(dist: u8) -> &'static levenshtein_automata::LevenshteinAutomatonBuilder {
    static ONE: std::sync::OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> =
        std::sync::OnceLock::new();
    static TWO: std::sync::OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> =
        std::sync::OnceLock::new();
    let cell = if dist <= 1 { &ONE } else { &TWO };
    cell.get_or_init(|| levenshtein_automata::LevenshteinAutomatonBuilder::new(dist.min(2), true))
}

/// Build the typo DFA builders on this thread, now (see [`crate::build_process_tables`]).
pub(crate) fn build_typo_builders() {
    typo_builder(1);
    typo_builder(2);
}

/// Build the typo DFA builders on a background thread, so the first query that needs one does
/// not pay for it (called when an index is opened).
pub fn warm_typo_builders() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(|| {
            typo_builder(1);
            typo_builder(2);
        });
    });
}

/// A Levenshtein DFA as an fst automaton.
pub(super) struct TypoAutomaton(levenshtein_automata::DFA);

impl fst::Automaton for TypoAutomaton {
    type State = u32;
    fn start(&self) -> u32 {
        self.0.initial_state()
    }
    fn is_match(&self, state: &u32) -> bool {
        matches!(
            self.0.distance(*state),
            levenshtein_automata::Distance::Exact(_)
        )
    }
    fn can_match(&self, state: &u32) -> bool {
        *state != levenshtein_automata::SINK_STATE
    }
    fn accept(&self, state: &u32, byte: u8) -> u32 {
        self.0.transition(*state, byte)
    }
}

/// Whether a typo candidate has the word's digits: a code or version differs by its digits
/// (`err4471` is not `err4470`, `pg16` not `pg15`), so a typo is tolerated in letters only.
fn same_digits(candidate: &str, word: &str) -> bool {
    fn digits(s: &str) -> impl Iterator<Item = u8> + '_ {
        s.bytes().filter(u8::is_ascii_digit)
    }
    digits(candidate).eq(digits(word))
}

/// The letter before a place where a letter was left out, doubled (a double letter typed once),
/// unless it is a vowel: vowels are tried anyway, and a doubled one makes no word (`hadliing`
/// stems as `had`).
fn doubled(before: u8) -> Option<u8> {
    (!DROPPED_LETTERS.contains(&before)).then_some(before)
}

/// How many leading bytes of `bytes` some term of `fst` starts with, and the node they reach.
fn walk<'f, D: AsRef<[u8]>>(
    fst: &'f fst::raw::Fst<D>,
    bytes: &[u8],
) -> (usize, fst::raw::Node<'f>) {
    let mut node = fst.root();
    for (i, &b) in bytes.iter().enumerate() {
        match node.find_input(b) {
            Some(t) => node = fst.node(node.transition(t).addr),
            None => return (i, node),
        }
    }
    (bytes.len(), node)
}

/// The bit of an ASCII lower-case letter in a set of letters (`a` bit 0), no bit for others.
fn letter_bit(b: u8) -> u32 {
    if b.is_ascii_lowercase() {
        1 << (b - b'a')
    } else {
        0
    }
}

/// The letters tried where a typo may have left one out (see `LexicalIndex::fuzzy`), besides
/// the letter before (a double letter typed once).
const DROPPED_LETTERS: &[u8] = b"aeiou";

/// The keys around each letter on a QWERTY keyboard (`a` first): a finger meant for one of them
/// hits that letter instead, so where a typo has a wrong letter the word meant has one of these
/// (or a vowel, see [`DROPPED_LETTERS`]) in its place.
const KEY_NEIGHBOURS: [&[u8]; 26] = [
    b"qwsz", b"vghn", b"xdfv", b"serfcx", b"wsdr", b"drtgvc", b"ftyhbv", b"gyujnb", b"ujko",
    b"huikmn", b"jiolm", b"kop", b"njk", b"bhjm", b"iklp", b"ol", b"wa", b"edft", b"awedxz",
    b"rfgy", b"yhji", b"cfgb", b"qase", b"zsdc", b"tghu", b"asx",
];

/// The shortest stem in which a wrong letter is looked for (see `LexicalIndex::fuzzy`).
const MIN_WRONG_LETTER_STEM_CHARS: usize = 6;

/// The letters a stem of a word of [`MIN_WRONG_LETTER_STEM_CHARS`] letters or more keeps at
/// least (`running` stems as `run`): a wrong letter is put right only in a word whose first
/// letters as many start some term of the memory.
const WRONG_LETTER_STEM_PREFIX: usize = 3;

/// At most this many terms starting with a prefix are gathered before the most frequent are
/// taken (a prefix of two letters starts thousands in a large memory).
const PREFIX_SCAN_TERMS: usize = 256;

/// At most this many expansions (typo or prefix, per query term) are remembered per index.
pub const EXPANSION_CACHE_TERMS: usize = 4096;

/// Typo and prefix expansions of query terms, remembered for the life of one index (they depend
/// only on its dictionary, which never changes; an update opens a new index). Finding one walks
/// the dictionary with a Levenshtein automaton built for the term, work that grows with the
/// dictionary and the distance, and an agent's queries repeat their words.
pub(super) struct ExpansionCache(
    pub(super) quick_cache::sync::Cache<(ExpansionKind, String), Arc<[String]>>,
);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum ExpansionKind {
    Typo,
    Prefix,
}

impl Default for ExpansionCache {
    fn default() -> Self {
        ExpansionCache(quick_cache::sync::Cache::new(EXPANSION_CACHE_TERMS))
    }
}

impl ExpansionCache {
    fn get_or_find(
        &self,
        kind: ExpansionKind,
        term: &str,
        find: impl FnOnce() -> Vec<String>,
    ) -> Arc<[String]> {
        let key = (kind, term.to_string());
        if let Some(found) = self.0.get(&key) {
            return found;
        }
        let found: Arc<[String]> = find().into();
        self.0.insert(key, found.clone());
        found
    }
}

impl LexicalIndex {
    /// How each query term matches the dictionary: exact, else typo-tolerant (Levenshtein
    /// distance 1 for 5+ chars, 2 for 9+, same first character; or the stem of the word with a
    /// letter left out, two swapped or one put back, see [`LexicalIndex::fuzzy`]), plus prefix
    /// expansions of an unfinished last term. `tok` stems those variants of the word.
    pub fn expand(&self, q: &QueryTerms, tok: &Tokenizer) -> Vec<TermMatch> {
        let n = q.terms.len();
        q.terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut expansions = Vec::new();
                let term_df = self.df(t.term.as_bytes());
                let exact = term_df > 0;
                if exact {
                    expansions.push((t.term.clone(), 1.0));
                } else if !t.cjk {
                    // Keyed by the word as written: the words with a letter left out depend on it.
                    let typos =
                        self.expansions
                            .get_or_find(ExpansionKind::Typo, &t.surface, || self.fuzzy(t, tok));
                    for e in typos.iter() {
                        expansions.push((e.clone(), crate::index::scoring::FUZZY_TERM_WEIGHT));
                    }
                }
                // An unfinished last word: complete it, unless it already is a word here.
                if i + 1 == n && q.last_is_prefix && !t.cjk && !exact {
                    let completions =
                        self.expansions
                            .get_or_find(ExpansionKind::Prefix, &t.surface, || {
                                self.prefixed(&t.surface)
                            });
                    for e in completions.iter() {
                        if !expansions.iter().any(|(x, _)| x == e) {
                            expansions.push((e.clone(), crate::index::scoring::PREFIX_TERM_WEIGHT));
                        }
                    }
                }
                let first_df = match expansions.first() {
                    _ if exact => term_df,
                    Some((first, _)) => self.df(first.as_bytes()),
                    None => 0,
                };
                TermMatch {
                    term: t.term.clone(),
                    expansions,
                    first_df,
                }
            })
            .collect()
    }

    /// The question with each word written with case humps that the memory does not hold as a
    /// whole (`maxClientConn` where the notes write `max_client_conn`) asked as its parts (at
    /// least two, stop words left out), which the index holds for every such word it has seen.
    /// Other words are left as they are.
    pub fn split_unknown_compounds(&self, mut q: QueryTerms) -> QueryTerms {
        if q.terms.iter().all(|t| t.parts.is_empty()) {
            return q;
        }
        let n = q.terms.len();
        let mut out: Vec<QueryTerm> = Vec::with_capacity(n + 4);
        let push = |out: &mut Vec<QueryTerm>, t: QueryTerm| {
            if out.len() < crate::index::tokenize::MAX_QUERY_TERMS
                && !out.iter().any(|x| x.term == t.term)
            {
                out.push(t);
            }
        };
        for (i, t) in std::mem::take(&mut q.terms).into_iter().enumerate() {
            // One part left (`MySQL` -> `sql`) says too little to stand for the whole word.
            if t.parts.len() < 2 || self.df(t.term.as_bytes()) > 0 {
                push(&mut out, t);
                continue;
            }
            if i + 1 == n {
                // The parts are whole words the question wrote, not an unfinished one.
                q.last_is_prefix = false;
            }
            for p in t.parts {
                push(
                    &mut out,
                    QueryTerm {
                        term: p.term,
                        surface: p.surface,
                        cjk: false,
                        parts: Vec::new(),
                    },
                );
            }
        }
        q.terms = out;
        q
    }

    /// Live documents holding `term`.
    pub(crate) fn df(&self, term: &[u8]) -> u64 {
        self.segments
            .iter()
            .filter_map(|l| l.seg.term_offset(term).map(|o| l.live_df_at(o)))
            .sum()
    }

    /// Dictionary terms within the allowed edit distance of `t`'s stem (of 5+ characters), and
    /// the stems of `t` with one letter left out, two neighbouring letters swapped, a vowel or
    /// a double letter put in, or (in a stem of 6+ characters) one letter changed to a key next
    /// to it or a vowel (an English word, not before its first letter), most frequent first.
    /// The second catch typos that change the stem's form, not just a letter of it: `flakey` is
    /// two edits from `flaki` (the stem of `flaky`), `flaky` one from `flakey`.
    pub(super) fn fuzzy(&self, t: &QueryTerm, tok: &Tokenizer) -> Vec<String> {
        let chars = t.term.chars().count();
        if chars > MAX_FUZZY_TERM_CHARS {
            return Vec::new();
        }
        let word = t.surface.as_bytes();
        // A stem under 5 characters has too many neighbours a letter away to guess from: a word
        // spelled right (`tires`, `roles`, `movie`) is as likely as a typo. Only a letter put
        // back into a word of 6 letters or more is tried (`tesing`, `biling`, `montly`,
        // `limting`: the stemmer cut the typo short of the word's stem), or a doubled letter
        // typed once (`writting`); in shorter ones it reads words spelled right as others
        // (`shoes` as `showes`, `roles` as `rolles`).
        if chars < 5 {
            let mut found = Found::default();
            if word.len() >= 6 && word.iter().all(u8::is_ascii_lowercase) {
                self.letter_put_back(t, tok, chars, &mut found);
                self.letter_typed_twice(t, tok, &mut found);
            }
            found.df.retain(|term, _| same_digits(term, &t.term));
            return self.top_by_df(found);
        }
        let dist = if chars >= 9 { 2 } else { 1 };
        // The first characters must match (Lucene's `prefixLength`): typos there are rare, and
        // it confines the DFA to one branch of the dictionary instead of all of it.
        let fixed: String = t
            .term
            .chars()
            .take(crate::index::scoring::FUZZY_PREFIX_CHARS)
            .collect();
        let aut = fst::automaton::Str::new(&fixed)
            .starts_with()
            .intersection(TypoAutomaton(typo_builder(dist).build_dfa(&t.term)));
        let mut found = Found::default();
        for l in &self.segments {
            let mut s = l.seg.terms().search(&aut).into_stream();
            while let Some((k, off)) = s.next() {
                if let Ok(k) = std::str::from_utf8(k) {
                    found.add(l, k, off);
                }
                if found.df.len() > 64 {
                    found.complete = false;
                    break;
                }
            }
        }
        if found.complete && word.len() >= 5 && word.iter().all(u8::is_ascii_lowercase) {
            let fixed = crate::index::scoring::FUZZY_PREFIX_CHARS;
            let mut variant = String::with_capacity(word.len());
            let look_up =
                |variant: &str, found: &mut Found| self.look_up_variant(t, tok, variant, found);
            // One letter left out: a letter typed twice or one too many.
            for skip in fixed..word.len() {
                if skip > 0 && word[skip] == word[skip - 1] {
                    continue; // the same word as leaving out the letter before
                }
                variant.clear();
                variant.push_str(&t.surface[..skip]);
                variant.push_str(&t.surface[skip + 1..]);
                look_up(&variant, &mut found);
            }
            // Two neighbouring letters swapped back (`failvoer`): one edit on the stems only
            // when the swap is inside the stem, which the suffix a stemmer cuts often is not.
            for at in fixed..word.len() - 1 {
                if word[at] == word[at + 1] {
                    continue;
                }
                variant.clear();
                variant.push_str(&t.surface[..at]);
                variant.push(char::from(word[at + 1]));
                variant.push(char::from(word[at]));
                variant.push_str(&t.surface[at + 2..]);
                look_up(&variant, &mut found);
            }
            // A letter left out (`compresion`, `threshld`, `elction`): the stems of the typo and
            // the word differ by more than that letter once the stemmer no longer sees the
            // suffix, or strips one from the word that it cannot find in the typo (`election`
            // stems as `elect`, `elction` as itself). The letters typists drop are mostly vowels,
            // or the second of a double letter. Tried anywhere after the first letter (right
            // after it too: `srvices`), even when a term one edit from the typo's stem was
            // found: `contactles` stems as `contactl`, one edit from `contact`, but it is
            // `contactless` that the typist meant.
            for at in fixed..=word.len() {
                let before = word[at - 1];
                let double = doubled(before);
                for letter in DROPPED_LETTERS.iter().copied().chain(double) {
                    if word.get(at) == Some(&letter) {
                        continue; // the same word as putting it in one place later
                    }
                    variant.clear();
                    variant.push_str(&t.surface[..at]);
                    variant.push(char::from(letter));
                    variant.push_str(&t.surface[at..]);
                    look_up(&variant, &mut found);
                }
            }
            // A wrong letter (`rotatipn`, `intwgration`): a key next to the one meant, or a
            // vowel for another. Not in a shorter stem: there a word spelled right that the
            // memory does not hold is as often one wrong letter from another that it does.
            if chars >= MIN_WRONG_LETTER_STEM_CHARS {
                self.wrong_letter(t, tok, &mut found);
            }
        }
        found.df.retain(|term, _| same_digits(term, &t.term));
        self.top_by_df(found)
    }

    /// `t`'s word (ASCII lower case, its stem six letters or more) with one letter after the
    /// first changed to a vowel or a key next to it (`rotatipn` -> `rotation`): where the
    /// stemmer no longer finds the suffix, the typo's stem is more than one edit from the
    /// word's (`rotatipn` against `rotat`). The stem of the word meant starts with its first
    /// [`WRONG_LETTER_STEM_PREFIX`] letters: a change after them needs those to start some term
    /// of the memory, a change among them a term going on with the letter put there (a word of
    /// letters at random asks few lookups).
    fn wrong_letter(&self, t: &QueryTerm, tok: &Tokenizer, found: &mut Found) {
        let word = t.surface.as_bytes();
        let known = self.known_prefix_len(word);
        let mut variant = String::with_capacity(word.len());
        for at in crate::index::scoring::FUZZY_PREFIX_CHARS..word.len() {
            if at > known && known < WRONG_LETTER_STEM_PREFIX {
                break;
            }
            let next = if at < WRONG_LETTER_STEM_PREFIX {
                self.next_letters(&word[..at])
            } else {
                u32::MAX
            };
            let typed = word[at];
            let near = KEY_NEIGHBOURS[usize::from(typed - b'a')];
            let others = near.iter().filter(|l| !DROPPED_LETTERS.contains(l));
            for &letter in DROPPED_LETTERS.iter().chain(others) {
                if letter == typed || next & letter_bit(letter) == 0 {
                    continue; // the word as written, or no term goes on so
                }
                variant.clear();
                variant.push_str(&t.surface[..at]);
                variant.push(char::from(letter));
                variant.push_str(&t.surface[at + 1..]);
                self.look_up_variant(t, tok, &variant, found);
            }
        }
    }

    /// Adds the stem of `variant`, another spelling of `t`'s word, to `found` when the memory
    /// holds it.
    fn look_up_variant(&self, t: &QueryTerm, tok: &Tokenizer, variant: &str, found: &mut Found) {
        let stem = tok.stem_word(variant);
        if stem == t.term || found.df.contains_key(&stem) {
            return;
        }
        for l in &self.segments {
            if let Some(off) = l.seg.term_offset(stem.as_bytes()) {
                found.add(l, &stem, off);
            }
        }
    }

    /// `t`'s word (ASCII lower case, its stem `stem_chars` long) with a letter put back after
    /// its first letter and within its stem: the typo of a letter left out. Only letters some
    /// term of the memory has after the letters before are tried, as the stem of the word put
    /// right starts with them, and the consonant before doubled, which the stemmer may take
    /// off again (`caping` -> `capping` -> `cap`).
    fn letter_put_back(
        &self,
        t: &QueryTerm,
        tok: &Tokenizer,
        stem_chars: usize,
        found: &mut Found,
    ) {
        let word = t.surface.as_bytes();
        let mut variant = String::with_capacity(word.len() + 1);
        let last = word.len().min(stem_chars + 1);
        for at in crate::index::scoring::FUZZY_PREFIX_CHARS..=last {
            let double = doubled(word[at - 1]).map_or(0, letter_bit);
            let next = self.next_letters(&word[..at]) | double;
            for letter in b'a'..=b'z' {
                if next & (1 << (letter - b'a')) == 0 || word.get(at) == Some(&letter) {
                    continue; // no term goes on so, or the same word as one place later
                }
                variant.clear();
                variant.push_str(&t.surface[..at]);
                variant.push(char::from(letter));
                variant.push_str(&t.surface[at..]);
                self.look_up_variant(t, tok, &variant, found);
            }
        }
    }

    /// `t`'s word (ASCII lower case, six letters or more, its stem under five) with a doubled
    /// letter typed once, after its first letter (`writting` -> `writing`): the stemmer cut the
    /// typo short (`writ`) of the word's stem. Two letters swapped back are not tried here: in
    /// a short stem they make one word spelled right of another (`farming`, `framing`).
    fn letter_typed_twice(&self, t: &QueryTerm, tok: &Tokenizer, found: &mut Found) {
        let word = t.surface.as_bytes();
        let fixed = crate::index::scoring::FUZZY_PREFIX_CHARS;
        let mut variant = String::with_capacity(word.len());
        for at in fixed..word.len() - 1 {
            if word[at] == word[at + 1] {
                variant.clear();
                variant.push_str(&t.surface[..at]);
                variant.push_str(&t.surface[at + 1..]);
                self.look_up_variant(t, tok, &variant, found);
            }
        }
    }

    /// The length of the longest start of `word` that starts some term of a segment's
    /// dictionary.
    fn known_prefix_len(&self, word: &[u8]) -> usize {
        self.segments
            .iter()
            .map(|l| walk(l.seg.terms().as_fst(), word).0)
            .max()
            .unwrap_or(0)
    }

    /// The ASCII letters (bit 0 for `a`, see [`letter_bit`]) that follow `prefix` in some
    /// segment's dictionary.
    fn next_letters(&self, prefix: &[u8]) -> u32 {
        let mut letters = 0u32;
        for l in &self.segments {
            let (matched, node) = walk(l.seg.terms().as_fst(), prefix);
            if matched == prefix.len() {
                for tr in node.transitions() {
                    letters |= letter_bit(tr.inp);
                }
            }
        }
        letters
    }

    /// Dictionary terms starting with `prefix` (other than `prefix` itself), most frequent first.
    pub(super) fn prefixed(&self, prefix: &str) -> Vec<String> {
        if prefix.chars().count() < 2 {
            return Vec::new();
        }
        let aut = fst::automaton::Str::new(prefix).starts_with();
        let mut found = Found::default();
        for l in &self.segments {
            let mut s = l.seg.terms().search(aut.clone()).into_stream();
            while let Some((k, off)) = s.next() {
                if k != prefix.as_bytes()
                    && let Ok(k) = std::str::from_utf8(k)
                {
                    found.add(l, k, off);
                }
                if found.df.len() > PREFIX_SCAN_TERMS {
                    found.complete = false;
                    break;
                }
            }
        }
        self.top_by_df(found)
    }

    /// Joined identifiers of the dictionary (see [`crate::index::joined`]) that go on from
    /// `whole` after a joiner, most frequent first, at most
    /// [`crate::index::scoring::MAX_EXPANSIONS_PER_TERM`]: the notes write the version or the
    /// path the question names, longer (`24.11` as `24.11.x` or `24.11.2`, `db/clickhouse` as
    /// `db/clickhouse/migrations`).
    pub fn joined_longer(&self, whole: &str) -> Vec<String> {
        let aut = fst::automaton::Str::new(whole).starts_with();
        // Gathered past `Found::add`, which leaves joined terms out.
        let mut found = Found::default();
        'segments: for l in &self.segments {
            let mut s = l.seg.terms().search(aut.clone()).into_stream();
            while let Some((k, off)) = s.next() {
                let goes_on = k
                    .get(whole.len())
                    .is_some_and(|&b| crate::index::joined::is_joiner(b));
                if goes_on && let Ok(k) = std::str::from_utf8(k) {
                    *found.df.entry(k.to_string()).or_default() += l.live_df_at(off);
                }
                if found.df.len() > PREFIX_SCAN_TERMS {
                    found.complete = false;
                    break 'segments;
                }
            }
        }
        self.top_by_df(found)
    }

    /// The most frequent of the `found` terms.
    pub(super) fn top_by_df(&self, found: Found) -> Vec<String> {
        let complete = found.complete;
        let mut v: Vec<(u64, String)> = found
            .df
            .into_iter()
            .map(|(t, df)| (if complete { df } else { self.df(t.as_bytes()) }, t))
            // A term only deleted documents hold is not in a clean build's dictionary.
            .filter(|(df, _)| *df > 0)
            .collect();
        v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        v.truncate(crate::index::scoring::MAX_EXPANSIONS_PER_TERM);
        v.into_iter().map(|(_, t)| t).collect()
    }
}
