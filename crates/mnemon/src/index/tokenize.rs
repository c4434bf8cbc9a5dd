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

use crate::notes::script::is_cjk;
use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

/// Max bytes of a single term kept (longer words are truncated at a char boundary): a limit on everything.
pub const MAX_TERM_BYTES: usize = 64;
/// Max query terms kept (the rest are ignored).
pub const MAX_QUERY_TERMS: usize = 32;

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

    /// [`Tokenizer::normalise`] into `term` (cleared first), reusing its allocation.
    fn normalise_into(&self, surface: &str, stem: bool, term: &mut String) {
        term.clear();
        if !stem {
            term.push_str(surface);
            return;
        }
        if surface.len() > STEM_KEY_BYTES {
            term.push_str(&self.stem(surface));
            return;
        }
        let cached = STEM_CACHE.try_with(|cache| {
            cache
                .borrow_mut()
                .get_or_stem_into(surface, |w| self.shared_stem(w), term)
        });
        if cached.is_err() {
            term.push_str(&self.shared_stem(surface));
        }
    }

    /// The stem of a word of at most [`STEM_KEY_BYTES`] lowercase ASCII letters that this
    /// thread's cache missed: from [`SHARED_STEMS`] if another thread stemmed it, else stemmed
    /// here and shared (the lock is not held while stemming).
    fn shared_stem(&self, word: &str) -> String {
        self.stem_via(&SHARED_STEMS, word)
    }

    /// [`Tokenizer::shared_stem`] through the cache `shared`. The cache is only a saving: a
    /// word whose lock another thread holds is stemmed here. Never waiting also keeps a process
    /// forked while a thread of its parent held the lock (Python's `os.fork`, `multiprocessing`)
    /// from waiting forever on a lock no thread of its own will release.
    fn stem_via(&self, shared: &std::sync::Mutex<StemCache>, word: &str) -> String {
        let mut out = String::new();
        if let Ok(mut shared) = shared.try_lock()
            && shared.get_into(word, &mut out)
        {
            return out;
        }
        let stem = self.stem(word);
        if let Ok(mut shared) = shared.try_lock() {
            shared.put(word, &stem);
        }
        stem
    }

    /// Stems a lowercase ASCII word, in its American spelling ([`super::spelling::american`]);
    /// never returns an empty or over-long term.
    fn stem(&self, word: &str) -> String {
        let word = super::spelling::american(word);
        let word = word.as_ref();
        let mut term = match self.stemmer.stem(word) {
            Cow::Borrowed(s) if !s.is_empty() => s.to_owned(),
            Cow::Owned(s) if !s.is_empty() => s,
            _ => word.to_owned(),
        };
        if term.len() > MAX_TERM_BYTES {
            let mut cut = MAX_TERM_BYTES;
            while !term.is_char_boundary(cut) {
                cut -= 1;
            }
            term.truncate(cut);
        }
        term
    }
}

/// Longest word memoised by the stem cache (longer words are rarer and stemmed directly).
const STEM_KEY_BYTES: usize = 16;
/// log2 of the number of stem cache sets (8192 sets of 2 slots of 32 bytes: 512 KB per
/// thread, zero-initialised, so pages only become resident as they are used).
const STEM_CACHE_BITS: u32 = 13;

/// Stems shared by every thread, behind the per-thread caches: a word stemmed on one core is not
/// stemmed again on another. A build looks here only on a per-thread miss, which is rare next
/// to the words looked up; without it, each core would stem every distinct word it met, the
/// vocabulary's stemming repeated once per core.
static SHARED_STEMS: std::sync::Mutex<StemCache> =
    std::sync::Mutex::new(StemCache { sets: Vec::new() });

thread_local! {
    /// Per-thread memo of `word -> stem` (the stemmer is always English; key the cache by
    /// language if that ever becomes configurable): Snowball stemming
    /// would otherwise dominate indexing time, and word frequencies are Zipfian.
    static STEM_CACHE: RefCell<StemCache> = const { RefCell::new(StemCache { sets: Vec::new() }) };
}

/// A 2-way set-associative cache with inline keys and values (a set is one 64-byte cache line,
/// no pointer chasing). A slot is `[key lo, key hi, meta, tail]`: the key is the word's ASCII
/// bytes, little-endian, zero-padded (words never contain NUL, so the padding is unambiguous;
/// an all-zero key marks an empty slot); the stem is `word[..p]` followed by up to 8 ASCII `tail`
/// bytes, with `meta = p | tail_len << 8`. A miss evicts the older slot of its set.
struct StemCache {
    sets: Vec<[[u64; 4]; 2]>,
}

/// Packs 1..=16 bytes into two zero-padded little-endian words.
#[inline]
pub(super) fn pack16(b: &[u8]) -> [u64; 2] {
    let n = b.len();
    debug_assert!((1..=16).contains(&n));
    // Whole-word loads (the branches are on `n`, which the callers' slicing already checked).
    let le8 = |i: usize| {
        b.get(i..)
            .and_then(|r| r.first_chunk::<8>())
            .map_or(0, |c| u64::from_le_bytes(*c))
    };
    let le4 = |i: usize| {
        b.get(i..)
            .and_then(|r| r.first_chunk::<4>())
            .map_or(0, |c| u64::from(u32::from_le_bytes(*c)))
    };
    if n >= 8 {
        // The second load overlaps the first; shift out the bytes before index 8.
        let hi = if n > 8 {
            le8(n - 8) >> (8 * (16 - n))
        } else {
            0
        };
        [le8(0), hi]
    } else if n >= 4 {
        // Overlapping loads: the shared bytes are equal, so OR-ing them is exact.
        [le4(0) | (le4(n - 4) << (8 * (n - 4))), 0]
    } else {
        let mut lo = 0;
        for (i, &x) in b.iter().enumerate() {
            lo |= u64::from(x) << (8 * i);
        }
        [lo, 0]
    }
}

impl StemCache {
    /// `word`'s key and set.
    #[inline]
    fn key_of(word: &str) -> ([u64; 2], usize) {
        debug_assert!(!word.is_empty() && word.len() <= STEM_KEY_BYTES && word.is_ascii());
        let [k0, k1] = pack16(word.as_bytes());
        let h = (k0.rotate_left(5) ^ k1).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        ([k0, k1], (h >> (64 - STEM_CACHE_BITS)) as usize)
    }

    /// The sets, allocated on first use.
    fn sets(&mut self) -> &mut [[[u64; 4]; 2]] {
        if self.sets.is_empty() {
            // Written, not `vec![..; n]`: zeroed memory from the allocator is the shared zero
            // page until written, so each page's first store here would fault a second time to
            // copy it and flush its mapping on every core.
            // `black_box` keeps the compiler from turning the writes back into a zeroed
            // allocation (best effort: only a measure of the faults shows it held).
            let mut sets = Vec::with_capacity(1 << STEM_CACHE_BITS);
            sets.resize_with(1 << STEM_CACHE_BITS, || std::hint::black_box([[0; 4]; 2]));
            self.sets = sets;
        }
        &mut self.sets
    }

    /// Appends `word`'s stem to `out` if the cache holds it.
    fn get_into(&mut self, word: &str, out: &mut String) -> bool {
        let ([k0, k1], idx) = Self::key_of(word);
        for slot in self.sets()[idx].iter() {
            if slot[0] == k0 && slot[1] == k1 {
                let p = (slot[2] & 0xFF) as usize;
                let tail_len = ((slot[2] >> 8) & 0xFF) as usize;
                out.push_str(&word[..p]);
                for i in 0..tail_len {
                    out.push(char::from((slot[3] >> (8 * i)) as u8));
                }
                return true;
            }
        }
        false
    }

    /// Remembers `stem` as `word`'s (if it fits a slot: a prefix of the word and up to 8 ASCII
    /// bytes), evicting the older slot of its set.
    fn put(&mut self, word: &str, stem: &str) {
        let ([k0, k1], idx) = Self::key_of(word);
        let p = stem
            .bytes()
            .zip(word.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let tail = &stem.as_bytes()[p..];
        if !stem.is_empty() && tail.len() <= 8 && tail.is_ascii() {
            let mut packed = 0u64;
            for (i, &b) in tail.iter().enumerate() {
                packed |= u64::from(b) << (8 * i);
            }
            let set = &mut self.sets()[idx];
            set[1] = set[0];
            set[0] = [k0, k1, p as u64 | (tail.len() as u64) << 8, packed];
        }
    }

    /// The stem of `word`, appended to `out` (from the cache, else computed and remembered).
    fn get_or_stem_into(
        &mut self,
        word: &str,
        stem: impl FnOnce(&str) -> String,
        out: &mut String,
    ) {
        if self.get_into(word, out) {
            return;
        }
        let t = stem(word);
        self.put(word, &t);
        out.push_str(&t);
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

/// What the scanner hands out.
enum Token<'a> {
    /// A folded (lowercased, truncated) non-CJK word. `stem`: eligible for stemming.
    /// `end`: source byte offset just past its last kept char.
    Word {
        surface: &'a str,
        stem: bool,
        end: usize,
        /// A part of the word handed out just before (see [`MAX_PARTS`]), not a word of its own.
        part: bool,
    },
    /// A maximal run of adjacent CJK chars, as a slice of the source text.
    Cjk { run: &'a str },
}

/// Scanner state: the word being built and the pending CJK run.
struct Scanner<'t, F> {
    text: &'t str,
    buf: String,
    word_end: usize,
    word_ascii_alpha: bool,
    word_full: bool,
    /// Where the pending word's case humps start its parts (offsets into `buf`), and the case of
    /// its last two ASCII chars (see [`Hump`]).
    humps: [u8; MAX_PARTS - 1],
    hump_count: usize,
    last: Hump,
    before_last: Hump,
    /// Pending CJK run `cjk_start..cjk_end` in `text`; empty when `cjk_start == cjk_end`.
    cjk_start: usize,
    cjk_end: usize,
    emit: F,
}

/// How a non-CJK char inside a word segment is treated (after fullwidth folding).
#[derive(Clone, Copy, PartialEq, Eq)]
enum CharClass {
    Keep,
    Drop,
    Split,
}

fn scan<F: FnMut(Token<'_>)>(text: &str, emit: F) {
    scan_with(text, true, emit);
}

/// `fast`: take the shortcuts described on [`Scanner::ascii_chunk`] and [`Scanner::mixed_chunk`]
/// (same result, far less work). `false` (tests only) runs word segmentation on every
/// whitespace-free chunk and [`Scanner::segment`] on every word: the reference behaviour.
fn scan_with<F: FnMut(Token<'_>)>(text: &str, fast: bool, emit: F) {
    let mut s = Scanner {
        text,
        buf: String::with_capacity(MAX_TERM_BYTES + 8),
        word_end: 0,
        word_ascii_alpha: true,
        word_full: false,
        humps: [0; MAX_PARTS - 1],
        hump_count: 0,
        last: Hump::None,
        before_last: Hump::None,
        cjk_start: 0,
        cjk_end: 0,
        emit,
    };
    // Lines found with `memchr` (vectorised: most lines are short, and `split_inclusive`'s
    // search was 2 % of a build). A `\n` byte is never inside a multi-byte char.
    let mut base = 0;
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    while base < text.len() {
        let end = ends.next().map_or(text.len(), |i| i + 1);
        let line = &text[base..end];
        if fast && line.is_ascii() {
            s.ascii_chunk(base, line);
        } else {
            s.mixed_line(base, line, fast);
        }
        base = end;
    }
    s.flush_word();
    s.flush_cjk();
}

impl<F: FnMut(Token<'_>)> Scanner<'_, F> {
    /// A line with non-ASCII text: cut at ASCII whitespace (UAX #29 never joins across it) into
    /// chunks.
    fn mixed_line(&mut self, base: usize, line: &str, fast: bool) {
        let bytes = line.as_bytes();
        let mut i = 0;
        loop {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i == bytes.len() {
                break;
            }
            let start = i;
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            // ASCII whitespace bytes never occur inside a multi-byte UTF-8 sequence.
            let chunk = &line[start..i];
            if fast {
                self.mixed_chunk(base + start, chunk);
            } else {
                for (off, seg) in chunk.unicode_word_indices() {
                    self.segment(base + start + off, seg);
                }
            }
        }
    }

    /// A whitespace-free chunk. CJK chars are taken out directly (UAX #29 puts each Han or kana
    /// char in its own word or joins it only with same-script chars or with letters that the
    /// script-change rule splits off anyway), the stretches between them are segmented
    /// separately (or take [`Scanner::ascii_chunk`] when ASCII).
    fn mixed_chunk(&mut self, base: usize, chunk: &str) {
        let mut other = 0; // start of the pending non-CJK stretch
        for (i, c) in chunk.char_indices() {
            if is_cjk(c) {
                if other < i {
                    self.non_cjk(base + other, &chunk[other..i]);
                }
                self.flush_word();
                self.cjk_char(base + i, c.len_utf8());
                other = i + c.len_utf8();
            }
        }
        if other < chunk.len() {
            self.non_cjk(base + other, &chunk[other..]);
        }
    }

    /// A stretch without CJK chars.
    fn non_cjk(&mut self, base: usize, s: &str) {
        if s.is_ascii() {
            self.ascii_chunk(base, s);
        } else {
            for (off, seg) in s.unicode_word_indices() {
                self.segment(base + off, seg);
            }
        }
    }

    /// Adds the CJK char at `pos` to the pending run, or starts a new run if it is not adjacent.
    #[inline]
    fn cjk_char(&mut self, pos: usize, len: usize) {
        if self.cjk_start == self.cjk_end || self.cjk_end != pos {
            self.flush_cjk();
            self.cjk_start = pos;
        }
        self.cjk_end = pos + len;
    }

    /// All-ASCII text. Equivalent to segmenting it with UAX #29 and then applying
    /// [`Scanner::segment`] to each word: in ASCII, UAX #29 never breaks between two alphanumerics,
    /// keeps an apostrophe inside a word only between two letters (WB6/7) or two digits
    /// (WB11/12), and every other non-alphanumeric char splits here anyway.
    fn ascii_chunk(&mut self, base: usize, chunk: &str) {
        self.flush_cjk();
        let bytes = chunk.as_bytes();
        let n = bytes.len();
        let mut k = 0;
        while k < n {
            if class(bytes[k]) & ALNUM != 0 {
                let start = k;
                let mut acc = class(bytes[k]);
                k += 1;
                while k < n && class(bytes[k]) & ALNUM != 0 {
                    acc |= class(bytes[k]);
                    k += 1;
                }
                let run = &chunk[start..k];
                // Common case: a whole, already lowercase word in one run (not a number with
                // letters after it: see `Scanner::note_unit_hump`); emit it uncopied.
                if acc & UPPER == 0
                    && (acc & LOWER == 0 || acc & DIGIT == 0 || !bytes[start].is_ascii_digit())
                    && self.buf.is_empty()
                    && !apostrophe_joins(bytes, k)
                    && !thousands_comma(bytes, k)
                {
                    (self.emit)(Token::Word {
                        surface: &run[..run.len().min(MAX_TERM_BYTES)],
                        stem: acc & DIGIT == 0 && run.len() > 2,
                        end: base + k,
                        part: false,
                    });
                    continue;
                }
                self.push_ascii_run(run, base + k);
            } else {
                if thousands_comma(bytes, k) {
                    // `1,000` is the number `1000`: the word goes on.
                } else if !apostrophe_joins(bytes, k) {
                    self.flush_word();
                } else if let Some(n) = contraction_at(bytes, k) {
                    self.flush_word();
                    k += n;
                }
                k += 1;
            }
        }
        self.flush_word();
    }

    /// Appends a run of ASCII alphanumerics ending at source offset `end`.
    #[inline]
    fn push_ascii_run(&mut self, run: &str, end: usize) {
        self.word_end = end;
        if self.word_ascii_alpha {
            self.word_ascii_alpha = run.bytes().all(|b| b.is_ascii_alphabetic());
        }
        if self.word_full {
            return;
        }
        let room = MAX_TERM_BYTES - self.buf.len();
        let run = if run.len() > room {
            self.word_full = true;
            &run[..room]
        } else {
            run
        };
        let start = self.buf.len();
        if self.last == Hump::Upper || run.bytes().any(|b| b.is_ascii_uppercase()) {
            for (i, b) in run.bytes().enumerate() {
                self.track_hump(b, start + i);
            }
        } else if let [.., a, b] = run.as_bytes() {
            (self.before_last, self.last) = (Hump::of(*a), Hump::of(*b));
        } else if let [b] = run.as_bytes() {
            (self.before_last, self.last) = (self.last, Hump::of(*b));
        }
        self.buf.push_str(run);
        self.buf[start..].make_ascii_lowercase();
    }

    /// Notes a case hump before ASCII char `b`, about to be at `pos` in `buf`: a capital after a
    /// lowercase letter or a digit (`pg|Bouncer`, `utf8|String`), or a lowercase letter after
    /// two capitals (`HTTP|Server`: the hump is before the last capital).
    #[inline]
    fn track_hump(&mut self, b: u8, pos: usize) {
        let now = Hump::of(b);
        let at = match (self.before_last, self.last, now) {
            (_, Hump::Lower | Hump::Digit, Hump::Upper) => Some(pos),
            (Hump::Upper, Hump::Upper, Hump::Lower) => pos.checked_sub(1),
            _ => None,
        };
        if let Some(at) = at
            && self.hump_count < MAX_PARTS - 1
            && at > 0
            && at < MAX_TERM_BYTES
            && self.humps[..self.hump_count].last() != Some(&(at as u8))
        {
            self.humps[self.hump_count] = at as u8;
            self.hump_count += 1;
        }
        (self.before_last, self.last) = (self.last, now);
    }

    /// One UAX #29 word segment (contains an alphanumeric char): split on CJK/non-CJK changes and
    /// on [`CharClass::Split`] chars, drop [`CharClass::Drop`] chars, fold the rest.
    fn segment(&mut self, base: usize, seg: &str) {
        if seg.is_ascii() {
            // Fast path: no CJK, no folding tables.
            self.flush_cjk();
            let bytes = seg.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                if b.is_ascii_alphanumeric() {
                    self.push_ascii(b, base + i + 1);
                } else if thousands_comma(bytes, i) {
                    // The word goes on.
                } else if b != b'\'' {
                    self.flush_word();
                } else if let Some(n) = contraction_at(bytes, i) {
                    self.flush_word();
                    i += n;
                }
                i += 1;
            }
        } else {
            // Where a contraction's letters end: they are skipped up to there.
            let mut skip_to = 0;
            for (i, c) in seg.char_indices() {
                if i < skip_to {
                    continue;
                }
                let pos = base + i;
                let len = c.len_utf8();
                if is_apostrophe(c)
                    && let Some(n) = unicode_contraction_at(seg, i, c)
                {
                    self.flush_word();
                    skip_to = i + len + n;
                    continue;
                }
                if is_cjk(c) {
                    self.flush_word();
                    self.cjk_char(pos, len);
                    continue;
                }
                self.flush_cjk();
                let c = fold_fullwidth(c);
                if c == ',' && unicode_thousands_comma(seg, i) {
                    continue;
                }
                match classify(c) {
                    CharClass::Keep => {
                        if c.is_ascii() {
                            self.push_ascii(c as u8, pos + len);
                        } else {
                            self.push_folded(c, pos + len);
                        }
                    }
                    CharClass::Drop => {}
                    CharClass::Split => self.flush_word(),
                }
            }
        }
        if !self.goes_on(base, seg) {
            self.flush_word();
        }
    }

    /// Whether the word of the segment `seg` at `base` goes on in the next segment, where word
    /// segmentation breaks though the text writes one word:
    ///
    /// * zero-width spaces (U+200B, which shows nothing and is put inside long words as a place
    ///   to wrap them) and then a letter or digit that is not CJK;
    /// * digits written raised or lowered ([`is_script_digit`]) right after a letter: `CO₂` and
    ///   `m²` are the words `co2` and `m2`, and after such digits the word goes on with the letter
    ///   or digit that follows (`H₂O` is `h2o`). After a digit they stay apart (`10⁶` is `10`
    ///   and `6`, not `106`).
    fn goes_on(&self, base: usize, seg: &str) -> bool {
        let end = base + seg.len();
        let (Some(before), Some(rest)) = (self.text.get(..base), self.text.get(end..)) else {
            return false;
        };
        let letter = |c: char| c.is_alphabetic() && !is_cjk(c);
        let word_char = |c: char| c.is_alphanumeric() && !is_cjk(c);
        if rest.starts_with(is_script_digit) && seg.chars().next_back().is_some_and(letter) {
            return true;
        }
        if seg.chars().all(is_script_digit)
            && before
                .chars()
                .rev()
                .find(|&c| !is_script_digit(c))
                .is_some_and(letter)
            && rest.chars().next().is_some_and(word_char)
        {
            return true;
        }
        let after = rest.trim_start_matches('\u{200B}');
        after.len() < rest.len() && after.chars().next().is_some_and(word_char)
    }

    #[inline]
    fn push_ascii(&mut self, b: u8, end: usize) {
        self.word_end = end;
        self.word_ascii_alpha &= b.is_ascii_alphabetic();
        if !self.word_full && self.buf.len() < MAX_TERM_BYTES {
            self.track_hump(b, self.buf.len());
        }
        if !self.word_full {
            if self.buf.len() < MAX_TERM_BYTES {
                self.buf.push(b.to_ascii_lowercase() as char);
            } else {
                self.word_full = true;
            }
        }
    }

    /// Appends a non-ASCII char ending at source offset `end`, without its accents
    /// ([`fold_accents`]): what is left of a Latin letter is ASCII and joins the word as such
    /// (`café` is the ASCII word `cafe`, stemmed like one).
    fn push_folded(&mut self, c: char, end: usize) {
        // An ASCII letter keeps the case of the char it came from: case humps see `RÉSUMÉ` as
        // one word and `ÉcoleNormale` as two, as they see `RESUME` and `EcoleNormale`.
        // (Only the first letter of a spelling: `Æ` is `Ae`, as `Aero` is one word.)
        let mut upper = c.is_uppercase();
        fold_accents(c, |f| {
            if f.is_ascii() {
                if f.is_ascii_alphanumeric() {
                    let b = if upper { f.to_ascii_uppercase() } else { f } as u8;
                    upper = false;
                    self.push_ascii(b, end);
                }
            } else {
                self.push_other(f, end);
            }
        });
    }

    /// Appends a non-ASCII char ending at source offset `end`. A word never starts with a
    /// non-alphanumeric char (e.g. a combining mark left over after a CJK char).
    fn push_other(&mut self, c: char, end: usize) {
        if self.buf.is_empty() && !c.is_alphanumeric() {
            return;
        }
        self.word_end = end;
        self.word_ascii_alpha = false;
        (self.before_last, self.last) = (self.last, Hump::None);
        if self.word_full {
            return;
        }
        for l in c.to_lowercase() {
            if self.buf.len() + l.len_utf8() <= MAX_TERM_BYTES {
                self.buf.push(l);
            } else {
                self.word_full = true;
                break;
            }
        }
    }

    /// Emits the pending word, if any. Invariant: an empty `buf` means the word state is reset.
    #[inline]
    fn flush_word(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        self.note_unit_hump();
        let stem = self.word_ascii_alpha && self.buf.len() > 2;
        (self.emit)(Token::Word {
            surface: &self.buf,
            stem,
            end: self.word_end,
            part: false,
        });
        if self.hump_count > 0 {
            // The parts between the humps (each noted at an ASCII char inside `buf`).
            let (humps, count) = (self.humps, self.hump_count);
            let ends = humps[..count].iter().map(|&h| usize::from(h));
            let mut from = 0;
            for to in ends.chain([self.buf.len()]) {
                let to = to.clamp(from, self.buf.len());
                if let Some(part) = self.buf.get(from..to)
                    && part.len() >= MIN_PART_BYTES
                {
                    (self.emit)(Token::Word {
                        surface: part,
                        stem: stemmable(part),
                        end: self.word_end,
                        part: true,
                    });
                }
                from = to;
            }
        }
        self.buf.clear();
        self.word_ascii_alpha = true;
        self.word_full = false;
        self.hump_count = 0;
        self.last = Hump::None;
        self.before_last = Hump::None;
    }

    /// Notes a hump between the digits and the letters of a pending word that is a number with
    /// ASCII letters glued after it (`500ms`, `128gb`, `3rd`), as a capital after a digit makes
    /// one (`500MB`): written in lower case or apart (`500 ms`), it is the same word.
    fn note_unit_hump(&mut self) {
        let b = self.buf.as_bytes();
        if !b.first().is_some_and(u8::is_ascii_digit) {
            return;
        }
        let k = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if k == b.len()
            || !b[k..].iter().all(u8::is_ascii_alphabetic)
            || self.humps[..self.hump_count].first() == Some(&(k as u8))
        {
            return;
        }
        // Case humps can only be after it, among the letters: it is the first.
        let count = self.hump_count.min(MAX_PARTS - 2);
        self.humps.copy_within(..count, 1);
        self.humps[0] = k as u8;
        self.hump_count = count + 1;
    }

    fn flush_cjk(&mut self) {
        if self.cjk_start != self.cjk_end {
            (self.emit)(Token::Cjk {
                run: &self.text[self.cjk_start..self.cjk_end],
            });
            self.cjk_start = self.cjk_end;
        }
    }
}

/// Whether a folded word's index term is its stem: ASCII letters only, longer than 2 bytes (the
/// scanner decides the same as it goes, without looking at the word again).
fn stemmable(word: &str) -> bool {
    word.len() > 2 && word.bytes().all(|b| b.is_ascii_alphabetic())
}

/// Most parts a word is split into at its case humps (`scaleDownDelaySeconds` -> `scale`, `down`,
/// `delay`, `seconds`); humps past the last are ignored.
pub const MAX_PARTS: usize = 8;
/// Shortest part kept (`iPhone` gives `phone`, not `i`).
const MIN_PART_BYTES: usize = 2;

/// The case of a word's ASCII char, for finding its humps.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Hump {
    None,
    Lower,
    Upper,
    Digit,
}

impl Hump {
    #[inline]
    fn of(b: u8) -> Hump {
        if b.is_ascii_lowercase() {
            Hump::Lower
        } else if b.is_ascii_uppercase() {
            Hump::Upper
        } else if b.is_ascii_digit() {
            Hump::Digit
        } else {
            Hump::None
        }
    }
}

const ALNUM: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 4;
const LOWER: u8 = 8;

/// Class bits of a byte: `ALNUM` for ASCII letters and digits, plus `UPPER`, `LOWER` or `DIGIT`.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_uppercase() {
            ALNUM | UPPER
        } else if c.is_ascii_lowercase() {
            ALNUM | LOWER
        } else if c.is_ascii_digit() {
            ALNUM | DIGIT
        } else {
            0
        };
        b += 1;
    }
    t
};

#[inline(always)]
fn class(b: u8) -> u8 {
    BYTE_CLASS[usize::from(b)]
}

/// Is `bytes[k]` an apostrophe that UAX #29 keeps inside a word (between two ASCII letters or
/// two ASCII digits)?
#[inline]
fn apostrophe_joins(bytes: &[u8], k: usize) -> bool {
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
fn thousands_comma(bytes: &[u8], k: usize) -> bool {
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
fn unicode_thousands_comma(seg: &str, i: usize) -> bool {
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
fn is_script_digit(c: char) -> bool {
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
fn contraction_at(bytes: &[u8], k: usize) -> Option<usize> {
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
fn unicode_contraction_at(seg: &str, i: usize, c: char) -> Option<usize> {
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

/// Index terms of a CJK run: `c0, c0c1, c1, c1c2, ..., c(n-1)`; a one-char run gives `c0`.
fn for_each_cjk_index_term(run: &str, mut f: impl FnMut(&str)) {
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
fn for_each_cjk_query_term(run: &str, mut f: impl FnMut(&str)) {
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

/// Whether `c` is a combining diacritical mark (U+0300..=U+036F: the accents of Latin, Greek
/// and Cyrillic letters). Other scripts' combining marks (Devanagari vowel signs, Hebrew points)
/// are part of their letters and stay.
pub(crate) fn is_accent(c: char) -> bool {
    ('\u{0300}'..='\u{036F}').contains(&c)
}

/// `c` lower-cased and without accents, char by char into `f`: a letter whose canonical
/// decomposition is a base letter and accents gives the base (`É` -> `e`, `ñ` -> `n`, `ё` -> `е`,
/// `ά` -> `α`), an accent on its own (text written decomposed, as macOS names files) gives
/// nothing, and the letters no decomposition reaches give their usual Latin spelling (`ß` ->
/// `ss`, `æ` -> `ae`, `œ` -> `oe`, `ø` -> `o`, `ł` -> `l`, `đ` and `ð` -> `d`, `þ` -> `th`,
/// `ı` -> `i`, `ħ` -> `h`, `ŧ` -> `t`), the Greek final sigma `ς` its other form `σ` (as Unicode
/// case folding does: `ΛΌΓΟΣ` is `λόγος`). A letter or digit written in a compatibility form
/// ([`compat_letters`]: the ligatures of typeset text `ﬁ ﬂ ﬀ`, `ſ`, the micro sign `µ`,
/// superscripts `²`, mathematical letters `𝐝`, Arabic presentation forms) gives the letters
/// and digits it stands for, folded the same way. So `resume`, `résumé` and
/// `re\u{301}sume\u{301}` are one word, as in SQLite FTS5's default tokenizer, and so are
/// `ﬁrewall` and `firewall`.
fn fold_accents(c: char, mut f: impl FnMut(char)) {
    for l in c.to_lowercase() {
        if is_accent(l) {
            continue;
        }
        match l {
            'ß' => "ss".chars().for_each(&mut f),
            'æ' => "ae".chars().for_each(&mut f),
            'œ' => "oe".chars().for_each(&mut f),
            'þ' => "th".chars().for_each(&mut f),
            'ø' => f('o'),
            'ł' => f('l'),
            'đ' | 'ð' => f('d'),
            'ı' => f('i'),
            'ħ' => f('h'),
            'ŧ' => f('t'),
            'ς' => f('σ'),
            _ if l.is_ascii() => f(l),
            _ => {
                // Only a decomposition into a base and accents is folded: any other part
                // (a Hangul jamo, a nukta) means the char is a letter of its own.
                let (mut base, mut n, mut other) = (l, 0, false);
                unicode_normalization::char::decompose_canonical(l, |d| {
                    if n == 0 {
                        base = d;
                    } else if !is_accent(d) {
                        other = true;
                    }
                    n += 1;
                });
                if n > 1 && !other {
                    f(base);
                } else if n > 1 || !compat_letters(l, &mut f) {
                    f(l);
                }
            }
        }
    }
}

/// Whether `u` is in a block holding compatibility forms of letters or digits (Latin-1 and Latin
/// Extended, the Greek letter symbols `ϐ ϑ ϕ ϰ ϱ ϲ ϵ`, phonetic modifiers, super- and
/// subscripts, letterlike symbols and number forms, enclosed alphanumerics, alphabetic and Arabic
/// presentation forms, mathematical alphanumerics, and a few letters elsewhere): the letters of
/// the scripts most text is written in are not looked up. A test checks that every char outside
/// CJK with such a form is in one.
fn in_compat_block(u: u32) -> bool {
    matches!(u,
        0x00A0..=0x02FF
        | 0x03D0..=0x03FF
        | 0x0558
        | 0x0587..=0x058C
        | 0x0675..=0x0678
        | 0x0E33
        | 0x0EB3
        | 0x0EDC..=0x0EDD
        | 0x0F77..=0x0F79
        | 0x10FC
        | 0x1D2C..=0x1DBF
        | 0x1E9A
        | 0x2070..=0x218F
        | 0x2460..=0x24FF
        | 0x2C7C..=0x2C7D
        | 0x2D6F
        | 0x3192..=0x33FF
        | 0xA69C..=0xA69D
        | 0xA770
        | 0xA7F1..=0xA7F9
        | 0xAB5C..=0xAB69
        | 0xFB00..=0xFDFF
        | 0xFE70..=0xFEFF
        | 0xFF00..=0xFFEF
        | 0x10780..=0x107BF
        | 0x1CC00..=0x1CEBF
        | 0x1D400..=0x1D7FF
        | 0x1DF00..=0x1DFFF
        | 0x1E030..=0x1E08F
        | 0x1EE00..=0x1EEFF
        | 0x1F100..=0x1F2FF
        | 0x1FBF0..=0x1FBF9
    )
}

/// The letters and digits `l` (a lower-cased char without a canonical decomposition) stands
/// for, when it is a compatibility form of them (its compatibility decomposition: `ﬁ` -> `fi`,
/// `²` -> `2`, `𝐃` -> `d`, `µ` -> `μ`, `ǅ` -> `dz`), folded into `f`; false (and nothing given)
/// when it is not one, or stands for more than letters and digits (`½` is `1⁄2`, `℃` is `°C`).
fn compat_letters(l: char, f: &mut dyn FnMut(char)) -> bool {
    if !in_compat_block(l as u32) {
        return false;
    }
    let mut parts = [' '; 18];
    let (mut n, mut letters) = (0, true);
    unicode_normalization::char::decompose_compatible(l, |d| {
        if n < parts.len() {
            parts[n] = d;
        }
        n += 1;
        letters &= is_accent(d)
            || classify(d) == CharClass::Drop
            || (d.is_alphanumeric() && !is_cjk(d));
    });
    if n > parts.len() || !letters || (n == 1 && parts[0] == l) {
        return false;
    }
    for &d in &parts[..n] {
        if classify(d) != CharClass::Drop {
            // A part has no decomposition of its own: this only lower-cases it and drops accents.
            fold_accents(d, &mut *f);
        }
    }
    true
}

/// `word` folded as the tokenizer folds each char (fullwidth forms to ASCII, lower case,
/// accents dropped: `Siobhán` -> `siobhan`, `ＭＡＸ` -> `max`; apostrophes and invisible chars
/// removed: `O'Brien` -> `obrien`), into `out` (cleared first).
pub(crate) fn fold_word_into(word: &str, out: &mut String) {
    out.clear();
    // Most words are ASCII letters: no char to fold but the case.
    if word.bytes().all(|b| b.is_ascii_alphabetic()) {
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    for c in word.chars() {
        let c = fold_fullwidth(c);
        if classify(c) != CharClass::Drop {
            fold_accents(c, |l| out.push(l));
        }
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
    matches!(fold_fullwidth(c), '\'' | '\u{2018}' | '\u{2019}' | '\u{02BC}')
}

/// Fullwidth ASCII variants (U+FF01..U+FF5E) -> ASCII.
#[inline]
fn fold_fullwidth(c: char) -> char {
    let u = c as u32;
    if (0xFF01..=0xFF5E).contains(&u) {
        char::from_u32(u - 0xFEE0).unwrap_or(c)
    } else {
        c
    }
}

#[inline]
#[rustfmt::skip]
fn classify(c: char) -> CharClass {
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

/// Query stop words (folded, apostrophes removed), sorted for binary search.
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "arent", "as", "at", "be", "because", "been", "before", "being", "below", "between",
    "both", "but", "by", "can", "could", "did", "didnt", "do", "does", "doesnt", "doing", "dont",
    "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
    "here", "hers", "herself", "him", "himself", "his", "how", "hows", "i", "if", "im", "in",
    "into", "is", "isnt", "it", "its", "itself", "ive", "just", "may", "me", "might", "more",
    "most", "must", "my", "myself", "no", "nor", "not", "now", "of", "on", "once", "only", "or",
    "other", "our", "ours", "ourselves", "own", "same", "she", "should", "so", "some", "such",
    "than", "that", "thats", "the", "their", "theirs", "them", "themselves", "then", "there",
    "theres", "these", "they", "this", "those", "through", "to", "too", "until", "very", "was",
    "wasnt", "we", "were", "what", "whats", "when", "where", "which", "while", "who", "whom",
    "whose", "why", "will", "with", "would", "you", "your", "youre", "yours", "yourself",
];

/// Whether a folded word is a stop word (see [`STOP_WORDS`]).
pub(crate) fn is_stop_word(surface: &str) -> bool {
    surface.len() <= 10 && STOP_WORDS.binary_search(&surface).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Tokenizer::new().index_terms(text, &mut out);
        out
    }

    fn slug(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Tokenizer::new().slug_terms(text, &mut out);
        out
    }

    fn q(text: &str) -> QueryTerms {
        Tokenizer::new().query_terms(text)
    }

    fn qterms(text: &str) -> Vec<String> {
        q(text).terms.into_iter().map(|t| t.term).collect()
    }

    #[test]
    fn tokenizer_is_send_sync_and_its_debug_names_the_stemmer() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Tokenizer>();
        let t = Tokenizer::default();
        assert_eq!(format!("{t:?}"), "Tokenizer { stemmer: \"english\" }");
    }

    #[test]
    fn stop_words_sorted_and_folded() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(
            STOP_WORDS
                .iter()
                .all(|w| w.len() <= 10 && w.bytes().all(|b| b.is_ascii_lowercase()))
        );
        assert!(STOP_WORDS.len() >= 120);
    }

    #[test]
    fn pack16_is_exact() {
        let word = b"abcdefghijklmnop";
        for n in 1..=16 {
            let mut want = [0u64; 2];
            for (i, &b) in word[..n].iter().enumerate() {
                want[i / 8] |= u64::from(b) << (8 * (i % 8));
            }
            assert_eq!(pack16(&word[..n]), want, "n = {n}");
        }
    }

    #[test]
    fn stem_cache_matches_stemmer() {
        let t = Tokenizer::new();
        let mut words: Vec<String> =
            "deploying sizing happy relational generously ponies caresses \
            agreed hopping dying news skies a zz abcdefghijklmnop abcdefghijklmnopq \
            internationalization"
                .split_whitespace()
                .map(str::to_owned)
                .collect();
        // Enough distinct words to force evictions in every set.
        let stems = [
            "connect", "pool", "size", "deploy", "happ", "rel", "gener", "pon", "x",
        ];
        let suffixes = [
            "", "s", "ed", "ing", "ion", "ional", "ly", "ies", "iness", "ization",
        ];
        for i in 0..40_000usize {
            let mut w = String::from(stems[i % stems.len()]);
            for d in i.to_string().bytes() {
                w.push(char::from(b'a' + (d - b'0')));
            }
            w.push_str(suffixes[(i / 7) % suffixes.len()]);
            words.push(w);
        }
        for _ in 0..2 {
            for w in &words {
                assert_eq!(t.normalise(w, true), t.stem(w), "{w}");
            }
        }
        assert_eq!(t.normalise("sizing", true), "size");
        assert_eq!(t.normalise("happy", true), "happi");
    }

    #[test]
    fn a_word_stemmed_on_one_thread_is_shared_with_the_others() {
        let t = Tokenizer::new();
        // A cache of the test's own (the process's is shared with the tests running beside).
        let shared = std::sync::Mutex::new(StemCache { sets: Vec::new() });
        let words = ["queuing", "deployments", "happily", "zz"];
        std::thread::scope(|s| {
            s.spawn(|| {
                for w in words {
                    assert_eq!(t.stem_via(&shared, w), t.stem(w), "{w}");
                }
            });
        });
        for w in words {
            let mut out = String::new();
            let held = shared.lock().expect("lock").get_into(w, &mut out);
            assert!(held, "{w}: the cache holds what another thread stemmed");
            assert_eq!(out, t.stem(w), "{w}");
            // And a thread that asks again gets it from there, the same.
            assert_eq!(t.stem_via(&shared, w), t.stem(w), "{w}");
        }
    }

    /// A process forked while a thread of its parent held the shared cache's lock (a Python
    /// `os.fork` beside a recalling thread) inherits the lock held, and no thread of its own
    /// releases it: stemming waited forever. The word is stemmed without the cache.
    #[test]
    fn a_stem_cache_lock_held_elsewhere_is_not_waited_for() {
        let t = Tokenizer::new();
        let shared = std::sync::Mutex::new(StemCache { sets: Vec::new() });
        let held = shared.lock().expect("lock");
        for w in ["queuing", "deployments"] {
            assert_eq!(t.stem_via(&shared, w), t.stem(w), "{w}");
        }
        drop(held);
    }

    #[test]
    fn slug_splits_an_id_on_separators_and_stems_its_words() {
        assert_eq!(
            slug("runbooks/pgbouncer-pool-sizing"),
            ["runbook", "pgbouncer", "pool", "size"]
        );
        assert_eq!(slug("pgbouncer-pool-sizing"), ["pgbouncer", "pool", "size"]);
        assert_eq!(slug("snake_case_id"), ["snake", "case", "id"]);
        assert_eq!(slug("notes/2026.05.v2"), ["note", "2026", "05", "v2"]);
        assert_eq!(slug("Max_Client_Conn"), ["max", "client", "conn"]);
        assert_eq!(slug("//--__.."), Vec::<String>::new());
        assert_eq!(
            slug("设计/数据库"),
            ["设", "设计", "计", "数", "数据", "据", "据库", "库"]
        );
    }

    #[test]
    fn inflections_stem_alike_and_short_digit_or_non_ascii_words_are_kept() {
        assert_eq!(idx("deploying deployed deploys deploy"), ["deploy"; 4]);
        assert_eq!(idx("connections connected connecting"), ["connect"; 3]);
        assert_eq!(idx("running runs"), ["run", "run"]);
        // possessive: apostrophe removed, then the plural stems away
        assert_eq!(
            idx("PgBouncer's pool"),
            ["pgbouncer", "pg", "bouncer", "pool"]
        );
        assert_eq!(idx("don't"), ["dont"]);
        assert_eq!(qterms("rock'n'roll O'Brien y'all"), ["rocknrol", "obrien", "yall"]);
        // short, digit-bearing and non-ASCII words are not stemmed; a word left ASCII once
        // its accents are gone is
        assert_eq!(
            idx("is as v1s ipv4s серверы cafés"),
            ["is", "as", "v1s", "ipv4s", "серверы", "cafe"]
        );
        assert_eq!(qterms("deploying"), idx("deployed"));
    }

    /// A note written `résumé` was not found by `resume`, and a file name macOS wrote
    /// decomposed (`re\u{301}sume\u{301}`) not by the same word typed precomposed.
    #[test]
    fn accented_unaccented_and_decomposed_spellings_are_one_term() {
        let one = idx("resume");
        for spelling in ["résumé", "RÉSUMÉ", "re\u{301}sume\u{301}", "Re\u{301}sume\u{301}"] {
            assert_eq!(idx(spelling), one, "{spelling:?}");
            assert_eq!(qterms(spelling), qterms("resume"), "{spelling:?}");
        }
        assert_eq!(idx("naïve café"), idx("naive cafe"));
        assert_eq!(idx("Straße Ærø Łódź Œuvre"), ["strass", "aero", "lodz", "oeuvr"]);
        // Greek and Cyrillic lose their accents too; letters of their own stay.
        assert_eq!(idx("μνήμη ёлка"), ["μνημη", "елка"]);
        assert_eq!(idx("한글 ऩ"), idx("한글 \u{929}"));
        assert_eq!(idx("\u{929}"), ["\u{929}"], "a nukta letter is kept whole");
    }

    /// `CO₂` was the words `co` and `₂` (segmentation breaks at a subscript), so a question
    /// writing `CO2` did not meet it, nor `m2` a note writing `m²`.
    #[test]
    fn digits_written_raised_or_lowered_after_a_letter_are_part_of_its_word() {
        assert_eq!(idx("CO₂ H₂O m² km² H₂SO₄"), idx("CO2 H2O m2 km2 H2SO4"));
        assert_eq!(idx("CO₂ emissions"), ["co2", "emiss"]);
        assert_eq!(qterms("CO₂"), qterms("co2"));
        // After a digit they are an exponent, not part of a number; alone or after CJK, digits.
        assert_eq!(idx("10⁶ 2³"), ["10", "6", "2", "3"]);
        assert_eq!(idx("₂O 数₂x"), ["2", "o", "数", "2", "x"]);
        assert_eq!(idx("x₁₂y"), idx("x12y"));
    }

    /// `1,000` was the numbers `1` and `000`, so a question asking about `1000` (or `12500`) did
    /// not meet a note writing `1,000` (or `12,500`), nor the reverse.
    #[test]
    fn a_number_written_with_thousands_separators_is_the_number_without_them() {
        assert_eq!(
            idx("1,000 users, 12,500,000 rows and 1000"),
            ["1000", "user", "12500000", "row", "and", "1000"]
        );
        assert_eq!(qterms("12,500"), qterms("12500"));
        assert_eq!(idx("１，０００ é 1,000"), ["1000", "e", "1000"]);
        // Not thousands: a decimal comma, a list, four digits after, five before, a letter
        // before, a group after the decimal point.
        assert_eq!(
            idx("3,14 1,2,3 1,0000 12345,678 v1,000 1,000.250"),
            ["3", "14", "1", "2", "3", "1", "0000", "12345", "678", "v1", "000", "1000", "250"]
        );
    }

    /// `we'll`, `she'll` and `I'd` closed up were the words `well`, `shell` and `id`: a question
    /// about shell scripts or ids found every note written in the first person.
    #[test]
    fn a_contraction_is_dropped_not_closed_up_into_another_word() {
        assert_eq!(
            idx("We'll ask; she’ll go, I'd say they're sure I've I'm CC'D"),
            ["we", "ask", "she", "go", "i", "say", "they", "sure", "i", "i", "cc"]
        );
        for (contracted, word) in [("we'll", "well"), ("she'll", "shell"), ("I'd", "id")] {
            assert!(!idx(contracted).contains(&idx(word)[0]), "{contracted}");
        }
        assert_eq!(q("we’ll").terms.len(), 1, "only the stop word is left");
        // Not a contraction: a word going on after it, digits, or letters of a word.
        assert_eq!(
            idx("we'llx we'll2 rock'n'roll y'all ma'am d'Artagnan I'd've"),
            ["wellx", "well2", "rocknrol", "yall", "maam", "dartagnan", "artagnan", "id"]
        );
        // Whatever follows it: punctuation, CJK, the end of the text.
        assert_eq!(idx("we'll.x she’ll数 I'd한 we'll"), ["we", "x", "she", "数", "i", "한", "we"]);
    }

    /// Text copied from a PDF writes `ﬁ` and `ﬂ` as one char, and `ﬁrewall` was another word
    /// than `firewall`; a Greek word in capitals ends in `Σ`, which was another letter than the
    /// `ς` of the word in lower case; `Þorsteinn` and `Kadıköy` were not `Thorsteinn` and
    /// `Kadikoy`.
    #[test]
    fn compatibility_forms_and_letters_without_a_decomposition_fold_to_their_plain_spelling() {
        assert_eq!(
            idx("ﬁrewall ﬂoodgate oﬀshore ﬃx ﬅop"),
            ["firewal", "floodgat", "offshor", "ffix", "stop"]
        );
        assert_eq!(qterms("ﬁrewall"), qterms("firewall"));
        assert_eq!(
            idx("µs 𝐝𝐞𝐩𝐥𝐨𝐲𝐞𝐝 ſtate Ĳssel ǅemal"),
            idx("μs deployed state ijssel džemal")
        );
        assert_eq!(idx("𝐃𝐞𝐩𝐥𝐨𝐲"), ["deploy"]);
        assert_eq!(idx("λόγος ΛΌΓΟΣ λογοϲ"), ["λογοσ"; 3]);
        assert_eq!(
            idx("Þorsteinn Guðrún Kadıköy Ħal ŧ"),
            ["thorsteinn", "gudrun", "kadikoy", "hal", "t"]
        );
        assert_eq!(qterms("Kadıköy"), qterms("Kadikoy"));
        // Superscripts are the digits; a form standing for more than letters and digits stays.
        assert_eq!(idx("x² ₂"), ["x2", "2"]);
        assert_eq!(idx("½ ℃"), ["½"]);
        // Names are folded alike.
        let mut folded = String::new();
        fold_word_into("Þórðarson", &mut folded);
        assert_eq!(folded, "thordarson");
    }

    /// Chars are looked up for a compatibility form only in the blocks of [`in_compat_block`]:
    /// every char outside CJK that has one standing for letters and digits is in one.
    #[test]
    fn every_compatibility_form_of_letters_is_in_a_block_looked_up() {
        let mut missed = Vec::new();
        for c in (0x80..=0x3_FFFFu32).filter_map(char::from_u32) {
            if is_cjk(c) || in_compat_block(c as u32) {
                continue;
            }
            let mut canonical = Vec::new();
            unicode_normalization::char::decompose_canonical(c, |d| canonical.push(d));
            let mut parts = Vec::new();
            unicode_normalization::char::decompose_compatible(c, |d| parts.push(d));
            let letters = parts
                .iter()
                .all(|&d| is_accent(d) || (d.is_alphanumeric() && !is_cjk(d)));
            if canonical == [c] && parts != [c] && letters {
                missed.push(format!("{:04X}", c as u32));
            }
        }
        assert!(missed.is_empty(), "{missed:?}");
    }

    #[test]
    fn case_and_fullwidth_forms_fold_to_one_term() {
        assert_eq!(
            idx("PgBouncer POOL Pool pool"),
            ["pgbouncer", "pg", "bouncer", "pool", "pool", "pool"]
        );
        assert_eq!(idx("ÉCOLE Straße ΣΟΦΙΑ"), ["ecol", "strass", "σοφια"]);
        // fullwidth ASCII folds to ASCII (and then stems like ASCII)
        assert_eq!(
            idx("ＰｇＢｏｕｎｃｅｒ　Ｐｏｏｌｓ"),
            ["pgbouncer", "pg", "bouncer", "pool"]
        );
        assert_eq!(idx("１２３"), ["123"]);
    }

    #[test]
    fn punctuation_splits_words_and_indexing_keeps_stop_words() {
        assert_eq!(
            idx("In 2026 we had 48 nodes"),
            ["in", "2026", "we", "had", "48", "node"]
        );
        assert_eq!(idx("v1.2"), ["v1", "2"]);
        assert_eq!(idx("3.14 and 3,14"), ["3", "14", "and", "3", "14"]);
        assert_eq!(
            idx("pool_size max_client_conn"),
            ["pool", "size", "max", "client", "conn"]
        );
        assert_eq!(idx("a.b:c/d-e"), ["a", "b", "c", "d", "e"]);
        assert_eq!(
            idx("see `pool_mode = transaction` (docs: https://x.io/pgbouncer)"),
            [
                "see",
                "pool",
                "mode",
                "transact",
                "doc",
                "https",
                "x",
                "io",
                "pgbouncer"
            ]
        );
        // stop words are kept when indexing
        assert_eq!(idx("the of and"), ["the", "of", "and"]);
        // invisible chars do not split, middle dot does
        assert_eq!(idx("con\u{AD}nection a\u{B7}b"), ["connect", "a", "b"]);
        // A zero-width space inside a word (a place to wrap it) is no break either: segmentation
        // breaks there, and `data\u{200B}base` was `data` and `base`.
        assert_eq!(idx("data\u{200B}base"), idx("database"));
        assert_eq!(qterms("con\u{200B}\u{200B}nection"), ["connect"]);
        assert_eq!(idx("Data\u{200B}Base"), ["databas", "data", "base"]);
        assert_eq!(idx("data\u{200B} base \u{200B}x y\u{200B}"), ["data", "base", "x", "y"]);
        assert_eq!(idx("data\u{200B}数据"), ["data", "数", "数据", "据"]);
    }

    #[test]
    fn cjk_runs_index_as_unigrams_and_bigrams_broken_by_punctuation() {
        assert_eq!(
            idx("数据库连接"),
            ["数", "数据", "据", "据库", "库", "库连", "连", "连接", "接"]
        );
        assert_eq!(idx("池"), ["池"]);
        // punctuation breaks runs
        assert_eq!(idx("数据，库。池"), ["数", "数据", "据", "库", "池"]);
        assert_eq!(idx("연결 풀"), ["연", "연결", "결", "풀"]);
        assert_eq!(idx("データ"), ["デ", "デー", "ー", "ータ", "タ"]);
    }

    #[test]
    fn cjk_queries_are_deduplicated_bigrams_and_never_a_prefix() {
        let r = q("数据库连接");
        assert_eq!(
            r.terms.iter().map(|t| t.term.as_str()).collect::<Vec<_>>(),
            ["数据", "据库", "库连", "连接"]
        );
        assert!(r.terms.iter().all(|t| t.cjk && t.surface == t.term));
        assert!(!r.last_is_prefix);
        assert_eq!(qterms("池"), ["池"]);
        assert!(!q("池").last_is_prefix);
        // deduplicated
        assert_eq!(qterms("数据数据"), ["数据", "据数"]);
    }

    #[test]
    fn a_word_with_case_humps_is_indexed_whole_and_in_parts() {
        assert_eq!(
            idx("scaleDownDelaySecondsAfterScaleOut"),
            [
                "scaledowndelaysecondsafterscaleout",
                "scale",
                "down",
                "delay",
                "second",
                "after",
                "scale",
                "out"
            ]
        );
        assert_eq!(idx("HTTPServer"), ["httpserver", "http", "server"]);
        assert_eq!(idx("utf8String"), ["utf8string", "utf8", "string"]);
        assert_eq!(idx("S3Bucket"), ["s3bucket", "s3", "bucket"]);
        // A number and the letters glued after it are parts whatever their case: `500ms` was
        // one word where `500MB` had the parts `500` and `mb`.
        assert_eq!(idx("500ms"), ["500ms", "500", "ms"]);
        assert_eq!(idx("500MB 500mb"), ["500mb", "500", "mb", "500mb", "500", "mb"]);
        assert_eq!(idx("128Gb 10k 3f9a2c1 2fa"), ["128gb", "128", "gb", "10k", "10", "3f9a2c1", "2fa", "fa"]);
        assert_eq!(idx("500mS"), ["500ms", "500"]);
        let unit = q("timeout 500ms");
        let parts: Vec<&str> = unit.terms[1].parts.iter().map(|p| p.term.as_str()).collect();
        assert_eq!(parts, ["500", "ms"]);
        // a one-letter part is dropped; a word in one case has no parts
        assert_eq!(idx("iPhone"), ["iphon", "phone"]);
        assert_eq!(idx("HTTP http Http"), ["http", "http", "http"]);
        // at most MAX_PARTS parts; the humps after the last are ignored
        let long = idx("aaBbCcDdEeFfGgHhIiJjKk");
        assert_eq!(long.len(), 1 + MAX_PARTS, "{long:?}");
        assert_eq!(long[MAX_PARTS], "hhiijjkk");
        // a query keeps the whole word and its parts aside
        let q = q("maxClientConn pool");
        let t: Vec<&str> = q.terms.iter().map(|t| t.term.as_str()).collect();
        assert_eq!(t, ["maxclientconn", "pool"]);
        let parts: Vec<&str> = q.terms[0].parts.iter().map(|p| p.term.as_str()).collect();
        assert_eq!(parts, ["max", "client", "conn"]);
        assert!(q.terms[1].parts.is_empty());
        // stop words are not parts
        let q = super::Tokenizer::new().query_terms("MySQL");
        let parts: Vec<&str> = q.terms[0].parts.iter().map(|p| p.term.as_str()).collect();
        assert_eq!(parts, ["sql"]);
    }

    #[test]
    fn a_change_of_script_splits_a_word() {
        assert_eq!(
            idx("PgBouncer连接池配置"),
            [
                "pgbouncer",
                "pg",
                "bouncer",
                "连",
                "连接",
                "接",
                "接池",
                "池",
                "池配",
                "配",
                "配置",
                "置"
            ]
        );
        // Hangul is glued to Latin by segmentation; split on the script change
        assert_eq!(idx("redis연결pool"), ["redi", "연", "연결", "결", "pool"]);
        let r = q("PgBouncer连接池配置");
        assert_eq!(
            r.terms
                .iter()
                .map(|t| (t.term.as_str(), t.cjk))
                .collect::<Vec<_>>(),
            [
                ("pgbouncer", false),
                ("连接", true),
                ("接池", true),
                ("池配", true),
                ("配置", true)
            ]
        );
        assert!(!r.last_is_prefix);
        assert_eq!(qterms("连接池pool"), ["连接", "接池", "pool"]);
        assert!(q("连接池pool").last_is_prefix);
    }

    #[test]
    fn queries_drop_stop_words_unless_only_stop_words_are_left() {
        let r = q("How do I size the PgBouncer connection pool?");
        assert_eq!(
            r.terms
                .iter()
                .map(|t| (t.term.as_str(), t.surface.as_str()))
                .collect::<Vec<_>>(),
            [
                ("size", "size"),
                ("pgbouncer", "pgbouncer"),
                ("connect", "connection"),
                ("pool", "pool")
            ]
        );
        assert!(!r.last_is_prefix);
        // only stop words: keep them
        assert_eq!(qterms("what is this?"), ["what", "is", "this"]);
        assert_eq!(qterms("The the THE"), ["the"]);
        // dedup by normalised term, first surface wins
        let r = q("deploying deployed");
        assert_eq!(r.terms.len(), 1);
        assert_eq!(r.terms[0].surface, "deploying");
        assert!(!r.last_is_prefix);
    }

    #[test]
    fn only_an_unfinished_last_query_word_is_a_prefix() {
        let r = q("connection poo");
        assert_eq!(qterms("connection poo"), ["connect", "poo"]);
        assert!(r.last_is_prefix);
        assert_eq!(r.terms[1].surface, "poo");
        assert!(!q("connection pool ").last_is_prefix);
        assert!(!q("connection pool.").last_is_prefix);
        assert!(!q("connection pool?").last_is_prefix);
        assert!(q("pool").last_is_prefix);
        assert!(q("max_cli").last_is_prefix);
        // single char: no
        assert!(!q("connection p").last_is_prefix);
        // trailing stop word is dropped -> the last kept term is complete
        assert!(!q("pgbouncer for").last_is_prefix);
        // only stop words: the last one may still be a prefix
        assert!(q("how to").last_is_prefix);
        // last word duplicates an earlier term: not the last term, so no prefix
        assert!(!q("pool size pool").last_is_prefix);
        // CJK never
        assert!(!q("连接").last_is_prefix);
        assert!(!q("").last_is_prefix);
    }

    #[test]
    fn terms_are_cut_to_max_term_bytes_on_a_char_boundary() {
        let long = "a".repeat(200);
        assert_eq!(idx(&long), ["a".repeat(MAX_TERM_BYTES)]);
        // multi-byte: 1 + 31 * 2 = 63 bytes, the next 'ж' would exceed 64
        let long = format!("x{}", "ж".repeat(199));
        let terms = idx(&long);
        assert_eq!(terms, [format!("x{}", "ж".repeat(31))]);
        assert_eq!(terms[0].len(), 63);
        let r = q(&long);
        assert_eq!(r.terms[0].term, terms[0]);
        assert_eq!(r.terms[0].surface, terms[0]);
        assert!(r.last_is_prefix);
        // every term of a long mixed word respects the limit
        let long = "Internationalization".repeat(10);
        assert!(idx(&long).iter().all(|t| t.len() <= MAX_TERM_BYTES));
    }

    #[test]
    fn a_query_keeps_its_first_max_query_terms_terms() {
        let text: String = (0..100).map(|i| format!("w{i} ")).collect();
        let r = q(&text);
        assert_eq!(r.terms.len(), MAX_QUERY_TERMS);
        assert_eq!(r.terms[0].term, "w0");
        assert_eq!(r.terms[MAX_QUERY_TERMS - 1].term, "w31");
        assert_eq!(r.read_to, text.find(" w32"), "read up to the end of w31");
        let text: String = (0..100).map(|i| format!("w{i} ")).collect::<String>() + "w99x";
        assert!(!q(&text).last_is_prefix);
        // Repeated words and stop words are no terms left out.
        let text = "the w0 and w1 ".repeat(50);
        assert_eq!(q(&text).read_to, None);
        // A question of stop words only is searched by them: past the 32nd, cut there.
        let stops: Vec<&str> = "a about above after again against all am an and any are as at be \
            because been before being below between both but by could did do does doing during \
            each few for from further had has"
            .split_whitespace()
            .collect();
        assert!(stops.iter().all(|w| is_stop_word(w)) && stops.len() > MAX_QUERY_TERMS);
        let text = stops.join(" ");
        let r = q(&text);
        assert_eq!(r.terms.len(), MAX_QUERY_TERMS);
        let cut = r.read_to.expect("cut");
        // The part read holds the same terms, none left out.
        let read = q(&text[..cut]);
        assert_eq!(read.terms, r.terms);
        assert_eq!(read.read_to, None);
        assert!(cut < text.len() && text[cut..].starts_with(' '), "{cut}");
        // CJK: each character pair is a term; the cut falls inside the run.
        let run: String = (0x4E00u32..0x4E40).filter_map(char::from_u32).collect();
        let r = q(&run);
        assert_eq!(r.terms.len(), MAX_QUERY_TERMS);
        let read = r.read_to.expect("cut");
        assert!(read < run.len() && run.is_char_boundary(read), "{read}");
    }

    #[test]
    fn text_without_words_gives_no_terms() {
        for s in [
            "",
            "   ",
            "\n\t ",
            "!?.,;:-_/()[]{}",
            "— … «»",
            "👍🎉",
            "。、！",
        ] {
            assert!(idx(s).is_empty(), "{s:?}");
            assert!(slug(s).is_empty(), "{s:?}");
            let r = q(s);
            assert!(r.terms.is_empty(), "{s:?}");
            assert!(!r.last_is_prefix, "{s:?}");
        }
    }

    fn tokens(text: &str, fast: bool) -> Vec<String> {
        let mut v = Vec::new();
        scan_with(text, fast, |t| {
            v.push(match t {
                Token::Word {
                    surface,
                    stem,
                    end,
                    part,
                } => format!("W {surface} {stem} {end} {part}"),
                Token::Cjk { run } => format!("C {run}"),
            })
        });
        v
    }

    #[test]
    fn fast_paths_match_reference() {
        const FIXED: &[&str] = &[
            "don't rock'n'roll 'quoted' dogs' 1'000 a'1 1'a x''y",
            "pool_size=v1.2 S:t 3.14 1,000 a.b:c/d-e __init__ e-mail",
            "PgBouncer连接池配置 redis연결pool データbase 数\u{301}a 数\u{AD}据 한'a a'한",
            "Ｐｏｏｌ１２ café naïve ΣΟΦΙΑ İstanbul straße a\u{B7}b x\u{202F}y",
            "ﬁrewall oﬀ µs λόγος ΛΌΓΟΣ Þór Kadıköy x² 𝐃𝐞𝐩𝐥𝐨𝐲 ½ ǅ",
            "data\u{200B}base a\u{200B}\u{200B}1 x\u{200B}数 数\u{200B}x a\u{200B}-b é\u{200B}Ｐ",
            "we'll I'd she’ll OK'D y'all I'd've we'll.x we'll数 we'll한 한we'll we’ll한 é’ll é'd",
            "we'llé we'll'x rock'n'roll we＇ｌｌ we'ｌｌ x'm'd 1'd a'ｄ数 we'll\u{AD}x we'll\u{200B}x",
            "é한e\u{301}글’ve 한 数'd 한'd 한’ll é한'm y've’한 y'd’x é'd’’x é'd\u{AD}",
            "1,000 12,500,000 1,0000 12345,678,901 a1,000 1,000a 数1,000 한1,000 한a1,000 x'1,000",
            "１，０００ é1,000 1,000.50 ,000 1,000, 1'1,000 a,000,000 1,00,000 카1,000 ß1,000,000",
            "CO₂ H₂O m² 10⁶ x₁₂y ₂O 数₂x é₂ e\u{301}₂ x²数 한₂ x\u{200B}₂ x₂\u{200B}y x'₂ Ｐ₂",
            "500ms 500MB 1,000ms 5'ms 10k 3f9a2c1 500mS ５００ｍｓ 500é 500ms数 x500ms 500m's 12ab34",
        ];
        for text in FIXED {
            assert_eq!(tokens(text, true), tokens(text, false), "{text:?}");
        }
        // '|'-separated pieces of random text.
        let alphabet: Vec<&str> =
            "a|B|z|q|1|0|'|’|.|,|_|-|:|/| |\n|\t|é|ß|İ|ع|数|据|カ|ー|한|글|，|。|Ｐ|１\
            |e\u{301}|x\u{AD}y|x\u{200B}y|😀\u{200D}😀|😀|·|\"|(|?|ll|d|m|ve|₂|²"
                .split('|')
                .collect();
        // (Combining marks and format chars appear after a letter, as in real text: a stray one
        // after an apostrophe next to CJK is the one place where the shortcuts may differ.)
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            assert_eq!(tokens(&text, true), tokens(&text, false), "{text:?}");
        }
    }

    #[test]
    fn ascii_and_unicode_paths_agree() {
        // the same ASCII words give the same terms when the chunk contains non-ASCII text
        assert_eq!(
            idx("pool_size=v1.2 don't"),
            ["pool", "size", "v1", "2", "dont"]
        );
        assert_eq!(
            idx("pool_size=v1.2 don't—ж"),
            ["pool", "size", "v1", "2", "dont", "ж"]
        );
        assert_eq!(idx("pool_size=v1.2—ж"), ["pool", "size", "v1", "2", "ж"]);
    }
}
