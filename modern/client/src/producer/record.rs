//! What a user hands the producer (a [`ProducerRecord`]) and what comes back once Kafka
//! acknowledged it (a [`RecordMetadata`]), named as Kafka's Java client names them.

use std::sync::Arc;

use bytes::Bytes;
use kwire_runtime::wire::{varint_size, varlong_size};

pub use kwire_records::Header;

/// A record to produce: a topic, and optionally the partition, key, value, headers and
/// timestamp. Keys and values are [`Bytes`]: the producer copies them once, into the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerRecord {
    /// The topic (an `Arc<str>`, so that many records can share one name without copying it).
    pub topic: Arc<str>,
    /// The partition; `None` lets the partitioner choose.
    pub partition: Option<i32>,
    pub key: Option<Bytes>,
    /// `None` for a tombstone.
    pub value: Option<Bytes>,
    pub headers: Vec<Header>,
    /// Milliseconds since the epoch; `None` stamps the time of `send`.
    pub timestamp: Option<i64>,
}

impl ProducerRecord {
    /// A record of `value` for `topic`, with no key.
    pub fn new(topic: impl Into<Arc<str>>, value: impl Into<Bytes>) -> ProducerRecord {
        ProducerRecord {
            topic: topic.into(),
            partition: None,
            key: None,
            value: Some(value.into()),
            headers: Vec::new(),
            timestamp: None,
        }
    }

    /// A tombstone (null value) for `key`: what deletes a key from a compacted topic.
    pub fn tombstone(topic: impl Into<Arc<str>>, key: impl Into<Bytes>) -> ProducerRecord {
        ProducerRecord { value: None, ..ProducerRecord::new(topic, Bytes::new()).key(key) }
    }

    pub fn key(mut self, key: impl Into<Bytes>) -> ProducerRecord {
        self.key = Some(key.into());
        self
    }

    pub fn partition(mut self, partition: i32) -> ProducerRecord {
        self.partition = Some(partition);
        self
    }

    /// Adds a header (keys may repeat, as in Kafka).
    pub fn header(mut self, key: impl Into<Bytes>, value: impl Into<Bytes>) -> ProducerRecord {
        self.headers.push(Header { key: key.into(), value: Some(value.into()) });
        self
    }

    pub fn timestamp(mut self, millis: i64) -> ProducerRecord {
        self.timestamp = Some(millis);
        self
    }

    /// An upper bound of the record's size in a v2 batch, its length prefix included, whatever
    /// its offset and timestamp deltas: what batches are filled and memory reserved by, as
    /// Kafka's `estimateSizeInBytesUpperBound` does.
    pub fn size_upper_bound(&self) -> usize {
        size_upper_bound(self.key.as_ref(), self.value.as_ref(), &self.headers)
    }
}

/// [`ProducerRecord::size_upper_bound`] of a record's parts (also of one read back from a
/// batch being split).
pub(crate) fn size_upper_bound(key: Option<&Bytes>, value: Option<&Bytes>, headers: &[Header]) -> usize {
    let nullable = |b: Option<&Bytes>| b.map_or(1, |b| varint_size(b.len() as i32) + b.len());
    let mut size = 1 + varlong_size(i64::MAX) + varint_size(i32::MAX);
    size += nullable(key) + nullable(value);
    size += varint_size(headers.len() as i32);
    for header in headers {
        size += varint_size(header.key.len() as i32) + header.key.len() + nullable(header.value.as_ref());
    }
    size + varint_size(i32::MAX)
}

/// Where Kafka wrote a record, as Java's `RecordMetadata` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMetadata {
    pub topic: Arc<str>,
    pub partition: i32,
    /// The record's offset; -1 with `acks=0` (nothing comes back) or when the broker answered a
    /// retried batch with DUPLICATE_SEQUENCE_NUMBER, as Kafka's client does.
    pub offset: i64,
    /// The record's timestamp: the broker's log append time when the topic uses
    /// `LogAppendTime`, else the record's create time.
    pub timestamp: i64,
    /// The key's size in bytes, -1 for no key.
    pub serialized_key_size: i32,
    /// The value's size in bytes, -1 for a tombstone.
    pub serialized_value_size: i32,
}
