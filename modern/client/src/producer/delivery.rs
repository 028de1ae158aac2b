//! How a record's fate reaches its sender: one [`Outcome`] per batch, shared by a
//! [`Delivery`] per record. A batch completes once (acknowledged or failed) and wakes every
//! delivery awaiting it; a record costs no channel of its own, and a delivery dropped unawaited
//! costs nothing but a reference count. A batch the broker refused as too large is split
//! (as Kafka's producer splits it): its outcome then points at the parts' outcomes, and each
//! delivery follows the part holding its record.

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
    /// Once split: each part's first offset delta in this batch, and its outcome, in order.
    parts: Vec<(i32, Arc<Outcome>)>,
    wakers: Vec<Waker>,
}

/// What polling an outcome found.
enum Polled {
    Ready(Result<Acked, ProduceError>),
    Pending,
    Split(Vec<(i32, Arc<Outcome>)>),
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

    /// Settles the batch; the first result wins (a split batch is settled by its parts).
    /// Whether this call settled it.
    pub fn complete(&self, result: Result<Acked, ProduceError>) -> bool {
        let wakers = {
            let mut state = self.lock();
            if state.result.is_some() || !state.parts.is_empty() {
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

    /// Hands the batch's records over to `parts` (each with the offset delta of its first
    /// record in this batch, in order): the batch was split. Whoever waits looks again.
    pub fn split_into(&self, parts: Vec<(i32, Arc<Outcome>)>) {
        let wakers = {
            let mut state = self.lock();
            if parts.is_empty() || state.result.is_some() || !state.parts.is_empty() {
                return;
            }
            state.parts = parts;
            std::mem::take(&mut state.wakers)
        };
        for waker in wakers {
            waker.wake();
        }
    }

    pub fn is_done(&self) -> bool {
        let parts = {
            let state = self.lock();
            if state.result.is_some() {
                return true;
            }
            if state.parts.is_empty() {
                return false;
            }
            state.parts.clone()
        };
        parts.iter().all(|(_, part)| part.is_done())
    }

    /// The result, once settled, or the parts it was split into; else registers `cx`'s waker
    /// (in `slot`, replaced on the next poll rather than added again).
    fn poll(&self, cx: &mut Context<'_>, slot: &mut Option<usize>) -> Polled {
        let mut state = self.lock();
        if let Some(result) = &state.result {
            return Polled::Ready(result.clone());
        }
        if !state.parts.is_empty() {
            return Polled::Split(state.parts.clone());
        }
        match slot.and_then(|i| state.wakers.get_mut(i)) {
            Some(waker) => waker.clone_from(cx.waker()),
            None => {
                *slot = Some(state.wakers.len());
                state.wakers.push(cx.waker().clone());
            }
        }
        Polled::Pending
    }

    /// Waits until the batch is settled (a split batch: every part).
    pub fn settled(self: &Arc<Self>) -> Settled {
        Settled { waiting: vec![self.clone()], slot: None, first_error: None, last: None }
    }
}

/// A future settled with its batch: with the first error of its parts if it was split, else
/// with the last part's acknowledgement.
pub(crate) struct Settled {
    /// Outcomes still to wait for, the next one last.
    waiting: Vec<Arc<Outcome>>,
    slot: Option<usize>,
    first_error: Option<ProduceError>,
    last: Option<Acked>,
}

impl Future for Settled {
    type Output = Result<Acked, ProduceError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        while let Some(next) = this.waiting.last().cloned() {
            match next.poll(cx, &mut this.slot) {
                Polled::Pending => return Poll::Pending,
                Polled::Ready(result) => {
                    this.waiting.pop();
                    this.slot = None;
                    match result {
                        Ok(acked) => this.last = Some(acked),
                        Err(e) => {
                            this.first_error.get_or_insert(e);
                        }
                    }
                }
                Polled::Split(parts) => {
                    this.waiting.pop();
                    this.slot = None;
                    this.waiting.extend(parts.into_iter().rev().map(|(_, part)| part));
                }
            }
        }
        Poll::Ready(match this.first_error.take() {
            Some(e) => Err(e),
            None => Ok(this.last.unwrap_or(Acked { base_offset: -1, log_append_time: -1 })),
        })
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

    /// Follows a split batch to the part that holds this record.
    fn follow(&mut self, parts: Vec<(i32, Arc<Outcome>)>) {
        // The first part starts at 0, so some part holds every record.
        let first = parts.first().cloned();
        let holding = parts.into_iter().take_while(|(start, _)| *start <= self.offset_delta).last();
        if let Some((start, part)) = holding.or(first) {
            self.offset_delta -= start.min(self.offset_delta);
            self.outcome = part;
            self.slot = None;
        }
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
        loop {
            match this.outcome.poll(cx, &mut this.slot) {
                Polled::Ready(result) => return Poll::Ready(result.map(|acked| this.metadata(acked))),
                Polled::Pending => return Poll::Pending,
                Polled::Split(parts) => this.follow(parts),
            }
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

#[cfg(test)]
mod tests {
    use std::task::Wake;

    use super::*;

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    fn poll<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        let waker = Waker::from(Arc::new(Noop));
        Pin::new(f).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn a_split_batch_settles_each_record_from_the_part_that_holds_it() {
        let whole = Outcome::new();
        let delivery = |delta| Delivery::new(whole.clone(), "t".into(), 0, delta, 7, (0, 0));
        let (mut first, mut fourth) = (delivery(0), delivery(3));
        let mut settled = whole.settled();
        assert!(poll(&mut first).is_pending() && poll(&mut settled).is_pending());
        let (a, b) = (Outcome::new(), Outcome::new());
        whole.split_into(vec![(0, a.clone()), (2, b.clone())]);
        assert!(!whole.complete(Ok(Acked { base_offset: 1, log_append_time: -1 })), "only the parts settle it");
        b.complete(Ok(Acked { base_offset: 100, log_append_time: -1 }));
        assert!(poll(&mut settled).is_pending() && !whole.is_done(), "the first part is still out");
        let Poll::Ready(Ok(meta)) = poll(&mut fourth) else { panic!("the second part is settled") };
        assert_eq!(meta.offset, 101, "the fourth record is the second of the second part");
        a.complete(Ok(Acked { base_offset: 50, log_append_time: -1 }));
        let Poll::Ready(Ok(meta)) = poll(&mut first) else { panic!("the first part is settled") };
        assert_eq!(meta.offset, 50);
        assert!(whole.is_done() && poll(&mut settled).is_ready());
    }
}
