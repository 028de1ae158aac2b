//! Produce and Fetch for one partition: the shape routing, tools and tests send most. Each
//! returns the whole request, so a caller changes what it needs with struct update syntax
//! (`FetchRequest { isolation_level: 1, ..requests::fetch(…) }`).

use std::time::Duration;

use kwire::messages::fetch_request::{FetchPartition, FetchTopic};
use kwire::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kwire::messages::{FetchRequest, ProduceRequest};
use kwire::{Records, Uuid};

/// Produce `records` (one batch or several, concatenated) to `topic`'s `partition`, waiting
/// up to `timeout` for `acks` (-1 all, 1 leader, 0 none). The topic goes by name and by
/// `topic_id` (from Metadata), as in [`fetch`]: Produce v13 and later read the id, earlier ones
/// the name.
pub fn produce(
    topic: &str,
    topic_id: Uuid,
    partition: i32,
    records: Records,
    acks: i16,
    timeout: Duration,
) -> ProduceRequest {
    ProduceRequest {
        acks,
        timeout_ms: timeout.as_millis().min(i32::MAX as u128) as i32,
        topic_data: vec![TopicProduceData {
            name: topic.into(),
            topic_id,
            partition_data: vec![PartitionProduceData {
                index: partition,
                records: Some(records),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Fetch `topic`'s `partition` from `offset`: up to 8 MiB, waiting up to 500 ms for data, read
/// uncommitted. The topic goes by name and by `topic_id` (from Metadata), so the request
/// fits every version: Fetch v13 and later read the id, earlier ones the name (pass
/// `Uuid::default()` for those).
pub fn fetch(topic: &str, topic_id: Uuid, partition: i32, offset: i64) -> FetchRequest {
    FetchRequest {
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 8 << 20,
        topics: vec![FetchTopic {
            topic: topic.into(),
            topic_id,
            partitions: vec![FetchPartition {
                partition,
                fetch_offset: offset,
                partition_max_bytes: 8 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}
