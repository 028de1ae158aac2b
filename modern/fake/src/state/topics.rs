//! The cluster's topics: each with its id, partitions and configs, found by name or by id, and
//! a partition by topic and index.

use std::collections::{BTreeMap, HashMap};

use kwire::{ErrorCode, Uuid};

use crate::groups::assignors::Assignable;
use crate::log::Log;
use crate::producers::Producers;
use crate::transactions::partition::PartitionTxns;

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

impl Topic {
    /// Partition `index`, if the topic has it.
    pub fn partition(&self, index: i32) -> Option<&Partition> {
        self.partitions.get(usize::try_from(index).ok()?)
    }

    /// Partition `index`, if the topic has it, to change.
    pub fn partition_mut(&mut self, index: i32) -> Option<&mut Partition> {
        self.partitions.get_mut(usize::try_from(index).ok()?)
    }

    /// Whether the topic has partition `index`.
    pub fn has_partition(&self, index: i32) -> bool {
        self.partition(index).is_some()
    }
}

/// Every topic, by name and by id.
#[derive(Debug, Default)]
pub(crate) struct Topics {
    by_name: BTreeMap<String, Topic>,
    names_by_id: HashMap<Uuid, String>,
}

impl Topics {
    pub fn get(&self, name: &str) -> Option<&Topic> {
        self.by_name.get(name)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Topic> {
        self.by_name.get_mut(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Every topic, in name order, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Topic)> {
        self.by_name.iter_mut()
    }

    /// Every topic's name, in order.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.by_name.keys()
    }

    /// The name of the topic with this id.
    pub fn name_of(&self, id: Uuid) -> Option<&str> {
        self.names_by_id.get(&id).map(String::as_str)
    }

    /// The topic with this id.
    pub fn by_id(&self, id: Uuid) -> Option<&Topic> {
        self.by_name.get(self.names_by_id.get(&id)?)
    }

    /// A partition by topic name and index.
    pub fn partition(&self, name: &str, index: i32) -> Option<&Partition> {
        self.by_name.get(name)?.partition(index)
    }

    /// A partition by topic name and index, to change.
    pub fn partition_mut(&mut self, name: &str, index: i32) -> Option<&mut Partition> {
        self.by_name.get_mut(name)?.partition_mut(index)
    }

    /// A partition by topic id and index.
    pub fn partition_by_id(&self, id: Uuid, index: i32) -> Option<&Partition> {
        self.by_id(id)?.partition(index)
    }

    /// A partition, and whether `node` leads it: UNKNOWN_TOPIC_OR_PARTITION or
    /// NOT_LEADER_OR_FOLLOWER otherwise, as Kafka's broker answers.
    pub fn led_by(&mut self, name: &str, index: i32, node: i32) -> Result<&mut Partition, ErrorCode> {
        let partition = self.partition_mut(name, index).ok_or(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)?;
        if partition.leader != node {
            return Err(ErrorCode::NOT_LEADER_OR_FOLLOWER);
        }
        Ok(partition)
    }

    /// Every topic as a group's assignor sees it: name → (id, partitions).
    pub fn assignable(&self) -> Assignable {
        self.by_name.iter().map(|(name, t)| (name.clone(), (t.id, t.partitions.len() as i32))).collect()
    }

    pub(super) fn insert(&mut self, name: &str, topic: Topic) {
        self.names_by_id.insert(topic.id, name.to_string());
        self.by_name.insert(name.to_string(), topic);
    }

    pub(super) fn remove(&mut self, name: &str) -> Option<Topic> {
        let topic = self.by_name.remove(name)?;
        self.names_by_id.remove(&topic.id);
        Some(topic)
    }
}
