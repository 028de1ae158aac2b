//! `buffer.memory`: the bytes records may hold while they wait to be acknowledged. A send
//! takes its record's upper-bound size and waits (up to `max.block.ms`) while there is not
//! enough; a settled batch gives its bytes back. While anyone waits, partitions send their
//! batches without lingering, as Kafka's accumulator does when its pool is exhausted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::error::ProduceError;

pub(crate) struct Memory {
    permits: Semaphore,
    total: usize,
    waiting: AtomicUsize,
}

impl Memory {
    pub fn new(total: usize) -> Memory {
        let total = total.min(Semaphore::MAX_PERMITS);
        Memory { permits: Semaphore::new(total), total, waiting: AtomicUsize::new(0) }
    }

    /// Takes `size` bytes, waiting up to `max_block`.
    pub async fn take(&self, size: usize, max_block: Duration) -> Result<(), ProduceError> {
        let n = u32::try_from(size).unwrap_or(u32::MAX);
        if let Ok(permit) = self.permits.try_acquire_many(n) {
            permit.forget();
            return Ok(());
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let taken = tokio::time::timeout(max_block, self.permits.acquire_many(n)).await;
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        match taken {
            Ok(Ok(permit)) => {
                permit.forget();
                Ok(())
            }
            Ok(Err(_)) => Err(ProduceError::closed()),
            Err(_) => Err(ProduceError::BufferExhausted { size, buffer_memory: self.total, waited: max_block }),
        }
    }

    /// Gives `size` bytes back.
    pub fn give(&self, size: usize) {
        if size > 0 {
            self.permits.add_permits(size);
        }
    }

    /// Whether a send waits for memory.
    pub fn exhausted(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > 0
    }

    /// Bytes held by records not yet settled.
    pub fn in_use(&self) -> usize {
        self.total - self.permits.available_permits().min(self.total)
    }

    pub fn total(&self) -> usize {
        self.total
    }

    /// Fails every waiting and later `take`.
    pub fn close(&self) {
        self.permits.close();
    }
}
