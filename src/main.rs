//! The `mnemon` command line: a thin layer over [`mnemon::Memory`].

mod cli;

/// mimalloc instead of the system allocator: a cold build of 1k notes makes about 5 000 page
/// faults and 1 100 `mprotect` calls growing glibc's per-thread arenas, and runs 15-25 % faster
/// on mimalloc (BENCHMARKS.md, "Indexing").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::run());
}
