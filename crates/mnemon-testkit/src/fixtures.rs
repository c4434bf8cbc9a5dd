//! Memory folders for tests: a fresh one, notes written into it, and the loopal-58 eval set that
//! lives beside the repository (`../shared`, always present in CI).

use mnemon::Memory;
use std::path::{Path, PathBuf};

/// The repository's root folder (the workspace).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The bundled demo notes (`examples/demo-memory`).
pub fn demo_notes() -> PathBuf {
    repo_root().join("examples/demo-memory")
}

/// A folder of `../shared` (beside the repository). Panics, naming the folder and the fix, when
/// it is missing: a test that needs it must fail, never pass without having run.
pub fn shared(rel: &str) -> PathBuf {
    let p = repo_root().join("../shared").join(rel);
    assert!(
        p.exists(),
        "{} not found: this test needs the shared eval data beside the repository \
         (clone it so that ../shared/{rel} exists next to the checkout, as CI does)",
        p.display()
    );
    p
}

/// The loopal-58 eval set's folder (`fixtures/`, `ground_truth.yaml`).
pub fn loopal58() -> PathBuf {
    shared("eval/loopal-58")
}

/// The loopal-58 notes.
pub fn loopal_fixtures() -> PathBuf {
    shared("eval/loopal-58/fixtures")
}

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

/// Copy every file of `src` into `memory/` of `memory`; returns how many.
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

/// A fresh memory folder holding a hub note that links two siblings (`a`, `b`), indexed: the
/// folder (the memory itself is closed) and the `TempDir` that must outlive it.
pub fn siblings() -> (tempfile::TempDir, PathBuf) {
    let (tmp, m) = fresh();
    write_note(&m, "hub.md", "---\nname: Hub\n---\nsee [[a]] and [[b]]\n");
    write_note(&m, "a.md", "---\nname: Alpha\n---\nfirst sibling text\n");
    write_note(&m, "b.md", "---\nname: Beta\n---\nsecond sibling text\n");
    m.index().expect("index");
    let root = m.dir().root().to_path_buf();
    (tmp, root)
}
