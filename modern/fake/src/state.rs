//! The cluster's data: nodes, topics, partitions and their logs, behind one lock. Requests
//! hold it only while they read or change it, never across an await.

use std::collections::{BTreeMap, HashMap};

use kwire::{ErrorCode, Uuid};

use crate::consumer_groups::{ConsumerGroup, Topics};
use crate::groups::{java_hash, Group};
use crate::log::Log;
use crate::producers::Producers;
use crate::transactions::partition::PartitionTxns;
use crate::transactions::Transactions;

/// A node as clients see it.
#[derive(Debug, Clone)]
pub(crate) struct NodeInfo {
    pub host: String,
    pub port: i32,
    pub alive: bool,
    /// Where it listens (what a restart binds again).
    pub listen: std::net::SocketAddr,
}

/// One partition: where it lives and what it holds.
#[derive(Debug)]
pub(crate) struct Partition {
    pub leader: i32,
    pub leader_epoch: i32,
    pub replicas: Vec<i32>,
    pub log: Log,
    pub producers: Producers,
    pub txns: PartitionTxns,
}

impl Partition {
    /// A new, empty partition led by the first of `replicas` that is `live` (Kafka's first
    /// replica in the ISR), or by none.
    pub fn new(replicas: Vec<i32>, live: &[i32]) -> Partition {
        Partition {
            leader: replicas.iter().copied().find(|r| live.contains(r)).unwrap_or(-1),
            leader_epoch: 0,
            replicas,
            log: Log::default(),
            producers: Producers::default(),
            txns: PartitionTxns::default(),
        }
    }
}

/// A topic.
#[derive(Debug)]
pub(crate) struct Topic {
    pub id: Uuid,
    pub partitions: Vec<Partition>,
    pub configs: BTreeMap<String, String>,
}

/// Everything the nodes share.
#[derive(Debug)]
pub(crate) struct State {
    pub cluster_id: String,
    pub nodes: BTreeMap<i32, NodeInfo>,
    pub topics: BTreeMap<String, Topic>,
    pub names_by_id: HashMap<Uuid, String>,
    pub groups: BTreeMap<String, Group>,
    /// KIP-848 groups' membership (their offsets are kept in `groups`).
    pub consumer_groups: BTreeMap<String, ConsumerGroup>,
    pub transactions: Transactions,
    pub next_producer_id: i64,
    pub auto_create_topics: bool,
    pub default_partitions: i32,
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

/// A random version-4 UUID (topic ids, member ids), never the nil id Kafka reserves.
pub(crate) fn random_uuid() -> Uuid {
    let mut bytes = [0u8; 16];
    // The operating system's generator; without one, a time-based id still differs per topic.
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        bytes = now.as_nanos().to_be_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Uuid::from_bytes(bytes)
}

impl State {
    /// Ids of the nodes that are up, in order.
    pub fn live_nodes(&self) -> Vec<i32> {
        self.nodes.iter().filter(|(_, n)| n.alive).map(|(id, _)| *id).collect()
    }

    /// Every partition whose leader is down gets the first replica that is up (a new leader
    /// epoch), or no leader (-1) when none is; one without a leader gets one that came back.
    pub fn elect_leaders(&mut self) {
        let live = self.live_nodes();
        for topic in self.topics.values_mut() {
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
        if self.topics.contains_key(name) {
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
        self.topics.insert(name.to_string(), Topic { id, partitions, configs });
        self.names_by_id.insert(id, name.to_string());
        id
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

    /// The node that coordinates a group or transactional id: the leader of the partition of
    /// Kafka's internal topic the key hashes to, here a live node chosen the same way.
    pub fn coordinator_of(&self, key: &str) -> Option<i32> {
        let live = self.live_nodes();
        let slot = (java_hash(key) & 0x7fff_ffff) as usize;
        (!live.is_empty()).then(|| live[slot % live.len()])
    }

    /// Creates `name` with the defaults if it is unknown and auto-creation is on.
    pub fn auto_create(&mut self, name: &str) -> bool {
        if self.topics.contains_key(name) {
            return true;
        }
        self.auto_create_topics && self.create_topic(name, self.default_partitions, 1, BTreeMap::new()).is_ok()
    }

    /// Deletes a topic.
    pub fn delete_topic(&mut self, name: &str) -> Option<Topic> {
        let topic = self.topics.remove(name)?;
        self.names_by_id.remove(&topic.id);
        Some(topic)
    }

    /// The name of the topic with this id.
    pub fn name_of(&self, id: Uuid) -> Option<String> {
        self.names_by_id.get(&id).cloned()
    }

    /// A partition, and whether `node` leads it, or the error to answer.
    /// Every topic as a consumer group's assignor sees it: name → (id, partitions).
    pub fn assignable_topics(&self) -> Topics {
        self.topics.iter().map(|(name, t)| (name.clone(), (t.id, t.partitions.len() as i32))).collect()
    }

    pub fn partition_for(&mut self, topic: &str, index: i32, node: i32) -> Result<&mut Partition, ErrorCode> {
        let partition = self
            .topics
            .get_mut(topic)
            .and_then(|t| t.partitions.get_mut(usize::try_from(index).ok()?))
            .ok_or(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)?;
        if partition.leader != node {
            return Err(ErrorCode::NOT_LEADER_OR_FOLLOWER);
        }
        Ok(partition)
    }
}
