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

/// Runs `n` records through a producer while `fault` is installed, and checks that every one
/// was acknowledged, is in the log once, in order.
async fn survives(
    fault: impl FnOnce(&FakeCluster),
    config_of: impl FnOnce(ProducerConfig) -> ProducerConfig,
) -> Producer {
    let fake = cluster(3, "faults", 3).await;
    // Small batches: many of each partition in flight at once when the fault strikes.
    let producer = Producer::connect(config_of(config(&fake).batch_size(300))).await.unwrap();
    // Warm up (metadata, connections) before the fault.
    let mut sent = send_values(&producer, "faults", "warm", 20).await;
    fault(&fake);
    sent.extend(send_values(&producer, "faults", "value", 600).await);
    check_exactly_once_in_order(&fake, "faults", 3, &sent);
    fake.shutdown().await;
    producer
}

#[tokio::test]
async fn not_leader_or_follower_is_retried_without_loss_or_duplicates() {
    let producer = survives(
        |fake| {
            fake.fail(ApiKey::Produce, Times::N(3), ErrorCode::NOT_LEADER_OR_FOLLOWER).unwrap();
        },
        |c| c,
    )
    .await;
    assert!(producer.metrics().retries >= 1, "{:?}", producer.metrics());
}

#[tokio::test]
async fn a_dropped_connection_is_retried_and_deduplicated() {
    let producer = survives(
        |fake| {
            // The broker writes the batch and then the connection drops: the retry must not
            // write it twice.
            let seen = Arc::new(AtomicUsize::new(0));
            fake.intercept(ApiKey::Produce, Times::N(2), move |_| {
                if seen.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
                    Action::Drop
                } else {
                    Action::Pass
                }
            });
        },
        |c| c,
    )
    .await;
    assert!(producer.metrics().retries >= 1);
}

#[tokio::test]
async fn a_slow_broker_past_the_request_timeout_loses_and_duplicates_nothing() {
    survives(
        |fake| {
            fake.intercept(ApiKey::Produce, Times::N(2), |_| Action::Delay(Duration::from_millis(1500)));
        },
        |c| c.request_timeout(Duration::from_secs(1)),
    )
    .await;
}

#[tokio::test]
async fn out_of_order_sequence_bumps_the_epoch_and_resends() {
    let producer = survives(
        |fake| {
            fake.fail(ApiKey::Produce, Times::N(2), ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER).unwrap();
        },
        |c| c,
    )
    .await;
    assert!(producer.identity().epoch >= 1, "the epoch was bumped: {:?}", producer.identity());
}

#[tokio::test]
async fn unknown_producer_id_bumps_the_epoch_and_resends() {
    let producer = survives(
        |fake| {
            fake.fail(ApiKey::Produce, Times::N(2), ErrorCode::UNKNOWN_PRODUCER_ID).unwrap();
        },
        |c| c,
    )
    .await;
    assert!(producer.identity().epoch >= 1, "the epoch was bumped: {:?}", producer.identity());
}

#[tokio::test]
async fn invalid_producer_epoch_gets_a_new_producer_id() {
    let producer = survives(
        |fake| {
            fake.fail(ApiKey::Produce, Times::Once, ErrorCode::INVALID_PRODUCER_EPOCH).unwrap();
        },
        |c| c,
    )
    .await;
    assert!(producer.metrics().retries >= 1);
}

#[tokio::test]
async fn leaders_moving_and_a_node_dying_lose_nothing() {
    let fake = cluster(3, "moves", 3).await;
    let producer = Producer::connect(config(&fake).batch_size(300)).await.unwrap();
    let mut sent = send_values(&producer, "moves", "before", 200).await;
    let mut pending = Vec::new();
    for i in 0..600 {
        if i == 150 {
            for p in 0..3 {
                let leader = fake.leader("moves", p).unwrap();
                let other = fake.live_nodes().into_iter().find(|n| *n != leader).unwrap();
                fake.move_leader("moves", p, other).unwrap();
            }
        }
        if i == 400 {
            let leader = fake.leader("moves", 0).unwrap();
            fake.kill_node(leader).await;
        }
        let value = Bytes::from(format!("during-{i:05}"));
        pending.push((value.clone(), producer.send(ProducerRecord::new("moves", value)).await.unwrap()));
        if i % 50 == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    for (value, d) in pending {
        sent.push((value.clone(), d.await.unwrap_or_else(|e| panic!("{value:?}: {e}"))));
    }
    check_exactly_once_in_order(&fake, "moves", 3, &sent);
    fake.shutdown().await;
}

#[tokio::test]
async fn every_codec_and_every_acks_setting_writes_readable_batches() {
    let fake = cluster(1, "codecs", 2).await;
    for codec in [Compression::None, Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd] {
        for acks in [Acks::All, Acks::Leader, Acks::None] {
            // Levels of Kafka's other than the defaults (KIP-390) write readable batches too.
            let levels = config(&fake).compression_level(Compression::Gzip, 9).compression_level(Compression::Zstd, 10);
            let producer = Producer::connect(levels.compression(codec).acks(acks)).await.unwrap();
            let prefix = format!("{codec}-{acks:?}");
            let sent = send_values(&producer, "codecs", &prefix, 50).await;
            assert!(
                sent.iter().all(|(_, m)| (m.offset >= 0) == (acks != Acks::None)),
                "{prefix}: offsets known unless acks=0"
            );
            producer.close(Duration::from_secs(5)).await.unwrap();
        }
    }
    // acks=0 tells nothing back: the last records may still be on their way into the log.
    let read = || (0..2).flat_map(|p| read_back(&fake, "codecs", p)).filter_map(|r| r.value).collect::<Vec<Bytes>>();
    for _ in 0..100 {
        if read().len() >= 750 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let values = read();
    let mut counts = std::collections::BTreeMap::new();
    for v in &values {
        let s = String::from_utf8_lossy(v).to_string();
        *counts.entry(s.rsplit_once('-').unwrap().0.to_string()).or_insert(0) += 1;
    }
    assert_eq!(values.len(), 5 * 3 * 50, "{counts:?}");
    let stored = fake.batches("codecs", 0).unwrap_or_default();
    assert!(!stored.is_empty());
    fake.shutdown().await;
}

#[tokio::test]
async fn one_produce_request_carries_every_ready_partition() {
    let fake = cluster(1, "wide", 6).await;
    let largest = Arc::new(AtomicUsize::new(0));
    let seen = largest.clone();
    fake.intercept(ApiKey::Produce, Times::Always, move |i| {
        if let RequestKind::Produce(p) = i.request {
            let n: usize = p.topic_data.iter().map(|t| t.partition_data.len()).sum();
            seen.fetch_max(n, Ordering::SeqCst);
        }
        Action::Pass
    });
    let producer = Producer::connect(config(&fake).linger(Duration::from_millis(50))).await.unwrap();
    let mut pending = Vec::new();
    for p in 0..6 {
        pending.push(producer.send(ProducerRecord::new("wide", "x").partition(p)).await.unwrap());
    }
    for d in pending {
        d.await.unwrap();
    }
    assert_eq!(largest.load(Ordering::SeqCst), 6, "one request for all six partitions");
    fake.shutdown().await;
}

#[tokio::test]
async fn bad_input_gets_typed_errors_not_panics_or_hangs() {
    let fake = FakeCluster::start(FakeConfig::default().auto_create_topics(false)).await.unwrap();
    fake.create_topic("small", 2).unwrap();
    let config = config(&fake).max_request_size(1000).max_block(Duration::from_millis(500));
    let producer = Producer::connect(config).await.unwrap();

    let big = producer.send(ProducerRecord::new("small", vec![0u8; 2000])).await.unwrap_err();
    assert!(matches!(big, ProduceError::RecordTooLarge { what: "max.request.size", .. }), "{big}");
    let unknown = producer.send(ProducerRecord::new("nowhere", "x")).await.unwrap_err();
    assert!(matches!(&unknown, ProduceError::Timeout(m) if m.contains("nowhere")), "{unknown}");
    let partition = producer.send(ProducerRecord::new("small", "x").partition(7)).await.unwrap_err();
    assert!(matches!(partition, ProduceError::InvalidPartition { partition: 7, partitions: 2, .. }), "{partition}");
    let invalid = producer.send(ProducerRecord::new("bad name!", "x")).await.unwrap_err();
    assert!(matches!(invalid, ProduceError::InvalidTopic(_)), "{invalid}");

    producer.close(Duration::from_secs(5)).await.unwrap();
    let closed = producer.send(ProducerRecord::new("small", "x")).await.unwrap_err();
    assert!(closed.is_closed(), "{closed}");
    fake.shutdown().await;
}

#[tokio::test]
async fn a_full_buffer_blocks_then_fails_with_buffer_exhausted() {
    let fake = cluster(1, "slow", 1).await;
    // The broker answers nothing for a while: buffered records hold their memory.
    fake.intercept(ApiKey::Produce, Times::Always, |_| Action::Delay(Duration::from_secs(3)));
    let config = config(&fake).buffer_memory(4096).max_block(Duration::from_millis(300)).batch_size(1024);
    let producer = Producer::connect(config).await.unwrap();
    let mut error = None;
    let mut kept = Vec::new();
    for _ in 0..100 {
        match producer.send(ProducerRecord::new("slow", vec![1u8; 200])).await {
            Ok(d) => kept.push(d),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let error = error.expect("the buffer filled up");
    assert!(matches!(error, ProduceError::BufferExhausted { buffer_memory: 4096, .. }), "{error}");
    assert!(producer.metrics().buffer_in_use > 3000);
    drop(producer);
    fake.shutdown().await;
}

#[tokio::test]
async fn a_record_not_delivered_in_time_fails_with_a_timeout() {
    let fake = cluster(1, "late", 1).await;
    fake.fail(ApiKey::Produce, Times::Always, ErrorCode::NOT_ENOUGH_REPLICAS).unwrap();
    let config = config(&fake).delivery_timeout(Duration::from_millis(800)).request_timeout(Duration::from_millis(500));
    let producer = Producer::connect(config).await.unwrap();
    let delivery = producer.send(ProducerRecord::new("late", "x")).await.unwrap();
    let error = tokio::time::timeout(Duration::from_secs(10), delivery).await.expect("no hang").unwrap_err();
    assert!(matches!(&error, ProduceError::Timeout(m) if m.contains("late-0")), "{error}");
    fake.shutdown().await;
}

#[tokio::test]
async fn dropping_the_producer_fails_what_it_held_and_stops() {
    let fake = cluster(1, "dropped", 1).await;
    fake.intercept(ApiKey::Produce, Times::Always, |_| Action::Delay(Duration::from_secs(2)));
    let producer = Producer::connect(config(&fake).linger(Duration::from_secs(10))).await.unwrap();
    let delivery = producer.send(ProducerRecord::new("dropped", "x")).await.unwrap();
    drop(producer);
    let error = tokio::time::timeout(Duration::from_secs(5), delivery).await.expect("no hang").unwrap_err();
    assert!(matches!(error, ProduceError::IllegalState(_)), "{error}");
    fake.shutdown().await;
}

#[tokio::test]
async fn a_batch_refused_as_too_large_is_split_and_every_record_lands_once_in_order() {
    use kwire::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
    use kwire::messages::CreateTopicsRequest;
    use kwire_client::producer::ProducerHook;
    let fake = FakeCluster::start(FakeConfig::default().nodes(1)).await.expect("fake cluster");
    // A topic whose batches may hold at most 4 KiB, and a producer whose batches hold 64 KiB.
    let topic = CreatableTopic {
        name: "small".into(),
        num_partitions: 2,
        replication_factor: 1,
        configs: [CreatableTopicConfig {
            name: "max.message.bytes".into(),
            value: Some("4096".into()),
            ..Default::default()
        }]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let request = CreateTopicsRequest { topics: [topic].into_iter().collect(), timeout_ms: 5000, ..Default::default() };
    let admin = kwire_connection::Cluster::connect(&[&fake.bootstrap_servers()], Default::default()).await.unwrap();
    let created = admin.any().await.unwrap().send(request).await.unwrap();
    assert_eq!(created.topics.first().unwrap().error_code, ErrorCode::NONE);

    struct Splits(AtomicUsize);
    impl ProducerHook for Splits {
        fn on_batch_error(&self, _topic: &str, _partition: i32, error: &ProduceError, will_retry: bool) {
            if matches!(error, ProduceError::Broker { code: ErrorCode::MESSAGE_TOO_LARGE, .. }) && will_retry {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    let splits = Arc::new(Splits(AtomicUsize::new(0)));
    let producer =
        Producer::connect(config(&fake).linger(Duration::from_millis(200)).batch_size(64 * 1024)).await.unwrap();
    producer.add_hook(splits.clone());
    let sent = send_values(&producer, "small", &"v".repeat(90), 400).await;
    assert!(splits.0.load(Ordering::Relaxed) > 0, "no batch was refused: the test proves nothing");
    check_exactly_once_in_order(&fake, "small", 2, &sent);
    let stored: usize = (0..2).map(|p| fake.batches("small", p).unwrap().len()).sum();
    assert!(stored >= 400 * 100 / 4096, "{stored} batches of at most 4 KiB hold 40 KB");
    // A record that cannot fit on its own is not split: it fails, naming the limit.
    let big = producer.send(ProducerRecord::new("small", vec![b'x'; 5000])).await.unwrap();
    assert!(matches!(big.await, Err(ProduceError::RecordTooLarge { .. })));
    producer.close(Duration::from_secs(5)).await.unwrap();
    fake.shutdown().await;
}

/// Share of the records sent after the first 300 ms that went to partitions led by `slow`,
/// a broker that holds every Produce for 3 s, with `partitioner.availability.timeout.ms`
/// at `timeout` (KIP-794).
async fn share_sent_to_a_stuck_broker(timeout: Duration) -> f64 {
    let fake = cluster(2, "avail", 4).await;
    let slow = fake.leader("avail", 0).unwrap();
    let led_by_slow: Vec<i32> = (0..4).filter(|p| fake.leader("avail", *p) == Some(slow)).collect();
    let config = config(&fake)
        .batch_size(200)
        .max_in_flight(1)
        .delivery_timeout(Duration::from_secs(60))
        .partitioner_availability_timeout(timeout);
    let producer = Producer::connect(config).await.unwrap();
    let stuck = fake.intercept(ApiKey::Produce, Times::Always, move |seen| {
        if seen.node == slow {
            Action::Delay(Duration::from_secs(3))
        } else {
            Action::Pass
        }
    });
    let start = tokio::time::Instant::now();
    let (mut late, mut late_to_slow) = (0usize, 0usize);
    let mut deliveries = Vec::new();
    while start.elapsed() < Duration::from_millis(1000) {
        for _ in 0..5 {
            let d = producer
                .send(ProducerRecord::new("avail", "a value of some forty bytes, or thereabouts"))
                .await
                .unwrap();
            if start.elapsed() > Duration::from_millis(300) {
                late += 1;
                late_to_slow += usize::from(led_by_slow.contains(&d.partition()));
            }
            deliveries.push(d);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // The broker recovers: everything is delivered.
    fake.remove_hook(stuck);
    for d in deliveries {
        d.await.expect("delivered once the slow broker answers");
    }
    producer.close(Duration::from_secs(5)).await.unwrap();
    fake.shutdown().await;
    late_to_slow as f64 / late.max(1) as f64
}

#[tokio::test]
async fn records_without_a_key_avoid_a_broker_that_stopped_taking_batches() {
    // Off (the default): adaptive partitioning only weighs the stuck broker's long queues
    // down (about 5% of the records still went there in runs here); with the timeout it is
    // left out.
    let off = share_sent_to_a_stuck_broker(Duration::ZERO).await;
    let on = share_sent_to_a_stuck_broker(Duration::from_millis(50)).await;
    assert!(off > 0.01, "without the timeout {off:.3} of the records went to the stuck broker");
    assert!(
        on < 0.01 && on < off / 4.0,
        "with a 50 ms timeout {on:.3} still went to the stuck broker ({off:.3} without)"
    );
}
