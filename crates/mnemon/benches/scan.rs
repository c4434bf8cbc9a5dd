//! Indexing at 1k and 10k notes (and 100k with `MNEMON_BENCH_100K=1`): cold build (MB/s of
//! notes, with the time of each phase, co-occurrence synthesis among them, printed once; the
//! `mnemon index` command is timed by the CLI's `index_cli` bench), open of
//! an indexed memory with an unchanged corpus, the re-scan of an unchanged corpus (which reads no
//! note contents), and a one-note update through `index_paths` (what `watch`/`serve` do).
//! Peak memory of a cold build is measured by a separate process: see BENCHMARKS.md.

mod common;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mnemon::Memory;
use std::time::Instant;

fn sizes() -> Vec<usize> {
    let mut v = vec![1_000usize, 10_000];
    if std::env::var_os("MNEMON_BENCH_100K").is_some() {
        v.push(100_000);
    }
    v
}

fn fresh_with(notes: &std::path::Path) -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = Memory::init(dir.path().join(".mnemon")).expect("init");
    common::copy_dir(notes, &m.dir().memory());
    (dir, m)
}

fn scan(c: &mut Criterion) {
    for n in sizes() {
        let (_tmp, notes, bytes) = common::generated(n);
        let mut g = c.benchmark_group(format!("scan_{n}"));
        g.sample_size(10);

        // One timed cold build with its phases (the only one at 100k, where each build is long).
        let (_built_dir, memory) = fresh_with(&notes);
        let t = Instant::now();
        let r = memory.index().expect("index");
        let el = t.elapsed();
        assert_eq!(r.notes as usize, n);
        println!(
            "scan_{n}/cold_build_once: {:.2?} = {:.1} MiB/s of notes ({} edges); phases ms: scan {}, lexical {}, synthesize {}, store {}",
            el,
            bytes as f64 / el.as_secs_f64() / (1 << 20) as f64,
            r.edges,
            r.phases.scan_ms,
            r.phases.lexical_ms,
            r.phases.synthesize_ms,
            r.phases.store_ms
        );
        if n <= 10_000 {
            g.throughput(Throughput::Bytes(bytes));
            g.bench_function("cold_build", |b| {
                b.iter_batched(
                    || fresh_with(&notes),
                    |(dir, m)| {
                        let r = m.index().expect("index");
                        assert_eq!(r.notes as usize, n);
                        (dir, m)
                    },
                    BatchSize::PerIteration,
                )
            });
        }

        g.throughput(Throughput::Elements(1));
        let root = memory.dir().root().to_path_buf();
        g.bench_function("open_unchanged", |b| {
            b.iter(|| Memory::open(&root).expect("open"))
        });
        g.bench_function("rescan_unchanged", |b| {
            b.iter(|| {
                let r = memory.index().expect("index");
                assert!(r.changed.is_empty());
            })
        });
        // One-note update: the watcher names the file; its two versions alternate.
        let path = first_note(&memory.dir().memory());
        let original = std::fs::read(&path).expect("read");
        let mut edited = original.clone();
        edited.extend_from_slice(b"\nEdited for the bench: [[bench-edit-target]].\n");
        let mut flip = false;
        g.bench_function("one_note_update", |b| {
            b.iter(|| {
                flip = !flip;
                std::fs::write(&path, if flip { &edited } else { &original }).expect("write");
                let r = memory
                    .index_paths(std::slice::from_ref(&path))
                    .expect("index_paths");
                assert_eq!(r.changed.len(), 1);
            })
        });
        g.finish();
    }
}

fn first_note(dir: &std::path::Path) -> std::path::PathBuf {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .find(|e| e.path().extension().is_some_and(|x| x == "md"))
        .expect("a note")
        .into_path()
}

criterion_group!(benches, scan);
criterion_main!(benches);
