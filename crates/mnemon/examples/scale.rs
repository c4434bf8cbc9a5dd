//! Scale check outside criterion: generate (once) a corpus of N notes under DIR, index it, then
//! time open, an unchanged re-index, and every query of its query set (p50/p99 per kind).
//!
//! `cargo run --release --example scale -- 100000 /tmp/gen100k`
//! Run it under `/usr/bin/time -v` for the peak memory of a cold build (delete DIR/.mnemon first).
//! With `SCALE_DUMP=FILE`, every query's results (ids, exact score bits, sources, trails) are
//! written to FILE under a fixed clock: two builds that must rank alike, run on copies of the
//! same corpus folder, give identical files.

use mnemon::Memory;
use mnemon_testkit::eval::run::query_of;
use mnemon_testkit::eval::truth::{Mode, load_truth};
use std::time::Instant;

/// The allocator of the `mnemon` binary, so that these figures are the command line's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(10_000);
    let dir = std::path::PathBuf::from(args.get(2).cloned().unwrap_or(format!("/tmp/gen{n}")));
    let passes: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(5);
    if !dir.join("queries.yaml").exists() {
        let t = Instant::now();
        let r =
            mnemon_testkit::corpus::generate(&mnemon_testkit::corpus::GenConfig::new(n, 7), &dir)?;
        eprintln!(
            "generated {} notes, {} bytes in {:?}",
            r.notes,
            r.bytes,
            t.elapsed()
        );
    }
    let t = Instant::now();
    let memory = Memory::init(&dir)?;
    eprintln!("open: {:?}", t.elapsed());
    let t = Instant::now();
    let rep = memory.index()?;
    eprintln!(
        "index: {:?} ({} changed, {} notes, {} edges)",
        t.elapsed(),
        rep.changed.len(),
        rep.notes,
        rep.edges
    );
    drop(memory);
    let t = Instant::now();
    let mut memory = Memory::open(&dir)?;
    if std::env::var_os("SCALE_DUMP").is_some() {
        // A fixed clock, so that two runs score alike to the last bit.
        memory = memory.with_clock(mnemon::recall::FixedClock(1_780_000_000));
    }
    eprintln!("reopen: {:?}", t.elapsed());
    let t = Instant::now();
    memory.recall(&mnemon::recall::Query::text("first recall loads the graph"))?;
    eprintln!("first recall (loads the graph): {:?}", t.elapsed());
    let t = Instant::now();
    memory.index()?;
    eprintln!("unchanged re-index: {:?}", t.elapsed());
    let truth = load_truth(&dir.join("queries.yaml"))?;
    for (kind, mode) in [
        ("query", Mode::Query),
        ("anchor", Mode::Anchor),
        ("mixed", Mode::Mixed),
    ] {
        let qs: Vec<_> = truth
            .queries
            .iter()
            .filter(|q| q.mode == mode)
            .map(|q| query_of(q).with_limit(10))
            .collect();
        if let Some(path) = std::env::var_os("SCALE_DUMP") {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            for q in &qs {
                writeln!(f, "{kind} {:?} {:?}", q.text, q.anchors)?;
                for h in memory.recall(q)?.results {
                    let trail: Vec<String> = h
                        .trail
                        .iter()
                        .map(|t| format!("{}>{}", t.from, t.to))
                        .collect();
                    writeln!(
                        f,
                        "  {} {:08x} {:?} {}",
                        h.id,
                        h.score.to_bits(),
                        h.source,
                        trail.join(",")
                    )?;
                }
            }
        }
        let mut lat: Vec<u64> = Vec::new();
        // Each query's fastest pass: what the code costs with the machine's noise filtered out.
        let mut best_ns = vec![u64::MAX; qs.len()];
        let mut slowest: Vec<(u64, usize, String)> = Vec::new();
        for pass in 0..passes {
            for (i, q) in qs.iter().enumerate() {
                let t = Instant::now();
                let r = memory.recall(q)?;
                let ns = t.elapsed().as_nanos() as u64;
                best_ns[i] = best_ns[i].min(ns);
                let us = ns / 1000;
                lat.push(us);
                if pass > 0 {
                    slowest.push((us, r.results.len(), format!("{:?} {:?}", q.text, q.anchors)));
                }
            }
        }
        if std::env::var_os("SCALE_SLOWEST").is_some() {
            slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
            for (us, n, q) in slowest.iter().take(8) {
                eprintln!("  {us} us, {n} hits: {q}");
            }
        }
        if lat.is_empty() {
            continue;
        }
        let p50 = mnemon_testkit::eval::metrics::percentile_u64(&lat, 50.0);
        let p99 = mnemon_testkit::eval::metrics::percentile_u64(&lat, 99.0);
        eprintln!(
            "{kind}: p50 {p50} us, p99 {p99} us over {} calls",
            lat.len()
        );
        let best_us: Vec<u64> = best_ns.iter().map(|ns| ns / 1000).collect();
        eprintln!(
            "{kind} (each query's fastest of {passes} passes): p50 {} us, p99 {} us",
            mnemon_testkit::eval::metrics::percentile_u64(&best_us, 50.0),
            mnemon_testkit::eval::metrics::percentile_u64(&best_us, 99.0)
        );
    }
    // Steady state of an open index after the recalls: the heap (anonymous pages) apart from
    // the mmap'd files (lexical segments, snapshot, the store's pages in the page cache).
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map_or("?".to_string(), |v| v.trim().to_string())
        };
        eprintln!(
            "resident after the recalls: {} = anonymous {} + file-backed {} (peak {})",
            field("VmRSS:"),
            field("RssAnon:"),
            field("RssFile:"),
            field("VmHWM:")
        );
    }
    // One-note update: append a line to the first note, re-index, then restore it.
    let first = walkdir::WalkDir::new(dir.join("memory"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .find(|e| e.path().extension().is_some_and(|x| x == "md"))
        .ok_or("no note")?
        .into_path();
    let original = std::fs::read(&first)?;
    let mut edited = original.clone();
    edited.extend_from_slice(b"\nAn edit for the update timing: [[scale-edit-target]].\n");
    std::fs::write(&first, &edited)?;
    let t = Instant::now();
    let rep = memory.index_paths(std::slice::from_ref(&first))?;
    eprintln!(
        "one-note update (index_paths): {:?} ({} changed; {:?})",
        t.elapsed(),
        rep.changed.len(),
        rep.phases
    );
    std::fs::write(&first, &original)?;
    let t = Instant::now();
    let rep = memory.index()?;
    eprintln!(
        "one-note update (full walk): {:?} ({} changed; {:?})",
        t.elapsed(),
        rep.changed.len(),
        rep.phases
    );
    Ok(())
}
