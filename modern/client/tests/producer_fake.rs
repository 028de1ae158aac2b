//! The producer against the in-process cluster (`kwire-fake`, Kafka 4.4's messages): records
//! come back with their partition, order, key, value, headers and timestamp; Kafka's
//! partitioner; every codec; acks 0, 1 and all; and under injected faults (NOT_LEADER_OR_FOLLOWER,
//! a dropped connection, a slow broker, OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID, a
//! leader moved, a node killed) nothing acknowledged is lost or written twice, and each
//! partition keeps the order sent.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use kwire::messages::{ApiKey, RequestKind};
use kwire::ErrorCode;
use kwire_client::producer::{
    partition_for_key, Acks, Delivery, ProduceError, Producer, ProducerConfig, ProducerRecord, RecordMetadata,
};
use kwire_fake::{Action, FakeCluster, FakeConfig, Times};
use kwire_records::Compression;
use support::{check_exactly_once_in_order, read_back};

async fn cluster(nodes: usize, topic: &str, partitions: i32) -> FakeCluster {
    let fake = FakeCluster::start(FakeConfig::default().nodes(nodes)).await.expect("fake cluster");
    fake.create_topic(topic, partitions).expect("topic");
    fake
}

fn config(fake: &FakeCluster) -> ProducerConfig {
    ProducerConfig::new(&fake.bootstrap_servers()).linger(Duration::from_millis(1))
}

/// Sends `n` unkeyed records with values `prefix-i` spread by the sticky partitioner, `pause`
/// between them, and waits for every acknowledgement.
async fn send_values(producer: &Producer, topic: &str, prefix: &str, n: usize) -> Vec<(Bytes, RecordMetadata)> {
    let mut pending: Vec<(Bytes, Delivery)> = Vec::new();
    for i in 0..n {
        let value = Bytes::from(format!("{prefix}-{i:05}"));
        let delivery = producer.send(ProducerRecord::new(topic, value.clone())).await.expect("buffered");
        pending.push((value, delivery));
    }
    let mut out = Vec::new();
    for (value, delivery) in pending {
        let meta = delivery.await.unwrap_or_else(|e| panic!("{value:?} not acknowledged: {e}"));
        out.push((value, meta));
    }
    out
}

#[tokio::test]
async fn records_come_back_with_partition_order_key_value_headers_and_timestamp() {
    let fake = cluster(3, "orders", 3).await;
    let producer = Producer::connect(config(&fake)).await.unwrap();
    let mut deliveries = Vec::new();
    for i in 0..300i64 {
        let record = ProducerRecord::new("orders", format!("value-{i}"))
            .key(format!("key-{}", i % 17))
            .header("n", i.to_string())
            .header("dup", "a")
            .timestamp(1_700_000_000_000 + i);
        deliveries.push(producer.send(record).await.unwrap());
    }
    let mut acked = Vec::new();
    for d in deliveries {
        acked.push(d.await.unwrap());
    }
    for p in 0..3 {
        let log = read_back(&fake, "orders", p);
        let mine: Vec<(i64, &RecordMetadata)> =
            acked.iter().enumerate().map(|(i, m)| (i as i64, m)).filter(|(_, m)| m.partition == p).collect();
        assert_eq!(log.len(), mine.len(), "partition {p}");
        for (stored, (i, meta)) in log.iter().zip(mine) {
            let key = format!("key-{}", i % 17);
            assert_eq!(meta.partition, partition_for_key(key.as_bytes(), 3), "Kafka's partition for {key}");
            assert_eq!(stored.offset, meta.offset);
            assert_eq!(stored.key.as_deref(), Some(key.as_bytes()));
            assert_eq!(stored.value.as_deref(), Some(format!("value-{i}").as_bytes()));
            assert_eq!(stored.timestamp, 1_700_000_000_000 + i);
            assert_eq!(meta.timestamp, 1_700_000_000_000 + i);
            let headers: Vec<(&[u8], Option<&[u8]>)> =
                stored.headers.iter().map(|(k, v)| (&k[..], v.as_deref())).collect();
            assert_eq!(headers, [(&b"n"[..], Some(i.to_string().as_bytes())), (&b"dup"[..], Some(&b"a"[..]))]);
        }
        assert!(log.iter().all(|r| r.producer_id >= 0), "idempotent by default: batches carry a producer id");
    }
    let metrics = producer.metrics();
    assert_eq!(metrics.records_sent, 300);
    assert_eq!((metrics.records_buffered, metrics.buffer_in_use), (0, 0), "{metrics:?}");
    producer.close(Duration::from_secs(5)).await.unwrap();
    fake.shutdown().await;
}
