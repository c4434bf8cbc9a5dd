//! What agents tell the memory: importance marks and feedback (events in the log), the folded
//! stats of a note, and compaction of the log.

use super::*;
use crate::error::Result;
use crate::events::{EventKind, RecallStats};
use serde::Serialize;

/// `mnemon stats ID` output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeStatsView {
    /// The note's id.
    pub id: String,
    /// Times the note was returned by a recall.
    pub recall_count: u64,
    /// Milliseconds since the Unix epoch (JSON key `last_recalled_at`).
    #[serde(rename = "last_recalled_at")]
    pub last_recalled_ms: Option<i64>,
    /// The latest importance mark, 1..=10.
    pub importance: Option<u8>,
    /// When the winning importance was tagged, milliseconds since the Unix epoch (JSON key
    /// `importance_ts`).
    #[serde(rename = "importance_ts")]
    pub importance_tagged_ms: Option<i64>,
    /// Times an agent said it used the note (feedback) or fetched it by id.
    pub used_count: u64,
    /// Of those, the uses tied to no question (fetches, feedback naming no question).
    pub untied_used: u64,
    /// Times an agent said the note was wrong for its question.
    pub wrong_count: u64,
    /// Milliseconds since the Unix epoch (JSON key `last_used_at`).
    #[serde(rename = "last_used_at")]
    pub last_used_ms: Option<i64>,
}

/// Notes one feedback call may name at most (used and wrong together).
pub const MAX_FEEDBACK_IDS: usize = 64;

/// What `feedback` recorded.
#[derive(Debug, Clone, Serialize)]
pub struct FeedbackReport {
    /// The recall it is about (empty when the question was given and is not this process's last
    /// recall).
    pub qid: String,
    /// The question the verdicts are for (empty: none known; then only the notes' use counts
    /// change).
    pub query: String,
    /// The notes recorded as used.
    pub used: Vec<String>,
    /// The notes recorded as wrong for the question.
    pub wrong: Vec<String>,
}

impl Memory {
    /// Mark a note as important (1..=10, [`crate::args::IMPORTANCE`]): its only effect is one
    /// ImportanceTag event. Use it for
    /// strong user preferences, recurring concerns, incidents that must be remembered.
    pub fn set_importance(
        &self,
        id: &str,
        importance: u8,
        tags: &[String],
        note: &str,
    ) -> Result<()> {
        crate::args::IMPORTANCE.check(importance)?;
        crate::args::importance_tags(tags, note)?;
        check_id(id)?;
        self.ensure_indexed()?;
        let Some(id) = self.store.read()?.stored_id(id)? else {
            return Err(self.not_indexed(id));
        };
        let id = id.as_str();
        // Dated after the tag it replaces, even one a clock running ahead dated in the future:
        // the tag recorded last is the one that counts.
        self.events.refresh_if_stale(std::time::Duration::ZERO)?;
        let replaced_ms = self
            .events
            .stats(id)
            .importance_tagged_ms
            .unwrap_or(i64::MIN);
        self.events.append_after(
            vec![EventKind::ImportanceTag {
                node: id.to_string(),
                importance,
                tags: tags.to_vec(),
                note: note.to_string(),
            }],
            replaced_ms,
        )
    }

    /// Say which recalled notes the agent used for a question, and optionally which were wrong:
    /// one Feedback event. `query` is the question they were recalled for; `None` means this
    /// process's last recall (its question and qid). Later questions sharing informative terms
    /// with it then find the used notes even when their words differ (see `recall::learned`),
    /// and a used note wins close calls; a note found wrong is pushed down for such questions.
    /// Nothing else changes rankings: a note returned often and never used does not climb.
    pub fn feedback(
        &self,
        used: &[String],
        wrong: &[String],
        query: Option<&str>,
    ) -> Result<FeedbackReport> {
        crate::args::feedback(used, wrong)?;
        // The question as recall reads and records it (a longer one is cut); a blank question
        // is no question, as recall has it: the feedback goes to the last one.
        let query = query
            .map(|q| self.question_read(q))
            .filter(|q| !q.trim().is_empty());
        self.ensure_indexed()?;
        let (used, wrong) = {
            let reader = self.store.read()?;
            let stored = |ids: &[String]| -> Result<Vec<String>> {
                ids.iter()
                    .map(|id| {
                        check_id(id)?;
                        reader.stored_id(id)?.ok_or_else(|| self.not_indexed(id))
                    })
                    .collect()
            };
            (stored(used)?, stored(wrong)?)
        };
        let (used, wrong) = (used.as_slice(), wrong.as_slice());
        let last = self.last_question.lock().ok().and_then(|l| l.clone());
        let (qid, query) = match (query, last) {
            (Some(q), Some((qid, last_q))) if q == last_q => (qid, q.to_string()),
            (Some(q), _) => (String::new(), q.to_string()),
            (None, Some((qid, last_q))) => (qid, last_q),
            (None, None) => (String::new(), String::new()),
        };
        let dedup = |ids: &[String]| {
            let mut v: Vec<String> = Vec::with_capacity(ids.len());
            for id in ids {
                if !v.contains(id) {
                    v.push(id.clone());
                }
            }
            v
        };
        let report = FeedbackReport {
            qid,
            query,
            used: dedup(used),
            wrong: dedup(wrong),
        };
        self.events.append(vec![EventKind::Feedback {
            qid: report.qid.clone(),
            query: report.query.clone(),
            used: report.used.clone(),
            wrong: report.wrong.clone(),
        }])?;
        Ok(report)
    }

    /// Folded stats of a note (`mnemon stats`).
    pub fn stats(&self, id: &str) -> Result<NodeStatsView> {
        check_id(id)?;
        self.ensure_indexed()?;
        let Some(id) = self.store.read()?.stored_id(id)? else {
            return Err(self.not_indexed(id));
        };
        let id = id.as_str();
        // Other sessions' events, as recall sees them.
        self.events.refresh_if_stale(STATS_REFRESH_INTERVAL)?;
        let s: RecallStats = self.events.stats(id);
        Ok(NodeStatsView {
            id: id.to_string(),
            recall_count: s.recall_count,
            last_recalled_ms: s.last_recalled_ms,
            importance: s.importance,
            importance_tagged_ms: s.importance_tagged_ms,
            used_count: s.used_count,
            untied_used: s.untied_used,
            wrong_count: s.wrong_count,
            last_used_ms: s.last_used_ms,
        })
    }

    /// Compress and archive old event segments now (see `events::compact`).
    pub fn compact(
        &self,
        policy: crate::events::CompactPolicy,
    ) -> Result<crate::events::CompactReport> {
        self.events.compact(policy, self.clock.now_ms())
    }

    /// Snapshot the folded stats so the next open folds only newer events.
    pub fn write_snapshot(&self) -> Result<()> {
        self.events.write_snapshot()
    }
}
