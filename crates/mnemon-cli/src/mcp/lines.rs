//! The MCP server's line reader: stdin bytes in, one outcome per line out.
//!
//! MCP over stdio is one JSON-RPC message per line. Every line the client sends must get an
//! answer it can act on, and no line may stop the server, so lines are checked here before the
//! MCP service (rmcp) sees them:
//!
//! - a line longer than [`MAX_LINE_BYTES`] is skipped to its newline without being buffered
//!   whole, and answered `-32700` (parse error) with `"id": null`;
//! - a line that is not UTF-8 or not JSON is answered `-32700` with `"id": null`;
//! - nesting deeper than [`MAX_NESTING_DEPTH`] is found by a byte scan before any parser runs
//!   (serde_json's own recursion limit is never what answers);
//! - JSON that cannot be taken as a message (a number out of range, too deep, not an object, a
//!   missing or non-string `method`, a wrong `jsonrpc`, bad `params` or `id`) is answered
//!   `-32600` (invalid request) with the message's `id` when that id could be read, else
//!   `"id": null`;
//! - an invalid notification (a `method` but no `id`) or an invalid response gets no reply, as
//!   JSON-RPC asks, and is reported to the caller as [`Line::Dropped`] so it can be logged.
//!
//! [`LineReader`] is pure (no I/O): the server feeds it what it reads, tests and the fuzz target
//! feed it arbitrary bytes in arbitrary chunks.

use serde::de::IgnoredAny;
use serde_json::{Value, json};
use std::fmt;

/// Longest line accepted, in bytes, not counting its `\n` (and a `\r` before it). A longer line
/// is skipped to its newline and answered with a parse error; at most this much is buffered.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Deepest nesting of arrays and objects accepted in one message; the message's own object is
/// level 1. Well below serde_json's recursion limit, so the limit is ours and named in replies.
pub const MAX_NESTING_DEPTH: usize = 64;

/// Buffer capacity kept between lines, in bytes: one long line does not pin its buffer.
const RETAINED_BUFFER_BYTES: usize = 64 * 1024;

/// JSON-RPC 2.0: the line is not JSON that could be read.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the JSON is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0: the method's parameters are not valid.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC 2.0: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;

/// UTF-8 byte order mark: JSON readers may ignore one at the start (RFC 8259, 8.1).
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A JSON-RPC error reply written by the server itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorReply {
    /// [`PARSE_ERROR`], [`INVALID_REQUEST`], [`INVALID_PARAMS`] or [`METHOD_NOT_FOUND`].
    pub code: i64,
    /// The request's id, or `null` when it could not be read.
    pub id: Value,
    /// What was wrong and what to send instead.
    pub message: String,
}

impl ErrorReply {
    /// A parse error (`-32700`, `"id": null`).
    pub fn parse_error(why: impl fmt::Display) -> Self {
        ErrorReply {
            code: PARSE_ERROR,
            id: Value::Null,
            message: format!("Parse error: {why}"),
        }
    }

    /// An invalid request (`-32600`) answering `id`.
    pub fn invalid_request(id: Value, why: impl fmt::Display) -> Self {
        ErrorReply {
            code: INVALID_REQUEST,
            id,
            message: format!("Invalid Request: {why}"),
        }
    }

    /// Invalid params (`-32602`) answering `id`.
    pub fn invalid_params(id: Value, why: impl fmt::Display) -> Self {
        ErrorReply {
            code: INVALID_PARAMS,
            id,
            message: format!("Invalid params: {why}"),
        }
    }

    /// Method not found (`-32601`) answering `id`.
    pub fn method_not_found(id: Value, why: impl fmt::Display) -> Self {
        ErrorReply {
            code: METHOD_NOT_FOUND,
            id,
            message: format!("Method not found: {why}"),
        }
    }

    /// The JSON-RPC 2.0 error object.
    pub fn to_json(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        })
    }

    /// The reply as one line, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = self.to_json().to_string().into_bytes();
        line.push(b'\n');
        line
    }
}

/// What one line is.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A JSON-RPC message (request, notification or response) in a valid envelope: for the MCP
    /// service.
    Message(Value),
    /// The line cannot be served: write this reply.
    Error(ErrorReply),
    /// An invalid notification or response: JSON-RPC answers neither. Says why, for the log.
    Dropped(String),
    /// Only whitespace: nothing to do.
    Blank,
}

/// Splits bytes into lines and classifies each; see the module docs.
#[derive(Debug)]
pub struct LineReader {
    buf: Vec<u8>,
    /// The current line went over the limit: the rest of it is skipped.
    overlong: bool,
    max_line_bytes: usize,
    max_nesting_depth: usize,
}

impl Default for LineReader {
    fn default() -> Self {
        Self::new()
    }
}

impl LineReader {
    /// A reader with the server's limits ([`MAX_LINE_BYTES`], [`MAX_NESTING_DEPTH`]).
    pub fn new() -> Self {
        Self::with_limits(MAX_LINE_BYTES, MAX_NESTING_DEPTH)
    }

    /// A reader with other limits (tests and fuzzing use small ones).
    pub fn with_limits(max_line_bytes: usize, max_nesting_depth: usize) -> Self {
        LineReader {
            buf: Vec::new(),
            overlong: false,
            max_line_bytes,
            max_nesting_depth,
        }
    }

    /// Feed the next bytes read; one outcome per line completed by them is pushed to `out`.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<Line>) {
        while let Some(nl) = memchr::memchr(b'\n', chunk) {
            self.take(&chunk[..nl]);
            out.push(self.end_line());
            chunk = &chunk[nl + 1..];
        }
        self.take(chunk);
    }

    /// At end of input: the outcome of a last line without a newline, if there is one.
    pub fn finish(&mut self) -> Option<Line> {
        (self.overlong || !self.buf.is_empty()).then(|| self.end_line())
    }

    /// Bytes of the current, unfinished line held in memory (never more than the line limit
    /// plus one).
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len()
    }

    fn take(&mut self, part: &[u8]) {
        if self.overlong || part.is_empty() {
            return;
        }
        // One byte of room for a `\r` before the newline.
        if self.buf.len() + part.len() > self.max_line_bytes.saturating_add(1) {
            self.overlong = true;
            self.buf = Vec::new();
        } else {
            self.buf.extend_from_slice(part);
        }
    }

    fn end_line(&mut self) -> Line {
        let line = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
        let outcome = if self.overlong || line.len() > self.max_line_bytes {
            Line::Error(ErrorReply::parse_error(format_args!(
                "the line is longer than {} bytes (the server's limit, MAX_LINE_BYTES) and was \
                 skipped: send each message on one line of at most that size",
                self.max_line_bytes
            )))
        } else {
            classify(line, self.max_nesting_depth)
        };
        self.overlong = false;
        self.buf.clear();
        self.buf.shrink_to(RETAINED_BUFFER_BYTES);
        outcome
    }
}

/// Classify one line (without its newline) under a nesting limit.
pub fn classify(line: &[u8], max_nesting_depth: usize) -> Line {
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    if line
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        return Line::Blank;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Line::Error(ErrorReply::parse_error(format_args!(
                "the line is not UTF-8 (invalid byte at offset {}): send UTF-8 JSON",
                e.valid_up_to()
            )));
        }
    };
    if nesting_exceeds(line, max_nesting_depth) {
        return refuse(
            text,
            format_args!(
                "arrays and objects are nested deeper than {max_nesting_depth} levels (the \
                 server's limit, MAX_NESTING_DEPTH): flatten the message"
            ),
        );
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v) => check_envelope(v),
        // serde_json words a lone surrogate as a bad hex escape; say what is wrong instead.
        Err(e) => match lone_surrogate_at(line) {
            Some(at) => refuse(
                text,
                format_args!(
                    "a string holds a lone UTF-16 surrogate escape at byte {at} (\\uD800 to \\uDFFF \
                     come only in high-low pairs; alone they are not text): send the text as \
                     valid Unicode"
                ),
            ),
            None => refuse(text, e),
        },
    }
}

/// The offset of the first `\uXXXX` escape inside a string that is half of a UTF-16 surrogate
/// pair without its other half, if any.
fn lone_surrogate_at(b: &[u8]) -> Option<usize> {
    let hex_at = |i: usize| -> Option<u16> {
        let digits = b.get(i..i + 4)?;
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let escape_at = |i: usize| -> Option<u16> {
        (b.get(i..i + 2)? == b"\\u").then_some(())?;
        hex_at(i + 2)
    };
    let (mut i, mut in_string) = (0, false);
    while i < b.len() {
        match (in_string, b[i]) {
            (false, b'"') => in_string = true,
            (true, b'"') => in_string = false,
            (true, b'\\') => {
                if let Some(unit) = escape_at(i) {
                    match unit {
                        0xD800..=0xDBFF => match escape_at(i + 6) {
                            Some(0xDC00..=0xDFFF) => i += 6,
                            _ => return Some(i),
                        },
                        0xDC00..=0xDFFF => return Some(i),
                        _ => {}
                    }
                    i += 6;
                    continue;
                }
                i += 1; // the escaped char
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// True when arrays and objects nest deeper than `max` outside strings. Exact for valid JSON; on
/// invalid JSON either answer leads to an error reply.
fn nesting_exceeds(bytes: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The answer to a line that could not be taken as a message: a parse error when it is not JSON
/// at all, otherwise an invalid request answering its id (nothing for a notification).
fn refuse(text: &str, why: impl fmt::Display) -> Line {
    match probe(text) {
        Err(e) => Line::Error(ErrorReply::parse_error(format_args!(
            "the line is not JSON ({e}): send one JSON-RPC message per line"
        ))),
        Ok(Probe::Notification) => Line::Dropped(format!("invalid notification: {why}")),
        Ok(Probe::Other { id }) => Line::Error(ErrorReply::invalid_request(id, why)),
    }
}

/// Whether `id` is one the MCP service takes (a string or an integer).
fn is_request_id(id: &Value) -> bool {
    <rmcp::model::RequestId as serde::Deserialize>::deserialize(id).is_ok()
}

/// Check the JSON-RPC 2.0 envelope of a parsed line.
fn check_envelope(v: Value) -> Line {
    let Value::Object(obj) = &v else {
        let why = if v.is_array() {
            "batches (JSON arrays) are not supported: send one message per line"
        } else {
            "a JSON-RPC message is a JSON object"
        };
        return Line::Error(ErrorReply::invalid_request(Value::Null, why));
    };
    let id = obj.get("id");
    // JSON-RPC ids are strings or numbers: an integer the service cannot take (2^63 to 2^64-1)
    // is still echoed, so the client can match the error to its request. Larger ones were read
    // as floats, which would echo another number: those get `null`, as other ids do.
    let reply_id = id
        .filter(|id| is_request_id(id) || id.is_u64())
        .cloned()
        .unwrap_or(Value::Null);
    let method = obj.get("method");
    let is_response = method.is_none() && (obj.contains_key("result") || obj.contains_key("error"));
    let is_notification = id.is_none() && method.is_some_and(Value::is_string);
    let problem = if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        Some("`jsonrpc` must be \"2.0\"")
    } else if id.is_some_and(|id| id.is_number() && !is_request_id(id)) {
        // An integer past 2^64 is read as a float and so named too.
        Some(
            "`id` is a number this server cannot take: use an integer from -2^63 to 2^63-1, or a \
             string",
        )
    } else if id.is_some_and(|id| !is_request_id(id)) {
        Some("`id` must be a string or an integer")
    } else {
        match method {
            // `null` params are taken as none: clients send them and the service accepts them.
            Some(Value::String(_)) => match obj.get("params") {
                Some(p) if !p.is_object() && !p.is_array() && !p.is_null() => {
                    Some("`params` must be an object or an array")
                }
                _ => None,
            },
            Some(_) => Some("`method` must be a string"),
            None if is_response && id.is_none() => Some("a response needs the request's `id`"),
            None if is_response => None,
            None => Some("`method` is missing"),
        }
    };
    match problem {
        None => Line::Message(v),
        Some(why) if is_notification => Line::Dropped(format!("invalid notification: {why}")),
        Some(why) if is_response => Line::Dropped(format!("invalid response: {why}")),
        Some(why) => Line::Error(ErrorReply::invalid_request(reply_id, why)),
    }
}

/// What can be read of a line that is JSON but not a value serde_json keeps (a number out of
/// range, too deep): whether it is a notification, else the id to answer.
enum Probe {
    Notification,
    /// A request or something that is not one; `id` is `null` when absent or unusable.
    Other {
        id: Value,
    },
}

/// Probe `text` if it is JSON: the syntax is checked with `IgnoredAny`, which serde_json reads
/// without recursion and without converting numbers; then the top-level `id` and `method` are
/// found by [`top_level_members`].
fn probe(text: &str) -> Result<Probe, serde_json::Error> {
    serde_json::from_str::<IgnoredAny>(text)?;
    let Some(members) = top_level_members(text) else {
        return Ok(Probe::Other { id: Value::Null });
    };
    let (mut id, mut method_is_string) = (None, false);
    for (key, raw) in members {
        match key.as_str() {
            // An id that is itself out of range or deep cannot be echoed.
            "id" => id = Some(serde_json::from_str::<Value>(raw).unwrap_or(Value::Null)),
            "method" => method_is_string = raw.starts_with('"'),
            _ => {}
        }
    }
    Ok(match id {
        None if method_is_string => Probe::Notification,
        id => Probe::Other {
            id: id.filter(is_request_id).unwrap_or(Value::Null),
        },
    })
}

/// The members of a top-level JSON object as (decoded key, raw value text); `None` when the text
/// is not an object. `text` must be valid JSON (see [`probe`]); on anything else the answer is
/// partial, never a panic.
fn top_level_members(text: &str) -> Option<Vec<(String, &str)>> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    i += 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            break;
        }
        let key_end = string_end(b, i);
        let key = text
            .get(i..key_end)
            .and_then(|k| serde_json::from_str::<String>(k).ok())
            .unwrap_or_default();
        // Past the `:`.
        i = skip_ws(b, skip_ws(b, key_end).saturating_add(1));
        let end = value_end(b, i);
        members.push((key, text.get(i..end).unwrap_or("").trim_end()));
        i = skip_ws(b, end);
        if b.get(i) != Some(&b',') {
            break;
        }
        i += 1;
    }
    Some(members)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
    {
        i += 1;
    }
    i
}

/// The index just past the string starting (with its `"`) at `start`.
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start.saturating_add(1);
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i = i.saturating_add(2),
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The index of the `,` or `}` that ends the value starting at `start` (or the end of `b`).
fn value_end(b: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i = string_end(b, i);
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth == 0 => return i,
            b']' | b'}' => depth -= 1,
            b',' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &[u8]) -> Line {
        let mut reader = LineReader::new();
        let mut out = Vec::new();
        reader.feed(line, &mut out);
        reader.feed(b"\n", &mut out);
        assert_eq!(out.len(), 1, "one outcome per line: {out:?}");
        out.remove(0)
    }

    fn error(line: &[u8]) -> ErrorReply {
        match one(line) {
            Line::Error(e) => e,
            other => panic!("expected an error reply, got {other:?}"),
        }
    }

    #[test]
    fn not_json_gets_a_parse_error_with_null_id() {
        let e = error(b"hello");
        assert_eq!((e.code, e.id), (PARSE_ERROR, Value::Null));
        assert!(e.message.contains("not JSON"), "{}", e.message);
        let e = error(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":");
        assert_eq!((e.code, e.id), (PARSE_ERROR, Value::Null));
    }

    /// serde_json answered a lone surrogate with "unexpected end of hex escape".
    #[test]
    fn a_lone_surrogate_escape_is_named_as_such_and_answers_its_id() {
        for line in [
            br#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"q":"a\ud800b"}}"#.as_slice(),
            br#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"q":"\udc00"}}"#,
            br#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"q":"\ud800\u0041"}}"#,
        ] {
            let at = line
                .windows(2)
                .position(|w| w == b"\\u")
                .expect("an escape");
            let e = error(line);
            assert_eq!((e.code, e.id.clone()), (INVALID_REQUEST, json!(5)));
            let want = format!("lone UTF-16 surrogate escape at byte {at}");
            assert!(e.message.contains(&want), "{}", e.message);
        }
        // A pair is text; an escaped backslash before `u` is no escape.
        assert!(lone_surrogate_at(br#"{"q":"\ud83d\ude00 \\ud800"}"#).is_none());
        assert!(matches!(
            one(br#"{"jsonrpc":"2.0","method":"x","params":{"q":"\ud83d\ude00"}}"#),
            Line::Message(_)
        ));
    }

    #[test]
    fn invalid_utf8_gets_a_parse_error() {
        let e = error(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}");
        assert_eq!((e.code, e.id), (PARSE_ERROR, Value::Null));
        assert!(e.message.contains("not UTF-8"), "{}", e.message);
    }

    #[test]
    fn number_out_of_range_is_an_invalid_request_answering_its_id() {
        let e = error(br#"{"jsonrpc":"2.0","id":7,"method":1e999}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, json!(7)));
        assert!(e.message.contains("number out of range"), "{}", e.message);
        let e = error(br#"{"jsonrpc":"2.0","id":"q","method":"x","params":{"a":[-1e400]}}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, json!("q")));
        // The id itself out of range cannot be echoed.
        let e = error(br#"{"jsonrpc":"2.0","id":1e999,"method":"x"}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, Value::Null));
        // A notification gets no reply.
        assert!(matches!(
            one(br#"{"jsonrpc":"2.0","method":"x","params":[1e999]}"#),
            Line::Dropped(_)
        ));
    }

    #[test]
    fn deep_nesting_is_answered_by_our_limit_not_the_parser() {
        let e = error(&vec![b'['; 100_000]);
        assert_eq!((e.code, e.id), (PARSE_ERROR, Value::Null));
        let deep = |levels: usize| {
            let params = "[".repeat(levels - 1) + &"]".repeat(levels - 1);
            format!(r#"{{"jsonrpc":"2.0","id":4,"method":"x","params":{params}}}"#)
        };
        // The message's object is level 1: `levels` in all.
        assert!(matches!(
            one(deep(MAX_NESTING_DEPTH).as_bytes()),
            Line::Message(_)
        ));
        let e = error(deep(MAX_NESTING_DEPTH + 1).as_bytes());
        assert_eq!((e.code, e.id), (INVALID_REQUEST, json!(4)));
        assert!(e.message.contains("MAX_NESTING_DEPTH"), "{}", e.message);
        // Far past serde_json's recursion limit, still our answer with the id.
        let e = error(deep(100_000).as_bytes());
        assert_eq!((e.code, e.id), (INVALID_REQUEST, json!(4)));
        assert!(e.message.contains("MAX_NESTING_DEPTH"), "{}", e.message);
        let e = error(("[".repeat(200) + &"]".repeat(200)).as_bytes());
        assert_eq!((e.code, e.id), (INVALID_REQUEST, Value::Null));
    }

    #[test]
    fn brackets_inside_strings_do_not_count_as_nesting() {
        let text = "[".repeat(1000) + "\\\"{{";
        let line = json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"t": text}});
        assert_eq!(one(line.to_string().as_bytes()), Line::Message(line));
    }

    #[test]
    fn over_long_line_is_skipped_without_buffering_it_and_answered() {
        let mut reader = LineReader::with_limits(32, MAX_NESTING_DEPTH);
        let mut out = Vec::new();
        for _ in 0..100 {
            reader.feed(&[b'x'; 10], &mut out);
            assert!(reader.buffered_bytes() <= 33, "{}", reader.buffered_bytes());
        }
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#;
        reader.feed(b"\n", &mut out);
        assert_eq!(out.len(), 1);
        let Line::Error(e) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!((e.code, &e.id), (PARSE_ERROR, &Value::Null));
        assert!(e.message.contains("longer than 32 bytes"), "{}", e.message);
        // The next line is read normally (it fits a larger reader).
        let mut reader = LineReader::with_limits(ok.len(), MAX_NESTING_DEPTH);
        out.clear();
        reader.feed(&[b'y'; 100], &mut out);
        reader.feed(b"\n", &mut out);
        reader.feed(ok, &mut out);
        reader.feed(b"\r\n", &mut out);
        reader.feed(ok, &mut out);
        reader.feed(b" \n", &mut out);
        assert_eq!(out.len(), 3, "{out:?}");
        assert!(matches!(&out[0], Line::Error(e) if e.code == PARSE_ERROR));
        assert!(
            matches!(out[1], Line::Message(_)),
            "exactly the limit, with CR"
        );
        assert!(
            matches!(&out[2], Line::Error(e) if e.code == PARSE_ERROR),
            "one over"
        );
    }

    #[test]
    fn invalid_request_answers_its_id() {
        let e = error(br#"{"jsonrpc":"2.0","id":9}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, json!(9)));
        assert!(e.message.contains("`method` is missing"), "{}", e.message);
        let e = error(br#"{"jsonrpc":"2.0","id":"a","method":5}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, json!("a")));
        let e = error(br#"{"jsonrpc":"1.0","id":2,"method":"x"}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, json!(2)));
        let e = error(br#"{"jsonrpc":"2.0","id":3,"method":"x","params":"p"}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, json!(3)));
        // A number the service cannot take is echoed (a JSON-RPC id may be any number), with
        // the range it takes; an id of another type is not.
        let e = error(br#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#);
        assert_eq!(
            (e.code, e.id),
            (INVALID_REQUEST, json!(18446744073709551615u64))
        );
        assert!(e.message.contains("2^63-1"), "{}", e.message);
        let e = error(br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, Value::Null));
        assert!(e.message.contains("2^63-1"), "{}", e.message);
        let e = error(br#"{"jsonrpc":"2.0","id":true,"method":"x"}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, Value::Null));
        let e = error(br#"{"jsonrpc":"2.0","method":1}"#);
        assert_eq!((e.code, e.id), (INVALID_REQUEST, Value::Null));
        let e = error(b"[]");
        assert_eq!((e.code, e.id), (INVALID_REQUEST, Value::Null));
        let e = error(b"42");
        assert_eq!((e.code, e.id), (INVALID_REQUEST, Value::Null));
    }

    #[test]
    fn invalid_notifications_and_responses_get_no_reply() {
        for line in [
            br#"{"jsonrpc":"2.0","method":"x","params":5}"#.as_slice(),
            br#"{"method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":[1],"error":{"code":1,"message":"m"}}"#,
        ] {
            assert!(matches!(one(line), Line::Dropped(_)), "{line:?}");
        }
    }

    #[test]
    fn valid_messages_blank_lines_bom_and_crlf() {
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert_eq!(one(req.to_string().as_bytes()), Line::Message(req.clone()));
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend_from_slice(req.to_string().as_bytes());
        bom.push(b'\r');
        assert_eq!(one(&bom), Line::Message(req));
        let resp = json!({"jsonrpc": "2.0", "id": "s1", "result": {}});
        assert_eq!(one(resp.to_string().as_bytes()), Line::Message(resp));
        let nulls = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": null});
        assert_eq!(one(nulls.to_string().as_bytes()), Line::Message(nulls));
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(one(note.to_string().as_bytes()), Line::Message(note));
        assert_eq!(one(b""), Line::Blank);
        assert_eq!(one(b" \t\r"), Line::Blank);
    }

    #[test]
    fn outcomes_do_not_depend_on_chunking_and_eof_ends_the_last_line() {
        let input: &[u8] = b"x\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n\n[[[\n{\"jsonrpc\":\"2.0\",\"id\":2}";
        let mut whole = Vec::new();
        let mut reader = LineReader::with_limits(20, 2);
        reader.feed(input, &mut whole);
        whole.extend(reader.finish());
        assert_eq!(reader.finish(), None, "nothing left after finish");
        let mut bytewise = Vec::new();
        let mut reader = LineReader::with_limits(20, 2);
        for b in input {
            reader.feed(std::slice::from_ref(b), &mut bytewise);
        }
        bytewise.extend(reader.finish());
        assert_eq!(whole, bytewise);
        let codes: Vec<Option<i64>> = whole
            .iter()
            .map(|l| match l {
                Line::Error(e) => Some(e.code),
                _ => None,
            })
            .collect();
        // Not JSON; 38 bytes over 20; blank; too deep (and not JSON); over 20 at EOF.
        assert_eq!(
            codes,
            [
                Some(PARSE_ERROR),
                Some(PARSE_ERROR),
                None,
                Some(PARSE_ERROR),
                Some(PARSE_ERROR)
            ]
        );
        assert_eq!(whole[2], Line::Blank);
    }

    #[test]
    fn reply_is_one_line_of_json_rpc() {
        let line = ErrorReply::invalid_request(json!("a\nb"), "x\ny").to_line();
        assert_eq!(memchr::memchr_iter(b'\n', &line).count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["id"], "a\nb");
        assert_eq!(v["error"]["code"], INVALID_REQUEST);
    }
}
