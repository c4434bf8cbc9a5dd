//! `mnemon events dump|verify`: read every segment of `events/`.

use super::EventsAction;
use super::output::Out;
use mnemon::Memory;
use mnemon::events::log::{list_segments, read_segment};

pub fn run(memory: &Memory, action: &EventsAction, out: &Out) -> mnemon::Result<i32> {
    let log = memory.events();
    let fs = log.fs();
    let (segs, other) = list_segments(fs, log.events_dir())?;
    match action {
        EventsAction::Dump => {
            let mut all = Vec::new();
            for seg in &segs {
                let r = read_segment(fs, &log.events_dir().join(&seg.name), seg.compressed, 0);
                let session = r
                    .header
                    .as_ref()
                    .map(|h| h.session.clone())
                    .unwrap_or_default();
                for (offset, e) in r.events {
                    if out.json {
                        let mut v = serde_json::to_value(&e).unwrap_or_default();
                        v["session"] = serde_json::json!(session);
                        v["segment"] = serde_json::json!(seg.name);
                        v["offset"] = serde_json::json!(offset);
                        all.push(v);
                    } else {
                        outln!(
                            "{} {} #{} {}",
                            e.ts_ms,
                            session,
                            e.seq,
                            serde_json::to_string(&e.kind).unwrap_or_default()
                        );
                    }
                }
            }
            if out.json {
                out.json(&serde_json::json!({ "segments": segs.len(), "events": all }));
            }
            Ok(super::EXIT_OK)
        }
        EventsAction::Verify => {
            let mut report = Vec::new();
            let mut bad = 0usize;
            for seg in &segs {
                let r = read_segment(fs, &log.events_dir().join(&seg.name), seg.compressed, 0);
                let damaged: Vec<[u64; 2]> = r.damaged.iter().map(|d| [d.start, d.end]).collect();
                if !damaged.is_empty() || r.error.is_some() {
                    bad += 1;
                }
                report.push(serde_json::json!({
                    "segment": seg.name,
                    "session": r.header.as_ref().map(|h| h.session.clone()),
                    "events": r.events.len(),
                    "damaged": damaged,
                    "error": r.error,
                }));
            }
            let healthy = bad == 0 && other.is_empty();
            if out.json {
                out.json(&serde_json::json!({
                    "healthy": healthy,
                    "segments": report,
                    "unknown_files": other,
                }));
            } else {
                for r in &report {
                    outln!(
                        "{}: {} events, {} damaged ranges{}",
                        r["segment"].as_str().unwrap_or(""),
                        r["events"],
                        r["damaged"].as_array().map_or(0, |a| a.len()),
                        r["error"]
                            .as_str()
                            .map(|e| format!(", {e}"))
                            .unwrap_or_default()
                    );
                }
                for o in &other {
                    outln!("{o}: not a segment (ignored; remove it)");
                }
                outln!("{}", if healthy { "healthy" } else { "problems found" });
            }
            Ok(if healthy {
                super::EXIT_OK
            } else {
                super::EXIT_PROBLEMS
            })
        }
    }
}
