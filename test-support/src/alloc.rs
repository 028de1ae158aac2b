//! A counting global allocator for tests that measure what decoding allocates. A test binary
//! installs it with `#[global_allocator] static A: Counting = Counting;` and measures with
//! [`peak_during`] (peak live bytes allocated by the calling thread) or [`largest_during`] (the
//! largest single allocation made by the calling thread). Both count the calling thread only:
//! tests run on several threads at once, and what another test allocates meanwhile (its
//! inputs, say) is not what the measured code allocated.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to the system allocator, counting, for a thread that asked, its live bytes and
/// their peak, and its largest single allocation.
pub struct Counting;

thread_local! {
    /// `Some((live, peak))` bytes since the start, while this thread measures with
    /// [`peak_during`] (live may go below zero: it frees what it allocated before).
    static HERE: Cell<Option<(isize, isize)>> = const { Cell::new(None) };
    /// `Some(largest so far)` while this thread measures with [`largest_during`].
    static LARGEST: Cell<Option<usize>> = const { Cell::new(None) };
}

/// `delta` bytes allocated (or, negative, freed) by this thread.
fn here(delta: isize) {
    // `try_with`: the thread-local may be gone while a thread shuts down.
    let _ = HERE.try_with(|h| {
        if let Some((live, peak)) = h.get() {
            let live = live + delta;
            h.set(Some((live, peak.max(live))));
        }
    });
}

fn note(size: usize) {
    here(size as isize);
    let _ = LARGEST.try_with(|l| {
        if let Some(max) = l.get() {
            l.set(Some(max.max(size)));
        }
    });
}

// SAFETY: forwards every call unchanged to the system allocator; only counts sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        here(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        here(-(layout.size() as isize));
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` and returns its result and the peak bytes the calling thread allocated while it
/// ran, above what was live before (`f` must not hand work to other threads). Meaningful only
/// in a test binary that installed [`Counting`].
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    HERE.with(|h| h.set(Some((0, 0))));
    let out = f();
    let peak = HERE.with(|h| h.replace(None)).map_or(0, |(_, peak)| peak);
    (out, usize::try_from(peak).unwrap_or(0))
}

/// Runs `f` and returns its result and the largest single allocation it made on this thread.
/// Meaningful only in a test binary that installed [`Counting`].
pub fn largest_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(Some(0)));
    let out = f();
    let largest = LARGEST.with(|l| l.replace(None)).unwrap_or(0);
    (out, largest)
}
