//! A ZooKeeper group consumer that follows the Kafka 0.7 Scala high-level consumer's protocol
//! (spec §4.2–4.3), so it can share a group with Scala consumers:
//!
//! * registration: ephemeral `/consumers/<group>/ids/<consumerId>` holding `{ "topic": 1 }`;
//!   consumer id `<group>_<host>-<ms>-<8 hex>`, thread id `<consumerId>-<i>`;
//! * range assignment over partitions and thread ids sorted as strings ([`crate::assignment`]);
//! * ephemeral owner nodes `/consumers/<group>/owners/<topic>/<broker>-<partition>` holding the
//!   thread id, claimed with up to `rebalance_retries` retries on conflict;
//! * committed offsets in `/consumers/<group>/offsets/<topic>/<broker>-<partition>`, written
//!   periodically, before each rebalance and on [`GroupConsumer::close`];
//! * `autooffset.reset` smallest/largest when there is no committed offset or a fetch answers
//!   OffsetOutOfRange.
//!
//! Rebalances are triggered by watches on the group's members and on each topic's brokers, and
//! run inside [`GroupConsumer::next_message`] / [`GroupConsumer::poll`], so the owner of a
//! partition always commits what it handed out before another member can claim it. The
//! committed offset is that of the last message handed to the caller.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kwire07_protocol::{OFFSETS_EARLIEST, OFFSETS_LATEST};
use tokio::task::JoinHandle;
use zookeeper_client::{Client, EventType, OneshotWatcher};

use crate::assignment::{range_for, sorted_partitions, BrokerPartition};
use crate::connection::{BrokerConnection, ReceiveBuffer};
use crate::consumer::{fetch_round, ConsumedMessage, PartitionCursor, PartitionOutcome};
use crate::error::{ClientError, Result};
use crate::fetch::{FetchSize, DEFAULT_FETCH_SIZE, DEFAULT_MAX_FETCH_SIZE};
use kwire07_zk::{NodeKind, TopicName};

use crate::zk::{streams_for, subscription_value, Subscription, ZkCluster, DEFAULT_SESSION_TIMEOUT};

/// `autooffset.reset`: where to start without a committed offset, or after OffsetOutOfRange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OffsetReset {
    /// OFFSETS −2 (0.7's default).
    #[default]
    Smallest,
    /// OFFSETS −1.
    Largest,
}

impl OffsetReset {
    fn time(self) -> i64 {
        match self {
            OffsetReset::Smallest => OFFSETS_EARLIEST,
            OffsetReset::Largest => OFFSETS_LATEST,
        }
    }
}

#[derive(Debug, Clone)]
pub struct GroupConfig {
    pub zookeeper: String,
    pub group: String,
    /// Subscribed topics, one stream (thread id) each.
    pub topics: Vec<String>,
    /// Replaces the `<host>-<ms>-<hex>` part of the consumer id (0.7's `consumerid`).
    pub consumer_id: Option<String>,
    pub auto_offset_reset: OffsetReset,
    pub autocommit_enable: bool,
    pub autocommit_interval: Duration,
    pub rebalance_retries: u32,
    pub rebalance_backoff: Duration,
    pub session_timeout: Duration,
    pub fetch_size: usize,
    pub max_fetch_size: usize,
    /// Socket receive buffer of the broker connections (0.7's `socket.buffersize`).
    pub receive_buffer: ReceiveBuffer,
    /// Pause after a fetch round that found nothing.
    pub poll_backoff: Duration,
    /// Consecutive failed fetch rounds tolerated (brokers restarting) before erroring.
    pub max_fetch_failures: u32,
}

impl GroupConfig {
    /// 0.7's defaults: autocommit every 10 s, 4 rebalance retries 2 s apart, 6 s sessions.
    pub fn new(zookeeper: &str, group: &str, topics: &[&str]) -> GroupConfig {
        GroupConfig {
            zookeeper: zookeeper.to_owned(),
            group: group.to_owned(),
            topics: topics.iter().map(|t| t.to_string()).collect(),
            consumer_id: None,
            auto_offset_reset: OffsetReset::Smallest,
            autocommit_enable: true,
            autocommit_interval: Duration::from_secs(10),
            rebalance_retries: 4,
            rebalance_backoff: Duration::from_secs(2),
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            fetch_size: DEFAULT_FETCH_SIZE,
            max_fetch_size: DEFAULT_MAX_FETCH_SIZE,
            receive_buffer: ReceiveBuffer::Auto,
            poll_backoff: Duration::from_millis(100),
            max_fetch_failures: 100,
        }
    }
}

/// One owned partition: fetch position, position handed to the caller, last committed.
#[derive(Debug)]
struct Owned {
    cursor: PartitionCursor,
    consumed: u64,
    committed: Option<u64>,
}

/// Set by the watch tasks when the group or a topic's brokers change.
#[derive(Debug, Default)]
struct Trigger {
    raised: AtomicBool,
}

pub struct GroupConsumer {
    config: GroupConfig,
    zk: ZkCluster,
    consumer_id: String,
    subscription: Subscription,
    /// Broker id → partitions owned on it.
    owned: BTreeMap<i32, Vec<Owned>>,
    /// Owner nodes this consumer created.
    owner_nodes: Vec<String>,
    conns: HashMap<i32, BrokerConnection>,
    broker_addrs: BTreeMap<i32, String>,
    trigger: Arc<Trigger>,
    watchers: Vec<JoinHandle<()>>,
    buffer: VecDeque<ConsumedMessage>,
    last_commit: Instant,
    failures: u32,
    rebalances: u64,
}

impl std::fmt::Debug for GroupConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupConsumer").field("consumer_id", &self.consumer_id).finish()
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// `<host>-<epoch ms>-<first 8 hex digits of a random 64-bit value>`, as 0.7 builds it.
fn generated_id() -> String {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let hex = format!("{:016x}", fastrand::u64(..));
    format!("{}-{ms}-{}", hostname(), &hex[..8])
}

impl GroupConsumer {
    /// Registers in the group and takes part in a first rebalance.
    pub async fn join(config: GroupConfig) -> Result<GroupConsumer> {
        if config.topics.is_empty() {
            return Err(ClientError::Config("a group consumer needs at least one topic".into()));
        }
        if let Err(e) = kwire07_zk::GroupId::new(config.group.as_str()) {
            return Err(ClientError::Config(format!("invalid group name {:?}: {e}", config.group)));
        }
        let zk = ZkCluster::connect_with(&config.zookeeper, config.session_timeout).await?;
        let suffix = config.consumer_id.clone().unwrap_or_else(generated_id);
        let consumer_id = format!("{}_{suffix}", config.group);
        let topics: std::result::Result<_, _> =
            config.topics.iter().map(|t| TopicName::new(t.as_str()).map(|t| (t, 1))).collect();
        let subscription = Subscription::Static(topics.map_err(|e| ClientError::Config(e.to_string()))?);
        let mut consumer = GroupConsumer {
            zk,
            consumer_id,
            subscription,
            owned: BTreeMap::new(),
            owner_nodes: Vec::new(),
            conns: HashMap::new(),
            broker_addrs: BTreeMap::new(),
            trigger: Arc::new(Trigger::default()),
            watchers: Vec::new(),
            buffer: VecDeque::new(),
            last_commit: Instant::now(),
            failures: 0,
            rebalances: 0,
            config,
        };
        consumer.register().await?;
        consumer.rebalance().await?;
        Ok(consumer)
    }

    pub fn consumer_id(&self) -> &str {
        &self.consumer_id
    }

    /// The current ZooKeeper session (a new one after an expiry), e.g. for its session id.
    pub fn zookeeper(&self) -> &ZkCluster {
        &self.zk
    }

    /// How many rebalances this consumer has completed.
    pub fn rebalances(&self) -> u64 {
        self.rebalances
    }

    /// The partitions owned now, as (topic, `"<broker>-<partition>"`).
    pub fn owned_partitions(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self
            .owned
            .values()
            .flatten()
            .map(|o| (o.cursor.topic.to_string(), format!("{}-{}", o.cursor.broker_id, o.cursor.partition)))
            .collect();
        v.sort();
        v
    }

    fn ids_path(&self) -> Result<String> {
        ZkCluster::ids_path(&self.config.group)
    }

    /// Writes the registration node and arms the watches.
    async fn register(&mut self) -> Result<()> {
        let ids = self.ids_path()?;
        self.zk.mkdirs(&ids).await?;
        let me = ZkCluster::member_path(&self.config.group, &self.consumer_id)?;
        if !self.zk.create_ephemeral(&me, &subscription_value(&self.subscription)).await? {
            return Err(ClientError::Config(format!(
                "consumer id {} is already registered in ZooKeeper",
                self.consumer_id
            )));
        }
        for w in self.watchers.drain(..) {
            w.abort();
        }
        let mut paths = vec![ids];
        for t in &self.config.topics {
            let topic = TopicName::new(t.as_str()).map_err(|e| ClientError::Config(e.to_string()))?;
            paths.push(NodeKind::TopicRegistration { topic }.path());
        }
        for path in paths {
            let (armed_tx, armed_rx) = tokio::sync::oneshot::channel();
            let client = self.zk.client().clone();
            let trigger = self.trigger.clone();
            self.watchers.push(tokio::spawn(watch_children(client, path, trigger, armed_tx)));
            let _ = armed_rx.await;
        }
        Ok(())
    }

    /// Re-registers after the ZooKeeper session expired (its ephemeral nodes are gone).
    async fn renew_session(&mut self) -> Result<()> {
        tracing::warn!("ZooKeeper session of {} ended; registering again", self.consumer_id);
        self.zk = ZkCluster::connect_with(&self.config.zookeeper, self.config.session_timeout).await?;
        self.owner_nodes.clear();
        self.register().await?;
        self.rebalance().await
    }

    /// Rebalances (spec §4.3): commit, release owners, compute the range, claim owners with
    /// retries, then load each partition's committed offset.
    pub async fn rebalance(&mut self) -> Result<()> {
        let tries = self.config.rebalance_retries + 1;
        let mut reason = String::new();
        for attempt in 0..tries {
            self.trigger.raised.store(false, Ordering::SeqCst);
            self.commit().await?;
            self.release().await?;
            match self.try_claim().await? {
                Ok(assignment) => {
                    if let Err(e) = self.start_fetching(assignment).await {
                        // Owned but not readable (a broker is away): rebalance again next time.
                        self.trigger.raised.store(true, Ordering::SeqCst);
                        return Err(e);
                    }
                    self.rebalances += 1;
                    return Ok(());
                }
                Err(conflict) => {
                    reason = conflict;
                    tracing::info!("rebalance attempt {} of {}: {reason}", attempt + 1, tries);
                    if attempt + 1 < tries {
                        tokio::time::sleep(self.config.rebalance_backoff).await;
                    }
                }
            }
        }
        Err(ClientError::Rebalance { tries, reason })
    }

    /// Stops fetching: forgets unconsumed buffered messages and deletes our owner nodes.
    async fn release(&mut self) -> Result<()> {
        self.buffer.clear();
        self.owned.clear();
        for path in std::mem::take(&mut self.owner_nodes) {
            self.zk.delete(&path).await?;
        }
        Ok(())
    }

    /// This consumer's share of every subscribed topic under the current group membership.
    async fn compute_assignment(&self) -> Result<Vec<(String, String, BrokerPartition)>> {
        let members = self.zk.group_members(&self.config.group).await?;
        let mut mine = Vec::new();
        for topic in &self.config.topics {
            let mut threads = Vec::new();
            for (id, sub) in &members {
                match sub {
                    Ok(sub) => threads.extend((0..streams_for(sub, topic)).map(|i| format!("{id}-{i}"))),
                    Err(e) => tracing::warn!("ignoring group member {id} with an unreadable registration: {e}"),
                }
            }
            let partitions = sorted_partitions(&self.zk.topic_partition_counts(topic).await?);
            let my_threads = streams_for(&self.subscription, topic);
            for i in 0..my_threads {
                let thread = format!("{}-{i}", self.consumer_id);
                let range = range_for(&partitions, &threads, &thread);
                if range.is_empty() && !partitions.is_empty() {
                    tracing::info!("{thread} gets no partition of {topic}");
                }
                mine.extend(range.iter().map(|bp| (topic.clone(), thread.clone(), bp.clone())));
            }
        }
        Ok(mine)
    }

    /// Creates the owner nodes; `Ok(Err(..))` on a conflict, after deleting the ones created.
    #[allow(clippy::type_complexity)]
    async fn try_claim(&mut self) -> Result<std::result::Result<Vec<(String, BrokerPartition)>, String>> {
        let assignment = self.compute_assignment().await?;
        let mut created: Vec<String> = Vec::new();
        for (topic, thread, bp) in &assignment {
            let dir = ZkCluster::owners_dir(&self.config.group, topic)?;
            self.zk.mkdirs(&dir).await?;
            let path = ZkCluster::owner_path(&self.config.group, topic, bp)?;
            if !self.zk.create_ephemeral(&path, thread).await? {
                for p in &created {
                    self.zk.delete(p).await?;
                }
                return Ok(Err(format!("{path} is still owned by another consumer")));
            }
            created.push(path);
        }
        self.owner_nodes = created;
        Ok(Ok(assignment.into_iter().map(|(t, _, bp)| (t, bp)).collect()))
    }

    async fn start_fetching(&mut self, assignment: Vec<(String, BrokerPartition)>) -> Result<()> {
        self.broker_addrs = self.zk.brokers().await?.into_iter().map(|(id, b)| (id, b.addr())).collect();
        for (topic, bp) in assignment {
            let committed = self.zk.read_offset(&self.config.group, &topic, &bp).await?;
            let offset = match committed {
                Some(o) => o,
                None => self.reset_offset(&topic, &bp).await?,
            };
            let mut cursor = PartitionCursor::new(&topic, bp.broker_id, bp.partition, offset);
            cursor.size = FetchSize::new(self.config.fetch_size, self.config.max_fetch_size);
            self.owned.entry(bp.broker_id).or_default().push(Owned { cursor, consumed: offset, committed });
        }
        Ok(())
    }

    /// The `autooffset.reset` offset of a partition, from its broker.
    async fn reset_offset(&mut self, topic: &str, bp: &BrokerPartition) -> Result<u64> {
        let time = self.config.auto_offset_reset.time();
        let conn = self.connection(bp.broker_id).await?;
        conn.offset_at(topic, bp.partition, time).await
    }

    async fn connection(&mut self, broker: i32) -> Result<&mut BrokerConnection> {
        if !self.conns.contains_key(&broker) {
            if !self.broker_addrs.contains_key(&broker) {
                self.broker_addrs = self.zk.brokers().await?.into_iter().map(|(id, b)| (id, b.addr())).collect();
            }
            let addr =
                self.broker_addrs.get(&broker).cloned().ok_or_else(|| ClientError::NoBroker(format!("id {broker}")))?;
            let mut conn = BrokerConnection::connect(&addr).await?;
            conn.set_receive_buffer(self.config.receive_buffer)?;
            self.conns.insert(broker, conn);
        }
        Ok(self.conns.get_mut(&broker).expect("inserted above"))
    }

    /// Writes the offsets handed out since the last commit.
    pub async fn commit(&mut self) -> Result<()> {
        for owned in self.owned.values_mut().flatten() {
            if owned.committed == Some(owned.consumed) {
                continue;
            }
            let bp = BrokerPartition { broker_id: owned.cursor.broker_id, partition: owned.cursor.partition };
            self.zk.write_offset(&self.config.group, &owned.cursor.topic, &bp, owned.consumed).await?;
            owned.committed = Some(owned.consumed);
        }
        self.last_commit = Instant::now();
        Ok(())
    }

    fn transient(e: &ClientError) -> bool {
        e.is_connection_error() || matches!(e, ClientError::NoBroker(_))
    }

    /// Whether `e` means this consumer's ZooKeeper session is over. A request can fail with
    /// `SessionExpired` before the client's state says so.
    fn session_ended(&self, e: &ClientError) -> bool {
        matches!(
            e,
            ClientError::ZooKeeper {
                source: zookeeper_client::Error::SessionExpired | zookeeper_client::Error::ClientClosed,
                ..
            }
        ) || self.zk.client().state().is_terminated()
    }

    /// Housekeeping before fetching; when the session turns out to be over, registers again
    /// (0.7's `ZKSessionExpireListener`) instead of failing.
    async fn maintain(&mut self) -> Result<()> {
        match self.maintain_session().await {
            Err(e) if self.session_ended(&e) => self.renew_session().await,
            // Reconnecting to ZooKeeper: try again next round (a rebalance cut short stays due).
            Err(e) if is_connection_loss(&e) && self.failures < self.config.max_fetch_failures => {
                self.failures += 1;
                self.trigger.raised.store(true, Ordering::SeqCst);
                tracing::warn!("{e}; will retry");
                Ok(())
            }
            r => r,
        }
    }

    /// Session renewal, rebalance, periodic commit.
    async fn maintain_session(&mut self) -> Result<()> {
        if self.zk.client().state().is_terminated() {
            self.renew_session().await?;
        }
        if self.trigger.raised.load(Ordering::SeqCst) {
            match self.rebalance().await {
                Ok(()) => {}
                // A broker restarting: keep the trigger raised and try again next round.
                Err(e) if Self::transient(&e) && self.failures < self.config.max_fetch_failures => {
                    self.failures += 1;
                    self.conns.clear();
                    self.broker_addrs.clear();
                    tracing::warn!("rebalance postponed: {e}");
                }
                Err(e) => return Err(e),
            }
        }
        if self.config.autocommit_enable && self.last_commit.elapsed() >= self.config.autocommit_interval {
            self.commit().await?;
        }
        Ok(())
    }

    /// One fetch round over every owned partition (MULTIFETCH per broker). Returns how many
    /// messages were buffered plus how many fetch sizes grew (0 = nothing new anywhere).
    async fn fetch_once(&mut self) -> Result<usize> {
        self.maintain().await?;
        let mut got = 0;
        let brokers: Vec<i32> = self.owned.keys().copied().collect();
        for broker in brokers {
            match self.fetch_broker(broker).await {
                Ok(n) => {
                    got += n;
                    self.failures = 0;
                }
                Err(e) if Self::transient(&e) => {
                    self.conns.remove(&broker);
                    self.broker_addrs.clear();
                    self.failures += 1;
                    if self.failures > self.config.max_fetch_failures {
                        return Err(e);
                    }
                    tracing::warn!("{e}; will retry");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(got)
    }

    async fn fetch_broker(&mut self, broker: i32) -> Result<usize> {
        let Some(mut owned) = self.owned.remove(&broker) else { return Ok(0) };
        let result = self.fetch_owned(broker, &mut owned).await;
        self.owned.insert(broker, owned);
        result
    }

    async fn fetch_owned(&mut self, broker: i32, owned: &mut [Owned]) -> Result<usize> {
        let mut cursors: Vec<PartitionCursor> = owned.iter().map(|o| o.cursor.clone()).collect();
        let outcomes = fetch_round(self.connection(broker).await?, &mut cursors).await?;
        let mut got = 0;
        for ((o, cursor), outcome) in owned.iter_mut().zip(cursors).zip(outcomes) {
            o.cursor = cursor;
            match outcome {
                PartitionOutcome::Messages(m) => {
                    got += m.len();
                    self.buffer.extend(m);
                }
                // Not a message, but progress: fetch again without pausing.
                PartitionOutcome::Grew => got += 1,
                PartitionOutcome::OutOfRange => {
                    let topic = o.cursor.topic.to_string();
                    let bp = BrokerPartition { broker_id: broker, partition: o.cursor.partition };
                    let offset = self.reset_offset(&topic, &bp).await?;
                    tracing::warn!(
                        "{topic} {}: offset {} out of range, resetting to {offset}",
                        bp.name(),
                        o.cursor.offset
                    );
                    // Drop buffered messages of this partition: they precede the reset.
                    self.buffer
                        .retain(|m| !(m.broker_id == broker && m.partition == bp.partition && *m.topic == *topic));
                    o.cursor.offset = offset;
                    o.consumed = offset;
                    o.committed = match self.zk.write_offset(&self.config.group, &topic, &bp, offset).await {
                        Ok(()) => Some(offset),
                        // The session ended or is reconnecting: the next commit writes the
                        // offset, and the next round's housekeeping renews the session.
                        Err(e) if self.session_ended(&e) || is_connection_loss(&e) => {
                            tracing::warn!("{e}; the reset offset is committed later");
                            self.trigger.raised.store(true, Ordering::SeqCst);
                            None
                        }
                        Err(e) => return Err(e),
                    };
                }
                PartitionOutcome::Failed(code) => {
                    tracing::warn!("{} {broker}-{}: broker error {code:?}", o.cursor.topic, o.cursor.partition);
                }
            }
        }
        Ok(got)
    }

    fn mark_consumed(&mut self, m: &ConsumedMessage) {
        if let Some(list) = self.owned.get_mut(&m.broker_id) {
            if let Some(o) = list.iter_mut().find(|o| o.cursor.partition == m.partition && o.cursor.topic == m.topic) {
                o.consumed = m.next_offset;
            }
        }
    }

    /// The next message, waiting up to `wait` for one. Handing it out counts as consuming it:
    /// its offset is what the next commit writes.
    pub async fn next_message(&mut self, wait: Duration) -> Result<Option<ConsumedMessage>> {
        let deadline = Instant::now() + wait;
        loop {
            if self.trigger.raised.load(Ordering::SeqCst) {
                // Rebalance before handing out more: the buffer may hold partitions we lose.
                self.maintain().await?;
            }
            if let Some(m) = self.buffer.pop_front() {
                self.mark_consumed(&m);
                return Ok(Some(m));
            }
            if self.fetch_once().await? == 0 {
                let now = Instant::now();
                if now >= deadline {
                    return Ok(None);
                }
                tokio::time::sleep(self.config.poll_backoff.min(deadline - now)).await;
            }
        }
    }

    /// One fetch round; every message returned counts as consumed.
    pub async fn poll(&mut self) -> Result<Vec<ConsumedMessage>> {
        if self.buffer.is_empty() {
            self.fetch_once().await?;
        } else {
            self.maintain().await?;
        }
        let out: Vec<ConsumedMessage> = self.buffer.drain(..).collect();
        for m in &out {
            self.mark_consumed(m);
        }
        Ok(out)
    }

    /// Leaves the group: commits, deletes the owner nodes and the registration, closes the
    /// session.
    pub async fn close(mut self) -> Result<()> {
        let commit = self.commit().await;
        let release = self.release().await;
        let unregister = match ZkCluster::member_path(&self.config.group, &self.consumer_id) {
            Ok(me) => self.zk.delete(&me).await,
            Err(e) => Err(e),
        };
        for w in self.watchers.drain(..) {
            w.abort();
        }
        commit.and(release).and(unregister)
    }
}

impl Drop for GroupConsumer {
    fn drop(&mut self) {
        for w in self.watchers.drain(..) {
            w.abort();
        }
    }
}

/// Whether `e` is a ZooKeeper request cut off while the client loses or re-establishes its
/// connection (the session may well live on): worth trying again next round. The client
/// reports a silent server ("no response from connection in …ms") and socket errors as
/// `Custom`.
fn is_connection_loss(e: &ClientError) -> bool {
    use zookeeper_client::Error as Zk;
    matches!(e, ClientError::ZooKeeper { source: Zk::ConnectionLoss | Zk::Timeout | Zk::Throttled | Zk::Custom(_), .. })
}

/// Keeps a children watch on `path` (or an existence watch while it is missing) and raises
/// `trigger` on every change after the first arming, which is reported through `armed`.
async fn watch_children(client: Client, path: String, trigger: Arc<Trigger>, armed: tokio::sync::oneshot::Sender<()>) {
    let mut armed = Some(armed);
    loop {
        let watched = match client.list_and_watch_children(&path).await {
            Ok((_, w)) => Ok(w),
            Err(zookeeper_client::Error::NoNode) => client.check_and_watch_stat(&path).await.map(|(_, w)| w),
            Err(e) => Err(e),
        };
        let watcher: OneshotWatcher = match watched {
            Ok(w) => w,
            Err(e) => {
                if client.state().is_terminated() {
                    trigger.raised.store(true, Ordering::SeqCst);
                    return;
                }
                tracing::debug!("watch on {path}: {e}");
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        match armed.take() {
            Some(tx) => {
                let _ = tx.send(());
            }
            // Re-armed after an event: whatever changed in between is covered by this flag.
            None => trigger.raised.store(true, Ordering::SeqCst),
        }
        let event = watcher.changed().await;
        if event.event_type == EventType::Session {
            trigger.raised.store(true, Ordering::SeqCst);
            if event.session_state.is_terminated() {
                return;
            }
        }
    }
}
