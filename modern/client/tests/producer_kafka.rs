//! The producer against Apache Kafka 4.4 (one KRaft node, shared by this file's tests), read
//! back by Kafka's own Java consumer (`ProducerCheck` of `conformance/kafka-java`): every
//! record with its partition, offset order, key, value, headers and timestamp, in every codec;
//! 10,000 keys on the partitions Kafka's Java producer picks; transactions v2 and v1 seen by
//! read_committed and read_uncommitted readers; the broker's refusals as typed errors.

mod support;

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use kwire_client::producer::{
    Delivery, ProduceError, Producer, ProducerConfig, ProducerRecord, RecordMetadata, TransactionProtocol,
};
use kwire_connection::{ClientConfig, Cluster};
use kwire_records::Compression;
use kwire_test_support::Kafka;
use support::{create_topic, java_read};

fn kafka() -> Option<&'static Kafka> {
    static KAFKA: OnceLock<Option<Kafka>> = OnceLock::new();
    KAFKA.get_or_init(|| Kafka::start_or_skip(1)).as_ref()
}

async fn admin(kafka: &Kafka) -> Cluster {
    Cluster::connect(&[&kafka.bootstrap()], ClientConfig::default()).await.unwrap()
}

fn config(kafka: &Kafka) -> ProducerConfig {
    ProducerConfig::new(&kafka.bootstrap()).linger(Duration::from_millis(2))
}

#[tokio::test]
async fn kafkas_java_consumer_reads_back_every_record_in_every_codec() {
    let Some(kafka) = kafka() else { return };
    create_topic(&admin(kafka).await, "round-trip", 3, 1, &[]).await;
    let mut sent: Vec<(ProducerRecord, Delivery)> = Vec::new();
    for (c, codec) in [Compression::None, Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd]
        .into_iter()
        .enumerate()
    {
        let producer = Producer::connect(config(kafka).compression(codec).batch_size(2000)).await.unwrap();
        for i in 0..200 {
            let n = c * 1000 + i;
            let mut record =
                ProducerRecord::new("round-trip", format!("{codec}-{n}")).timestamp(1_700_000_000_000 + n as i64);
            if i % 3 != 0 {
                record = record.key(format!("key-{}", i % 11));
            }
            if i % 4 == 0 {
                record = record.header("codec", codec.name()).header("empty", "");
                record.headers.push(kwire_records::Header { key: "null".into(), value: None });
            }
            if i % 50 == 7 {
                record.value = None;
            }
            let delivery = producer.send(record.clone()).await.unwrap();
            sent.push((record, delivery));
        }
        producer.flush().await.unwrap();
    }
    let mut acked: Vec<(ProducerRecord, RecordMetadata)> = Vec::new();
    for (record, delivery) in sent {
        acked.push((record, delivery.await.unwrap()));
    }
    let read = java_read(&kafka.bootstrap(), "round-trip", "read_uncommitted");
    assert_eq!(read.len(), acked.len());
    let mut by_partition: BTreeMap<i32, Vec<&support::JavaRecord>> = BTreeMap::new();
    for r in &read {
        by_partition.entry(r.partition).or_default().push(r);
    }
    for (p, records) in &by_partition {
        let ours: Vec<&(ProducerRecord, RecordMetadata)> = acked.iter().filter(|(_, m)| m.partition == *p).collect();
        assert_eq!(records.len(), ours.len(), "partition {p}");
        for (java, (record, meta)) in records.iter().zip(ours) {
            assert_eq!(java.offset, meta.offset, "offsets in the order sent");
            assert_eq!(java.key.as_deref(), record.key.as_deref());
            assert_eq!(java.value.as_deref(), record.value.as_deref());
            assert_eq!((java.timestamp, java.timestamp_type.as_str()), (record.timestamp.unwrap(), "CreateTime"));
            let headers: Vec<(String, Option<Vec<u8>>)> = record
                .headers
                .iter()
                .map(|h| (String::from_utf8(h.key.to_vec()).unwrap(), h.value.as_ref().map(|v| v.to_vec())))
                .collect();
            assert_eq!(java.headers, headers);
            if let Some(key) = &record.key {
                assert_eq!(*p, kwire_client::producer::partition_for_key(key, 3));
            }
        }
    }
}

#[tokio::test]
async fn ten_thousand_keys_land_where_kafkas_java_producer_puts_them() {
    let Some(kafka) = kafka() else { return };
    create_topic(&admin(kafka).await, "keys", 7, 1, &[]).await;
    kwire_test_support::kafka::java_program_built("ProducerCheck").unwrap();
    let out =
        kwire_test_support::kafka::java_program("ProducerCheck", &["partitions", &kafka.bootstrap(), "keys", "10000"])
            .output()
            .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let java: BTreeMap<String, i32> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, p) = l.split_once(' ').unwrap();
            (k.to_string(), p.parse().unwrap())
        })
        .collect();
    assert_eq!(java.len(), 10_000);
    let producer = Producer::connect(config(kafka)).await.unwrap();
    let records = (0..10_000).map(|i| ProducerRecord::new("keys", "v").key(format!("key-{i}")));
    let results = producer.send_all(records).await.await;
    let mut differ = Vec::new();
    for (i, result) in results.into_iter().enumerate() {
        let meta = result.unwrap();
        let key = format!("key-{i}");
        if java[&key] != meta.partition {
            let theirs = java[&key];
            differ.push((key, theirs, meta.partition));
        }
    }
    assert!(
        differ.is_empty(),
        "{} keys on other partitions than Java's: {:?}",
        differ.len(),
        &differ[..differ.len().min(5)]
    );
}

async fn transactions_seen_by_java(protocol: TransactionProtocol, topic: &str) {
    let Some(kafka) = kafka() else { return };
    create_topic(&admin(kafka).await, topic, 2, 1, &[]).await;
    let producer =
        Producer::connect(config(kafka).transactional_id(format!("{topic}-writer")).transaction_protocol(protocol))
            .await
            .unwrap();
    producer.init_transactions().await.unwrap();
    for (round, commit) in [("first", true), ("second", false), ("third", true)] {
        producer.begin_transaction().unwrap();
        for i in 0..20 {
            let _written_at_commit =
                producer.send(ProducerRecord::new(topic, format!("{round}-{i}")).partition(i % 2)).await.unwrap();
        }
        if commit {
            producer.commit_transaction().await.unwrap();
        } else {
            producer.flush().await.unwrap();
            producer.abort_transaction().await.unwrap();
        }
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    let values = |isolation| {
        let mut v: Vec<String> = java_read(&kafka.bootstrap(), topic, isolation)
            .into_iter()
            .map(|r| String::from_utf8(r.value.unwrap()).unwrap())
            .collect();
        v.sort();
        v
    };
    let committed = values("read_committed");
    assert_eq!(committed.len(), 40, "{protocol:?}: {committed:?}");
    assert!(committed.iter().all(|v| !v.starts_with("second")), "{protocol:?}: nothing aborted is read committed");
    assert_eq!(values("read_uncommitted").len(), 60, "{protocol:?}: the aborted records are in the log");
}

#[tokio::test]
async fn v2_transactions_read_by_kafkas_java_consumer() {
    transactions_seen_by_java(TransactionProtocol::Auto, "txn-v2").await;
}

#[tokio::test]
async fn v1_transactions_read_by_kafkas_java_consumer() {
    transactions_seen_by_java(TransactionProtocol::V1, "txn-v1").await;
}

#[tokio::test]
async fn the_brokers_refusals_are_typed_errors() {
    let Some(kafka) = kafka() else { return };
    let admin = admin(kafka).await;
    create_topic(&admin, "tiny-messages", 1, 1, &[("max.message.bytes", "1000")]).await;
    let producer = Producer::connect(config(kafka).max_block(Duration::from_secs(2))).await.unwrap();
    // Under max.request.size, over the topic's max.message.bytes: the broker refuses it.
    let delivery = producer.send(ProducerRecord::new("tiny-messages", vec![7u8; 5000])).await.unwrap();
    let error = delivery.await.unwrap_err();
    assert!(matches!(error, ProduceError::RecordTooLarge { .. }), "{error}");
    // The producer goes on: a record that fits is written.
    producer.send(ProducerRecord::new("tiny-messages", "fits")).await.unwrap().await.unwrap();
    // auto.create.topics.enable=false: an unknown topic is a timeout naming it, after max.block.ms.
    let unknown = producer.send(ProducerRecord::new("no-such-topic", "x")).await.unwrap_err();
    assert!(matches!(&unknown, ProduceError::Timeout(m) if m.contains("no-such-topic")), "{unknown}");
}
