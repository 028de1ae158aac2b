//! [`FakeCluster`]: starting the nodes, and what a test asks of the cluster directly.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use kafka_wire::{ErrorCode, Uuid};
use tokio::sync::Notify;

use crate::config::FakeConfig;
use crate::node::{self, NodeHandle};
use crate::state::{NodeInfo, State};

/// What the nodes share: the data, a wake-up for fetches waiting for records, the config.
#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<State>,
    pub appended: Notify,
    /// Woken on every change to a group, for JoinGroup and SyncGroup waiting on one.
    pub groups_changed: Notify,
    pub config: FakeConfig,
}

impl Shared {
    /// The cluster's data. A handler that panicked while holding it left nothing half-written
    /// that a later request could trip on (every change is made whole), so the lock is taken
    /// back rather than failing every request after.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A batch as the log holds it: its offsets and its bytes (base offset rewritten).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBatch {
    /// The offset of its first record.
    pub base_offset: i64,
    /// The offset of its last record.
    pub last_offset: i64,
    /// The whole batch as a Fetch returns it.
    pub bytes: Bytes,
}

/// A Kafka cluster inside the process (see the crate docs).
#[derive(Debug)]
pub struct FakeCluster {
    shared: Arc<Shared>,
    nodes: Vec<NodeHandle>,
}

impl FakeCluster {
    /// Starts every node's listener; returns once all of them accept connections.
    pub async fn start(config: FakeConfig) -> io::Result<FakeCluster> {
        let mut listeners = Vec::with_capacity(config.nodes);
        for id in 0..config.nodes {
            let at = config.listen.get(id).map_or("127.0.0.1:0", String::as_str);
            let listener = tokio::net::TcpListener::bind(at).await?;
            listeners.push(listener);
        }
        let mut nodes = BTreeMap::new();
        for (id, listener) in listeners.iter().enumerate() {
            let local = listener.local_addr()?;
            let (host, port) = match config.advertise.get(id) {
                Some(addr) => split_host_port(addr)?,
                None => (local.ip().to_string(), i32::from(local.port())),
            };
            nodes.insert(id as i32, NodeInfo { host, port, alive: true });
        }
        let state = State {
            cluster_id: config.cluster_id.clone(),
            nodes,
            topics: BTreeMap::new(),
            names_by_id: Default::default(),
            groups: BTreeMap::new(),
            next_producer_id: 1000,
            auto_create_topics: config.auto_create_topics,
            default_partitions: config.default_partitions,
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            appended: Notify::new(),
            groups_changed: Notify::new(),
            config,
        });
        tokio::spawn(tick_groups(Arc::downgrade(&shared)));
        let nodes = listeners
            .into_iter()
            .enumerate()
            .map(|(id, listener)| node::spawn(id as i32, listener, shared.clone()))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(FakeCluster { shared, nodes })
    }

    /// `HOST:PORT` of every node as Metadata advertises them, comma-separated: what a
    /// client's `bootstrap.servers` takes.
    pub fn bootstrap_servers(&self) -> String {
        let state = self.shared.state();
        state.nodes.values().map(|n| format!("{}:{}", n.host, n.port)).collect::<Vec<_>>().join(",")
    }

    /// The address each node listens on, in node order.
    pub fn listen_addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|n| n.addr).collect()
    }

    /// Creates a topic of `partitions` partitions, one replica each, as CreateTopics would.
    pub fn create_topic(&self, name: &str, partitions: i32) -> Result<Uuid, ErrorCode> {
        self.shared.state().create_topic(name, partitions, 1, BTreeMap::new()).map_err(|r| r.0)
    }

    /// The id of a topic.
    pub fn topic_id(&self, name: &str) -> Option<Uuid> {
        self.shared.state().topics.get(name).map(|t| t.id)
    }

    /// What the log of a partition holds, from its start offset.
    pub fn batches(&self, topic: &str, partition: i32) -> Option<Vec<StoredBatch>> {
        let state = self.shared.state();
        let partition = state.topics.get(topic)?.partitions.get(usize::try_from(partition).ok()?)?;
        let start = partition.log.start_offset();
        Some(
            partition
                .log
                .entries()
                .iter()
                .filter(|e| e.last_offset >= start)
                .map(|e| StoredBatch { base_offset: e.base_offset, last_offset: e.last_offset, bytes: e.bytes.clone() })
                .collect(),
        )
    }

    /// The offset the next record of a partition gets (its high watermark: every replica is
    /// in sync here).
    pub fn end_offset(&self, topic: &str, partition: i32) -> Option<i64> {
        let state = self.shared.state();
        let partition = state.topics.get(topic)?.partitions.get(usize::try_from(partition).ok()?)?;
        Some(partition.log.end_offset())
    }

    /// Moves a partition's leadership to `node`, bumping its leader epoch: clients that send
    /// to the old leader get NOT_LEADER_OR_FOLLOWER and must find the new one.
    pub fn move_leader(&self, topic: &str, partition: i32, node: i32) -> Result<(), ErrorCode> {
        let mut state = self.shared.state();
        if !state.nodes.contains_key(&node) {
            return Err(ErrorCode::BROKER_NOT_AVAILABLE);
        }
        let partition = state
            .topics
            .get_mut(topic)
            .and_then(|t| t.partitions.get_mut(usize::try_from(partition).ok()?))
            .ok_or(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)?;
        if !partition.replicas.contains(&node) {
            partition.replicas.push(node);
        }
        partition.leader = node;
        partition.leader_epoch += 1;
        Ok(())
    }

    /// Stops every node and waits for their connections to close.
    pub async fn shutdown(self) {
        for node in self.nodes {
            node.stop().await;
        }
    }
}

/// Every 100 ms: members past their session timeout leave, rounds of joins past their
/// deadline end. Stops once the cluster is gone.
async fn tick_groups(shared: std::sync::Weak<Shared>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(shared) = shared.upgrade() else { return };
        let now = std::time::Instant::now();
        let changed = shared.state().groups.values_mut().fold(false, |changed, g| g.expire(now) | changed);
        if changed {
            shared.groups_changed.notify_waiters();
        }
    }
}

/// `HOST:PORT` split, the port checked.
fn split_host_port(addr: &str) -> io::Result<(String, i32)> {
    let bad = || io::Error::new(io::ErrorKind::InvalidInput, format!("not HOST:PORT: {addr}"));
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    Ok((host.trim_start_matches('[').trim_end_matches(']').to_string(), i32::from(port)))
}
