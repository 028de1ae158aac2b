//! Connection threads, like 0.7's processors (`num.threads`): each owns the connections handed
//! to it and runs them on a single-threaded runtime of its own. A connection's reads, answers
//! and sendfiles then stay on one thread and its caches, instead of hopping between the workers
//! of a shared runtime on every wake-up (on loopback that hopping cost consumers about a third
//! of their throughput). Blocking work (appends, fsyncs) still goes to blocking threads.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::{AbortHandle, JoinSet};

#[derive(Debug)]
pub struct Processors {
    handles: Vec<Handle>,
    /// Dropping a sender ends its thread's runtime (after its connections were drained).
    stops: Vec<oneshot::Sender<()>>,
    next: AtomicUsize,
}

impl Processors {
    /// Starts `count` (at least one) processor threads.
    pub fn start(count: usize) -> std::io::Result<Processors> {
        let count = count.max(1);
        let mut handles = Vec::with_capacity(count);
        let mut stops = Vec::with_capacity(count);
        for i in 0..count {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            handles.push(runtime.handle().clone());
            let (stop, stopped) = oneshot::channel::<()>();
            stops.push(stop);
            std::thread::Builder::new().name(format!("kwire-processor-{i}")).spawn(move || {
                // Either a stop or the sender dropped ends the thread.
                let _ = runtime.block_on(stopped);
            })?;
        }
        Ok(Processors { handles, stops, next: AtomicUsize::new(0) })
    }

    /// Runs `task` on the next processor, round robin, as part of `set`.
    pub fn spawn<F>(&self, set: &mut JoinSet<()>, task: F) -> AbortHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len();
        set.spawn_on(task, &self.handles[i])
    }

    /// Ends the threads. Connections still running on them are dropped with their runtime.
    pub fn stop(&mut self) {
        for stop in self.stops.drain(..) {
            let _ = stop.send(());
        }
    }
}

impl Drop for Processors {
    fn drop(&mut self) {
        self.stop();
    }
}
