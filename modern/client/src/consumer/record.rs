//! What a consumer hands out: records, the batch `poll` returns, partitions and the offsets
//! committed for them. Keys, values and headers share the fetched buffer (no copy).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
pub use kwire_records::{Header, TimestampType};

/// A topic's partition. The topic name is shared, so a clone is cheap.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    pub topic: Arc<str>,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<Arc<str>>, partition: i32) -> TopicPartition {
        TopicPartition { topic: topic.into(), partition }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

impl From<(&str, i32)> for TopicPartition {
    fn from((topic, partition): (&str, i32)) -> Self {
        TopicPartition::new(topic, partition)
    }
}

/// An offset to commit or committed: the next offset to read, the leader epoch of the record
/// before it (KIP-320; `None` when unknown), and free-form metadata.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OffsetAndMetadata {
    pub offset: i64,
    pub leader_epoch: Option<i32>,
    pub metadata: String,
}

impl OffsetAndMetadata {
    pub fn new(offset: i64) -> OffsetAndMetadata {
        OffsetAndMetadata { offset, leader_epoch: None, metadata: String::new() }
    }
}

/// One record, as Kafka's `ConsumerRecord`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRecord {
    pub topic: Arc<str>,
    pub partition: i32,
    pub offset: i64,
    /// Milliseconds since the epoch.
    pub timestamp: i64,
    pub timestamp_type: TimestampType,
    /// The leader epoch of the batch (KIP-320), when the broker wrote one.
    pub leader_epoch: Option<i32>,
    pub key: Option<Bytes>,
    pub value: Option<Bytes>,
    pub headers: Vec<Header>,
}

impl ConsumerRecord {
    /// The record's partition.
    pub fn topic_partition(&self) -> TopicPartition {
        TopicPartition { topic: self.topic.clone(), partition: self.partition }
    }

    /// The bytes of key and value, the size Kafka's metrics count.
    pub fn size(&self) -> usize {
        self.key.as_ref().map_or(0, Bytes::len) + self.value.as_ref().map_or(0, Bytes::len)
    }
}

/// What one `poll` returned: records of one or more partitions, each partition's in offset
/// order (Kafka's `ConsumerRecords`).
#[derive(Debug, Clone, Default)]
pub struct ConsumerRecords {
    pub(crate) records: Vec<ConsumerRecord>,
    /// The next offset of each partition that gave records (Java's `nextOffsets`).
    pub(crate) next_offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
}

impl ConsumerRecords {
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, ConsumerRecord> {
        self.records.iter()
    }

    /// The records of one partition.
    pub fn records<'a>(&'a self, partition: &'a TopicPartition) -> impl Iterator<Item = &'a ConsumerRecord> + 'a {
        self.records.iter().filter(move |r| r.partition == partition.partition && r.topic == partition.topic)
    }

    /// The partitions with records in this batch.
    pub fn partitions(&self) -> Vec<TopicPartition> {
        self.next_offsets.keys().cloned().collect()
    }

    /// Per partition, the offset after its last record here: what to commit once processed.
    pub fn next_offsets(&self) -> &BTreeMap<TopicPartition, OffsetAndMetadata> {
        &self.next_offsets
    }

    /// The records, owned.
    pub fn into_vec(self) -> Vec<ConsumerRecord> {
        self.records
    }
}

impl IntoIterator for ConsumerRecords {
    type Item = ConsumerRecord;
    type IntoIter = std::vec::IntoIter<ConsumerRecord>;

    fn into_iter(self) -> Self::IntoIter {
        self.records.into_iter()
    }
}

impl<'a> IntoIterator for &'a ConsumerRecords {
    type Item = &'a ConsumerRecord;
    type IntoIter = std::slice::Iter<'a, ConsumerRecord>;

    fn into_iter(self) -> Self::IntoIter {
        self.records.iter()
    }
}
