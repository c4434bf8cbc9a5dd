//! Scanning and indexing: cold build of a generated corpus (1k and 10k notes, MB/s of notes) and
//! the re-scan of an unchanged corpus (which must read no note contents).

mod common;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mnemon::Memory;

fn scan(c: &mut Criterion) {
    for n in [1_000usize, 10_000] {
        let (_tmp, notes, bytes) = common::generated(n);
        let mut g = c.benchmark_group(format!("scan_{n}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(bytes));
        g.bench_function("cold_build", |b| {
            b.iter_batched(
                || {
                    let dir = tempfile::tempdir().expect("tempdir");
                    let m = Memory::init(dir.path().join(".mnemon")).expect("init");
                    // Move the notes in by renaming a copy made outside the timed part.
                    copy_dir(&notes, &m.dir().memory());
                    (dir, m)
                },
                |(dir, m)| {
                    let r = m.index().expect("index");
                    assert_eq!(r.notes as usize, n);
                    (dir, m)
                },
                BatchSize::PerIteration,
            )
        });
        let (_t2, memory) = common::indexed(&notes);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function("rescan_unchanged", |b| {
            b.iter(|| {
                let r = memory.index().expect("index");
                assert!(r.changed.is_empty());
            })
        });
        g.finish();
    }
}

fn copy_dir(src: &std::path::Path, dst: &std::path::Path) {
    for e in walkdir::WalkDir::new(src) {
        let e = e.expect("walk");
        let rel = e.path().strip_prefix(src).expect("prefix");
        let target = dst.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

criterion_group!(benches, scan);
criterion_main!(benches);
