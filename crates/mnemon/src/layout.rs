//! What makes a folder a memory folder? The name of the index store inside `index/`, and the
//! check that a folder holds the layout. A leaf (it imports no other module): `error` (whose
//! message names the memory folder a path lies inside), `folder` and `store` read it.

use std::path::Path;

/// File name of the store inside `index/`.
pub const STORE_FILE: &str = "graph.redb";

/// Whether `dir` is a memory folder: `memory/` beside `events/` (a clone may lack the
/// git-ignored `index/`) or beside an index store. A project's own `src/memory` beside
/// `src/index` is not one.
pub(crate) fn is_memory_layout(dir: &Path) -> bool {
    dir.join("memory").is_dir()
        && (dir.join("events").is_dir() || dir.join("index").join(STORE_FILE).is_file())
}
