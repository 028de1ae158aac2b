//! A counting global allocator for tests that measure what decoding allocates. A test binary
//! installs it with `#[global_allocator] static A: Counting = Counting;` and measures with
//! [`peak_during`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// Forwards to the system allocator, counting live bytes and their peak.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Serialises measurements: the counters are global, and tests run on several threads.
static MEASURING: Mutex<()> = Mutex::new(());

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(now, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
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
