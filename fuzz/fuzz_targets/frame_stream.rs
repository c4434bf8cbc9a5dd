//! `FrameReader` on a stream of fuzz-chosen pieces (good frames, repeated frames to pass the
//! 64 KiB read buffer, frames of up to 64 KiB and checksummed frames over the length limit,
//! garbage), read through a `Read` that returns fuzz-chosen chunk sizes, may return
//! `Interrupted` at fuzz-chosen calls, and may fail with an I/O error once a fuzz-chosen number
//! of bytes has been delivered. It must never panic, and:
//! - the items (events and damaged ranges) never depend on chunking or `Interrupted` (which is
//!   retried, not reported), and tile the stream: every event a good frame holding that event
//!   (checked independently), offsets absolute from the `start` given;
//! - a stream of only good frames yields exactly those events and no damage;
//! - with an I/O error after `E` bytes, `io_error` is set and the items are exactly those of the
//!   first `E` bytes read without error; in particular every event that a full read yields and
//!   that ends within those `E` bytes is yielded, in order, before anything else (what was read
//!   is kept).
//!
//! The stream's frames are sealed with a fuzz-chosen [`FrameSeal`] (version 1, or version 2 with
//! a salt) given to the reader; `Foreign` pieces are frames sealed with another salt or no salt,
//! which are damage, never good frames: one sealed with a different salt is never an event at its
//! own offset.
#![no_main]

mod common;

use common::{ArbEvent, check_frame_at, encodable, never_verifies_under, raw_frame};
use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mnemon::events::segment::{FrameReader, FrameSeal, Item, MAX_FRAME_PAYLOAD};
use mnemon::events::{Event, EventKind};
use std::io::{self, Read};

/// Largest stream built (keeps executions fast).
const MAX_STREAM: usize = 192 * 1024;

#[derive(Debug, Arbitrary)]
enum Piece {
    Frame(ArbEvent),
    /// A frame repeated 2^(n % 13) times (up to 4096: past the 64 KiB read buffer).
    Repeat(ArbEvent, u8),
    /// An ImportanceTag frame of about `size` payload bytes (log-uniform up to the limit; see
    /// `big_event`), or just over the length limit (`over`, and only one time in 16: reading
    /// past it means resynchronising byte by byte through 64 KiB, which is slow under
    /// instrumentation), with a valid checksum either way.
    Big {
        size: u16,
        fill: u8,
        over: bool,
    },
    Garbage(Vec<u8>),
    /// A frame sealed with this salt (`None`: the version 1 rule) instead of the stream's.
    Foreign(ArbEvent, Option<u32>),
}

#[derive(Debug, Arbitrary)]
struct Input {
    // Fixed-size fields first: they get bytes even when the input runs short.
    /// Fail after `error_at` bytes (modulo the stream length + 1)?
    fail: bool,
    error_at: u32,
    start: u32,
    /// The stream's seal: `None` for version 1, else version 2 with this salt.
    salt: Option<u32>,
    pieces: Vec<Piece>,
    /// Read sizes, used in turn (even: 1..=16 bytes, odd: larger).
    chunks: Vec<u16>,
    /// Read calls (counted from 1) that return `Interrupted`.
    interrupts: Vec<u8>,
}

struct Source<'a> {
    data: &'a [u8],
    pos: usize,
    chunks: &'a [usize],
    calls: usize,
    interrupts: &'a [usize],
    error_at: Option<usize>,
}

impl Read for Source<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.interrupts.contains(&self.calls) {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        let limit = self.error_at.unwrap_or(self.data.len());
        if self.pos >= limit && self.error_at.is_some() {
            return Err(io::Error::other("injected failure"));
        }
        let chunk = self.chunks[self.calls % self.chunks.len()];
        let n = chunk.min(out.len()).min(limit - self.pos);
        out[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// An item with its event as bytes (a NaN score is not equal to itself).
#[derive(Debug, PartialEq, Eq)]
enum Key {
    Event(u64, u64, Vec<u8>),
    Damaged(u64, u64),
}

fn keys(items: Vec<Item>) -> Vec<Key> {
    items
        .into_iter()
        .map(|i| match i {
            Item::Event { offset, end, event } => Key::Event(offset, end, event.encode()),
            Item::Damaged(r) => Key::Damaged(r.start, r.end),
        })
        .collect()
}

fn big_event(size: u16, fill: u8, over: bool) -> Event {
    let max = MAX_FRAME_PAYLOAD as usize;
    // Low 4 bits: the size class; the rest: where in the class. Class 15 is the limit itself.
    let (class, rest) = (u32::from(size & 0xF), usize::from(size >> 4));
    let target = if over && rest % 16 == 0 {
        max + 1 + rest % 64
    } else if class == 15 {
        max - rest % 64
    } else {
        (1 << class) + rest % (1 << class)
    };
    let filler = char::from(b'a' + fill % 26);
    // type, ts, seq, node "big", importance, tag count, empty note: 31 bytes.
    let mut remaining = target.saturating_sub(31);
    let mut tags = Vec::new();
    while remaining > 4 {
        let l = (remaining - 4).min(8192);
        tags.push(std::iter::repeat_n(filler, l).collect::<String>());
        remaining -= 4 + l;
    }
    Event {
        ts_ms: 1,
        seq: 2,
        kind: EventKind::ImportanceTag {
            node: "big".into(),
            importance: 5,
            tags,
            note: String::new(),
        },
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});

fn run(u: &mut Unstructured) -> arbitrary::Result<()> {
    let input: Input = u.arbitrary()?;
    let seal = input.salt.map_or(FrameSeal::Unsalted, FrameSeal::Salted);

    // Build the stream; `clean` while it holds only good frames.
    let mut data = Vec::new();
    let mut good: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut clean = true;
    // Offsets of foreign frames that can never verify under `seal`.
    let mut foreign_at: Vec<u64> = Vec::new();
    for piece in input.pieces {
        if data.len() > MAX_STREAM {
            break;
        }
        match piece {
            Piece::Frame(e) => {
                if let Some(p) = encodable(&e.get()) {
                    good.push((data.len() as u64, p.clone()));
                    raw_frame(seal, &p, &mut data);
                }
            }
            Piece::Repeat(e, n) => {
                let Some(p) = encodable(&e.get()) else {
                    continue;
                };
                for _ in 0..1u32 << (n % 13) {
                    if data.len() > MAX_STREAM {
                        break;
                    }
                    good.push((data.len() as u64, p.clone()));
                    raw_frame(seal, &p, &mut data);
                }
            }
            Piece::Big { size, fill, over } => {
                let p = big_event(size, fill, over).encode();
                if p.len() > MAX_FRAME_PAYLOAD as usize {
                    clean = false;
                } else {
                    good.push((data.len() as u64, p.clone()));
                }
                raw_frame(seal, &p, &mut data);
            }
            Piece::Garbage(g) => {
                clean &= g.is_empty();
                data.extend_from_slice(&g);
            }
            Piece::Foreign(e, salt) => {
                let Some(p) = encodable(&e.get()) else {
                    continue;
                };
                let other = salt.map_or(FrameSeal::Unsalted, FrameSeal::Salted);
                if other == seal {
                    // The same seal after all: a good frame.
                    good.push((data.len() as u64, p.clone()));
                } else {
                    clean = false;
                    if never_verifies_under(other, seal) {
                        foreign_at.push(data.len() as u64);
                    }
                }
                raw_frame(other, &p, &mut data);
            }
        }
    }
    let start = u64::from(input.start);
    let len = data.len() as u64;

    // Reference: the whole stream from a slice.
    let mut r = FrameReader::new(&data[..], seal, start);
    let full: Vec<Item> = r.by_ref().collect();
    assert!(r.io_error.is_none());
    // Tiling, and every event a good frame.
    let mut cursor = start;
    for item in &full {
        match item {
            Item::Event { offset, end, event } => {
                assert_eq!(
                    *offset, cursor,
                    "gap or overlap before the event at {offset}"
                );
                assert!(
                    !foreign_at.contains(&(offset - start)),
                    "a frame sealed otherwise was read as an event at {offset} under {seal:?}"
                );
                let e = check_frame_at(&data, seal, offset - start, event) + start;
                assert_eq!(*end, e, "event end");
                cursor = *end;
            }
            Item::Damaged(rg) => {
                assert_eq!(rg.start, cursor, "gap or overlap before damage {rg:?}");
                assert!(rg.start < rg.end, "empty damaged range");
                cursor = rg.end;
            }
        }
    }
    assert_eq!(cursor, start + len, "the items do not cover the stream");
    let full = keys(full);
    if clean {
        let want: Vec<Key> = good
            .iter()
            .map(|(o, p)| Key::Event(start + o, start + o + 8 + p.len() as u64, p.clone()))
            .collect();
        assert_eq!(full, want, "a stream of good frames decodes differently");
    }

    // The same through chunked reads with interruptions: identical.
    let min_chunk = (data.len() / 256).max(1);
    let mut chunks: Vec<usize> = input
        .chunks
        .iter()
        .map(|&c| {
            let c = usize::from(c);
            if c % 2 == 0 {
                (c >> 1) % 16 + 1
            } else {
                (c >> 1) * 4 + 1
            }
        })
        .map(|c| c.max(min_chunk))
        .collect();
    if chunks.is_empty() {
        chunks.push(7usize.max(min_chunk));
    }
    let interrupts: Vec<usize> = input.interrupts.iter().map(|&i| usize::from(i)).collect();
    let src = |error_at| Source {
        data: &data,
        pos: 0,
        chunks: &chunks,
        calls: 0,
        interrupts: &interrupts,
        error_at,
    };
    let mut r = FrameReader::new(src(None), seal, start);
    let chunked = keys(r.by_ref().collect());
    assert!(r.io_error.is_none(), "Interrupted was reported as an error");
    assert_eq!(chunked, full, "chunked reads decode differently");

    // An I/O error after `e` bytes: exactly the items of those `e` bytes, and the full read's
    // events that end within them come first.
    if input.fail {
        let e = input.error_at as usize % (data.len() + 1);
        let mut r = FrameReader::new(src(Some(e)), seal, start);
        let failed = keys(r.by_ref().collect());
        assert!(r.io_error.is_some(), "injected I/O error not reported");
        let mut rt = FrameReader::new(&data[..e], seal, start);
        let truncated = keys(rt.by_ref().collect());
        assert_eq!(
            failed, truncated,
            "an I/O error after {e} bytes differs from a stream of {e} bytes"
        );
        let kept: Vec<&Key> = full
            .iter()
            .filter(|k| matches!(k, Key::Event(_, end, _) if *end <= start + e as u64))
            .collect();
        let got: Vec<&Key> = failed
            .iter()
            .filter(|k| matches!(k, Key::Event(..)))
            .take(kept.len())
            .collect();
        assert_eq!(
            got, kept,
            "events read before the I/O error at {e} were lost"
        );
    }
    Ok(())
}
