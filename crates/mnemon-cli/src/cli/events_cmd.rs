//! `mnemon events dump|verify`: read every segment of `events/` and `events/archive/`.
//!
//! The memory is not opened: the log is read as it is, whatever state the index store is in
//! (damaged, held by another process, on a medium this process may only read), and reading
//! writes nothing.

use super::EventsAction;
use super::output::Out;
use mnemon::{Memory, MemoryDir};

pub fn run(dir: &MemoryDir, action: &EventsAction, out: &Out) -> mnemon::Result<i32> {
    let read = Memory::event_segments_of(dir)?;
    let segs = &read.segments;
    let other = &read.unknown_files;
    match action {
        EventsAction::Dump => {
            let mut all = Vec::new();
            for seg in segs {
                let session = seg.session.clone().unwrap_or_default();
                for (offset, e) in &seg.events {
                    if out.json {
                        let mut v = serde_json::to_value(e).unwrap_or_default();
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
            for seg in segs {
                let damaged: Vec<[u64; 2]> = seg.damaged.iter().map(|d| [d.start, d.end]).collect();
                if !seg.healthy() {
                    bad += 1;
                }
                report.push(serde_json::json!({
                    "segment": seg.name,
                    "session": seg.session,
                    "events": seg.events.len(),
                    "damaged": damaged,
                    "empty": seg.empty,
                    "error": seg.error,
                    "read_past": seg.read_past,
                    "copy_of": seg.copy_of,
                }));
            }
            // Files that are not segments are never read nor removed by mnemon: listed, they
            // make nothing unhealthy (they may be the user's). A segment the stats count that
            // the log lost does: the stats hold events no segment has.
            let missing = &read.missing;
            let archive = &read.archive_unusable;
            let healthy = bad == 0 && missing.is_empty() && archive.is_none();
            if !healthy {
                super::stdout::exit_on_closed_pipe(super::EXIT_PROBLEMS);
            }
            if out.json {
                out.json(&serde_json::json!({
                    "healthy": healthy,
                    "segments": report,
                    "unknown_files": other,
                    "set_aside": read
                        .set_aside
                        .iter()
                        .map(|s| serde_json::json!({"file": s.shown, "read_instead": s.read_instead,
                            "shorter": s.shorter}))
                        .collect::<Vec<_>>(),
                    "archive_unusable": archive,
                    "missing": missing
                        .iter()
                        .map(|m| serde_json::json!({"segment": m.id,
                            "counted_bytes": m.counted_bytes}))
                        .collect::<Vec<_>>(),
                }));
            } else {
                for r in &report {
                    let note = match (r["error"].as_str(), r["empty"].as_bool()) {
                        (Some(e), _) if r["read_past"].as_bool() == Some(true) => {
                            format!(", {e} (keep the file)")
                        }
                        (Some(e), _) => format!(
                            ", {e}; this build counts no event of it past that point (keep the \
                             file: it may still hold events)"
                        ),
                        (None, Some(true)) => {
                            ", empty (its creation never completed; it holds nothing)".to_string()
                        }
                        _ => String::new(),
                    };
                    let note = match r["copy_of"].as_str() {
                        Some(o) => {
                            format!("{note}, a copy of {o}: the events both hold are counted once")
                        }
                        None => note,
                    };
                    outln!(
                        "{}: {}, {}{note}",
                        r["segment"].as_str().unwrap_or(""),
                        super::output::plural(r["events"].as_u64().unwrap_or(0) as usize, "event"),
                        super::output::plural(
                            r["damaged"].as_array().map_or(0, |a| a.len()),
                            "damaged range"
                        ),
                    );
                }
                for o in other {
                    outln!("{o}: not a segment; mnemon neither reads nor removes it");
                }
                for s in &read.set_aside {
                    let (file, instead) = (&s.shown, &s.read_instead);
                    let orphan = !file.ends_with(".zst") && instead.ends_with(".zst");
                    if s.shorter {
                        // A compressed copy made before the segment grew (a clone compressed
                        // it while another's writer went on): the longer file holds it all.
                        outln!(
                            "{file}: not read: {instead} holds the same segment with events \
                             written after this copy was made, and is read instead (compaction \
                             compresses it again once no process writes to it)"
                        );
                    } else {
                        outln!(
                            "{file}: not read: {instead} holds the same segment and is read \
                             instead{}",
                            if orphan {
                                " (compaction removes this plain copy once no process writes to it)"
                            } else {
                                ""
                            }
                        );
                    }
                }
                if let Some(why) = archive {
                    outln!("{why}");
                }
                for m in missing {
                    outln!(
                        "{}: missing: the stats snapshot counts events of this segment (its \
                         first {} bytes), but neither events/ nor events/archive/ holds it: the \
                         stats include events whose segment is gone. Restore the file from a \
                         backup or git to keep them, or run a command that opens the memory \
                         (`mnemon doctor`) to re-fold the stats from the segments that are there",
                        m.id,
                        m.counted_bytes
                    );
                }
                outln!(
                    "{}",
                    if healthy {
                        "healthy"
                    } else if bad == 0 && archive.is_some() {
                        "problems found: events/archive cannot be read; keep the files"
                    } else if bad == 0 {
                        "problems found: segments the stats count are missing; keep the files"
                    } else {
                        "problems found: damaged ranges lose only their own events, the rest is \
                         counted; keep the files"
                    }
                );
            }
            Ok(if healthy {
                super::EXIT_OK
            } else {
                super::EXIT_PROBLEMS
            })
        }
    }
}
