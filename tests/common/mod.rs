//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod events;
pub mod mcp;

use mnemon::Memory;
use std::path::{Path, PathBuf};

/// A fresh memory folder in a temp dir; the `TempDir` must outlive the memory.
pub fn fresh() -> (tempfile::TempDir, Memory) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let memory = Memory::init(tmp.path().join(".mnemon")).expect("init");
    (tmp, memory)
}

/// Write a note file below `memory/`.
pub fn write_note(memory: &Memory, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = memory.dir().memory().join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(&path, bytes).expect("write note");
    path
}

/// The loopal-58 eval corpus in `../shared` beside the repository checkout. Panics, naming the
/// path and how to get it, when it is missing: a test that needs it fails, never passes without
/// having run.
pub fn loopal_fixtures() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/eval/loopal-58/fixtures");
    assert!(
        p.is_dir(),
        "this test needs the loopal-58 eval set at {}: put the `shared` folder (with \
         eval/loopal-58/fixtures and ground_truth.yaml) beside the repository checkout, as CI does",
        p.display()
    );
    p
}

/// Copy every file of `src` into `memory/` of `memory`.
pub fn copy_into(memory: &Memory, src: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(src).expect("read fixtures") {
        let e = e.expect("entry");
        if e.file_type().expect("type").is_file() {
            std::fs::copy(e.path(), memory.dir().memory().join(e.file_name())).expect("copy");
            n += 1;
        }
    }
    n
}

/// The `mnemon` binary built for these tests.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_mnemon"))
}
