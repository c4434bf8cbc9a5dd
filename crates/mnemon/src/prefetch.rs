//! A cache hint for scattered reads: ask for `slice[i]` ahead of its use, so that the memory
//! latencies of a batch of random lookups overlap instead of adding up. In a large memory a
//! query's postings touch many documents' score slots and field lengths at random, nearly every
//! one a cache miss that would otherwise dominate the lexical search, and the graph walk reads the
//! edge lists of notes scattered over the heap.

/// Hint that `slice[i]` will be read soon. Does nothing when `i` is out of range or on other
/// architectures; never changes what any read returns.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = slice.get(i) {
        // SAFETY: a prefetch is a hint: it reads and writes no memory the program can observe and
        // never faults, whatever the address; `x` is a valid reference in any case. SSE, which
        // the instruction needs, is part of the x86_64 baseline.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                (x as *const T).cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}
