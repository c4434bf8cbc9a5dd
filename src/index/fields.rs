//! The fields of a note that the lexical index knows, and turning a parsed note into per-field
//! term counts (the input of a segment writer).

use super::tokenize::Tokenizer;
use crate::notes::ParsedNote;
use rustc_hash::FxHashMap;

/// Number of indexed fields.
pub const FIELD_COUNT: usize = 5;
/// Field order, as in the segment format and `policy::FIELD_WEIGHTS`.
pub const FIELD_NAMES: [&str; FIELD_COUNT] = ["id", "name", "description", "tags", "body"];
/// A term counted more often than this in one field is stored as this (format limit, u16).
pub const MAX_TF: u32 = u16::MAX as u32;

/// One document's terms: for each distinct term, its count in each field; plus field lengths.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DocTerms {
    pub id: String,
    /// Token count per field.
    pub field_lens: [u32; FIELD_COUNT],
    /// Distinct terms, sorted, with per-field counts.
    pub terms: Vec<(String, [u16; FIELD_COUNT])>,
}

impl DocTerms {
    /// Tokenize the fields of a parsed note.
    pub fn from_note(tok: &Tokenizer, note: &ParsedNote) -> DocTerms {
        // A term is hashed once per occurrence but allocated once per note.
        let mut counts: FxHashMap<String, [u16; FIELD_COUNT]> = FxHashMap::default();
        let mut field_lens = [0u32; FIELD_COUNT];
        let tags = note.meta.tags.join(" ");
        let texts: [&str; FIELD_COUNT] = [
            "",
            note.meta.name.as_deref().unwrap_or(""),
            note.meta.description.as_deref().unwrap_or(""),
            &tags,
            &note.body,
        ];
        for (f, text) in texts.iter().enumerate() {
            let mut len = 0u32;
            let mut count = |term: &str| {
                len = len.saturating_add(1);
                match counts.get_mut(term) {
                    Some(slot) => slot[f] = slot[f].saturating_add(1),
                    None => {
                        let mut slot = [0; FIELD_COUNT];
                        slot[f] = 1;
                        counts.insert(term.to_owned(), slot);
                    }
                }
            };
            if f == 0 {
                tok.for_each_slug_term(&note.id, &mut count);
            } else {
                tok.for_each_index_term(text, &mut count);
            }
            field_lens[f] = len;
        }
        let mut terms: Vec<_> = counts.into_iter().collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        DocTerms {
            id: note.id.clone(),
            field_lens,
            terms,
        }
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
}
