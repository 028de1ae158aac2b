//! What every subcommand shares: where the cluster is, the default broker, the result type,
//! and finding the broker that serves a partition. A leaf module: it imports no subcommand.

use clap::Args;
use kwire07_client::consumer::{SimpleConsumer, StartOffset};
use kwire07_client::producer::Discovery;
use kwire07_client::zk::ZkCluster;
use kwire07_client::{ClientError, ReceiveBuffer};
use kwire07_protocol::{validate_new_topic, DEFAULT_MAX_TOPIC_NAME_LENGTH};

/// What a subcommand returns; the error prints as one `kwire07: …` line.
pub type CmdResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// Used when neither --broker nor --zookeeper is given.
pub const DEFAULT_BROKER: &str = "127.0.0.1:9092";

/// Where the 0.7 cluster is (`--broker`, `--zookeeper`). Without either, the broker at
/// 127.0.0.1:9092 is used.
#[derive(Debug, Args, Clone)]
pub struct Endpoints {
    /// Broker address HOST:PORT (a comma-separated list for `produce`).
    #[arg(long, global = true, value_delimiter = ',', value_name = "HOST:PORT")]
    pub broker: Vec<String>,
    // As `help` rather than a doc comment: the brackets are the connect string's syntax.
    #[arg(
        long,
        global = true,
        value_name = "CONNECT",
        help = "ZooKeeper connect string HOST:PORT[,HOST:PORT...][/chroot]."
    )]
    pub zookeeper: Option<String>,
    /// With --zookeeper: use this broker for single-partition commands.
    #[arg(long, global = true, value_name = "ID")]
    pub broker_id: Option<i32>,
}

pub fn discovery(cluster: &Endpoints) -> Discovery {
    match (&cluster.zookeeper, cluster.broker.is_empty()) {
        (Some(zk), true) => Discovery::ZooKeeper(zk.clone()),
        (_, false) => Discovery::Static(cluster.broker.clone()),
        (None, true) => Discovery::Static(vec![DEFAULT_BROKER.to_owned()]),
    }
}

/// The broker serving `topic`-`partition`: --broker, else from ZooKeeper (--broker-id, or the
/// lowest id that registered the topic with that partition, or the lowest live broker).
/// Returns the broker id too (−1 when it is unknown).
pub async fn single_broker(cluster: &Endpoints, topic: &str, partition: i32) -> CmdResult<(i32, String)> {
    if let Some(b) = cluster.broker.first() {
        return Ok((cluster.broker_id.unwrap_or(-1), b.clone()));
    }
    let Some(connect) = &cluster.zookeeper else { return Ok((-1, DEFAULT_BROKER.to_owned())) };
    let zk = ZkCluster::connect(connect).await?;
    let brokers = zk.brokers().await?;
    let id = match cluster.broker_id {
        Some(id) => id,
        None => {
            let counts = zk.topic_partition_counts(topic).await?;
            counts
                .iter()
                .find(|(id, n)| partition < **n && brokers.contains_key(id))
                .map(|(id, _)| *id)
                .or_else(|| brokers.keys().next().copied())
                .ok_or_else(|| ClientError::NoBroker("this cluster (no broker registered in ZooKeeper)".into()))?
        }
    };
    let info = brokers.get(&id).ok_or_else(|| ClientError::NoBroker(format!("id {id} in ZooKeeper")))?;
    Ok((id, info.addr()))
}

/// A topic name a 0.7 broker would refuse (closing the connection, since PRODUCE has no
/// answer), caught before anything is sent.
pub fn check_topic_name(topic: &str) -> CmdResult {
    validate_new_topic(topic, DEFAULT_MAX_TOPIC_NAME_LENGTH, 1)
        .map_err(|e| format!("invalid topic name {topic:?}: {e}").into())
}

/// A simple consumer of one partition with the fetch size and socket receive buffer asked for.
pub async fn partition_consumer(
    addr: &str,
    topic: &str,
    partition: i32,
    start: StartOffset,
    fetch_size: usize,
    receive_buffer: ReceiveBuffer,
) -> kwire07_client::Result<SimpleConsumer> {
    let mut consumer = SimpleConsumer::connect(addr, topic, partition, start).await?;
    consumer.connection().await?.set_receive_buffer(receive_buffer)?;
    for c in consumer.cursors_mut() {
        c.size = kwire07_client::fetch::FetchSize::new(fetch_size, c.size.max().max(fetch_size));
    }
    Ok(consumer)
}
