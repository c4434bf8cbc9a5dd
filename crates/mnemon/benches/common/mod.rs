//! Helpers shared by the benches: generated corpora and percentile reporting.
#![allow(dead_code)]

/// The allocator of the `mnemon` binary (see `src/main.rs`), so that the benches measure what
/// the command line and the MCP server run. The baselines of `baselines.rs` run in the same
/// process, with the same allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use mnemon::Memory;
use std::path::{Path, PathBuf};

/// A generated corpus of `n` notes (seed 7) in a temp dir, with its queries file.
pub fn generated(n: usize) -> (tempfile::TempDir, PathBuf, u64) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cfg = mnemon_testkit::corpus::GenConfig::new(n, 7);
    let report = mnemon_testkit::corpus::generate(&cfg, tmp.path()).expect("generate");
    let memory = tmp.path().join("memory");
    (tmp, memory, report.bytes)
}

/// A memory folder whose notes are the `.md` files of `notes`, indexed.
pub fn indexed(notes: &Path) -> (tempfile::TempDir, Memory) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let memory =
        mnemon_testkit::eval::run::build_memory(notes, &tmp.path().join(".mnemon")).expect("build");
    (tmp, memory)
}

/// Copy the tree `src` into `dst` (folders created as needed).
pub fn copy_dir(src: &Path, dst: &Path) {
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

/// The loopal-58 corpus beside the repository, if present.
pub fn loopal() -> Option<(PathBuf, PathBuf)> {
    let root = mnemon_testkit::fixtures::repo_root().join("../shared/eval/loopal-58");
    let fixtures = root.join("fixtures");
    fixtures
        .is_dir()
        .then(|| (fixtures, root.join("ground_truth.yaml")))
}

/// Nearest-rank percentile of `v` (microseconds).
pub fn percentile(v: &mut [u64], p: f64) -> u64 {
    mnemon_testkit::eval::metrics::percentile_u64(v, p)
}
