//! The compressed form of a segment (`events::compressed`): a segment's fuzz-chosen bytes (up to
//! eight chunks) are compressed chunk by chunk, then one fuzz-chosen byte range of the file is
//! replaced (a flip, a cut, inserted or deleted bytes, an overwrite, or a whole chunk dropped,
//! repeated or moved). Reading it back must never panic nor hang, and:
//! - unchanged, it reads back to exactly the segment's bytes, as libzstd's own decoder does
//!   (the markers are skippable frames), and records the segment's length;
//! - changed, it reads to at most the segment's length (zeros where chunks were lost, an error
//!   at the end for damage the bytes read do not show), and
//!   every chunk whose marker and frame bytes the change did not touch, and that comes before
//!   the change in the file, reads back to its own bytes at its own offset (damage never drops
//!   what comes before it; chunks after it are found again unless the change moved them).
//!
//! Arbitrary bytes are also read as a compressed segment (nothing but "no panic" is asked).
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mnemon::events::compressed::{CHUNK_BYTES, MARKER_LEN, decoder, recorded_len, write_chunks};
use std::io::Read;

#[derive(Debug, Arbitrary)]
enum Change {
    Flip { at: u32, mask: u8 },
    Cut { at: u32 },
    Insert { at: u32, bytes: Vec<u8> },
    Delete { at: u32, len: u16 },
    Overwrite { at: u32, bytes: Vec<u8> },
    DropChunk { k: u8 },
    RepeatChunk { k: u8 },
    MoveChunkToEnd { k: u8 },
}

/// Segment bytes: a fuzz-chosen seed pattern repeated to a fuzz-chosen length (compressible, so
/// chunks are small and many fit in an input).
fn segment(u: &mut Unstructured) -> arbitrary::Result<Vec<u8>> {
    let len = u.int_in_range(0..=8 * CHUNK_BYTES as u32)? as usize;
    let seed: Vec<u8> = u.arbitrary()?;
    let seed = if seed.is_empty() { vec![7u8] } else { seed };
    let mut v = Vec::with_capacity(len);
    let mut i = 0u32;
    while v.len() < len {
        v.extend_from_slice(&seed);
        v.extend_from_slice(&i.to_le_bytes());
        i += 1;
    }
    v.truncate(len);
    Ok(v)
}

/// What a reader gets: the bytes given before any error (damage the bytes do not show ends
/// the stream with an error, after everything readable), and whether it ended in error.
fn read_all(z: &[u8]) -> Option<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    let mut d = decoder(Box::new(std::io::Cursor::new(z.to_vec()))).ok()?;
    let failed = d.read_to_end(&mut out).is_err();
    Some((out, failed))
}

/// Where each chunk starts in the file (its marker).
fn chunk_starts(z: &[u8], chunks: usize) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    for _ in 0..chunks {
        starts.push(at);
        let size = zstd::zstd_safe::find_frame_compressed_size(&z[at + MARKER_LEN..])
            .expect("a frame we wrote");
        at += MARKER_LEN + size;
    }
    assert_eq!(at, z.len());
    starts
}

fuzz_target!(|data: &[u8]| {
    let _ = read_all(data);
    let _ = recorded_len(data);

    let mut u = Unstructured::new(data);
    let Ok(src) = segment(&mut u) else { return };
    let Ok(change) = Change::arbitrary(&mut u) else {
        return;
    };
    let mut z = Vec::new();
    let n = write_chunks(&mut &src[..], src.len() as u64, 1, &mut z).expect("compress");
    assert_eq!(n, src.len() as u64);
    assert_eq!(read_all(&z), Some((src.clone(), false)));
    assert_eq!(zstd::stream::decode_all(&z[..]).expect("libzstd"), src);
    assert_eq!(recorded_len(&z), Some(src.len() as u64));

    let chunks = src.len().div_ceil(CHUNK_BYTES).max(1);
    let starts = chunk_starts(&z, chunks);
    let end_of = |k: usize| starts.get(k + 1).copied().unwrap_or(z.len());
    let clamp = |at: u32| at as usize % (z.len() + 1);
    // The first byte of the file the change touches.
    let (bad, first_touched) = match change {
        Change::Flip { at, mask } => {
            let mut b = z.clone();
            let at = at as usize % z.len();
            b[at] ^= mask.max(1);
            (b, at)
        }
        Change::Cut { at } => (z[..clamp(at)].to_vec(), clamp(at)),
        Change::Insert { at, bytes } => {
            let at = clamp(at);
            let mut b = z[..at].to_vec();
            b.extend_from_slice(&bytes);
            b.extend_from_slice(&z[at..]);
            (b, at)
        }
        Change::Delete { at, len } => {
            let at = clamp(at);
            let to = (at + len as usize).min(z.len());
            let mut b = z[..at].to_vec();
            b.extend_from_slice(&z[to..]);
            (b, at)
        }
        Change::Overwrite { at, bytes } => {
            let at = clamp(at);
            let mut b = z.clone();
            for (i, x) in bytes.iter().enumerate() {
                if let Some(y) = b.get_mut(at + i) {
                    *y = *x;
                }
            }
            (b, at)
        }
        Change::DropChunk { k } | Change::RepeatChunk { k } | Change::MoveChunkToEnd { k } => {
            let k = k as usize % chunks;
            let (s, e) = (starts[k], end_of(k));
            let mut b = z[..s].to_vec();
            match change {
                Change::DropChunk { .. } => b.extend_from_slice(&z[e..]),
                Change::RepeatChunk { .. } => {
                    b.extend_from_slice(&z[s..e]);
                    b.extend_from_slice(&z[s..]);
                }
                _ => {
                    b.extend_from_slice(&z[e..]);
                    b.extend_from_slice(&z[s..e]);
                }
            }
            (b, s)
        }
    };
    let Some((out, _)) = read_all(&bad) else {
        return;
    };
    assert!(
        out.len() <= src.len(),
        "read {} of a {}-byte segment",
        out.len(),
        src.len()
    );
    // Chunks wholly before the change read back at their offsets.
    for k in 0..chunks {
        if end_of(k) > first_touched {
            break;
        }
        let range = k * CHUNK_BYTES..((k + 1) * CHUNK_BYTES).min(src.len());
        assert_eq!(
            out.get(range.clone()),
            Some(&src[range.clone()]),
            "chunk {k}"
        );
    }
});
