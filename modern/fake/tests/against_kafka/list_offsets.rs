//! ListOffsets by time, driven by our own client against the fake and Apache Kafka 4.4: batches
//! whose records are not in time order (one compressed, two sharing the largest timestamp),
//! looked up at every time around theirs, for the largest timestamp, the earliest and the
//! latest offsets, before and after DeleteRecords moves the log start into a batch. Every
//! answer (error, offset, timestamp, leader epoch) must be the same on both.

use std::time::Duration;

use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::delete_records_request::{DeleteRecordsPartition, DeleteRecordsTopic};
use kwire::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kwire::messages::{CreateTopicsRequest, DeleteRecordsRequest, ListOffsetsRequest};
use kwire::{Records, StrBytes, TopicName};
use kwire_connection::{ClientConfig, Cluster};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

use super::support;

const TOPIC: &str = "times";

/// Record timestamps per batch, in the order they are produced.
const BATCHES: [(Compression, &[i64]); 3] =
    [(Compression::None, &[1000, 3000, 2000]), (Compression::Zstd, &[5000, 4000]), (Compression::None, &[5000])];

/// Times looked up: each record's, those between and around them, then the special ones
/// (-1 latest, -2 earliest, -3 the largest timestamp).
const QUERIES: [i64; 14] = [0, 999, 1000, 1500, 2000, 2500, 3000, 3500, 4500, 5000, 6000, -1, -2, -3];

fn batch(compression: Compression, timestamps: &[i64]) -> Records {
    let mut builder = BatchBuilder::new(BatchOptions::new(2, compression)).unwrap();
    for t in timestamps {
        builder.append(*t, None, Some(t.to_string().as_bytes()), &[]).unwrap();
    }
    Records::from_bytes(builder.build().unwrap())
}

/// Every query's answer as (time asked, error, offset, timestamp, leader epoch), before and
/// after the log start moves to offset 1.
async fn answers(bootstrap: &str) -> Vec<(i64, String, i64, i64, i32)> {
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default()).await.unwrap();
    let create = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: TopicName(StrBytes::from_static_str(TOPIC)),
            num_partitions: 1,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    };
    let created = cluster.any().await.unwrap().send(create).await.unwrap();
    assert_eq!(created.topics[0].error_code, kwire::ErrorCode::NONE, "{created:?}");
    for (compression, timestamps) in BATCHES {
        cluster.produce(TOPIC, 0, batch(compression, timestamps), -1, Duration::from_secs(10)).await.unwrap();
    }
    let leader = cluster.leader(TOPIC, 0).await.unwrap();
    let mut out = Vec::new();
    for moved in [false, true] {
        if moved {
            let delete = DeleteRecordsRequest {
                topics: vec![DeleteRecordsTopic {
                    name: TopicName(StrBytes::from_static_str(TOPIC)),
                    partitions: vec![DeleteRecordsPartition { partition_index: 0, offset: 1, ..Default::default() }],
                    ..Default::default()
                }],
                timeout_ms: 10_000,
                ..Default::default()
            };
            let deleted = leader.send(delete).await.unwrap();
            assert_eq!(deleted.topics[0].partitions[0].low_watermark, 1, "{deleted:?}");
        }
        for time in QUERIES {
            let request = ListOffsetsRequest {
                replica_id: kwire::BrokerId(-1),
                topics: vec![ListOffsetsTopic {
                    name: TopicName(StrBytes::from_static_str(TOPIC)),
                    partitions: vec![ListOffsetsPartition {
                        partition_index: 0,
                        timestamp: time,
                        current_leader_epoch: -1,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            };
            let response = leader.send(request).await.unwrap();
            let p = &response.topics[0].partitions[0];
            out.push((time, p.error_code.to_string(), p.offset, p.timestamp, p.leader_epoch));
        }
    }
    out
}

#[test]
fn list_offsets_by_time_is_the_same_on_the_fake_and_on_kafka() {
    let _alone = support::one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = runtime.block_on(answers(&fake.bootstrap));
    println!("fake:  {on_fake:?}");
    // What Kafka's rules give, whatever the cluster: the first record at or after the time,
    // within the first batch whose largest timestamp reaches it.
    let offset_of = |time: i64| on_fake.iter().find(|a| a.0 == time).map(|a| (a.2, a.3));
    assert_eq!(offset_of(1500), Some((1, 3000)), "{on_fake:?}");
    assert_eq!(offset_of(4500), Some((3, 5000)), "{on_fake:?}");
    assert_eq!(offset_of(-3), Some((3, 5000)), "the first record of the largest timestamp: {on_fake:?}");
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = runtime.block_on(answers(&kafka.bootstrap()));
    println!("kafka: {on_kafka:?}");
    assert_eq!(on_fake, on_kafka, "ListOffsets must answer the same on both");
}
