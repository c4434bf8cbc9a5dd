//! Regression tests named after the six failure modes of MISSION.md section 6.

mod common;

/// fm5: a pre-existing `.gitignore` that is not UTF-8 made every start-up append the ignore rule
/// again (the original decoded the file, failed, and treated it as empty). Fix: compare bytes, never
/// decode; the rule is appended at most once however often init or open runs.
#[test]
fn fm5_non_utf8_gitignore_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(".mnemon");
    std::fs::create_dir_all(&root).unwrap();
    let original: &[u8] = b"# d\xe9j\xe0 vu \xff\xfe\n*.tmp";
    std::fs::write(root.join(".gitignore"), original).unwrap();
    for _ in 0..3 {
        drop(mnemon::Memory::init(&root).unwrap());
        drop(mnemon::Memory::open(&root).unwrap());
    }
    let bytes = std::fs::read(root.join(".gitignore")).unwrap();
    let mut want = original.to_vec();
    want.extend_from_slice(b"\n/index/\n");
    assert_eq!(bytes, want, "original bytes kept, rule added exactly once");
}
