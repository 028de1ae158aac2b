//! Records waiting to be sent, one queue per partition (Kafka's `RecordAccumulator`, kgo's
//! `recBuf`): an open batch taking records until `batch.size`, then closed batches in
//! sequence order, the count of its batches in flight, and the partition's idempotence state
//! (the identity its sequences are numbered under, the next sequence, the last acknowledged
//! one, and whether they must start again). The sink of the partition's leader drains it
//! (`sink.rs`).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Instant;

use kwire_records::Compression;

use super::batch::{add_sequence, OpenBatch, ProducerBatch};
use super::delivery::Outcome;
use super::error::ProduceError;
use super::idempotence::{Idempotence, Identity};
use super::partitioner::{Candidate, Sticky};
use super::record::ProducerRecord;

/// The topics records were sent to, each with its partitions' queues.
#[derive(Default)]
pub(crate) struct Accumulator {
    topics: RwLock<HashMap<Arc<str>, Arc<TopicQueues>>>,
    /// Moves whenever a leader changes or partitions are added: sinks then look again at
    /// which partitions are theirs.
    layout: AtomicU64,
}

/// One topic's partitions, as the metadata last described them.
pub(crate) struct TopicQueues {
    pub name: Arc<str>,
    pub partitions: Vec<Arc<PartitionQueue>>,
    pub sticky: Sticky,
}

impl TopicQueues {
    pub fn count(&self) -> i32 {
        self.partitions.len() as i32
    }

    /// The partitions with a leader, with their queues, for the sticky choice: those whose
    /// leader is `available`, or every one with a leader when none is.
    pub fn candidates(&self, available: impl Fn(i32) -> bool) -> Vec<Candidate> {
        let led = || self.partitions.iter().filter(|p| p.leader() >= 0);
        let of =
            |p: &Arc<PartitionQueue>| Candidate { partition: p.partition, queued: p.queued.load(Ordering::Relaxed) };
        let usable: Vec<Candidate> = led().filter(|p| available(p.leader())).map(of).collect();
        if usable.is_empty() {
            led().map(of).collect()
        } else {
            usable
        }
    }
}

/// One partition's queue.
pub(crate) struct PartitionQueue {
    pub topic: Arc<str>,
    pub partition: i32,
    /// The leader's broker id, -1 while there is none.
    leader: AtomicI32,
    /// Batches waiting (open and closed), for the adaptive partitioner.
    pub queued: AtomicUsize,
    state: Mutex<PartitionState>,
}

/// What the queue's lock guards.
pub(crate) struct PartitionState {
    pub open: Option<OpenBatch>,
    /// Closed batches, in sequence order, not in flight.
    pub ready: VecDeque<ProducerBatch>,
    /// Outcomes of the batches in flight (one per request at most), oldest first.
    pub in_flight: VecDeque<Arc<Outcome>>,
    /// The identity this partition's sequences are numbered under.
    pub identity: Identity,
    pub next_sequence: i32,
    /// The last sequence acknowledged under `identity`, -1 for none.
    pub last_acked: i32,
    /// A batch failed: nothing more is sent until every batch in flight is back.
    pub blocked: bool,
    /// Sequences must start again (new epoch) before the next send: set when a sequenced
    /// batch failed, or the broker said its sequences are broken.
    pub needs_reset: bool,
    /// Not before this (`retry.backoff.ms` after a failure).
    pub retry_at: Option<Instant>,
    /// The broker the batches in flight went to.
    pub sent_to: i32,
    /// The size of the last batch closed: what the next one reserves (not `batch.size`,
    /// which may be large and is multiplied by the partitions).
    pub capacity_hint: usize,
}

/// How batches are built.
pub(crate) struct BatchSettings<'a> {
    pub batch_size: usize,
    pub compression: Compression,
    pub compression_level: Option<i32>,
    pub idempotent: bool,
    pub transactional: bool,
    pub identity: &'a Idempotence,
}

/// What an append did.
pub(crate) struct Appended {
    pub outcome: Arc<Outcome>,
    pub offset_delta: i32,
    /// A new batch was opened (its linger starts now).
    pub opened: bool,
    /// A batch was closed and waits to be sent.
    pub closed: bool,
    /// Nothing of the partition was waiting or in flight before: its sink may be idle.
    pub was_idle: bool,
}

impl Accumulator {
    pub fn topic(&self, name: &str) -> Option<Arc<TopicQueues>> {
        self.topics.read().unwrap_or_else(|e| e.into_inner()).get(name).cloned()
    }

    pub fn layout(&self) -> u64 {
        self.layout.load(Ordering::Acquire)
    }

    /// Records what the metadata says of `name`: its partition count (partitions are only ever
    /// added) and each partition's leader. Returns the topic's queues.
    pub fn update_topic(&self, name: &str, leaders: &[i32]) -> Arc<TopicQueues> {
        let mut topics = self.topics.write().unwrap_or_else(|e| e.into_inner());
        let existing = topics.get(name).cloned();
        let mut changed = false;
        let queues = match existing {
            Some(t) if t.partitions.len() >= leaders.len() => t,
            old => {
                let name: Arc<str> = old.as_ref().map_or_else(|| Arc::from(name), |t| t.name.clone());
                let mut partitions: Vec<Arc<PartitionQueue>> = old.map(|t| t.partitions.clone()).unwrap_or_default();
                for p in partitions.len()..leaders.len() {
                    partitions.push(Arc::new(PartitionQueue::new(name.clone(), p as i32)));
                }
                let t = Arc::new(TopicQueues { name: name.clone(), partitions, sticky: Sticky::default() });
                topics.insert(name, t.clone());
                changed = true;
                t
            }
        };
        for (p, leader) in queues.partitions.iter().zip(leaders) {
            if p.leader.swap(*leader, Ordering::AcqRel) != *leader {
                changed = true;
            }
        }
        if changed {
            self.layout.fetch_add(1, Ordering::AcqRel);
        }
        queues
    }

    /// Sets one partition's leader (from a Produce response naming the new one, KIP-951).
    pub fn set_leader(&self, queue: &PartitionQueue, leader: i32) {
        if queue.leader.swap(leader, Ordering::AcqRel) != leader {
            self.layout.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// The queues whose leader is `broker`.
    pub fn led_by(&self, broker: i32) -> Vec<Arc<PartitionQueue>> {
        let topics = self.topics.read().unwrap_or_else(|e| e.into_inner());
        topics.values().flat_map(|t| t.partitions.iter()).filter(|p| p.leader() == broker).cloned().collect()
    }

    /// Every queue.
    pub fn all(&self) -> Vec<Arc<PartitionQueue>> {
        let topics = self.topics.read().unwrap_or_else(|e| e.into_inner());
        topics.values().flat_map(|t| t.partitions.iter()).cloned().collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.topics.read().unwrap_or_else(|e| e.into_inner()).keys().map(|k| k.to_string()).collect()
    }
}

/// A batch taken out of a queue before it was sent: its outcome, the memory it reserved and
/// how many records it holds.
pub type Unsent = (Arc<Outcome>, usize, u64);

impl PartitionState {
    /// Takes out every batch not yet sent, the open one and those ready (a forced close, an
    /// aborted transaction): their records are failed by the caller.
    pub fn take_unsent(&mut self) -> Vec<Unsent> {
        let mut unsent = Vec::new();
        if let Some(open) = self.open.take() {
            let records = open.records() as u64;
            unsent.push((open.outcome, open.memory, records));
        }
        unsent.extend(self.ready.drain(..).map(|b| (b.outcome, b.memory, b.records as u64)));
        unsent
    }
}

impl PartitionQueue {
    fn new(topic: Arc<str>, partition: i32) -> PartitionQueue {
        PartitionQueue {
            topic,
            partition,
            leader: AtomicI32::new(-1),
            queued: AtomicUsize::new(0),
            state: Mutex::new(PartitionState {
                open: None,
                ready: VecDeque::new(),
                in_flight: VecDeque::new(),
                identity: Identity::NONE,
                next_sequence: 0,
                last_acked: -1,
                blocked: false,
                needs_reset: false,
                retry_at: None,
                sent_to: -1,
                capacity_hint: 0,
            }),
        }
    }

    pub fn leader(&self) -> i32 {
        self.leader.load(Ordering::Acquire)
    }

    pub fn lock(&self) -> MutexGuard<'_, PartitionState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `record` (whose upper-bound size is `estimate`), closing the open batch first
    /// when the record does not fit, and after when the batch is full.
    pub fn append(
        &self,
        record: &ProducerRecord,
        timestamp: i64,
        estimate: usize,
        settings: &BatchSettings<'_>,
    ) -> Result<Appended, ProduceError> {
        let mut st = self.lock();
        let was_idle = st.ready.is_empty() && st.in_flight.is_empty();
        let mut closed = false;
        if st.open.as_ref().is_some_and(|b| b.records() > 0 && b.estimated + estimate > settings.batch_size) {
            self.close(&mut st, settings);
            closed = true;
        }
        let opened = st.open.is_none();
        if opened {
            let capacity = match st.capacity_hint {
                0 => settings.batch_size.min(64 << 10),
                hint => hint.min(settings.batch_size) + 1024,
            }
            .max(estimate + 64);
            st.open = Some(OpenBatch::new(
                settings.compression,
                settings.compression_level,
                settings.transactional,
                capacity,
                Instant::now(),
            ));
            self.queued.fetch_add(1, Ordering::Relaxed);
        }
        let open = st.open.as_mut().expect("opened above");
        let offset_delta =
            open.append(timestamp, record.key.as_deref(), record.value.as_deref(), &record.headers, estimate)?;
        let outcome = open.outcome.clone();
        if open.estimated >= settings.batch_size {
            self.close(&mut st, settings);
            closed = true;
        }
        Ok(Appended { outcome, offset_delta, opened, closed, was_idle })
    }

    /// Closes the open batch, if any, numbering it: the partition takes the producer's current
    /// identity when nothing of the old one is outstanding.
    pub fn close(&self, st: &mut PartitionState, settings: &BatchSettings<'_>) {
        let Some(open) = st.open.take() else { return };
        st.capacity_hint = open.estimated;
        let (identity, base_sequence) = if settings.idempotent {
            let current = settings.identity.current();
            if st.identity != current && st.ready.is_empty() && st.in_flight.is_empty() {
                st.identity = current;
                st.next_sequence = 0;
                st.last_acked = -1;
                st.needs_reset = false;
            }
            (st.identity, st.next_sequence)
        } else {
            (Identity::NONE, -1)
        };
        match open.close(identity, base_sequence) {
            Ok(batch) => {
                if settings.idempotent {
                    st.next_sequence = add_sequence(st.next_sequence, batch.records);
                }
                st.ready.push_back(batch);
            }
            Err((outcome, error)) => {
                // Unreachable in practice (the codec was checked); the batch fails alone and
                // its sequences are not used.
                self.queued.fetch_sub(1, Ordering::Relaxed);
                outcome.complete(Err(error));
            }
        }
    }

    /// Puts a batch that failed back at its place (in sequence order, before the batches that
    /// follow it), to be sent again.
    pub fn requeue(&self, st: &mut PartitionState, batch: ProducerBatch) {
        let at = if batch.base_sequence < 0 {
            0
        } else {
            st.ready
                .iter()
                .position(|b| b.identity == batch.identity && b.base_sequence > batch.base_sequence)
                .unwrap_or(st.ready.len())
        };
        st.ready.insert(at, batch);
    }

    /// Forgets the in-flight mark of `outcome`.
    pub fn landed(&self, st: &mut PartitionState, outcome: &Arc<Outcome>) {
        if let Some(i) = st.in_flight.iter().position(|o| Arc::ptr_eq(o, outcome)) {
            st.in_flight.remove(i);
        }
    }

    /// Starts the partition's sequences again under a bumped epoch (or `fresh`), rewriting the
    /// closed batches' headers: once nothing is in flight, so that no batch of the old
    /// numbering can still be written.
    pub fn reset_sequences(&self, st: &mut PartitionState, fresh: Identity) {
        let mut sequence = 0;
        for batch in st.ready.iter_mut() {
            batch.restamp(fresh, sequence);
            sequence = add_sequence(sequence, batch.records);
        }
        tracing::debug!(topic = %self.topic, partition = self.partition, producer_id = fresh.id, epoch = fresh.epoch, "sequences start again");
        st.identity = fresh;
        st.next_sequence = sequence;
        st.last_acked = -1;
        st.needs_reset = false;
    }
}
