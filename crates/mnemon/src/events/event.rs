//! The events mnemon records, and their payload encoding (format-spec/events.md, "Payload").

use serde::Serialize;

/// Longest string in an event (bytes); longer strings are cut at a char boundary when written.
pub const MAX_EVENT_STRING_BYTES: usize = 8192;
/// Most anchors or tags in one event.
pub const MAX_EVENT_LIST: usize = 256;

/// How a recalled note was reached (as in `recall::Source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HitSource {
    /// The question's words matched the note, or it was an anchor.
    Direct,
    /// Reached over a typed edge from a direct hit.
    Neighbor,
    /// Reached over a synthesized co-occurrence edge.
    CoOccur,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// One recall call.
    Query {
        /// The recall's id (links its hits and any feedback to it).
        qid: String,
        /// The question's text.
        query: String,
        /// The anchor ids it started from.
        anchors: Vec<String>,
        /// Results returned.
        result_count: u32,
        /// Time the recall took.
        latency_us: u64,
        /// Who asked (`cli`, `mcp`, `lib`, ...).
        caller: String,
    },
    /// One note returned by a recall.
    RecallHit {
        /// The recall's id.
        qid: String,
        /// The note returned.
        node: String,
        /// Its rank, from 1.
        rank: u32,
        /// Its score.
        score: f32,
        /// How it was reached.
        source: HitSource,
    },
    /// "This matters": importance 1..=10 for a note.
    ImportanceTag {
        /// The note marked.
        node: String,
        /// 1..=10; the latest mark wins.
        importance: u8,
        /// Free-form tags (`incident`, ...).
        tags: Vec<String>,
        /// Why it matters, in words.
        note: String,
    },
    /// What the agent did with a recall's results: the notes it `used` and the ones that were
    /// `wrong` for `query` (the question they were recalled for; may be empty).
    Feedback {
        /// The recall it is about (may be empty).
        qid: String,
        /// The question the verdicts are for.
        query: String,
        /// The notes the agent used.
        used: Vec<String>,
        /// The notes that were wrong for the question.
        wrong: Vec<String>,
    },
}

impl EventKind {
    /// Whether folding this event changes some node's stats.
    pub fn changes_nodes(&self) -> bool {
        match self {
            EventKind::Query { .. } => false,
            EventKind::RecallHit { .. } | EventKind::ImportanceTag { .. } => true,
            EventKind::Feedback { used, wrong, .. } => !used.is_empty() || !wrong.is_empty(),
        }
    }

    /// The nodes whose stats this event changes: a RecallHit's or ImportanceTag's node, a
    /// Feedback's used and wrong notes (none for a QueryEvent).
    pub fn nodes(&self) -> Vec<&str> {
        match self {
            EventKind::Query { .. } => Vec::new(),
            EventKind::RecallHit { node, .. } | EventKind::ImportanceTag { node, .. } => {
                vec![node.as_str()]
            }
            EventKind::Feedback { used, wrong, .. } => {
                used.iter().chain(wrong).map(String::as_str).collect()
            }
        }
    }
}

/// An event with its time and position in its writer's sequence. The session id lives in the
/// segment header and is attached when reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// 0, 1, 2, ... per segment writer.
    pub seq: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Why a payload did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event payload: {0}")]
pub struct PayloadError(pub String);

const TYPE_QUERY: u8 = 1;
const TYPE_RECALL_HIT: u8 = 2;
const TYPE_IMPORTANCE: u8 = 3;
const TYPE_FEEDBACK: u8 = 4;
/// The highest event type this build knows (readers skip a frame of another type as damaged).
pub const MAX_EVENT_TYPE: u8 = TYPE_FEEDBACK;

fn put_str(out: &mut Vec<u8>, s: &str) {
    let mut end = s.len().min(MAX_EVENT_STRING_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&(end as u32).to_le_bytes());
    out.extend_from_slice(&s.as_bytes()[..end]);
}

fn put_list(out: &mut Vec<u8>, items: &[String]) {
    let n = items.len().min(MAX_EVENT_LIST);
    out.extend_from_slice(&(n as u16).to_le_bytes());
    for s in &items[..n] {
        put_str(out, s);
    }
}

struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PayloadError> {
        if self.0.len() < n {
            return Err(PayloadError(format!(
                "truncated: need {n}, have {}",
                self.0.len()
            )));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], PayloadError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, PayloadError> {
        Ok(self.arr::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, PayloadError> {
        Ok(u16::from_le_bytes(self.arr()?))
    }
    fn u32(&mut self) -> Result<u32, PayloadError> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Result<u64, PayloadError> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    fn i64(&mut self) -> Result<i64, PayloadError> {
        Ok(i64::from_le_bytes(self.arr()?))
    }
    fn f32(&mut self) -> Result<f32, PayloadError> {
        Ok(f32::from_le_bytes(self.arr()?))
    }
    fn str(&mut self) -> Result<String, PayloadError> {
        let n = self.u32()? as usize;
        if n > MAX_EVENT_STRING_BYTES {
            return Err(PayloadError(format!("string of {n} bytes over the limit")));
        }
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| PayloadError("string is not UTF-8".into()))
    }
    fn list(&mut self) -> Result<Vec<String>, PayloadError> {
        let n = self.u16()? as usize;
        if n > MAX_EVENT_LIST {
            return Err(PayloadError(format!("list of {n} over the limit")));
        }
        (0..n).map(|_| self.str()).collect()
    }
}

impl Event {
    /// Encode the payload (format-spec/events.md).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        let ty = match &self.kind {
            EventKind::Query { .. } => TYPE_QUERY,
            EventKind::RecallHit { .. } => TYPE_RECALL_HIT,
            EventKind::ImportanceTag { .. } => TYPE_IMPORTANCE,
            EventKind::Feedback { .. } => TYPE_FEEDBACK,
        };
        out.push(ty);
        out.extend_from_slice(&self.ts_ms.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        match &self.kind {
            EventKind::Query {
                qid,
                query,
                anchors,
                result_count,
                latency_us,
                caller,
            } => {
                put_str(&mut out, qid);
                put_str(&mut out, query);
                put_list(&mut out, anchors);
                out.extend_from_slice(&result_count.to_le_bytes());
                out.extend_from_slice(&latency_us.to_le_bytes());
                put_str(&mut out, caller);
            }
            EventKind::RecallHit {
                qid,
                node,
                rank,
                score,
                source,
            } => {
                put_str(&mut out, qid);
                put_str(&mut out, node);
                out.extend_from_slice(&rank.to_le_bytes());
                out.extend_from_slice(&score.to_le_bytes());
                out.push(match source {
                    HitSource::Direct => 1,
                    HitSource::Neighbor => 2,
                    HitSource::CoOccur => 3,
                });
            }
            EventKind::ImportanceTag {
                node,
                importance,
                tags,
                note,
            } => {
                put_str(&mut out, node);
                out.push(*importance);
                put_list(&mut out, tags);
                put_str(&mut out, note);
            }
            EventKind::Feedback {
                qid,
                query,
                used,
                wrong,
            } => {
                put_str(&mut out, qid);
                put_str(&mut out, query);
                put_list(&mut out, used);
                put_list(&mut out, wrong);
            }
        }
        out
    }

    /// Decode a payload; every field is checked and nothing may follow it.
    pub fn decode(b: &[u8]) -> Result<Event, PayloadError> {
        let mut r = Rd(b);
        let ty = r.u8()?;
        let ts_ms = r.i64()?;
        let seq = r.u64()?;
        let kind = match ty {
            TYPE_QUERY => EventKind::Query {
                qid: r.str()?,
                query: r.str()?,
                anchors: r.list()?,
                result_count: r.u32()?,
                latency_us: r.u64()?,
                caller: r.str()?,
            },
            TYPE_RECALL_HIT => EventKind::RecallHit {
                qid: r.str()?,
                node: r.str()?,
                rank: r.u32()?,
                score: r.f32()?,
                source: match r.u8()? {
                    1 => HitSource::Direct,
                    2 => HitSource::Neighbor,
                    3 => HitSource::CoOccur,
                    s => return Err(PayloadError(format!("unknown hit source {s}"))),
                },
            },
            TYPE_IMPORTANCE => {
                let node = r.str()?;
                let importance = r.u8()?;
                if !(1..=10).contains(&importance) {
                    return Err(PayloadError(format!(
                        "importance {importance} outside 1..=10"
                    )));
                }
                EventKind::ImportanceTag {
                    node,
                    importance,
                    tags: r.list()?,
                    note: r.str()?,
                }
            }
            TYPE_FEEDBACK => EventKind::Feedback {
                qid: r.str()?,
                query: r.str()?,
                used: r.list()?,
                wrong: r.list()?,
            },
            t => return Err(PayloadError(format!("unknown event type {t}"))),
        };
        if !r.0.is_empty() {
            return Err(PayloadError(format!("{} trailing bytes", r.0.len())));
        }
        Ok(Event { ts_ms, seq, kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips() {
        for kind in [
            EventKind::Query {
                qid: "q1".into(),
                query: "pool size".into(),
                anchors: vec!["a".into()],
                result_count: 3,
                latency_us: 120,
                caller: "cli".into(),
            },
            EventKind::RecallHit {
                qid: "q1".into(),
                node: "a".into(),
                rank: 1,
                score: 0.5,
                source: HitSource::Neighbor,
            },
            EventKind::ImportanceTag {
                node: "a".into(),
                importance: 7,
                tags: vec!["ops".into()],
                note: "incident".into(),
            },
            EventKind::Feedback {
                qid: "q1".into(),
                query: "pool size".into(),
                used: vec!["a".into(), "b".into()],
                wrong: vec!["c".into()],
            },
        ] {
            let e = Event {
                ts_ms: 1_700_000_000_000,
                seq: 9,
                kind,
            };
            let b = e.encode();
            assert_eq!(Event::decode(&b).unwrap(), e);
            assert!(Event::decode(&b[..b.len() - 1]).is_err());
        }
    }
}
