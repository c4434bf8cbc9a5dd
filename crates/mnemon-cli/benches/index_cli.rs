//! What a user pays for a first index: `mnemon index` on a new memory folder of 1k and 10k
//! generated notes, a process of its own (its allocator's arenas, the stem caches and the page
//! tables all start cold). The library's `scan` bench times the same build inside one process.

#[path = "../../mnemon/benches/common/mod.rs"]
mod common;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mnemon::Memory;

fn fresh_with(notes: &std::path::Path) -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = Memory::init(dir.path().join(".mnemon")).expect("init");
    common::copy_dir(notes, &m.dir().memory());
    (dir, m)
}

fn index_cli(c: &mut Criterion) {
    for n in [1_000usize, 10_000] {
        let (_tmp, notes, bytes) = common::generated(n);
        let mut g = c.benchmark_group(format!("scan_{n}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(bytes));
        g.bench_function("cold_build_cli", |b| {
            b.iter_batched(
                || fresh_with(&notes),
                |(dir, m)| {
                    let root = m.dir().root().to_path_buf();
                    drop(m);
                    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mnemon"))
                        .arg("--dir")
                        .arg(&root)
                        .args(["index", "--json"])
                        .output()
                        .expect("run mnemon index");
                    assert!(out.status.success(), "mnemon index failed: {out:?}");
                    dir
                },
                BatchSize::PerIteration,
            )
        });
        g.finish();
    }
}

criterion_group!(benches, index_cli);
criterion_main!(benches);
