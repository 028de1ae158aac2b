//! Fetching against the in-process cluster: assigned partitions read whole and in order, the
//! prefetch bounds, seeks, resets, bad input, and the fetch path's failures (a dropped
//! connection, NOT_LEADER_OR_FOLLOWER, a corrupt batch, a leader moved with its log
//! truncated), each handled as Kafka's Java consumer handles it.

mod common;

use std::time::Duration;

use common::*;
use kwire_client::consumer::{Consumer, TopicPartition};
use std::time::Instant;

#[tokio::test]
async fn assigned_partitions_are_read_whole_and_in_order() {
    let fake = fake(3).await;
    fake.create_topic("orders", 3).unwrap();
    let writer = writer(&fake.bootstrap_servers()).await;
    for p in 0..3 {
        produce(&writer, "orders", p, 0, 1000, 100).await;
    }
    let consumer = Consumer::new(config(&fake.bootstrap_servers())).await.unwrap();
    consumer.assign(partitions("orders", 3)).await.unwrap();
    let started = Instant::now();
    let records = read(&consumer, 3000, Duration::from_secs(20)).await.unwrap();
    eprintln!("read in {:?}", started.elapsed());
    assert_eq!(records.len(), 3000);
    for (tp, offsets) in by_partition(&records) {
        assert_eq!(offsets, (0..1000).collect::<Vec<i64>>(), "{tp}");
    }
    assert!(records
        .iter()
        .all(|r| value(r) == r.offset as u64 && r.key.as_deref() == Some(format!("p{}", r.partition).as_bytes())));
    assert_eq!(consumer.position(&TopicPartition::new("orders", 1)).await.unwrap(), 1000);
    let started = Instant::now();
    consumer.close().await.unwrap();
    eprintln!("closed in {:?}", started.elapsed());
    fake.shutdown().await;
}

/// Memory is bounded by the prefetch limits, not by the topic: with 8 MiB waiting in three
/// partitions and nobody polling, what is fetched ahead stays within `fetch.max.bytes` (plus
/// the one answer in flight), and fetching resumes as `poll` drains it.
#[tokio::test]
async fn the_prefetch_stays_within_its_bounds() {
    let fake = fake(1).await;
    fake.create_topic("big", 3).unwrap();
    let writer = writer(&fake.bootstrap_servers()).await;
    let value = vec![b'x'; 1024];
    for p in 0..3 {
        let mut offset = 0;
        while offset < 2800 {
            let mut batch =
                kwire_records::BatchBuilder::new(kwire_records::BatchOptions::new(2, kwire_records::Compression::None))
                    .unwrap();
            for _ in 0..100 {
                batch.append(now_ms() as i64, None, Some(&value), &[]).unwrap();
            }
            let records = kwire::Records::from_bytes(batch.build().unwrap());
            writer.produce("big", p, records, -1, Duration::from_secs(5)).await.unwrap();
            offset += 100;
        }
    }
    let (partition_bound, node_bound) = (64 << 10, 256 << 10);
    let config = config(&fake.bootstrap_servers())
        .max_partition_fetch_bytes(partition_bound)
        .fetch_max_bytes(node_bound)
        .max_poll_records(100);
    let consumer = Consumer::new(config).await.unwrap();
    consumer.assign(partitions("big", 3)).await.unwrap();
    let first = consumer.poll(Duration::from_secs(5)).await.unwrap();
    assert!(!first.is_empty());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle = consumer.metrics();
    assert!(idle.buffered_bytes > 0, "it fetched ahead: {idle:?}");
    assert!(
        idle.buffered_bytes <= 2 * node_bound as u64,
        "{} bytes buffered over a bound of {}",
        idle.buffered_bytes,
        2 * node_bound
    );
    let fetched = idle.fetched_bytes;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(consumer.metrics().fetched_bytes, fetched, "nothing more is fetched while nobody polls");
    let mut total = first.len();
    let mut peak = 0;
    while total < 8400 {
        total += consumer.poll(Duration::from_secs(5)).await.unwrap().len();
        peak = peak.max(consumer.metrics().buffered_bytes);
    }
    assert!(peak <= 2 * node_bound as u64, "peak {peak}");
    assert_eq!(total, 8400);
    consumer.close().await.unwrap();
    fake.shutdown().await;
}
