//! The `mnemon` command line: a thin layer over [`mnemon::Memory`].

use mnemon_cli::cli;

/// mimalloc instead of the system allocator: on glibc's malloc a cold build of 1k notes made
/// 1 134 `mprotect` calls growing the arenas of its threads; on mimalloc it makes 14, and builds
/// of 1k to 100k notes run 5-10 % faster. Built not to ask for transparent huge pages (the
/// crate's `no_thp`: no `madvise(MADV_HUGEPAGE)`): asking for them made a build on a machine
/// with fragmented memory 2-3x slower, compacting memory in the kernel (BENCHMARKS.md,
/// "Indexing", session 14). A system whose THP setting is `always` still hands them out.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::run());
}
