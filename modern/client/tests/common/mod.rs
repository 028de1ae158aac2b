//! What the consumer tests share: an in-process cluster, records written with a known
//! content (key `p<partition>`, value the sequence number), and checks of what consumers read.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::Duration;

use kwire::Records;
use kwire_client::consumer::{Consumer, ConsumerConfig, ConsumerError, ConsumerRecord, TopicPartition};
use kwire_connection::{ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

/// An in-process cluster of `nodes` with no initial rebalance delay.
pub async fn fake(nodes: usize) -> FakeCluster {
    FakeCluster::start(FakeConfig::default().nodes(nodes).group_initial_rebalance_delay(Duration::ZERO))
        .await
        .expect("the in-process cluster starts")
}

/// A cluster client for writing test records.
pub async fn writer(bootstrap: &str) -> Cluster {
    let servers: Vec<&str> = bootstrap.split(',').collect();
    Cluster::connect(&servers, ClientConfig::default()).await.expect("connects")
}

/// Writes records `from..to` to `topic`'s `partition` in batches of `per_batch` (lz4): value
/// `i`, key `p<partition>`.
pub async fn produce(cluster: &Cluster, topic: &str, partition: i32, from: u64, to: u64, per_batch: u64) {
    let mut i = from;
    while i < to {
        let mut batch = BatchBuilder::new(BatchOptions::new(2, Compression::Lz4)).expect("options");
        let end = (i + per_batch).min(to);
        for n in i..end {
            let key = format!("p{partition}");
            batch
                .append(1_700_000_000_000 + n as i64, Some(key.as_bytes()), Some(n.to_string().as_bytes()), &[])
                .expect("append");
        }
        let records = Records::from_bytes(batch.build().expect("build"));
        cluster.produce(topic, partition, records, -1, Duration::from_secs(10)).await.expect("produce");
        i = end;
    }
}

/// A consumer config reading from the beginning.
pub fn config(bootstrap: &str) -> ConsumerConfig {
    ConsumerConfig::new(bootstrap).set("auto.offset.reset", "earliest").expect("valid")
}

pub fn value(record: &ConsumerRecord) -> u64 {
    std::str::from_utf8(record.value.as_deref().unwrap_or_default())
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Polls until `n` records arrived or `within` passed; errors end it.
pub async fn read(consumer: &Consumer, n: usize, within: Duration) -> Result<Vec<ConsumerRecord>, ConsumerError> {
    let deadline = tokio::time::Instant::now() + within;
    let mut out = Vec::new();
    while out.len() < n && tokio::time::Instant::now() < deadline {
        out.extend(consumer.poll(Duration::from_millis(200)).await?);
    }
    Ok(out)
}

/// Per partition, the offsets read, in the order read.
pub fn by_partition(records: &[ConsumerRecord]) -> BTreeMap<TopicPartition, Vec<i64>> {
    let mut out: BTreeMap<TopicPartition, Vec<i64>> = BTreeMap::new();
    for r in records {
        out.entry(r.topic_partition()).or_default().push(r.offset);
    }
    out
}

/// Partitions 0..n of `topic`.
pub fn partitions(topic: &str, n: i32) -> Vec<TopicPartition> {
    (0..n).map(|p| TopicPartition::new(topic, p)).collect()
}
