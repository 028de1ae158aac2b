//! [`FakeCluster`]: starting the nodes, and what a test asks of the cluster directly.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use kwire::messages::ApiKey;
use kwire::{ErrorCode, Uuid};

use crate::config::FakeConfig;
use crate::connection;
use crate::control::{Action, HookId, Intercepted, Times};
use crate::groups::Group;
use crate::node::{self, NodeHandle};
use crate::request_budget::RequestBudget;
use crate::shared::Shared;
use crate::state::{NodeInfo, State};

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
    nodes: Mutex<BTreeMap<i32, NodeHandle>>,
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
            nodes.insert(id as i32, NodeInfo { host, port, alive: true, listen: local });
        }
        let state = State::new(nodes, &config);
        let budget = RequestBudget::new(config.max_buffered_request_bytes.max(connection::most_held(config.max_frame)));
        let shared = Arc::new(Shared::new(state, budget, config));
        tokio::spawn(tick(Arc::downgrade(&shared)));
        let nodes = listeners
            .into_iter()
            .enumerate()
            .map(|(id, listener)| Ok((id as i32, node::spawn(id as i32, listener, shared.clone())?)))
            .collect::<io::Result<BTreeMap<_, _>>>()?;
        Ok(FakeCluster { shared, nodes: Mutex::new(nodes) })
    }

    /// `HOST:PORT` of every node as Metadata advertises them, comma-separated: what a
    /// client's `bootstrap.servers` takes.
    pub fn bootstrap_servers(&self) -> String {
        let state = self.shared.state();
        state.nodes().map(|(_, n)| format!("{}:{}", n.host, n.port)).collect::<Vec<_>>().join(",")
    }

    /// The address each node listens on, in node order.
    pub fn listen_addrs(&self) -> Vec<SocketAddr> {
        self.handles().values().map(|n| n.addr).collect()
    }

    fn handles(&self) -> MutexGuard<'_, BTreeMap<i32, NodeHandle>> {
        self.nodes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Creates a topic of `partitions` partitions, one replica each, as CreateTopics would.
    pub fn create_topic(&self, name: &str, partitions: i32) -> Result<Uuid, ErrorCode> {
        self.shared.state().create_topic(name, partitions, 1, BTreeMap::new()).map_err(|r| r.0)
    }

    /// The names of every topic.
    pub fn topics(&self) -> Vec<String> {
        self.shared.state().topics().names().cloned().collect()
    }

    /// The node leading a partition (-1: none).
    pub fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        self.shared.state().partition(topic, partition).map(|p| p.leader)
    }

    /// The id of a topic.
    pub fn topic_id(&self, name: &str) -> Option<Uuid> {
        self.shared.state().topic(name).map(|t| t.id)
    }

    /// What the log of a partition holds, from its start offset.
    pub fn batches(&self, topic: &str, partition: i32) -> Option<Vec<StoredBatch>> {
        let state = self.shared.state();
        let partition = state.partition(topic, partition)?;
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
        Some(self.shared.state().partition(topic, partition)?.log.end_offset())
    }

    /// The member ids of `group`, whatever its kind (empty for a group nobody is in).
    pub fn group_members(&self, group: &str) -> Vec<String> {
        self.shared.state().group(group).map(Group::member_ids).unwrap_or_default()
    }

    /// Removes a member of `group` as its session timeout would: a classic group's other
    /// members rebalance, a KIP-848 group moves to a new epoch, a share group member's sessions
    /// close and the records it holds go back (as never delivered: their delivery count goes
    /// back down). False if it is not a member.
    pub fn expire_member(&self, group: &str, member: &str) -> bool {
        let (expired, released) = self.shared.state().remove_member(group, member);
        self.shared.groups_changed.notify_waiters();
        if released {
            self.shared.appended.notify_waiters();
        }
        expired
    }

    /// The member ids of share group `group` (empty for a group nobody is in, or of another
    /// kind).
    pub fn share_group_members(&self, group: &str) -> Vec<String> {
        let state = self.shared.state();
        state.groups().share(group).map(|g| g.members.keys().cloned().collect()).unwrap_or_default()
    }

    /// Removes a member of share group `group` as its session timeout would (see
    /// [`FakeCluster::expire_member`]). False if it is not a member of a share group.
    pub fn expire_share_member(&self, group: &str, member: &str) -> bool {
        let (expired, released) = {
            let mut state = self.shared.state();
            if state.groups().share(group).is_err() {
                return false;
            }
            state.remove_member(group, member)
        };
        if released {
            self.shared.appended.notify_waiters();
        }
        expired
    }

    /// Starts a rebalance of `group`: a classic group's members must join again, a KIP-848
    /// group gets a new epoch and assignment. False if it has no members or one runs already,
    /// or for a share group (whose members take a new assignment at once).
    pub fn force_rebalance(&self, group: &str) -> bool {
        let forced = {
            let mut state = self.shared.state();
            state.groups_mut().get_mut(group).is_some_and(|g| g.force_rebalance(std::time::Instant::now()))
        };
        self.shared.groups_changed.notify_waiters();
        forced
    }

    /// Aborts `transactional_id`'s open transaction as its timeout would: abort markers
    /// written, its offsets dropped, and the producer fenced by the next epoch. False if it has
    /// none open.
    pub fn abort_transaction(&self, transactional_id: &str) -> bool {
        let aborted = {
            let mut state = self.shared.state();
            state.abort_open(transactional_id)
        };
        if aborted {
            self.shared.appended.notify_waiters();
        }
        aborted
    }

    /// Moves a partition's leadership to `node`, bumping its leader epoch: clients that send
    /// to the old leader get NOT_LEADER_OR_FOLLOWER and must find the new one.
    pub fn move_leader(&self, topic: &str, partition: i32, node: i32) -> Result<(), ErrorCode> {
        let mut state = self.shared.state();
        if state.node(node).is_none() {
            return Err(ErrorCode::BROKER_NOT_AVAILABLE);
        }
        let partition =
            state.topics_mut().partition_mut(topic, partition).ok_or(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)?;
        if !partition.replicas.contains(&node) {
            partition.replicas.push(node);
        }
        partition.leader = node;
        partition.leader_epoch += 1;
        Ok(())
    }

    /// Adds a hook: `decide` sees every request of `api` (on every node) before it is handled
    /// and says what happens to it (see [`Action`]), for the next request, the next `n` or
    /// until removed ([`Times`]). Hooks run in the order added; the first that does not
    /// answer [`Action::Pass`] decides. A hook must not add or remove hooks itself.
    pub fn intercept(
        &self,
        api: ApiKey,
        times: Times,
        decide: impl FnMut(&Intercepted<'_>) -> Action + Send + 'static,
    ) -> HookId {
        self.shared.hooks.add(api, times, Box::new(decide))
    }

    /// Fails requests of `api` with `code` (in every partition, group or key they name),
    /// handling nothing: NOT_LEADER_OR_FOLLOWER on Produce, COORDINATOR_LOAD_IN_PROGRESS on
    /// JoinGroup, … An API whose responses carry no error is refused here.
    pub fn fail(&self, api: ApiKey, times: Times, code: ErrorCode) -> Result<HookId, ErrorCode> {
        if !crate::apis::can_fail(api) {
            return Err(ErrorCode::UNSUPPORTED_VERSION);
        }
        Ok(self.intercept(api, times, move |_| Action::Error(code)))
    }

    /// Removes a hook; false if it had already run its course.
    pub fn remove_hook(&self, id: HookId) -> bool {
        self.shared.hooks.remove(id)
    }

    /// Ids of the nodes that are up.
    pub fn live_nodes(&self) -> Vec<i32> {
        self.shared.state().live_nodes()
    }

    /// Stops a node as if its process died: its listener and connections close, Metadata stops
    /// naming it, and each partition it led moves to another replica that is up (with a new
    /// leader epoch), or is left without a leader.
    pub async fn kill_node(&self, id: i32) -> bool {
        let Some(handle) = self.handles().remove(&id) else { return false };
        handle.stop().await;
        self.shared.state().set_alive(id, false);
        self.shared.groups_changed.notify_waiters();
        true
    }

    /// Starts a killed node again on the address it had; partitions without a leader whose
    /// replicas include it are led by it again.
    pub async fn restart_node(&self, id: i32) -> io::Result<()> {
        let addr = {
            let state = self.shared.state();
            let node = state.node(id).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such node"))?;
            if node.alive {
                return Ok(());
            }
            node.listen
        };
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let handle = node::spawn(id, listener, self.shared.clone())?;
        self.handles().insert(id, handle);
        self.shared.state().set_alive(id, true);
        Ok(())
    }

    /// Adds a node on a free loopback port; returns its id.
    pub async fn add_node(&self) -> io::Result<i32> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let local = listener.local_addr()?;
        let id = {
            let mut state = self.shared.state();
            let id = state.next_node_id();
            state.add_node(
                id,
                NodeInfo { host: local.ip().to_string(), port: i32::from(local.port()), alive: true, listen: local },
            );
            id
        };
        let handle = node::spawn(id, listener, self.shared.clone())?;
        self.handles().insert(id, handle);
        Ok(id)
    }

    /// Removes a node for good: killed, dropped from every replica set.
    pub async fn remove_node(&self, id: i32) -> bool {
        let known = self.kill_node(id).await;
        self.shared.state().remove_node(id);
        known
    }

    /// Stops every node and waits for their connections to close.
    pub async fn shutdown(self) {
        let handles = std::mem::take(&mut *self.handles());
        for (_, node) in handles {
            node.stop().await;
        }
    }
}

/// Every 100 ms, the clock's work ([`State::tick`]): members past their session timeout
/// leave, rounds of joins past their deadline end, share-partitions' acquisition locks that ran
/// out let their records go, transactions past their timeout abort. Stops once the cluster is
/// gone.
async fn tick(shared: std::sync::Weak<Shared>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(shared) = shared.upgrade() else { return };
        let ticked = shared.state().tick(std::time::Instant::now(), &shared.config);
        if ticked.groups_changed {
            shared.groups_changed.notify_waiters();
        }
        if ticked.records_changed {
            shared.appended.notify_waiters();
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
