//! Frontmatter bounds on deeply nested YAML: whatever the bounds check passes, the YAML parser
//! reads no deeper than `MAX_FRONTMATTER_DEPTH` (aliases aside: each is a copy of its anchor, and
//! their count is bounded); whatever it refuses, the note parser reports with the limit and
//! indexes from the body without reading the frontmatter. Inputs are built from nesting pieces
//! (flow lists and mappings, block indentation, `- ` and `? ` entries, keys, anchors, aliases,
//! quotes, comments, block scalars), each repeated a fuzz-chosen number of times, so that most
//! inputs nest near or far past the limit. A slow input (the quadratic nesting the bounds are
//! for) is caught by libFuzzer's timeout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mnemon::notes::{
    MAX_FRONTMATTER_DEPTH, check_frontmatter_bounds, parse_note, split_frontmatter,
};
use serde_yaml_ng::Value;

const PIECES: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    "{k: ",
    "[k: ",
    "- ",
    "? ",
    ": ",
    "k: ",
    ", ",
    "\n",
    "\n  ",
    "\n    ",
    " ",
    "a",
    "'",
    "\"",
    "it's",
    "'q'",
    "\"q\\\"\"",
    " # [[",
    "#",
    "|\n",
    ">\n",
    "*a",
    "&a ",
    "!t ",
    "&a [",
    "x y",
    ":",
    "-",
    "\r\n",
    "\t",
    "\\",
    "- - |",
    "\n  - k: ",
    "\n- - ",
    "k:\n  ",
];

/// Longest input built (bytes): enough to nest far past the limit, small enough to run fast.
const MAX_BUILT_BYTES: usize = 1 << 16;

/// The parser's nesting depth of `v`.
fn depth(v: &Value) -> usize {
    match v {
        Value::Sequence(s) => 1 + s.iter().map(depth).max().unwrap_or(0),
        Value::Mapping(m) => {
            1 + m
                .iter()
                .map(|(k, v)| depth(k).max(depth(v)))
                .max()
                .unwrap_or(0)
        }
        Value::Tagged(t) => depth(&t.value),
        _ => 0,
    }
}

fuzz_target!(|data: &[u8]| {
    // Pairs of bytes: a piece and how many times it is repeated (most often once).
    let mut yaml = String::new();
    for pair in data.chunks(2) {
        let piece = PIECES[usize::from(pair[0]) % PIECES.len()];
        let times = match pair.get(1) {
            Some(&t) if t >= 0xf0 => usize::from(t - 0xf0 + 1) * 8,
            _ => 1,
        };
        for _ in 0..times {
            if yaml.len() + piece.len() > MAX_BUILT_BYTES {
                break;
            }
            yaml.push_str(piece);
        }
    }
    let bounds = check_frontmatter_bounds(&yaml, 2);
    if bounds.is_ok()
        && !yaml.contains('*')
        && let Ok(v) = serde_yaml_ng::from_str::<Value>(&yaml)
    {
        let d = depth(&v);
        assert!(d <= MAX_FRONTMATTER_DEPTH, "passed at depth {d}: {yaml:?}");
    }
    // The note parser: the same verdict, reported; the body indexed either way.
    let note = format!("---\n{yaml}\n---\nthe body\n");
    // A line of the YAML that closes a block (`---`, `...`, spaces after them allowed) ends the
    // frontmatter early: another block than the one checked.
    if split_frontmatter(&note).0.map(str::len) != Some(yaml.len() + 1) {
        return;
    }
    let parsed = parse_note("n", note.as_bytes());
    assert_eq!(parsed.body, "the body\n");
    if let Err(over) = check_frontmatter_bounds(&format!("{yaml}\n"), 2) {
        let message = over.to_string();
        assert!(
            parsed.problems.iter().any(|p| p.message == message),
            "{message} not reported: {:?}",
            parsed.problems
        );
        assert_eq!(parsed.meta, Default::default());
    }
});
