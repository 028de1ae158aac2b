//! `kwire07 produce`: one message per line of stdin or of a file.

use std::io::BufRead;
use std::path::PathBuf;

use clap::Args;
use kwire07_client::producer::{Producer, ProducerConfig, Record};
use kwire07_client::zk::ZkCluster;
use kwire07_client::{BrokerConnection, ClientError, Magic};
use kwire07_protocol::ErrorCode;

use crate::endpoints::{check_topic_name, discovery, single_broker, CmdResult, Endpoints};
use crate::parse::{parse_magic, parse_produce_partition, CompressionArg};
use crate::progress::Progress;

#[derive(Debug, Args)]
pub struct ProduceArgs {
    #[arg(long)]
    pub topic: String,
    /// Partition to send to (default: by key hash, else random / broker's choice; -1: the
    /// broker picks one at random, as in 0.7).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_produce_partition)]
    pub partition: Option<i32>,
    /// Key for every message; partitions by its Java String.hashCode, as 0.7 does.
    #[arg(long)]
    pub key: Option<String>,
    #[arg(long, value_enum, default_value = "none")]
    pub compression: CompressionArg,
    /// Message format: 0 (uncompressed only) or 1 (what the 0.7 Scala producer writes).
    #[arg(long, value_parser = parse_magic, default_value = "1")]
    pub magic: Magic,
    /// Read messages from this file instead of stdin.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Messages per batch.
    #[arg(long, default_value_t = 200)]
    pub batch_size: usize,
}

/// Refuses a partition the topic does not have, where that can be known: from the counts in
/// ZooKeeper, else by asking the broker (OFFSETS answers "wrong partition" for one outside the
/// topic's count).
async fn check_partition(cluster: &Endpoints, topic: &str, partition: i32) -> CmdResult {
    if let (Some(connect), true) = (&cluster.zookeeper, cluster.broker.is_empty()) {
        let counts = ZkCluster::connect(connect).await?.topic_partition_counts(topic).await?;
        if let Some(most) = counts.values().max().filter(|most| partition >= **most) {
            return Err(format!(
                "topic {topic} has {most} partitions (0..={}); there is no partition {partition}",
                most - 1
            )
            .into());
        }
        return Ok(());
    }
    let (_, addr) = single_broker(cluster, topic, partition).await?;
    let mut conn = BrokerConnection::connect(&addr).await?;
    match conn.offsets(topic, partition, -1, 1).await {
        Err(ClientError::Broker { code: ErrorCode::WrongPartition, .. }) => Err(format!(
            "broker {addr} has no partition {partition} of topic {topic} (see `kwire07 topics describe {topic}`)"
        )
        .into()),
        _ => Ok(()),
    }
}

/// What a broker closing the connection after a PRODUCE most likely means: 0.7 answers no
/// PRODUCE, so a refusal shows only as the close (the broker's log says which it was).
fn explain_produce_error(e: ClientError) -> Box<dyn std::error::Error> {
    match e {
        ClientError::Closed { .. } | ClientError::Io { .. } => format!(
            "{e}. A 0.7 broker closes the connection when it refuses a produce; likely causes: an invalid topic \
             name, a partition the topic does not have, a message over its max.message.size, or a request over \
             max.socket.request.bytes (the broker's log says which)"
        )
        .into(),
        other => other.into(),
    }
}

pub async fn run(cluster: &Endpoints, a: ProduceArgs) -> CmdResult {
    check_topic_name(&a.topic)?;
    if let Some(p) = a.partition.filter(|p| *p >= 0) {
        check_partition(cluster, &a.topic, p).await?;
    }
    let mut config = ProducerConfig::new(discovery(cluster));
    config.codec = a.compression.into();
    config.magic = a.magic;
    config.batch_size = a.batch_size.max(1);
    let mut producer = Producer::new(config).await?;
    let input: Box<dyn BufRead> = match &a.file {
        Some(path) => Box::new(std::io::BufReader::new(
            std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    let mut progress = Progress::new("produced");
    let (mut count, mut bytes) = (0u64, 0u64);
    for line in input.split(b'\n') {
        let mut line = line.map_err(|e| format!("cannot read input: {e}"))?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        bytes += line.len() as u64;
        let mut record = Record::new(&a.topic, line);
        record.key = a.key.clone();
        record.partition = a.partition;
        producer.send(record).await.map_err(explain_produce_error)?;
        count += 1;
        progress.tick(count, bytes);
    }
    producer.close().await.map_err(explain_produce_error)?;
    progress.finish(count, bytes);
    Ok(())
}
