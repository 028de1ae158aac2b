//! A counting global allocator for tests that measure what decoding allocates. A test binary
//! installs it with `#[global_allocator] static A: Counting = Counting;` and measures with
//! [`peak_during`] (peak live bytes, all threads) or [`largest_during`] (the largest single
//! allocation made by the calling thread).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// Forwards to the system allocator, counting live bytes, their peak, and the largest single
/// allocation of a thread that asked for it.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Serialises measurements: the counters are global, and tests run on several threads.
static MEASURING: Mutex<()> = Mutex::new(());

thread_local! {
    /// `Some(largest so far)` while this thread measures with [`largest_during`].
    static LARGEST: Cell<Option<usize>> = const { Cell::new(None) };
}

fn note(size: usize) {
    let now = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(now, Relaxed);
    // `try_with`: the thread-local may be gone while a thread shuts down.
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
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Relaxed);
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` alone (no other measured code runs meanwhile) and returns its result and the
/// peak bytes allocated while it ran, above what was live before. Meaningful only in a test
/// binary that installed [`Counting`].
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let _one_at_a_time = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let out = f();
    (out, PEAK.load(Relaxed).saturating_sub(base))
}

/// Runs `f` and returns its result and the largest single allocation it made on this thread.
/// Meaningful only in a test binary that installed [`Counting`].
pub fn largest_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(Some(0)));
    let out = f();
    let largest = LARGEST.with(|l| l.replace(None)).unwrap_or(0);
    (out, largest)
}
