//! How much a note's match says about the question: the share of the question's information a
//! lexical hit covers, whether its match is more than one typo, what feedback on earlier
//! questions adds, and whether the question names the note. The score floor and the ranking's
//! evidence both come from here; priors (type, recency, importance, usage) only multiply it.

use super::cands::Cands;
use super::learned::Learned;
use super::query::TermWeight;
use super::shown::ShownCache;
use crate::error::Result;
use crate::graph::Graph;
use crate::index::LexicalIndex;
use crate::index::lexical::TermMatch;
use crate::index::tokenize::{QueryTerms, TermList, Tokenizer};
use crate::ranking;
use crate::store::LazyReader;
use rustc_hash::FxHashMap;

/// What made a direct hit, for `--explain`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DirectInfo {
    /// Share of the question's information its words match (0..=1).
    pub coverage: f32,
    /// Evidence from feedback on earlier questions with these terms (-1..=1).
    pub learned: f32,
    /// The question is the note's title or id.
    pub title_match: bool,
    /// The note was used before (see [`ranking::counts_as_used`]).
    pub used: bool,
    /// Its words match one informative term of a question with more.
    pub single: bool,
    /// Bit i set when query term i matched as it is in its id, name, description or tags.
    pub titled: u32,
    /// Bit i set when query term i (or one of its expansions) is a word of its id.
    pub in_id: u32,
    /// Bit i set when query term i (or one of its expansions) is a word of its name.
    pub in_name: u32,
    /// The question's informative terms its words match.
    pub words: usize,
    /// Its note was read and holds no two of the question's informative words it matches in
    /// one passage (`recall::passages`): they are there in other senses, apart.
    pub apart: bool,
}

impl DirectInfo {
    /// Whether this hit's evidence says the question has an answer here, enough to seed the walk:
    /// it covers [`ranking::STRONG_COVERAGE`] of the question with more than one of its
    /// informative terms, feedback says as much, or the question names it. One shared word of a
    /// longer question is a coincidence as often as not (a place a note mentions, a word in
    /// another sense): the note may answer, its neighbours have nothing to go on. The notes
    /// reached are returned only when a hit also [vouches for
    /// them](DirectInfo::vouches_for_neighbours).
    pub fn is_strong(&self) -> bool {
        let by_words = (!self.single && !self.apart) || self.title_match;
        (by_words || self.learned >= ranking::STRONG_COVERAGE)
            && self.strength() >= ranking::STRONG_COVERAGE
    }

    /// Whether the notes the walk reached are worth returning: it is strong, and covers
    /// [`ranking::NEIGHBOUR_COVERAGE`] of the question or matches [`ranking::NEIGHBOUR_WORDS`]
    /// of its informative terms, or the question names it, or feedback vouches for it.
    /// With `by_words` false, matching [`ranking::NEIGHBOUR_WORDS`] is not enough: what answers
    /// most of a question the memory may not know (see [`ranking::UNKNOWN_SUBJECT_SHARE`]).
    pub fn vouches_for_neighbours(&self, by_words: bool) -> bool {
        self.is_strong()
            && (self.title_match
                || self.learned >= ranking::STRONG_COVERAGE
                || self.coverage >= ranking::NEIGHBOUR_COVERAGE
                || (by_words && self.words >= ranking::NEIGHBOUR_WORDS))
    }

    /// How much of the question this hit answers, 0..=1: the share its words cover or feedback
    /// gives it, 1 when the question names it.
    pub fn strength(&self) -> f32 {
        if self.title_match {
            1.0
        } else {
            self.coverage.max(self.learned).clamp(0.0, 1.0)
        }
    }
}

/// The question's terms as evidence: how informative each is.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// Per query term (its bit in a hit's `matched`): the idf it weighs, 0 when uninformative.
    info: Vec<f32>,
    /// Per query term: what a match through one of its expansions (typo, prefix) counts.
    partial: Vec<f32>,
    /// Sum of `info`.
    total: f32,
    /// The largest weight of a term the memory holds.
    held_max: f32,
    /// Sum of `info` over the words no note holds (see [`Evidence::unknown_share`]).
    unknown: f32,
    /// Bits of the terms that are names the question writes and the memory holds (see
    /// [`name_words`]).
    held_names: u32,
    /// Per query term: the position of the other term it is a form of, which it counts as.
    form_of: Vec<Option<usize>>,
}

/// Common English words (the ISO stop-word list, lower case): in a question they say little
/// about its topic ("keep", "over", "next", "without"), whatever their idf in a small memory.
static GENERIC_WORDS: std::sync::LazyLock<rustc_hash::FxHashSet<&'static str>> =
    std::sync::LazyLock::new(|| {
        stop_words::lookup("en")
            .unwrap_or(&[])
            .iter()
            .copied()
            .collect()
    });

mod other_common_words {
    include!(concat!(env!("OUT_DIR"), "/other_common_words.rs"));
}
use other_common_words::{OTHER_COMMON_WORDS, OTHER_LANGUAGES};

/// [`OTHER_COMMON_WORDS`] by word: every word of every question is looked up.
static OTHER_LANGUAGES_OF: std::sync::LazyLock<rustc_hash::FxHashMap<&'static str, u32>> =
    std::sync::LazyLock::new(|| OTHER_COMMON_WORDS.iter().copied().collect());

/// Build the word tables above on this thread, now (see [`crate::build_process_tables`]).
pub(crate) fn build_word_tables() {
    std::sync::LazyLock::force(&GENERIC_WORDS);
    std::sync::LazyLock::force(&OTHER_LANGUAGES_OF);
}

/// The bits of [`OTHER_LANGUAGES`] whose common words hold `word` (0 for none).
fn other_language_bits(word: &str) -> u32 {
    OTHER_LANGUAGES_OF.get(word).copied().unwrap_or(0)
}

/// The languages (bits of [`OTHER_LANGUAGES`]) a question is written in: three of its words or
/// more are common words of the language, one at least a word English lacks, and they outnumber
/// its common English words the language lacks ("how to put the car on the ferry" writes `car`
/// and `on`, which French has, among English ones).
pub fn other_languages<'w>(surfaces: impl IntoIterator<Item = &'w str>) -> u32 {
    let mut common = [0usize; OTHER_LANGUAGES.len()];
    let mut lacking_in_english = [0usize; OTHER_LANGUAGES.len()];
    let mut english_only = [0usize; OTHER_LANGUAGES.len()];
    for w in surfaces {
        let bits = other_language_bits(w);
        let english = GENERIC_WORDS.contains(w);
        for i in 0..OTHER_LANGUAGES.len() {
            let theirs = bits & (1 << i) != 0;
            common[i] += usize::from(theirs);
            lacking_in_english[i] += usize::from(theirs && !english);
            english_only[i] += usize::from(english && !theirs);
        }
    }
    (0..OTHER_LANGUAGES.len())
        .filter(|&i| common[i] >= 3 && lacking_in_english[i] >= 1 && common[i] > english_only[i])
        .fold(0, |bits, i| bits | 1 << i)
}

/// Whether `surface` is a common word of one of `languages` (see [`other_languages`]).
pub fn is_common_in(surface: &str, languages: u32) -> bool {
    languages != 0 && other_language_bits(surface) & languages != 0
}

/// Whether a folded question word says little about a question's topic: a common English word,
/// a month or weekday, or a number of at most [`ranking::SMALL_NUMBER_DIGITS`] digits (a day of
/// a date, a count, a version: "iOS 18", "tram 28"): notes hold dates and such numbers for as
/// many reasons as they have subjects.
pub fn is_generic(surface: &str) -> bool {
    GENERIC_WORDS.contains(surface)
        || CALENDAR_WORDS.contains(&surface)
        || TIME_WORDS.contains(&surface)
        || (surface.len() <= ranking::SMALL_NUMBER_DIGITS
            && surface.bytes().all(|b| b.is_ascii_digit()))
}

/// Words that carry a sentence's grammar and never its subject: articles, pronouns, auxiliary
/// verbs, question words, conjunctions and the commonest prepositions. Common words may name
/// what a question asks about when it has no other (`test`, `value`, `system` are on the ISO
/// list); these never do, so a question of them alone ("is it?", "how") has nothing to find,
/// unless it writes one in capitals ("IT", "US").
const FUNCTION_WORDS: [&str; 95] = [
    "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did",
    "done", "have", "has", "had", "it", "its", "this", "that", "these", "those", "i", "me", "my",
    "we", "us", "our", "you", "your", "he", "him", "his", "she", "her", "they", "them", "their",
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "not", "no", "so",
    "than", "then", "there", "here", "can", "could", "will", "would", "shall", "should", "may",
    "might", "must", "about", "into", "over", "under", "up", "down", "out", "off", "all", "any",
    "some", "each", "every", "just", "too", "very",
];

/// Months and days of the week: capitalised by convention, not names of things.
const CALENDAR_WORDS: [&str; 19] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Other words of when, which notes hold on every subject ("no deploys on weekends", "paged
/// over the holidays") as they hold dates.
const TIME_WORDS: [&str; 7] = [
    "weekend",
    "weekends",
    "tonight",
    "tomorrow",
    "yesterday",
    "holiday",
    "holidays",
];

/// The words `text` writes as names, folded to lower case: capitalised (`Gmail`, `iPhone`, `UK`)
/// where a sentence does not start, made of letters only (identifiers are left out; a possessive
/// `'s` is dropped), months and weekdays left out. A question that capitalises every word
/// ("Service Map") or most of them ("How To Roll Back A Deploy", one in capitals) says nothing
/// by it: it has no names.
pub fn name_words(text: &str) -> Vec<String> {
    names_in(text)
        .into_iter()
        .filter(|n| !n.starts_sentence)
        .map(|n| n.word)
        .collect()
}

/// The words of [`name_words`] written as a proper name is: a capital, then lower-case letters
/// only (`Maya`, `Porto`, `Kafka`; not `CI`, `iPhone` or `GitHub`). A question naming a person,
/// a place or a product this way is about it; an acronym or an identifier is often only its
/// setting ("will CI pull the test out").
pub fn proper_name_words(text: &str) -> Vec<String> {
    names_in(text)
        .into_iter()
        .filter(|n| n.proper && !n.starts_sentence)
        .map(|n| n.word)
        .collect()
}

/// The words that start a sentence of `text` written as a proper name is (`Joana working
/// hours`), folded: a name or the sentence's first word, which the question alone cannot tell
/// apart. The memory can: a word most notes holding it write with a capital is a name there
/// (`ranking::START_NAME_CAPITALISED_PERCENT`, see `recall::engine`).
pub fn proper_words_starting_sentences(text: &str) -> Vec<String> {
    names_in(text)
        .into_iter()
        .filter(|n| n.proper && n.starts_sentence)
        .filter(|n| !is_generic(&n.word) && !FUNCTION_WORDS.contains(&n.word.as_str()))
        .map(|n| n.word)
        .collect()
}

/// A capitalised word of a question (see [`name_words`]).
struct NameWord {
    /// Folded.
    word: String,
    /// A capital, then lower-case letters only.
    proper: bool,
    /// It starts a sentence: a name only if the memory says so.
    starts_sentence: bool,
}

/// The capitalised words of `text` (see [`name_words`]), those starting a sentence included.
fn names_in(text: &str) -> Vec<NameWord> {
    let mut out = Vec::new();
    // Words of letters, and how many of them are capitalised: all of them, and those where no
    // sentence starts.
    let (mut words, mut words_capitalised) = (0usize, 0usize);
    let (mut inner, mut inner_capitalised) = (0usize, 0usize);
    let mut sentence_start = true;
    let mut folded = String::new();
    for raw in text.split_whitespace() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        // A possessive names the same thing: "Maya's" is the name "Maya".
        let word = word
            .strip_suffix("'s")
            .or_else(|| word.strip_suffix("\u{2019}s"))
            .unwrap_or(word);
        let starts = sentence_start;
        sentence_start = raw.ends_with(['.', '?', '!', ':']);
        // Folded as a term is (`Tomás` is the name `tomas`); a word of another script is not
        // weighed as a name.
        crate::index::tokenize::fold_word_into(word, &mut folded);
        if folded.len() < 2 || !folded.bytes().all(|b| b.is_ascii_lowercase()) {
            continue;
        }
        let capitalised = word.chars().any(char::is_uppercase);
        words += 1;
        words_capitalised += usize::from(capitalised);
        if !starts {
            inner += 1;
        }
        if !capitalised {
            continue;
        }
        if !starts {
            inner_capitalised += 1;
        }
        if CALENDAR_WORDS.contains(&folded.as_str()) {
            continue;
        }
        let mut chars = word.chars();
        let proper = chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase);
        out.push(NameWord {
            word: folded.clone(),
            proper,
            starts_sentence: starts,
        });
    }
    let every_word = words >= 2 && words_capitalised == words;
    let most_words = inner >= TITLE_CASE_MIN_WORDS && inner_capitalised * 2 > inner;
    if every_word || most_words {
        out.clear();
    }
    out
}

/// A question with at least this many words of letters where no sentence starts, most of them
/// capitalised, is written in title case or in capitals: its capitals mark no names.
const TITLE_CASE_MIN_WORDS: usize = 3;

/// Forget what the memory holds of each name the question writes (the index terms `terms` of
/// the words of [`name_words`]) that no note writes with a capital letter (no note writes a
/// word of the same term capitalised: `Zoës` is the name `Zoe`):
/// "Word" where the notes only say "words", "Swift" where they say "swift rollback". The same
/// letters in lower case are another word, so the name counts as one the memory lacks
/// ([`ranking::UNKNOWN_NAME_IDF_SHARE`]) and matches nothing, not even a typo. A name the memory
/// does not hold as it is (a typo of a name) keeps its typo matches.
pub fn forget_names_written_lower(lex: &LexicalIndex, terms: &[String], matches: &mut [TermMatch]) {
    for term in terms {
        let Some(m) = matches.iter_mut().find(|m| m.term == *term) else {
            continue;
        };
        if m.held_as_is() && !lex.writes_capitalised(term) {
            m.expansions.clear();
            m.first_df = 0;
        }
    }
}

/// The position in `matches` of another of the question's words that `matches[i]` is a form
/// of: `matches[i]` is not held as it is but matches, through a typo or prefix expansion, what
/// that word is held as.
fn another_form_of(i: usize, matches: &[TermMatch]) -> Option<usize> {
    let m = matches.get(i)?;
    if m.held_as_is() {
        return None;
    }
    matches
        .iter()
        .enumerate()
        .find(|(j, o)| *j != i && o.held_as_is() && m.expansions.iter().any(|(t, _)| *t == o.term))
        .map(|(j, _)| j)
}

fn idf(docs: f32, df: u64) -> f32 {
    let df = df as f32;
    (1.0 + (docs - df + 0.5) / (df + 0.5)).ln()
}

impl Evidence {
    /// The informativeness of each term of `matches` (the expansions of `qt`'s terms, in query
    /// order) in `lex`: the idf of the term, or of its most frequent expansion when only its
    /// expansions are in the memory; a word found nowhere weighs
    /// [`ranking::UNKNOWN_TERM_IDF_SHARE`] of an unseen word's idf (a name, one of `names`,
    /// [`ranking::UNKNOWN_NAME_IDF_SHARE`]), a common English word
    /// [`ranking::GENERIC_TERM_IDF_SHARE`] of its idf.
    pub fn of(
        lex: &LexicalIndex,
        qt: &QueryTerms,
        matches: &[TermMatch],
        names: &[String],
        capitals: &[String],
    ) -> Evidence {
        let docs = lex.live_docs().max(1) as f32;
        // In a memory of a few notes no word can be rare: even one held by a single note has a
        // low idf. The bar is lowered to what such a word reaches.
        let bar = ranking::MIN_MATCH_IDF.min(ranking::SMALL_MEMORY_IDF_SHARE * idf(docs, 1));
        let mut info = Vec::with_capacity(matches.len());
        let mut partial = Vec::with_capacity(matches.len());
        // Per term: its idf when the memory holds it, whether it is a common English word, and
        // whether it is a word of grammar only ([`FUNCTION_WORDS`]).
        let mut held = Vec::with_capacity(matches.len());
        let mut held_names = 0u32;
        let form_of: Vec<Option<usize>> = (0..matches.len())
            .map(|i| another_form_of(i, matches))
            .collect();
        let languages = other_languages(qt.terms.iter().map(|t| t.surface.as_str()));
        for (i, m) in matches.iter().enumerate() {
            if i >= qt.terms.len() {
                // A joined identifier whole, after the question's words (`index::joined`): it
                // ranks the notes that write it; its parts are the words that count. Unless it
                // is a number whose parts are all common (`24.11`, `3.12`: each part could be a
                // day or a count): then the whole says what they do not.
                let parts_say_nothing = m.term.bytes().any(|b| b.is_ascii_digit())
                    && m.term
                        .split(|c: char| !c.is_ascii_alphanumeric())
                        .all(is_generic);
                let w = if parts_say_nothing {
                    idf(docs, m.first_df)
                } else {
                    0.0
                };
                info.push(w);
                partial.push(0.0);
                held.push((w, false, false));
                continue;
            }
            if !m.expansions.is_empty() && names.contains(&m.term) {
                held_names |= 1u32 << (i % 32);
            }
            let generic = qt
                .terms
                .get(i)
                .is_some_and(|t| is_generic(&t.surface) || is_common_in(&t.surface, languages));
            let mut w = match m.expansions.first() {
                // Another form of a word the question also writes ("certified" and
                // "certificate", stemmed apart, the first matched through the second): one word.
                Some(_) if form_of[i].is_some() => 0.0,
                Some(_) => idf(docs, m.first_df),
                None if names.contains(&m.term) => idf(docs, 0) * ranking::UNKNOWN_NAME_IDF_SHARE,
                None => idf(docs, 0) * ranking::UNKNOWN_TERM_IDF_SHARE,
            };
            // A grammar word written in capitals ("IT", "US") names something.
            let function = qt.terms.get(i).is_some_and(|t| {
                FUNCTION_WORDS.contains(&t.surface.as_str()) && !capitals.contains(&t.surface)
            });
            held.push((
                if m.expansions.is_empty() { 0.0 } else { w },
                generic,
                function,
            ));
            if generic {
                w *= ranking::GENERIC_TERM_IDF_SHARE;
            }
            info.push(if w >= bar { w } else { 0.0 });
            partial.push(
                m.expansions
                    .iter()
                    .filter(|(t, w)| *t != m.term && *w < 1.0)
                    .map(|(_, w)| *w)
                    .fold(0.0f32, f32::max),
            );
        }
        // A question of grammar words alone ("is it?", "how") asks about nothing: in a small
        // memory where such a word is rare it would otherwise weigh as a word of the subject.
        if !held.is_empty() && held.iter().all(|&(_, _, function)| function) {
            info.iter_mut().for_each(|w| *w = 0.0);
        }
        let mut total: f32 = info.iter().sum();
        // No word passed the bar: every word of the question is in most notes (a memory about
        // one topic, asked about that topic) or is a common English word. The topical words do
        // not tell the notes apart, but the question is still about them: the ones the memory
        // holds count at their idf and BM25 ranks the notes. Failing those, common words count
        // at their own idf when they pass the bar: rare here, they name what is asked ("auth");
        // words of grammar alone never do.
        for with_generic in [false, true] {
            if total > 0.0 {
                break;
            }
            info = held
                .iter()
                .map(|&(w, generic, function)| match (generic, with_generic) {
                    (false, false) => w,
                    (true, true) if w >= bar && !function => w,
                    _ => 0.0,
                })
                .collect();
            total = info.iter().sum();
        }
        let held_max = info
            .iter()
            .zip(matches)
            .filter(|(_, m)| !m.expansions.is_empty())
            .map(|(&w, _)| w)
            .fold(0.0f32, f32::max);
        // Words no note holds: not a name the notes write only in lower case (they hold it),
        // nor a pair of CJK characters (one that spans two words of the question is in no
        // note, whatever it asks).
        let unknown = info
            .iter()
            .zip(matches)
            .zip(&qt.terms)
            .filter(|((_, m), t)| {
                m.expansions.is_empty() && !t.cjk && lex.df(m.term.as_bytes()) == 0
            })
            .map(|((&w, _), _)| w)
            .sum();
        Evidence {
            info,
            partial,
            total,
            unknown,
            held_max,
            held_names,
            form_of,
        }
    }

    /// The informative terms with their weights (`--explain`).
    pub fn terms(&self, matches: &[TermMatch], names: &[String]) -> Vec<TermWeight> {
        matches
            .iter()
            .zip(&self.info)
            .zip(&self.form_of)
            .map(|((m, &idf), form_of)| TermWeight {
                term: m.term.clone(),
                idf,
                in_memory: !m.expansions.is_empty(),
                name: names.contains(&m.term),
                form_of: form_of.and_then(|j| matches.get(j)).map(|o| o.term.clone()),
            })
            .collect()
    }

    /// The share (0..=1) of the question's information a hit with these `matched` and `exact`
    /// term bits covers: each informative term matched as it is counts its idf, one matched only
    /// through an expansion the expansion's share of it.
    pub fn coverage(&self, matched: u32, exact: u32) -> f32 {
        if self.total <= 0.0 {
            return 0.0;
        }
        let mut got = 0.0;
        for (i, (&w, &p)) in self.info.iter().zip(&self.partial).enumerate() {
            let bit = 1u32 << (i % 32);
            if exact & bit != 0 {
                got += w;
            } else if matched & bit != 0 {
                got += w * p;
            }
        }
        (got / self.total).min(1.0)
    }

    /// The share (0..=1) of the question's information in words no note holds, nor anything
    /// within typo distance of them (CJK character pairs and names the notes write in lower case
    /// left out).
    pub fn unknown_share(&self) -> f32 {
        if self.total <= 0.0 {
            0.0
        } else {
            (self.unknown / self.total).min(1.0)
        }
    }

    /// Whether the memory holds most of what the question asks about: less than
    /// [`ranking::UNKNOWN_SUBJECT_SHARE`] of its information is in words no note holds.
    pub fn knows_question(&self) -> bool {
        self.unknown_share() < ranking::UNKNOWN_SUBJECT_SHARE
    }

    /// The BM25F score a direct hit needs: [`ranking::MIN_LEXICAL_SCORE`], lower when even the
    /// question's rarest word the memory holds has a low idf (a memory of a few notes, or a
    /// question in words most notes hold), since every score is low then.
    pub fn lexical_floor(&self) -> f32 {
        ranking::MIN_LEXICAL_SCORE.min(ranking::LEXICAL_FLOOR_IDF_SHARE * self.held_max)
    }

    /// Whether a hit's words match one informative term of a question with more.
    pub fn single(&self, matched: u32) -> bool {
        self.informative() > 1 && self.words(matched) < 2
    }

    /// How many of the question's informative terms a hit's words match.
    pub fn words(&self, matched: u32) -> usize {
        self.counts(matched, matched).1
    }

    /// The bits of `matched` that are informative terms.
    pub fn informative_bits(&self, matched: u32) -> u32 {
        self.info
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0.0)
            .fold(0u32, |bits, (i, _)| bits | (matched & (1u32 << (i % 32))))
    }

    /// How many of the question's terms are informative.
    fn informative(&self) -> usize {
        self.info.iter().filter(|w| **w > 0.0).count()
    }

    /// Informative terms matched: (as they are, in all).
    fn counts(&self, matched: u32, exact: u32) -> (usize, usize) {
        let (mut exact_n, mut any_n) = (0, 0);
        for (i, &w) in self.info.iter().enumerate() {
            if w <= 0.0 {
                continue;
            }
            let bit = 1u32 << (i % 32);
            exact_n += usize::from(exact & bit != 0);
            any_n += usize::from(matched & bit != 0);
        }
        (exact_n, any_n)
    }

    /// Why a hit with these term bits and `coverage` does not pass the floor, or `None` when it
    /// does: it must cover [`ranking::MIN_COVERAGE`] of the question, more
    /// ([`ranking::SINGLE_TERM_MIN_COVERAGE`]) when it matches a single informative term, and a
    /// single term of a longer question matched only through a typo or prefix is never enough
    /// (a one-word question matched through a typo is). A single term that is a name the
    /// question writes, matched as it is in the note's id, name, description or tags (bits
    /// `titled`), needs only [`ranking::MIN_COVERAGE`]: a note that says it is about Maya
    /// answers a question about Maya, whatever else the question says in words the notes lack.
    /// A note `used` before passes with [`ranking::USED_MIN_COVERAGE`] and one informative term
    /// as it is.
    pub fn floor(
        &self,
        matched: u32,
        exact: u32,
        titled: u32,
        coverage: f32,
        used: bool,
    ) -> Option<&'static str> {
        let (exact_n, any_n) = self.counts(matched, exact);
        if used && exact_n >= 1 && coverage >= ranking::USED_MIN_COVERAGE {
            return None;
        }
        if coverage < ranking::MIN_COVERAGE {
            Some("matches too little of the question")
        } else if exact_n == 0 && any_n < 2 && self.informative() > 1 {
            Some("matches one term, only through a typo or prefix")
        } else if any_n < 2
            && coverage < ranking::SINGLE_TERM_MIN_COVERAGE
            && titled & self.held_names == 0
        {
            // ...unless that word is a name the note's summary holds: the note is about it.
            Some("shares a single word with a longer question")
        } else {
            None
        }
    }

    /// Per note (graph ordinal): what feedback on earlier questions sharing this question's
    /// informative terms says, in -1..=1: the idf-weighted mean of the terms' affinities, and,
    /// when it points towards the note, weighed by how much of the question those terms cover
    /// ([`ranking::learned_share_weight`]). A note found wrong keeps the plain mean: a warning
    /// is worth hearing from any past question.
    pub fn learned(
        &self,
        terms: &[TermMatch],
        graph: &Graph,
        learned: &Learned,
    ) -> FxHashMap<u32, f32> {
        let mut sums: FxHashMap<u32, (f32, f32)> = FxHashMap::default();
        if learned.is_empty() || self.total <= 0.0 {
            return FxHashMap::default();
        }
        for (m, &w) in terms.iter().zip(&self.info) {
            if w <= 0.0 {
                continue;
            }
            for n in learned.notes_of(&m.term) {
                if let Some(o) = graph.ord(&n.node) {
                    let a = n.affinity();
                    let e = sums.entry(o).or_default();
                    e.0 += w * a / self.total;
                    if a > 0.0 {
                        e.1 += w / self.total;
                    }
                }
            }
        }
        sums.into_iter()
            .map(|(o, (sum, covered))| {
                if sum > 0.0 {
                    (o, sum * ranking::learned_share_weight(covered))
                } else {
                    (o, sum)
                }
            })
            .filter(|(_, v)| *v != 0.0)
            .collect()
    }
}

/// A direct hit's evidence from its lexical base (0 when its words did not pass the floor) and
/// what feedback says (`learned`, -1..=1); `None` when it has none that passes.
pub fn with_learned(lexical_base: f32, learned: f32) -> Option<f32> {
    if learned < 0.0 {
        let keep = 1.0 + (1.0 - ranking::WRONG_KEEP) * learned.max(-1.0);
        return (lexical_base > 0.0).then_some(lexical_base * keep);
    }
    let passes = lexical_base > 0.0 || learned >= ranking::MIN_COVERAGE;
    passes.then_some(lexical_base + ranking::LEARNED_WEIGHT * learned)
}

/// Whether `title`'s terms are exactly the question's (`matches`), each title term the query
/// term itself or one of its expansions (a typo, a completed prefix), and each query term so
/// written in the title: the note's index then holds every query term in the title's field,
/// which is what [`title_matches`] looks at before reading or tokenizing a title.
fn names(tok: &Tokenizer, matches: &[TermMatch], title: &str, t: &mut TermList) -> bool {
    tok.query_terms_into(title, t);
    !t.is_empty()
        && t.len() == matches.len()
        && t.iter().all(|t| matches.iter().any(|m| m.answers(t)))
        && matches.iter().all(|m| t.iter().any(|t| m.answers(t)))
}

/// Whether the question writes the last part of `id` (`reference/error-codes` in "error codes
/// list") as a phrase among more words: two terms or more, in order among the question's terms
/// (`matches`, stop words left out), each the query term itself or one of its expansions, with
/// at most [`ranking::ID_PHRASE_GAP_TERMS`] other terms between two of them ("marc language
/// field mapping" names `reference/marc-field-mapping`). A part of three terms or more is named
/// by all but its last too: the last word of an id often says what kind of note it is, which a
/// question leaves out ("dose rule file" names `reference/dose-rule-schema`, "Plug and Charge"
/// `plug-and-charge-pki`). A note so named is about what the question is about; the question is
/// not its whole title (see [`title_matches`]), so the rest of the question still counts.
/// `in_id` holds bit i when query term i (or an expansion) is a word of the id, as the index
/// says (`LexHit::in_id`); `t` is scratch for the id's terms.
pub fn names_in_phrase(
    tok: &Tokenizer,
    matches: &[TermMatch],
    id: &str,
    in_id: u32,
    t: &mut TermList,
) -> bool {
    let tail = id.rsplit('/').next().unwrap_or(id);
    // Cheap first: a tail of one word, a question of two, or an id holding fewer than two of
    // the question's terms names nothing by this rule; most hits' ids are never tokenized.
    if matches.len() < 3
        || (in_id & low_bits(matches.len())).count_ones() < 2
        || !tail.contains(['-', '_'])
    {
        return false;
    }
    tok.query_terms_into(tail, t);
    if t.len() < 2 {
        return false;
    }
    // Whether the first `n` terms of the tail are written, in order.
    let written = |n: usize| {
        (0..matches.len()).any(|start| {
            if !matches[start].answers(t.get(0)) {
                return false;
            }
            let mut at = start;
            (1..n).all(|k| {
                let reach = (at + 2 + ranking::ID_PHRASE_GAP_TERMS).min(matches.len());
                match (at + 1..reach).find(|&j| matches[j].answers(t.get(k))) {
                    Some(j) => {
                        at = j;
                        true
                    }
                    None => false,
                }
            })
        })
    };
    // Among more words: a question that is the phrase and no more is its title's business.
    let among_more = |n: usize| n < matches.len() && written(n);
    among_more(t.len()) || (t.len() >= 3 && among_more(t.len() - 1))
}

/// Bits 0..n set (all 32 from n = 32 on): one per query term, as in `LexHit::matched`.
fn low_bits(n: usize) -> u32 {
    if n >= 32 { u32::MAX } else { (1u32 << n) - 1 }
}

/// Give the direct hits whose title or id the question names the title bonus.
///
/// A hit is named when the question's terms are the terms of its whole id, of its name, or of
/// the last part of its id (`runbooks/deploy-rollback` for "deploy rollback"), a term matched
/// through a typo or prefix counting; `question_id` is the note whose id the question is as
/// written. The whole id and the name outrank the last part: with `index` and `ops/index`,
/// "index" names `index`. Only hits whose id or name holds every term of the question (as the
/// index says: [`DirectInfo::in_id`], [`DirectInfo::in_name`]) are looked at: the best
/// [`ranking::ID_CHECKS`] by their ids (no read; tokenized only when the id holds every term),
/// holding every term in their title fields first; names are read from the store, among those
/// whose name holds every term, for the best [`ranking::TITLE_CHECKS`] holding every term as
/// it is in their title fields, and for the [`ranking::TYPO_TITLE_CHECKS`] best of the others
/// (a title written with a typo).
#[allow(clippy::too_many_arguments)]
pub fn title_matches(
    graph: &Graph,
    store: &LazyReader<'_>,
    shown: &ShownCache,
    tok: &Tokenizer,
    question_id: Option<u32>,
    matches: &[TermMatch],
    cands: &mut Cands,
    direct: &mut [(u32, DirectInfo)],
) -> Result<()> {
    if matches.is_empty() || direct.is_empty() {
        return Ok(());
    }
    // A question that is a note's title or id holds every one of its terms, so a hit is checked
    // only when its id or name holds every query term (and so it matched every one): nothing is
    // read or tokenized for the others.
    let all = low_bits(matches.len());
    let named_by_id = |i: usize| Some(direct[i].0) == question_id;
    let titled = |i: usize| direct[i].1.titled & all == all;
    let id_holds_all = |i: usize| direct[i].1.in_id & all == all;
    let name_holds_all = |i: usize| direct[i].1.in_name & all == all;
    let mut best: Vec<usize> = (0..direct.len())
        .filter(|&i| named_by_id(i) || id_holds_all(i) || name_holds_all(i))
        .collect();
    if best.is_empty() {
        return Ok(());
    }
    let base = |i: usize| cands.get(direct[i].0).map_or(0.0, |c| c.base);
    best.sort_by(|&a, &b| {
        named_by_id(b)
            .cmp(&named_by_id(a))
            .then_with(|| titled(b).cmp(&titled(a)))
            .then_with(|| base(b).total_cmp(&base(a)))
            .then_with(|| graph.id(direct[a].0).cmp(graph.id(direct[b].0)))
    });
    best.truncate(ranking::ID_CHECKS);
    // How each is named: 2 by its whole id or its name, 1 by its id's last part.
    let mut named = vec![0u8; best.len()];
    let mut t = TermList::default();
    for (k, &i) in best.iter().enumerate() {
        let id = graph.id(direct[i].0);
        let tail = id.rsplit('/').next().unwrap_or(id);
        if named_by_id(i) || id_holds_all(i) && names(tok, matches, id, &mut t) {
            named[k] = 2;
        } else if tail != id && id_holds_all(i) && names(tok, matches, tail, &mut t) {
            named[k] = 1;
        }
    }
    let unread = |k: usize| named[k] < 2 && name_holds_all(best[k]);
    let mut read: Vec<usize> = (0..best.len())
        .filter(|&k| unread(k) && titled(best[k]))
        .take(ranking::TITLE_CHECKS)
        .collect();
    // `best` holds them by base, best first, after the titled ones.
    read.extend(
        (0..best.len())
            .filter(|&k| unread(k) && !titled(best[k]))
            .take(ranking::TYPO_TITLE_CHECKS),
    );
    let ords: Vec<u32> = read.iter().map(|&k| direct[best[k]].0).collect();
    let records = shown.read(graph, store, &ords)?;
    for (&k, rec) in read.iter().zip(records) {
        if rec
            .as_ref()
            .and_then(|r| r.name.as_deref())
            .is_some_and(|n| names(tok, matches, n, &mut t))
        {
            named[k] = 2;
        }
    }
    let Some(&level) = named.iter().max().filter(|&&l| l > 0) else {
        return Ok(());
    };
    for (k, &i) in best.iter().enumerate() {
        let o = direct[i].0;
        if named[k] == level
            && let Some(c) = cands.hot_mut(o)
        {
            c.base += ranking::EXACT_TITLE_BONUS;
            direct[i].1.title_match = true;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index terms of [`name_words`].
    fn name_terms(tok: &Tokenizer, text: &str) -> Vec<String> {
        name_words(text).iter().map(|w| tok.stem_word(w)).collect()
    }

    #[test]
    fn names_are_capitalised_words_where_no_sentence_starts() {
        let tok = Tokenizer::new();
        assert_eq!(
            name_terms(&tok, "migrating my contacts from Gmail to Outlook"),
            ["gmail", "outlook"]
        );
        // Case humps and acronyms are names; the first word of each sentence and "I" are not.
        assert_eq!(
            name_terms(&tok, "Downgrade an iPhone? Then I call the UK office."),
            ["iphon", "uk"]
        );
        // Months and weekdays are capitalised by convention; identifiers, versions and paths
        // are not names of this kind.
        assert_eq!(
            name_terms(
                &tok,
                "what broke in March on Friday with PgPoolOptions max_connections(50) v2 Next.js"
            ),
            ["pgpoolopt"]
        );
        assert!(name_terms(&tok, "why did the pool time out at month end?").is_empty());
        // Title case and capitals mark no names; a few names among lower-case words do.
        assert!(name_words("How To Roll Back A Deploy").is_empty());
        assert!(name_words("HOW TO ROLL BACK THE DEPLOY").is_empty());
        assert_eq!(
            name_words("Jetpack Compose LazyColumn scrolling is slow"),
            ["compose", "lazycolumn"]
        );
        assert_eq!(name_words("Gmail to Outlook"), ["outlook"]);
        assert!(name_words("Service Map").is_empty());
        assert_eq!(name_words("service map in Word"), ["word"]);
        // Folded like a term: a name with an accent is the name without it.
        assert_eq!(
            name_words("ask Tomás or Siobhán about it"),
            ["tomas", "siobhan"]
        );
        // Proper names are written with one capital: no acronyms, no humps.
        assert_eq!(
            proper_name_words("will CI pull it for Maya's team in Porto via GitHub on an iPhone"),
            ["maya", "porto"]
        );
        assert!(proper_name_words("How To Roll Back A Deploy").is_empty());
        // A sentence's first word may be a name: the memory decides (`recall::engine`); words
        // of grammar and common words never are.
        assert_eq!(
            proper_words_starting_sentences("Joana working hours? Porto only."),
            ["joana", "porto"]
        );
        assert!(proper_words_starting_sentences("How do I deploy? Some hours").is_empty());
        assert!(proper_words_starting_sentences("Deploy Rollback Steps").is_empty());
        assert!(proper_name_words("Joana working hours").is_empty());
        // A possessive is the name it belongs to; the term is what the tokenizer makes of it.
        assert_eq!(
            name_words("what is Maya's focus and Chen\u{2019}s plan"),
            ["maya", "chen"]
        );
        assert_eq!(
            name_terms(&tok, "what is Maya's focus"),
            tok.query_terms("Maya's")
                .terms
                .iter()
                .map(|t| t.term.clone())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn short_numbers_time_words_and_common_words_are_generic_longer_numbers_are_not() {
        for w in [
            "18", "5", "00", "over", "without", "february", "march", "friday", "weekend",
            "holidays",
        ] {
            assert!(is_generic(w), "{w}");
        }
        for w in ["429", "2026", "v2", "p99", "pgbouncer", "febr", "marching"] {
            assert!(!is_generic(w), "{w}");
        }
    }

    fn words(q: &str) -> Vec<String> {
        q.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    }

    fn languages_of(q: &str) -> Vec<&'static str> {
        let w = words(q);
        let bits = other_languages(w.iter().map(String::as_str));
        OTHER_LANGUAGES
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, l)| *l)
            .collect()
    }

    #[test]
    fn a_question_in_another_language_makes_its_common_words_generic() {
        assert!(languages_of("Quelle est la recette de la tarte Tatin ?").contains(&"fr"));
        assert!(languages_of("Come si prepara il risotto alla milanese?").contains(&"it"));
        assert!(languages_of("Какая погода будет в Белграде на выходных?").contains(&"ru"));
        // English questions writing a word another language has in common ("car" and "on" are
        // French ones) are English.
        for q in [
            "how to put the car on the ferry",
            "Can I restart cadence on the Singapore SDR host right now?",
            "what does the con in con-ops stand for",
            "",
        ] {
            assert!(languages_of(q).is_empty(), "{q}: {:?}", languages_of(q));
        }
        let fr = other_languages(["quelle", "est", "la", "recette", "de"]);
        assert!(is_common_in("est", fr));
        assert!(!is_common_in("recette", fr));
        assert!(!is_common_in("est", 0));
    }

    #[test]
    fn the_other_languages_table_holds_each_word_once() {
        // Strictly sorted: no word twice, so the map by word loses no language's bit.
        assert!(OTHER_COMMON_WORDS.windows(2).all(|p| p[0].0 < p[1].0));
        assert_eq!(OTHER_LANGUAGES_OF.len(), OTHER_COMMON_WORDS.len());
        assert!(OTHER_COMMON_WORDS.len() > 1000);
        assert_ne!(other_language_bits("les"), 0);
        assert_eq!(other_language_bits("pgbouncer"), 0);
    }
}
