//! The graph cache file's reader on any bytes (format-spec/graph.md): it never panics, and what
//! it accepts encodes to a file it accepts again, unchanged by a second round. When the first
//! byte is even, the header's magic, version, reserved bytes, length and CRC are fixed up first,
//! so that most inputs reach the checks behind the checksum (offsets, ids, codes, ordinals).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mnemon::graph::file::{decode, encode};

const HEADER_BYTES: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = rest.to_vec();
    if mode % 2 == 0 && bytes.len() >= HEADER_BYTES {
        bytes[..8].copy_from_slice(b"\x89MNGR\r\n\x1a");
        bytes[8..12].copy_from_slice(&[1, 0, 0, 0]);
        bytes[56..64].fill(0);
        let body_len = (bytes.len() - HEADER_BYTES) as u64;
        bytes[16..24].copy_from_slice(&body_len.to_le_bytes());
        let crc = crc32fast::hash(&bytes[16..]);
        bytes[12..16].copy_from_slice(&crc.to_le_bytes());
    }
    if let Ok(g) = decode(&bytes) {
        let once = encode(&g);
        let again = decode(&once).expect("an encoded graph decodes");
        assert_eq!(encode(&again), once, "a second round changes the file");
        assert_eq!(again.len(), g.len());
    }
});
