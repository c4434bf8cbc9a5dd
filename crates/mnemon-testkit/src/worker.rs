//! `mnemon __worker` (hidden command of the CLI): one simulated agent for the multi-process stress test. Prints one JSON line
//! per acknowledged operation (flushed at once), so a parent that kills it knows what it did.

use mnemon::Memory;
use mnemon::recall::Query;
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::time::Instant;

fn line(v: serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

/// Runs `ops` operations of `role` on `memory`, printing one JSON line per operation; returns how
/// many failed.
pub fn run(
    memory: &Memory,
    role: &str,
    ops: usize,
    seed: u64,
    nodes: usize,
) -> mnemon::Result<usize> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut errors = Vec::new();
    let policy = mnemon::events::CompactPolicy {
        compress_after_days: 0,
        archive_after_days: 100_000,
    };
    for i in 0..ops {
        let result: mnemon::Result<serde_json::Value> = match role {
            "compactor" => memory.compact(policy).map(|r| {
                serde_json::json!({"op": "compact", "compressed": r.compressed.len(), "skipped": r.skipped.is_some()})
            }),
            "indexer" => {
                let t = Instant::now();
                memory.index().map(|r| {
                    serde_json::json!({"op": "index", "changed": r.changed.len(), "ms": t.elapsed().as_millis() as u64})
                })
            }
            "recaller" => {
                let node = format!("n{}", rng.random_range(0..nodes.max(1)));
                let t = Instant::now();
                memory
                    .recall(&Query::text(format!("anchor note {}", i % 7)).with_limit(10))
                    .map(|r| {
                        serde_json::json!({"op": "query", "results": r.results.len(), "latency_us": t.elapsed().as_micros() as u64, "node": node})
                    })
            }
            _ => {
                let roll = rng.random_range(0..100);
                if roll < 65 {
                    let node = format!("n{}", rng.random_range(0..nodes.max(1)));
                    let t = Instant::now();
                    memory
                        .recall(&Query::anchors([node.clone()]).with_depth(0))
                        .and_then(|r| {
                            let lat = t.elapsed().as_micros() as u64;
                            if r.results.len() == 1 && r.results[0].id == node {
                                Ok(serde_json::json!({"op": "recall", "node": node, "latency_us": lat}))
                            } else {
                                Err(mnemon::Error::InvalidArgument {
                                    what: "recall",
                                    message: format!("anchor {node} returned {} results", r.results.len()),
                                })
                            }
                        })
                } else if roll < 80 {
                    let node = format!("n{}", rng.random_range(0..nodes.max(1)));
                    let imp = rng.random_range(1..=10u8);
                    memory
                        .set_importance(&node, imp, &[], "stress")
                        .map(|_| serde_json::json!({"op": "importance", "node": node, "importance": imp}))
                } else {
                    // Each agent edits its own notes (anchors are never touched).
                    let path = memory
                        .dir()
                        .memory()
                        .join(format!("edit-{seed}-{}.md", i % 3));
                    std::fs::write(&path, format!("---\nname: Edit {seed}\n---\nrevision {i} of agent {seed}\n"))
                        .map_err(|e| mnemon::Error::io("write", &path, e))
                        .and_then(|_| memory.index())
                        .map(|_| serde_json::json!({"op": "edit"}))
                }
            }
        };
        match result {
            Ok(v) => line(v),
            Err(e) => {
                errors.push(e.to_string());
                line(serde_json::json!({"op": "error", "message": e.to_string()}));
            }
        }
    }
    line(serde_json::json!({"op": "done", "errors": errors}));
    Ok(errors.len())
}
