//! What the producer counts, read at any time as a [`MetricsSnapshot`], and hooks called as
//! things happen (after kgo's `HookProduceBatchWritten` and friends): plain Rust calls, so that
//! nobody parses a statistics blob.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::error::ProduceError;

/// The producer's counters.
#[derive(Default)]
pub(crate) struct Metrics {
    records_sent: AtomicU64,
    record_bytes_sent: AtomicU64,
    batches_sent: AtomicU64,
    batch_bytes_sent: AtomicU64,
    requests: AtomicU64,
    retries: AtomicU64,
    records_failed: AtomicU64,
    in_flight: AtomicU64,
    records_buffered: AtomicU64,
}

/// The counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Records acknowledged (with acks=0: written).
    pub records_sent: u64,
    /// Their bytes in the batches, before compression.
    pub record_bytes_sent: u64,
    /// Batches acknowledged.
    pub batches_sent: u64,
    /// Their bytes on the wire (after compression).
    pub batch_bytes_sent: u64,
    /// Produce requests written.
    pub requests: u64,
    /// Batches sent again after a retriable error.
    pub retries: u64,
    /// Records whose batch failed.
    pub records_failed: u64,
    /// Produce requests waiting for their response.
    pub in_flight: u64,
    /// Records buffered and not yet settled.
    pub records_buffered: u64,
    /// Bytes of `buffer.memory` in use.
    pub buffer_in_use: u64,
    /// `buffer.memory`.
    pub buffer_total: u64,
}

impl Metrics {
    pub fn buffered(&self, records: u64) {
        self.records_buffered.fetch_add(records, Ordering::Relaxed);
    }
    pub fn request_sent(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }
    pub fn request_done(&self) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
    pub fn batch_acked(&self, records: u64, uncompressed: u64, bytes: u64) {
        self.records_sent.fetch_add(records, Ordering::Relaxed);
        self.record_bytes_sent.fetch_add(uncompressed, Ordering::Relaxed);
        self.batches_sent.fetch_add(1, Ordering::Relaxed);
        self.batch_bytes_sent.fetch_add(bytes, Ordering::Relaxed);
        self.records_buffered.fetch_sub(records, Ordering::Relaxed);
    }
    pub fn batch_failed(&self, records: u64) {
        self.records_failed.fetch_add(records, Ordering::Relaxed);
        self.records_buffered.fetch_sub(records, Ordering::Relaxed);
    }
    pub fn retried(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }
    pub fn snapshot(&self, buffer_in_use: usize, buffer_total: usize) -> MetricsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        MetricsSnapshot {
            records_sent: get(&self.records_sent),
            record_bytes_sent: get(&self.record_bytes_sent),
            batches_sent: get(&self.batches_sent),
            batch_bytes_sent: get(&self.batch_bytes_sent),
            requests: get(&self.requests),
            retries: get(&self.retries),
            records_failed: get(&self.records_failed),
            in_flight: get(&self.in_flight),
            records_buffered: get(&self.records_buffered),
            buffer_in_use: buffer_in_use as u64,
            buffer_total: buffer_total as u64,
        }
    }
}

/// A batch Kafka acknowledged.
#[derive(Debug, Clone)]
pub struct BatchWritten<'a> {
    pub broker: i32,
    pub topic: &'a str,
    pub partition: i32,
    pub base_offset: i64,
    pub records: i32,
    /// The records' bytes before compression, and the batch's on the wire.
    pub uncompressed_bytes: usize,
    pub compressed_bytes: usize,
    /// Times it was sent (1 unless retried).
    pub attempts: u32,
}

/// Hooks into the producer, each with a default that does nothing; register with
/// [`Producer::add_hook`](super::Producer::add_hook). They run on the producer's tasks: keep
/// them quick.
pub trait ProducerHook: Send + Sync + 'static {
    /// A batch was acknowledged.
    fn on_batch_written(&self, _batch: &BatchWritten<'_>) {}
    /// A batch failed for good (`will_retry` false) or will be sent again.
    fn on_batch_error(&self, _topic: &str, _partition: i32, _error: &ProduceError, _will_retry: bool) {}
    /// A Produce request was answered (or failed) after `latency`.
    fn on_produce_response(&self, _broker: i32, _batches: usize, _bytes: usize, _latency: Duration, _ok: bool) {}
}

/// The registered hooks.
#[derive(Default, Clone)]
pub(crate) struct Hooks {
    pub list: Arc<std::sync::RwLock<Vec<Arc<dyn ProducerHook>>>>,
}

impl Hooks {
    pub fn each(&self, f: impl Fn(&dyn ProducerHook)) {
        let list = self.list.read().unwrap_or_else(|e| e.into_inner());
        for hook in list.iter() {
            f(hook.as_ref());
        }
    }
    pub fn is_empty(&self) -> bool {
        self.list.read().unwrap_or_else(|e| e.into_inner()).is_empty()
    }
}
