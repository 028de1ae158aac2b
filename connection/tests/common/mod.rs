//! What the broker tests share: topics, record batches, produce and fetch requests.
#![allow(dead_code)] // each test binary uses its own part

use std::time::{SystemTime, UNIX_EPOCH};

use kafka_wire::messages::create_topics_request::CreatableTopic;
use kafka_wire::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_wire::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_wire::messages::{CreateTopicsRequest, FetchRequest, ProduceRequest};
use kafka_wire::{ErrorCode, Records, Uuid};
use kafka_wire_connection::Client;
use kafka_wire_records::{BatchBuilder, BatchOptions, Compression, Header};

pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Creates `name` with `partitions` partitions (one replica) and returns its topic id.
pub async fn create_topic(client: &Client, name: &str, partitions: i32) -> Uuid {
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let response = client.send(request).await.unwrap();
    let topic = &response.topics[0];
    assert_eq!(topic.error_code, ErrorCode::NONE, "{:?}", topic.error_message);
    topic.topic_id
}

/// One batch of `n` records in `compression`: keys `{tag}-key-{i}`, values `{tag}-value-{i}…`,
/// a `codec` header holding `tag`; written by `options` (producer id, sequence, transaction).
pub fn batch_with(options: BatchOptions, n: usize, tag: &str) -> Records {
    let mut builder = BatchBuilder::new(options).unwrap();
    for i in 0..n {
        let key = format!("{tag}-key-{i}");
        let value = format!("{tag}-value-{i}-{}", "x".repeat(i % 97));
        let headers = [Header { key: "codec".into(), value: Some(tag.as_bytes().to_vec().into()) }];
        builder.append(now_ms(), Some(key.as_bytes()), Some(value.as_bytes()), &headers).unwrap();
    }
    Records::from_bytes(builder.build().unwrap())
}

/// [`batch_with`] by a plain producer.
pub fn batch(compression: Compression, n: usize, tag: &str) -> Records {
    batch_with(BatchOptions::new(2, compression), n, tag)
}

/// Produce `records` to partition 0 of `topic`, or partition `partition`.
pub fn produce_request(topic: &str, partition: i32, records: Records, acks: i16) -> ProduceRequest {
    ProduceRequest {
        acks,
        timeout_ms: 30_000,
        topic_data: vec![TopicProduceData {
            name: topic.into(),
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

/// Fetch partition 0 of `topic` from `offset` (by name and id, so any version fits).
pub fn fetch_request(topic: &str, topic_id: Uuid, offset: i64, isolation_level: i8) -> FetchRequest {
    FetchRequest {
        max_wait_ms: 200,
        min_bytes: 1,
        isolation_level,
        topics: vec![FetchTopic {
            topic: topic.into(),
            topic_id,
            partitions: vec![FetchPartition {
                partition: 0,
                fetch_offset: offset,
                partition_max_bytes: 8 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}
