//! `decode_segment` on arbitrary bytes (as they are, and behind a valid header): it must never
//! panic, and what it returns must be consistent: no header => a header error and nothing else;
//! damaged ranges sorted, non-empty, non-overlapping, never adjacent, inside the data; event
//! offsets strictly increasing, never inside a damaged range, each one a good frame (length in
//! range, crc verified independently) holding exactly that event; events and damaged ranges tile
//! the bytes after the header.
//!
//! Then the same input, read as a structure, builds a valid segment (fuzz-chosen session, events)
//! and replaces one fuzz-chosen byte range with fuzz-chosen bytes (a flipped byte, a truncation,
//! inserted or deleted bytes, an overwrite), optionally followed by more good frames (appends
//! after a torn tail). Every frame entirely outside the mutated region must still be decoded at
//! its (shifted) offset: damage never drops the rest of the file. The one allowed exception is a
//! frame swallowed by a false frame that really verifies (a crc collision, which the format
//! accepts), found at or after the damage. No damage and no other event may appear before the
//! first frame the mutation touched.
//!
//! Segments are of both format versions (version 1: no salt; version 2: a fuzz-chosen salt in the
//! header keying every frame checksum). An inserted whole frame may be sealed with the segment's
//! own salt, another salt or no salt; under another salt it is never an event at its offset
//! (two different salts can never give the same checksum of the same bytes).
#![no_main]

mod common;

use common::{
    ArbEvent, arb_seal, arb_session, check_frame_at, encodable, never_verifies_under, raw_frame,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mnemon::events::segment::{
    Decoded, FrameSeal, H_SESSION, Header, V1_H_SESSION, decode_segment, valid_session,
};

/// Checks every invariant of a decode of `bytes`; returns the header length (when there is a
/// header) and the decoded events' frame ranges.
fn check_decoded(bytes: &[u8], d: &Decoded) -> Option<(u64, Vec<(u64, u64)>)> {
    let Some(h) = &d.header else {
        assert!(d.header_error.is_some(), "no header and no header error");
        assert!(d.events.is_empty(), "events without a header");
        assert!(d.damaged.is_empty(), "damaged ranges without a header");
        return None;
    };
    assert!(d.header_error.is_none(), "both a header and a header error");
    assert!(
        valid_session(&h.session),
        "invalid session {:?} accepted",
        h.session
    );
    let (at, version) = match h.seal {
        FrameSeal::Unsalted => (V1_H_SESSION, 1),
        FrameSeal::Salted(salt) => {
            assert_eq!(
                bytes[20..24],
                salt.to_le_bytes(),
                "salt not read from offset 20"
            );
            (H_SESSION, 2)
        }
    };
    assert_eq!(
        bytes[8..10],
        u16::to_le_bytes(version),
        "seal of another version"
    );
    let hlen = (at + h.session.len() + 4) as u64;
    assert!(hlen as usize <= bytes.len());
    assert_eq!(&bytes[at..at + h.session.len()], h.session.as_bytes());
    let len = bytes.len() as u64;

    // Damaged ranges: non-empty, inside the frames area, sorted, disjoint, never adjacent
    // (a damaged range is closed only by a good frame or the end).
    for (i, r) in d.damaged.iter().enumerate() {
        assert!(r.start < r.end, "empty damaged range {r:?}");
        assert!(
            r.start >= hlen && r.end <= len,
            "damaged range {r:?} outside {hlen}..{len}"
        );
        if i > 0 {
            assert!(
                d.damaged[i - 1].end < r.start,
                "damaged ranges {:?} and {r:?} overlap or touch",
                d.damaged[i - 1]
            );
        }
    }
    // Events: offsets strictly increasing, good frames, never inside a damaged range.
    let mut frames = Vec::with_capacity(d.events.len());
    for (i, (off, ev)) in d.events.iter().enumerate() {
        if i > 0 {
            assert!(d.events[i - 1].0 < *off, "event offsets not increasing");
        }
        assert!(*off >= hlen, "event at {off} inside the header");
        let end = check_frame_at(bytes, h.seal, *off, ev);
        for r in &d.damaged {
            assert!(
                !r.contains(off),
                "event at {off} inside damaged range {r:?}"
            );
            assert!(
                end <= r.start || r.end <= *off,
                "event {off}..{end} overlaps damaged {r:?}"
            );
        }
        frames.push((*off, end));
    }
    // Together they tile hlen..len.
    let mut items: Vec<(u64, u64)> = frames
        .iter()
        .copied()
        .chain(d.damaged.iter().map(|r| (r.start, r.end)))
        .collect();
    items.sort_unstable();
    let mut cursor = hlen;
    for (s, e) in items {
        assert_eq!(
            s, cursor,
            "bytes {cursor}..{s} are neither an event nor damaged"
        );
        cursor = e;
    }
    assert_eq!(
        cursor, len,
        "bytes {cursor}..{len} are neither an event nor damaged"
    );
    Some((hlen, frames))
}

#[derive(Debug, Arbitrary)]
struct Mutation {
    /// Start of the replaced range (modulo the segment length + 1).
    at: u32,
    /// Its length (clamped to the end of the segment).
    len: u16,
    kind: MutKind,
    /// Good frames appended after the mutation (a writer appending behind a torn tail).
    append: Vec<ArbEvent>,
}

#[derive(Debug, Arbitrary)]
enum MutKind {
    /// XOR one byte (`len` ignored).
    Flip(u8),
    /// Cut everything from `at` (`len` ignored).
    Truncate,
    /// Replace `at..at+len` by these bytes (`len` 0: an insertion; no bytes: a deletion).
    Replace(Vec<u8>),
    /// Insert a whole frame (an event inside another frame) at `at` (`len` ignored), sealed as
    /// chosen.
    InsertFrame(ArbEvent, InsertSeal),
}

#[derive(Debug, Arbitrary)]
enum InsertSeal {
    /// The segment's own seal: a good frame.
    Own,
    /// Another salt (the segment's own one when they happen to be equal).
    Salt(u32),
    /// The version 1 rule.
    Unsalted,
}

fuzz_target!(|data: &[u8]| {
    // 1. The bytes as a segment.
    let d = decode_segment(data);
    check_decoded(data, &d);

    // 1b. The bytes as the frames of a segment with a valid header (each version).
    for seal in [FrameSeal::Salted(0x5a17_5a17), FrameSeal::Unsalted] {
        let mut seg = Header {
            session: "s1".into(),
            created_ms: 1_700_000_000_000,
            seal,
        }
        .encode();
        seg.extend_from_slice(data);
        let d = decode_segment(&seg);
        assert!(
            d.header.is_some(),
            "valid header rejected: {:?}",
            d.header_error
        );
        check_decoded(&seg, &d);
    }

    // 2. A valid segment, mutated.
    let _ = built(&mut Unstructured::new(data));
});

fn built(u: &mut Unstructured) -> arbitrary::Result<()> {
    let header = Header {
        session: arb_session(u)?,
        created_ms: u.arbitrary()?,
        seal: arb_seal(u)?,
    };
    let seal = header.seal;
    let events: Vec<ArbEvent> = u.arbitrary()?;
    let mutation: Mutation = u.arbitrary()?;

    let mut clean = header.encode();
    let hlen = clean.len();
    // (start, end, payload) of each frame of the clean segment.
    let mut frames: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    for e in events {
        let Some(p) = encodable(&e.get()) else {
            continue;
        };
        let s = clean.len();
        raw_frame(seal, &p, &mut clean);
        frames.push((s, clean.len(), p));
    }
    let d = decode_segment(&clean);
    check_decoded(&clean, &d);
    assert_eq!(d.header.as_ref(), Some(&header));
    assert!(
        d.damaged.is_empty(),
        "clean segment has damage: {:?}",
        d.damaged
    );
    let got: Vec<(u64, Vec<u8>)> = d.events.iter().map(|(o, e)| (*o, e.encode())).collect();
    let want: Vec<(u64, Vec<u8>)> = frames
        .iter()
        .map(|(s, _, p)| (*s as u64, p.clone()))
        .collect();
    assert_eq!(got, want, "clean segment decodes differently");

    // Replace clean[a..b] by `with`.
    let n = clean.len();
    let a = mutation.at as usize % (n + 1);
    // The seal of an inserted frame, when the mutation inserts one.
    let mut inserted = None;
    let (b, with) = match mutation.kind {
        MutKind::Flip(mask) if a < n => (a + 1, vec![clean[a] ^ mask]),
        MutKind::Flip(_) => (a, vec![]),
        MutKind::Truncate => (n, vec![]),
        MutKind::Replace(bytes) => ((a + usize::from(mutation.len)).min(n), bytes),
        MutKind::InsertFrame(e, how) => {
            let with_seal = match how {
                InsertSeal::Own => seal,
                InsertSeal::Salt(s) => FrameSeal::Salted(s),
                InsertSeal::Unsalted => FrameSeal::Unsalted,
            };
            let mut f = Vec::new();
            if let Some(p) = encodable(&e.get()) {
                raw_frame(with_seal, &p, &mut f);
                inserted = Some(with_seal);
            }
            (a, f)
        }
    };
    let mut bytes = clean[..a].to_vec();
    bytes.extend_from_slice(&with);
    let region_end = bytes.len();
    bytes.extend_from_slice(&clean[b..]);
    let shift = |o: usize| o + with.len() - (b - a);
    // Replacing bytes by themselves changes nothing: every frame is expected, nothing damaged.
    let noop = with[..] == clean[a..b];

    // Expected frames at their new offsets: those entirely before or after clean[a..b], and the
    // appended ones.
    let mut expected: Vec<(usize, Vec<u8>)> = Vec::new();
    for (s, e, p) in &frames {
        if noop || *e <= a {
            expected.push((*s, p.clone()));
        } else if *s >= b {
            expected.push((shift(*s), p.clone()));
        }
    }
    for e in mutation.append {
        if let Some(p) = encodable(&e.get()) {
            expected.push((bytes.len(), p.clone()));
            raw_frame(seal, &p, &mut bytes);
        }
    }
    // The first byte that may be damaged: the start of the frame holding clean[a].
    let affected = if noop {
        n
    } else {
        frames
            .iter()
            .find(|(s, e, _)| *s <= a && a < *e)
            .map_or(a, |f| f.0)
    } as u64;

    let d = decode_segment(&bytes);
    let checked = check_decoded(&bytes, &d);
    if a < hlen && !noop {
        // The header itself was hit: whether it still decodes is a matter of its crc.
        return Ok(());
    }
    let (_, got_frames) = checked.expect("intact header rejected");
    assert_eq!(
        d.header.as_ref(),
        Some(&header),
        "intact header decodes differently"
    );
    if let Some(foreign) = inserted
        && never_verifies_under(foreign, seal)
    {
        assert!(
            !d.events.iter().any(|(o, _)| *o == a as u64),
            "a frame sealed with {foreign:?} inserted at {a} was read as an event of a segment \
             sealed with {seal:?}"
        );
    }

    for r in &d.damaged {
        assert!(
            r.start >= affected,
            "damage {r:?} before the first frame touched (at {affected}); mutation at {a}..{b}"
        );
    }
    let mut matched = vec![false; d.events.len()];
    for (o, p) in &expected {
        let o = *o as u64;
        if let Some(i) = d.events.iter().position(|(off, _)| *off == o) {
            assert_eq!(
                &d.events[i].1.encode(),
                p,
                "frame at {o} decodes to another event"
            );
            matched[i] = true;
            continue;
        }
        // Not found: only a verified frame starting in the damage may have swallowed it.
        let swallowed = got_frames
            .iter()
            .any(|(s, e)| *s >= affected && *s < o && o < *e);
        assert!(
            swallowed,
            "good frame at {o} (outside the mutated region {a}..{region_end}) was dropped; \
             damaged {:?}, events at {:?}",
            d.damaged, got_frames
        );
    }
    for (i, (off, _)) in d.events.iter().enumerate() {
        if !matched[i] {
            assert!(!noop, "unexpected event at {off} in an unchanged segment");
            assert!(
                *off >= affected,
                "unexpected event at {off} before the damage at {affected}"
            );
        }
    }
    if noop {
        assert!(
            d.damaged.is_empty(),
            "damage {:?} in a segment of good frames",
            d.damaged
        );
    }
    Ok(())
}
