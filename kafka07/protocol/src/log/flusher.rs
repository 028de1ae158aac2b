//! Group commit: the fsyncs that `log.flush.interval` asks for run on one background thread,
//! off the append path. An append that crosses the threshold only queues its partition; the
//! thread captures the written end under the log's lock, fsyncs without the lock (appends go
//! on meanwhile) and then moves the high-water mark to the captured position. Appends that
//! arrive during an fsync are covered by the next one, so a busy partition is fsynced back to
//! back and each fsync carries everything that accumulated.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::SystemTime;

use crate::log::error::LogError;
use crate::log::partition::{lock, PartitionHandle, PartitionLog};

type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// Most flush errors kept for [`Flusher::take_errors`]; older ones are counted, not kept.
const MAX_KEPT_ERRORS: usize = 16;

/// Flushes `handle`'s log if `wanted` says so (checked under the lock), holding the lock only
/// to capture and to complete, never during the fsync. Returns whether it flushed.
pub(crate) fn flush_outside_lock(
    handle: &PartitionHandle,
    now: SystemTime,
    wanted: impl FnOnce(&PartitionLog) -> bool,
) -> Result<bool, LogError> {
    let ticket = {
        let mut log = lock(handle);
        if !wanted(&log) {
            return Ok(false);
        }
        match log.begin_flush(now) {
            Some(t) => t,
            None => return Ok(false),
        }
    };
    match ticket.sync() {
        Ok(()) => {
            lock(handle).finish_flush(ticket);
            Ok(true)
        }
        Err(e) => {
            lock(handle).abort_flush(ticket);
            Err(e)
        }
    }
}

#[derive(Default)]
struct Queue {
    /// Partitions waiting for a flush, each at most once.
    pending: Vec<PartitionHandle>,
    stop: bool,
    errors: Vec<LogError>,
    dropped_errors: usize,
}

struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The background flush thread; stopped (after flushing what is queued) by [`Flusher::stop`]
/// or on drop.
pub(crate) struct Flusher {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Flusher {
    pub(crate) fn start(clock: Clock) -> Result<Flusher, LogError> {
        let shared = Arc::new(Shared { queue: Mutex::new(Queue::default()), wake: Condvar::new() });
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("log-flusher".into())
                .spawn(move || run(&shared, &clock))
                .map_err(LogError::io("start the flusher thread", "log-flusher"))?
        };
        Ok(Flusher { shared, thread: Mutex::new(Some(thread)) })
    }

    /// Queues a flush of `handle` (once, however often it is asked before the thread gets to it).
    pub(crate) fn request(&self, handle: &PartitionHandle) {
        let mut q = self.shared.queue();
        if !q.pending.iter().any(|h| Arc::ptr_eq(h, handle)) {
            q.pending.push(handle.clone());
            self.shared.wake.notify_one();
        }
    }

    /// Errors of background flushes since the last call, and how many more were not kept.
    pub(crate) fn take_errors(&self) -> (Vec<LogError>, usize) {
        let mut q = self.shared.queue();
        (std::mem::take(&mut q.errors), std::mem::take(&mut q.dropped_errors))
    }

    /// Flushes what is queued and ends the thread. Idempotent.
    pub(crate) fn stop(&self) {
        self.shared.queue().stop = true;
        self.shared.wake.notify_one();
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = thread {
            // The thread does not panic (errors are recorded); a panic would already be lost.
            let _ = t.join();
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(shared: &Shared, clock: &Clock) {
    loop {
        let batch = {
            let mut q = shared.queue();
            while q.pending.is_empty() && !q.stop {
                q = shared.wake.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            if q.pending.is_empty() {
                return;
            }
            std::mem::take(&mut q.pending)
        };
        for handle in batch {
            if let Err(e) = flush_outside_lock(&handle, clock(), |_| true) {
                let mut q = shared.queue();
                if q.errors.len() < MAX_KEPT_ERRORS {
                    q.errors.push(e);
                } else {
                    q.dropped_errors += 1;
                }
            }
        }
    }
}
