//! The library against the real `kwire07-broker`: a batch spanning partitions (MULTIPRODUCE),
//! MULTIFETCH over several partitions with a small fetch size, fetch-size growth for a message
//! larger than the fetch size, and OFFSETS.

use kwire07_test_support as common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{broker, BrokerOptions};
use kwire07_client::consumer::{PartitionCursor, SimpleConsumer, StartOffset};
use kwire07_client::fetch::FetchSize;
use kwire07_client::producer::{Discovery, Producer, ProducerConfig, Record};
use kwire07_client::{BrokerConnection, Codec, Magic};

#[tokio::test]
async fn multiproduce_and_multifetch_over_partitions_with_growth() {
    let b = broker(BrokerOptions { num_partitions: Some(4), ..Default::default() }.set("log.file.size", 4000));
    let addr = b.address();
    let topic = "multi";
    for (magic, codec) in [(Magic::V0, Codec::None), (Magic::V1, Codec::Gzip), (Magic::V1, Codec::Snappy)] {
        let mut config = ProducerConfig::new(Discovery::Static(vec![addr.clone()]));
        config.magic = magic;
        config.codec = codec;
        config.batch_size = 1000;
        let mut producer = Producer::new(config).await.expect("producer");
        let mut expected: BTreeMap<i32, Vec<Bytes>> = BTreeMap::new();
        for i in 0..400usize {
            let p = (i % 4) as i32;
            // Some messages on every partition are larger than the initial fetch size.
            let len = if i % 40 < 4 { 3000 } else { 10 + i % 90 };
            let payload = Bytes::from(format!("{magic:?}-{codec:?}-{i}-{}", "y".repeat(len)));
            expected.entry(p).or_default().push(payload.clone());
            producer.send(Record::new(topic, payload).with_partition(p)).await.expect("send");
        }
        producer.sync().await.expect("sync");
        let stats = producer.stats();
        assert_eq!(stats.records, 400);
        // One batch over 4 partitions of one broker: a single MULTIPRODUCE (split only if a
        // compressed wrapper would exceed max.message.size, which it does not here).
        assert_eq!(stats.requests, 1, "{stats:?}");

        // Read every partition from 0 with one MULTIFETCH per round and a 1 KiB initial fetch
        // size; this round's messages are the tail of each partition.
        let conn = BrokerConnection::connect(&addr).await.expect("connect");
        let cursors = (0..4)
            .map(|p| {
                let mut c = PartitionCursor::new(topic, 0, p, 0);
                c.size = FetchSize::new(1024, 1 << 20);
                c
            })
            .collect();
        let mut consumer = SimpleConsumer::with_cursors(conn, cursors);
        let mut got: BTreeMap<i32, Vec<Bytes>> = BTreeMap::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let batch = consumer.fetch().await.expect("fetch");
            if batch.is_empty() {
                let complete = expected
                    .iter()
                    .all(|(p, v)| got.get(p).is_some_and(|g| g.len() >= v.len() && g[g.len() - v.len()..] == v[..]));
                if complete || Instant::now() > deadline {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            for m in batch {
                got.entry(m.partition).or_default().push(m.payload);
            }
        }
        for (p, v) in &expected {
            let g = &got[p];
            assert!(g.len() >= v.len(), "partition {p}: {} of {}", g.len(), v.len());
            assert_eq!(&g[g.len() - v.len()..], &v[..], "partition {p} ({magic:?}, {codec:?})");
        }
        // The fetch size grew to hold the 3000-byte messages.
        assert!(consumer.cursors().iter().all(|c| c.size.current() >= 3000), "{:?}", consumer.cursors());
    }
    // Segment rolls happened, and OFFSETS lists them.
    let mut conn = BrokerConnection::connect(&addr).await.expect("connect");
    let offsets = conn.offsets(topic, 1, -1, 100).await.expect("offsets");
    assert!(offsets.len() > 2, "{offsets:?}");
    assert!(offsets.windows(2).all(|w| w[0] > w[1]), "descending: {offsets:?}");
    assert_eq!(conn.offsets(topic, 1, -2, 100).await.expect("earliest"), [0]);
    // Unknown topic: [0] for latest, empty fetch.
    assert_eq!(conn.offsets("never-seen", 0, -1, 10).await.expect("unknown"), [0]);
    let mut c = SimpleConsumer::connect(&addr, "never-seen", 0, StartOffset::Earliest).await.expect("consumer");
    assert!(c.fetch().await.expect("fetch").is_empty());
}

#[tokio::test]
async fn message_larger_than_the_maximum_fetch_size_is_a_clear_error() {
    let b = broker(BrokerOptions::default());
    let addr = b.address();
    let mut producer = Producer::new(ProducerConfig::new(Discovery::Static(vec![addr.clone()]))).await.expect("p");
    producer.send(Record::new("big", vec![b'z'; 50_000]).with_partition(0)).await.expect("send");
    producer.sync().await.expect("sync");
    let conn = BrokerConnection::connect(&addr).await.expect("connect");
    let mut cursor = PartitionCursor::new("big", 0, 0, 0);
    cursor.size = FetchSize::new(1000, 20_000);
    let mut consumer = SimpleConsumer::with_cursors(conn, vec![cursor]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let err = loop {
        match consumer.fetch().await {
            Err(e) => break e,
            Ok(v) if v.is_empty() && Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
            Ok(v) => panic!("expected an error, got {} messages", v.len()),
        }
    };
    let text = err.to_string();
    assert!(text.contains("50010") && text.contains("20000"), "{text}");
    // Too large for the producer's max.message.size: refused before sending.
    let err = producer.send(Record::new("big", vec![0u8; 1_000_001])).await;
    let err = match err {
        Ok(()) => producer.flush().await.expect_err("too large"),
        Err(e) => e,
    };
    assert!(err.to_string().contains("max.message.size"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_producer_and_consumer_across_a_broker_restart() {
    let mut b = broker(BrokerOptions::default().set("log.file.size", 2000));
    let addr = b.address();
    let mut config = ProducerConfig::new(Discovery::Static(vec![addr.clone()]));
    config.codec = Codec::Snappy;
    config.batch_size = 10;
    let mut producer = Producer::new(config).await.expect("producer");
    let expected: Vec<String> = (0..200).map(|i| format!("restart-{i}")).collect();
    for m in &expected[..100] {
        producer.send(Record::new("r", m.clone()).with_partition(0)).await.expect("send");
    }
    producer.sync().await.expect("sync");
    let mut consumer = SimpleConsumer::connect(&addr, "r", 0, StartOffset::Earliest).await.expect("consumer");
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while got.len() < 100 && Instant::now() < deadline {
        got.extend(
            consumer
                .fetch()
                .await
                .expect("fetch")
                .into_iter()
                .map(|m| String::from_utf8_lossy(&m.payload).into_owned()),
        );
    }
    tokio::task::block_in_place(|| b.restart()).expect("restart");
    // The old connections are dead; the producer notices before writing, the consumer on error.
    for m in &expected[100..] {
        producer.send(Record::new("r", m.clone()).with_partition(0)).await.expect("send after restart");
    }
    producer.sync().await.expect("sync after restart");
    while got.len() < 200 && Instant::now() < deadline {
        match consumer.fetch().await {
            Ok(v) => got.extend(v.into_iter().map(|m| String::from_utf8_lossy(&m.payload).into_owned())),
            Err(e) if e.is_connection_error() => consumer.reconnect().await.expect("reconnect"),
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(got, expected);
}
