//! One session's segment file: a header, then CRC-framed events (format-spec/events.md).
//!
//! [`FrameReader`] decodes frames from any byte stream (a file, a zstd decoder), skipping a
//! damaged or torn frame by scanning forward to the next frame whose checksum verifies, and never
//! dropping what it already read when the stream fails midway.
//!
//! Format version 2 keys every frame checksum with a random per-segment salt from the header
//! ([`FrameSeal`]), so bytes that merely look like a frame (one embedded in a string field of a
//! damaged frame) do not verify when resynchronisation scans through them. Version 1 segments
//! (no salt) are still read.

use super::event::Event;
use crate::fs::Fs;
use std::io::{self, Read};
use std::ops::Range;
use std::path::Path;

/// First 8 bytes of a segment.
pub const MAGIC: [u8; 8] = *b"\x89MNEV\r\n\x1a";
/// Format version written by this build (2: salted frame checksums).
pub const VERSION: u16 = 2;
/// Oldest format version this build reads (1: no salt).
pub const MIN_READ_VERSION: u16 = 1;
/// Longest session id (bytes, ASCII `[A-Za-z0-9._-]`).
pub const MAX_SESSION_BYTES: usize = 64;
/// Largest frame payload accepted (a limit on everything).
pub const MAX_FRAME_PAYLOAD: u32 = 64 * 1024;
/// Smallest payload: type, timestamp and seq (1 + 8 + 8 bytes).
pub const MIN_FRAME_PAYLOAD: u32 = 17;
/// Frame header: `u32` length + `u32` crc.
pub const FRAME_HEADER_LEN: usize = 8;

/// Longest header (format version 2, longest session id).
pub const MAX_HEADER_LEN: usize = H_SESSION + MAX_SESSION_BYTES + 4;
/// Offsets in the header (fixed part, format version 2).
pub const H_VERSION: usize = MAGIC.len();
pub const H_FLAGS: usize = H_VERSION + 2;
pub const H_CREATED: usize = H_FLAGS + 2;
pub const H_SALT: usize = H_CREATED + 8;
pub const H_SESSION_LEN: usize = H_SALT + 4;
pub const H_SESSION: usize = H_SESSION_LEN + 1;
/// Offsets of the session length and id in a format version 1 header (no salt).
pub const V1_H_SESSION_LEN: usize = H_CREATED + 8;
pub const V1_H_SESSION: usize = V1_H_SESSION_LEN + 1;

/// What a segment's frame checksums are keyed with: its format version and, from version 2, the
/// salt in its header. Readers need it to verify frames; writers to seal them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameSeal {
    /// Format version 1: frame crc = crc32(len bytes ++ payload).
    Unsalted,
    /// Format version 2: frame crc = crc32(salt, 4 bytes LE ++ len bytes ++ payload).
    Salted(u32),
}

impl FrameSeal {
    /// A fresh random salt, for a new segment.
    pub fn random() -> FrameSeal {
        FrameSeal::Salted(rand::random())
    }

    /// The format version whose frames are sealed this way.
    pub fn version(self) -> u16 {
        match self {
            FrameSeal::Unsalted => 1,
            FrameSeal::Salted(_) => 2,
        }
    }

    /// A crc32 hasher that has already taken in the salt (nothing for version 1).
    fn hasher(self) -> crc32fast::Hasher {
        let mut h = crc32fast::Hasher::new();
        if let FrameSeal::Salted(salt) = self {
            h.update(&salt.to_le_bytes());
        }
        h
    }

    /// The checksum of a frame with length bytes `len` and `payload`.
    pub fn frame_crc(self, len: &[u8; 4], payload: &[u8]) -> u32 {
        let mut h = self.hasher();
        h.update(len);
        h.update(payload);
        h.finalize()
    }
}

/// A segment header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub session: String,
    /// Milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// The format version and salt of the segment's frames. Writers always use
    /// [`FrameSeal::Salted`] (version 2); [`FrameSeal::Unsalted`] is a version 1 segment.
    pub seal: FrameSeal,
}

/// Whether `s` is a usable session id.
pub fn valid_session(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_SESSION_BYTES
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

/// Why bytes are not a segment header this build reads (its events cannot be counted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BadHeader {
    /// Fewer bytes than the shortest header.
    #[error("{len} bytes, too short for a segment header")]
    TooShort { len: usize },
    #[error("bad magic: not a mnemon event segment")]
    Magic,
    /// The magic's bytes are zeros: the header was lost (a compressed segment's first chunk
    /// that did not decode reads as zeros; so do blocks a crash left unwritten).
    #[error(
        "its header reads as zeros: lost (the first chunk of a compressed segment damaged, or \
         blocks a crash left unwritten), and with it every event (their checksums need it)"
    )]
    Zeroed,
    /// A format version this build does not read: a newer mnemon wrote it, unless the header's
    /// checksum, checked as this build lays a header out, fails (`damaged`: the version bytes
    /// were most likely changed by damage). A header too short to check is taken as a newer one.
    #[error("{}", version_message(*found, *damaged))]
    Version { found: u16, damaged: bool },
    /// The session id's length points past the end of the bytes.
    #[error("header truncated: its session id ends past the end of the bytes")]
    Truncated,
    #[error("header checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    Checksum { stored: u32, computed: u32 },
    #[error("session id is not UTF-8")]
    SessionNotUtf8,
    #[error("invalid session id {session:?}")]
    Session { session: String },
    /// A stream that ended after `read` bytes that do not start a header.
    #[error("no header: {read} bytes that do not start a segment header")]
    NotAHeader { read: usize },
    /// Reading the header failed (the I/O error's kind and text).
    #[error("no header: reading it failed ({detail})")]
    Unreadable { kind: io::ErrorKind, detail: String },
}

impl BadHeader {
    /// What to do about a segment whose header does not read (appended to the message that
    /// names the file); empty when the message says it already (a version this build does not
    /// read) or the cause is an I/O error of its own.
    pub fn fix(&self) -> &'static str {
        match self {
            BadHeader::Version { .. } | BadHeader::Unreadable { .. } => "",
            _ => {
                "; none of its events are counted: keep the file and restore it from a backup \
                 or git, or move it out of events/ if it is not mnemon's (`mnemon events \
                 verify` checks the whole log)"
            }
        }
    }
}

fn version_message(found: u16, damaged: bool) -> String {
    if !damaged {
        format!(
            "format version {found}, this build reads {MIN_READ_VERSION}..={VERSION}: a newer \
             mnemon wrote it; upgrade mnemon to count its events"
        )
    } else {
        format!(
            "format version {found}, which this build does not read, and the header's checksum \
             does not hold: the header is damaged (or a newer mnemon laid it out otherwise); its \
             events cannot be counted: keep the file"
        )
    }
}

/// Whether the checksum of the header at the start of `b` fails when read with this build's
/// layout whatever its version field says (a version field changed by damage leaves the
/// checksum broken, a newer writer keeping the layout does not); false when `b` is too short
/// to tell.
fn checksum_fails_as_current(b: &[u8]) -> bool {
    let Some(&n) = b.get(H_SESSION_LEN) else {
        return false;
    };
    let end = H_SESSION_LEN + 1 + usize::from(n);
    match (b.get(..end), b.get(end..end + 4)) {
        (Some(head), Some(&[c0, c1, c2, c3])) => {
            crc32fast::hash(head) != u32::from_le_bytes([c0, c1, c2, c3])
        }
        _ => false,
    }
}

/// Checks the magic and version at the start of `b` (at least `H_VERSION + 2` bytes); returns
/// the version and the offset of its session length byte.
fn magic_and_version(b: &[u8]) -> Result<(u16, usize), BadHeader> {
    let (Some(magic), Some(&[v0, v1])) = (b.get(..MAGIC.len()), b.get(H_VERSION..H_VERSION + 2))
    else {
        return Err(BadHeader::TooShort { len: b.len() });
    };
    if magic != MAGIC {
        return Err(if magic.iter().all(|&b| b == 0) {
            BadHeader::Zeroed
        } else {
            BadHeader::Magic
        });
    }
    let version = u16::from_le_bytes([v0, v1]);
    match version {
        1 => Ok((version, V1_H_SESSION_LEN)),
        2 => Ok((version, H_SESSION_LEN)),
        _ => Err(BadHeader::Version {
            found: version,
            damaged: checksum_fails_as_current(b),
        }),
    }
}

impl Header {
    /// A header for a new segment: format version 2 with a fresh random salt.
    pub fn new(session: String, created_ms: i64) -> Header {
        Header {
            session,
            created_ms,
            seal: FrameSeal::random(),
        }
    }

    /// Encoded header bytes (version 2, or version 1 for [`FrameSeal::Unsalted`]).
    pub fn encode(&self) -> Vec<u8> {
        debug_assert!(valid_session(&self.session));
        let mut out = Vec::with_capacity(H_SESSION + self.session.len() + 4);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.seal.version().to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&self.created_ms.to_le_bytes());
        if let FrameSeal::Salted(salt) = self.seal {
            out.extend_from_slice(&salt.to_le_bytes());
        }
        out.push(self.session.len() as u8);
        out.extend_from_slice(self.session.as_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decode a header from the start of `b`; returns it and its length.
    pub fn decode(b: &[u8]) -> Result<(Header, usize), BadHeader> {
        if b.len() < V1_H_SESSION + 4 {
            return Err(BadHeader::TooShort { len: b.len() });
        }
        let (version, n_at) = magic_and_version(b)?;
        if b.len() < n_at + 1 {
            return Err(BadHeader::Truncated);
        }
        let n = usize::from(b[n_at]);
        let end = n_at + 1 + n;
        if b.len() < end + 4 {
            return Err(BadHeader::Truncated);
        }
        let stored = u32::from_le_bytes([b[end], b[end + 1], b[end + 2], b[end + 3]]);
        let computed = crc32fast::hash(&b[..end]);
        if computed != stored {
            return Err(BadHeader::Checksum { stored, computed });
        }
        let session = std::str::from_utf8(&b[n_at + 1..end])
            .map_err(|_| BadHeader::SessionNotUtf8)?
            .to_string();
        if !valid_session(&session) {
            return Err(BadHeader::Session { session });
        }
        let mut c = [0u8; 8];
        c.copy_from_slice(&b[H_CREATED..H_CREATED + 8]);
        let seal = if version == 1 {
            FrameSeal::Unsalted
        } else {
            FrameSeal::Salted(u32::from_le_bytes([
                b[H_SALT],
                b[H_SALT + 1],
                b[H_SALT + 2],
                b[H_SALT + 3],
            ]))
        };
        Ok((
            Header {
                session,
                created_ms: i64::from_le_bytes(c),
                seal,
            },
            end + 4,
        ))
    }

    /// Read exactly the header from the start of a stream (which cannot seek: a zstd decoder),
    /// leaving it at the first frame; returns the header and its length.
    pub fn read(src: &mut impl Read) -> Result<(Header, usize), HeaderError> {
        // Magic and version, then the rest of the fixed part for that version.
        let mut head = vec![0u8; H_VERSION + 2];
        read_part(src, &mut head, 0)?;
        let n_at = match magic_and_version(&head) {
            Err(BadHeader::Version { found, .. }) => {
                // As much as this build's layout would hold, to tell damage from a newer writer;
                // a stream too short or unreadable for that is taken as a newer writer's.
                head.resize(H_SESSION_LEN + 1, 0);
                let mut damaged = false;
                if read_part(src, &mut head, H_VERSION + 2).is_ok() {
                    let fixed = head.len();
                    head.resize(fixed + usize::from(head[H_SESSION_LEN]) + 4, 0);
                    damaged = read_part(src, &mut head, fixed).is_ok()
                        && checksum_fails_as_current(&head);
                }
                return Err(BadHeader::Version { found, damaged }.into());
            }
            r => r?.1,
        };
        let fixed = head.len();
        head.resize(n_at + 1, 0);
        read_part(src, &mut head, fixed)?;
        let n = usize::from(head[n_at]).min(MAX_SESSION_BYTES + 1);
        let fixed = head.len();
        head.resize(fixed + n + 4, 0);
        read_part(src, &mut head, fixed)?;
        Ok(Header::decode(&head)?)
    }
}

/// Why a segment has no usable header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The bytes end inside a header and are right as far as they go (none at all, or a header
    /// cut short): a segment whose creation never completed. It holds no events and is not
    /// damage.
    #[error("no complete header (holds no events)")]
    Incomplete,
    /// Bytes that are not a header of this build (damage, another format, an I/O error).
    #[error(transparent)]
    Invalid(#[from] BadHeader),
}

/// Fill `head[from..]` from `src`; a stream that ends first is an incomplete header when what it
/// gave is the start of one, and an invalid one otherwise.
fn read_part(src: &mut impl Read, head: &mut [u8], from: usize) -> Result<(), HeaderError> {
    let mut n = from;
    while n < head.len() {
        match src.read(&mut head[n..]) {
            Ok(0) if is_header_prefix(&head[..n]) => return Err(HeaderError::Incomplete),
            Ok(0) => return Err(BadHeader::NotAHeader { read: n }.into()),
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(BadHeader::Unreadable {
                    kind: e.kind(),
                    detail: e.to_string(),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// Whether `b` is the start of a segment header, right as far as it goes: the magic, a version
/// this build reads, a session length in range. Every prefix of a header this build writes is
/// one, so a file whose creation was cut short anywhere inside the header is one too.
pub fn is_header_prefix(b: &[u8]) -> bool {
    let m = b.len().min(MAGIC.len());
    if b[..m] != MAGIC[..m] {
        return false;
    }
    if b.len() < H_VERSION + 2 {
        return true;
    }
    let Ok((_, n_at)) = magic_and_version(b) else {
        return false;
    };
    match b.get(n_at) {
        None => true,
        Some(&n) => (1..=MAX_SESSION_BYTES).contains(&usize::from(n)),
    }
}

/// One frame's bytes for `event`, sealed with `seal`: `u32` payload length, `u32` crc
/// ([`FrameSeal::frame_crc`]: crc32 of (salt ++ length bytes ++ payload), no salt in version 1),
/// payload.
pub fn encode_frame(event: &Event, seal: FrameSeal, out: &mut Vec<u8>) {
    let payload = event.encode();
    debug_assert!(payload.len() <= MAX_FRAME_PAYLOAD as usize);
    let len = (payload.len() as u32).to_le_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&seal.frame_crc(&len, &payload).to_le_bytes());
    out.extend_from_slice(&payload);
}

/// Something read from a segment.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A good frame at `offset` (absolute, in the uncompressed stream) ending at `end`.
    Event { offset: u64, end: u64, event: Event },
    /// Bytes that are not a good frame (damaged, or a torn tail).
    Damaged(Range<u64>),
}

/// Decodes frames sealed with one [`FrameSeal`] (the segment header's) from a stream starting
/// at absolute offset `start`.
pub struct FrameReader<R: Read> {
    src: R,
    /// A crc32 hasher that has taken in the segment's salt (cloned for every frame tried).
    seeded: crc32fast::Hasher,
    buf: Vec<u8>,
    /// Absolute offset of `buf[pos]`.
    offset: u64,
    pos: usize,
    eof: bool,
    damage_start: Option<u64>,
    /// Set when the stream failed; reading stops there (what was read is kept).
    pub io_error: Option<io::Error>,
}

const READ_CHUNK: usize = 64 * 1024;

impl<R: Read> FrameReader<R> {
    /// A reader of the frames of a segment whose header gave `seal`; a frame sealed otherwise
    /// (another salt, another version) does not verify and is read as damage.
    pub fn new(src: R, seal: FrameSeal, start: u64) -> Self {
        FrameReader {
            src,
            seeded: seal.hasher(),
            buf: Vec::with_capacity(READ_CHUNK * 2),
            offset: start,
            pos: 0,
            eof: false,
            damage_start: None,
            io_error: None,
        }
    }

    /// Make at least `n` unread bytes available, unless the stream ends first.
    fn fill(&mut self, n: usize) {
        while self.buf.len() - self.pos < n && !self.eof {
            if self.pos > READ_CHUNK {
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            let old = self.buf.len();
            self.buf.resize(old + READ_CHUNK, 0);
            match self.src.read(&mut self.buf[old..]) {
                Ok(0) => {
                    self.buf.truncate(old);
                    self.eof = true;
                }
                Ok(k) => self.buf.truncate(old + k),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.buf.truncate(old),
                Err(e) => {
                    self.buf.truncate(old);
                    self.io_error = Some(e);
                    self.eof = true;
                }
            }
        }
    }

    fn avail(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    fn advance(&mut self, n: usize) {
        self.pos += n;
        self.offset += n as u64;
    }

    /// Try a frame at the current position: `Some((len, event))` when it checks out.
    fn try_frame(&mut self) -> Option<(usize, Event)> {
        self.fill(FRAME_HEADER_LEN);
        let a = self.avail();
        if a.len() < FRAME_HEADER_LEN {
            return None;
        }
        let len = u32::from_le_bytes([a[0], a[1], a[2], a[3]]);
        if !(MIN_FRAME_PAYLOAD..=MAX_FRAME_PAYLOAD).contains(&len) {
            return None;
        }
        let crc = u32::from_le_bytes([a[4], a[5], a[6], a[7]]);
        let total = FRAME_HEADER_LEN + len as usize;
        self.fill(total);
        let a = self.avail();
        if a.len() < total {
            return None;
        }
        // Cheap plausibility before the crc: the event type byte. Keeps resynchronisation
        // through long damaged regions fast.
        if !(1..=super::event::MAX_EVENT_TYPE).contains(&a[FRAME_HEADER_LEN]) {
            return None;
        }
        let mut h = self.seeded.clone();
        h.update(&a[..4]);
        h.update(&a[FRAME_HEADER_LEN..total]);
        if h.finalize() != crc {
            return None;
        }
        let event = Event::decode(&a[FRAME_HEADER_LEN..total]).ok()?;
        Some((total, event))
    }
}

impl<R: Read> Iterator for FrameReader<R> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        loop {
            self.fill(1);
            if self.avail().is_empty() {
                // End of stream: close any open damaged range (a torn tail).
                return self
                    .damage_start
                    .take()
                    .map(|s| Item::Damaged(s..self.offset));
            }
            if let Some((total, event)) = self.try_frame() {
                if let Some(s) = self.damage_start.take() {
                    // Report the damage first; the good frame is found again on the next call.
                    return Some(Item::Damaged(s..self.offset));
                }
                let offset = self.offset;
                self.advance(total);
                return Some(Item::Event {
                    offset,
                    end: self.offset,
                    event,
                });
            }
            // Not a frame here: resynchronise one byte further on.
            if self.damage_start.is_none() {
                self.damage_start = Some(self.offset);
            }
            self.advance(1);
        }
    }
}

/// Everything in a segment's bytes: header (or why it is bad), events with offsets, damaged
/// ranges. Never panics (fuzzed).
#[derive(Debug, Default)]
pub struct Decoded {
    pub header: Option<Header>,
    pub header_error: Option<BadHeader>,
    /// No complete header, and the bytes are the start of one ([`HeaderError::Incomplete`]):
    /// a segment whose creation never completed, holding nothing (not damage).
    pub empty: bool,
    pub events: Vec<(u64, Event)>,
    pub damaged: Vec<Range<u64>>,
}

/// Decode a whole segment held in memory.
pub fn decode_segment(bytes: &[u8]) -> Decoded {
    let mut d = Decoded::default();
    let (seal, start) = match Header::decode(bytes) {
        Ok((h, len)) => {
            let seal = h.seal;
            d.header = Some(h);
            (seal, len)
        }
        Err(e) => {
            d.empty = Header::read(&mut &bytes[..]) == Err(HeaderError::Incomplete);
            d.header_error = Some(e);
            return d;
        }
    };
    for item in FrameReader::new(&bytes[start..], seal, start as u64) {
        match item {
            Item::Event { offset, event, .. } => d.events.push((offset, event)),
            Item::Damaged(r) => d.damaged.push(r),
        }
    }
    d
}

/// Subfolder of `events/` holding archived segments.
pub const ARCHIVE_DIR: &str = "archive";
/// Prefix of every temporary name in `events/` (compressions in progress, segments being
/// created); hidden, so never listed as a segment or an unknown file.
pub const TEMP_PREFIX: &str = crate::fs::TEMP_PREFIX;

/// Bytes that hold a compressed segment's length: its first chunk marker, or (a segment
/// compressed as one stream) a zstd frame header, at most 18 bytes.
const RECORDED_LEN_BYTES: usize = super::compressed::MARKER_LEN;

/// The uncompressed length of a compressed segment, from its first chunk marker or zstd frame
/// header (`None` when it does not record it: segments compressed as one stream before the
/// length was recorded, or damage).
pub fn compressed_len(fs: &dyn Fs, path: &Path) -> Option<u64> {
    match compressed_holds(fs, path) {
        Holds::Len(len) => Some(len),
        Holds::Unrecorded | Holds::Unknown => None,
    }
}

/// What a file of a segment holds of it, ordered from least to most: nothing known, a length,
/// all of it. Of several files of one segment the greatest is read, and a compressed copy is
/// only replaced by one that holds more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Holds {
    /// Neither: a file that is no compressed segment (a Git LFS pointer under the name,
    /// garbage) or that could not be read: no evidence that it holds anything.
    Unknown,
    /// The segment's length: a plain file's size, or the length a compressed one records.
    Len(u64),
    /// One zstd stream that does not record the length (earlier builds): taken to hold all of
    /// its segment, as it always was.
    Unrecorded,
}

/// Bytes of a chunked file read to find a marker that verifies when its first one does not
/// (chunk markers repeat every chunk, so a damaged start costs one more read at most).
const MARKER_SEARCH_BYTES: u64 = 4 << 20;

/// [`Holds`] for the compressed segment at `path`.
pub fn compressed_holds(fs: &dyn Fs, path: &Path) -> Holds {
    let mut head = [0u8; RECORDED_LEN_BYTES];
    let Ok(mut input) = fs.open_read(path) else {
        return Holds::Unknown;
    };
    let mut n = 0;
    while n < head.len() {
        match input.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Holds::Unknown,
        }
    }
    let head = &head[..n];
    match super::compressed::recorded_len(head) {
        Some(len) => Holds::Len(len),
        None if super::compressed::is_one_stream(head) => Holds::Unrecorded,
        // Chunked, its first marker damaged: a later one says the length. None verifying, it is
        // still read chunk by chunk, and trusted as one that records no length.
        None if super::compressed::is_chunked(head) => {
            let mut rest = head.to_vec();
            if input
                .take(MARKER_SEARCH_BYTES)
                .read_to_end(&mut rest)
                .is_err()
            {
                return Holds::Unknown;
            }
            super::compressed::first_recorded_len(&rest).map_or(Holds::Unrecorded, Holds::Len)
        }
        None => Holds::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::event::EventKind;

    fn ev(seq: u64) -> Event {
        Event {
            ts_ms: 1000 + seq as i64,
            seq,
            kind: EventKind::RecallHit {
                qid: "q".into(),
                node: format!("n{seq}"),
                rank: 1,
                score: 1.0,
                source: crate::events::event::HitSource::Direct,
            },
        }
    }

    const SEAL: FrameSeal = FrameSeal::Salted(0x5a17_0001);

    fn segment_with(seal: FrameSeal, n: u64) -> Vec<u8> {
        let mut b = Header {
            session: "s1".into(),
            created_ms: 5,
            seal,
        }
        .encode();
        for i in 0..n {
            encode_frame(&ev(i), seal, &mut b);
        }
        b
    }

    fn segment(n: u64) -> Vec<u8> {
        segment_with(SEAL, n)
    }

    #[test]
    fn headers_of_both_versions_round_trip() {
        for (seal, version, len) in [(SEAL, 2u16, 31), (FrameSeal::Unsalted, 1, 27)] {
            let h = Header {
                session: "s1".into(),
                created_ms: -3,
                seal,
            };
            let b = h.encode();
            assert_eq!(b.len(), len, "{seal:?}");
            assert_eq!(u16::from_le_bytes([b[8], b[9]]), version);
            assert_eq!(Header::decode(&b), Ok((h.clone(), len)));
            // From a stream, read exactly the header and nothing after it.
            let mut more = b.clone();
            more.extend_from_slice(b"after");
            let mut src = &more[..];
            assert_eq!(Header::read(&mut src), Ok((h, len)));
            assert_eq!(src, b"after");
        }
        let mut b = Header::new("s1".into(), 1).encode();
        assert!(matches!(
            Header::decode(&b),
            Ok((
                Header {
                    seal: FrameSeal::Salted(_),
                    ..
                },
                31
            ))
        ));
        b[8] = 3;
        // A version field changed alone breaks the checksum: damage, not a newer writer.
        let e = Header::decode(&b).unwrap_err();
        assert_eq!(
            e,
            BadHeader::Version {
                found: 3,
                damaged: true
            }
        );
        assert!(e.to_string().contains("the header is damaged"), "{e}");
        assert_eq!(Header::read(&mut &b[..]), Err(e.clone().into()));
        // Cut short before its checksum: taken as a newer writer's, not as damage.
        let short = Header::read(&mut &b[..20]).unwrap_err();
        assert!(short.to_string().contains("a newer mnemon"), "{short}");
        // A newer writer keeping the layout (its checksum holds): upgrade.
        let end = b.len() - 4;
        let crc = crc32fast::hash(&b[..end]);
        b[end..].copy_from_slice(&crc.to_le_bytes());
        let e = Header::decode(&b).unwrap_err();
        assert_eq!(
            e,
            BadHeader::Version {
                found: 3,
                damaged: false
            }
        );
        assert!(
            e.to_string()
                .starts_with("format version 3, this build reads 1..=2: a newer mnemon"),
            "{e}"
        );
        assert_eq!(Header::read(&mut &b[..]), Err(e.clone().into()));
        assert_eq!(Header::read(&mut &b[..]), Err(HeaderError::Invalid(e)));
        // The salt is covered by the header crc.
        let mut b = segment(0);
        b[H_SALT] ^= 1;
        assert!(matches!(
            Header::decode(&b),
            Err(BadHeader::Checksum { stored, computed }) if stored != computed
        ));
    }

    /// A segment cut short anywhere inside its header (creation interrupted by a crash or a full
    /// disk, or a creation in progress seen by an older writer's reader) holds nothing and is not
    /// damage; the same length of other bytes is.
    #[test]
    fn every_prefix_of_a_header_is_an_empty_segment_not_damage() {
        for seal in [SEAL, FrameSeal::Unsalted] {
            let h = Header {
                session: "session-1".into(),
                created_ms: 9,
                seal,
            }
            .encode();
            for n in 0..h.len() {
                assert!(is_header_prefix(&h[..n]), "{seal:?} prefix {n}");
                assert_eq!(
                    Header::read(&mut &h[..n]),
                    Err(HeaderError::Incomplete),
                    "{seal:?} prefix {n}"
                );
                let d = decode_segment(&h[..n]);
                assert!(d.empty && d.header.is_none() && d.events.is_empty(), "{n}");
                let mut other = h[..n].to_vec();
                if let Some(b) = other.first_mut() {
                    *b ^= 0xff;
                    assert!(matches!(
                        Header::read(&mut &other[..]),
                        Err(HeaderError::Invalid(_))
                    ));
                    assert!(!decode_segment(&other).empty, "{n}");
                }
            }
            assert!(!decode_segment(&h).empty);
        }
        // Zeros (what a power loss can leave in a file's last block) are damage, not a header.
        assert!(!is_header_prefix(&[0u8; 12]));
        assert!(matches!(
            Header::read(&mut &[0u8; 12][..]),
            Err(HeaderError::Invalid(_))
        ));
    }

    #[test]
    fn a_frame_verifies_only_under_its_own_seal() {
        let mut one = Vec::new();
        encode_frame(&ev(1), SEAL, &mut one);
        let count = |seal| {
            FrameReader::new(&one[..], seal, 0)
                .filter(|i| matches!(i, Item::Event { .. }))
                .count()
        };
        assert_eq!(count(SEAL), 1);
        assert_eq!(count(FrameSeal::Salted(0x5a17_0002)), 0);
        assert_eq!(count(FrameSeal::Unsalted), 0);
        // Version 1 frames are crc32(len ++ payload), as before.
        let mut v1 = Vec::new();
        encode_frame(&ev(1), FrameSeal::Unsalted, &mut v1);
        assert_eq!(v1[8..], one[8..]);
        assert_eq!(
            u32::from_le_bytes([v1[4], v1[5], v1[6], v1[7]]),
            crc32fast::hash(&[&v1[..4], &v1[8..]].concat())
        );
    }

    #[test]
    fn version_1_segment_decodes() {
        let d = decode_segment(&segment_with(FrameSeal::Unsalted, 3));
        assert_eq!(d.header.map(|h| h.seal), Some(FrameSeal::Unsalted));
        let offsets: Vec<u64> = d.events.iter().map(|(o, _)| *o).collect();
        assert_eq!(offsets, vec![27, 27 + 8 + 37, 27 + 2 * (8 + 37)]);
        assert!(d.damaged.is_empty());
    }

    #[test]
    fn clean_segment_decodes_fully() {
        let d = decode_segment(&segment(3));
        assert_eq!(d.header.unwrap().session, "s1");
        assert_eq!(d.events.len(), 3);
        assert!(d.damaged.is_empty());
    }

    #[test]
    fn flipped_byte_loses_one_frame_and_resyncs() {
        let clean = segment(3);
        let d0 = decode_segment(&clean);
        let second = d0.events[1].0 as usize;
        let mut b = clean.clone();
        b[second + 10] ^= 0x55;
        let d = decode_segment(&b);
        let seqs: Vec<u64> = d.events.iter().map(|(_, e)| e.seq).collect();
        assert_eq!(seqs, vec![0, 2]);
        assert_eq!(d.damaged.len(), 1);
        assert_eq!(d.damaged[0].start, second as u64);
        assert_eq!(d.damaged[0].end, d0.events[2].0);
    }

    #[test]
    fn torn_tail_is_one_damaged_range_and_appends_after_it_are_found() {
        let mut b = segment(2);
        let full = b.len();
        let mut frame = Vec::new();
        encode_frame(&ev(7), SEAL, &mut frame);
        b.extend_from_slice(&frame[..frame.len() / 2]);
        let d = decode_segment(&b);
        assert_eq!(d.events.len(), 2);
        assert_eq!(d.damaged, vec![full as u64..b.len() as u64]);
        // A later append behind the torn bytes is still read.
        encode_frame(&ev(8), SEAL, &mut b);
        let d = decode_segment(&b);
        let seqs: Vec<u64> = d.events.iter().map(|(_, e)| e.seq).collect();
        assert_eq!(seqs, vec![0, 1, 8]);
    }

    #[test]
    fn io_error_midway_keeps_what_was_read() {
        struct Failing(Vec<u8>, usize);
        impl Read for Failing {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                if self.1 >= self.0.len() / 2 {
                    return Err(io::Error::other("disk gone"));
                }
                let n = out.len().min(7).min(self.0.len() - self.1);
                out[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
                self.1 += n;
                Ok(n)
            }
        }
        let b = segment(10);
        let (_, hlen) = Header::decode(&b).unwrap();
        let mut r = FrameReader::new(Failing(b[hlen..].to_vec(), 0), SEAL, hlen as u64);
        let events = r
            .by_ref()
            .filter(|i| matches!(i, Item::Event { .. }))
            .count();
        assert!(events >= 4, "kept {events}");
        assert!(r.io_error.is_some());
    }
}
