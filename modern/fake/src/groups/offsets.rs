//! The offsets committed under each group id, after Kafka's `OffsetMetadataManager`: kept apart
//! from the groups, whatever kind of group has the id, with the offsets committed in
//! transactions not yet ended (TxnOffsetCommit), which become committed or are dropped when
//! their transaction ends.

use std::collections::BTreeMap;

use kwire::StrBytes;

/// A partition: topic name and index.
type TopicPartition = (String, i32);

/// A committed offset.
#[derive(Debug, Clone)]
pub(crate) struct Committed {
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
}

impl Committed {
    /// As an OffsetCommit or TxnOffsetCommit partition states it.
    pub fn new(offset: i64, leader_epoch: i32, metadata: Option<&StrBytes>) -> Committed {
        Committed { offset, leader_epoch, metadata: metadata.map(|m| m.to_string()) }
    }
}

/// Every group's offsets.
#[derive(Debug, Default)]
pub(crate) struct Offsets {
    /// Group id → partition → its committed offset.
    committed: BTreeMap<String, BTreeMap<TopicPartition, Committed>>,
    /// Group id → producer id → the offsets its open transaction committed.
    pending: BTreeMap<String, BTreeMap<i64, BTreeMap<TopicPartition, Committed>>>,
}

impl Offsets {
    /// Whether no group has committed anything, in a transaction or not (Kafka's
    /// `__consumer_offsets` exists from the first commit).
    pub fn is_empty(&self) -> bool {
        self.committed.is_empty() && self.pending.is_empty()
    }

    /// Commits `group`'s offset of a partition.
    pub fn commit(&mut self, group: &str, partition: TopicPartition, committed: Committed) {
        match self.committed.get_mut(group) {
            Some(offsets) => offsets.insert(partition, committed),
            None => self.committed.entry(group.to_string()).or_default().insert(partition, committed),
        };
    }

    /// Holds `group`'s offset of a partition committed in producer `producer_id`'s transaction.
    pub fn commit_pending(&mut self, group: &str, producer_id: i64, partition: TopicPartition, committed: Committed) {
        let by_producer = self.pending.entry(group.to_string()).or_default();
        by_producer.entry(producer_id).or_default().insert(partition, committed);
    }

    /// Producer `producer_id`'s transaction ended: what it committed to `group` becomes the
    /// committed offsets, or is dropped.
    pub fn end_transaction(&mut self, group: &str, producer_id: i64, commit: bool) {
        let Some(by_producer) = self.pending.get_mut(group) else { return };
        let offsets = by_producer.remove(&producer_id);
        if by_producer.is_empty() {
            self.pending.remove(group);
        }
        if let Some(offsets) = offsets.filter(|_| commit) {
            self.committed.entry(group.to_string()).or_default().extend(offsets);
        }
    }

    /// Whether an open transaction holds an offset of this partition for `group` (OffsetFetch
    /// with `require_stable` is then UNSTABLE_OFFSET_COMMIT).
    pub fn is_pending(&self, group: &str, topic: &str, partition: i32) -> bool {
        let key = (topic.to_string(), partition);
        self.pending.get(group).is_some_and(|by_producer| by_producer.values().any(|o| o.contains_key(&key)))
    }

    /// `group`'s committed offset of a partition.
    pub fn committed(&self, group: &str, topic: &str, partition: i32) -> Option<&Committed> {
        self.committed.get(group)?.get(&(topic.to_string(), partition))
    }

    /// Every offset `group` committed, by partition.
    pub fn of_group(&self, group: &str) -> impl Iterator<Item = (&TopicPartition, &Committed)> {
        self.committed.get(group).into_iter().flatten()
    }

    /// Deletes `group`'s committed offset of a partition (OffsetDelete).
    pub fn delete(&mut self, group: &str, topic: &str, partition: i32) {
        if let Some(offsets) = self.committed.get_mut(group) {
            offsets.remove(&(topic.to_string(), partition));
        }
    }

    /// The group is deleted: its offsets, committed or pending, go with it.
    pub fn forget(&mut self, group: &str) {
        self.committed.remove(group);
        self.pending.remove(group);
    }
}
