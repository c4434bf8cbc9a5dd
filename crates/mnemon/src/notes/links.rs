//! Body links: `[[id]]`, `[[id|label]]`, `[[id#heading]]`, and the supersede phrases before them.
//!
//! Links inside fenced code blocks (```` ``` ```` or `~~~`) or inline code spans (`` `[[a]]` ``,
//! on one line) are not links: they show the syntax, as Markdown renders them. A link must close
//! on the same line and its inside is at most [`MAX_LINK_BYTES`] long.

/// Longest text between `[[` and `]]` read as a link.
pub const MAX_LINK_BYTES: usize = 600;
/// How far before a link (bytes, same line) a supersede phrase is looked for.
const PHRASE_WINDOW_BYTES: usize = 48;
/// Words that, right before a link, mean "this note supersedes the linked one". Matched
/// case-insensitively at the end of the text before the link (after trimming spaces and `:`).
const SUPERSEDE_PHRASES: [&str; 10] = [
    "supersedes",
    "supersede",
    "replaces",
    "deprecates",
    "取代",
    "取代了",
    "废弃",
    "废弃了",
    "替代",
    "替代了",
];

/// One body link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The id part (before `|` or `#`), trimmed.
    pub target: String,
    /// A supersede phrase stands right before the link.
    pub supersede_phrase: bool,
}

/// All links of `body`, in order (duplicates kept).
pub fn extract_links(body: &str) -> Vec<Link> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in lines(body) {
        let t = line.trim_start();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if t.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if t.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        links_in_line(line, &mut out);
    }
    out
}

/// `text.lines()`, each line end found with `memchr` (vectorised; `lines` searches a byte at a
/// time, word by word, and most lines are short).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let line = match ends.next() {
            Some(nl) => {
                let line = &text[start..nl];
                start = nl + 1;
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => {
                let line = &text[start..];
                start = text.len();
                line
            }
        };
        Some(line)
    })
}

fn links_in_line(line: &str, out: &mut Vec<Link>) {
    // Most lines hold no `[` at all: one memchr instead of a substring search.
    if memchr::memchr(b'[', line.as_bytes()).is_none() {
        return;
    }
    let spans = code_spans(line);
    let mut pos = 0;
    while let Some(open) = line[pos..].find("[[") {
        let start = pos + open + 2;
        if let Some(span) = spans.iter().find(|r| r.contains(&(start - 2))) {
            pos = span.end;
            continue;
        }
        let Some(close) = line[start..].find("]]") else {
            return;
        };
        let inner = &line[start..start + close];
        pos = start + close + 2;
        if inner.len() > MAX_LINK_BYTES || inner.contains("[[") {
            continue;
        }
        let id_part = inner.split(['|', '#']).next().unwrap_or("").trim();
        if id_part.is_empty() {
            continue;
        }
        let id_part = id_part.strip_suffix(".md").unwrap_or(id_part);
        out.push(Link {
            target: id_part.to_string(),
            supersede_phrase: has_supersede_phrase(&line[..start - 2]),
        });
    }
}

/// The byte ranges of `line`'s inline code spans, backticks included: a run of backticks opens
/// one, the next run of as many closes it (CommonMark's rule, within the line); a run never
/// closed is literal backticks.
fn code_spans(line: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = line.as_bytes();
    let mut spans = Vec::new();
    let run_at = |i: usize| bytes[i..].iter().take_while(|&&b| b == b'`').count();
    let mut i = match memchr::memchr(b'`', bytes) {
        Some(i) => i,
        None => return spans,
    };
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let mut closed = None;
        while let Some(k) = memchr::memchr(b'`', &bytes[j..]).map(|k| j + k) {
            let m = run_at(k);
            if m == n {
                closed = Some(k + m);
                break;
            }
            j = k + m;
        }
        match closed {
            Some(end) => {
                spans.push(i..end);
                i = end;
            }
            None => i += n,
        }
    }
    spans
}

fn has_supersede_phrase(before: &str) -> bool {
    let mut cut = before.len().saturating_sub(PHRASE_WINDOW_BYTES);
    while !before.is_char_boundary(cut) {
        cut += 1;
    }
    let window = before[cut..]
        .trim_end_matches(|c: char| c.is_whitespace() || c == ':' || c == '：')
        .to_lowercase();
    SUPERSEDE_PHRASES.iter().any(|p| {
        window.ends_with(p)
            && window[..window.len() - p.len()]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_split_as_str_lines_does() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "\n\n",
            "x\r",
            "x\ry\n\r\n",
            "池\n[[a]]\r\n",
        ] {
            assert_eq!(
                super::lines(text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    use super::*;

    fn targets(body: &str) -> Vec<(String, bool)> {
        extract_links(body)
            .into_iter()
            .map(|l| (l.target, l.supersede_phrase))
            .collect()
    }

    #[test]
    fn every_wiki_link_form_gives_its_target_and_empty_or_unclosed_ones_none() {
        assert_eq!(
            targets("[[a]] [[b|label]] [[c#h]] [[ d ]] [[e.md]] [[]] [[unclosed"),
            vec![
                ("a".into(), false),
                ("b".into(), false),
                ("c".into(), false),
                ("d".into(), false),
                ("e".into(), false)
            ]
        );
    }

    #[test]
    fn phrases_mark_supersession() {
        assert_eq!(
            targets(
                "Supersedes [[a]]; deprecates: [[b]]; was replaced by [[c]]; misreplaces [[d]]; 废弃 [[e]]"
            ),
            vec![
                ("a".into(), true),
                ("b".into(), true),
                ("c".into(), false),
                ("d".into(), false),
                ("e".into(), true)
            ]
        );
    }

    /// Regression: a link shown in an inline code span (`` `[[a]]` ``, the syntax explained) was
    /// an edge, and `doctor` called it dangling, while one in a fenced block was not.
    #[test]
    fn inline_code_spans_hide_links() {
        assert_eq!(
            targets("Write `[[id]]` or ``[[a|b]] `x` `` to link, as in [[real]]; `unclosed [[c]]"),
            vec![("real".into(), false), ("c".into(), false)]
        );
        assert_eq!(code_spans("a `b` c ``d`e`` f ```g"), vec![2..5, 8..15]);
        assert_eq!(targets("``[[a]]`"), vec![("a".into(), false)]);
    }

    #[test]
    fn code_fences_hide_links() {
        assert_eq!(
            targets("[[a]]\n```\n[[b]]\n```\n~~~\n[[c]]\n~~~\n[[d]]"),
            vec![("a".into(), false), ("d".into(), false)]
        );
    }
}
