//! One immutable lexical segment: a doc table, postings and an fst term dictionary, framed by a
//! header and a checksummed footer. `format-spec/lexical.md` is the byte-level reference; the
//! constants here are the single source of truth for offsets.
//!
//! A segment is written once ([`writer`]) to a temp file and renamed into place, and read through
//! an mmap ([`reader`]) only after its checksums verify.

pub mod reader;
pub mod writer;

pub use reader::{Posting, PostingsIter, Segment, SegmentError};
pub use writer::{LaidOut, PostingError, SegmentBytes, SegmentWriter, WriteError, build_segment};

/// First 8 bytes of every segment (PNG-style: high bit, name, CR LF, ^Z).
pub const MAGIC: [u8; 8] = *b"\x89MNLX\r\n\x1a";
/// Last 8 bytes of every segment.
pub const END_MAGIC: [u8; 8] = *b"MNLXEND\0";
/// Format version written by this build.
pub const VERSION: u16 = 1;
/// Oldest format version this build reads.
pub const MIN_READ_VERSION: u16 = 1;

/// Header: magic (8), version u16, min reader version u16, reserved u32 (zero).
pub const HEADER_LEN: usize = 16;
pub const HEADER_VERSION_OFFSET: usize = MAGIC.len();
pub const HEADER_MIN_READER_OFFSET: usize = HEADER_VERSION_OFFSET + 2;
pub const HEADER_RESERVED_OFFSET: usize = HEADER_MIN_READER_OFFSET + 2;

/// Footer field offsets, relative to the footer start.
pub const F_DOC_COUNT: usize = 0;
pub const F_TERM_COUNT: usize = F_DOC_COUNT + 4;
pub const F_DOCS_OFF: usize = F_TERM_COUNT + 4;
pub const F_DOCS_LEN: usize = F_DOCS_OFF + 8;
pub const F_POSTINGS_OFF: usize = F_DOCS_LEN + 8;
pub const F_POSTINGS_LEN: usize = F_POSTINGS_OFF + 8;
pub const F_FST_OFF: usize = F_POSTINGS_LEN + 8;
pub const F_FST_LEN: usize = F_FST_OFF + 8;
pub const F_FIELD_LEN_SUMS: usize = F_FST_LEN + 8;
pub const F_BODY_CRC: usize = F_FIELD_LEN_SUMS + 8 * crate::index::fields::FIELD_COUNT;
pub const F_FOOTER_CRC: usize = F_BODY_CRC + 4;
pub const F_END_MAGIC: usize = F_FOOTER_CRC + 4;
/// Footer length in bytes (112).
pub const FOOTER_LEN: usize = F_END_MAGIC + END_MAGIC.len();

/// Most documents in one segment (doc numbers are u32; a limit on everything).
pub const MAX_DOCS: usize = 1 << 28;
/// Longest id stored in the doc table (u16 length).
pub const MAX_ID_BYTES: usize = u16::MAX as usize;

/// Append `v` as unsigned LEB128.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Read an unsigned LEB128 at `*pos`, advancing it; `None` when truncated or longer than 10 bytes.
#[inline(always)]
pub fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    // Most numbers of a posting list (doc gaps, term counts) take one byte: read inline, the
    // longer ones in a call.
    let first = *buf.get(*pos)?;
    if first & 0x80 == 0 {
        *pos += 1;
        return Some(u64::from(first));
    }
    get_long_varint(buf, pos)
}

/// [`get_varint`] of a number taking two bytes or more.
#[inline(never)]
fn get_long_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..70).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_is_112_bytes() {
        assert_eq!(FOOTER_LEN, 112);
    }

    #[test]
    fn varint_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut p = 0;
            assert_eq!(get_varint(&b, &mut p), Some(v));
            assert_eq!(p, b.len());
        }
        let mut p = 0;
        assert_eq!(get_varint(&[0x80, 0x80], &mut p), None);
        let mut b = Vec::new();
        put_varint(&mut b, 300);
        assert_eq!(b, vec![0xac, 0x02]);
    }
}
