//! The `mnemon` command line: a thin layer over [`mnemon::Memory`].

mod cli;

/// mimalloc instead of the system allocator: on glibc's malloc a cold build of 1k notes made
/// 5 100 page faults and 1 134 `mprotect` calls growing the arenas of its threads; on mimalloc it
/// makes 320 and runs about 10 % faster. Without transparent huge pages (the crate's `no_thp`):
/// asking for them made a build on a machine with fragmented memory 2-3x slower, compacting
/// memory in the kernel (BENCHMARKS.md, "Indexing", session 14).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::run());
}
