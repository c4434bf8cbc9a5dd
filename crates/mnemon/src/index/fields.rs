//! The fields of a note that the lexical index knows, and turning a parsed note into per-field
//! term counts (the input of a segment writer).

use super::interner::Interner;
use super::tokenize::{IndexWord, Tokenizer};
use crate::notes::ParsedNote;
use rustc_hash::FxHashMap;

/// Number of indexed fields.
pub const FIELD_COUNT: usize = 5;
/// Field order, as in the segment format and `crate::index::scoring::FIELD_WEIGHTS`.
/// The fields before the body (id, name, description, tags): what a note says it is about.
pub const SUMMARY_FIELDS: usize = 4;
pub const FIELD_NAMES: [&str; FIELD_COUNT] = ["id", "name", "description", "tags", "body"];
/// The id's field (see [`FIELD_NAMES`]): the words of the note's id, path and slug.
pub const ID_FIELD: usize = 0;
/// The name's field (see [`FIELD_NAMES`]).
pub const NAME_FIELD: usize = 1;
/// The tags' field (see [`FIELD_NAMES`]).
const TAGS_FIELD: usize = 3;
/// A term counted more often than this in one field is stored as this (format limit, u16).
pub const MAX_TF: u32 = u16::MAX as u32;

/// The first byte of a name mark: a term that says a note writes a word with a capital letter,
/// followed by the word's index term (`^stripe` for `Stripe`, `^elasticach` for `ElastiCache`). The tokenizer never makes a term
/// with it (it splits words on punctuation), so a mark is never a word of a query or a note.
pub const NAME_MARK: char = '^';

/// Whether `term` is a name mark (see [`NAME_MARK`]), not a word of the text.
pub fn is_name_mark(term: &str) -> bool {
    term.starts_with(NAME_MARK)
}

/// The name mark of a word of ASCII letters, given its index term.
pub fn name_mark(term: &str) -> String {
    let mut mark = String::with_capacity(term.len() + 1);
    mark.push(NAME_MARK);
    mark.push_str(term);
    mark
}

/// The text of each field of `note` (`tags` its tags joined by spaces); the id field's words
/// come from the id, not from a text, so its text is empty. The one place that says which text
/// goes into which field.
fn field_texts<'n>(note: &'n ParsedNote, tags: &'n str) -> [&'n str; FIELD_COUNT] {
    [
        "",
        note.meta.name.as_deref().unwrap_or(""),
        note.meta.description.as_deref().unwrap_or(""),
        tags,
        &note.body,
    ]
}

/// Hand `f` the field and the mark (see [`NAME_MARK`]) of each distinct word that `note` writes
/// with a capital letter anywhere in its id (a file named as its title: `Lake Tahoe trip.md`),
/// name, description or body, sentence starts and headings included, or writes in its tags
/// however it writes it, and that is made of ASCII letters once folded like a term: a word
/// written so somewhere may be a name, and recall takes a name the question writes that no note
/// does for one the memory lacks (`recall::evidence`). Tags are labels, written in lower case
/// by custom (`kafka`, `postgres`): their case says nothing of a name. Counting too many words
/// as written so only makes that rule rarer.
///
/// A word is read as the tokenizer reads it: accents dropped, whether precomposed or written
/// apart (`Siobhán` and `Siobha\u{301}n` give `^siobhan`), apostrophes and invisible chars
/// removed without splitting it (`O'Brien` gives `^obrien`, as a question writing `OBrien` names
/// it); a word with an apostrophe also gives a mark for each capitalised piece between its
/// apostrophes (`James's` gives `^jame`, as the question `James` names it). The mark holds the
/// word's index term, its stem (`Zoës`, `Zoë's` and `Zoe` give `^zoe`; `Windows`, `^window`),
/// so a name the question inflects otherwise than the notes is still the name they write.
fn each_name_mark(tok: &Tokenizer, note: &ParsedNote, mut f: impl FnMut(usize, &str)) {
    let tags = note.meta.tags.join(" ");
    let mut texts = field_texts(note, &tags);
    texts[0] = &note.id;
    let mut seen: rustc_hash::FxHashSet<String> = rustc_hash::FxHashSet::default();
    let mut mark = String::new();
    let mut folded = String::new();
    let mut stem = String::new();
    let in_word = |c: char| {
        (c.is_alphabetic() && !crate::notes::script::is_cjk(c))
            || crate::index::tokenize::is_accent(c)
            || crate::index::tokenize::is_removed_in_word(c)
    };
    for (field, text) in texts.iter().enumerate() {
        // Tags are written in lower case; every word of one is a name.
        let capitalised = |s: &str| {
            field == TAGS_FIELD
                || if s.is_ascii() {
                    s.bytes().any(|b| b.is_ascii_uppercase())
                } else {
                    s.chars().any(char::is_uppercase)
                }
        };
        // A change of script ends a word, as in the tokenizer (`PgBouncer连接池`).
        for word in text.split(|c: char| !in_word(c)) {
            if !capitalised(word) {
                continue;
            }
            let apostrophe = word.contains(crate::index::tokenize::is_apostrophe);
            let pieces = word
                .split(crate::index::tokenize::is_apostrophe)
                .filter(|_| apostrophe);
            for form in std::iter::once(word).chain(pieces) {
                if !capitalised(form) {
                    continue;
                }
                crate::index::tokenize::fold_word_into(form, &mut folded);
                if folded.len() < 2
                    || folded.len() >= crate::index::tokenize::MAX_TERM_BYTES
                    || !folded.bytes().all(|b| b.is_ascii_lowercase())
                {
                    continue;
                }
                let word = if folded.len() > 2 {
                    IndexWord::Stem(&folded)
                } else {
                    IndexWord::Term(&folded)
                };
                let term = tok.term_of(word, &mut stem);
                mark.clear();
                mark.push(NAME_MARK);
                mark.push_str(term);
                if !seen.contains(mark.as_str()) {
                    f(field, &mark);
                    seen.insert(mark.clone());
                }
            }
        }
    }
}

/// One document's terms: for each distinct term, its count in each field; plus field lengths.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DocTerms {
    pub id: String,
    /// Token count per field.
    pub field_lens: [u32; FIELD_COUNT],
    /// Distinct terms, sorted, with per-field counts.
    pub terms: Vec<(String, [u16; FIELD_COUNT])>,
}

/// Tokenize each field of a note, handing `f` the field number and each word (see
/// [`Tokenizer::for_each_index_word`]); returns the token count of each field.
fn each_field_word(
    tok: &Tokenizer,
    note: &ParsedNote,
    mut f: impl FnMut(usize, IndexWord<'_>),
) -> [u32; FIELD_COUNT] {
    let mut field_lens = [0u32; FIELD_COUNT];
    let tags = note.meta.tags.join(" ");
    let texts = field_texts(note, &tags);
    for (field, text) in texts.iter().enumerate() {
        let mut len = 0u32;
        let mut count = |word: IndexWord<'_>| {
            len = len.saturating_add(1);
            f(field, word);
        };
        if field == 0 {
            tok.for_each_slug_word(&note.id, &mut count);
        } else {
            tok.for_each_index_word(text, &mut count);
        }
        field_lens[field] = len;
        // Identifiers joined by dots, slashes, underscores or colons (or hyphened words, three or
        // more), whole, beside the parts
        // just counted (`index::joined`); they add no length: the parts already did.
        if field != 0 {
            super::joined::for_each_joined(text, |whole| f(field, IndexWord::Term(whole)));
            // A word of two hyphened pieces, closed up (`index::compound`).
            super::compound::for_each_hyphened(text, |closed| f(field, IndexWord::Stem(closed)));
        }
    }
    field_lens
}

/// [`each_field_word`] with each word's index term.
fn each_field_term(
    tok: &Tokenizer,
    note: &ParsedNote,
    mut f: impl FnMut(usize, &str),
) -> [u32; FIELD_COUNT] {
    let mut buf = String::new();
    each_field_word(tok, note, |field, word| {
        f(field, tok.term_of(word, &mut buf))
    })
}

impl DocTerms {
    /// Tokenize the fields of a parsed note.
    pub fn from_note(tok: &Tokenizer, note: &ParsedNote) -> DocTerms {
        // A term is hashed once per occurrence but allocated once per note.
        let mut counts: FxHashMap<String, [u16; FIELD_COUNT]> = FxHashMap::default();
        let field_lens = each_field_term(tok, note, |f, term| match counts.get_mut(term) {
            Some(slot) => slot[f] = slot[f].saturating_add(1),
            None => {
                let mut slot = [0; FIELD_COUNT];
                slot[f] = 1;
                counts.insert(term.to_owned(), slot);
            }
        });
        each_name_mark(tok, note, |f, mark| {
            let mut slot = [0; FIELD_COUNT];
            slot[f] = 1;
            counts.insert(mark.to_owned(), slot);
        });
        let mut terms: Vec<_> = counts.into_iter().collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        DocTerms {
            id: note.id.clone(),
            field_lens,
            terms,
        }
    }
}

/// The terms of a batch of notes against one dictionary of the batch: each distinct term is
/// kept once per batch (not once per note), and a note's terms are dictionary numbers, so
/// folding the batch into a segment looks each distinct term up once, not each posting. What a
/// build tokenizes into; [`DocTerms`] serves single updates.
#[derive(Debug, Default)]
pub struct TermBatch<'p> {
    /// Dictionary number -> term.
    pub terms: Interner,
    /// The notes, in the order given.
    pub docs: Vec<BatchDoc<'p>>,
    /// Every note's (dictionary number, per-field counts), one note after another; a note's
    /// numbers are distinct.
    pub postings: Vec<(u32, [u16; FIELD_COUNT])>,
}

/// Distinct words per note a batch's tables are sized for at first.
const BATCH_WORDS_PER_NOTE: usize = 32;

/// Text bytes per distinct (note, term) pair a batch's postings are sized for at first: generated
/// and real notes alike hold one distinct term per 9-10 bytes of text, so the postings rarely
/// grow (a growth copies them, and touches fresh pages, whose faults cost more than the copy).
/// Room never used is never touched: the allocator maps pages lazily.
const TEXT_BYTES_PER_POSTING: usize = 8;

/// The postings a batch of `notes` is sized for at first.
fn postings_room(notes: &[&ParsedNote]) -> usize {
    let text: usize = notes
        .iter()
        .map(|n| {
            n.body.len()
                + n.meta.name.as_deref().map_or(0, str::len)
                + n.meta.description.as_deref().map_or(0, str::len)
        })
        .sum();
    text / TEXT_BYTES_PER_POSTING + notes.len() * BATCH_WORDS_PER_NOTE / 4
}

/// One note of a [`TermBatch`].
#[derive(Debug, Clone, PartialEq)]
pub struct BatchDoc<'p> {
    pub id: &'p str,
    pub field_lens: [u32; FIELD_COUNT],
    /// End of this note's entries in [`TermBatch::postings`] (they start where the last note's end).
    pub end: usize,
}

/// A batch's dictionary outgrew an [`Interner`] (4 GiB of distinct terms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchFull;

impl std::fmt::Display for BatchFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a term batch holds more than 4 GiB of distinct terms; index fewer notes per batch"
        )
    }
}

impl<'p> TermBatch<'p> {
    /// Tokenize `notes` (in this order) into one batch.
    pub fn from_notes(
        tok: &Tokenizer,
        notes: &[&'p ParsedNote],
    ) -> Result<TermBatch<'p>, BatchFull> {
        // The tables start with room for what a batch of generated notes holds (about 30
        // distinct words per note after the first few): they rarely grow.
        let room = notes.len().saturating_mul(BATCH_WORDS_PER_NOTE);
        // Stemmed words seen in this batch, numbered, and each one's term number: a word is
        // stemmed once per batch, and then costs one lookup (a word's term depends on nothing
        // but the word).
        let mut stemmed = Interner::with_capacity(room, room * 8);
        let mut term_of_word: Vec<u32> = Vec::with_capacity(room);
        let mut buf = String::new();
        let mut batch = TermBatch {
            terms: Interner::with_capacity(room, room * 8),
            docs: Vec::with_capacity(notes.len()),
            postings: Vec::with_capacity(postings_room(notes)),
        };
        let mut full = false;
        // Per dictionary number: where its entry of the current note is in `postings`, if the
        // note has one yet (a position at or past the note's start).
        let mut slot_of: Vec<usize> = Vec::with_capacity(room);
        for note in notes {
            let start = batch.postings.len();
            let field_lens = each_field_word(tok, note, |f, word| {
                let number = match word {
                    IndexWord::Term(term) => batch.terms.intern(term),
                    IndexWord::Stem(w) => match stemmed.find(w) {
                        Some(n) => Some(term_of_word[n as usize]),
                        None => batch
                            .terms
                            .intern(tok.term_of(word, &mut buf))
                            .and_then(|t| {
                                stemmed.intern(w)?;
                                term_of_word.push(t);
                                Some(t)
                            }),
                    },
                };
                let Some(t) = number else {
                    full = true;
                    return;
                };
                let t = t as usize;
                if t == slot_of.len() {
                    slot_of.push(usize::MAX);
                }
                let at = slot_of[t];
                if at != usize::MAX && at >= start {
                    let tfs = &mut batch.postings[at].1;
                    tfs[f] = tfs[f].saturating_add(1);
                } else {
                    slot_of[t] = batch.postings.len();
                    let mut tfs = [0; FIELD_COUNT];
                    tfs[f] = 1;
                    batch.postings.push((t as u32, tfs));
                }
            });
            // A note's marks are distinct, and no word of the text is one.
            each_name_mark(tok, note, |f, mark| {
                let Some(t) = batch.terms.intern(mark) else {
                    full = true;
                    return;
                };
                if t as usize == slot_of.len() {
                    slot_of.push(usize::MAX);
                }
                let mut tfs = [0; FIELD_COUNT];
                tfs[f] = 1;
                batch.postings.push((t, tfs));
            });
            if full {
                return Err(BatchFull);
            }
            batch.docs.push(BatchDoc {
                id: &note.id,
                field_lens,
                end: batch.postings.len(),
            });
        }
        Ok(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notes::parse_note;

    #[test]
    fn fields_are_counted_separately() {
        let tok = Tokenizer::new();
        let note = parse_note(
            "pool-sizing",
            b"---\nname: Pool sizing\ndescription: how big\ntags: [pool]\n---\npool pool size\n",
        );
        let d = DocTerms::from_note(&tok, &note);
        let pool = d.terms.iter().find(|(t, _)| t == "pool").unwrap().1;
        assert_eq!(pool, [1, 1, 0, 1, 2]);
        assert_eq!(d.field_lens, [2, 2, 2, 1, 3]);
        assert!(d.terms.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn words_written_capitalised_anywhere_get_a_name_mark_once() {
        let tok = Tokenizer::new();
        let note = parse_note(
            "stripe",
            b"---\nname: Stripe payouts\ntags: [Ops]\n---\n## Windows\nStripe's ElastiCache and stripe again; an x Y UK.\n",
        );
        let d = DocTerms::from_note(&tok, &note);
        let marks: Vec<(&str, [u16; FIELD_COUNT])> = d
            .terms
            .iter()
            .filter(|(t, _)| is_name_mark(t))
            .map(|(t, c)| (t.as_str(), *c))
            .collect();
        // One mark per word's term (its stem), counted once in the field it is first written
        // in; one-letter words and lower-case words get none.
        assert_eq!(
            marks,
            [
                ("^elasticach", [0, 0, 0, 0, 1]),
                ("^op", [0, 0, 0, 1, 0]),
                ("^stripe", [0, 1, 0, 0, 0]),
                ("^uk", [0, 0, 0, 0, 1]),
                ("^window", [0, 0, 0, 0, 1]),
            ]
        );
        // Marks are not words: field lengths count the text's words only (`ElastiCache` is
        // three words: the whole and its parts).
        let plain = parse_note(
            "stripe",
            b"---\nname: stripe payouts\ntags: [ops]\n---\n## windows\nstripe's elasticache elasti cache and stripe again; an x y uk.\n",
        );
        assert_eq!(d.field_lens, DocTerms::from_note(&tok, &plain).field_lens);
        assert_eq!(name_mark("stripe"), "^stripe");
    }

    fn marks(note: &ParsedNote) -> Vec<String> {
        let d = DocTerms::from_note(&Tokenizer::new(), note);
        d.terms
            .into_iter()
            .filter(|(t, _)| is_name_mark(t))
            .map(|(t, _)| t)
            .collect()
    }

    /// A name written with an apostrophe, an accent written apart, an invisible char or an
    /// inflection was marked as pieces (`^brien`, `^siobha`) or as written (`^zoes`), so the
    /// question naming it plainly (`OBrien`, `Siobhan`, `Zoe`) named a word no note writes
    /// capitalised; and a note whose file name is its title, or a tag written in lower case as
    /// tags are, gave no mark for its words.
    #[test]
    fn a_name_mark_holds_the_term_of_the_word_the_tokenizer_reads() {
        let note = parse_note(
            "trips/Lake Tahoe",
            "---\nname: O\u{2019}Brien and Zo\u{eb}s\ntags: [kafka, x]\n---\nSiobha\u{301}n, \
             Ma\u{AD}ya and James's team.\n"
                .as_bytes(),
        );
        assert_eq!(
            marks(&note),
            [
                "^brien", "^jame", "^jamess", "^kafka", "^lake", "^maya", "^obrien", "^siobhan",
                "^taho", "^zoe"
            ]
        );
        // Each mark is the term the question's name is looked up by.
        let tok = Tokenizer::new();
        for name in [
            "obrien", "zoe", "siobhan", "maya", "james", "tahoe", "lake", "kafka",
        ] {
            let mark = name_mark(&tok.stem_word(name));
            assert!(marks(&note).contains(&mark), "{name}: {mark}");
        }
    }

    #[test]
    fn a_batch_counts_what_each_note_counts_alone() {
        let tok = Tokenizer::new();
        let notes = [
            parse_note(
                "pool-sizing",
                b"---\nname: Pool sizing\ntags: [pool, db]\n---\npool pool size of the db pool\n",
            ),
            parse_note("db/retry", b"retry the db; size matters, Pool too\n"),
            parse_note("empty", b"---\nname: x\n---\n"),
        ];
        let refs: Vec<&ParsedNote> = notes.iter().collect();
        let batch = TermBatch::from_notes(&tok, &refs).unwrap();
        assert_eq!(batch.docs.len(), 3);
        let mut start = 0;
        for (note, doc) in notes.iter().zip(&batch.docs) {
            let alone = DocTerms::from_note(&tok, note);
            assert_eq!(doc.id, alone.id);
            assert_eq!(doc.field_lens, alone.field_lens);
            let mut terms: Vec<(String, [u16; FIELD_COUNT])> = batch.postings[start..doc.end]
                .iter()
                .map(|(t, tfs)| (batch.terms.get(*t).to_string(), *tfs))
                .collect();
            terms.sort();
            assert_eq!(terms, alone.terms, "{}", alone.id);
            start = doc.end;
        }
        // Shared terms are one dictionary entry.
        let pools = batch.terms.iter().filter(|(_, t)| *t == "pool").count();
        assert_eq!(pools, 1);
    }
}
