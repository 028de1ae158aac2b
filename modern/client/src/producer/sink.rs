//! One task per broker (kgo's `sink`, the per-node half of Kafka's `Sender`): it drains the
//! partitions this broker leads, one batch of each at most per Produce request, up to
//! `max.request.size`, keeps up to `max.in.flight.requests.per.connection` requests in flight,
//! and settles each batch from the answer: acknowledged, sent again in sequence order after a
//! retriable error (nothing more of the partition goes out until every batch of it in flight
//! is back), or failed.
//!
//! Order on the wire: requests are handed to the connection in the order drained. Each is
//! polled once here, which queues it on the connection (the connection has slots to spare for
//! that), before the next is drained; only the wait for its answer runs in a task of its own.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use kwire::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kwire::messages::produce_response::PartitionProduceResponse;
use kwire::messages::{ApiKey, ProduceRequest, RequestKind};
use kwire::{ErrorCode, Records, TransactionalId, Uuid};
use kwire_connection::{Client, Received};
use tokio::sync::{mpsc, Notify};
use tracing::Instrument;

use super::accumulator::{PartitionQueue, PartitionState};
use super::batch::{add_sequence, sequence_at_or_before, ProducerBatch};
use super::delivery::Acked;
use super::error::ProduceError;
use super::metrics::BatchWritten;
use super::Inner;

/// A batch drained into a request.
struct Drained {
    queue: Arc<PartitionQueue>,
    batch: ProducerBatch,
}

/// A request in flight.
struct Pending {
    batches: Vec<Drained>,
    sent_at: Instant,
    bytes: usize,
}

type Done = (u64, Result<Option<Received>, kwire_connection::Error>);

pub(crate) struct Sink {
    inner: Arc<Inner>,
    broker: i32,
    wake: Arc<Notify>,
    client: Option<Client>,
    reconnect_at: Option<Instant>,
    reconnect_backoff: Duration,
    /// The partitions this broker leads, as of `layout`.
    partitions: Vec<Arc<PartitionQueue>>,
    layout: u64,
    /// Where the next drain starts, so that no partition is always last.
    start: usize,
    pending: HashMap<u64, Pending>,
    next_id: u64,
    done_tx: mpsc::UnboundedSender<Done>,
}

impl Sink {
    /// Runs the sink of `broker` until the producer shuts down.
    pub async fn run(inner: Arc<Inner>, broker: i32, wake: Arc<Notify>) {
        let (done_tx, mut done_rx) = mpsc::unbounded_channel();
        let mut shutdown = inner.shutdown_signal();
        let mut sink = Sink {
            inner,
            broker,
            wake,
            client: None,
            reconnect_at: None,
            reconnect_backoff: Duration::ZERO,
            partitions: Vec::new(),
            layout: u64::MAX,
            start: 0,
            pending: HashMap::new(),
            next_id: 0,
            done_tx,
        };
        loop {
            let next = sink.send_what_is_ready().await;
            let sleep = next.map(tokio::time::Instant::from_std);
            tokio::select! {
                _ = shutdown.wait_for(|stop| *stop) => break,
                Some((id, result)) = done_rx.recv() => sink.answered(id, result),
                _ = sink.wake.notified() => {}
                _ = async { match sleep { Some(at) => tokio::time::sleep_until(at).await, None => std::future::pending().await } } => {}
            }
        }
        // Whatever is still in flight is failed: nobody is left to read its answer.
        for (_, pending) in sink.pending.drain() {
            for d in pending.batches {
                let mut st = d.queue.lock();
                d.queue.landed(&mut st, &d.batch.outcome);
                drop(st);
                sink.inner.settle(&d.queue, d.batch, Err(ProduceError::closed()));
            }
        }
    }

    /// Drains and sends while requests may be added; when to look again (a linger ending, a
    /// backoff passing, a batch expiring), if nothing wakes the sink first.
    async fn send_what_is_ready(&mut self) -> Option<Instant> {
        let max_in_flight = self.inner.config.max_in_flight;
        let mut next = None;
        while self.pending.len() < max_in_flight {
            let now = Instant::now();
            let (drained, wake_at) = self.drain(now);
            next = wake_at;
            if drained.is_empty() {
                break;
            }
            self.inner.availability.ready(self.broker, now);
            let Some(client) = self.client().await else {
                self.undo(drained);
                next = earliest(next, self.reconnect_at);
                break;
            };
            self.issue(&client, drained);
            self.inner.availability.drained(self.broker, Instant::now());
        }
        // Batches wait behind a full window of requests: the broker is not keeping up.
        if self.pending.len() >= max_in_flight
            && self.partitions.iter().any(|q| q.leader() == self.broker && q.queued.load(Ordering::Relaxed) > 0)
        {
            self.inner.availability.ready(self.broker, Instant::now());
        }
        next
    }

    /// The connection to this broker: the open one, else a new one (not before the
    /// reconnect backoff); on failure, metadata is read again (the broker may be gone).
    async fn client(&mut self) -> Option<Client> {
        if let Some(client) = self.client.as_ref().filter(|c| !c.is_closed()) {
            return Some(client.clone());
        }
        self.client = None;
        if self.reconnect_at.is_some_and(|at| at > Instant::now()) {
            return None;
        }
        match self.inner.cluster.broker(self.broker).await {
            Ok(client) => {
                self.reconnect_backoff = Duration::ZERO;
                self.reconnect_at = None;
                self.client = Some(client.clone());
                Some(client)
            }
            Err(error) => {
                tracing::debug!(broker = self.broker, %error, "cannot reach the broker");
                self.inner.want_metadata();
                let config = &self.inner.config;
                self.reconnect_backoff = (self.reconnect_backoff * 2)
                    .clamp(config.retry_backoff, config.retry_backoff_max.max(config.retry_backoff));
                self.reconnect_at = Some(Instant::now() + self.reconnect_backoff);
                None
            }
        }
    }

    /// One request's batches: from each partition this broker leads, its first closed batch
    /// (closing the open one once its linger is over), while they fit `max.request.size`.
    fn drain(&mut self, now: Instant) -> (Vec<Drained>, Option<Instant>) {
        let inner = self.inner.clone();
        let layout = inner.accumulator.layout();
        if layout != self.layout {
            self.partitions = inner.accumulator.led_by(self.broker);
            self.layout = layout;
        }
        if inner.txn.as_ref().is_some_and(|t| !t.may_send()) {
            return (Vec::new(), None);
        }
        let config = &inner.config;
        let settings = inner.settings();
        let flush_now = inner.memory.exhausted() || inner.flushing();
        let mut out = Vec::new();
        let mut size = 0;
        let mut next = None;
        let n = self.partitions.len();
        for i in 0..n {
            let queue = &self.partitions[(self.start + i) % n];
            if queue.leader() != self.broker {
                continue;
            }
            let mut st = queue.lock();
            next = earliest(next, inner.expire(queue, &mut st, now));
            if !st.in_flight.is_empty() && st.sent_to != self.broker {
                // Batches of it are in flight to its previous leader: they come back first.
                continue;
            }
            if st.blocked {
                if !st.in_flight.is_empty() {
                    continue;
                }
                if st.needs_reset && inner.txn.is_none() && settings.idempotent {
                    match inner.identity.bump_from(st.identity) {
                        Some(fresh) => queue.reset_sequences(&mut st, fresh),
                        None => {
                            inner.want_new_producer_id();
                            continue;
                        }
                    }
                }
                if !st.needs_reset || inner.txn.is_none() {
                    st.blocked = false;
                }
            }
            if st.blocked {
                continue;
            }
            if let Some(at) = st.retry_at {
                if at > now {
                    next = earliest(next, Some(at));
                    continue;
                }
                st.retry_at = None;
            }
            if st.ready.is_empty() {
                let Some(open) = st.open.as_ref().filter(|o| o.records() > 0) else { continue };
                let due = open.created + config.linger;
                if due > now && !flush_now {
                    next = earliest(next, Some(due));
                    continue;
                }
                queue.close(&mut st, &settings);
            }
            let Some(first) = st.ready.front() else { continue };
            if !out.is_empty() && size + first.bytes.len() > config.max_request_size {
                next = Some(now);
                break;
            }
            let Some(mut batch) = st.ready.pop_front() else { continue };
            batch.attempts += 1;
            st.in_flight.push_back(batch.outcome.clone());
            st.sent_to = self.broker;
            queue.queued.fetch_sub(1, Ordering::Relaxed);
            size += batch.bytes.len();
            out.push(Drained { queue: queue.clone(), batch });
        }
        self.start = if n == 0 { 0 } else { (self.start + 1) % n };
        (out, next)
    }

    /// Puts drained batches back, unsent (no connection to send them on).
    fn undo(&mut self, drained: Vec<Drained>) {
        for d in drained.into_iter().rev() {
            let mut st = d.queue.lock();
            d.queue.landed(&mut st, &d.batch.outcome);
            let mut batch = d.batch;
            batch.attempts -= 1;
            st.ready.push_front(batch);
            d.queue.queued.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Builds the Produce request and queues it on the connection.
    fn issue(&mut self, client: &Client, batches: Vec<Drained>) {
        let inner = &self.inner;
        let metadata = inner.cluster.metadata();
        let mut version = client.version_of(ApiKey::Produce).unwrap_or(3);
        if inner.txn.as_ref().is_some_and(|t| !t.is_v2()) {
            // A v1 transaction cannot use Produce v12+ (it would add partitions itself).
            version = version.min(11);
        }
        let mut topics: Vec<TopicProduceData> = Vec::new();
        let mut bytes = 0;
        for d in &batches {
            let topic_id = metadata.topic_id(&d.queue.topic).unwrap_or_default();
            if topic_id.is_nil() {
                // Without the id, name the topic (v12).
                version = version.min(12);
            }
            bytes += d.batch.bytes.len();
            let data = PartitionProduceData {
                index: d.queue.partition,
                records: Some(Records::from_bytes(d.batch.bytes.clone())),
                ..Default::default()
            };
            match topics.iter_mut().find(|t| t.name.as_str() == &*d.queue.topic) {
                Some(t) => t.partition_data.push(data),
                None => topics.push(TopicProduceData {
                    name: d.queue.topic.as_ref().into(),
                    topic_id,
                    partition_data: vec![data],
                    ..Default::default()
                }),
            }
        }
        let request = ProduceRequest {
            transactional_id: inner.txn.as_ref().map(|t| TransactionalId::from(t.id.as_str())),
            acks: inner.config.acks.wire(),
            timeout_ms: inner.config.request_timeout.as_millis().min(i32::MAX as u128) as i32,
            topic_data: topics,
            ..Default::default()
        };
        let id = self.next_id;
        self.next_id += 1;
        let span = tracing::debug_span!("produce", broker = self.broker, batches = batches.len(), bytes);
        let c = client.clone();
        let mut send =
            Box::pin(async move { c.send_kind(RequestKind::Produce(request), version).await }.instrument(span));
        inner.metrics.request_sent();
        self.pending.insert(id, Pending { batches, sent_at: Instant::now(), bytes });
        // The first poll queues the request on the connection now, in drain order.
        let waker = futures_task_noop();
        let mut cx = std::task::Context::from_waker(&waker);
        match send.as_mut().poll(&mut cx) {
            Poll::Ready(result) => {
                let _ = self.done_tx.send((id, result));
            }
            Poll::Pending => {
                let done = self.done_tx.clone();
                tokio::spawn(async move {
                    let result = send.await;
                    let _ = done.send((id, result));
                });
            }
        }
    }

    /// Settles each batch of request `id` from its answer.
    fn answered(&mut self, id: u64, result: Result<Option<Received>, kwire_connection::Error>) {
        let Some(pending) = self.pending.remove(&id) else { return };
        let inner = self.inner.clone();
        inner.metrics.request_done();
        let latency = pending.sent_at.elapsed();
        let ok = result.is_ok();
        if !inner.hooks.is_empty() {
            inner.hooks.each(|h| h.on_produce_response(self.broker, pending.batches.len(), pending.bytes, latency, ok));
        }
        let response = match result {
            Err(error) => {
                tracing::debug!(broker = self.broker, %error, "produce request failed");
                self.client = None;
                inner.want_metadata();
                let error = ProduceError::from(error.clone());
                for d in pending.batches {
                    self.failed(d, ErrorCode::NETWORK_EXCEPTION, error.clone(), None);
                }
                return;
            }
            // acks=0: written is all there is to know.
            Ok(None) => {
                for d in pending.batches {
                    self.acked(d, Acked { base_offset: -1, log_append_time: -1 });
                }
                return;
            }
            Ok(Some(received)) => received.into_typed::<ProduceRequest>(),
        };
        let response = match response {
            Ok(r) => r,
            Err(error) => {
                let error = ProduceError::from(error);
                for d in pending.batches {
                    self.failed(d, ErrorCode::UNKNOWN_SERVER_ERROR, error.clone(), None);
                }
                return;
            }
        };
        let mut answers: HashMap<(String, Uuid, i32), PartitionProduceResponse> = HashMap::new();
        for topic in response.responses {
            for p in topic.partition_responses {
                answers.insert((topic.name.to_string(), topic.topic_id, p.index), p);
            }
        }
        let metadata = inner.cluster.metadata();
        for d in pending.batches {
            let topic_id = metadata.topic_id(&d.queue.topic).unwrap_or_default();
            let key_by_name = (d.queue.topic.to_string(), Uuid::nil(), d.queue.partition);
            let key_by_id = (String::new(), topic_id, d.queue.partition);
            let answer = answers.remove(&key_by_name).or_else(|| answers.remove(&key_by_id)).or_else(|| {
                let any =
                    answers.keys().find(|k| k.2 == d.queue.partition && (k.0 == *d.queue.topic || k.1 == topic_id));
                any.cloned().and_then(|k| answers.remove(&k))
            });
            match answer {
                Some(p) if p.error_code == ErrorCode::NONE => {
                    self.acked(d, Acked { base_offset: p.base_offset, log_append_time: p.log_append_time_ms })
                }
                Some(p) if p.error_code == ErrorCode::DUPLICATE_SEQUENCE_NUMBER => {
                    // Written before; the broker no longer knows where (Kafka's client too).
                    self.acked(d, Acked { base_offset: -1, log_append_time: -1 })
                }
                Some(p) => {
                    let message = p.error_message.as_ref().map(|m| m.to_string()).or_else(|| {
                        p.record_errors
                            .first()
                            .and_then(|r| r.batch_index_error_message.as_ref().map(|m| m.to_string()))
                    });
                    let error = ProduceError::from_code(p.error_code, message);
                    let leader = (p.current_leader.leader_id.get() >= 0).then_some(p.current_leader.leader_id.get());
                    self.failed(d, p.error_code, error, leader);
                }
                None => {
                    let error = ProduceError::Broker {
                        code: ErrorCode::UNKNOWN_SERVER_ERROR,
                        message: Some(format!("the Produce response has no {}-{}", d.queue.topic, d.queue.partition)),
                    };
                    self.failed(d, ErrorCode::NETWORK_EXCEPTION, error, None);
                }
            }
        }
    }

    /// A partition that moved to another broker while its batches were in flight here waits
    /// for them: once they are back, its new leader's sink must look at it again.
    fn wake_leader(&self, queue: &PartitionQueue) {
        let leader = queue.leader();
        if leader != self.broker {
            self.inner.wake_sink(leader);
        }
    }

    fn acked(&self, d: Drained, acked: Acked) {
        {
            let mut st = d.queue.lock();
            d.queue.landed(&mut st, &d.batch.outcome);
            let last = d.batch.last_sequence();
            if d.batch.base_sequence >= 0
                && d.batch.identity == st.identity
                && !sequence_at_or_before(last, st.last_acked)
            {
                st.last_acked = last;
            }
        }
        let inner = &self.inner;
        if !inner.hooks.is_empty() {
            let written = BatchWritten {
                broker: self.broker,
                topic: &d.queue.topic,
                partition: d.queue.partition,
                base_offset: acked.base_offset,
                records: d.batch.records,
                uncompressed_bytes: d.batch.uncompressed,
                compressed_bytes: d.batch.bytes.len(),
                attempts: d.batch.attempts,
            };
            inner.hooks.each(|h| h.on_batch_written(&written));
        }
        inner.metrics.batch_acked(d.batch.records as u64, d.batch.uncompressed as u64, d.batch.bytes.len() as u64);
        self.wake_leader(&d.queue);
        inner.settle(&d.queue, d.batch, Ok(acked));
    }

    /// A batch came back with `code` (NETWORK_EXCEPTION for a lost connection): sent again
    /// when Kafka's client would, else failed with `error`.
    fn failed(&self, d: Drained, code: ErrorCode, error: ProduceError, leader: Option<i32>) {
        let inner = &self.inner;
        let config = &inner.config;
        let transactional = inner.txn.is_some();
        let idempotent = inner.settings().idempotent;
        let now = Instant::now();
        let queue = d.queue;
        let batch = d.batch;
        let mut st = queue.lock();
        queue.landed(&mut st, &batch.outcome);
        // Too large for the broker (its message.max.bytes for the topic): split in halves and
        // sent again, as Kafka's producer does, without counting a retry. The parts take the
        // whole's sequences in order, so the batches after it stay numbered right (they come
        // back OUT_OF_ORDER_SEQUENCE_NUMBER and follow the parts).
        let may_send = inner.txn.as_ref().is_none_or(|t| t.may_send());
        if code == ErrorCode::MESSAGE_TOO_LARGE && may_send && batch.created + config.delivery_timeout > now {
            let target = (batch.uncompressed / 2).min(inner.settings().batch_size).max(1);
            if let Some(parts) = batch.split(target) {
                tracing::warn!(topic = %queue.topic, partition = queue.partition, records = batch.records, bytes = batch.bytes.len(), parts = parts.len(), "the broker refused a batch as too large: splitting it");
                if !inner.hooks.is_empty() {
                    inner.hooks.each(|h| h.on_batch_error(&queue.topic, queue.partition, &error, true));
                }
                let outcomes = parts.iter().map(|(start, part)| (*start, part.outcome.clone())).collect();
                for (_, part) in parts.into_iter().rev() {
                    queue.requeue(&mut st, part);
                    queue.queued.fetch_add(1, Ordering::Relaxed);
                }
                batch.outcome.split_into(outcomes);
                drop(st);
                // The parts go now, from whichever sink leads the partition (this one too).
                self.inner.wake_sink(queue.leader());
                return;
            }
        }
        let is_next = batch.base_sequence >= 0
            && batch.identity == st.identity
            && batch.base_sequence == add_sequence(st.last_acked, 1);
        // A batch numbered after this one was acknowledged under the same epoch, yet the
        // broker refuses this one's sequence. With at most 5 batches in flight this one is
        // inside the window of batches the broker answers retries from, so the broker never
        // wrote it: a leader that had no state for this producer took the later batch first
        // (Kafka accepts any first sequence then). Kafka's client never calls such a batch
        // delivered; it fails, and the partition starts again under a new epoch.
        let behind_acked = code == ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER
            && batch.base_sequence >= 0
            && batch.identity == st.identity
            && sequence_at_or_before(batch.last_sequence(), st.last_acked);
        let retriable = !behind_acked
            && match code {
                // A gap: an earlier batch failed (retry after it), or, for the next batch, the
                // broker lost what it had (start sequences again, KIP-360).
                ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER => idempotent && (!transactional || !is_next),
                ErrorCode::UNKNOWN_PRODUCER_ID | ErrorCode::INVALID_PRODUCER_EPOCH => idempotent && !transactional,
                ErrorCode::NETWORK_EXCEPTION => true,
                c => c.is_retriable(),
            };
        if matches!(
            code,
            ErrorCode::NOT_LEADER_OR_FOLLOWER
                | ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                | ErrorCode::UNKNOWN_TOPIC_ID
                | ErrorCode::LEADER_NOT_AVAILABLE
                | ErrorCode::FENCED_LEADER_EPOCH
                | ErrorCode::KAFKA_STORAGE_ERROR
                | ErrorCode::NETWORK_EXCEPTION
        ) {
            inner.want_metadata();
        }
        if let Some(leader) = leader.filter(|l| *l != self.broker && inner.cluster.metadata().brokers.contains_key(l)) {
            // KIP-951: the answer names the new leader; send there without waiting for Metadata.
            inner.accumulator.set_leader(&queue, leader);
            inner.wake_sink(leader);
        }
        let expired = batch.created + config.delivery_timeout <= now;
        let exhausted = batch.attempts > config.retries;
        // A transaction being aborted sends nothing more: its batches back from a failed
        // attempt are aborted too (the abort waits for them).
        let aborting = inner.txn.as_ref().is_some_and(|t| !t.may_send());
        let will_retry = retriable && !expired && !exhausted && !aborting;
        if !inner.hooks.is_empty() {
            inner.hooks.each(|h| h.on_batch_error(&queue.topic, queue.partition, &error, will_retry));
        }
        if will_retry {
            match code {
                ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER if is_next => st.needs_reset = true,
                ErrorCode::UNKNOWN_PRODUCER_ID => st.needs_reset = true,
                ErrorCode::INVALID_PRODUCER_EPOCH => {
                    inner.identity.renew_id();
                    st.needs_reset = true;
                }
                _ => {}
            }
            tracing::debug!(topic = %queue.topic, partition = queue.partition, %error, attempts = batch.attempts, sequence = batch.base_sequence, "retrying a batch");
            inner.metrics.retried();
            st.blocked = true;
            st.retry_at = Some(now + backoff(config.retry_backoff, config.retry_backoff_max, batch.attempts));
            queue.requeue(&mut st, batch);
            queue.queued.fetch_add(1, Ordering::Relaxed);
            drop(st);
            self.wake_leader(&queue);
            return;
        }
        // Failed for good. Its sequences leave a gap for the batches after it: they start
        // again under a new epoch once nothing is in flight.
        if batch.base_sequence >= 0 {
            st.needs_reset = true;
            st.blocked = true;
        }
        drop(st);
        self.wake_leader(&queue);
        let error = if aborting && retriable {
            ProduceError::TransactionAborted
        } else if expired {
            ProduceError::Timeout(format!(
                "Expiring {} record(s) for {}-{}: {} ms has passed since batch creation (last error: {error})",
                batch.records,
                queue.topic,
                queue.partition,
                now.duration_since(batch.created).as_millis()
            ))
        } else if matches!(code, ErrorCode::MESSAGE_TOO_LARGE | ErrorCode::RECORD_LIST_TOO_LARGE) {
            ProduceError::RecordTooLarge {
                topic: queue.topic.clone(),
                size: batch.bytes.len(),
                limit: batch.bytes.len().saturating_sub(1),
                what: "the broker's message.max.bytes for the topic",
            }
        } else {
            error
        };
        if let Some(txn) = &inner.txn {
            txn.abortable(error.clone());
        }
        inner.settle(&queue, batch, Err(error));
    }
}

/// `retry.backoff.ms` doubled per attempt up to `retry.backoff.max.ms`, with ±20% jitter as
/// Kafka's clients add.
fn backoff(base: Duration, max: Duration, attempts: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << attempts.saturating_sub(1).min(16));
    let capped = exp.min(max.max(base));
    capped.mul_f64(0.8 + fastrand::f64() * 0.4)
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A waker that does nothing: the first poll of a request only queues it; the task that
/// awaits its answer polls it again with its own.
fn futures_task_noop() -> std::task::Waker {
    std::task::Waker::noop().clone()
}

impl Inner {
    /// Fails the batches of `queue` that waited past `delivery.timeout.ms` and are not in
    /// flight; when the next one expires.
    pub(crate) fn expire(&self, queue: &PartitionQueue, st: &mut PartitionState, now: Instant) -> Option<Instant> {
        let timeout = self.config.delivery_timeout;
        let mut expired = Vec::new();
        while st.ready.front().is_some_and(|b| b.created + timeout <= now) {
            if let Some(batch) = st.ready.pop_front() {
                if batch.base_sequence >= 0 {
                    st.needs_reset = true;
                    st.blocked = true;
                }
                expired.push(batch);
            }
        }
        let open_expired = st.open.as_ref().is_some_and(|o| o.created + timeout <= now);
        let open = if open_expired { st.open.take() } else { None };
        let next = st
            .ready
            .front()
            .map(|b| b.created + timeout)
            .into_iter()
            .chain(st.open.as_ref().map(|o| o.created + timeout))
            .min();
        let message = |records: usize, created: Instant| {
            ProduceError::Timeout(format!(
                "Expiring {records} record(s) for {}-{}: {} ms has passed since batch creation",
                queue.topic,
                queue.partition,
                now.duration_since(created).as_millis()
            ))
        };
        for batch in expired {
            queue.queued.fetch_sub(1, Ordering::Relaxed);
            let error = message(batch.records as usize, batch.created);
            if let Some(txn) = &self.txn {
                txn.abortable(error.clone());
            }
            self.settle_failed(queue, &batch.outcome, batch.memory, batch.records as u64, error);
        }
        if let Some(open) = open {
            queue.queued.fetch_sub(1, Ordering::Relaxed);
            let error = message(open.records(), open.created);
            if let Some(txn) = &self.txn {
                txn.abortable(error.clone());
            }
            self.settle_failed(queue, &open.outcome, open.memory, open.records() as u64, error);
        }
        next
    }
}
