//! The frontmatter fast path against the YAML parser: whatever `read_plain` accepts,
//! `serde_yaml_ng` must read to an equal value (and must not reject). Input: either arbitrary
//! bytes as UTF-8 (lossy), or, when the first byte is even, a sequence of frontmatter pieces
//! chosen by the following bytes (keys, `: `, list markers, brackets, quotes, numbers, dates,
//! null and boolean words, comment marks, odd characters), which keeps most inputs near the
//! edge of the subset.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mnemon::notes::{as_yaml_value, read_plain};
use serde_yaml_ng::Value;

const PIECES: &[&str] = &[
    "name",
    "tags",
    "related",
    "ttl_days",
    "null",
    "True",
    "x-y",
    "_k",
    ":",
    ": ",
    " ",
    "  ",
    "\n",
    "\n  - ",
    "\n- ",
    "- ",
    "[",
    "]",
    ", ",
    ",",
    "'",
    "\"",
    "#",
    " #",
    "a",
    "b c",
    "0",
    "007",
    "42",
    "1.5",
    "2025-09-10",
    "+1",
    ".5",
    "~",
    "true",
    "FALSE",
    "é",
    "中文",
    "\\",
    "&",
    "*",
    "!",
    "|",
    ">",
    "%",
    "@",
    "`",
    "{",
    "}",
    "?",
    "-",
    "\t",
    "\r",
    "\u{85}",
    "a:b",
    "http://x.y/z",
    "C#",
    "x]",
    "[[id]]",
    "0x1f",
    "1e3",
    "-1",
    ".inf",
    "NaN",
    "\u{2028}",
    "\u{feff}",
    "...",
    "---",
    "\u{a0}",
    "\u{3000}",
    " |",
    " &",
    " -",
    " ?",
];

fuzz_target!(|data: &[u8]| {
    let text = match data.split_first() {
        Some((b, rest)) if b % 2 == 0 => rest
            .iter()
            .map(|&p| PIECES[usize::from(p) % PIECES.len()])
            .collect(),
        _ => String::from_utf8_lossy(data).into_owned(),
    };
    if let Some(entries) = read_plain(&text) {
        let fast = as_yaml_value(&entries);
        let parsed: Value = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| {
            panic!("the plain reader accepted {text:?}, the parser did not: {e}")
        });
        assert_eq!(fast, parsed, "{text:?}");
    }
});
