//! Which notes say (nearly) the same thing? A MinHash [`Sketch`] of each note's word pairs, stored
//! beside its node ([`crate::store::SKETCHES`]) by index batches of a few notes and filled by the
//! write path after a cold build; `doctor` sketches the notes it parses. [`pairs`] compares two
//! sketches and searches all of them.
//!
//! Word pairs (shingles of two words) are the unit: a sentence reworded keeps most of its pairs,
//! a sentence dropped removes only its own, and two notes on one topic share their vocabulary
//! but few of its pairs. The similarity reported is the overlap: the share of the shorter note's
//! pairs the other note also has, estimated from the sketches, so a copy with sentences dropped
//! still counts as a copy. Bytes: `format-spec/store.md`.

pub mod pairs;
pub mod sketch;

pub use pairs::{Resemblance, near_duplicate_pairs, resemblance};
pub use sketch::{SKETCH_BYTES, SKETCH_SLOTS, Sketch, SketchError};
