//! What makes a folder a memory folder? The name of the index store inside `index/`, and the
//! check that a folder holds the layout. A leaf (it imports no other module): `error` (whose
//! message names the memory folder a path lies inside), `folder` and `store` read it.

use std::path::Path;

/// File name of the store inside `index/`.
pub const STORE_FILE: &str = "graph.redb";

/// Whether `dir` was a memory folder whose notes folder is gone (removed by hand, lost in a
/// checkout): no `memory/`, but an index store or an event segment (of the first few entries
/// of `events/`) that only mnemon makes. Folders merely named `index/` or `events/` are not
/// enough: any project may have those.
pub(crate) fn lost_its_notes(dir: &Path) -> bool {
    /// Entries of `events/` looked at for a segment.
    const MAX_ENTRIES_READ: usize = 64;
    if dir.join("memory").exists() {
        return false;
    }
    if dir.join("index").join(STORE_FILE).is_file() {
        return true;
    }
    std::fs::read_dir(dir.join("events")).is_ok_and(|entries| {
        entries.take(MAX_ENTRIES_READ).flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".seg") || name.ends_with(".seg.zst")
        })
    })
}

/// Whether `dir` is a memory folder: `memory/` beside `events/` (a clone may lack the
/// git-ignored `index/`) or beside an index store. A project's own `src/memory` beside
/// `src/index` is not one.
pub(crate) fn is_memory_layout(dir: &Path) -> bool {
    dir.join("memory").is_dir()
        && (dir.join("events").is_dir() || dir.join("index").join(STORE_FILE).is_file())
}
