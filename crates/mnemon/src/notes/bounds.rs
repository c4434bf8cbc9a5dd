//! Limits a frontmatter block is checked against before the YAML parser sees it.
//!
//! libyaml's scanner rescans its list of possible simple keys, one per open flow collection, at
//! every token: deep flow nesting costs time quadratic in the depth, so a short note of nested
//! `[` stalls the parser. Aliases are expanded by `serde_yaml_ng` into a copy of their anchor
//! each time (its own limit counts expansions, not their size): a few nested anchors of a
//! few hundred values each make billions of values. So the size, the nesting depth and the number
//! of aliases are bounded here, by one linear pass over the text, and a frontmatter over a limit is
//! not parsed at all (the note is indexed from its body, with a problem naming the limit).
//!
//! The pass is a small YAML lexer: it follows quoted scalars (over several lines too), comments,
//! block scalars (`|`, `>`), flow collections and the block collections that indentation, `- `,
//! `? ` and `key:` open. Its depth is never below the depth the YAML parser sees, so a
//! frontmatter it passes cannot nest deeper than [`MAX_FRONTMATTER_DEPTH`]: where it cannot tell
//! without parsing, it counts the most a construct may add (a flow list two levels, for the
//! `a: b` pairs it may hold; a flow collection where a key may start one more; a multi-line
//! plain scalar whose lines step right a level per step).

/// Largest frontmatter (bytes between the `---` lines) that is parsed.
pub const MAX_FRONTMATTER_BYTES: usize = 64 << 10;
/// Deepest nesting of collections (block and flow together) in a frontmatter that is parsed.
pub const MAX_FRONTMATTER_DEPTH: usize = 32;
/// Most YAML aliases (`*name`) in a frontmatter that is parsed: each is expanded into a full
/// copy of its anchor, so k nested levels of b aliases copy an anchor b^k times. Four aliases
/// copy an anchor at most four times (two levels of two, or four side by side): a parsed
/// frontmatter stays within a few times what its size alone costs.
pub const MAX_FRONTMATTER_ALIASES: usize = 4;

/// A frontmatter over a limit: it is not parsed, and the note is indexed from its body only.
/// The text is the problem reported on the note: the limit, where, and the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BoundsError {
    /// Over [`MAX_FRONTMATTER_BYTES`].
    #[error(
        "frontmatter is {bytes} bytes, over the limit of {} KiB: it was not read and the note is \
         indexed from its body only; keep the frontmatter to short metadata and move long text \
         into the body",
        MAX_FRONTMATTER_BYTES >> 10
    )]
    Size { bytes: usize },
    /// Nests deeper than [`MAX_FRONTMATTER_DEPTH`], found at the note's line `line`.
    #[error(
        "frontmatter may nest deeper than {MAX_FRONTMATTER_DEPTH} levels (line {line}): it was \
         not read and the note is indexed from its body only; flatten the YAML between the --- \
         lines (a `[...]` list counts as two levels)"
    )]
    Depth { line: usize },
    /// Holds more than [`MAX_FRONTMATTER_ALIASES`] aliases, the one over the limit at the note's
    /// line `line`.
    #[error(
        "frontmatter uses more than {MAX_FRONTMATTER_ALIASES} YAML aliases (`*name`, line {line}): \
         it was not read and the note is indexed from its body only; write the values out \
         instead of aliasing them"
    )]
    Aliases { line: usize },
}

/// What the frontmatter's text must not exceed: [`check_frontmatter_size`], then
/// [`check_frontmatter_nesting`].
pub fn check_frontmatter_bounds(yaml: &str, first_line: usize) -> Result<(), BoundsError> {
    check_frontmatter_size(yaml)?;
    check_frontmatter_nesting(yaml, first_line)
}

/// [`BoundsError::Size`] when the frontmatter is over [`MAX_FRONTMATTER_BYTES`].
pub fn check_frontmatter_size(yaml: &str) -> Result<(), BoundsError> {
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(BoundsError::Size { bytes: yaml.len() });
    }
    Ok(())
}

/// [`BoundsError::Depth`] or [`BoundsError::Aliases`] (with the line) when the
/// frontmatter nests deeper than [`MAX_FRONTMATTER_DEPTH`] or holds more than
/// [`MAX_FRONTMATTER_ALIASES`] aliases. `first_line` is the note's line number of the
/// frontmatter's first line. Linear in the text.
pub fn check_frontmatter_nesting(yaml: &str, first_line: usize) -> Result<(), BoundsError> {
    let mut lexer = Lexer::default();
    for (n, line) in yaml.as_bytes().split(|&b| b == b'\n').enumerate() {
        if let Err(over) = lexer.line(line) {
            let line = first_line + n;
            return Err(match over {
                Over::Depth => BoundsError::Depth { line },
                Over::Aliases => BoundsError::Aliases { line },
            });
        }
    }
    Ok(())
}

/// Which limit a line went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Over {
    Depth,
    Aliases,
}

/// A block collection: a sequence (`- `) or a mapping (`key:`, `? `).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Seq,
    Map,
}

/// The lexer's state between lines.
#[derive(Debug, Default)]
struct Lexer {
    /// The open block collections: (column, kind), innermost last.
    block: Vec<(usize, Kind)>,
    /// The levels each open flow collection may add, innermost last: two for a sequence (`[a: b]`
    /// holds a one-pair mapping), one for a mapping.
    flow: Vec<u8>,
    /// Their sum.
    flow_levels: usize,
    aliases: usize,
    /// The quote of a quoted scalar still open at the end of the last line.
    in_quote: Option<u8>,
    /// The indentation a line must exceed to be text of a block scalar still being skipped.
    block_scalar: Option<usize>,
    /// The column of the open outermost flow collection, when it began where a key may (and
    /// a `:` after it would make it one).
    flow_key: Option<usize>,
    /// The indentation of the line being read.
    indent: usize,
    /// The deepest nesting seen so far.
    deepest: usize,
    /// The last significant byte in flow context (an alias starts a node: after `[`, `{`, `,`
    /// or `:`).
    prev: u8,
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

/// Index after the closing `q` of a quoted scalar whose text starts at `from`; `None` when it
/// does not close on this line.
fn skip_quote(l: &[u8], from: usize, q: u8) -> Option<usize> {
    let mut j = from;
    while j < l.len() {
        match l[j] {
            b'\\' if q == b'"' => j += 2,
            b'\'' if q == b'\'' && l.get(j + 1) == Some(&b'\'') => j += 2,
            b if b == q => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// Index after a `:` that ends an implicit key, searched from `from` (before any comment).
fn key_colon(l: &[u8], from: usize) -> Option<usize> {
    let mut j = from;
    while j < l.len() {
        match l[j] {
            b':' if l.get(j + 1).is_none_or(|&b| is_blank(b)) => return Some(j + 1),
            b'#' if j > 0 && is_blank(l[j - 1]) => return None,
            _ => j += 1,
        }
    }
    None
}

impl Lexer {
    fn depth_ok(&mut self) -> Result<(), Over> {
        // A flow collection that may turn out to be a key stands inside its mapping's level.
        let depth = self.block.len() + self.flow_levels + usize::from(self.flow_key.is_some());
        self.deepest = self.deepest.max(depth);
        if depth > MAX_FRONTMATTER_DEPTH {
            return Err(Over::Depth);
        }
        Ok(())
    }

    /// A flow collection opened by `b` (`[` or `{`).
    fn open_flow(&mut self, b: u8) -> Result<(), Over> {
        let levels = if b == b'[' { 2 } else { 1 };
        self.flow.push(levels);
        self.flow_levels += usize::from(levels);
        self.depth_ok()
    }

    fn alias(&mut self) -> Result<(), Over> {
        self.aliases += 1;
        if self.aliases > MAX_FRONTMATTER_ALIASES {
            return Err(Over::Aliases);
        }
        Ok(())
    }

    /// An entry of a block collection of `kind` at column `col`: closes the deeper ones, opens
    /// one when none of that kind is open at that column.
    fn enter(&mut self, col: usize, kind: Kind) -> Result<(), Over> {
        while let Some(&(c, k)) = self.block.last() {
            // A mapping entry at the column of an indentless sequence ends that sequence.
            if c > col || (c == col && k == Kind::Seq && kind == Kind::Map) {
                self.block.pop();
            } else {
                break;
            }
        }
        if self.block.last() != Some(&(col, kind)) {
            self.block.push((col, kind));
        }
        self.depth_ok()
    }

    fn line(&mut self, l: &[u8]) -> Result<(), Over> {
        let indent = l.iter().take_while(|&&b| b == b' ').count();
        if let Some(parent) = self.block_scalar {
            if l[indent..].iter().all(|&b| is_blank(b)) || indent > parent {
                return Ok(());
            }
            self.block_scalar = None;
        }
        let mut i = 0;
        if let Some(q) = self.in_quote {
            match skip_quote(l, 0, q) {
                None => return Ok(()),
                Some(end) => {
                    self.in_quote = None;
                    if self.flow.is_empty() {
                        // Whatever follows a quoted scalar of several lines is no new node.
                        return Ok(());
                    }
                    self.prev = b'"';
                    i = end;
                }
            }
        } else if self.flow.is_empty() {
            self.indent = indent;
            return self.block_node(l, indent);
        }
        self.flow_scan(l, i)
    }

    /// A node that may start at `c` in block context (the line's indentation is `self.indent`).
    fn block_node(&mut self, l: &[u8], mut c: usize) -> Result<(), Over> {
        // Where the node's properties (`&anchor`, `!tag`) began: a key's column is theirs.
        let mut props: Option<usize> = None;
        // Whether this node is a value after `key:` (it cannot be a key on this line).
        let mut value = false;
        loop {
            while c < l.len() && is_blank(l[c]) {
                c += 1;
            }
            let Some(&b) = l.get(c) else {
                return Ok(());
            };
            let indicator = l.get(c + 1).is_none_or(|&n| is_blank(n));
            let col = props.unwrap_or(c);
            match b {
                b'#' => return Ok(()),
                b'-' | b'?' if indicator => {
                    self.enter(col, if b == b'-' { Kind::Seq } else { Kind::Map })?;
                    props = None;
                    value = false;
                    c += 1;
                }
                b'[' | b'{' => {
                    self.flow_key = (!value).then_some(col);
                    self.open_flow(b)?;
                    self.prev = b;
                    return self.flow_scan(l, c + 1);
                }
                b'*' => return self.alias(),
                b'&' | b'!' => {
                    props.get_or_insert(c);
                    while c < l.len() && !is_blank(l[c]) {
                        c += 1;
                    }
                }
                b'|' | b'>' => {
                    // Its text is the lines indented past the innermost open collection (`- - |`
                    // ends at a line indented like the inner list); never fewer lines are
                    // looked at than the parser reads as text.
                    let parent = self.block.last().map_or(0, |&(c, _)| c);
                    self.block_scalar = Some(parent.max(self.indent));
                    return Ok(());
                }
                b'\'' | b'"' => match skip_quote(l, c + 1, b) {
                    None => {
                        self.in_quote = Some(b);
                        return Ok(());
                    }
                    Some(end) => {
                        let after = end + l[end..].iter().take_while(|&&x| is_blank(x)).count();
                        match key_colon(l, after).filter(|&k| k == after + 1) {
                            Some(k) => {
                                self.enter(col, Kind::Map)?;
                                props = None;
                                value = true;
                                c = k;
                            }
                            None => return Ok(()),
                        }
                    }
                },
                _ => match key_colon(l, c) {
                    Some(k) => {
                        self.enter(col, Kind::Map)?;
                        props = None;
                        value = true;
                        c = k;
                    }
                    None => return Ok(()),
                },
            }
        }
    }

    /// The rest of a line from `i` in flow context.
    fn flow_scan(&mut self, l: &[u8], mut i: usize) -> Result<(), Over> {
        while i < l.len() {
            let b = l[i];
            match b {
                b'[' | b'{' => {
                    self.open_flow(b)?;
                    self.prev = b;
                }
                b']' | b'}' => {
                    let levels = self.flow.pop().map_or(0, usize::from);
                    self.flow_levels -= levels;
                    self.prev = b;
                    if self.flow.is_empty() {
                        // A `:` after it makes the collection a key, and the line goes on with
                        // its value; anything else (a comment) opens nothing.
                        let key_col = self.flow_key.take();
                        let after = i + 1 + l[i + 1..].iter().take_while(|&&x| is_blank(x)).count();
                        return match (key_col, key_colon(l, after)) {
                            (Some(col), Some(k)) if k == after + 1 => {
                                self.enter(col, Kind::Map)?;
                                self.block_node(l, k)
                            }
                            _ => Ok(()),
                        };
                    }
                }
                // A quote starts a quoted scalar only where a node starts (`[it's]` is plain).
                b'\'' | b'"' if matches!(self.prev, b'[' | b'{' | b',' | b':') => {
                    match skip_quote(l, i + 1, b) {
                        None => {
                            self.in_quote = Some(b);
                            return Ok(());
                        }
                        Some(end) => {
                            self.prev = b;
                            i = end;
                            continue;
                        }
                    }
                }
                b'#' if i == 0 || is_blank(l[i - 1]) => return Ok(()),
                b'*' if matches!(self.prev, b'[' | b'{' | b',' | b':') => {
                    self.alias()?;
                    self.prev = b;
                }
                _ if is_blank(b) => {}
                _ => self.prev = b,
            }
            i += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(yaml: &str) -> Result<(), BoundsError> {
        check_frontmatter_bounds(yaml, 2)
    }

    /// The YAML parser's own depth of `yaml`: every frontmatter the lexer passes must parse no
    /// deeper than the limit, so this is what the lexer is compared with.
    fn parser_depth(v: &serde_yaml_ng::Value) -> usize {
        use serde_yaml_ng::Value;
        match v {
            Value::Sequence(s) => 1 + s.iter().map(parser_depth).max().unwrap_or(0),
            Value::Mapping(m) => {
                1 + m
                    .iter()
                    .map(|(k, v)| parser_depth(k).max(parser_depth(v)))
                    .max()
                    .unwrap_or(0)
            }
            Value::Tagged(t) => parser_depth(&t.value),
            _ => 0,
        }
    }

    #[test]
    fn ordinary_frontmatter_passes() {
        for yaml in [
            "name: A\ntags: [a, b]\nrelated:\n  - x\n  - y\n",
            "name: 'it''s: [not a list'\ndescription: \"a [b] {c} *d* # e\"\n",
            "a:\n- x\n- y\nb: 1\n",
            "text: |\n  - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\nafter: 1\n",
            "anchors: &a [x]\nuse: *a\n",
            "star: a *b* c, *d\nurl: http://x.y/z#frag\n",
            "multi: \"first\n  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n  last\"\n",
        ] {
            assert_eq!(check(yaml), Ok(()), "{yaml:?}");
        }
    }

    #[test]
    fn deep_flow_nesting_is_refused_naming_the_limit() {
        // A flow list may add two levels (it can hold `a: b` pairs), a flow mapping one; a flow
        // collection that may be a key one more.
        let deep = |n: usize| format!("a: {}x{}\n", "[".repeat(n), "]".repeat(n));
        let key = |n: usize| format!("{}x{}: v\n", "[".repeat(n), "]".repeat(n));
        let most = (MAX_FRONTMATTER_DEPTH - 1) / 2;
        assert_eq!(check(&key(most)), Ok(()));
        assert!(check(&key(most + 1)).is_err());
        assert_eq!(check(&deep(most)), Ok(()));
        let e = check(&deep(most + 1)).expect_err("one level over");
        assert_eq!(e, BoundsError::Depth { line: 2 });
        let e = e.to_string();
        assert!(e.contains("deeper than 32 levels (line 2)"), "{e}");
        let pairs = format!("a: {}x{}\n", "[k: ".repeat(most + 1), "]".repeat(most + 1));
        assert!(check(&pairs).is_err(), "pairs in flow lists");
        assert!(e.contains("indexed from its body only"), "{e}");
        let maps = format!("a: {}x{}\n", "{k: ".repeat(40), "}".repeat(40));
        assert!(check(&maps).is_err());
        // A quote inside a plain scalar opens no quoted scalar that could hide what follows.
        let hidden = format!("a: [it's, {}x{}]\n", "[".repeat(40), "]".repeat(40));
        assert!(check(&hidden).is_err());
    }

    #[test]
    fn deep_block_nesting_is_refused() {
        let mut indented = String::new();
        for i in 0..40 {
            indented.push_str(&format!("{}k{i}:\n", " ".repeat(i)));
        }
        let e = check(&indented).expect_err("40 levels of indentation");
        assert_eq!(e, BoundsError::Depth { line: 34 });
        assert!(e.to_string().contains("(line 34)"), "{e}");
        let compact = format!("a:\n  {}x\n", "- ".repeat(40));
        assert!(check(&compact).is_err());
        let mixed = (0..20)
            .map(|i| format!("{}- k{i}:\n", "  ".repeat(i)))
            .collect::<String>();
        assert!(check(&mixed).is_err(), "a sequence and a mapping per step");
    }

    #[test]
    fn many_aliases_are_refused_naming_the_limit() {
        let mut laughs = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 9].join(", ");
            laughs.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let e = check(&laughs).expect_err("billion laughs");
        assert!(matches!(e, BoundsError::Aliases { .. }), "{e}");
        assert!(e.to_string().contains("more than 4 YAML aliases"), "{e}");
        let block = (0..=MAX_FRONTMATTER_ALIASES)
            .map(|i| format!("k{i}: *a\n"))
            .collect::<String>();
        assert!(check(&block).is_err());
        let few = (0..MAX_FRONTMATTER_ALIASES)
            .map(|i| format!("k{i}: *a\n"))
            .collect::<String>();
        assert_eq!(check(&few), Ok(()));
    }

    #[test]
    fn frontmatter_over_the_size_limit_is_refused_naming_it() {
        let big = format!("description: {}\n", "x".repeat(MAX_FRONTMATTER_BYTES));
        let e = check(&big).expect_err("too big");
        assert!(matches!(e, BoundsError::Size { .. }), "{e}");
        assert!(e.to_string().contains("over the limit of 64 KiB"), "{e}");
    }

    /// Pieces that nest, quote, comment and alias, for the comparison with the parser.
    const PIECES: &[&str] = &[
        "[", "]", "{", "}", "- ", "? ", ": ", ":", ", ", "\n", "\n  ", "\n    ", "  ", "a", "k: ",
        "'", "\"", "#", " #", "|", ">", "*a", "&a ", "!t ", "\\", "''", "x y", "it's", "'q'",
    ];

    /// The deepest nesting the lexer sees in `yaml` (stopping at a limit).
    fn lexer_depth(yaml: &str) -> usize {
        let mut lexer = Lexer::default();
        for line in yaml.as_bytes().split(|&b| b == b'\n') {
            if lexer.line(line).is_err() {
                break;
            }
        }
        lexer.deepest
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

        /// The lexer never sees less nesting than the parser reads (aliases aside: an alias is
        /// its anchor's copy, deeper than where it is written, and bounded by their count).
        #[test]
        fn the_lexer_sees_at_least_the_parsers_depth(
            picks in proptest::collection::vec(0..PIECES.len(), 0..120),
            nest in 0usize..40,
        ) {
            let mut yaml: String = "[".repeat(nest);
            yaml.extend(picks.iter().map(|&i| PIECES[i]));
            if !yaml.contains('*')
                && let Ok(v) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&yaml)
            {
                let parsed = parser_depth(&v);
                proptest::prop_assert!(lexer_depth(&yaml) >= parsed.min(MAX_FRONTMATTER_DEPTH + 1), "{:?}: {}", yaml, parsed);
                if check(&yaml).is_ok() {
                    proptest::prop_assert!(parsed <= MAX_FRONTMATTER_DEPTH, "{:?}", yaml);
                }
            }
        }

        /// Block-shaped text (lines of indentation, `- `, `? `, keys and flow pieces), where the
        /// parser succeeds more often than on free pieces.
        #[test]
        fn the_lexer_sees_at_least_the_parsers_depth_on_block_lines(
            lines in proptest::collection::vec((0usize..12, 0..LINE_STARTS.len(), 0..PIECES.len(), 0..PIECES.len()), 1..16)
        ) {
            let yaml: String = lines
                .iter()
                .map(|&(indent, start, a, b)| {
                    format!("{}{}{}{}\n", " ".repeat(indent), LINE_STARTS[start], PIECES[a], PIECES[b])
                })
                .collect();
            if !yaml.contains('*')
                && let Ok(v) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&yaml)
            {
                let parsed = parser_depth(&v);
                proptest::prop_assert!(lexer_depth(&yaml) >= parsed, "{:?}: {}", yaml, parsed);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

        /// Lines stepping in and out a level at a time, mostly well-formed, so that the parser
        /// reads deep block nesting often.
        #[test]
        fn the_lexer_sees_at_least_the_parsers_depth_on_stepped_lines(
            lines in proptest::collection::vec((0usize..3, 0..LINE_STARTS.len(), 0..VALUES.len()), 1..24)
        ) {
            let mut level = 0usize;
            let mut yaml = String::new();
            for (step, start, value) in lines {
                level = match step {
                    0 => level.saturating_sub(1),
                    1 => level,
                    _ => level + 1,
                };
                yaml.push_str(&" ".repeat(2 * level));
                yaml.push_str(LINE_STARTS[start]);
                yaml.push_str(VALUES[value]);
                yaml.push('\n');
            }
            if let Ok(v) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&yaml) {
                let parsed = parser_depth(&v);
                proptest::prop_assert!(lexer_depth(&yaml) >= parsed, "{:?}: {}", yaml, parsed);
            }
        }
    }

    /// Values for stepped lines.
    const VALUES: &[&str] = &[
        "",
        "a",
        "k:",
        "k: v",
        "[a]",
        "{k: v}",
        "[[a], {k: [b]}]",
        "'q'",
        "&a",
        "|",
    ];

    /// How generated block lines start.
    const LINE_STARTS: &[&str] = &[
        "- ", "k: ", "- k: ", "? ", ": ", "- - ", "k:", "- [", "'q': ", "k: &a ", "",
    ];
}
