//! What agents said they used, by the words of the questions they asked: the vocabulary bridge
//! that feedback builds.
//!
//! A Feedback event ties a question to the notes used (or found wrong) for it. Folded, that is a
//! table (question, note) -> verdicts; here it is turned around into query term -> notes, so a
//! later question that shares informative terms with earlier ones finds the notes used for them,
//! even when those notes do not contain the words (a paraphrase the memory has learned). The
//! table is rebuilt only when the feedback changed (rare: a recall alone never changes it).

use crate::events::fold::Verdicts;
use crate::events::log::StatsView;
use crate::index::tokenize::Tokenizer;
use rustc_hash::FxHashMap;

/// Notes kept per term at most (the ones whose standing says the most, used or found wrong): a
/// limit on every recall's lookups however much feedback a memory collects.
pub const MAX_NOTES_PER_TERM: usize = 32;

/// One note's standing for one term: the verdicts summed over every question holding the term.
#[derive(Debug, Clone, PartialEq)]
pub struct TermNote {
    pub node: String,
    pub used: u32,
    pub wrong: u32,
}

impl TermNote {
    /// How strongly past questions with this term point at the note, in [-1, 1]. A wrong verdict
    /// weighs two uses; each net use halves the distance to 1 (one use 0.5, two 0.75, ...); a net
    /// wrong points away, a quarter per net use short (one wrong: -0.5, -1 from two on).
    pub fn affinity(&self) -> f32 {
        let net = i64::from(self.used) - 2 * i64::from(self.wrong);
        if net > 0 {
            1.0 - 0.5f32.powi(net.min(30) as i32)
        } else if self.wrong > 0 {
            (net as f32 / 4.0).clamp(-1.0, -0.25)
        } else {
            0.0
        }
    }
}

/// Query term -> notes used (or found wrong) for questions holding it.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// The feedback version this table was built from (`None`: never built).
    version: Option<u64>,
    by_term: FxHashMap<String, Vec<TermNote>>,
}

impl Learned {
    /// Whether the table shows `view`'s feedback.
    pub fn is_current(&self, view: &StatsView<'_>) -> bool {
        self.version == Some(view.feedback_version())
    }

    /// Rebuild from `view`'s feedback when it changed; question texts are cut into query terms
    /// by `tok`, the way a recall cuts its question.
    pub fn refresh(&mut self, view: &StatsView<'_>, tok: &Tokenizer) {
        if self.is_current(view) {
            return;
        }
        let mut by_question: FxHashMap<String, FxHashMap<String, Verdicts>> = FxHashMap::default();
        view.for_each_feedback(|question, node, v| {
            let e = by_question
                .entry(question.to_string())
                .or_default()
                .entry(node.to_string())
                .or_default();
            e.used = e.used.saturating_add(v.used);
            e.wrong = e.wrong.saturating_add(v.wrong);
        });
        let mut sums: FxHashMap<String, FxHashMap<String, Verdicts>> = FxHashMap::default();
        for (question, notes) in &by_question {
            for term in tok.query_terms(question).terms {
                let per_note = sums.entry(term.term).or_default();
                for (node, v) in notes {
                    let e = per_note.entry(node.clone()).or_default();
                    e.used = e.used.saturating_add(v.used);
                    e.wrong = e.wrong.saturating_add(v.wrong);
                }
            }
        }
        self.by_term = sums
            .into_iter()
            .map(|(term, notes)| {
                let mut v: Vec<TermNote> = notes
                    .into_iter()
                    .map(|(node, v)| TermNote {
                        node,
                        used: v.used,
                        wrong: v.wrong,
                    })
                    .collect();
                // By how much each note's standing moves a recall, either way: a note found
                // wrong for these words must not be forgotten because others were used more.
                // Past 25 net uses (or two wrongs) the affinity is whole: then the note with more
                // verdicts.
                v.sort_by(|a, b| {
                    let verdicts = |t: &TermNote| u64::from(t.used) + u64::from(t.wrong);
                    b.affinity()
                        .abs()
                        .total_cmp(&a.affinity().abs())
                        .then_with(|| verdicts(b).cmp(&verdicts(a)))
                        .then_with(|| a.node.cmp(&b.node))
                });
                v.truncate(MAX_NOTES_PER_TERM);
                (term, v)
            })
            .collect();
        self.version = Some(view.feedback_version());
    }

    /// The notes past questions holding `term` were given verdicts for.
    pub fn notes_of(&self, term: &str) -> &[TermNote] {
        self.by_term.get(term).map_or(&[], Vec::as_slice)
    }

    /// Whether any feedback names its question.
    pub fn is_empty(&self) -> bool {
        self.by_term.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_grows_with_use_and_turns_negative_when_wrong() {
        let t = |used, wrong| {
            TermNote {
                node: "a".into(),
                used,
                wrong,
            }
            .affinity()
        };
        assert_eq!(t(0, 0), 0.0);
        assert_eq!(t(1, 0), 0.5);
        assert_eq!(t(2, 0), 0.75);
        assert!(t(40, 0) <= 1.0 && t(40, 0) > 0.999);
        assert_eq!(t(0, 1), -0.5);
        assert_eq!(t(1, 1), -0.25);
        assert_eq!(t(0, 2), -1.0);
        assert_eq!(t(0, 3), -1.0);
        assert_eq!(t(3, 1), 0.5);
    }
}
