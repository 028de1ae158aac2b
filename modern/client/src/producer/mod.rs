//! A producer for Apache Kafka, after Kafka's Java producer and franz-go's kgo: records
//! batched per partition (`accumulator.rs`) and sent by one task per broker (`sink.rs`), one
//! Produce request carrying every ready partition; Kafka's partitioner (`partitioner.rs`);
//! `buffer.memory` backpressure (`memory.rs`); idempotence on by default, with KIP-360's
//! recovery (`idempotence.rs`); transactions v1 and v2 (`transactions.rs`); counters and hooks
//! (`metrics.rs`). Every call is async; none blocks the runtime.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kwire_client::producer::ProduceError> {
//! use kwire_client::producer::{Producer, ProducerConfig, ProducerRecord};
//!
//! let config = ProducerConfig::new("127.0.0.1:9092").set("linger.ms", "10")?;
//! let producer = Producer::connect(config).await?;
//! // The first await buffers the record (waiting for room up to max.block.ms); the second
//! // waits for Kafka's acknowledgement.
//! let delivery = producer.send(ProducerRecord::new("orders", "paid").key("order-1")).await?;
//! let written = delivery.await?;
//! println!("{}-{} at offset {}", written.topic, written.partition, written.offset);
//! producer.close(std::time::Duration::from_secs(30)).await?;
//! # Ok(()) }
//! ```

mod accumulator;
mod availability;
mod batch;
pub mod config;
mod delivery;
pub mod error;
mod idempotence;
mod memory;
pub mod metrics;
pub mod partitioner;
pub mod record;
mod sink;
mod transactions;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kwire::ErrorCode;
use kwire_connection::cluster::TopicMetadata;
use kwire_connection::Cluster;
use tokio::sync::{watch, Notify};

use accumulator::{Accumulator, BatchSettings, PartitionQueue, TopicQueues};
use batch::ProducerBatch;
use delivery::{Acked, Outcome};
use idempotence::Idempotence;
use memory::Memory;
use metrics::{Hooks, Metrics};
use transactions::Transactions;

pub use config::{Acks, ProducerConfig, TransactionProtocol};
pub use delivery::{Deliveries, Delivery};
pub use error::ProduceError;
pub use idempotence::Identity;
pub use metrics::{BatchWritten, MetricsSnapshot, ProducerHook};
pub use partitioner::{partition_for_key, Partitioner};
pub use record::{Header, ProducerRecord, RecordMetadata};
pub use transactions::ConsumerGroupMetadata;

/// A Kafka producer. Cheap to clone: clones share the connections, buffers and tasks, which
/// stop when the last clone is dropped (records not yet sent then fail) or on
/// [`Producer::close`].
#[derive(Clone)]
pub struct Producer {
    handle: Arc<Handle>,
}

/// Shuts the producer down when the last clone goes.
struct Handle {
    inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.inner.shut_down();
    }
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer").field("config", &self.handle.inner.config).finish_non_exhaustive()
    }
}

/// What the producer's handles and tasks share.
pub(crate) struct Inner {
    cluster: Cluster,
    config: ProducerConfig,
    idempotent: bool,
    accumulator: Accumulator,
    memory: Memory,
    identity: Idempotence,
    txn: Option<Transactions>,
    metrics: Metrics,
    hooks: Hooks,
    sinks: Mutex<HashMap<i32, Arc<Notify>>>,
    /// Which brokers keep up (`partitioner.availability.timeout.ms`).
    availability: availability::Availability,
    metadata_wanted: Notify,
    new_id_wanted: Notify,
    /// Sends are refused (closing or closed).
    closed: AtomicBool,
    /// Flushes under way: batches go without lingering.
    flushing: AtomicUsize,
    /// Tasks stop when this turns true.
    shutdown: watch::Sender<bool>,
    /// One caller at a time waits for a new topic's metadata.
    topic_lookup: tokio::sync::Mutex<()>,
}

impl Producer {
    /// Connects to the bootstrap servers and, for an idempotent producer without a
    /// `transactional.id`, gets a producer id (InitProducerId). A transactional producer calls
    /// [`Producer::init_transactions`] next.
    pub async fn connect(config: ProducerConfig) -> Result<Producer, ProduceError> {
        config.validate()?;
        let servers: Vec<&str> = config.bootstrap_servers.iter().map(String::as_str).collect();
        let mut cluster = Cluster::connect(&servers, config.client_config()).await?;
        cluster.backoff = config.retry_backoff;
        cluster.max_backoff = config.retry_backoff_max.max(config.retry_backoff);
        let idempotent = config.idempotent();
        let txn = config
            .transactional_id
            .clone()
            .map(|id| Transactions::new(id, config.transaction_timeout, config.transaction_protocol));
        let (shutdown, _) = watch::channel(false);
        let inner = Arc::new(Inner {
            cluster,
            memory: Memory::new(config.buffer_memory),
            idempotent,
            accumulator: Accumulator::default(),
            identity: Idempotence::new(),
            txn,
            metrics: Metrics::default(),
            hooks: Hooks::default(),
            sinks: Mutex::new(HashMap::new()),
            // Only with adaptive partitioning, as in Kafka's producer.
            availability: availability::Availability::new(if config.partitioner_adaptive {
                config.partitioner_availability_timeout
            } else {
                Duration::ZERO
            }),
            metadata_wanted: Notify::new(),
            new_id_wanted: Notify::new(),
            closed: AtomicBool::new(false),
            flushing: AtomicUsize::new(0),
            shutdown,
            topic_lookup: tokio::sync::Mutex::new(()),
            config,
        });
        if idempotent && inner.txn.is_none() {
            inner.identity.renew(&inner.cluster, inner.config.max_block, inner.config.retry_backoff).await?;
        }
        tokio::spawn(metadata_loop(inner.clone()));
        tokio::spawn(producer_id_loop(inner.clone()));
        Ok(Producer { handle: Arc::new(Handle { inner }) })
    }

    fn inner(&self) -> &Arc<Inner> {
        &self.handle.inner
    }

    /// Buffers `record` for its partition and returns its [`Delivery`], a future of where
    /// Kafka wrote it. Waits (up to `max.block.ms`) for the topic's metadata and for room in
    /// `buffer.memory`; fails at once for a record over `max.request.size`, a partition the
    /// topic does not have, or a closed producer.
    pub async fn send(&self, record: ProducerRecord) -> Result<Delivery, ProduceError> {
        self.inner().enqueue(record, None).await
    }

    /// Buffers many records in one call; each gets its delivery or the error that kept it
    /// out. Awaiting the [`Deliveries`] gives every record's metadata, in order.
    pub async fn send_all(&self, records: impl IntoIterator<Item = ProducerRecord>) -> Deliveries {
        let inner = self.inner();
        let mut cache: Option<Arc<TopicQueues>> = None;
        let mut deliveries = Vec::new();
        for record in records {
            let delivery = inner.enqueue(record, cache.as_ref()).await;
            if let Ok(d) = &delivery {
                if cache.as_ref().is_none_or(|t| *t.name != *d.topic()) {
                    cache = inner.accumulator.topic(d.topic());
                }
            }
            deliveries.push(delivery);
        }
        Deliveries { deliveries }
    }

    /// Sends every buffered record now (no lingering) and waits until each is acknowledged
    /// or failed.
    pub async fn flush(&self) -> Result<(), ProduceError> {
        self.inner().flush().await;
        Ok(())
    }

    /// Refuses new sends, aborts a transaction in progress, flushes within `timeout`, then
    /// fails what is left ("Producer is closed forcefully") and stops the producer's tasks.
    pub async fn close(&self, timeout: Duration) -> Result<(), ProduceError> {
        let inner = self.inner();
        if inner.closed.swap(true, Ordering::AcqRel) && *inner.shutdown.borrow() {
            return Ok(());
        }
        let deadline = Instant::now() + timeout;
        if let Some(txn) = &inner.txn {
            if matches!(txn.state(), transactions::TxnState::InTransaction | transactions::TxnState::Abortable(_)) {
                let _ = tokio::time::timeout_at(deadline.into(), inner.abort_transaction()).await;
            }
        }
        let flushed = tokio::time::timeout_at(deadline.into(), inner.flush()).await.is_ok();
        inner.shut_down();
        if flushed {
            Ok(())
        } else {
            Err(ProduceError::Timeout(format!("records were still unsent after {timeout:?}; they were failed")))
        }
    }

    /// The producer's counters now.
    pub fn metrics(&self) -> MetricsSnapshot {
        let inner = self.inner();
        inner.metrics.snapshot(inner.memory.in_use(), inner.memory.total())
    }

    /// Adds a hook, called from now on.
    pub fn add_hook(&self, hook: Arc<dyn ProducerHook>) {
        self.inner().hooks.list.write().unwrap_or_else(|e| e.into_inner()).push(hook);
    }

    /// The cluster the producer talks to (its metadata, its connections).
    pub fn cluster(&self) -> &Cluster {
        &self.inner().cluster
    }

    /// The producer id and epoch in use (`Identity::NONE` unless idempotent).
    pub fn identity(&self) -> Identity {
        self.inner().identity.current()
    }

    /// `topic`'s partitions, reading Metadata if needed (Java's `partitionsFor`).
    pub async fn partitions_for(&self, topic: &str) -> Result<Arc<TopicMetadata>, ProduceError> {
        Ok(self.inner().cluster.topic(topic).await?)
    }

    /// Gets the producer id for `transactional.id`, fencing older producers of that id and
    /// finishing their open transaction. Once, before the first transaction.
    pub async fn init_transactions(&self) -> Result<(), ProduceError> {
        self.inner().init_transactions().await
    }

    /// Starts a transaction: sends until the commit or abort belong to it.
    pub fn begin_transaction(&self) -> Result<(), ProduceError> {
        self.inner().begin_transaction()
    }

    /// Commits consumed offsets (`(topic, partition, next offset)`) as part of the
    /// transaction: consume-transform-produce, exactly once.
    pub async fn send_offsets_to_transaction(
        &self,
        offsets: &[(&str, i32, i64)],
        group: &ConsumerGroupMetadata,
    ) -> Result<(), ProduceError> {
        self.inner().send_offsets_to_transaction(offsets, group).await
    }

    /// Flushes, then commits. A record that failed makes it fail with
    /// [`ProduceError::TransactionAbortable`]: abort then. A timeout may be retried.
    pub async fn commit_transaction(&self) -> Result<(), ProduceError> {
        self.inner().commit_transaction().await
    }

    /// Fails the records not yet sent ([`ProduceError::TransactionAborted`]), waits for those
    /// in flight, and aborts.
    pub async fn abort_transaction(&self) -> Result<(), ProduceError> {
        self.inner().abort_transaction().await
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Kafka's topic name rules: 1 to 249 of `[a-zA-Z0-9._-]`, not `.` or `..`.
fn check_topic_name(name: &str) -> Result<(), ProduceError> {
    let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.len() > 249 || name == "." || name == ".." || !name.chars().all(legal) {
        return Err(ProduceError::InvalidTopic(format!(
            "{name:?} is not a valid topic name: 1 to 249 characters of ASCII letters, digits, '.', '_' and '-'"
        )));
    }
    Ok(())
}

impl Inner {
    fn settings(&self) -> BatchSettings<'_> {
        BatchSettings {
            batch_size: self.config.batch_size.max(1),
            compression: self.config.compression,
            compression_level: self.config.level_of_compression(),
            idempotent: self.idempotent,
            transactional: self.txn.is_some(),
            identity: &self.identity,
        }
    }

    fn flushing(&self) -> bool {
        self.flushing.load(Ordering::Relaxed) > 0 || self.closed.load(Ordering::Relaxed)
    }

    fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.subscribe()
    }

    fn want_metadata(&self) {
        self.metadata_wanted.notify_one();
    }

    fn want_new_producer_id(&self) {
        self.new_id_wanted.notify_one();
    }

    /// Wakes the sink of `broker`, starting it if there is none.
    fn wake_sink(self: &Arc<Self>, broker: i32) {
        if broker < 0 {
            return;
        }
        let mut sinks = self.sinks.lock().unwrap_or_else(|e| e.into_inner());
        match sinks.get(&broker) {
            Some(wake) => wake.notify_one(),
            None => {
                if *self.shutdown.borrow() {
                    return;
                }
                let wake = Arc::new(Notify::new());
                sinks.insert(broker, wake.clone());
                tokio::spawn(sink::Sink::run(self.clone(), broker, wake));
            }
        }
    }

    fn wake_all_sinks(&self) {
        for wake in self.sinks.lock().unwrap_or_else(|e| e.into_inner()).values() {
            wake.notify_one();
        }
    }

    /// Settles a closed batch: its deliveries complete, its memory comes back.
    fn settle(&self, _queue: &PartitionQueue, batch: ProducerBatch, result: Result<Acked, ProduceError>) {
        if result.is_err() {
            self.metrics.batch_failed(batch.records as u64);
        }
        batch.outcome.complete(result);
        self.memory.give(batch.memory);
    }

    /// Fails a batch that was never sent (open, or expired before sending).
    fn settle_failed(
        &self,
        _queue: &PartitionQueue,
        outcome: &Outcome,
        memory: usize,
        records: u64,
        error: ProduceError,
    ) {
        self.metrics.batch_failed(records);
        outcome.complete(Err(error));
        self.memory.give(memory);
    }

    /// The queues of `name`, waiting (until `deadline`) for Metadata to know the topic.
    async fn topic(self: &Arc<Self>, name: &str, deadline: Instant) -> Result<Arc<TopicQueues>, ProduceError> {
        if let Some(t) = self.accumulator.topic(name) {
            return Ok(t);
        }
        check_topic_name(name)?;
        let _one = tokio::time::timeout_at(deadline.into(), self.topic_lookup.lock())
            .await
            .map_err(|_| self.topic_timeout(name, None))?;
        if let Some(t) = self.accumulator.topic(name) {
            return Ok(t);
        }
        let backoff = self.config.retry_backoff;
        loop {
            let refreshed = tokio::time::timeout_at(deadline.into(), self.cluster.refresh_topics(&[name], true)).await;
            let last = match refreshed {
                Err(_) => None,
                Ok(Err(e)) if !e.is_retriable() => return Err(ProduceError::from(e)),
                Ok(Err(e)) => Some(ProduceError::from(e)),
                Ok(Ok(())) => match self.cluster.metadata().topics.get(name) {
                    Some(t) if t.error == ErrorCode::NONE && !t.partitions.is_empty() => {
                        return Ok(self.apply_topic(t));
                    }
                    Some(t) if t.error == ErrorCode::TOPIC_AUTHORIZATION_FAILED => {
                        return Err(ProduceError::TopicAuthorization(name.to_string()))
                    }
                    Some(t) if t.error == ErrorCode::INVALID_TOPIC_EXCEPTION => {
                        return Err(ProduceError::InvalidTopic(name.to_string()))
                    }
                    Some(t) => Some(ProduceError::from_code(t.error, None)),
                    None => None,
                },
            };
            if self.closed.load(Ordering::Relaxed) {
                return Err(ProduceError::closed());
            }
            if Instant::now() + backoff >= deadline {
                return Err(self.topic_timeout(name, last));
            }
            tokio::time::sleep(backoff).await;
        }
    }

    fn topic_timeout(&self, name: &str, last: Option<ProduceError>) -> ProduceError {
        let why = last.map(|e| format!(" ({e})")).unwrap_or_default();
        ProduceError::Timeout(format!(
            "Topic {name} not present in metadata after {} ms.{why}",
            self.config.max_block.as_millis()
        ))
    }

    /// Takes what Metadata says of a topic into the accumulator, starting sinks for its leaders.
    fn apply_topic(self: &Arc<Self>, topic: &TopicMetadata) -> Arc<TopicQueues> {
        let leaders: Vec<i32> = topic
            .partitions
            .iter()
            .map(|p| if p.error == ErrorCode::NONE || p.leader >= 0 { p.leader } else { -1 })
            .collect();
        let queues = self.accumulator.update_topic(&topic.name, &leaders);
        for leader in leaders {
            self.wake_sink(leader);
        }
        queues
    }

    /// Takes the cluster's last Metadata into every topic's queues and wakes the sinks.
    fn apply_metadata(self: &Arc<Self>) {
        let metadata = self.cluster.metadata();
        for name in self.accumulator.names() {
            match metadata.topics.get(name.as_str()) {
                Some(t) if t.error == ErrorCode::NONE => {
                    self.apply_topic(t);
                }
                // Deleted, or being recreated: no leader until Metadata says otherwise.
                _ => {
                    if let Some(queues) = self.accumulator.topic(&name) {
                        let none = vec![-1; queues.partitions.len()];
                        self.accumulator.update_topic(&name, &none);
                    }
                }
            }
        }
        self.wake_all_sinks();
    }

    async fn enqueue(
        self: &Arc<Self>,
        record: ProducerRecord,
        known: Option<&Arc<TopicQueues>>,
    ) -> Result<Delivery, ProduceError> {
        if self.closed.load(Ordering::Relaxed) {
            return Err(ProduceError::closed());
        }
        if let Some(txn) = &self.txn {
            txn.check_send()?;
        }
        let config = &self.config;
        // The clock is read only on the slow paths: a record buffered at once costs one read
        // of it (its timestamp).
        let mut waited = Duration::ZERO;
        let topic = match known.filter(|t| *t.name == *record.topic) {
            Some(t) => t.clone(),
            None => match self.accumulator.topic(&record.topic) {
                Some(t) => t,
                None => {
                    let started = Instant::now();
                    let t = self.topic(&record.topic, started + config.max_block).await?;
                    waited = started.elapsed();
                    t
                }
            },
        };
        let estimate = record.size_upper_bound();
        if estimate + kwire_records::V2_HEADER_LEN > config.max_request_size {
            return Err(ProduceError::RecordTooLarge {
                topic: record.topic.clone(),
                size: estimate + kwire_records::V2_HEADER_LEN,
                limit: config.max_request_size,
                what: "max.request.size",
            });
        }
        if estimate > self.memory.total() {
            return Err(ProduceError::RecordTooLarge {
                topic: record.topic.clone(),
                size: estimate,
                limit: self.memory.total(),
                what: "buffer.memory",
            });
        }
        let partitions = topic.count();
        let mut sticky = false;
        let partition = match record.partition {
            Some(p) => p,
            None => {
                let user = config.partitioner.as_ref().and_then(|p| {
                    p.partition(&record.topic, record.key.as_deref(), record.value.as_deref(), partitions)
                });
                match (user, record.key.as_deref()) {
                    (Some(p), _) => p,
                    (None, Some(key)) if !config.partitioner_ignore_keys => partition_for_key(key, partitions),
                    _ => {
                        sticky = true;
                        // A broker that stopped taking batches is left out (KIP-794).
                        let available = |leader| !self.availability.unavailable(leader);
                        topic.sticky.current(partitions, || topic.candidates(available), config.partitioner_adaptive)
                    }
                }
            }
        };
        let Some(queue) = usize::try_from(partition).ok().and_then(|p| topic.partitions.get(p)) else {
            return Err(ProduceError::InvalidPartition { topic: record.topic.clone(), partition, partitions });
        };
        self.memory.take(estimate, config.max_block.saturating_sub(waited)).await?;
        if self.txn.is_some() {
            if let Err(e) = self.add_partition(&topic.name, partition).await {
                self.memory.give(estimate);
                return Err(e);
            }
        }
        let timestamp = record.timestamp.unwrap_or_else(now_ms);
        let appended = match queue.append(&record, timestamp, estimate, &self.settings()) {
            Ok(a) => a,
            Err(e) => {
                self.memory.give(estimate);
                return Err(e);
            }
        };
        if sticky {
            topic.sticky.appended(partition, estimate, config.batch_size, appended.closed);
        }
        self.metrics.buffered(1);
        // The sink looks again when a batch fills, or when a batch opens on a partition with
        // nothing in flight (to start its linger); with batches in flight, their answers wake
        // it anyway. A wake per record, or per batch opened, would cost a thread switch each.
        if appended.closed || (appended.opened && appended.was_idle) {
            self.wake_sink(queue.leader());
        }
        let sizes =
            (record.key.as_ref().map_or(-1, |k| k.len() as i32), record.value.as_ref().map_or(-1, |v| v.len() as i32));
        Ok(Delivery::new(appended.outcome, record.topic, partition, appended.offset_delta, timestamp, sizes))
    }

    /// Closes every open batch and waits for every batch buffered now to settle.
    async fn flush(&self) {
        self.flushing.fetch_add(1, Ordering::AcqRel);
        let settings = self.settings();
        let mut waits = Vec::new();
        for queue in self.accumulator.all() {
            let mut st = queue.lock();
            queue.close(&mut st, &settings);
            waits.extend(st.ready.iter().map(|b| b.outcome.clone()));
            waits.extend(st.in_flight.iter().cloned());
        }
        self.wake_all_sinks();
        for outcome in waits {
            let _ = outcome.settled().await;
        }
        self.flushing.fetch_sub(1, Ordering::AcqRel);
    }

    /// Stops the tasks; fails every record not yet settled.
    fn shut_down(&self) {
        self.closed.store(true, Ordering::Release);
        if self.shutdown.send_replace(true) {
            return;
        }
        for queue in self.accumulator.all() {
            let failed = queue.lock().take_unsent();
            for (outcome, memory, records) in failed {
                let error = ProduceError::IllegalState("Producer is closed forcefully.".into());
                self.settle_failed(&queue, &outcome, memory, records, error);
            }
        }
        self.memory.close();
    }
}

/// Reads Metadata for the producer's topics when asked (a leader moved, a connection was
/// lost) and every `metadata.max.age.ms`, at most once per `retry.backoff.ms`.
async fn metadata_loop(inner: Arc<Inner>) {
    let mut shutdown = inner.shutdown_signal();
    let mut last = Instant::now();
    loop {
        tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            _ = inner.metadata_wanted.notified() => {}
            _ = tokio::time::sleep(inner.config.metadata_max_age) => {}
        }
        let since = last.elapsed();
        if since < inner.config.retry_backoff {
            tokio::time::sleep(inner.config.retry_backoff - since).await;
        }
        last = Instant::now();
        let names = inner.accumulator.names();
        if names.is_empty() {
            continue;
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        match inner.cluster.refresh_topics(&refs, true).await {
            Ok(()) => inner.apply_metadata(),
            Err(error) => {
                tracing::debug!(%error, "metadata refresh failed; trying again");
                inner.want_metadata();
            }
        }
    }
}

/// Gets a new producer id when a reset needs one (the epoch exhausted, or refused), then
/// wakes the sinks waiting for it.
async fn producer_id_loop(inner: Arc<Inner>) {
    let mut shutdown = inner.shutdown_signal();
    loop {
        tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            _ = inner.new_id_wanted.notified() => {}
        }
        if !inner.identity.needs_new_id() || inner.txn.is_some() {
            continue;
        }
        match inner.identity.renew(&inner.cluster, inner.config.max_block, inner.config.retry_backoff).await {
            Ok(_) => inner.wake_all_sinks(),
            Err(error) => {
                tracing::warn!(%error, "could not get a new producer id; trying again");
                tokio::time::sleep(inner.config.retry_backoff).await;
                inner.want_new_producer_id();
            }
        }
    }
}
