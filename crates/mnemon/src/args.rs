//! What may a caller ask for? The allowed values of every argument of the [`Memory`] facade and
//! the one check of each. The facade runs these checks; the CLI and the MCP server run the same
//! ones on what they parse (before opening anything), so all three accept the same values and
//! refuse the others with the same error: [`Error::OutOfRange`] naming the argument, the value
//! and what to give instead, or [`Error::InvalidArgument`] for a combination that makes no sense.
//!
//! [`Memory`]: crate::Memory

use crate::error::{Error, Result};
use crate::recall::Query;

pub use crate::core_view::{DEFAULT_BUDGET_TOKENS, MAX_BUDGET_TOKENS};
pub use crate::memory::{MAX_FEEDBACK_IDS, MAX_NAME_BYTES};
pub use crate::notes::{MAX_ID_BYTES, MAX_LIST_ENTRIES, MAX_NOTE_BYTES};
pub use crate::ranking::{DEFAULT_DEPTH, DEFAULT_MIN_SCORE, MAX_DEPTH};

/// [`DEFAULT_MIN_SCORE`] as a command line's default is written (the `f32` widened to `f64`
/// would print as `0.05000000074505806`).
pub const DEFAULT_MIN_SCORE_TEXT: &str = "0.05";
pub use crate::recall::{DEFAULT_LIMIT, MAX_ANCHORS, MAX_LIMIT, MAX_QUERY_BYTES};

/// Shallowest walk: 0 returns the direct hits only.
pub const MIN_DEPTH: u8 = 0;
/// Fewest results one recall may ask for.
pub const MIN_LIMIT: usize = 1;
/// Lowest importance a note can be marked with ("a little").
pub const MIN_IMPORTANCE: u8 = 1;
/// Highest importance ("always relevant").
pub const MAX_IMPORTANCE: u8 = 10;
/// Smallest core-view budget, in tokens.
pub const MIN_BUDGET_TOKENS: usize = 1;

/// The integers an argument may take, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The argument's name in errors (as the facade and the MCP tools call it).
    pub what: &'static str,
    /// The smallest value allowed.
    pub min: i64,
    /// The largest value allowed.
    pub max: i64,
}

/// `Query::depth`, `recall --depth`, `memory_recall.depth`: hops over links from the direct hits.
pub const DEPTH: Range = Range {
    what: "depth",
    min: MIN_DEPTH as i64,
    max: MAX_DEPTH as i64,
};
/// `Query::limit`, `recall --limit`, `memory_recall.limit`: results wanted.
pub const LIMIT: Range = Range {
    what: "limit",
    min: MIN_LIMIT as i64,
    max: MAX_LIMIT as i64,
};
/// `Memory::set_importance`, `mnemon importance`, `memory_set_importance.importance`.
pub const IMPORTANCE: Range = Range {
    what: "importance",
    min: MIN_IMPORTANCE as i64,
    max: MAX_IMPORTANCE as i64,
};
/// `Memory::core`, `core --budget`, `memory_core.budget_tokens`: tokens the core view may fill.
pub const BUDGET_TOKENS: Range = Range {
    what: "budget_tokens",
    min: MIN_BUDGET_TOKENS as i64,
    max: MAX_BUDGET_TOKENS as i64,
};

impl Range {
    /// What may be given, for an error or a help text: `an integer from 0 to 5`.
    pub fn allowed(&self) -> String {
        format!("an integer from {} to {}", self.min, self.max)
    }

    /// `value` when it is in the range, else an [`Error::OutOfRange`] naming the argument.
    pub fn check<T>(&self, value: T) -> Result<T>
    where
        T: Copy + TryInto<i64> + std::fmt::Display,
    {
        match value.try_into() {
            Ok(v) if (self.min..=self.max).contains(&v) => Ok(value),
            _ => Err(self.refuse(value)),
        }
    }

    /// An integer as a front end parsed it (any `i64`), checked and converted to the type the
    /// facade takes (`u8` for a depth, `usize` for a limit).
    pub fn parse<T: TryFrom<i64>>(&self, value: i64) -> Result<T> {
        self.check(value)
            .and_then(|v| T::try_from(v).map_err(|_| self.refuse(value)))
    }

    fn refuse(&self, value: impl std::fmt::Display) -> Error {
        Error::OutOfRange {
            what: self.what,
            value: value.to_string(),
            allowed: self.allowed(),
        }
    }
}

/// A score floor as given (`min_score`): any number the `f32` recall compares with holds.
pub fn min_score(value: f64) -> Result<f32> {
    let narrowed = value as f32;
    if narrowed.is_finite() {
        Ok(narrowed)
    } else {
        Err(Error::OutOfRange {
            what: "min_score",
            // Debug: `1e300`, not three hundred digits.
            value: format!("{value:?}"),
            allowed: "a number from -3.4e38 to 3.4e38".into(),
        })
    }
}

/// Check a whole query: text or anchors (or both), and every range. Text longer than
/// [`MAX_QUERY_BYTES`] is not an error: recall reads the whole words that fit
/// ([`crate::recall::readable_part`]) and says so in its floor report.
pub fn query(q: &Query) -> Result<()> {
    if q.text.trim().is_empty() && q.anchors.is_empty() {
        return Err(Error::InvalidArgument {
            what: "query",
            message: "give query text, at least one anchor id, or both".into(),
        });
    }
    DEPTH.check(q.depth)?;
    LIMIT.check(q.limit)?;
    min_score(f64::from(q.min_score))?;
    if q.anchors.len() > MAX_ANCHORS {
        return Err(Error::OutOfRange {
            what: "anchor count",
            value: q.anchors.len().to_string(),
            allowed: format!("at most {MAX_ANCHORS} anchors"),
        });
    }
    Ok(())
}

/// Check the ids of one feedback call: at least one, at most [`MAX_FEEDBACK_IDS`] in `used` and
/// `wrong` together, none in both.
pub fn feedback(used: &[String], wrong: &[String]) -> Result<()> {
    if used.is_empty() && wrong.is_empty() {
        return Err(Error::InvalidArgument {
            what: "feedback",
            message: "name at least one note in `used` or `wrong`".into(),
        });
    }
    let named = used.len() + wrong.len();
    if named > MAX_FEEDBACK_IDS {
        return Err(Error::OutOfRange {
            what: "feedback id count",
            value: named.to_string(),
            allowed: format!("at most {MAX_FEEDBACK_IDS} ids per call, used and wrong together"),
        });
    }
    if let Some(both) = used.iter().find(|u| wrong.contains(u)) {
        return Err(Error::InvalidArgument {
            what: "feedback",
            message: format!(
                "{} is named as both used and wrong; keep one",
                crate::notes::ShownId(both)
            ),
        });
    }
    Ok(())
}

/// Most tags an importance tag holds (what the event log keeps of a list).
pub const MAX_IMPORTANCE_TAGS: usize = crate::events::event::MAX_EVENT_LIST;
/// Longest tag, and longest note, of an importance tag (what the event log keeps of a text).
pub const MAX_IMPORTANCE_TEXT_BYTES: usize = crate::events::event::MAX_EVENT_STRING_BYTES;

/// Most bytes of an importance tag's tags and note together: its event must fit one frame of
/// the log (`events::segment::MAX_FRAME_PAYLOAD`, format-spec/events.md, with room for the id and
/// lengths).
pub const MAX_IMPORTANCE_TOTAL_BYTES: usize = 32 * 1024;
const _: () = assert!(
    MAX_IMPORTANCE_TOTAL_BYTES + 2 * crate::events::event::MAX_EVENT_STRING_BYTES
        < crate::events::segment::MAX_FRAME_PAYLOAD as usize
);

/// An importance tag's `tags` and `note` as the event log keeps them whole: at most
/// [`MAX_IMPORTANCE_TAGS`] tags, each and the note at most [`MAX_IMPORTANCE_TEXT_BYTES`] bytes,
/// all of them at most [`MAX_IMPORTANCE_TOTAL_BYTES`] (longer would be cut or not recorded).
pub fn importance_tags(tags: &[String], note: &str) -> Result<()> {
    let total = tags.iter().map(String::len).sum::<usize>() + note.len();
    if total > MAX_IMPORTANCE_TOTAL_BYTES {
        return Err(Error::OutOfRange {
            what: "importance tags and note length",
            value: format!("{total} bytes"),
            allowed: format!("at most {MAX_IMPORTANCE_TOTAL_BYTES} bytes together"),
        });
    }
    if tags.len() > MAX_IMPORTANCE_TAGS {
        return Err(Error::OutOfRange {
            what: "importance tag count",
            value: tags.len().to_string(),
            allowed: format!("at most {MAX_IMPORTANCE_TAGS} tags"),
        });
    }
    if let Some(tag) = tags.iter().find(|t| t.len() > MAX_IMPORTANCE_TEXT_BYTES) {
        return Err(Error::OutOfRange {
            what: "importance tag length",
            value: format!("{} bytes", tag.len()),
            allowed: format!("at most {MAX_IMPORTANCE_TEXT_BYTES} bytes per tag"),
        });
    }
    if note.len() > MAX_IMPORTANCE_TEXT_BYTES {
        return Err(Error::OutOfRange {
            what: "importance note length",
            value: format!("{} bytes", note.len()),
            allowed: format!("at most {MAX_IMPORTANCE_TEXT_BYTES} bytes"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: 3,000 tags and a 100 KB note were accepted and cut to 256 tags and 8,192
    /// bytes when recorded, without a word; every other list or text over its bound is refused.
    #[test]
    fn importance_tags_and_notes_over_what_the_log_keeps_are_refused() {
        use crate::events::event::{MAX_EVENT_LIST, MAX_EVENT_STRING_BYTES};
        let tags = vec!["t".to_string(); MAX_EVENT_LIST];
        assert!(importance_tags(&tags, &"n".repeat(MAX_EVENT_STRING_BYTES)).is_ok());
        // Each within its bound, too many bytes together for one event of the log.
        let big = vec!["t".repeat(MAX_EVENT_STRING_BYTES); 5];
        let e = importance_tags(&big, "").unwrap_err().to_string();
        assert!(e.contains("together"), "{e}");
        let more = vec!["t".to_string(); MAX_EVENT_LIST + 1];
        let e = importance_tags(&more, "").unwrap_err().to_string();
        assert!(e.contains("257") && e.contains("at most 256 tags"), "{e}");
        let long = vec!["t".repeat(MAX_EVENT_STRING_BYTES + 1)];
        assert!(importance_tags(&long, "").is_err());
        let e = importance_tags(&[], &"n".repeat(MAX_EVENT_STRING_BYTES + 1))
            .unwrap_err()
            .to_string();
        assert!(e.contains("8193 bytes"), "{e}");
    }

    #[test]
    fn an_out_of_range_value_names_the_argument_the_value_and_the_range() {
        assert_eq!(DEPTH.parse::<u8>(5).unwrap(), 5);
        let e = DEPTH.parse::<u8>(9).unwrap_err().to_string();
        assert_eq!(e, "depth 9 is out of range: use an integer from 0 to 5");
        let e = DEPTH.parse::<u8>(-1).unwrap_err().to_string();
        assert_eq!(e, "depth -1 is out of range: use an integer from 0 to 5");
        assert!(LIMIT.check(0usize).is_err() && LIMIT.check(MAX_LIMIT).is_ok());
        assert!(LIMIT.check(usize::MAX).is_err(), "no wrap through i64");
        assert!(IMPORTANCE.check(0u8).is_err() && IMPORTANCE.check(10u8).is_ok());
        let e = IMPORTANCE.parse::<u8>(300).unwrap_err().to_string();
        assert!(e.contains("an integer from 1 to 10"), "{e}");
        assert!(BUDGET_TOKENS.parse::<usize>(0).is_err());
        assert_eq!(min_score(0.25).unwrap(), 0.25);
        assert_eq!(DEFAULT_MIN_SCORE_TEXT.parse::<f32>(), Ok(DEFAULT_MIN_SCORE));
        for bad in [f64::NAN, f64::INFINITY, 1e300, 1e308, -3.5e38] {
            let e = min_score(bad).unwrap_err().to_string();
            assert!(
                e.contains("min_score") && e.contains("a number from -3.4e38 to 3.4e38"),
                "{e}"
            );
            assert!(e.len() < 80, "{e}");
        }
        assert_eq!(
            min_score(1e308).unwrap_err().to_string(),
            "min_score 1e308 is out of range: use a number from -3.4e38 to 3.4e38"
        );
        assert!(min_score(3.4e38).is_ok());
    }

    #[test]
    fn a_query_is_checked_whole() {
        assert!(query(&Query::text("x")).is_ok());
        let e = query(&Query::text("  ")).unwrap_err().to_string();
        assert!(e.contains("query text"), "{e}");
        let e = query(&Query::text("x").with_depth(6))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("depth 6 is out of range"), "{e}");
        let many: Vec<String> = (0..=MAX_ANCHORS).map(|i| format!("n{i}")).collect();
        let e = query(&Query::anchors(many)).unwrap_err().to_string();
        assert!(e.contains("at most 64 anchors"), "{e}");
    }

    #[test]
    fn feedback_needs_a_few_distinct_ids() {
        let ids = |n: usize| (0..n).map(|i| format!("n{i}")).collect::<Vec<_>>();
        assert!(feedback(&ids(1), &[]).is_ok());
        assert!(feedback(&[], &[]).is_err());
        assert!(feedback(&ids(MAX_FEEDBACK_IDS), &[]).is_ok());
        assert!(feedback(&ids(MAX_FEEDBACK_IDS + 1), &[]).is_err());
        let e = feedback(&ids(2), &ids(1)).unwrap_err().to_string();
        assert!(e.contains("both used and wrong"), "{e}");
    }
}
