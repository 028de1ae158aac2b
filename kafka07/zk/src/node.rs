//! The path → node-kind classifier: which Kafka node a ZooKeeper path is (0.7 and 0.8
//! layouts), and how to decode, check and re-encode its data. `kwire07 zk dump` and
//! `kwire07 zk check` are built on this.

use std::fmt;

use super::admin::{DeleteTopicsNode, PreferredReplicaElection, ReassignPartitions};
use super::brokers::BrokerNode;
use super::config::{ConfigChange, TopicConfig, CONFIG_CHANGE_PREFIX};
use super::consumers::{ConsumerOffset, ConsumerRegistrationNode, ConsumerThreadId};
use super::controller::{ControllerEpoch, ControllerNode};
use super::error::ZkDataError;
use super::names::{ConsumerId, GroupId, TopicName};
use super::text::parse_canonical;
use super::topics::{Kafka07PartitionCount, PartitionState, TopicNode};

/// Largest partition or broker id (a Java `int`).
const MAX_ID: u64 = i32::MAX as u64;

/// How a consumer's owner and offset nodes name a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartitionKey {
    /// 0.8: the partition id, e.g. `3`.
    Partition(i32),
    /// 0.7: `<brokerId>-<partition>`, e.g. `1-3` (partitions are numbered per broker).
    BrokerPartition { broker_id: i32, partition: i32 },
}

impl PartitionKey {
    /// Reads a node name: `3`, or 0.7's `1-3`; ids in canonical form only.
    pub fn parse(text: &str) -> Option<Self> {
        let id = |t: &str| parse_canonical(t, MAX_ID).map(|v| v as i32);
        match text.split_once('-') {
            None => id(text).map(PartitionKey::Partition),
            Some((broker, partition)) => {
                Some(PartitionKey::BrokerPartition { broker_id: id(broker)?, partition: id(partition)? })
            }
        }
    }
}

impl fmt::Display for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionKey::Partition(p) => write!(f, "{p}"),
            PartitionKey::BrokerPartition { broker_id, partition } => write!(f, "{broker_id}-{partition}"),
        }
    }
}

/// Persistent parent nodes that carry no data of their own (Kafka creates them empty).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Container {
    Brokers,
    BrokerIds,
    BrokerTopics,
    /// `/brokers/topics/<topic>/partitions` (0.8).
    TopicPartitions {
        topic: TopicName,
    },
    /// `/brokers/topics/<topic>/partitions/<p>` (0.8).
    Partition {
        topic: TopicName,
        partition: i32,
    },
    Consumers,
    ConsumerGroup {
        group: GroupId,
    },
    ConsumerIds {
        group: GroupId,
    },
    ConsumerOwners {
        group: GroupId,
    },
    ConsumerOwnersTopic {
        group: GroupId,
        topic: TopicName,
    },
    ConsumerOffsets {
        group: GroupId,
    },
    ConsumerOffsetsTopic {
        group: GroupId,
        topic: TopicName,
    },
    Admin,
    Config,
    ConfigTopics,
    ConfigChanges,
}

impl Container {
    /// The container's ZooKeeper path.
    pub fn path(&self) -> String {
        NodeKind::Container(self.clone()).path()
    }
}

/// Every node of Kafka's ZooKeeper layout that this module knows, with the names and ids its
/// path carries. [`NodeKind::path`] and [`NodeKind::classify`] are inverses.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Container(Container),
    /// `/brokers/ids/<id>`: 0.8 JSON or 0.7 `creator:host:port`.
    BrokerRegistration {
        broker_id: i32,
    },
    /// `/brokers/topics/<topic>`: 0.8 replica assignment, or empty (0.7).
    TopicRegistration {
        topic: TopicName,
    },
    /// `/brokers/topics/<topic>/partitions/<p>/state` (0.8).
    PartitionState {
        topic: TopicName,
        partition: i32,
    },
    /// `/brokers/topics/<topic>/<brokerId>` (0.7): partition count on that broker.
    Kafka07TopicBroker {
        topic: TopicName,
        broker_id: i32,
    },
    /// `/controller`.
    Controller,
    /// `/controller_epoch`.
    ControllerEpoch,
    /// `/consumers/<group>/ids/<consumerId>`.
    ConsumerRegistration {
        group: GroupId,
        consumer: ConsumerId,
    },
    /// `/consumers/<group>/owners/<topic>/<partition>` (0.8) or `…/<brokerId>-<partition>` (0.7).
    ConsumerOwner {
        group: GroupId,
        topic: TopicName,
        partition: PartitionKey,
    },
    /// `/consumers/<group>/offsets/<topic>/<partition>` (0.8) or `…/<brokerId>-<partition>` (0.7).
    ConsumerOffset {
        group: GroupId,
        topic: TopicName,
        partition: PartitionKey,
    },
    /// `/admin/reassign_partitions`.
    ReassignPartitions,
    /// `/admin/preferred_replica_election`.
    PreferredReplicaElection,
    /// `/admin/delete_topics`: the seed's JSON list, or the empty parent of deletion markers.
    DeleteTopics,
    /// `/admin/delete_topics/<topic>`: Kafka 0.8.1+'s empty deletion marker.
    DeleteTopicMarker {
        topic: TopicName,
    },
    /// `/config/topics/<topic>`.
    TopicConfig {
        topic: TopicName,
    },
    /// `/config/changes/config_change_<seq>`, `seq` as ZooKeeper's 10-digit sequence suffix.
    ConfigChange {
        sequence: u32,
    },
}

/// A node's data, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedValue {
    /// A node whose data is empty, as its kind requires (containers, deletion markers).
    Empty,
    Broker(BrokerNode),
    Topic(TopicNode),
    PartitionState(PartitionState),
    Kafka07PartitionCount(Kafka07PartitionCount),
    Controller(ControllerNode),
    ControllerEpoch(ControllerEpoch),
    ConsumerRegistration(ConsumerRegistrationNode),
    ConsumerOwner(ConsumerThreadId),
    ConsumerOffset(ConsumerOffset),
    ReassignPartitions(ReassignPartitions),
    PreferredReplicaElection(PreferredReplicaElection),
    DeleteTopics(DeleteTopicsNode),
    TopicConfig(TopicConfig),
    ConfigChange(ConfigChange),
}

impl TypedValue {
    /// The node data, in the form Kafka writes it.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            TypedValue::Empty => Vec::new(),
            TypedValue::Broker(v) => v.to_bytes(),
            TypedValue::Topic(v) => v.to_bytes(),
            TypedValue::PartitionState(v) => v.to_bytes(),
            TypedValue::Kafka07PartitionCount(v) => v.to_bytes(),
            TypedValue::Controller(v) => v.to_bytes(),
            TypedValue::ControllerEpoch(v) => v.to_bytes(),
            TypedValue::ConsumerRegistration(v) => v.to_bytes(),
            TypedValue::ConsumerOwner(v) => v.to_bytes(),
            TypedValue::ConsumerOffset(v) => v.to_bytes(),
            TypedValue::ReassignPartitions(v) => v.to_bytes(),
            TypedValue::PreferredReplicaElection(v) => v.to_bytes(),
            TypedValue::DeleteTopics(v) => v.to_bytes(),
            TypedValue::TopicConfig(v) => v.to_bytes(),
            TypedValue::ConfigChange(v) => v.to_bytes(),
        }
    }
}

fn topic(name: &str) -> Option<TopicName> {
    TopicName::new(name).ok()
}

fn group(name: &str) -> Option<GroupId> {
    GroupId::new(name).ok()
}

fn id(text: &str) -> Option<i32> {
    parse_canonical(text, MAX_ID).map(|v| v as i32)
}

/// The sequence number of a `/config/changes` child named `config_change_<10 digits>`.
pub fn config_change_sequence(name: &str) -> Option<u32> {
    let digits = name.strip_prefix(CONFIG_CHANGE_PREFIX)?;
    if digits.len() != 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    super::text::parse_unsigned(digits, MAX_ID).ok().map(|v| v as u32)
}

impl NodeKind {
    /// Which Kafka node `path` is, or `None` for any other path (including malformed ones:
    /// relative, trailing `/`, empty components, invalid names, non-canonical numbers).
    pub fn classify(path: &str) -> Option<NodeKind> {
        use Container as C;
        use NodeKind as K;
        let rest = path.strip_prefix('/')?;
        let parts: Vec<&str> = rest.split('/').collect();
        let kind = match parts[..] {
            ["brokers"] => K::Container(C::Brokers),
            ["brokers", "ids"] => K::Container(C::BrokerIds),
            ["brokers", "ids", b] => K::BrokerRegistration { broker_id: id(b)? },
            ["brokers", "topics"] => K::Container(C::BrokerTopics),
            ["brokers", "topics", t] => K::TopicRegistration { topic: topic(t)? },
            ["brokers", "topics", t, "partitions"] => K::Container(C::TopicPartitions { topic: topic(t)? }),
            ["brokers", "topics", t, b] => K::Kafka07TopicBroker { topic: topic(t)?, broker_id: id(b)? },
            ["brokers", "topics", t, "partitions", p] => {
                K::Container(C::Partition { topic: topic(t)?, partition: id(p)? })
            }
            ["brokers", "topics", t, "partitions", p, "state"] => {
                K::PartitionState { topic: topic(t)?, partition: id(p)? }
            }
            ["controller"] => K::Controller,
            ["controller_epoch"] => K::ControllerEpoch,
            ["consumers"] => K::Container(C::Consumers),
            ["consumers", g] => K::Container(C::ConsumerGroup { group: group(g)? }),
            ["consumers", g, "ids"] => K::Container(C::ConsumerIds { group: group(g)? }),
            ["consumers", g, "ids", c] => {
                K::ConsumerRegistration { group: group(g)?, consumer: ConsumerId::new(c).ok()? }
            }
            ["consumers", g, "owners"] => K::Container(C::ConsumerOwners { group: group(g)? }),
            ["consumers", g, "owners", t] => {
                K::Container(C::ConsumerOwnersTopic { group: group(g)?, topic: topic(t)? })
            }
            ["consumers", g, "owners", t, p] => {
                K::ConsumerOwner { group: group(g)?, topic: topic(t)?, partition: PartitionKey::parse(p)? }
            }
            ["consumers", g, "offsets"] => K::Container(C::ConsumerOffsets { group: group(g)? }),
            ["consumers", g, "offsets", t] => {
                K::Container(C::ConsumerOffsetsTopic { group: group(g)?, topic: topic(t)? })
            }
            ["consumers", g, "offsets", t, p] => {
                K::ConsumerOffset { group: group(g)?, topic: topic(t)?, partition: PartitionKey::parse(p)? }
            }
            ["admin"] => K::Container(C::Admin),
            ["admin", "reassign_partitions"] => K::ReassignPartitions,
            ["admin", "preferred_replica_election"] => K::PreferredReplicaElection,
            ["admin", "delete_topics"] => K::DeleteTopics,
            ["admin", "delete_topics", t] => K::DeleteTopicMarker { topic: topic(t)? },
            ["config"] => K::Container(C::Config),
            ["config", "topics"] => K::Container(C::ConfigTopics),
            ["config", "topics", t] => K::TopicConfig { topic: topic(t)? },
            ["config", "changes"] => K::Container(C::ConfigChanges),
            ["config", "changes", c] => K::ConfigChange { sequence: config_change_sequence(c)? },
            _ => return None,
        };
        Some(kind)
    }

    /// The ZooKeeper path of this node. Names were validated when the kind was built, so the
    /// path has exactly the levels its kind says.
    pub fn path(&self) -> String {
        use Container as C;
        use NodeKind as K;
        match self {
            K::Container(c) => match c {
                C::Brokers => "/brokers".to_owned(),
                C::BrokerIds => "/brokers/ids".to_owned(),
                C::BrokerTopics => "/brokers/topics".to_owned(),
                C::TopicPartitions { topic } => format!("/brokers/topics/{topic}/partitions"),
                C::Partition { topic, partition } => format!("/brokers/topics/{topic}/partitions/{partition}"),
                C::Consumers => "/consumers".to_owned(),
                C::ConsumerGroup { group } => format!("/consumers/{group}"),
                C::ConsumerIds { group } => format!("/consumers/{group}/ids"),
                C::ConsumerOwners { group } => format!("/consumers/{group}/owners"),
                C::ConsumerOwnersTopic { group, topic } => format!("/consumers/{group}/owners/{topic}"),
                C::ConsumerOffsets { group } => format!("/consumers/{group}/offsets"),
                C::ConsumerOffsetsTopic { group, topic } => format!("/consumers/{group}/offsets/{topic}"),
                C::Admin => "/admin".to_owned(),
                C::Config => "/config".to_owned(),
                C::ConfigTopics => "/config/topics".to_owned(),
                C::ConfigChanges => "/config/changes".to_owned(),
            },
            K::BrokerRegistration { broker_id } => format!("/brokers/ids/{broker_id}"),
            K::TopicRegistration { topic } => format!("/brokers/topics/{topic}"),
            K::PartitionState { topic, partition } => format!("/brokers/topics/{topic}/partitions/{partition}/state"),
            K::Kafka07TopicBroker { topic, broker_id } => format!("/brokers/topics/{topic}/{broker_id}"),
            K::Controller => "/controller".to_owned(),
            K::ControllerEpoch => "/controller_epoch".to_owned(),
            K::ConsumerRegistration { group, consumer } => format!("/consumers/{group}/ids/{consumer}"),
            K::ConsumerOwner { group, topic, partition } => format!("/consumers/{group}/owners/{topic}/{partition}"),
            K::ConsumerOffset { group, topic, partition } => format!("/consumers/{group}/offsets/{topic}/{partition}"),
            K::ReassignPartitions => "/admin/reassign_partitions".to_owned(),
            K::PreferredReplicaElection => "/admin/preferred_replica_election".to_owned(),
            K::DeleteTopics => "/admin/delete_topics".to_owned(),
            K::DeleteTopicMarker { topic } => format!("/admin/delete_topics/{topic}"),
            K::TopicConfig { topic } => format!("/config/topics/{topic}"),
            K::ConfigChange { sequence } => format!("/config/changes/{CONFIG_CHANGE_PREFIX}{sequence:010}"),
        }
    }

    /// A short name for the node's schema, for listings such as `kwire07 zk check`.
    pub fn name(&self) -> &'static str {
        match self {
            NodeKind::Container(_) => "container",
            NodeKind::BrokerRegistration { .. } => "broker registration",
            NodeKind::TopicRegistration { .. } => "topic registration",
            NodeKind::PartitionState { .. } => "partition state",
            NodeKind::Kafka07TopicBroker { .. } => "0.7 partition count",
            NodeKind::Controller => "controller",
            NodeKind::ControllerEpoch => "controller epoch",
            NodeKind::ConsumerRegistration { .. } => "consumer registration",
            NodeKind::ConsumerOwner { .. } => "consumer owner",
            NodeKind::ConsumerOffset { .. } => "consumer offset",
            NodeKind::ReassignPartitions => "partition reassignment",
            NodeKind::PreferredReplicaElection => "preferred replica election",
            NodeKind::DeleteTopics => "topic deletion",
            NodeKind::DeleteTopicMarker { .. } => "topic deletion marker",
            NodeKind::TopicConfig { .. } => "topic config",
            NodeKind::ConfigChange { .. } => "config change notification",
        }
    }

    /// Decodes `bytes` as this node's data. Errors name the node's path.
    pub fn parse(&self, bytes: &[u8]) -> Result<TypedValue, ZkDataError> {
        let path = &self.path();
        Ok(match self {
            NodeKind::Container(_) | NodeKind::DeleteTopicMarker { .. } => {
                if !bytes.is_empty() {
                    return Err(ZkDataError::invalid(path, format!("expected no data, found {} bytes", bytes.len())));
                }
                TypedValue::Empty
            }
            NodeKind::BrokerRegistration { .. } => TypedValue::Broker(BrokerNode::parse(path, bytes)?),
            NodeKind::TopicRegistration { .. } => TypedValue::Topic(TopicNode::parse(path, bytes)?),
            NodeKind::PartitionState { .. } => TypedValue::PartitionState(PartitionState::parse(path, bytes)?),
            NodeKind::Kafka07TopicBroker { .. } => {
                TypedValue::Kafka07PartitionCount(Kafka07PartitionCount::parse(path, bytes)?)
            }
            NodeKind::Controller => TypedValue::Controller(ControllerNode::parse(path, bytes)?),
            NodeKind::ControllerEpoch => TypedValue::ControllerEpoch(ControllerEpoch::parse(path, bytes)?),
            NodeKind::ConsumerRegistration { .. } => {
                TypedValue::ConsumerRegistration(ConsumerRegistrationNode::parse(path, bytes)?)
            }
            NodeKind::ConsumerOwner { .. } => TypedValue::ConsumerOwner(ConsumerThreadId::parse(path, bytes)?),
            NodeKind::ConsumerOffset { .. } => TypedValue::ConsumerOffset(ConsumerOffset::parse(path, bytes)?),
            NodeKind::ReassignPartitions => TypedValue::ReassignPartitions(ReassignPartitions::parse(path, bytes)?),
            NodeKind::PreferredReplicaElection => {
                TypedValue::PreferredReplicaElection(PreferredReplicaElection::parse(path, bytes)?)
            }
            NodeKind::DeleteTopics => TypedValue::DeleteTopics(DeleteTopicsNode::parse(path, bytes)?),
            NodeKind::TopicConfig { .. } => TypedValue::TopicConfig(TopicConfig::parse(path, bytes)?),
            NodeKind::ConfigChange { .. } => TypedValue::ConfigChange(ConfigChange::parse(path, bytes)?),
        })
    }
}

/// A decoded node: its path, its kind and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub kind: NodeKind,
    pub value: TypedValue,
}

impl Node {
    /// Same as [`NodeKind::classify`].
    pub fn classify(path: &str) -> Option<NodeKind> {
        NodeKind::classify(path)
    }

    /// Classifies `path` and decodes `bytes` as its data.
    pub fn decode(path: &str, bytes: &[u8]) -> Result<Node, ZkDataError> {
        let kind = NodeKind::classify(path).ok_or_else(|| ZkDataError::UnknownPath { path: path.to_owned() })?;
        let value = kind.parse(bytes)?;
        Ok(Node { kind, value })
    }

    pub fn path(&self) -> String {
        self.kind.path()
    }
}

/// Decodes the data of the node at `path`.
pub fn parse(path: &str, bytes: &[u8]) -> Result<TypedValue, ZkDataError> {
    Node::decode(path, bytes).map(|node| node.value)
}

/// Whether the node at `path` is a Kafka node whose data matches its schema.
pub fn check(path: &str, bytes: &[u8]) -> Result<(), ZkDataError> {
    Node::decode(path, bytes).map(|_| ())
}
