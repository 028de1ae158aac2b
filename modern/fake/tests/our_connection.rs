//! kwire-connection against the fake cluster: negotiation at the newest versions, topic
//! creation, produce and fetch by topic id, offsets, idempotent retries, a moved leader.

use std::time::Duration;

use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kwire::messages::{ApiKey, CreateTopicsRequest, ListOffsetsRequest};
use kwire::{ErrorCode, ProducerId, Records, StrBytes, TopicName};
use kwire_connection::{requests, ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_records::{BatchBuilder, BatchOptions, Compression, RecordsExt};

fn batch(values: &[&str]) -> Records {
    batch_from(None, values)
}

/// A batch of an idempotent producer (`id`, epoch, first sequence) when `producer` is set.
fn batch_from(producer: Option<(i64, i16, i32)>, values: &[&str]) -> Records {
    let mut options = BatchOptions::new(2, Compression::Lz4);
    if let Some((id, epoch, sequence)) = producer {
        (options.producer_id, options.producer_epoch, options.base_sequence) = (id, epoch, sequence);
    }
    let mut builder = BatchBuilder::new(options).unwrap();
    for (i, v) in values.iter().enumerate() {
        builder.append(1_700_000_000_000 + i as i64, None, Some(v.as_bytes()), &[]).unwrap();
    }
    Records::from_bytes(builder.build().unwrap())
}

fn values(records: Option<Records>) -> Vec<String> {
    records
        .unwrap_or_default()
        .records()
        .map(|r| String::from_utf8(r.unwrap().value.unwrap().to_vec()).unwrap())
        .collect()
}

#[tokio::test]
async fn produce_fetch_and_offsets_through_our_client() {
    let fake = FakeCluster::start(FakeConfig::default().nodes(3)).await.unwrap();
    let bootstrap = fake.bootstrap_servers();
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default()).await.unwrap();
    let any = cluster.any().await.unwrap();
    // The client negotiates the newest versions: Produce and Fetch name topics by id.
    assert_eq!(any.version_of(ApiKey::Produce), ApiKey::Produce.supported_versions().map(|v| v.max));
    assert_eq!(any.version_of(ApiKey::Fetch), ApiKey::Fetch.supported_versions().map(|v| v.max));

    let create = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: TopicName(StrBytes::from_static_str("orders")),
            num_partitions: 3,
            replication_factor: 2,
            ..Default::default()
        }],
        timeout_ms: 1000,
        ..Default::default()
    };
    let created = any.send(create.clone()).await.unwrap();
    assert_eq!(created.topics[0].error_code, ErrorCode::NONE);
    assert_eq!(Some(created.topics[0].topic_id), fake.topic_id("orders"));
    let again = any.send(create).await.unwrap();
    assert_eq!(again.topics[0].error_code, ErrorCode::TOPIC_ALREADY_EXISTS);

    let first = cluster.produce("orders", 1, batch(&["a", "b"]), -1, Duration::from_secs(5)).await.unwrap();
    let second = cluster.produce("orders", 1, batch(&["c"]), 1, Duration::from_secs(5)).await.unwrap();
    assert_eq!((first.base_offset, second.base_offset), (0, 2));
    assert_eq!(fake.end_offset("orders", 1), Some(3));

    let leader = cluster.leader("orders", 1).await.unwrap();
    let topic_id = cluster.topic_id("orders").await.unwrap();
    let fetched = leader.send(requests::fetch("orders", topic_id, 1, 1)).await.unwrap();
    let partition = &fetched.responses[0].partitions[0];
    assert_eq!(partition.error_code, ErrorCode::NONE);
    assert_eq!(partition.high_watermark, 3);
    // The batch holding offset 1 comes whole, as Kafka sends it.
    assert_eq!(values(partition.records.clone()), ["a", "b", "c"]);

    let list = |timestamp| ListOffsetsRequest {
        topics: vec![ListOffsetsTopic {
            name: TopicName(StrBytes::from_static_str("orders")),
            partitions: vec![ListOffsetsPartition { partition_index: 1, timestamp, ..Default::default() }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let offset = |r: kwire::messages::ListOffsetsResponse| r.topics[0].partitions[0].offset;
    assert_eq!(offset(leader.send(list(-2)).await.unwrap()), 0);
    assert_eq!(offset(leader.send(list(-1)).await.unwrap()), 3);
    assert_eq!(offset(leader.send(list(1_700_000_000_000)).await.unwrap()), 0);
    assert_eq!(offset(leader.send(list(1_800_000_000_000)).await.unwrap()), -1);

    // A follower refuses, naming the leader; our client's produce finds the new one after a move.
    fake.move_leader("orders", 1, 2).unwrap();
    let moved = cluster.produce("orders", 1, batch(&["d"]), -1, Duration::from_secs(5)).await.unwrap();
    assert_eq!(moved.base_offset, 3);
    fake.shutdown().await;
}

#[tokio::test]
async fn idempotent_retries_are_answered_with_their_first_offset() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    let bootstrap = fake.bootstrap_servers();
    let cluster = Cluster::connect(&[bootstrap.as_str()], ClientConfig::default()).await.unwrap();
    let client = cluster.any().await.unwrap();
    let init = client
        .send(kwire::messages::InitProducerIdRequest { transactional_id: None, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(init.error_code, ErrorCode::NONE);
    let ProducerId(id) = init.producer_id;
    let produce = |sequence, values: &'static [&'static str]| {
        cluster.produce("events", 0, batch_from(Some((id, 0, sequence)), values), -1, Duration::from_secs(5))
    };
    assert_eq!(produce(0, &["a", "b"]).await.unwrap().base_offset, 0);
    assert_eq!(produce(2, &["c"]).await.unwrap().base_offset, 2);
    assert_eq!(produce(0, &["a", "b"]).await.unwrap().base_offset, 0, "a retry is not appended twice");
    assert_eq!(fake.end_offset("events", 0), Some(3));
    let gap = produce(5, &["f"]).await.unwrap_err();
    assert!(gap.to_string().contains("OUT_OF_ORDER_SEQUENCE_NUMBER"), "{gap}");
    fake.shutdown().await;
}
