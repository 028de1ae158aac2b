//! `/brokers/topics/<topic>` and what lies below it: the 0.8 replica assignment (seed 003
//! node 1), the 0.8 partition state (node 2), and 0.7's per-broker partition counts (spec 4.1).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::ZkDataError;
use super::ids::{check_broker_list, check_non_negative};
use super::json::{parse_versioned, to_json, VERSION_1};
use super::text::{parse_canonical, parse_unsigned, utf8};

/// 0.8 topic registration: `{"version":1,"partitions":{"0":[0,1,3]}}`, partition id → replica
/// list (broker ids, preferred leader first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicRegistration {
    pub partitions: BTreeMap<i32, Vec<i32>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicWire {
    version: i64,
    partitions: BTreeMap<String, Vec<i32>>,
}

impl TopicRegistration {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let wire: TopicWire = parse_versioned(path, bytes)?;
        if wire.partitions.is_empty() {
            return Err(ZkDataError::invalid(path, "the topic has no partitions"));
        }
        let mut partitions = BTreeMap::new();
        for (key, replicas) in wire.partitions {
            let partition = parse_canonical(&key, i32::MAX as u64).ok_or_else(|| {
                ZkDataError::invalid(path, format!("partition id {key:?} is not a non-negative decimal int"))
            })? as i32;
            check_broker_list(path, &format!("the replica list of partition {partition}"), &replicas, false)?;
            partitions.insert(partition, replicas);
        }
        Ok(TopicRegistration { partitions })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let partitions = self.partitions.iter().map(|(p, r)| (p.to_string(), r.clone())).collect();
        to_json(&TopicWire { version: VERSION_1, partitions })
    }
}

/// What `/brokers/topics/<topic>` holds: 0.8's JSON assignment, or nothing (0.7 keeps the
/// node as an empty persistent parent of the per-broker count nodes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicNode {
    Registration(TopicRegistration),
    Kafka07Parent,
}

impl TopicNode {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        if bytes.is_empty() {
            Ok(TopicNode::Kafka07Parent)
        } else {
            TopicRegistration::parse(path, bytes).map(TopicNode::Registration)
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            TopicNode::Registration(r) => r.to_bytes(),
            TopicNode::Kafka07Parent => Vec::new(),
        }
    }
}

/// 0.8 partition state, `/brokers/topics/<topic>/partitions/<p>/state`:
/// `{"version":1,"isr":[0,1],"leader":0,"controller_epoch":1,"leader_epoch":0}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    /// In-sync replicas (broker ids).
    pub isr: Vec<i32>,
    /// Broker id of the leader; −1 when the partition has none.
    pub leader: i32,
    pub controller_epoch: i32,
    pub leader_epoch: i32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartitionStateWire {
    version: i64,
    isr: Vec<i32>,
    leader: i32,
    controller_epoch: i32,
    leader_epoch: i32,
}

impl PartitionState {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let w: PartitionStateWire = parse_versioned(path, bytes)?;
        check_broker_list(path, "the ISR", &w.isr, true)?;
        if w.leader < -1 {
            return Err(ZkDataError::invalid(path, format!("leader {} is neither a broker id nor -1", w.leader)));
        }
        check_non_negative(path, "controller_epoch", w.controller_epoch)?;
        check_non_negative(path, "leader_epoch", w.leader_epoch)?;
        Ok(PartitionState {
            isr: w.isr,
            leader: w.leader,
            controller_epoch: w.controller_epoch,
            leader_epoch: w.leader_epoch,
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        to_json(&PartitionStateWire {
            version: VERSION_1,
            isr: self.isr.clone(),
            leader: self.leader,
            controller_epoch: self.controller_epoch,
            leader_epoch: self.leader_epoch,
        })
    }
}

/// 0.7's `/brokers/topics/<topic>/<brokerId>`: how many partitions the broker has for the
/// topic, as decimal text (for example `1`). Always at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kafka07PartitionCount(pub u32);

impl Kafka07PartitionCount {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let text = utf8(path, bytes)?;
        let count = parse_unsigned(text, i32::MAX as u64)
            .map_err(|detail| ZkDataError::invalid(path, format!("0.7 partition count: {detail}")))?;
        if count == 0 {
            return Err(ZkDataError::invalid(path, "0.7 partition count is 0, it must be at least 1"));
        }
        Ok(Kafka07PartitionCount(count as u32))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.0.to_string().into_bytes()
    }
}
