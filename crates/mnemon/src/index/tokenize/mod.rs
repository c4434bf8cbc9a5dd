//! Tokenizer for the lexical index: turns note text, node ids/slugs and queries into terms.
//!
//! Rules (identical for indexing and querying, so that query terms meet index terms):
//!
//! * **Segmentation.** Words are found with Unicode word segmentation (UAX #29,
//!   `unicode_word_indices`); only segments containing an alphanumeric char count, so
//!   whitespace, punctuation, symbols and emoji vanish. For speed, all-ASCII lines and chunks, and
//!   CJK chars, take shortcuts that give the same result as segmenting (a test checks this on
//!   random mixed-script text).
//! * **Splitting inside a segment.** Segmentation glues `pool_size`, `v1.2`, `a.b`, `S:t`, `1,000`.
//!   Inside a segment every ASCII char that is not alphanumeric (`-` `_` `.` `/` `:` `,` `;` ...)
//!   and the Unicode word-joining punctuation (middle dots, narrow no-break space, `‿`, ...) split
//!   the word. Hence `max_client_conn` -> `max`, `client`, `conn`; `v1.2` -> `v1`, `2`;
//!   `3.14` -> `3`, `14`; `3,14` -> `3`, `14`. The commas of a number written with thousands
//!   separators are removed ([`thousands_comma`]): `1,000` -> `1000`, `12,500,000` -> `12500000`,
//!   the number written without them.
//! * **Removed inside a word.** Apostrophes (`'`, `‘`, `’`, `ʼ`) and invisible format chars (soft
//!   hyphen, zero-width space/joiners, BOM) are *removed* without splitting: `don't` -> `dont`,
//!   `PgBouncer's` -> `pgbouncers` -> (stem) `pgbouncer`. A zero-width space between two letters
//!   or digits, where segmentation breaks, is removed too (the segment after it goes on with the
//!   same word): `data\u{200B}base` -> `database`. So is the break before a digit written raised
//!   or lowered after a letter: `CO₂` -> `co2`, `H₂O` -> `h2o`, `m²` -> `m2` (not after a digit:
//!   `10⁶` -> `10`, `6`). A contraction that would make another word closed up (`'ll 'd 're 've
//!   'm` ending a word after a letter) is dropped with its apostrophe: `we'll` -> `we` (not
//!   `well`), `she'll` -> `she` (not `shell`), `I'd` -> `i` (not `id`), `CC'd` -> `cc`.
//! * **Script changes.** Within a segment, a change between CJK and non-CJK chars also splits
//!   (segmentation glues e.g. Latin + Hangul), so `PgBouncer连接池配置` yields `pgbouncer` and
//!   CJK terms.
//! * **Folding.** Fullwidth ASCII forms (`Ｐｇ１`) are mapped to ASCII, then every char is
//!   lowercased with `char::to_lowercase` (char by char; the final sigma `ς` is folded to `σ`,
//!   as Unicode case folding does) and loses its accents ([`fold_accents`]: combining marks
//!   U+0300..=U+036F, written apart or precomposed; `ß æ œ þ ø ł đ ð ı ħ ŧ` spelled
//!   `ss ae oe th o l d d i h t`), so `résumé`, `resume` and the decomposed form macOS gives file
//!   names are one word. A letter or digit written in a compatibility form (the ligatures `ﬁ ﬂ ﬀ`
//!   of text copied from a PDF, `ſ`, the micro sign `µ`, superscripts, mathematical letters
//!   `𝐝𝐞𝐩𝐥𝐨𝐲`, Arabic presentation forms) is the letters and digits it stands for (its
//!   compatibility decomposition, when that holds only letters, digits and accents: `½` stays).
//!   A word left all ASCII is an ASCII word (`café` is stemmed as `cafe`, `ﬁrewall` as
//!   `firewall`).
//! * **Case humps.** A word written with case humps (a capital after a lowercase letter or a
//!   digit, or the last capital of a run followed by a lowercase letter: `ElastiCache`,
//!   `maxClientConn`, `HTTPServer`, `utf8String`, `500MB`) is indexed whole and then in its parts
//!   (`elasticach`, `elasti`, `cach`), at most [`MAX_PARTS`], parts of one char left out, so that
//!   `cache`, `max client conn` and `max_client_conn` find it. A number with letters glued after
//!   it has a hump between them whatever their case (`500ms` and `500MS` give `500` and `ms`, as
//!   `500 ms` writes them). A query keeps the whole word as its term and its parts aside
//!   ([`QueryTerm::parts`], stop words left out); recall asks for the parts when the memory does
//!   not hold the whole word. Only ASCII letters and digits make humps.
//! * **Stemming.** Words made only of ASCII letters and longer than 2 bytes are stemmed with the
//!   Snowball English stemmer (`deploying`, `deployed`, `deploys` -> `deploy`), after British
//!   spellings are folded to American ones (`normalisation` -> `normalization` -> `normal`,
//!   `colour` -> `color`; see `index::spelling`). Words with digits
//!   (`2026`, `v1`, `ipv4`) or non-ASCII letters (`сервер`, `μνήμη`) are kept folded but unstemmed.
//!   Numbers are ordinary terms.
//! * **CJK** (Han, Hiragana, Katakana, Hangul, Bopomofo; decided by code-point ranges). A maximal
//!   run of adjacent CJK chars (adjacent in the source text, possibly spanning several segments)
//!   gives its overlapping bigrams (`数据库连接` -> `数据 据库 库连 连接`); a run of one char gives
//!   that char. For indexing, runs longer than one also give every single char, interleaved in
//!   order of appearance (`c0, c0c1, c1, c1c2, c2`) so that one-char queries match. Queries use
//!   only the bigrams (or the single char of a one-char run).
//! * **Length.** A word is truncated to [`MAX_TERM_BYTES`] bytes at a char boundary *before*
//!   stemming (the stem is then truncated again, defensively). Empty terms are never produced.
//! * **Stop words** (a compact English list of ~140 words, matched on the folded, unstemmed form)
//!   are kept when indexing and dropped from queries, unless the query holds nothing else.
//!
//! Query parsing additionally deduplicates terms (first appearance wins), caps them at
//! [`MAX_QUERY_TERMS`] and reports whether the last term may be an unfinished word
//! ([`QueryTerms::last_is_prefix`]).
//!
//! [`thousands_comma`]: word_rules::thousands_comma
//! [`fold_accents`]: fold::fold_accents

mod cjk;
mod fold;
mod scan;
mod stem;
mod stop_words;
#[cfg(test)]
mod tests;
mod word_rules;

use std::fmt;

use rust_stemmers::{Algorithm, Stemmer};

use cjk::{for_each_cjk_index_term, for_each_cjk_query_term};
use scan::{Token, scan};

pub(crate) use fold::{fold_word_into, is_accent};
pub(super) use stem::pack16;
pub(crate) use stop_words::is_stop_word;
pub(crate) use word_rules::{is_apostrophe, is_removed_in_word};

/// Max bytes of a single term kept (longer words are truncated at a char boundary): a limit on everything.
pub const MAX_TERM_BYTES: usize = 64;
/// Max query terms kept (the rest are ignored).
pub const MAX_QUERY_TERMS: usize = 32;

/// Most parts a word is split into at its case humps (`scaleDownDelaySeconds` -> `scale`, `down`,
/// `delay`, `seconds`); humps past the last are ignored.
pub const MAX_PARTS: usize = 8;
/// Shortest part kept (`iPhone` gives `phone`, not `i`).
const MIN_PART_BYTES: usize = 2;

/// A tokenizer configured once (holds the English stemmer). Cheap to share (&self methods), Send + Sync.
///
/// Stems of words up to 16 bytes are memoised in a per-thread cache shared by all tokenizers of
/// the thread (at most 512 KB per thread, allocated on first use).
pub struct Tokenizer {
    stemmer: Stemmer,
}

/// The result of [`Tokenizer::query_terms`].
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTerms {
    /// Deduplicated (by `term`) in first-appearance order, stop words removed unless the query is
    /// only stop words, at most [`MAX_QUERY_TERMS`].
    pub terms: Vec<QueryTerm>,
    /// True when `terms.last()` comes from the very last word of the query, that word is directly
    /// followed by the end of the query text (no whitespace or punctuation after it), it is not CJK
    /// and its folded form has at least 2 chars. False for an empty term list, and also when that
    /// last word was dropped (stop word), merged into an earlier duplicate, or cut by the cap.
    pub last_is_prefix: bool,
    /// Where reading the question stopped when it holds more than [`MAX_QUERY_TERMS`] distinct
    /// terms (stop words aside): the byte offset just past the last word before the first term
    /// left out. `None` when every term was kept.
    pub read_to: Option<usize>,
}

/// The terms of [`Tokenizer::query_terms`] alone, as [`Tokenizer::query_terms_into`] writes
/// them: one buffer for all of them, reused from one text to the next, so that tokenizing many
/// short texts (the ids of a question's hits) allocates nothing once it has grown.
#[derive(Debug, Default)]
pub struct TermList {
    /// Terms that are not stop words, and stop words (kept for a text of stop words only).
    kept: Terms,
    stops: Terms,
    /// The word being normalised.
    word: String,
}

/// Terms written one after another into one string.
#[derive(Debug, Default)]
struct Terms {
    text: String,
    ends: Vec<usize>,
}

impl Terms {
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    fn get(&self, i: usize) -> &str {
        let start = i.checked_sub(1).map_or(0, |j| self.ends[j]);
        &self.text[start..self.ends[i]]
    }

    /// Add `term` unless it is there already or the list is full, as `query_terms` does.
    fn add(&mut self, term: &str) {
        if self.ends.len() < MAX_QUERY_TERMS && !(0..self.ends.len()).any(|i| self.get(i) == term) {
            self.text.push_str(term);
            self.ends.push(self.text.len());
        }
    }
}

impl TermList {
    /// How many terms there are.
    pub fn len(&self) -> usize {
        self.kept.ends.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.kept.ends.is_empty()
    }

    /// The `i`-th term; panics past [`TermList::len`].
    pub fn get(&self, i: usize) -> &str {
        self.kept.get(i)
    }

    /// The terms in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// One query term.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTerm {
    /// normalised (folded + stemmed) term, as in the index
    pub term: String,
    /// the folded but UNstemmed surface form (used for typo/prefix expansion against the dictionary)
    pub surface: String,
    /// true for a CJK bigram or CJK single char term
    pub cjk: bool,
    /// The parts of a word written with case humps (`ElastiCache` -> `elasti`, `cach`), which the
    /// index holds beside the whole word, stop words left out (`MySQL` -> `sql`); empty for other
    /// words. Recall asks for the parts instead of the whole when the memory does not hold the
    /// whole (`maxClientConn` against notes that write `max_client_conn`).
    pub parts: Vec<QueryPart>,
}

/// A part of a query word with case humps (see [`QueryTerm::parts`]).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryPart {
    /// normalised (folded + stemmed) term, as in the index
    pub term: String,
    /// the folded but unstemmed part
    pub surface: String,
}

/// A word of indexed text as [`Tokenizer::for_each_index_word`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexWord<'a> {
    /// Already an index term: folded, and not stemmed (short, with digits, non-ASCII, or CJK).
    Term(&'a str),
    /// A folded word of ASCII letters, whose index term is its stem.
    Stem(&'a str),
}

impl Tokenizer {
    /// Creates a tokenizer with the English stemmer.
    pub fn new() -> Tokenizer {
        Tokenizer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    /// Terms for indexing a field's text, in order of appearance, duplicates kept (caller counts tf).
    ///
    /// Appends to `out` (does not clear it). Stop words are kept.
    pub fn index_terms(&self, text: &str, out: &mut Vec<String>) {
        self.for_each_index_term(text, |t| out.push(t.to_owned()));
    }

    /// [`Tokenizer::index_terms`] without an allocation per term: each term is handed to `f`
    /// as it is found (a borrowed view, valid for the call only).
    pub fn for_each_index_term(&self, text: &str, mut f: impl FnMut(&str)) {
        let mut term = String::with_capacity(MAX_TERM_BYTES + 8);
        self.for_each_index_word(text, |w| f(self.term_of(w, &mut term)));
    }

    /// [`Tokenizer::for_each_index_term`] of each part of a slug (see [`Tokenizer::slug_terms`]).
    pub fn for_each_slug_term(&self, slug: &str, mut f: impl FnMut(&str)) {
        let mut term = String::with_capacity(MAX_TERM_BYTES + 8);
        self.for_each_slug_word(slug, |w| f(self.term_of(w, &mut term)));
    }

    /// The words of [`Tokenizer::for_each_index_term`] before stemming, for a caller that
    /// remembers the term of each word it has seen: a word's term is [`Tokenizer::term_of`] it,
    /// which depends on nothing but the word.
    pub fn for_each_index_word(&self, text: &str, mut f: impl FnMut(IndexWord<'_>)) {
        scan(text, |tok| match tok {
            Token::Word {
                surface,
                stem: true,
                ..
            } => f(IndexWord::Stem(surface)),
            Token::Word { surface, .. } => f(IndexWord::Term(surface)),
            Token::Cjk { run } => for_each_cjk_index_term(run, |t| f(IndexWord::Term(t))),
        });
    }

    /// [`Tokenizer::for_each_index_word`] of each part of a slug.
    pub fn for_each_slug_word(&self, slug: &str, mut f: impl FnMut(IndexWord<'_>)) {
        for part in slug.split(['/', '-', '_', '.']) {
            if !part.is_empty() {
                self.for_each_index_word(part, &mut f);
            }
        }
    }

    /// The index term of a word: the word itself, or its stem (in `buf`, cleared first).
    pub fn term_of<'w>(&self, word: IndexWord<'w>, buf: &'w mut String) -> &'w str {
        match word {
            IndexWord::Term(t) => t,
            IndexWord::Stem(w) => {
                self.normalise_into(w, true, buf);
                buf
            }
        }
    }

    /// Terms for a node id / slug such as `runbooks/pgbouncer-pool-sizing` or `snake_case_id`:
    /// split on '/', '-', '_', '.', then each part goes through the same normalisation as index_terms.
    ///
    /// Appends to `out` (does not clear it).
    pub fn slug_terms(&self, slug: &str, out: &mut Vec<String>) {
        self.for_each_slug_term(slug, |t| out.push(t.to_owned()));
    }

    /// Query parsing: returns the query terms (deduplicated, in first-appearance order), stop words removed
    /// (unless removing them would leave the query empty: then keep them), plus a flag saying whether the
    /// last term was a "prefix candidate" (the query text does not end in whitespace/punctuation after it and
    /// it is a Latin word of >= 2 chars; CJK terms are never prefix candidates).
    ///
    /// See [`QueryTerms::last_is_prefix`] for the exact definition of the flag.
    pub fn query_terms(&self, query: &str) -> QueryTerms {
        /// Non-stop terms and (for the all-stop-words fallback) stop-word terms, each
        /// deduplicated and capped independently.
        #[derive(Default)]
        struct Lists {
            kept: Vec<QueryTerm>,
            stops: Vec<QueryTerm>,
            // Did the most recently seen term get appended to `kept` / `stops`, and was it a
            // prefix candidate?
            last_in_kept: bool,
            last_in_stops: bool,
            last_candidate: bool,
            /// The byte offset just past the last word seen, and where reading stopped for
            /// `kept` and for `stops` (a question of stop words only is searched by those).
            last_end: usize,
            read_to: Option<usize>,
            stops_read_to: Option<usize>,
        }
        impl Lists {
            fn add(&mut self, list_is_stop: bool, qt: QueryTerm, candidate: bool) {
                self.last_candidate = candidate;
                self.last_in_kept = false;
                self.last_in_stops = false;
                let (list, flag) = if list_is_stop {
                    (&mut self.stops, &mut self.last_in_stops)
                } else {
                    (&mut self.kept, &mut self.last_in_kept)
                };
                if list.iter().any(|t| t.term == qt.term) {
                    return;
                }
                if list.len() < MAX_QUERY_TERMS {
                    list.push(qt);
                    *flag = true;
                } else {
                    let read_to = if list_is_stop {
                        &mut self.stops_read_to
                    } else {
                        &mut self.read_to
                    };
                    read_to.get_or_insert(self.last_end);
                }
            }
            /// The term the last word added, if it was added (not a duplicate, not over the cap).
            fn last_added(&mut self) -> Option<&mut QueryTerm> {
                if self.last_in_kept {
                    self.kept.last_mut()
                } else if self.last_in_stops {
                    self.stops.last_mut()
                } else {
                    None
                }
            }
        }
        let mut lists = Lists::default();

        scan(query, |tok| match tok {
            Token::Word {
                part: true,
                surface,
                stem,
                ..
            } => {
                // A part of the word just added: kept aside, for a question whose whole word the
                // memory does not hold (see `QueryTerm::parts`).
                let term = self.normalise(surface, stem);
                if let Some(whole) = lists.last_added()
                    && !is_stop_word(surface)
                    && whole.parts.len() < MAX_PARTS
                    && !whole.parts.iter().any(|p| p.term == term)
                {
                    whole.parts.push(QueryPart {
                        term,
                        surface: surface.to_owned(),
                    });
                }
            }
            Token::Word {
                surface, stem, end, ..
            } => {
                let candidate = end == query.len() && surface.chars().nth(1).is_some();
                let qt = QueryTerm {
                    term: self.normalise(surface, stem),
                    surface: surface.to_owned(),
                    cjk: false,
                    parts: Vec::new(),
                };
                lists.add(is_stop_word(surface), qt, candidate);
                lists.last_end = end;
            }
            Token::Cjk { run } => {
                // The run is a slice of `query`: its terms' offsets are their distance from it.
                let run_at = (run.as_ptr() as usize).wrapping_sub(query.as_ptr() as usize);
                for_each_cjk_query_term(run, |t| {
                    let qt = QueryTerm {
                        term: t.to_owned(),
                        surface: t.to_owned(),
                        cjk: true,
                        parts: Vec::new(),
                    };
                    lists.add(false, qt, false);
                    let t_end = (t.as_ptr() as usize)
                        .wrapping_sub(run.as_ptr() as usize)
                        .saturating_add(t.len());
                    if run_at <= query.len() && t_end <= run.len() {
                        lists.last_end = run_at + t_end;
                    }
                });
            }
        });

        if lists.kept.is_empty() {
            QueryTerms {
                last_is_prefix: lists.last_in_stops && lists.last_candidate,
                terms: lists.stops,
                read_to: lists.stops_read_to,
            }
        } else {
            QueryTerms {
                last_is_prefix: lists.last_in_kept && lists.last_candidate,
                terms: lists.kept,
                read_to: lists.read_to,
            }
        }
    }

    /// The `term`s of [`Tokenizer::query_terms`] of `query`, in the same order, into `out`
    /// (cleared first); without their surfaces and parts, and without an allocation per term.
    pub fn query_terms_into(&self, query: &str, out: &mut TermList) {
        let TermList { kept, stops, word } = out;
        kept.clear();
        stops.clear();
        scan(query, |tok| match tok {
            // Parts of a word with case humps are no terms of their own.
            Token::Word { part: true, .. } => {}
            Token::Word { surface, stem, .. } => {
                self.normalise_into(surface, stem, word);
                if is_stop_word(surface) {
                    stops.add(word);
                } else {
                    kept.add(word);
                }
            }
            Token::Cjk { run } => for_each_cjk_query_term(run, |t| kept.add(t)),
        });
        if kept.ends.is_empty() {
            std::mem::swap(kept, stops);
        }
    }

    /// The index term of a folded word: its stem when it is made of ASCII letters and longer
    /// than 2 bytes (as the scan decides), else the word itself.
    pub fn stem_word(&self, folded: &str) -> String {
        self.normalise(folded, stemmable(folded))
    }

    /// Folded word -> index term (stemmed when eligible).
    fn normalise(&self, surface: &str, stem: bool) -> String {
        let mut term = String::new();
        self.normalise_into(surface, stem, &mut term);
        term
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer::new()
    }
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokenizer")
            .field("stemmer", &"english")
            .finish()
    }
}

/// Whether a folded word's index term is its stem: ASCII letters only, longer than 2 bytes (the
/// scanner decides the same as it goes, without looking at the word again).
fn stemmable(word: &str) -> bool {
    word.len() > 2 && word.bytes().all(|b| b.is_ascii_alphabetic())
}
