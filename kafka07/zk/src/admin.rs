//! `/admin/…`: requests written by admin tools and acted on by the controller (seed 003
//! nodes 9–11).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::error::ZkDataError;
use super::ids::{check_broker_list, check_non_negative};
use super::json::{parse_versioned, to_json, VERSION_1};
use super::names::TopicName;

/// One partition to move: `{"topic":"Foo","partition":1,"replicas":[0,1,3]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionReassignment {
    pub topic: TopicName,
    pub partition: i32,
    pub replicas: Vec<i32>,
}

/// A topic partition: `{"topic":"Foo","partition":1}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicPartition {
    pub topic: TopicName,
    pub partition: i32,
}

fn check_partitions<'a>(
    path: &str,
    partitions: impl IntoIterator<Item = (&'a TopicName, i32)>,
) -> Result<(), ZkDataError> {
    let mut seen = BTreeSet::new();
    for (topic, partition) in partitions {
        check_non_negative(path, &format!("partition id of topic {topic:?}"), partition)?;
        if !seen.insert((topic, partition)) {
            return Err(ZkDataError::invalid(path, format!("partition {topic}-{partition} is listed twice")));
        }
    }
    Ok(())
}

/// `/admin/reassign_partitions`: `{"version":1,"partitions":[{"topic":…,"partition":…,"replicas":[…]}]}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReassignPartitions {
    pub partitions: Vec<PartitionReassignment>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReassignWire {
    version: i64,
    partitions: Vec<PartitionReassignment>,
}

impl ReassignPartitions {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let wire: ReassignWire = parse_versioned(path, bytes)?;
        check_partitions(path, wire.partitions.iter().map(|p| (&p.topic, p.partition)))?;
        for p in &wire.partitions {
            check_broker_list(path, &format!("the replica list of {}-{}", p.topic, p.partition), &p.replicas, false)?;
        }
        Ok(ReassignPartitions { partitions: wire.partitions })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        to_json(&ReassignWire { version: VERSION_1, partitions: self.partitions.clone() })
    }
}

/// `/admin/preferred_replica_election`: `{"version":1,"partitions":[{"topic":…,"partition":…}]}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreferredReplicaElection {
    pub partitions: Vec<TopicPartition>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ElectionWire {
    version: i64,
    partitions: Vec<TopicPartition>,
}

impl PreferredReplicaElection {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let wire: ElectionWire = parse_versioned(path, bytes)?;
        check_partitions(path, wire.partitions.iter().map(|p| (&p.topic, p.partition)))?;
        Ok(PreferredReplicaElection { partitions: wire.partitions })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        to_json(&ElectionWire { version: VERSION_1, partitions: self.partitions.clone() })
    }
}

/// `/admin/delete_topics` as seed 003 prints it: `{"version":1,"topics":["foo","bar"]}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteTopics {
    pub topics: Vec<TopicName>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteWire {
    version: i64,
    topics: Vec<TopicName>,
}

impl DeleteTopics {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let wire: DeleteWire = parse_versioned(path, bytes)?;
        let mut seen = BTreeSet::new();
        for topic in &wire.topics {
            if !seen.insert(topic) {
                return Err(ZkDataError::invalid(path, format!("topic {topic:?} is listed twice")));
            }
        }
        Ok(DeleteTopics { topics: wire.topics })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        to_json(&DeleteWire { version: VERSION_1, topics: self.topics.clone() })
    }
}

/// What `/admin/delete_topics` holds: the seed's JSON list, or nothing when deletions are
/// requested the way Kafka 0.8.1+ does it, one empty child `/admin/delete_topics/<topic>` each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeleteTopicsNode {
    List(DeleteTopics),
    MarkerParent,
}

impl DeleteTopicsNode {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        if bytes.is_empty() {
            Ok(DeleteTopicsNode::MarkerParent)
        } else {
            DeleteTopics::parse(path, bytes).map(DeleteTopicsNode::List)
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            DeleteTopicsNode::List(list) => list.to_bytes(),
            DeleteTopicsNode::MarkerParent => Vec::new(),
        }
    }
}
