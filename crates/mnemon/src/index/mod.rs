//! Which notes match these words? The lexical index: a tokenizer, per-field term counts, immutable
//! fst segments, and the set of live segments with their deletions.

pub mod compound;
pub mod fields;
pub mod interner;
pub mod joined;
pub mod lexical;
pub mod manifest;
pub mod scoring;
pub mod segment;
pub mod spelling;
pub mod tokenize;

pub use lexical::{LexHit, LexicalIndex, TermMatch};
