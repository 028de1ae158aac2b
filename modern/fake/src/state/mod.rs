//! The cluster's data behind one lock: nodes, topics with their partitions and logs, the group
//! coordinator's groups and offsets, the share-partitions, and the transaction coordinator's
//! transactional ids. Requests hold it only while they read or change it, never across an
//! await, and reach it through [`State`]'s methods.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

use kwire::runtime::hash::java_string_hash;
use kwire::{ErrorCode, Uuid};

use crate::config::FakeConfig;
use crate::groups::{Group, Groups};
use crate::ids::random_uuid;
use crate::share_partitions::SharePartitions;
use crate::transactions::Transactions;

mod topics;
mod transactions;

pub(crate) use topics::{Partition, Topic, Topics};

/// A node as clients see it.
#[derive(Debug, Clone)]
pub(crate) struct NodeInfo {
    pub host: String,
    pub port: i32,
    pub alive: bool,
    /// Where it listens (what a restart binds again).
    pub listen: SocketAddr,
}

/// Everything the nodes share.
#[derive(Debug)]
pub(crate) struct State {
    cluster_id: String,
    nodes: BTreeMap<i32, NodeInfo>,
    topics: Topics,
    groups: Groups,
    shares: SharePartitions,
    transactions: Transactions,
    next_producer_id: i64,
    auto_create_topics: bool,
    default_partitions: i32,
}

/// Why a topic could not be created: Kafka's code, and its message where it has a telling one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused(pub ErrorCode, pub Option<String>);

impl Refused {
    pub fn with(code: ErrorCode, message: String) -> Refused {
        Refused(code, Some(message))
    }
}

/// Kafka's rule for topic names: 1 to 249 characters of `[a-zA-Z0-9._-]`, not `.` or `..`.
pub(crate) fn valid_topic_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 249
        && name != "."
        && name != ".."
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

/// What one tick of the clock changed: groups (for JoinGroup and SyncGroup waiting on one), and
/// records readable or available again (for fetches waiting for some).
#[derive(Debug, Default)]
pub(crate) struct Ticked {
    pub groups_changed: bool,
    pub records_changed: bool,
}

impl State {
    /// A cluster of these nodes, with nothing in it yet.
    pub fn new(nodes: BTreeMap<i32, NodeInfo>, config: &FakeConfig) -> State {
        State {
            cluster_id: config.cluster_id.clone(),
            nodes,
            topics: Topics::default(),
            groups: Groups::new(config.group_initial_rebalance_delay),
            shares: SharePartitions::default(),
            transactions: Transactions::default(),
            next_producer_id: 1000,
            auto_create_topics: config.auto_create_topics,
            default_partitions: config.default_partitions,
        }
    }

    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// Every node, up or not, by id.
    pub fn nodes(&self) -> impl Iterator<Item = (i32, &NodeInfo)> {
        self.nodes.iter().map(|(id, n)| (*id, n))
    }

    pub fn node(&self, id: i32) -> Option<&NodeInfo> {
        self.nodes.get(&id)
    }

    /// Ids of the nodes that are up, in order.
    pub fn live_nodes(&self) -> Vec<i32> {
        self.nodes.iter().filter(|(_, n)| n.alive).map(|(id, _)| *id).collect()
    }

    /// The id the next node added gets.
    pub fn next_node_id(&self) -> i32 {
        self.nodes.keys().next_back().map_or(0, |last| last + 1)
    }

    pub fn add_node(&mut self, id: i32, node: NodeInfo) {
        self.nodes.insert(id, node);
    }

    /// Marks a node up or down, and moves leaders accordingly (see
    /// [`State::elect_leaders`]); false for a node the cluster does not have.
    pub fn set_alive(&mut self, id: i32, alive: bool) -> bool {
        let Some(node) = self.nodes.get_mut(&id) else { return false };
        node.alive = alive;
        self.elect_leaders();
        true
    }

    /// Removes a node for good: dropped from every replica set.
    pub fn remove_node(&mut self, id: i32) {
        self.nodes.remove(&id);
        for (_, topic) in self.topics.iter_mut() {
            for p in &mut topic.partitions {
                p.replicas.retain(|r| *r != id);
            }
        }
        self.elect_leaders();
    }

    /// Every partition whose leader is down gets the first replica that is up (a new leader
    /// epoch), or no leader (-1) when none is; one without a leader gets one that came back.
    pub fn elect_leaders(&mut self) {
        let live = self.live_nodes();
        for (_, topic) in self.topics.iter_mut() {
            for p in &mut topic.partitions {
                if live.contains(&p.leader) {
                    continue;
                }
                let next = p.replicas.iter().copied().find(|r| live.contains(r)).unwrap_or(-1);
                if next != p.leader {
                    p.leader = next;
                    p.leader_epoch += 1;
                }
            }
        }
    }

    /// The node that coordinates a group or transactional id: the leader of the partition of
    /// Kafka's internal topic the key hashes to (Java's `String.hashCode`), here a live node
    /// chosen the same way.
    pub fn coordinator_of(&self, key: &str) -> Option<i32> {
        let live = self.live_nodes();
        let slot = (java_string_hash(key) & 0x7fff_ffff) as usize;
        (!live.is_empty()).then(|| live[slot % live.len()])
    }

    /// Whether `node` coordinates `key` (a group or a transactional id): NOT_COORDINATOR
    /// otherwise, as Kafka answers a client whose coordinator moved.
    pub fn coordinates(&self, node: i32, key: &str) -> Result<(), ErrorCode> {
        match self.coordinator_of(key) {
            Some(n) if n == node => Ok(()),
            Some(_) => Err(ErrorCode::NOT_COORDINATOR),
            None => Err(ErrorCode::COORDINATOR_NOT_AVAILABLE),
        }
    }

    pub fn topics(&self) -> &Topics {
        &self.topics
    }

    pub fn topics_mut(&mut self) -> &mut Topics {
        &mut self.topics
    }

    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.topics.get(name)
    }

    /// A partition by topic name and index.
    pub fn partition(&self, topic: &str, index: i32) -> Option<&Partition> {
        self.topics.partition(topic, index)
    }

    /// A partition, and whether `node` leads it, or the error to answer.
    pub fn led_partition(&mut self, topic: &str, index: i32, node: i32) -> Result<&mut Partition, ErrorCode> {
        self.topics.led_by(topic, index, node)
    }

    /// The name of the topic with this id.
    pub fn name_of(&self, id: Uuid) -> Option<&str> {
        self.topics.name_of(id)
    }

    /// Kafka's `num.partitions`: a topic's partitions when not said.
    pub fn default_partitions(&self) -> i32 {
        self.default_partitions
    }

    /// Whether a topic could be created: Kafka's checks, in Kafka's order.
    pub fn check_new_topic(&self, name: &str, partitions: i32, replication: i16) -> Result<(), Refused> {
        self.check_new_name(name)?;
        self.check_counts(partitions, replication)
    }

    /// A new topic's name: valid, and not taken (Kafka checks these before anything else).
    pub fn check_new_name(&self, name: &str) -> Result<(), Refused> {
        if !valid_topic_name(name) {
            return Err(Refused(ErrorCode::INVALID_TOPIC_EXCEPTION, None));
        }
        if self.topics.contains(name) {
            return Err(Refused(ErrorCode::TOPIC_ALREADY_EXISTS, None));
        }
        Ok(())
    }

    /// A new topic's partition count and replication factor, when the cluster places replicas.
    pub fn check_counts(&self, partitions: i32, replication: i16) -> Result<(), Refused> {
        if partitions < 1 {
            return Err(Refused(ErrorCode::INVALID_PARTITIONS, None));
        }
        if replication < 1 || replication as usize > self.live_nodes().len() {
            return Err(Refused(ErrorCode::INVALID_REPLICATION_FACTOR, None));
        }
        Ok(())
    }

    /// Creates a topic of `partitions` partitions with `replication` replicas each, leaders
    /// spread over the live nodes round-robin.
    pub fn create_topic(
        &mut self,
        name: &str,
        partitions: i32,
        replication: i16,
        configs: BTreeMap<String, String>,
    ) -> Result<Uuid, Refused> {
        self.check_new_topic(name, partitions, replication)?;
        let replicas = self.spread(0, partitions as usize, replication as usize);
        Ok(self.add_topic(name, replicas, configs))
    }

    /// Adds a topic whose partitions have these replicas (checked already).
    pub fn add_topic(&mut self, name: &str, replicas: Vec<Vec<i32>>, configs: BTreeMap<String, String>) -> Uuid {
        let live = self.live_nodes();
        let id = random_uuid();
        let partitions = replicas.into_iter().map(|r| Partition::new(r, &live)).collect();
        self.topics.insert(name, Topic { id, partitions, configs });
        id
    }

    /// Adds partitions with these replicas (checked already) to a topic.
    pub fn add_partitions(&mut self, name: &str, replicas: Vec<Vec<i32>>) {
        let live = self.live_nodes();
        if let Some(topic) = self.topics.get_mut(name) {
            topic.partitions.extend(replicas.into_iter().map(|r| Partition::new(r, &live)));
        }
    }

    /// Replicas for partitions `first..first + count`, `replication` each, over the live nodes
    /// round-robin.
    pub fn spread(&self, first: usize, count: usize, replication: usize) -> Vec<Vec<i32>> {
        let live = self.live_nodes();
        (first..first + count).map(|p| (0..replication).map(|r| live[(p + r) % live.len()]).collect()).collect()
    }

    /// One partition's replicas as a client assigned them, checked in Kafka's order (its
    /// `validateManualPartitionAssignment`, then at least one replica up), with Kafka's
    /// messages; `replication` is the count earlier partitions have.
    pub fn check_assignment(
        &self,
        partition: i32,
        replicas: &[i32],
        replication: Option<usize>,
    ) -> Result<(), Refused> {
        let refused = |message: String| Err(Refused::with(ErrorCode::INVALID_REPLICA_ASSIGNMENT, message));
        if replicas.is_empty() {
            return refused("The manual partition assignment includes an empty replica list.".to_string());
        }
        let mut sorted = replicas.to_vec();
        sorted.sort_unstable();
        for (i, id) in sorted.iter().enumerate() {
            if !self.nodes.contains_key(id) {
                return refused(format!(
                    "The manual partition assignment includes broker {id}, but no such broker is registered."
                ));
            }
            if i > 0 && sorted[i - 1] == *id {
                return refused(format!("The manual partition assignment includes the broker {id} more than once."));
            }
        }
        if let Some(n) = replication.filter(|&n| n != replicas.len()) {
            return refused(format!(
                "The manual partition assignment includes a partition with {} replica(s), but this is not consistent with previous partitions, which have {n} replica(s).",
                replicas.len()
            ));
        }
        let live = self.live_nodes();
        if !replicas.iter().any(|r| live.contains(r)) {
            return refused(format!(
                "All brokers specified in the manual partition assignment for partition {partition} are fenced or in controlled shutdown."
            ));
        }
        Ok(())
    }

    /// Creates `name` with the defaults if it is unknown and auto-creation is on.
    pub fn auto_create(&mut self, name: &str) -> bool {
        if self.topics.contains(name) {
            return true;
        }
        self.auto_create_topics && self.create_topic(name, self.default_partitions, 1, BTreeMap::new()).is_ok()
    }

    /// Deletes a topic.
    pub fn delete_topic(&mut self, name: &str) -> Option<Topic> {
        self.topics.remove(name)
    }

    pub fn groups(&self) -> &Groups {
        &self.groups
    }

    pub fn groups_mut(&mut self) -> &mut Groups {
        &mut self.groups
    }

    /// The group `id` names, whatever its kind.
    pub fn group(&self, id: &str) -> Option<&Group> {
        self.groups.get(id)
    }

    /// Deletes an empty group (DeleteGroups): its offsets, and a share group's share-partitions
    /// and sessions, go with it.
    pub fn delete_group(&mut self, id: &str) -> Result<(), ErrorCode> {
        if let Group::Share(_) = self.groups.delete(id)? {
            self.shares.forget_group(id);
        }
        Ok(())
    }

    /// Removes a member of a group as its session timeout would: (whether it was one, whether
    /// records it held became available again).
    pub fn remove_member(&mut self, group: &str, member: &str) -> (bool, bool) {
        let Some(g) = self.groups.get_mut(group) else { return (false, false) };
        let removed = g.remove_member(member, Instant::now());
        let share = matches!(g, Group::Share(_));
        (removed, removed && share && self.shares.forget_member(group, member))
    }

    pub fn shares(&self) -> &SharePartitions {
        &self.shares
    }

    pub fn shares_mut(&mut self) -> &mut SharePartitions {
        &mut self.shares
    }

    /// The share-partitions with the topics they read (whose logs a share fetch hands out).
    pub fn shares_and_topics(&mut self) -> (&mut SharePartitions, &Topics) {
        (&mut self.shares, &self.topics)
    }

    pub fn transactions(&self) -> &Transactions {
        &self.transactions
    }

    pub fn transactions_mut(&mut self) -> &mut Transactions {
        &mut self.transactions
    }

    /// A new producer id (InitProducerId).
    pub fn new_producer_id(&mut self) -> i64 {
        let id = self.next_producer_id;
        self.next_producer_id += 1;
        id
    }

    /// The clock's work: members past their session timeouts leave (a share group member's
    /// records go back), rounds of joins past their deadline end, share-partitions' acquisition
    /// locks that ran out let their records go, and transactions past their timeout abort.
    pub fn tick(&mut self, now: Instant, config: &FakeConfig) -> Ticked {
        let mut ticked = Ticked::default();
        for (group, gone) in self.groups.tick(now, config) {
            ticked.groups_changed = true;
            for member in gone {
                ticked.records_changed |= self.shares.forget_member(&group, &member);
            }
        }
        let configs = self.groups.configs();
        ticked.records_changed |=
            self.shares.expire_locks(now, |group| configs.settings(group, config).delivery_count_limit);
        // Markers written: read_committed fetches may move on.
        ticked.records_changed |= self.expire_transactions(now);
        ticked
    }
}
