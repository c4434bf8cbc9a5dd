//! The compressed form of a segment (`<id>.seg.zst`): the segment's bytes cut into chunks of
//! [`CHUNK_BYTES`], each compressed as its own zstd frame behind a small marker (a zstd
//! skippable frame) that names the chunk's offset in the segment and the segment's length
//! (format-spec/events.md, "Compression").
//!
//! Why chunks: zstd cannot decode past a damaged block (later blocks refer back into it), so a
//! segment compressed as one stream loses every event after a flipped byte. With independent
//! chunks a flipped byte loses the chunk it is in; the reader finds the next marker and goes on,
//! filling the lost range with zeros so that offsets (and with them snapshot watermarks) stay
//! those of the original segment, and the frame reader reports the range as damaged.
//!
//! The file is still plain zstd: `zstd -d` skips the markers and gives back the segment's exact
//! bytes. Segments compressed by earlier builds as a single frame are read by the streaming
//! decoder as before.

use std::io::{self, Read, Write};

/// Uncompressed bytes per chunk (the last chunk holds the rest). Chunk `k` holds the segment's
/// bytes `[k * CHUNK_BYTES, min((k + 1) * CHUNK_BYTES, len))`.
pub const CHUNK_BYTES: usize = 64 * 1024;
/// Magic of a chunk marker: a zstd skippable frame (`0x184D2A50..=0x184D2A5F`), little-endian.
const MARKER_MAGIC: u32 = 0x184D_2A5E;
/// The marker's payload: `u64` chunk offset, `u64` segment length, `u32` crc32 of the 16 bytes.
const MARKER_PAYLOAD: usize = 20;
/// Bytes of a whole marker: magic, payload length, payload.
pub const MARKER_LEN: usize = 8 + MARKER_PAYLOAD;

/// A chunk marker: where its chunk starts and how long the whole segment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Marker {
    offset: u64,
    segment_len: u64,
}

impl Marker {
    fn encode(&self) -> [u8; MARKER_LEN] {
        let mut b = [0u8; MARKER_LEN];
        b[0..4].copy_from_slice(&MARKER_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&(MARKER_PAYLOAD as u32).to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_le_bytes());
        b[16..24].copy_from_slice(&self.segment_len.to_le_bytes());
        let crc = crc32fast::hash(&b[8..24]);
        b[24..28].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// The marker at the start of `b`, if it is one whose checksum verifies and whose offset is
    /// a chunk boundary inside the segment.
    fn decode(b: &[u8]) -> Option<Marker> {
        let b = b.get(..MARKER_LEN)?;
        let u32_at = |i: usize| b.get(i..i + 4)?.try_into().ok().map(u32::from_le_bytes);
        let u64_at = |i: usize| b.get(i..i + 8)?.try_into().ok().map(u64::from_le_bytes);
        if u32_at(0)? != MARKER_MAGIC || u32_at(4)? != MARKER_PAYLOAD as u32 {
            return None;
        }
        if u32_at(24)? != crc32fast::hash(&b[8..24]) {
            return None;
        }
        let m = Marker {
            offset: u64_at(8)?,
            segment_len: u64_at(16)?,
        };
        let boundary = m.offset.is_multiple_of(CHUNK_BYTES as u64);
        let inside = m.offset < m.segment_len || (m.offset == 0 && m.segment_len == 0);
        (boundary && inside).then_some(m)
    }

    /// Bytes the chunk behind this marker decompresses to.
    fn chunk_len(&self) -> usize {
        (self.segment_len - self.offset).min(CHUNK_BYTES as u64) as usize
    }
}

/// The segment length recorded by the first chunk marker in `bytes` that verifies: a file whose
/// first marker is damaged still records it in every later one.
pub fn first_recorded_len(bytes: &[u8]) -> Option<u64> {
    let magic = MARKER_MAGIC.to_le_bytes();
    let mut at = 0;
    while let Some(i) = memchr::memmem::find(&bytes[at..], &magic) {
        if let Some(m) = Marker::decode(&bytes[at + i..]) {
            return Some(m.segment_len);
        }
        at += i + 1;
    }
    None
}

/// Whether `head` (a file's first bytes) starts a chunked compressed segment.
pub fn is_chunked(head: &[u8]) -> bool {
    head.get(..4) == Some(&MARKER_MAGIC.to_le_bytes()[..])
}

/// The uncompressed length a compressed segment records in its first bytes (at least
/// [`MARKER_LEN`] of them, or a zstd frame header for a segment compressed as one stream).
pub fn recorded_len(head: &[u8]) -> Option<u64> {
    if is_chunked(head) {
        return Marker::decode(head).map(|m| m.segment_len);
    }
    zstd::zstd_safe::get_frame_content_size(head).ok().flatten()
}

/// Compress the `len` bytes of `input` into `out` as markers and chunks; returns the bytes
/// read. Memory: one chunk and its compressed form. Fails if `input` does not hold exactly
/// `len` bytes (the caller locks the segment, so its length cannot change meanwhile).
pub fn write_chunks(
    input: &mut dyn Read,
    len: u64,
    level: i32,
    out: &mut dyn Write,
) -> io::Result<u64> {
    let mut compressor = zstd::bulk::Compressor::new(level)?;
    compressor.include_contentsize(true)?;
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut offset = 0u64;
    loop {
        let n = read_up_to(input, &mut chunk)?;
        if n == 0 && offset > 0 {
            break;
        }
        let marker = Marker {
            offset,
            segment_len: len,
        };
        if offset + n as u64 > len {
            return Err(io::Error::other("the segment grew while it was compressed"));
        }
        out.write_all(&marker.encode())?;
        out.write_all(&compressor.compress(&chunk[..n])?)?;
        offset += n as u64;
        if n < CHUNK_BYTES {
            break;
        }
    }
    if offset != len {
        return Err(io::Error::other(format!(
            "the segment holds {offset} bytes, {len} expected: it changed while it was compressed"
        )));
    }
    Ok(offset)
}

/// Read until `buf` is full or the input ends; returns the bytes read.
fn read_up_to(input: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The decompressed stream of a `.seg.zst`, whichever form it has.
pub fn decoder(mut raw: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    let mut head = [0u8; 4];
    let n = read_up_to(&mut raw, &mut head)?;
    let head = io::Cursor::new(head[..n].to_vec());
    // Only a file that starts as one zstd frame does is read as one stream; anything else is
    // read by chunks, which finds the markers after a damaged start.
    if head.get_ref()[..] == ZSTD_MAGIC {
        Ok(Box::new(zstd::stream::read::Decoder::new(head.chain(raw))?))
    } else {
        Ok(Box::new(ChunkReader::new(Box::new(head.chain(raw)))))
    }
}

/// The magic a zstd frame starts with (what a segment compressed as one stream starts with).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Whether `head` (a file's first bytes) starts a segment compressed as one zstd stream (as
/// earlier builds wrote them).
pub fn is_one_stream(head: &[u8]) -> bool {
    head.starts_with(&ZSTD_MAGIC)
}

/// Largest compressed chunk: zstd's bound for [`CHUNK_BYTES`] of input.
fn max_frame_bytes() -> usize {
    zstd::zstd_safe::compress_bound(CHUNK_BYTES)
}

/// Reads a chunked compressed segment as the segment's bytes; a chunk that does not decode
/// reads as zeros of its length, and the chunks after it are found by their markers.
/// Damage a chunked reader went on past (bytes after the last chunk, bytes skipped before a
/// marker verified, a damaged first marker whose chunk still read): told at the end of the
/// stream, after every byte that read, so it cost no event the segment still holds.
#[derive(Debug)]
pub struct DamageReadPast(pub String);

impl std::fmt::Display for DamageReadPast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DamageReadPast {}

pub struct ChunkReader {
    raw: Box<dyn Read + Send>,
    /// Compressed bytes read and not yet used.
    buf: Vec<u8>,
    raw_eof: bool,
    /// The current chunk's bytes and how many of them were returned.
    out: Vec<u8>,
    out_pos: usize,
    /// Offset in the segment of the next chunk to produce.
    next: u64,
    /// The segment's length, from the first marker that verifies.
    segment_len: Option<u64>,
    /// The first damage met that the bytes read do not show by themselves (a damaged marker
    /// whose chunk still read, bytes skipped before any marker, bytes after the last chunk):
    /// returned as an error once the stream has given everything it holds.
    damage: Option<String>,
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
}

impl ChunkReader {
    fn new(raw: Box<dyn Read + Send>) -> Self {
        ChunkReader {
            raw,
            buf: Vec::new(),
            raw_eof: false,
            out: Vec::new(),
            out_pos: 0,
            next: 0,
            segment_len: None,
            damage: None,
            decompressor: None,
        }
    }

    /// Make at least `n` compressed bytes available, unless the file ends first.
    fn fill(&mut self, n: usize) -> io::Result<()> {
        let mut block = [0u8; 8192];
        while self.buf.len() < n && !self.raw_eof {
            match self.raw.read(&mut block) {
                Ok(0) => self.raw_eof = true,
                Ok(k) => self.buf.extend_from_slice(&block[..k]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Zeros for `n` bytes of the segment that no chunk supplied (damage the frame reader
    /// reports), at most a chunk at a time.
    fn zeros(&mut self, n: u64) {
        let n = n.min(CHUNK_BYTES as u64) as usize;
        self.out.clear();
        self.out.resize(n, 0);
        self.next += n as u64;
    }

    /// Decode the zstd frame that follows the marker at the start of `buf` into `out`, when it
    /// is a whole frame whose length `fits`: the bytes to drop from `buf`. `out` is left empty
    /// otherwise.
    fn decode_chunk(&mut self, fits: impl Fn(usize) -> bool) -> io::Result<Option<usize>> {
        self.fill(MARKER_LEN + max_frame_bytes())?;
        self.out.clear();
        let Some(frame) = self.buf.get(MARKER_LEN..) else {
            return Ok(None);
        };
        if !frame.starts_with(&ZSTD_MAGIC) {
            return Ok(None);
        }
        let Ok(size) = zstd::zstd_safe::find_frame_compressed_size(frame) else {
            return Ok(None);
        };
        let Some(frame) = frame.get(..size) else {
            return Ok(None);
        };
        let decompressor = match &mut self.decompressor {
            Some(d) => d,
            None => self.decompressor.insert(zstd::bulk::Decompressor::new()?),
        };
        self.out.reserve(CHUNK_BYTES);
        match decompressor.decompress_to_buffer(frame, &mut self.out) {
            Ok(n) if fits(n) => Ok(Some(MARKER_LEN + size)),
            _ => {
                self.out.clear();
                Ok(None)
            }
        }
    }

    /// Note damage the stream's bytes will not show (the first one is kept).
    fn damaged(&mut self, what: String) {
        self.damage.get_or_insert(what);
    }

    /// The end of the stream: the damage met, if any, as an error (after every byte read).
    fn end(&mut self) -> io::Result<bool> {
        match self.damage.take() {
            Some(what) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                DamageReadPast(what),
            )),
            None => Ok(false),
        }
    }

    /// Produce the next run of the segment's bytes into `out`; false at the end.
    fn advance(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.out_pos = 0;
        loop {
            if let Some(len) = self.segment_len
                && self.next >= len
            {
                // A compressed segment is written once: bytes after its last chunk are damage.
                self.fill(1)?;
                if !self.buf.is_empty() {
                    self.damaged("bytes follow the compressed segment's last chunk".into());
                    self.buf.clear();
                }
                return self.end();
            }
            self.fill(MARKER_LEN)?;
            if self.buf.is_empty() {
                // The file ends before the segment does: the tail reads as damage.
                return match self.segment_len {
                    Some(len) => {
                        self.zeros(len - self.next);
                        Ok(true)
                    }
                    None => self.end(),
                };
            }
            if self.next == 0
                && self.segment_len.is_none()
                && self.damage.is_none()
                && Marker::decode(&self.buf).is_none()
            {
                // The file's first marker is damaged: its chunk (the segment's header) may still
                // read. Only there: a frame found later could be any chunk.
                self.damaged("the first chunk's marker is damaged".into());
                // (Any length up to a chunk's: the length was in the damaged marker.)
                if let Some(used) = self.decode_chunk(|n| n > 0 && n <= CHUNK_BYTES)? {
                    self.buf.drain(..used);
                    self.next += self.out.len() as u64;
                    return Ok(true);
                }
            }
            let marker = Marker::decode(&self.buf)
                .filter(|m| self.segment_len.is_none_or(|len| m.segment_len == len));
            if let Some(m) = marker
                && m.offset >= self.next
            {
                self.segment_len = Some(m.segment_len);
                if m.offset > self.next {
                    // Chunks before this one were lost: zeros up to it, then the chunk.
                    self.zeros(m.offset - self.next);
                    return Ok(true);
                }
                if let Some(used) = self.decode_chunk(|n| n == m.chunk_len())? {
                    self.buf.drain(..used);
                    self.next += self.out.len() as u64;
                    if self.out.is_empty() {
                        continue; // an empty segment's one chunk
                    }
                    return Ok(true);
                }
            }
            self.skip_to_next_marker()?;
        }
    }

    /// Drop bytes up to the next place a marker's magic starts (at least one byte).
    fn skip_to_next_marker(&mut self) -> io::Result<()> {
        if self.segment_len.is_none() {
            // Skipped before any marker verified: no zeros will stand for these bytes.
            self.damaged("bytes before the first marker that reads are damaged".into());
        }
        let magic = MARKER_MAGIC.to_le_bytes();
        self.buf.drain(..1.min(self.buf.len()));
        loop {
            if let Some(at) = self.buf.windows(4).position(|w| w == magic) {
                self.buf.drain(..at);
                return Ok(());
            }
            // Keep a possible start of the magic at the end, read on.
            let keep = self.buf.len().min(3);
            self.buf.drain(..self.buf.len() - keep);
            if self.raw_eof {
                self.buf.clear();
                return Ok(());
            }
            self.fill(keep + 64 * 1024)?;
        }
    }
}

impl Read for ChunkReader {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        while self.out_pos == self.out.len() {
            if !self.advance()? {
                return Ok(0);
            }
        }
        let n = dst.len().min(self.out.len() - self.out_pos);
        dst[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment_bytes(len: usize) -> Vec<u8> {
        // Compressible but not constant: a counter in text.
        let mut v = Vec::with_capacity(len);
        let mut i = 0u64;
        while v.len() < len {
            v.extend_from_slice(format!("event {i} node n{} ", i % 97).as_bytes());
            i += 1;
        }
        v.truncate(len);
        v
    }

    fn compress(src: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_chunks(&mut &src[..], src.len() as u64, 3, &mut out).expect("compress");
        out
    }

    fn decompress(z: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        decoder(Box::new(io::Cursor::new(z.to_vec())))
            .expect("decoder")
            .read_to_end(&mut out)
            .expect("read");
        out
    }

    #[test]
    fn chunks_round_trip_and_plain_zstd_reads_them_too() {
        for len in [
            0,
            1,
            CHUNK_BYTES - 1,
            CHUNK_BYTES,
            CHUNK_BYTES + 1,
            3 * CHUNK_BYTES + 17,
        ] {
            let src = segment_bytes(len);
            let z = compress(&src);
            assert_eq!(decompress(&z), src, "len {len}");
            assert_eq!(recorded_len(&z[..MARKER_LEN]), Some(len as u64));
            // `zstd -d` (libzstd) skips the markers.
            assert_eq!(zstd::stream::decode_all(&z[..]).expect("zstd"), src);
        }
    }

    #[test]
    fn a_segment_compressed_as_one_stream_still_reads() {
        let src = segment_bytes(3 * CHUNK_BYTES);
        let z = zstd::stream::encode_all(&src[..], 3).expect("zstd");
        assert_eq!(decompress(&z), src);
    }

    #[test]
    fn a_flipped_byte_loses_its_chunk_only_and_keeps_offsets() {
        let src = segment_bytes(5 * CHUNK_BYTES + 100);
        let z = compress(&src);
        // Find the third marker and flip a byte inside its frame.
        let magic = MARKER_MAGIC.to_le_bytes();
        let starts: Vec<usize> = z
            .windows(4)
            .enumerate()
            .filter(|(_, w)| *w == magic)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(starts.len(), 6, "one marker per chunk");
        for (hit, at) in [
            ("frame", starts[2] + MARKER_LEN + 40),
            ("marker", starts[2] + 10),
        ] {
            let mut bad = z.clone();
            bad[at] ^= 0x5A;
            let out = decompress(&bad);
            assert_eq!(out.len(), src.len(), "{hit}: offsets kept");
            let lost = 2 * CHUNK_BYTES..3 * CHUNK_BYTES;
            assert_eq!(out[..lost.start], src[..lost.start], "{hit}");
            assert_eq!(out[lost.end..], src[lost.end..], "{hit}");
            // Inside it: zeros (the chunk did not decode) or bytes that differ where the flip
            // was (literals decode without a check; the frames' crcs catch them).
        }
    }

    #[test]
    fn a_cut_file_reads_its_lost_tail_as_zeros() {
        let src = segment_bytes(3 * CHUNK_BYTES);
        let z = compress(&src);
        let out = decompress(&z[..z.len() / 2]);
        assert_eq!(out.len(), src.len());
        assert_eq!(out[..CHUNK_BYTES], src[..CHUNK_BYTES]);
        assert!(out[2 * CHUNK_BYTES..].iter().all(|&b| b == 0));
    }

    /// What a reader gets: the bytes read before an error, and the error.
    fn read_with_error(z: &[u8]) -> (Vec<u8>, Option<String>) {
        let mut out = Vec::new();
        let r = decoder(Box::new(io::Cursor::new(z.to_vec())))
            .and_then(|mut d| d.read_to_end(&mut out));
        (out, r.err().map(|e| e.to_string()))
    }

    /// Found by a fault sweep: bytes appended to a `.seg.zst` were ignored without a word, and
    /// a flipped byte in the first marker lost the whole segment (it was read as one zstd
    /// stream, which it is not).
    #[test]
    fn trailing_bytes_and_a_damaged_first_marker_are_reported_and_lose_nothing_else() {
        let src = segment_bytes(3 * CHUNK_BYTES + 5);
        let z = compress(&src);
        let mut longer = z.clone();
        longer.extend_from_slice(b"GARBAGE\n");
        let (out, error) = read_with_error(&longer);
        assert_eq!(out, src);
        assert!(error.is_some_and(|e| e.contains("last chunk")));
        for at in 0..MARKER_LEN {
            let mut bad = z.clone();
            bad[at] ^= 0x01;
            let (out, error) = read_with_error(&bad);
            assert_eq!(out, src, "flip at {at}: every chunk read");
            assert!(error.is_some_and(|e| e.contains("marker")), "flip at {at}");
        }
        // Garbage with no marker at all is an error, not an empty segment.
        let (out, error) = read_with_error(b"0123456789abcdef0123456789abcdef");
        assert!(out.is_empty());
        assert!(error.is_some(), "garbage read as nothing");
    }

    #[test]
    fn garbage_is_no_segment() {
        for bytes in [vec![], vec![0u8; 100], b"not zstd at all".to_vec()] {
            let mut out = Vec::new();
            let r = decoder(Box::new(io::Cursor::new(bytes.clone())))
                .and_then(|mut d| d.read_to_end(&mut out));
            assert!(r.is_err() || out.is_empty(), "{bytes:?}");
        }
        assert_eq!(recorded_len(&[0u8; MARKER_LEN]), None);
    }
}
