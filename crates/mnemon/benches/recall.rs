//! Recall latency by query kind (query, anchor, mixed) on the loopal-58 eval corpus and on
//! generated corpora of 1k and 10k notes (and 100k with `MNEMON_BENCH_100K=1`). Besides
//! criterion's estimates, prints p50/p99 per kind over every query of the set (the first recall,
//! which loads the graph, is left out: it is measured as part of open-to-first-answer below, with
//! the graph loaded from the store and read from the graph cache).

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use mnemon::graph::file::GRAPH_FILE;
use mnemon_testkit::eval::run::query_of;
use mnemon_testkit::eval::truth::{Mode, load_truth};
use std::time::{Duration, Instant};

fn by_kind(c: &mut Criterion, label: &str, notes: &std::path::Path, truth: &std::path::Path) {
    let truth = load_truth(truth).expect("truth");
    let (_tmp, memory) = common::indexed(notes);
    let root = memory.dir().root().to_path_buf();
    let cache = memory.dir().index().join(GRAPH_FILE);
    drop(memory);
    // A new process's first answer, its graph loaded from the store (which writes the graph
    // cache) or read from the cache another process wrote: interleaved, the best of 3 each.
    let first_answer = |from_store: bool| {
        if from_store {
            let _ = std::fs::remove_file(&cache);
        }
        let t = Instant::now();
        let memory = mnemon::Memory::open(&root).expect("open");
        let opened = t.elapsed();
        if let Some(first) = truth.queries.first() {
            memory.recall(&query_of(first)).expect("first recall");
        }
        assert!(cache.exists(), "the first recall leaves a graph cache");
        (opened, t.elapsed())
    };
    let (mut store_best, mut cache_best) = (Duration::MAX, Duration::MAX);
    let mut open_best = Duration::MAX;
    for _ in 0..3 {
        store_best = store_best.min(first_answer(true).1);
        let (opened, answered) = first_answer(false);
        cache_best = cache_best.min(answered);
        open_best = open_best.min(opened);
    }
    println!(
        "recall_{label}/open_to_first_answer: open {open_best:.2?}; open + first recall, graph from the store {store_best:.2?}, from the graph cache {cache_best:.2?} ({:.1}x)",
        store_best.as_secs_f64() / cache_best.as_secs_f64()
    );
    let memory = mnemon::Memory::open(&root).expect("open");
    if let Some(first) = truth.queries.first() {
        memory.recall(&query_of(first)).expect("first recall");
    }
    let mut g = c.benchmark_group(format!("recall_{label}"));
    for (kind, mode) in [
        ("query", Mode::Query),
        ("anchor", Mode::Anchor),
        ("mixed", Mode::Mixed),
    ] {
        let queries: Vec<_> = truth
            .queries
            .iter()
            .filter(|t| t.mode == mode)
            .map(|t| query_of(t).with_limit(10))
            .collect();
        if queries.is_empty() {
            continue;
        }
        let mut lat = Vec::new();
        for _ in 0..20 {
            for q in &queries {
                let t = Instant::now();
                memory.recall(q).expect("recall");
                lat.push(t.elapsed().as_micros() as u64);
            }
        }
        println!(
            "recall_{label}/{kind}: p50 {} us, p99 {} us over {} calls",
            common::percentile(&mut lat, 50.0),
            common::percentile(&mut lat, 99.0),
            lat.len()
        );
        let mut i = 0;
        g.bench_function(kind, |b| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                memory.recall(&queries[i]).expect("recall")
            })
        });
    }
    g.finish();
}

fn recall(c: &mut Criterion) {
    if let Some((fixtures, truth)) = common::loopal() {
        by_kind(c, "loopal58", &fixtures, &truth);
    } else {
        eprintln!(
            "recall_loopal58 left out: ../shared/eval/loopal-58 not found beside the repository"
        );
    }
    let mut sizes = vec![1_000usize, 10_000];
    if std::env::var_os("MNEMON_BENCH_100K").is_some() {
        sizes.push(100_000);
    }
    for n in sizes {
        let (tmp, notes, _) = common::generated(n);
        by_kind(
            c,
            &format!("gen{}k", n / 1000),
            &notes,
            &tmp.path().join("queries.yaml"),
        );
    }
}

criterion_group!(benches, recall);
criterion_main!(benches);
