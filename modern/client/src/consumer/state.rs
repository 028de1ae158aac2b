//! What the consumer's tasks share (Kafka's `SubscriptionState` and fetch buffer): the
//! subscription, each assigned partition's position and fetch state, the fetched records not yet
//! polled, and the rebalance events waiting for `poll`. One std mutex guards it; it is never
//! held across an await, and nothing slow (decoding, I/O) happens under it.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use kwire_connection::Cluster;
use tokio::sync::{oneshot, Notify};

use super::config::{ConsumerConfig, OffsetReset};
use super::error::ConsumerError;
use super::record::{ConsumerRecord, OffsetAndMetadata, TopicPartition};

/// What the consumer reads from: nothing yet, topics by name, topics matching a pattern (each
/// through a group), or partitions assigned by the application.
#[derive(Debug, Clone, Default)]
pub(crate) enum Subscription {
    #[default]
    None,
    Topics(BTreeSet<String>),
    /// The pattern as given (the broker evaluates it in KIP-848 groups) and anchored for a
    /// whole-name match, as Java's `Pattern.matches`.
    Pattern(String, regex::Regex),
    Assigned,
}

impl Subscription {
    pub(crate) fn is_group(&self) -> bool {
        matches!(self, Subscription::Topics(_) | Subscription::Pattern(..))
    }
}

/// A position: the next offset to read, and the leader epoch of the record before it (KIP-320).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub offset: i64,
    pub epoch: Option<i32>,
}

/// What a partition waits for before it can be fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pending {
    /// Fetchable.
    Nothing,
    /// Its committed offset (OffsetFetch), just assigned by the group.
    Committed,
    /// A reset by ListOffsets.
    Reset(OffsetReset),
    /// Validation of its position against the leader's log (OffsetForLeaderEpoch), after the
    /// leader changed or from a committed offset with an epoch.
    Validate,
}

/// One assigned partition.
#[derive(Debug)]
pub(crate) struct PartitionState {
    /// The next offset `poll` hands out (after every record handed out so far).
    pub position: Option<Position>,
    /// The next offset to fetch: ahead of `position` by what is buffered.
    pub fetch: Option<Position>,
    pub pending: Pending,
    /// Bumped by every seek, reset or buffer drop: an answer asked for under another
    /// generation is dropped.
    pub generation: u64,
    pub paused: bool,
    /// Being revoked or lost: not fetched, nothing handed out.
    pub revoking: bool,
    /// The node a Fetch for it is in flight to.
    pub in_flight: Option<i32>,
    /// Bytes fetched and not yet handed out.
    pub buffered: usize,
    /// The leader (node, epoch) the position was last checked against.
    pub leader: Option<(i32, i32)>,
    /// A replica the leader asked to read from (KIP-392), until when.
    pub preferred_replica: Option<(i32, Instant)>,
    pub high_watermark: i64,
    pub last_stable_offset: i64,
    pub log_start_offset: i64,
    /// A [`Stop`] is buffered or was raised: nothing more is fetched until it is resolved (by
    /// a reset, or the application's seek).
    pub stalled: bool,
    /// Not fetched before then, after an error that calls for a pause (a leader not yet
    /// known to the metadata, say).
    pub backoff_until: Option<Instant>,
}

impl PartitionState {
    pub(crate) fn new(pending: Pending) -> PartitionState {
        PartitionState {
            position: None,
            fetch: None,
            pending,
            generation: 0,
            paused: false,
            revoking: false,
            in_flight: None,
            buffered: 0,
            leader: None,
            preferred_replica: None,
            high_watermark: -1,
            last_stable_offset: -1,
            log_start_offset: -1,
            stalled: false,
            backoff_until: None,
        }
    }

    /// Whether a Fetch may ask for it now.
    pub(crate) fn fetchable(&self, now: Instant) -> bool {
        !self.paused
            && !self.revoking
            && !self.stalled
            && self.pending == Pending::Nothing
            && self.in_flight.is_none()
            && self.fetch.is_some()
            && self.backoff_until.is_none_or(|until| until <= now)
    }

    /// Moves to `position`, dropping what was fetched ahead and any answer in flight.
    pub(crate) fn seek(&mut self, position: Position) {
        self.position = Some(position);
        self.fetch = Some(position);
        self.pending = Pending::Nothing;
        self.stalled = false;
        self.generation += 1;
    }

    /// Waits for `pending` instead, dropping what was fetched ahead.
    pub(crate) fn await_position(&mut self, pending: Pending) {
        self.pending = pending;
        self.fetch = self.position;
        self.stalled = false;
        self.generation += 1;
    }
}

/// Records fetched for one partition by one Fetch, waiting for `poll`.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub partition: TopicPartition,
    /// The node it was fetched from, whose prefetch bound it counts against.
    pub node: i32,
    pub generation: u64,
    pub records: VecDeque<ConsumerRecord>,
    /// The position once every record is handed out (past trailing control or aborted
    /// batches).
    pub end: Position,
    /// Bytes counted against the prefetch bounds, released as records are handed out.
    pub bytes: usize,
    /// What stops the partition once the records are handed out.
    pub stop: Option<Stop>,
}

/// Why fetching a partition stopped, acted on by `poll` when it reaches it (so in order with
/// the records before it).
#[derive(Debug, Clone)]
pub(crate) enum Stop {
    /// OFFSET_OUT_OF_RANGE at the chunk's end: reset by `auto.offset.reset`, or raised.
    OutOfRange,
    /// The leader's log diverged from what was read (KIP-320): the first offset of the
    /// diverging epoch, and that epoch.
    Diverged { epoch: i32, end_offset: i64 },
    /// Raised to the application until it seeks.
    Raise(ConsumerError),
}

/// A rebalance step that `poll` runs, on the application's task, with the listener.
#[derive(Debug)]
pub(crate) enum Event {
    /// Commit (with auto-commit), tell the listener, then give the partitions up.
    Revoked(Vec<TopicPartition>),
    /// Tell the listener.
    Assigned(Vec<TopicPartition>),
    /// Tell the listener the partitions are already someone else's, then drop them.
    Lost(Vec<TopicPartition>),
}

pub(crate) struct PendingEvent {
    pub event: Event,
    pub done: oneshot::Sender<()>,
}

/// The member's identity in its group, as commits need it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Membership {
    pub member_id: String,
    /// The classic generation, or the KIP-848 member epoch; -1 when not in the group.
    pub generation: i32,
    /// Whether a rebalance is in progress (classic: between a join and its sync).
    pub rebalancing: bool,
}

/// Everything the tasks share.
pub(crate) struct State {
    pub subscription: Subscription,
    pub assignment: BTreeMap<TopicPartition, PartitionState>,
    pub buffer: VecDeque<Chunk>,
    /// Bytes buffered per fetching node, against `fetch.max.bytes`.
    pub buffered_by_node: HashMap<i32, usize>,
    pub events: VecDeque<PendingEvent>,
    pub membership: Membership,
    /// When `poll` last started.
    pub last_poll: Instant,
    /// Positions as the last `poll` started: what auto-commit commits (records handed out
    /// before it, so processed).
    pub consumed_at_poll: BTreeMap<TopicPartition, OffsetAndMetadata>,
    /// Positions last committed, so that auto-commit sends only what moved.
    pub committed: BTreeMap<TopicPartition, i64>,
    /// An error that ends the consumer's group membership, raised by every poll.
    pub fatal: Option<ConsumerError>,
    /// Every member's topics, when this member leads a classic group: their metadata is
    /// watched for changes too.
    pub group_topics: BTreeSet<String>,
    /// Whether a metadata refresh was asked for.
    pub metadata_wanted: bool,
    pub closed: bool,
}

impl State {
    fn new() -> State {
        State {
            subscription: Subscription::None,
            assignment: BTreeMap::new(),
            buffer: VecDeque::new(),
            buffered_by_node: HashMap::new(),
            events: VecDeque::new(),
            membership: Membership { generation: -1, ..Default::default() },
            last_poll: Instant::now(),
            consumed_at_poll: BTreeMap::new(),
            committed: BTreeMap::new(),
            fatal: None,
            group_topics: BTreeSet::new(),
            metadata_wanted: true,
            closed: false,
        }
    }

    /// Drops every fetched chunk of `partition` (a seek, a revoke), releasing its bytes.
    pub(crate) fn drop_buffered(&mut self, partition: &TopicPartition) {
        let by_node = &mut self.buffered_by_node;
        self.buffer.retain(|chunk| {
            let keep = &chunk.partition != partition;
            if !keep {
                release(by_node, chunk.node, chunk.bytes);
            }
            keep
        });
        if let Some(p) = self.assignment.get_mut(partition) {
            p.buffered = 0;
        }
    }

    /// Replaces the assignment with `partitions`: kept ones keep their state, new ones wait
    /// for `pending`, others are dropped with their buffered records.
    pub(crate) fn assign(&mut self, partitions: impl IntoIterator<Item = TopicPartition>, pending: Pending) {
        let wanted: BTreeSet<TopicPartition> = partitions.into_iter().collect();
        let gone: Vec<TopicPartition> = self.assignment.keys().filter(|tp| !wanted.contains(*tp)).cloned().collect();
        for tp in gone {
            self.remove(&tp);
        }
        for tp in wanted {
            self.assignment.entry(tp).or_insert_with(|| PartitionState::new(pending));
        }
    }

    /// Adds partitions (KIP-429 and KIP-848 hand partitions over one by one).
    pub(crate) fn add(&mut self, partitions: &[TopicPartition], pending: Pending) {
        for tp in partitions {
            self.assignment.entry(tp.clone()).or_insert_with(|| PartitionState::new(pending));
        }
    }

    pub(crate) fn remove(&mut self, partition: &TopicPartition) {
        self.drop_buffered(partition);
        self.assignment.remove(partition);
        self.consumed_at_poll.remove(partition);
        self.committed.remove(partition);
    }

    /// Every assigned partition's position, for commits.
    pub(crate) fn positions(&self) -> BTreeMap<TopicPartition, OffsetAndMetadata> {
        self.assignment
            .iter()
            .filter_map(|(tp, p)| {
                let position = p.position?;
                Some((
                    tp.clone(),
                    OffsetAndMetadata {
                        offset: position.offset,
                        leader_epoch: position.epoch,
                        metadata: String::new(),
                    },
                ))
            })
            .collect()
    }

    /// Partitions not being revoked, in order.
    pub(crate) fn owned(&self) -> BTreeSet<TopicPartition> {
        self.assignment.iter().filter(|(_, p)| !p.revoking).map(|(tp, _)| tp.clone()).collect()
    }
}

/// Takes `bytes` off what `node` has buffered.
pub(crate) fn release(by_node: &mut HashMap<i32, usize>, node: i32, bytes: usize) {
    if let Some(buffered) = by_node.get_mut(&node) {
        *buffered = buffered.saturating_sub(bytes);
    }
}

/// How the consumer's tasks wake each other.
#[derive(Default)]
pub(crate) struct Wakers {
    /// Records, an error or an event for `poll`.
    pub poll: Notify,
    /// Something to fetch (a position set, records drained, a resume, metadata read).
    pub fetch: Notify,
    /// A partition waiting for a position.
    pub positions: Notify,
    /// The group: a subscription changed, the application polled again, close.
    pub group: Notify,
    /// Metadata asked for.
    pub metadata: Notify,
}

impl Wakers {
    /// After the assignment or positions changed: everyone that may act on it.
    pub(crate) fn all(&self) {
        self.poll.notify_waiters();
        self.fetch.notify_waiters();
        self.positions.notify_waiters();
        self.group.notify_waiters();
        self.metadata.notify_waiters();
    }
}

/// Counters the tasks keep, read by [`Consumer::metrics`](super::Consumer::metrics).
#[derive(Default)]
pub(crate) struct Counters {
    pub fetches_full: std::sync::atomic::AtomicU64,
    pub fetches_incremental: std::sync::atomic::AtomicU64,
    pub fetch_errors: std::sync::atomic::AtomicU64,
    pub fetched_bytes: std::sync::atomic::AtomicU64,
    pub fetched_records: std::sync::atomic::AtomicU64,
    pub by_node: Mutex<BTreeMap<i32, u64>>,
}

impl Counters {
    pub(crate) fn add(counter: &std::sync::atomic::AtomicU64, n: u64) {
        counter.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What every task of one consumer holds.
pub(crate) struct Shared {
    pub config: ConsumerConfig,
    /// Metadata, Fetch, ListOffsets, OffsetForLeaderEpoch.
    pub cluster: Cluster,
    /// The group coordinator's traffic, on connections of its own as Kafka's consumer keeps
    /// it: JoinGroup and SyncGroup wait up to the rebalance timeout at the broker, so their
    /// request timeout is longer, and heartbeats never queue behind a Fetch.
    pub coordinator: Option<Cluster>,
    state: Mutex<State>,
    pub wake: Wakers,
    pub counters: Counters,
}

impl Shared {
    pub(crate) fn new(config: ConsumerConfig, cluster: Cluster, coordinator: Option<Cluster>) -> Arc<Shared> {
        Arc::new(Shared {
            config,
            cluster,
            coordinator,
            state: Mutex::new(State::new()),
            wake: Wakers::default(),
            counters: Counters::default(),
        })
    }

    /// The state, for a short critical section (never across an await).
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues a rebalance step for `poll` and wakes it; the receiver resolves once `poll` ran
    /// it (or the consumer is gone).
    pub(crate) fn post(&self, event: Event) -> oneshot::Receiver<()> {
        let (done, receiver) = oneshot::channel();
        {
            let mut state = self.state();
            if let Event::Revoked(partitions) | Event::Lost(partitions) = &event {
                for tp in partitions {
                    if let Some(p) = state.assignment.get_mut(tp) {
                        p.revoking = true;
                    }
                }
            }
            state.events.push_back(PendingEvent { event, done });
        }
        self.wake.poll.notify_waiters();
        self.wake.fetch.notify_waiters();
        receiver
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state().closed
    }

    /// Asks the metadata task for a refresh (a leader not known, an error that says the
    /// metadata is stale).
    pub(crate) fn want_metadata(&self) {
        self.state().metadata_wanted = true;
        self.wake.metadata.notify_waiters();
    }
}

/// Whether the consumer is shutting down: told so, or its handle is gone.
pub(crate) fn stopping(shutdown: &tokio::sync::watch::Receiver<bool>) -> bool {
    *shutdown.borrow() || shutdown.has_changed().is_err()
}
