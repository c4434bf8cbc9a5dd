//! The `mnemon` command line: a thin layer over [`mnemon::Memory`].

use mnemon_cli::cli;

/// mimalloc instead of the system allocator: glibc's malloc grows each thread's arena with many
/// small `mprotect` calls during a parallel build, mimalloc maps memory in large pieces (the
/// figures are in BENCHMARKS.md, "Indexing"). Built not to ask for transparent huge pages (the
/// crate's `no_thp`: no `madvise(MADV_HUGEPAGE)`): on a machine with fragmented memory, asking
/// makes the kernel compact memory in the middle of a build. A system whose THP setting is
/// `always` still hands them out.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // A write past the file-size limit (`ulimit -f`) fails with EFBIG, an error naming the file,
    // instead of the process dying silently by SIGXFSZ (Python does the same at start).
    #[cfg(unix)]
    // SAFETY: at the start of main, before any thread runs; SIG_IGN is a valid disposition.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    std::process::exit(cli::run());
}
