//! The consumer's handle: what the application calls. Every call is async and none holds a
//! lock across an await; the work happens in the tasks it starts (metadata, a source per
//! broker, positions, commits, the group member), and `poll` takes what they fetched.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_core::Stream;
use kwire::ErrorCode;
use kwire_connection::cluster::Metadata;
use kwire_connection::Cluster;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use super::commit::{self, Committer};
use super::config::{ConsumerConfig, OffsetReset};
use super::error::ConsumerError;
use super::listener::ConsumerRebalanceListener;
use super::offsets::{self, OffsetAndTimestamp};
use super::record::{ConsumerRecord, ConsumerRecords, OffsetAndMetadata, TopicPartition};
use super::state::{release, Event, Pending, PendingEvent, Position, Shared, State, Stop, Subscription};
use super::{fetch, group, metadata};

use crate::producer::ConsumerGroupMetadata;

/// The consumer's counters and buffer, now (Kafka's consumer metrics, in part).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsumerMetrics {
    /// Fetch requests that listed every partition (opening a fetch session, or without one).
    pub fetches_full: u64,
    /// Fetch requests of a session that sent only what changed (KIP-227).
    pub fetches_incremental: u64,
    /// Fetch requests that failed (connection lost, timed out).
    pub fetch_errors: u64,
    /// Fetch requests sent to each broker (a follower's, with KIP-392).
    pub fetches_by_node: BTreeMap<i32, u64>,
    /// Record bytes fetched, as they came over the wire (compressed).
    pub fetched_bytes: u64,
    /// Records fetched (before `poll` hands them out).
    pub fetched_records: u64,
    /// Bytes fetched and not yet handed out by `poll`: bounded by `fetch.max.bytes` per broker
    /// (and one answer in flight), whatever the topics' size.
    pub buffered_bytes: u64,
    /// Records fetched and not yet handed out.
    pub buffered_records: u64,
}

/// What only `poll` (and `close`, `unsubscribe`) touch: the listener and auto-commit's clock.
struct PollSide {
    listener: Option<Box<dyn ConsumerRebalanceListener>>,
    next_auto_commit: Instant,
}

/// A Kafka consumer: subscribe (or assign), then `poll` or read the [`Stream`] of
/// [`Consumer::stream`]. See the [module docs](super).
pub struct Consumer {
    shared: Arc<Shared>,
    committer: Committer,
    shutdown: watch::Sender<bool>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    poll_side: tokio::sync::Mutex<PollSide>,
}

impl std::fmt::Debug for Consumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer").field("group_id", &self.shared.config.group_id).finish_non_exhaustive()
    }
}

impl Consumer {
    /// Connects to the bootstrap servers and starts the consumer's tasks. Nothing is read
    /// until [`Consumer::subscribe`] or [`Consumer::assign`].
    pub async fn new(config: ConsumerConfig) -> Result<Consumer, ConsumerError> {
        config.validate()?;
        let servers: Vec<&str> = config.bootstrap_servers.iter().map(String::as_str).collect();
        let cluster = Cluster::connect(&servers, config.client_config()).await?;
        let coordinator = match &config.group_id {
            Some(_) => {
                // JoinGroup and SyncGroup may wait the whole rebalance timeout at the broker.
                let mut coordinator_config = config.client_config();
                coordinator_config.request_timeout =
                    coordinator_config.request_timeout.max(config.max_poll_interval + Duration::from_secs(5));
                Some(Cluster::connect(&servers, coordinator_config).await?)
            }
            None => None,
        };
        let next_auto_commit = Instant::now() + config.auto_commit_interval;
        let shared = Shared::new(config, cluster, coordinator);
        let (shutdown, receiver) = watch::channel(false);
        let (committer, jobs) = commit::committer();
        let mut tasks = vec![
            tokio::spawn(metadata::run(shared.clone(), receiver.clone())),
            tokio::spawn(fetch::run(shared.clone(), receiver.clone())),
            tokio::spawn(offsets::run(shared.clone(), receiver.clone())),
            tokio::spawn(commit::run_committer(shared.clone(), jobs, receiver.clone())),
        ];
        if shared.config.group_id.is_some() {
            tasks.push(tokio::spawn(group::run(shared.clone(), receiver)));
        }
        Ok(Consumer {
            shared,
            committer,
            shutdown,
            tasks: Mutex::new(tasks),
            poll_side: tokio::sync::Mutex::new(PollSide { listener: None, next_auto_commit }),
        })
    }

    /// The config the consumer runs with.
    pub fn config(&self) -> &ConsumerConfig {
        &self.shared.config
    }

    fn open(&self) -> Result<(), ConsumerError> {
        if self.shared.is_closed() {
            return Err(ConsumerError::Closed);
        }
        Ok(())
    }

    fn group_id(&self) -> Result<&str, ConsumerError> {
        self.shared.config.group_id.as_deref().ok_or_else(|| {
            ConsumerError::IllegalState(
                "to use the group management or offset commit APIs, you must provide a valid group.id".into(),
            )
        })
    }

    /// Subscribes to `topics` through the group (`group.id` needed), replacing any earlier
    /// subscription; no topics is [`Consumer::unsubscribe`]. Topics that do not exist yet are
    /// waited for (and created by the broker when `allow.auto.create.topics` and the broker
    /// allow it).
    pub async fn subscribe<I, T>(&self, topics: I) -> Result<(), ConsumerError>
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.open()?;
        self.group_id()?;
        let topics: BTreeSet<String> = topics.into_iter().map(Into::into).collect();
        if topics.is_empty() {
            return self.unsubscribe().await;
        }
        for topic in &topics {
            check_topic(topic)?;
        }
        self.set_subscription(Subscription::Topics(topics))
    }

    /// Subscribes to every topic whose whole name matches `pattern` (a regular expression;
    /// internal topics never match). In a classic group the consumer matches it against the
    /// cluster's topics; in a KIP-848 group the broker does (RE2 syntax, as Kafka's
    /// `SubscriptionPattern`).
    pub async fn subscribe_pattern(&self, pattern: &str) -> Result<(), ConsumerError> {
        self.open()?;
        self.group_id()?;
        let regex = regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
            ConsumerError::InvalidRegularExpression { pattern: pattern.to_owned(), reason: e.to_string() }
        })?;
        self.set_subscription(Subscription::Pattern(pattern.to_owned(), regex))
    }

    fn set_subscription(&self, subscription: Subscription) -> Result<(), ConsumerError> {
        {
            let mut state = self.shared.state();
            if matches!(state.subscription, Subscription::Assigned) && !state.assignment.is_empty() {
                return Err(ConsumerError::IllegalState(
                    "subscription to topics, partitions and pattern are mutually exclusive".into(),
                ));
            }
            state.subscription = subscription;
            state.metadata_wanted = true;
        }
        self.shared.wake.all();
        Ok(())
    }

    /// Reads `partitions` with no group (Kafka's `assign`): positions come from the group's
    /// committed offsets when `group.id` is set, else from `auto.offset.reset`. A topic or
    /// partition the cluster does not have is an error. No partitions is `unsubscribe`.
    pub async fn assign<I>(&self, partitions: I) -> Result<(), ConsumerError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        self.open()?;
        let partitions: BTreeSet<TopicPartition> = partitions.into_iter().collect();
        if partitions.is_empty() {
            return self.unsubscribe().await;
        }
        if self.shared.state().subscription.is_group() {
            return Err(ConsumerError::IllegalState(
                "subscription to topics, partitions and pattern are mutually exclusive".into(),
            ));
        }
        let topics: BTreeSet<&str> = partitions.iter().map(|tp| &*tp.topic).collect();
        for topic in &topics {
            check_topic(topic)?;
        }
        let names: Vec<&str> = topics.iter().copied().collect();
        self.shared.cluster.refresh_topics(&names, false).await?;
        let metadata = self.shared.cluster.metadata();
        for tp in &partitions {
            let topic = metadata.topics.get(&*tp.topic);
            match topic {
                Some(t) if t.error == ErrorCode::NONE && t.partition(tp.partition).is_some() => {}
                Some(t) if t.error != ErrorCode::NONE && t.error != ErrorCode::UNKNOWN_TOPIC_OR_PARTITION => {
                    return Err(ConsumerError::from_code("Metadata", t.error, &tp.topic));
                }
                _ => return Err(ConsumerError::UnknownTopicOrPartition(tp.to_string())),
            }
        }
        let pending = if self.shared.config.group_id.is_some() {
            Pending::Committed
        } else {
            Pending::Reset(self.shared.config.auto_offset_reset)
        };
        {
            let mut state = self.shared.state();
            state.subscription = Subscription::Assigned;
            state.assign(partitions, pending);
        }
        self.shared.wake.all();
        Ok(())
    }

    /// Stops reading: a group member revokes its partitions (the listener runs, auto-commit
    /// commits) and leaves the group; assigned partitions are dropped.
    pub async fn unsubscribe(&self) -> Result<(), ConsumerError> {
        self.open()?;
        let mut side = self.poll_side.lock().await;
        let owned: Vec<TopicPartition> = self.shared.state().owned().into_iter().collect();
        let group = self.shared.state().subscription.is_group();
        if group && !owned.is_empty() {
            self.run_event(&mut side, Event::Revoked(owned)).await;
        }
        {
            let mut state = self.shared.state();
            state.subscription = Subscription::None;
            let all: Vec<TopicPartition> = state.assignment.keys().cloned().collect();
            for tp in all {
                state.remove(&tp);
            }
        }
        self.shared.wake.all();
        Ok(())
    }

    /// Sets the listener told of rebalances (replacing any earlier one).
    pub async fn set_rebalance_listener(&self, listener: impl ConsumerRebalanceListener + 'static) {
        self.poll_side.lock().await.listener = Some(Box::new(listener));
    }

    /// Records fetched, up to `max.poll.records`, waiting up to `timeout` for some. Rebalance
    /// steps (and the listener) run here first; auto-commit commits what earlier polls
    /// returned. An error stopping a partition (out of range without a reset policy, a
    /// corrupt batch, a truncated log) is raised once the records before it are returned,
    /// and again on every poll until the application seeks.
    pub async fn poll(&self, timeout: Duration) -> Result<ConsumerRecords, ConsumerError> {
        let mut side = self.poll_side.try_lock().map_err(|_| {
            ConsumerError::IllegalState("poll was called concurrently, or from inside a rebalance listener".into())
        })?;
        self.open()?;
        let now = Instant::now();
        {
            let mut state = self.shared.state();
            if matches!(state.subscription, Subscription::None) && state.assignment.is_empty() {
                return Err(ConsumerError::IllegalState(
                    "consumer is not subscribed to any topics or assigned any partitions".into(),
                ));
            }
            state.last_poll = now;
            state.consumed_at_poll = state.positions();
        }
        self.shared.wake.group.notify_waiters();
        if self.shared.config.enable_auto_commit
            && self.shared.config.group_id.is_some()
            && side.next_auto_commit <= now
        {
            side.next_auto_commit = now + self.shared.config.auto_commit_interval;
            drop(self.auto_commit());
        }
        let deadline = tokio::time::Instant::from_std(now + timeout);
        loop {
            let notified = self.shared.wake.poll.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(fatal) = self.shared.state().fatal.clone() {
                return Err(fatal);
            }
            self.run_events(&mut side).await;
            let records = self.drain()?;
            if !records.is_empty() {
                return Ok(records);
            }
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep_until(deadline) => return Ok(ConsumerRecords::default()),
            }
        }
    }

    /// Commits, without waiting, the positions as the latest poll began (the records earlier
    /// polls returned), for the partitions whose position moved since their last commit.
    fn auto_commit(&self) -> oneshot::Receiver<Result<(), ConsumerError>> {
        let offsets: BTreeMap<TopicPartition, OffsetAndMetadata> = {
            let state = self.shared.state();
            state
                .consumed_at_poll
                .iter()
                .filter(|(tp, _)| state.assignment.get(*tp).is_some_and(|p| !p.revoking))
                .filter(|(tp, o)| state.committed.get(*tp) != Some(&o.offset))
                .map(|(tp, o)| (tp.clone(), o.clone()))
                .collect()
        };
        self.committer.submit(offsets, self.shared.config.default_api_timeout)
    }

    /// Runs every rebalance step waiting for `poll`.
    async fn run_events(&self, side: &mut PollSide) {
        loop {
            let next = self.shared.state().events.pop_front();
            let Some(PendingEvent { event, done }) = next else { return };
            self.run_event(side, event).await;
            let _ = done.send(());
        }
    }

    /// One rebalance step: the listener, with auto-commit before a revocation; revoked and
    /// lost partitions are dropped afterwards (or if the listener's future is dropped).
    async fn run_event(&self, side: &mut PollSide, event: Event) {
        let (kind, partitions) = match event {
            Event::Revoked(p) => ("revoked", p),
            Event::Lost(p) => ("lost", p),
            Event::Assigned(p) => ("assigned", p),
        };
        let partitions: Vec<TopicPartition> = {
            let state = self.shared.state();
            partitions.into_iter().filter(|tp| kind == "assigned" || state.assignment.contains_key(tp)).collect()
        };
        if kind != "assigned" && partitions.is_empty() {
            return;
        }
        struct Drop_<'a>(&'a Shared, &'a [TopicPartition], bool);
        impl Drop for Drop_<'_> {
            fn drop(&mut self) {
                if self.2 {
                    let mut state = self.0.state();
                    for tp in self.1 {
                        state.remove(tp);
                    }
                    drop(state);
                    self.0.wake.fetch.notify_waiters();
                }
            }
        }
        let _remove = Drop_(&self.shared, &partitions, kind != "assigned");
        if kind == "revoked" && self.shared.config.enable_auto_commit {
            let offsets = self.shared.state().positions();
            let offsets: BTreeMap<TopicPartition, OffsetAndMetadata> =
                offsets.into_iter().filter(|(tp, _)| partitions.contains(tp)).collect();
            if let Err(e) = self
                .committer
                .submit(offsets, self.shared.config.default_api_timeout)
                .await
                .unwrap_or(Err(ConsumerError::Closed))
            {
                tracing::warn!(error = %e, "auto-commit before revoking partitions failed");
            }
        }
        tracing::debug!(kind, ?partitions, "rebalance listener");
        if let Some(listener) = side.listener.as_mut() {
            match kind {
                "revoked" => listener.on_partitions_revoked(self, &partitions).await,
                "lost" => listener.on_partitions_lost(self, &partitions).await,
                _ => listener.on_partitions_assigned(self, &partitions).await,
            }
        }
    }

    /// Hands out buffered records, up to `max.poll.records`, advancing positions; acts on a
    /// partition's [`Stop`] once its records before it are out.
    fn drain(&self) -> Result<ConsumerRecords, ConsumerError> {
        let max = self.shared.config.max_poll_records;
        let policy = self.shared.config.auto_offset_reset;
        let mut out = ConsumerRecords::default();
        let mut raise: Option<ConsumerError> = None;
        let mut freed = false;
        let mut reset = false;
        {
            let mut guard = self.shared.state();
            let state: &mut State = &mut guard;
            let mut i = 0;
            while i < state.buffer.len() && out.records.len() < max && raise.is_none() {
                let chunk = &mut state.buffer[i];
                let Some(p) = state.assignment.get_mut(&chunk.partition) else {
                    let chunk = state.buffer.remove(i).expect("index checked");
                    release(&mut state.buffered_by_node, chunk.node, chunk.bytes);
                    freed = true;
                    continue;
                };
                if p.generation != chunk.generation {
                    let chunk = state.buffer.remove(i).expect("index checked");
                    release(&mut state.buffered_by_node, chunk.node, chunk.bytes);
                    freed = true;
                    continue;
                }
                if p.paused || p.revoking {
                    i += 1;
                    continue;
                }
                let take = (max - out.records.len()).min(chunk.records.len());
                if take > 0 {
                    // Bytes are released as records go out, so that the partition is fetched
                    // again while the rest of the chunk is still being polled.
                    let released = if take == chunk.records.len() {
                        chunk.bytes
                    } else {
                        chunk.bytes * take / chunk.records.len()
                    };
                    chunk.bytes -= released;
                    p.buffered = p.buffered.saturating_sub(released);
                    release(&mut state.buffered_by_node, chunk.node, released);
                    freed |= released > 0;
                    let last = chunk.records.get(take - 1).map(|r| (r.offset, r.leader_epoch));
                    out.records.extend(chunk.records.drain(..take));
                    if let Some((offset, epoch)) = last {
                        let position =
                            Position { offset: offset + 1, epoch: epoch.or(p.position.and_then(|x| x.epoch)) };
                        p.position = Some(position);
                        out.next_offsets.insert(
                            chunk.partition.clone(),
                            OffsetAndMetadata {
                                offset: position.offset,
                                leader_epoch: position.epoch,
                                metadata: String::new(),
                            },
                        );
                    }
                }
                if !chunk.records.is_empty() {
                    break;
                }
                if p.position.is_none_or(|position| position.offset < chunk.end.offset) {
                    p.position = Some(chunk.end);
                }
                match chunk.stop.clone() {
                    None => {
                        let chunk = state.buffer.remove(i).expect("index checked");
                        release(&mut state.buffered_by_node, chunk.node, chunk.bytes);
                        if let Some(p) = state.assignment.get_mut(&chunk.partition) {
                            p.buffered = p.buffered.saturating_sub(chunk.bytes);
                        }
                        freed = true;
                    }
                    Some(stop) => {
                        let tp = chunk.partition.clone();
                        match resolve_stop(stop, &tp, p, policy) {
                            Ok(()) => {
                                state.drop_buffered(&tp);
                                reset = true;
                                freed = true;
                            }
                            Err(e) => {
                                // Records before it go out first; the error comes next poll.
                                if out.records.is_empty() {
                                    raise = Some(e);
                                }
                                i += 1;
                            }
                        }
                    }
                }
            }
        }
        if freed {
            self.shared.wake.fetch.notify_waiters();
        }
        if reset {
            self.shared.wake.positions.notify_waiters();
        }
        match raise {
            Some(e) if out.records.is_empty() => Err(e),
            _ => Ok(out),
        }
    }

    /// A stream of records, polling as it goes (Kafka's poll loop as a `Stream`). Errors are
    /// items; the stream never ends by itself.
    pub fn stream(&self) -> RecordStream<'_> {
        RecordStream { consumer: self, batch: VecDeque::new(), pending: None }
    }

    /// A stream of what each poll returns: the cheaper way to read at high rates.
    pub fn batches(&self) -> BatchStream<'_> {
        BatchStream { consumer: self, pending: None }
    }

    /// Commits every assigned partition's position (the records polled so far), waiting up to
    /// `default.api.timeout.ms` (Kafka's `commitSync()`).
    pub async fn commit_sync(&self) -> Result<(), ConsumerError> {
        self.open()?;
        self.group_id()?;
        let offsets = self.shared.state().positions();
        self.commit_offsets(offsets).await
    }

    /// Commits these offsets (the next offset to read, per partition) and waits (Kafka's
    /// `commitSync(offsets)`).
    pub async fn commit_offsets(
        &self,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
    ) -> Result<(), ConsumerError> {
        self.open()?;
        self.group_id()?;
        if offsets.values().any(|o| o.offset < 0) {
            return Err(ConsumerError::InvalidArgument("an offset to commit must not be negative".into()));
        }
        self.committer
            .submit(offsets, self.shared.config.default_api_timeout)
            .await
            .unwrap_or(Err(ConsumerError::Closed))
    }

    /// Commits every assigned partition's position without waiting (Kafka's `commitAsync()`):
    /// the commit is queued now, after any earlier one; await the result or drop it.
    pub fn commit_async(&self) -> impl Future<Output = Result<(), ConsumerError>> + Send + 'static {
        let queued = match (self.open(), self.group_id()) {
            (Ok(()), Ok(_)) => {
                Ok(self.committer.submit(self.shared.state().positions(), self.shared.config.default_api_timeout))
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        async move { queued?.await.unwrap_or(Err(ConsumerError::Closed)) }
    }

    /// [`Consumer::commit_async`] of these offsets.
    pub fn commit_offsets_async(
        &self,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
    ) -> impl Future<Output = Result<(), ConsumerError>> + Send + 'static {
        let queued = match (self.open(), self.group_id()) {
            (Ok(()), Ok(_)) => Ok(self.committer.submit(offsets, self.shared.config.default_api_timeout)),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        async move { queued?.await.unwrap_or(Err(ConsumerError::Closed)) }
    }

    /// The group's committed offsets for `partitions` (`None`: nothing committed).
    pub async fn committed(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>, ConsumerError> {
        self.open()?;
        self.group_id()?;
        let stable = self.shared.config.isolation_level == super::config::IsolationLevel::ReadCommitted;
        let work = commit::fetch_committed(&self.shared, partitions, stable);
        tokio::time::timeout(self.shared.config.default_api_timeout, work)
            .await
            .map_err(|_| ConsumerError::Timeout("fetching committed offsets".into()))?
    }

    /// Reads `partition` from `offset` on (Kafka's `seek`). A seek past the log's end is met by
    /// OFFSET_OUT_OF_RANGE: reset by `auto.offset.reset`, or raised by `poll`.
    pub fn seek(&self, partition: &TopicPartition, offset: i64) -> Result<(), ConsumerError> {
        self.seek_to(partition, OffsetAndMetadata::new(offset))
    }

    /// Seeks to an offset with the leader epoch it was read at: the position is validated
    /// against the leader's log before fetching (KIP-320).
    pub fn seek_to(&self, partition: &TopicPartition, offset: OffsetAndMetadata) -> Result<(), ConsumerError> {
        self.open()?;
        if offset.offset < 0 {
            return Err(ConsumerError::InvalidArgument("seek offset must not be a negative number".into()));
        }
        {
            let mut state = self.shared.state();
            state.drop_buffered(partition);
            let p = state.assignment.get_mut(partition).ok_or_else(|| {
                ConsumerError::IllegalState(format!("no current assignment for partition {partition}"))
            })?;
            p.seek(Position { offset: offset.offset, epoch: offset.leader_epoch });
            if offset.leader_epoch.is_some() {
                p.pending = Pending::Validate;
            }
        }
        self.shared.wake.all();
        Ok(())
    }

    /// Reads these partitions (every assigned one when empty) from their first offset; done
    /// by the next fetch, as Kafka's `seekToBeginning` is lazy.
    pub fn seek_to_beginning(&self, partitions: &[TopicPartition]) -> Result<(), ConsumerError> {
        self.reset(partitions, OffsetReset::Earliest)
    }

    /// Reads these partitions (every assigned one when empty) from their end.
    pub fn seek_to_end(&self, partitions: &[TopicPartition]) -> Result<(), ConsumerError> {
        self.reset(partitions, OffsetReset::Latest)
    }

    fn reset(&self, partitions: &[TopicPartition], to: OffsetReset) -> Result<(), ConsumerError> {
        self.open()?;
        {
            let mut state = self.shared.state();
            let targets: Vec<TopicPartition> =
                if partitions.is_empty() { state.assignment.keys().cloned().collect() } else { partitions.to_vec() };
            for tp in &targets {
                if !state.assignment.contains_key(tp) {
                    return Err(ConsumerError::IllegalState(format!("no current assignment for partition {tp}")));
                }
            }
            for tp in targets {
                state.drop_buffered(&tp);
                if let Some(p) = state.assignment.get_mut(&tp) {
                    p.await_position(Pending::Reset(to));
                }
            }
        }
        self.shared.wake.all();
        Ok(())
    }

    /// The offset of the next record `poll` returns for `partition`, waiting (up to
    /// `default.api.timeout.ms`) while it is being found.
    pub async fn position(&self, partition: &TopicPartition) -> Result<i64, ConsumerError> {
        self.open()?;
        let deadline = tokio::time::Instant::now() + self.shared.config.default_api_timeout;
        loop {
            let notified = self.shared.wake.poll.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = self.shared.state();
                let p = state.assignment.get(partition).ok_or_else(|| {
                    ConsumerError::IllegalState(format!("no current assignment for partition {partition}"))
                })?;
                if p.pending == Pending::Nothing {
                    if let Some(position) = p.position {
                        return Ok(position.offset);
                    }
                }
                if p.stalled {
                    let error = state.buffer.iter().find(|c| &c.partition == partition).and_then(|c| match &c.stop {
                        Some(Stop::Raise(e)) => Some(e.clone()),
                        _ => None,
                    });
                    if let Some(e) = error {
                        return Err(e);
                    }
                }
            }
            self.shared.wake.positions.notify_waiters();
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(ConsumerError::Timeout(format!("the position of {partition} could not be determined")))
                }
            }
        }
    }

    /// Stops returning (and fetching) records of these partitions until resumed; what was
    /// fetched is kept.
    pub fn pause(&self, partitions: &[TopicPartition]) -> Result<(), ConsumerError> {
        self.set_paused(partitions, true)
    }

    pub fn resume(&self, partitions: &[TopicPartition]) -> Result<(), ConsumerError> {
        self.set_paused(partitions, false)
    }

    fn set_paused(&self, partitions: &[TopicPartition], paused: bool) -> Result<(), ConsumerError> {
        self.open()?;
        {
            let mut state = self.shared.state();
            for tp in partitions {
                let p = state
                    .assignment
                    .get_mut(tp)
                    .ok_or_else(|| ConsumerError::IllegalState(format!("no current assignment for partition {tp}")))?;
                p.paused = paused;
            }
        }
        self.shared.wake.fetch.notify_waiters();
        self.shared.wake.poll.notify_waiters();
        Ok(())
    }

    /// The paused partitions.
    pub fn paused(&self) -> BTreeSet<TopicPartition> {
        self.shared.state().assignment.iter().filter(|(_, p)| p.paused).map(|(tp, _)| tp.clone()).collect()
    }

    /// The partitions assigned now (by the group, or by `assign`).
    pub fn assignment(&self) -> BTreeSet<TopicPartition> {
        self.shared.state().owned()
    }

    /// The topics subscribed by name, or matched by the pattern in the metadata.
    pub fn subscription(&self) -> BTreeSet<String> {
        group::subscribed_topics(&self.shared)
    }

    /// The member's group identity now, for a transactional producer's offsets (KIP-447).
    pub fn group_metadata(&self) -> Result<ConsumerGroupMetadata, ConsumerError> {
        let group_id = self.group_id()?.to_owned();
        let membership = self.shared.state().membership.clone();
        Ok(ConsumerGroupMetadata {
            group_id,
            generation_id: membership.generation,
            member_id: membership.member_id,
            group_instance_id: self.shared.config.group_instance_id.clone(),
        })
    }

    /// The first offset of each partition.
    pub async fn beginning_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, ConsumerError> {
        self.list_offsets(partitions, offsets::EARLIEST).await
    }

    /// The offset after the last record of each partition (the last stable offset in
    /// read_committed).
    pub async fn end_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, ConsumerError> {
        self.list_offsets(partitions, offsets::LATEST).await
    }

    async fn list_offsets(
        &self,
        partitions: &[TopicPartition],
        at: i64,
    ) -> Result<BTreeMap<TopicPartition, i64>, ConsumerError> {
        let found = self.offsets_for(partitions.iter().map(|tp| (tp.clone(), at)).collect()).await?;
        Ok(found.into_iter().map(|(tp, o)| (tp, o.map_or(-1, |o| o.offset))).collect())
    }

    /// The first offset at or after each timestamp (`None`: no such record).
    pub async fn offsets_for_times(
        &self,
        timestamps: BTreeMap<TopicPartition, i64>,
    ) -> Result<BTreeMap<TopicPartition, Option<OffsetAndTimestamp>>, ConsumerError> {
        if timestamps.values().any(|t| *t < 0) {
            return Err(ConsumerError::InvalidArgument("a timestamp to search must not be negative".into()));
        }
        self.offsets_for(timestamps).await
    }

    async fn offsets_for(
        &self,
        asks: BTreeMap<TopicPartition, i64>,
    ) -> Result<BTreeMap<TopicPartition, Option<OffsetAndTimestamp>>, ConsumerError> {
        self.open()?;
        let deadline = Instant::now() + self.shared.config.default_api_timeout;
        let topics: Vec<String> =
            asks.keys().map(|tp| tp.topic.to_string()).collect::<BTreeSet<_>>().into_iter().collect();
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        self.shared.cluster.refresh_topics(&names, false).await?;
        if let Some(tp) = asks.keys().find(|tp| self.unknown(tp)) {
            return Err(ConsumerError::UnknownTopicOrPartition(tp.to_string()));
        }
        let mut out = BTreeMap::new();
        let mut remaining = asks;
        loop {
            let answers = offsets::list_offsets(&self.shared, &remaining).await;
            let mut retry = BTreeMap::new();
            for (tp, answer) in answers {
                match answer {
                    Ok(found) => {
                        out.insert(tp, found);
                    }
                    Err(code) if code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION && self.unknown(&tp) => {
                        return Err(ConsumerError::UnknownTopicOrPartition(tp.to_string()));
                    }
                    Err(code) if code.is_retriable() => {
                        let at = remaining[&tp];
                        retry.insert(tp, at);
                    }
                    Err(code) => return Err(ConsumerError::from_code("ListOffsets", code, &tp.to_string())),
                }
            }
            if retry.is_empty() {
                return Ok(out);
            }
            if Instant::now() >= deadline {
                return Err(ConsumerError::Timeout(format!("listing offsets of {} partitions", retry.len())));
            }
            tokio::time::sleep(self.shared.config.retry_backoff.max(Duration::from_millis(10))).await;
            let _ = self.shared.cluster.refresh_topics(&names, false).await;
            remaining = retry;
        }
    }

    /// Whether the metadata says the partition does not exist.
    fn unknown(&self, tp: &TopicPartition) -> bool {
        match self.shared.cluster.metadata().topics.get(&*tp.topic) {
            Some(t) => {
                t.error == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                    || (t.error == ErrorCode::NONE && t.partition(tp.partition).is_none())
            }
            None => true,
        }
    }

    /// The cluster's metadata for `topics` (every topic when empty), read now.
    pub async fn metadata(&self, topics: &[&str]) -> Result<Arc<Metadata>, ConsumerError> {
        self.open()?;
        if topics.is_empty() {
            self.shared.cluster.refresh_all().await?;
        } else {
            self.shared.cluster.refresh_topics(topics, false).await?;
        }
        Ok(self.shared.cluster.metadata())
    }

    /// The counters and the buffer now.
    pub fn metrics(&self) -> ConsumerMetrics {
        use std::sync::atomic::Ordering::Relaxed;
        let c = &self.shared.counters;
        let (buffered_bytes, buffered_records) = {
            let state = self.shared.state();
            let bytes = state.buffered_by_node.values().sum::<usize>() as u64;
            (bytes, state.buffer.iter().map(|chunk| chunk.records.len() as u64).sum())
        };
        ConsumerMetrics {
            fetches_full: c.fetches_full.load(Relaxed),
            fetches_incremental: c.fetches_incremental.load(Relaxed),
            fetch_errors: c.fetch_errors.load(Relaxed),
            fetches_by_node: c.by_node.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone(),
            fetched_bytes: c.fetched_bytes.load(Relaxed),
            fetched_records: c.fetched_records.load(Relaxed),
            buffered_bytes,
            buffered_records,
        }
    }

    /// The high watermark (or last stable offset, read_committed) the last fetch of
    /// `partition` saw, and its lag behind the position: Kafka's `currentLag`.
    pub fn current_lag(&self, partition: &TopicPartition) -> Option<i64> {
        let state = self.shared.state();
        let p = state.assignment.get(partition)?;
        let end = if self.shared.config.isolation_level == super::config::IsolationLevel::ReadCommitted {
            p.last_stable_offset
        } else {
            p.high_watermark
        };
        let position = p.position?.offset;
        (end >= 0).then(|| (end - position).max(0))
    }

    /// Leaves cleanly, within `request.timeout.ms`: auto-commit commits the positions, the
    /// listener sees the partitions revoked, a dynamic member leaves its group (a static one
    /// stays, KIP-345), fetch sessions are closed and pending commits finish. Later calls get
    /// [`ConsumerError::Closed`].
    pub async fn close(&self) -> Result<(), ConsumerError> {
        self.close_within(self.shared.config.request_timeout).await
    }

    /// [`Consumer::close`] within `timeout`; what is left undone then is abandoned.
    pub async fn close_within(&self, timeout: Duration) -> Result<(), ConsumerError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut side = match tokio::time::timeout_at(deadline, self.poll_side.lock()).await {
            Ok(side) => side,
            Err(_) => {
                self.abort();
                return Err(ConsumerError::Timeout("closing: a poll or listener did not finish".into()));
            }
        };
        if self.shared.is_closed() {
            return Ok(());
        }
        let mut result = Ok(());
        let group = self.shared.state().subscription.is_group();
        let work = async {
            if self.shared.config.group_id.is_some() && self.shared.config.enable_auto_commit {
                let offsets = self.shared.state().positions();
                let offsets: BTreeMap<_, _> = offsets
                    .into_iter()
                    .filter(|(tp, o)| self.shared.state().committed.get(tp) != Some(&o.offset))
                    .collect();
                if let Err(e) = self.committer.submit(offsets, timeout).await.unwrap_or(Err(ConsumerError::Closed)) {
                    tracing::warn!(error = %e, "auto-commit on close failed");
                    result = Err(e);
                }
            }
            // Steps already queued for poll, then the revocation of what is left.
            let pending: Vec<PendingEvent> = self.shared.state().events.drain(..).collect();
            for PendingEvent { event, done } in pending {
                self.run_event(&mut side, event).await;
                let _ = done.send(());
            }
            let owned: Vec<TopicPartition> = self.shared.state().owned().into_iter().collect();
            if group && !owned.is_empty() {
                let lost = self.shared.state().membership.generation < 0;
                let event = if lost { Event::Lost(owned) } else { Event::Revoked(owned) };
                self.run_event(&mut side, event).await;
            }
        };
        if tokio::time::timeout_at(deadline, work).await.is_err() {
            result = Err(ConsumerError::Timeout("closing: the final commit or listener did not finish".into()));
        }
        self.shared.state().closed = true;
        let _ = self.shutdown.send(true);
        let tasks: Vec<JoinHandle<()>> =
            std::mem::take(&mut *self.tasks.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        let mut aborts = Vec::new();
        for task in tasks {
            aborts.push(task.abort_handle());
            let _ = tokio::time::timeout_at(deadline, task).await;
        }
        for abort in aborts {
            abort.abort();
        }
        // Events posted while closing: answer them, so that no task waits.
        let pending: Vec<PendingEvent> = self.shared.state().events.drain(..).collect();
        drop(pending);
        self.shared.wake.all();
        result
    }

    fn abort(&self) {
        self.shared.state().closed = true;
        let _ = self.shutdown.send(true);
        for task in self.tasks.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain(..) {
            task.abort();
        }
    }
}

impl Drop for Consumer {
    /// Dropping without `close` stops at once, as a process that dies: the tasks end where
    /// they are, nothing is committed, no LeaveGroup is sent (the group notices at its session
    /// timeout) and no fetch session is closed. Call [`Consumer::close`] to leave cleanly.
    fn drop(&mut self) {
        self.abort();
    }
}

/// Acts on a partition's stop once `poll` reached it. `Ok` when resolved by a reset policy.
fn resolve_stop(
    stop: Stop,
    tp: &TopicPartition,
    p: &mut super::state::PartitionState,
    policy: OffsetReset,
) -> Result<(), ConsumerError> {
    match stop {
        Stop::OutOfRange if policy != OffsetReset::None => {
            tracing::info!(partition = %tp, position = ?p.position, "fetch position out of range: resetting");
            p.await_position(Pending::Reset(policy));
            Ok(())
        }
        Stop::OutOfRange => {
            let offset = p.position.map_or(-1, |x| x.offset);
            Err(ConsumerError::OffsetOutOfRange(BTreeMap::from([(tp.clone(), offset)])))
        }
        Stop::Diverged { epoch, end_offset } => {
            let offset = p.position.map_or(-1, |x| x.offset);
            if end_offset < offset && policy == OffsetReset::None {
                return Err(ConsumerError::LogTruncation {
                    partition: tp.clone(),
                    offset,
                    divergent_offset: Some(end_offset),
                });
            }
            tracing::warn!(partition = %tp, offset, diverges_at = end_offset, "log truncation detected: resetting to the first offset known to diverge");
            p.seek(Position { offset: end_offset.min(offset.max(0)), epoch: Some(epoch) });
            Ok(())
        }
        Stop::Raise(e) => Err(e),
    }
}

/// A topic name Kafka accepts: 1 to 249 of `[a-zA-Z0-9._-]`, not `.` or `..`.
fn check_topic(topic: &str) -> Result<(), ConsumerError> {
    let valid = !topic.is_empty()
        && topic.len() <= 249
        && topic != "."
        && topic != ".."
        && topic.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(ConsumerError::InvalidTopic(topic.to_owned()))
    }
}

type PollFuture<'a> = Pin<Box<dyn Future<Output = Result<ConsumerRecords, ConsumerError>> + Send + 'a>>;

/// The records of successive polls, one at a time ([`Consumer::stream`]).
pub struct RecordStream<'a> {
    consumer: &'a Consumer,
    batch: VecDeque<ConsumerRecord>,
    pending: Option<PollFuture<'a>>,
}

impl Stream for RecordStream<'_> {
    type Item = Result<ConsumerRecord, ConsumerError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(record) = self.batch.pop_front() {
                return Poll::Ready(Some(Ok(record)));
            }
            let consumer = self.consumer;
            let pending = self.pending.get_or_insert_with(|| Box::pin(consumer.poll(Duration::from_secs(3600))));
            match pending.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => {
                    self.pending = None;
                    match result {
                        Ok(records) => self.batch.extend(records),
                        Err(ConsumerError::Closed) => return Poll::Ready(None),
                        Err(e) => return Poll::Ready(Some(Err(e))),
                    }
                }
            }
        }
    }
}

/// What successive polls return ([`Consumer::batches`]).
pub struct BatchStream<'a> {
    consumer: &'a Consumer,
    pending: Option<PollFuture<'a>>,
}

impl Stream for BatchStream<'_> {
    type Item = Result<ConsumerRecords, ConsumerError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let consumer = self.consumer;
            let pending = self.pending.get_or_insert_with(|| Box::pin(consumer.poll(Duration::from_secs(3600))));
            match pending.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => {
                    self.pending = None;
                    match result {
                        Ok(records) if records.is_empty() => continue,
                        Ok(records) => return Poll::Ready(Some(Ok(records))),
                        Err(ConsumerError::Closed) => return Poll::Ready(None),
                        Err(e) => return Poll::Ready(Some(Err(e))),
                    }
                }
            }
        }
    }
}
