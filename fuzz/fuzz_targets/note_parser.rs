//! The note parser on arbitrary bytes: it must never panic, and what it returns must respect its
//! invariants (no self edge, every edge target a valid id, no duplicate edge). The parsed note's
//! near-duplicate sketch must not panic either, resemble itself fully when it has words, and read
//! back from its bytes unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mnemon::dedup::{Sketch, resemblance};
use mnemon::notes::{parse_note, validate_id};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the note's own id so self-links can be hit.
    let id = match data.first() {
        Some(b) if b % 2 == 0 => "a",
        _ => "notes/b",
    };
    let note = parse_note(id, data);
    let sketch = Sketch::of_parsed(&note);
    assert_eq!(Sketch::from_bytes(&sketch.to_bytes()).as_ref(), Ok(&sketch));
    let itself = resemblance(&sketch, &sketch);
    if sketch.pairs > 0 {
        assert_eq!((itself.jaccard, itself.overlap), (1.0, 1.0));
    } else {
        assert_eq!(itself.jaccard, 0.0);
    }
    for (i, e) in note.edges.iter().enumerate() {
        assert_ne!(e.to, id, "self edge kept");
        assert!(validate_id(&e.to).is_ok(), "invalid target {:?} kept", e.to);
        assert!((0.0..=1.0).contains(&e.confidence));
        for other in &note.edges[..i] {
            assert!(
                !(other.to == e.to && other.kind == e.kind && other.provenance == e.provenance),
                "duplicate edge {e:?}"
            );
        }
    }
});
