//! Helpers shared by the event-segment fuzz targets (`segment_decode`, `frame_stream`): fuzz-chosen
//! events and sessions that are always encodable, and an independent check that the bytes at an
//! offset really are a good frame holding a given event.
#![allow(dead_code)]

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use mnemon::events::segment::{FRAME_HEADER_LEN, FrameSeal, MAX_FRAME_PAYLOAD, MAX_SESSION_BYTES};
use mnemon::events::{Event, EventKind, HitSource};

/// A short string: one of a few fixed ones (so equal strings are common) or arbitrary text.
#[derive(Debug, Arbitrary)]
pub enum ArbStr {
    Fixed(u8),
    Any(String),
}

impl ArbStr {
    pub fn get(self) -> String {
        match self {
            ArbStr::Fixed(i) => {
                ["", "a", "notes/b", "q1", "ops", "pool size"][usize::from(i) % 6].into()
            }
            ArbStr::Any(s) => s,
        }
    }
}

#[derive(Debug, Arbitrary)]
pub enum ArbKind {
    Query {
        qid: ArbStr,
        query: ArbStr,
        anchors: Vec<ArbStr>,
        result_count: u32,
        latency_us: u64,
        caller: ArbStr,
    },
    RecallHit {
        qid: ArbStr,
        node: ArbStr,
        rank: u32,
        score: f32,
        source: u8,
    },
    ImportanceTag {
        node: ArbStr,
        importance: u8,
        tags: Vec<ArbStr>,
        note: ArbStr,
    },
    Feedback {
        qid: ArbStr,
        query: ArbStr,
        used: Vec<ArbStr>,
        wrong: Vec<ArbStr>,
    },
}

#[derive(Debug, Arbitrary)]
pub struct ArbEvent {
    pub ts_ms: i64,
    pub seq: u64,
    pub kind: ArbKind,
}

impl ArbEvent {
    /// A valid event (importance in 1..=10). Strings over the format's limits are cut by the
    /// encoder; use [`canonical`] for what a reader gives back.
    pub fn get(self) -> Event {
        let strs = |v: Vec<ArbStr>| v.into_iter().map(ArbStr::get).collect::<Vec<_>>();
        let kind = match self.kind {
            ArbKind::Query {
                qid,
                query,
                anchors,
                result_count,
                latency_us,
                caller,
            } => EventKind::Query {
                qid: qid.get(),
                query: query.get(),
                anchors: strs(anchors),
                result_count,
                latency_us,
                caller: caller.get(),
            },
            ArbKind::RecallHit {
                qid,
                node,
                rank,
                score,
                source,
            } => EventKind::RecallHit {
                qid: qid.get(),
                node: node.get(),
                rank,
                score,
                source: [HitSource::Direct, HitSource::Neighbor, HitSource::CoOccur]
                    [usize::from(source) % 3],
            },
            ArbKind::ImportanceTag {
                node,
                importance,
                tags,
                note,
            } => EventKind::ImportanceTag {
                node: node.get(),
                importance: importance % 10 + 1,
                tags: strs(tags),
                note: note.get(),
            },
            ArbKind::Feedback {
                qid,
                query,
                used,
                wrong,
            } => EventKind::Feedback {
                qid: qid.get(),
                query: query.get(),
                used: strs(used),
                wrong: strs(wrong),
            },
        };
        Event {
            ts_ms: self.ts_ms,
            seq: self.seq,
            kind,
        }
    }
}

/// A valid session id (1..=64 bytes of `[A-Za-z0-9._-]`) built from fuzz bytes.
pub fn arb_session(u: &mut Unstructured) -> arbitrary::Result<String> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
    let n = u.int_in_range(1..=MAX_SESSION_BYTES)?;
    let mut s = String::with_capacity(n);
    for _ in 0..n {
        s.push(char::from(
            ALPHABET[usize::from(u.arbitrary::<u8>()?) % ALPHABET.len()],
        ));
    }
    Ok(s)
}

/// A segment's frame seal: format version 1 (no salt) or version 2 with a fuzz-chosen salt.
pub fn arb_seal(u: &mut Unstructured) -> arbitrary::Result<FrameSeal> {
    Ok(match u.arbitrary::<Option<u32>>()? {
        None => FrameSeal::Unsalted,
        Some(salt) => FrameSeal::Salted(salt),
    })
}

/// A frame checksum computed here, independently of the library (format-spec/events.md):
/// crc32 of (salt LE ++ length bytes ++ payload), no salt in version 1.
pub fn frame_crc(seal: FrameSeal, len: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    if let FrameSeal::Salted(salt) = seal {
        h.update(&salt.to_le_bytes());
    }
    h.update(len);
    h.update(payload);
    h.finalize()
}

/// The frame bytes for `payload` sealed with `seal`, built here (not by the library) so that
/// payloads over `MAX_FRAME_PAYLOAD` can be written too.
pub fn raw_frame(seal: FrameSeal, payload: &[u8], out: &mut Vec<u8>) {
    let len = (payload.len() as u32).to_le_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&frame_crc(seal, &len, payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// Whether a frame sealed with `a` can never verify under `b` (or the reverse): two different
/// salts. The checksums of the same frame under salts `s` and `t` differ by a function of
/// `s ^ t` that is zero only when `s == t` (crc32 is linear and multiplying by a power of x is
/// invertible modulo its polynomial). Between a salt and no salt there is one colliding salt per
/// payload length, so nothing is claimed there.
pub fn never_verifies_under(a: FrameSeal, b: FrameSeal) -> bool {
    matches!((a, b), (FrameSeal::Salted(s), FrameSeal::Salted(t)) if s != t)
}

/// The payload a writer stores for `e`, when it fits in a frame and decodes back (it always
/// should: a payload the library writes but cannot read is a library bug, reported by panic).
pub fn encodable(e: &Event) -> Option<Vec<u8>> {
    let p = e.encode();
    if p.len() > MAX_FRAME_PAYLOAD as usize {
        return None;
    }
    let back = Event::decode(&p)
        .unwrap_or_else(|err| panic!("encoded event does not decode: {err}: {e:?}"));
    assert_eq!(
        back.encode(),
        p,
        "decode(encode(e)) re-encodes differently: {e:?}"
    );
    Some(p)
}

/// Independently checks that `data[offset..]` starts with a good frame sealed with `seal` whose
/// payload is `event`'s encoding (events are compared by their bytes: a NaN score is not equal to
/// itself); returns the frame's end.
pub fn check_frame_at(data: &[u8], seal: FrameSeal, offset: u64, event: &Event) -> u64 {
    let o = usize::try_from(offset).expect("offset fits usize");
    let payload = event.encode();
    let end = o + FRAME_HEADER_LEN + payload.len();
    assert!(
        end <= data.len(),
        "event at {offset} runs past the data ({end} > {})",
        data.len()
    );
    let len = u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
    assert_eq!(len as usize, payload.len(), "frame length at {offset}");
    assert!(
        (1..=MAX_FRAME_PAYLOAD).contains(&len),
        "frame length {len} out of range at {offset}"
    );
    let crc = u32::from_le_bytes(data[o + 4..o + 8].try_into().unwrap());
    assert_eq!(
        frame_crc(seal, &data[o..o + 4], &data[o + FRAME_HEADER_LEN..end]),
        crc,
        "event yielded at {offset} but its checksum does not verify under {seal:?}"
    );
    assert_eq!(
        &data[o + FRAME_HEADER_LEN..end],
        &payload[..],
        "event at {offset} is not the bytes there"
    );
    end as u64
}
