//! Freeing big values off the caller's path.
//!
//! A scan of a large memory ends holding several small allocations per note (paths, manifest
//! entries, parsed notes); freeing them takes time that nobody needs to wait for in a
//! long-lived process and that a command-line process need not pay at all (it exits first, and
//! the OS takes the memory back at once).

/// Items (paths, manifest entries: an allocation or two each) from which a collection is freed
/// on a thread of its own.
pub(crate) const FREE_LATER_MIN_ITEMS: usize = 4096;

/// Parsed notes (a body, a record, links and edges: a dozen allocations each) from which a
/// scan's outcome is freed on a thread of its own: below it, freeing them costs less than
/// starting the thread.
pub(crate) const FREE_LATER_MIN_NOTES: usize = 256;

/// Drop `value` on a thread of its own when `big`, else right here (also when no thread can
/// start).
pub(crate) fn free_later<T: Send + 'static>(value: T, big: bool) {
    if !big {
        return;
    }
    // On a spawn error the closure, and the value with it, is dropped right here.
    let _ = std::thread::Builder::new()
        .name("mnemon-free".into())
        .spawn(move || drop(value));
}
