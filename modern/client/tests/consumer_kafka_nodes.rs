//! The consumer against three Apache Kafka 4.4 nodes (shared by this binary), each in a rack
//! of its own with Kafka's rack-aware replica selector: a consumer with `client.rack` reads
//! from the replica in its rack (KIP-392); the leader SIGKILLed mid-read loses and repeats
//! nothing (the new leader is found, the position validated, KIP-320).

mod common;

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use common::*;
use kwire::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kwire::messages::CreateTopicsRequest;
use kwire_client::consumer::{Consumer, TopicPartition};
use kwire_connection::{ClientConfig, Cluster};
use kwire_test_support::Kafka;

fn kafka() -> Option<&'static Mutex<Kafka>> {
    static KAFKA: OnceLock<Option<Mutex<Kafka>>> = OnceLock::new();
    KAFKA
        .get_or_init(|| {
            Kafka::start_or_skip_with(
                3,
                &[
                    ("broker.rack", "rack-{id}"),
                    ("replica.selector.class", "org.apache.kafka.common.replica.RackAwareReplicaSelector"),
                ],
            )
            .map(Mutex::new)
        })
        .as_ref()
}

/// One test at a time: one kills nodes.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn writer_retrying(bootstrap: &str) -> Cluster {
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let mut cluster =
        Cluster::connect(&servers, ClientConfig::default().request_timeout(Duration::from_secs(10))).await.unwrap();
    // A killed leader is fenced 3 s after its heartbeats stop (test-support's setting).
    cluster.attempts = 40;
    cluster
}

async fn create_replicated(cluster: &Cluster, topic: &str) {
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: topic.into(),
            num_partitions: 1,
            replication_factor: 3,
            configs: vec![CreatableTopicConfig {
                name: "min.insync.replicas".into(),
                value: Some("2".into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let created = cluster.any().await.unwrap().send(request).await.unwrap();
    assert_eq!(created.topics[0].error_code, kwire::ErrorCode::NONE);
    // Until every replica knows the topic, Metadata may not list its leader.
    for _ in 0..100 {
        cluster.refresh_topics(&[topic], false).await.unwrap();
        if cluster.metadata().leader(topic, 0).is_some() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_reads_from_the_replica_in_its_rack() {
    let Some(kafka) = kafka() else { return };
    let _serial = SERIAL.lock().await;
    logs();
    let bootstrap = kafka.lock().unwrap().bootstrap();
    let writer = writer_retrying(&bootstrap).await;
    create_replicated(&writer, "racks").await;
    produce(&writer, "racks", 0, 0, 1000, 50).await;
    let leader = writer.metadata().leader("racks", 0).unwrap();
    let follower = [1, 2, 3].into_iter().find(|n| *n != leader).unwrap();
    let config = common::config(&bootstrap).client_rack(format!("rack-{follower}"));
    let consumer = Consumer::new(config).await.unwrap();
    consumer.assign([TopicPartition::new("racks", 0)]).await.unwrap();
    let records = read(&consumer, 1000, Duration::from_secs(60)).await.unwrap();
    assert_eq!(records.iter().map(|r| r.offset).collect::<Vec<_>>(), (0..1000).collect::<Vec<i64>>());
    let metrics = consumer.metrics();
    let from_follower = metrics.fetches_by_node.get(&follower).copied().unwrap_or(0);
    let from_leader = metrics.fetches_by_node.get(&leader).copied().unwrap_or(0);
    assert!(from_follower > 0 && from_follower > from_leader, "leader {leader}, follower {follower}: {metrics:?}");
    consumer.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_leader_loses_and_repeats_nothing() {
    let Some(kafka) = kafka() else { return };
    let _serial = SERIAL.lock().await;
    logs();
    let bootstrap = kafka.lock().unwrap().bootstrap();
    let writer = writer_retrying(&bootstrap).await;
    create_replicated(&writer, "failover").await;
    produce(&writer, "failover", 0, 0, 500, 50).await;
    let consumer = Consumer::new(common::config(&bootstrap).max_poll_records(100)).await.unwrap();
    consumer.assign([TopicPartition::new("failover", 0)]).await.unwrap();
    let mut records = read(&consumer, 250, Duration::from_secs(30)).await.unwrap();
    let leader = writer.metadata().leader("failover", 0).unwrap();
    kafka.lock().unwrap().kill9(leader).unwrap();
    produce(&writer, "failover", 0, 500, 1000, 50).await;
    records.extend(read(&consumer, 1000 - records.len(), Duration::from_secs(60)).await.unwrap());
    assert_eq!(records.iter().map(|r| r.offset).collect::<Vec<_>>(), (0..1000).collect::<Vec<i64>>());
    assert!(records.iter().all(|r| value(r) == r.offset as u64));
    let new_leader = writer.metadata().leader("failover", 0).unwrap();
    assert_ne!(new_leader, leader);
    assert!(records.last().and_then(|r| r.leader_epoch).unwrap_or(0) > 0, "read under the new leader's epoch");
    consumer.close().await.unwrap();
    kafka.lock().unwrap().restart(leader).unwrap();
}
