//! How a record's fate reaches its sender: one [`Outcome`] per batch, shared by a
//! [`Delivery`] per record. A batch completes once (acknowledged or failed) and wakes every
//! delivery awaiting it; a record costs no channel of its own, and a delivery dropped unawaited
//! costs nothing but a reference count.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use super::error::ProduceError;
use super::record::RecordMetadata;

/// Where Kafka wrote a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Acked {
    /// -1 when unknown (acks=0, DUPLICATE_SEQUENCE_NUMBER).
    pub base_offset: i64,
    /// -1 unless the topic uses `LogAppendTime`.
    pub log_append_time: i64,
}

#[derive(Default)]
struct State {
    result: Option<Result<Acked, ProduceError>>,
    wakers: Vec<Waker>,
}

/// The fate of one batch.
#[derive(Default)]
pub(crate) struct Outcome {
    state: Mutex<State>,
}

impl Outcome {
    pub fn new() -> Arc<Outcome> {
        Arc::new(Outcome::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Settles the batch; the first result wins. Whether this call settled it.
    pub fn complete(&self, result: Result<Acked, ProduceError>) -> bool {
        let wakers = {
            let mut state = self.lock();
            if state.result.is_some() {
                return false;
            }
            state.result = Some(result);
            std::mem::take(&mut state.wakers)
        };
        for waker in wakers {
            waker.wake();
        }
        true
    }

    pub fn is_done(&self) -> bool {
        self.lock().result.is_some()
    }

    /// The result, once settled; else registers `cx`'s waker (in `slot`, replaced on the next
    /// poll rather than added again).
    fn poll(&self, cx: &mut Context<'_>, slot: &mut Option<usize>) -> Poll<Result<Acked, ProduceError>> {
        let mut state = self.lock();
        if let Some(result) = &state.result {
            return Poll::Ready(result.clone());
        }
        match slot.and_then(|i| state.wakers.get_mut(i)) {
            Some(waker) => waker.clone_from(cx.waker()),
            None => {
                *slot = Some(state.wakers.len());
                state.wakers.push(cx.waker().clone());
            }
        }
        Poll::Pending
    }

    /// Waits until the batch is settled.
    pub fn settled(self: &Arc<Self>) -> Settled {
        Settled { outcome: self.clone(), slot: None }
    }
}

/// A future settled with its batch.
pub(crate) struct Settled {
    outcome: Arc<Outcome>,
    slot: Option<usize>,
}

impl Future for Settled {
    type Output = Result<Acked, ProduceError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        this.outcome.poll(cx, &mut this.slot)
    }
}

/// One record's acknowledgement: a future of its [`RecordMetadata`] (topic, partition,
/// offset, timestamp) or of the error that failed its batch. Dropping it does not cancel the
/// record.
#[must_use = "a Delivery says whether the record was written; drop it only if that does not matter"]
pub struct Delivery {
    outcome: Arc<Outcome>,
    topic: Arc<str>,
    partition: i32,
    offset_delta: i32,
    timestamp: i64,
    key_size: i32,
    value_size: i32,
    slot: Option<usize>,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery").field("topic", &self.topic).field("partition", &self.partition).finish()
    }
}

impl Delivery {
    pub(crate) fn new(
        outcome: Arc<Outcome>,
        topic: Arc<str>,
        partition: i32,
        offset_delta: i32,
        timestamp: i64,
        sizes: (i32, i32),
    ) -> Delivery {
        Delivery {
            outcome,
            topic,
            partition,
            offset_delta,
            timestamp,
            key_size: sizes.0,
            value_size: sizes.1,
            slot: None,
        }
    }

    /// The topic of the record.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The partition the record went to.
    pub fn partition(&self) -> i32 {
        self.partition
    }

    /// Whether the record's batch is settled (awaiting would not wait).
    pub fn is_done(&self) -> bool {
        self.outcome.is_done()
    }

    fn metadata(&self, acked: Acked) -> RecordMetadata {
        RecordMetadata {
            topic: self.topic.clone(),
            partition: self.partition,
            offset: if acked.base_offset < 0 { -1 } else { acked.base_offset + i64::from(self.offset_delta) },
            timestamp: if acked.log_append_time >= 0 { acked.log_append_time } else { self.timestamp },
            serialized_key_size: self.key_size,
            serialized_value_size: self.value_size,
        }
    }
}

impl Future for Delivery {
    type Output = Result<RecordMetadata, ProduceError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        match this.outcome.poll(cx, &mut this.slot) {
            Poll::Ready(result) => Poll::Ready(result.map(|acked| this.metadata(acked))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The deliveries of [`Producer::send_all`](super::Producer::send_all): each record's, or the
/// error that kept it from being buffered. Awaited, the results in the records' order.
#[derive(Debug)]
pub struct Deliveries {
    pub deliveries: Vec<Result<Delivery, ProduceError>>,
}

impl IntoFuture for Deliveries {
    type Output = Vec<Result<RecordMetadata, ProduceError>>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let mut out = Vec::with_capacity(self.deliveries.len());
            for delivery in self.deliveries {
                out.push(match delivery {
                    Ok(delivery) => delivery.await,
                    Err(e) => Err(e),
                });
            }
            out
        })
    }
}
