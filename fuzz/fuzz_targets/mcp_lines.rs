//! The MCP server's line reader (`mcp::lines::LineReader`) on a stream of fuzz-chosen pieces
//! (arbitrary bytes, or fragments of JSON-RPC: braces, brackets, keys, ids, methods, numbers out
//! of range, escapes, `\r`, `\n`, a BOM), fed in fuzz-chosen chunk sizes under fuzz-chosen limits
//! (line length 1..=512 bytes, nesting 1..=16; or the server's own). It must never panic, and:
//! - every complete line, and a last line without newline at `finish`, yields exactly one
//!   outcome, the same however the bytes are chunked: the outcome of `classify` on that line, or
//!   a -32700 reply with `"id": null` when the line is over the length limit;
//! - no more than the line limit plus one byte is ever buffered;
//! - every error reply is one line of valid JSON-RPC 2.0 (code -32700 or -32600, id null, a
//!   string or an integer, a non-empty message); a -32700 always has `"id": null`;
//! - a line serde_json reads (after a BOM) within the nesting limit is never a parse error, and a
//!   line that is not JSON syntax is never anything but a parse error (or blank);
//! - an error reply that names an id names the line's own `id`;
//! - a message is a JSON object with `"jsonrpc": "2.0"` nested no deeper than the limit.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mnemon_cli::mcp::lines::{
    ErrorReply, INVALID_REQUEST, Line, LineReader, MAX_LINE_BYTES, MAX_NESTING_DEPTH, PARSE_ERROR,
    classify,
};
use serde::de::IgnoredAny;
use serde_json::Value;

/// Largest stream built (keeps executions fast).
const MAX_STREAM: usize = 64 * 1024;

const FRAGMENTS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"\\",
    b"\\\"",
    b"\\u0069",
    b"\n",
    b"\r\n",
    b"\r",
    b" ",
    b"\xEF\xBB\xBF",
    b"\xff",
    b"\"jsonrpc\":\"2.0\"",
    b"\"jsonrpc\":\"1.0\"",
    b"\"id\":",
    b"\"\\u0069d\":",
    b"\"method\":",
    b"\"params\":",
    b"\"result\":",
    b"\"error\":",
    b"\"tools/list\"",
    b"\"initialize\"",
    b"\"notifications/initialized\"",
    b"7",
    b"-1",
    b"1.5",
    b"1e999",
    b"-1e400",
    b"18446744073709551616",
    b"null",
    b"true",
    b"\"s\"",
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
    b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
    b"{\"jsonrpc\":\"2.0\",\"id\":2}",
];

#[derive(Debug, Arbitrary)]
enum Piece {
    Fragment(u8),
    /// A fragment repeated 2^(n % 8) times (deep nesting, long lines).
    Repeat(u8, u8),
    Bytes(Vec<u8>),
}

#[derive(Debug)]
struct Input {
    max_line_bytes: usize,
    max_nesting_depth: usize,
    stream: Vec<u8>,
    chunks: Vec<usize>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let (max_line_bytes, max_nesting_depth) = if u.ratio(1, 8)? {
            (MAX_LINE_BYTES, MAX_NESTING_DEPTH)
        } else {
            (u.int_in_range(1..=512)?, u.int_in_range(1..=16)?)
        };
        let mut stream = Vec::new();
        let pieces: Vec<Piece> = u.arbitrary()?;
        for p in pieces {
            match p {
                Piece::Fragment(i) => {
                    stream.extend_from_slice(FRAGMENTS[usize::from(i) % FRAGMENTS.len()])
                }
                Piece::Repeat(i, n) => {
                    let f = FRAGMENTS[usize::from(i) % FRAGMENTS.len()];
                    for _ in 0..1usize << (n % 8) {
                        stream.extend_from_slice(f);
                    }
                }
                Piece::Bytes(b) => stream.extend_from_slice(&b),
            }
            if stream.len() > MAX_STREAM {
                stream.truncate(MAX_STREAM);
                break;
            }
        }
        let chunks: Vec<u16> = u.arbitrary()?;
        Ok(Input {
            max_line_bytes,
            max_nesting_depth,
            stream,
            chunks: chunks.into_iter().map(|c| usize::from(c) + 1).collect(),
        })
    }
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn check_reply(e: &ErrorReply) {
    assert!(
        e.code == PARSE_ERROR || e.code == INVALID_REQUEST,
        "code {}",
        e.code
    );
    assert!(!e.message.is_empty());
    if e.code == PARSE_ERROR {
        assert_eq!(e.id, Value::Null, "a parse error answers id null");
    }
    assert!(
        e.id.is_null()
            || e.id.is_string()
            || e.id.as_i64().is_some()
            || e.id.as_f64().is_some_and(|f| f.fract() == 0.0),
        "id {}",
        e.id
    );
    let line = e.to_line();
    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
    assert_eq!(line.last(), Some(&b'\n'));
    let v: Value = serde_json::from_slice(&line).expect("the reply is JSON");
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], e.id);
    assert_eq!(v["error"]["code"], e.code);
    assert_eq!(v["error"]["message"], e.message.as_str());
}

/// Check one outcome against the line it came from (without its `\n`).
fn check_line(raw: &[u8], got: &Line, input: &Input) {
    let line = raw.strip_suffix(b"\r").unwrap_or(raw);
    if line.len() > input.max_line_bytes {
        match got {
            Line::Error(e) => {
                assert_eq!(
                    (e.code, &e.id),
                    (PARSE_ERROR, &Value::Null),
                    "over-long line"
                );
                check_reply(e);
            }
            other => panic!("over-long line gave {other:?}"),
        }
        return;
    }
    assert_eq!(
        *got,
        classify(line, input.max_nesting_depth),
        "chunking changed the outcome"
    );
    let body = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let parsed = serde_json::from_slice::<Value>(body).ok();
    let syntax_ok = serde_json::from_slice::<IgnoredAny>(body).is_ok();
    if !syntax_ok {
        assert!(
            matches!(got, Line::Blank) || matches!(got, Line::Error(e) if e.code == PARSE_ERROR),
            "not JSON but {got:?}"
        );
    }
    match got {
        Line::Error(e) => {
            check_reply(e);
            if let Some(v) = &parsed
                && depth(v) <= input.max_nesting_depth
            {
                assert_ne!(
                    e.code, PARSE_ERROR,
                    "readable JSON answered as a parse error"
                );
            }
            if !e.id.is_null() {
                assert!(syntax_ok, "an id from a line that is not JSON");
                if let Some(v) = &parsed {
                    assert_eq!(v.get("id"), Some(&e.id), "the reply names another id");
                }
            }
        }
        Line::Message(v) => {
            assert_eq!(Some(v), parsed.as_ref(), "a message is the line's JSON");
            assert!(v.is_object(), "a message is an object");
            assert_eq!(v["jsonrpc"], "2.0");
            assert!(
                depth(v) <= input.max_nesting_depth,
                "message nested past the limit"
            );
        }
        Line::Dropped(why) => {
            assert!(syntax_ok, "only JSON is dropped silently");
            assert!(!why.is_empty());
        }
        Line::Blank => {
            assert!(
                body.iter().all(|b| b" \t\r\n".contains(b)),
                "blank line with content"
            );
        }
    }
}

fuzz_target!(|input: Input| {
    let mut reader = LineReader::with_limits(input.max_line_bytes, input.max_nesting_depth);
    let mut outcomes = Vec::new();
    let mut at = 0;
    let mut sizes = input.chunks.iter().copied().cycle();
    while at < input.stream.len() {
        let n = sizes
            .next()
            .unwrap_or(input.stream.len())
            .min(input.stream.len() - at);
        reader.feed(&input.stream[at..at + n], &mut outcomes);
        at += n;
        assert!(
            reader.buffered_bytes() <= input.max_line_bytes + 1,
            "{} bytes buffered over a limit of {}",
            reader.buffered_bytes(),
            input.max_line_bytes
        );
    }
    outcomes.extend(reader.finish());
    assert_eq!(reader.finish(), None, "finish twice");

    let mut lines: Vec<&[u8]> = input.stream.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    assert_eq!(outcomes.len(), lines.len(), "one outcome per line");
    for (line, got) in lines.iter().zip(&outcomes) {
        check_line(line, got, &input);
    }
});
