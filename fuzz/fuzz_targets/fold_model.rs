//! The fold against a model. A fuzz-chosen list of events (recall hits, importance tags 1..=10
//! and queries on 4 nodes, timestamps in a tiny range and few seqs so that ties are common, from
//! 3 sessions) is folded with `Stats::apply` in the given order, reversed, in a fuzz-chosen
//! permutation, and as fuzz-chosen parts folded apart and combined with `Stats::merge` (both
//! ways round, grouped both ways, and with the empty stats). All must be equal, and equal to a
//! model written here: `recall_count` = number of hits, `last_recalled_ms` = latest hit,
//! the importance (and its ts and (session, seq) key) = the tag with the largest
//! (ts, session, seq, importance), `used_count` / `untied_used` / `wrong_count` /
//! `last_used_ms` = the Feedback events naming the node (untied: those with no question), the
//! per-question verdicts = their counts by (question key, node), `events` = number of events.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mnemon::events::fold::{RecallStats, Stats};
use mnemon::events::fold::{Verdicts, question_key};
use mnemon::events::{Event, EventKind, HitSource};

/// Questions of Feedback events: empty (tied to none), and two that differ only in case and
/// spacing (one question key).
const QUESTIONS: [&str; 3] = ["", "Pool  size", "pool size"];

const NODES: [&str; 4] = ["a", "b", "notes/c", "d"];
/// Not in index order lexicographically, so the session tie-break is really tested.
const SESSIONS: [&str; 3] = ["s2", "s10", "A"];

#[derive(Debug, Arbitrary)]
struct In {
    kind: u8,
    node: u8,
    importance: u8,
    ts: u8,
    session: u8,
    seq: u8,
}

#[derive(Debug)]
struct Ev {
    session: &'static str,
    event: Event,
}

impl In {
    fn get(&self) -> Ev {
        let node = NODES[usize::from(self.node) % NODES.len()].to_string();
        let kind = match self.kind % 7 {
            0 => EventKind::Query {
                qid: "q".into(),
                query: node,
                anchors: vec![],
                result_count: 1,
                latency_us: 1,
                caller: "fuzz".into(),
            },
            5 | 6 => {
                let other = NODES[usize::from(self.importance) % NODES.len()].to_string();
                let question = QUESTIONS[usize::from(self.importance / 4) % QUESTIONS.len()];
                let (used, wrong) = if self.kind % 7 == 5 {
                    (vec![node], vec![other])
                } else {
                    (vec![node, other], vec![])
                };
                EventKind::Feedback {
                    qid: "q".into(),
                    query: question.into(),
                    used,
                    wrong,
                }
            }
            1 | 2 => EventKind::RecallHit {
                qid: "q".into(),
                node,
                rank: 1,
                score: 0.5,
                source: HitSource::Direct,
            },
            _ => EventKind::ImportanceTag {
                node,
                importance: self.importance % 10 + 1,
                tags: vec![],
                note: String::new(),
            },
        };
        Ev {
            session: SESSIONS[usize::from(self.session) % SESSIONS.len()],
            event: Event {
                ts_ms: 1_700_000_000_000 + i64::from(self.ts % 4),
                seq: u64::from(self.seq % 3),
                kind,
            },
        }
    }
}

fn fold<'a>(evs: impl IntoIterator<Item = &'a Ev>) -> Stats {
    let mut s = Stats::default();
    for e in evs {
        s.apply(e.session, &e.event);
    }
    s
}

fn merged(a: &Stats, b: &Stats) -> Stats {
    let mut m = a.clone();
    m.merge(b);
    m
}

/// The model: straight from the definitions, no incremental state.
fn model(evs: &[Ev]) -> Stats {
    let mut model = Stats {
        events: evs.len() as u64,
        ..Stats::default()
    };
    for n in NODES {
        let hits: Vec<i64> = evs
            .iter()
            .filter(|e| matches!(&e.event.kind, EventKind::RecallHit { node, .. } if node == n))
            .map(|e| e.event.ts_ms)
            .collect();
        let best_tag = evs
            .iter()
            .filter_map(|e| match &e.event.kind {
                EventKind::ImportanceTag {
                    node, importance, ..
                } if node == n => Some((e.event.ts_ms, e.session, e.event.seq, *importance)),
                _ => None,
            })
            .max();
        // (ts, tied to a question, used) of every Feedback verdict on this node.
        let verdicts: Vec<(i64, bool, bool)> = evs
            .iter()
            .flat_map(|e| match &e.event.kind {
                EventKind::Feedback {
                    query, used, wrong, ..
                } => used
                    .iter()
                    .map(|u| (u, true))
                    .chain(wrong.iter().map(|w| (w, false)))
                    .filter(|(x, _)| x.as_str() == n)
                    .map(|(_, is_used)| (e.event.ts_ms, !query.is_empty(), is_used))
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        if hits.is_empty() && best_tag.is_none() && verdicts.is_empty() {
            continue;
        }
        let used = || verdicts.iter().filter(|v| v.2);
        model.nodes.insert(
            n.to_string(),
            RecallStats {
                recall_count: hits.len() as u64,
                last_recalled_ms: hits.iter().copied().max(),
                importance: best_tag.map(|t| t.3),
                importance_tagged_ms: best_tag.map(|t| t.0),
                importance_key: best_tag.map(|t| (t.1.to_string(), t.2)),
                used_count: used().count() as u64,
                untied_used: used().filter(|v| !v.1).count() as u64,
                wrong_count: verdicts.iter().filter(|v| !v.2).count() as u64,
                last_used_ms: used().map(|v| v.0).max(),
            },
        );
    }
    for e in evs {
        if let EventKind::Feedback {
            query, used, wrong, ..
        } = &e.event.kind
        {
            if query.is_empty() {
                continue;
            }
            for (list, is_used) in [(used, true), (wrong, false)] {
                for node in list {
                    let v: &mut Verdicts = model
                        .feedback
                        .entry((question_key(query), node.clone()))
                        .or_default();
                    if is_used {
                        v.used += 1;
                    } else {
                        v.wrong += 1;
                    }
                }
            }
        }
    }
    model
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});

fn run(u: &mut Unstructured) -> arbitrary::Result<()> {
    let ins: Vec<In> = u.arbitrary()?;
    let evs: Vec<Ev> = ins.iter().map(In::get).collect();
    let n = evs.len();

    let want = model(&evs);
    let forward = fold(&evs);
    assert_eq!(forward, want, "in-order fold differs from the model");
    assert_eq!(
        fold(evs.iter().rev()),
        want,
        "reversed fold differs from the model"
    );

    // A fuzz-chosen permutation (Fisher-Yates driven by the input; zeros when it runs out).
    let mut perm: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = u.int_in_range(0..=i).unwrap_or(0);
        perm.swap(i, j);
    }
    let shuffled = fold(perm.iter().map(|&i| &evs[i]));
    assert_eq!(
        shuffled, want,
        "shuffled fold (order {perm:?}) differs from the model"
    );

    // Split the shuffled order into three fuzz-chosen parts, fold apart, merge.
    let x = u.int_in_range(0..=n).unwrap_or(0);
    let y = u.int_in_range(x..=n).unwrap_or(x);
    let part = |r: std::ops::Range<usize>| fold(perm[r].iter().map(|&i| &evs[i]));
    let (p, q, r) = (part(0..x), part(x..y), part(y..n));
    let pq = merged(&p, &q);
    assert_eq!(
        merged(&pq, &r),
        want,
        "(p + q) + r differs from the model (split {x}, {y})"
    );
    assert_eq!(
        merged(&p, &merged(&q, &r)),
        want,
        "p + (q + r) differs (split {x}, {y})"
    );
    assert_eq!(
        merged(&merged(&r, &q), &p),
        want,
        "(r + q) + p differs (split {x}, {y})"
    );
    assert_eq!(
        pq,
        merged(&q, &p),
        "merge is not commutative (split {x}, {y})"
    );
    // The empty stats are neutral, both ways; a snapshot plus a tail equals the full fold.
    assert_eq!(merged(&Stats::default(), &want), want);
    assert_eq!(merged(&want, &Stats::default()), want);
    let mut tail = pq.clone();
    for &i in &perm[y..n] {
        tail.apply(evs[i].session, &evs[i].event);
    }
    assert_eq!(tail, want, "snapshot + applied tail differs (split {y})");
    Ok(())
}
