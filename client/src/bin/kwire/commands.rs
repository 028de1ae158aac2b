//! The subcommands.

use std::io::{BufRead, Write};
use std::time::Duration;

use kafka_wire_client::consumer::{SimpleConsumer, StartOffset};
use kafka_wire_client::group::{GroupConfig, GroupConsumer, OffsetReset};
use kafka_wire_client::producer::{Discovery, Producer, ProducerConfig, Record};
use kafka_wire_client::zk::ZkCluster;
use kafka_wire_client::{BrokerConnection, ClientError, ReceiveBuffer};
use kafka_wire_legacy::{validate_new_topic, ErrorCode, DEFAULT_MAX_TOPIC_NAME_LENGTH};

use crate::cli::{Cli, Cluster, Command, ConsumeArgs, OffsetsArgs, ProduceArgs, TopicsCommand};
use crate::progress::Progress;

pub type CmdResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// Used when neither --broker nor --zookeeper is given.
pub const DEFAULT_BROKER: &str = "127.0.0.1:9092";

pub async fn run(cli: Cli) -> CmdResult {
    match cli.command {
        Command::Produce(a) => produce(&cli.cluster, a).await,
        Command::Consume(a) => consume(&cli.cluster, a).await,
        Command::Offsets(a) => offsets(&cli.cluster, a).await,
        Command::Topics(t) => crate::admin::topics(&cli.cluster, t.command.unwrap_or(TopicsCommand::List)).await,
        Command::Zk(c) => crate::admin::zk(&cli.cluster, c).await,
        Command::Perf(p) => crate::perf::run(&cli.cluster, p).await,
        Command::Tap(t) => crate::tap::run(t).await,
    }
}

pub fn discovery(cluster: &Cluster) -> Discovery {
    match (&cluster.zookeeper, cluster.broker.is_empty()) {
        (Some(zk), true) => Discovery::ZooKeeper(zk.clone()),
        (_, false) => Discovery::Static(cluster.broker.clone()),
        (None, true) => Discovery::Static(vec![DEFAULT_BROKER.to_owned()]),
    }
}

/// The broker serving `topic`-`partition`: --broker, else from ZooKeeper (--broker-id, or the
/// lowest id that registered the topic with that partition, or the lowest live broker).
/// Returns the broker id too (−1 when it is unknown).
pub async fn single_broker(cluster: &Cluster, topic: &str, partition: i32) -> CmdResult<(i32, String)> {
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

/// Refuses a partition the topic does not have, where that can be known: from the counts in
/// ZooKeeper, else by asking the broker (OFFSETS answers "wrong partition" for one outside the
/// topic's count).
async fn check_partition(cluster: &Cluster, topic: &str, partition: i32) -> CmdResult {
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
            "broker {addr} has no partition {partition} of topic {topic} (see `kwire topics describe {topic}`)"
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

async fn produce(cluster: &Cluster, a: ProduceArgs) -> CmdResult {
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

/// Writes one message per line; a closed stdout (`| head`) ends the command quietly.
struct LineOut {
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
}

impl LineOut {
    fn new() -> LineOut {
        LineOut { out: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock()) }
    }

    /// `Ok(false)` when the reader has gone away.
    fn line(&mut self, payload: &[u8]) -> CmdResult<bool> {
        match self.out.write_all(payload).and_then(|()| self.out.write_all(b"\n")) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
            Err(e) => Err(format!("cannot write to stdout: {e}").into()),
        }
    }

    fn flush(&mut self) -> CmdResult<bool> {
        match self.out.flush() {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
            Err(e) => Err(format!("cannot write to stdout: {e}").into()),
        }
    }
}

async fn consume(cluster: &Cluster, a: ConsumeArgs) -> CmdResult {
    match &a.group {
        Some(group) => consume_group(cluster, group, &a).await,
        None => consume_partition(cluster, &a).await,
    }
}

/// A simple consumer of one partition with the fetch size and socket receive buffer asked for.
pub async fn partition_consumer(
    addr: &str,
    topic: &str,
    partition: i32,
    start: StartOffset,
    fetch_size: usize,
    receive_buffer: ReceiveBuffer,
) -> kafka_wire_client::Result<SimpleConsumer> {
    let mut consumer = SimpleConsumer::connect(addr, topic, partition, start).await?;
    consumer.connection().await?.set_receive_buffer(receive_buffer)?;
    for c in consumer.cursors_mut() {
        c.size = kafka_wire_client::fetch::FetchSize::new(fetch_size, c.size.max().max(fetch_size));
    }
    Ok(consumer)
}

/// An oversized message right at an offset the user gave is most likely no message at all:
/// the offset is not a message boundary.
fn explain_consume_error(e: ClientError, a: &ConsumeArgs, consumed: u64) -> Box<dyn std::error::Error> {
    match (&e, a.offset, consumed) {
        (ClientError::MessageTooLarge { offset, topic, partition, .. }, StartOffset::At(start), 0)
            if *offset == start =>
        {
            format!(
                "{e}. Offset {start} is probably not the start of a message: 0.7 offsets are byte positions, so \
                 start at earliest, latest or an offset that `kwire offsets --topic {topic} --partition {partition} \
                 --time earliest --max 100` lists"
            )
            .into()
        }
        _ => e.into(),
    }
}

async fn consume_partition(cluster: &Cluster, a: &ConsumeArgs) -> CmdResult {
    let partition = a.partition.unwrap_or(0);
    let (_, addr) = single_broker(cluster, &a.topic, partition).await?;
    let mut consumer = partition_consumer(&addr, &a.topic, partition, a.offset, a.fetch_size, a.receive_buffer).await?;
    let mut out = LineOut::new();
    let mut progress = Progress::new("consumed");
    let (mut count, mut bytes) = (0u64, 0u64);
    let max = a.max_messages.unwrap_or(u64::MAX);
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut interrupted = false;
    'outer: while count < max {
        let batch = tokio::select! {
            r = consumer.fetch() => r,
            _ = &mut ctrl_c => { interrupted = true; break }
        };
        let batch = match batch {
            Ok(b) => b,
            Err(e) if a.follow && e.is_connection_error() => {
                tracing::warn!("{e}; reconnecting");
                tokio::time::sleep(Duration::from_millis(500)).await;
                let _ = consumer.reconnect().await;
                continue;
            }
            Err(e) => return Err(explain_consume_error(e, a, count)),
        };
        if batch.is_empty() {
            if !out.flush()? {
                return Ok(());
            }
            if !a.follow {
                break;
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                _ = &mut ctrl_c => { interrupted = true; break }
            }
            continue;
        }
        for m in batch {
            if !out.line(&m.payload)? {
                return Ok(());
            }
            count += 1;
            bytes += m.payload.len() as u64;
            if count >= max {
                break 'outer;
            }
        }
        progress.tick(count, bytes);
    }
    out.flush()?;
    finish(&mut progress, interrupted, count, bytes);
    Ok(())
}

/// The closing summary: on a terminal always, elsewhere only when SIGINT ended the command.
fn finish(progress: &mut Progress, interrupted: bool, count: u64, bytes: u64) {
    if interrupted {
        progress.interrupted(count, bytes);
    } else {
        progress.finish(count, bytes);
    }
}

async fn consume_group(cluster: &Cluster, group: &str, a: &ConsumeArgs) -> CmdResult {
    let Some(zk) = &cluster.zookeeper else {
        return Err("--group needs --zookeeper (group members coordinate through ZooKeeper)".into());
    };
    let reset = match a.offset {
        StartOffset::Earliest => OffsetReset::Smallest,
        StartOffset::Latest => OffsetReset::Largest,
        StartOffset::At(_) => return Err("--group takes --offset earliest or latest (its autooffset.reset)".into()),
    };
    let mut config = GroupConfig::new(zk, group, &[&a.topic]);
    config.auto_offset_reset = reset;
    config.fetch_size = a.fetch_size;
    config.max_fetch_size = config.max_fetch_size.max(a.fetch_size);
    config.receive_buffer = a.receive_buffer;
    config.autocommit_interval = Duration::from_millis(a.commit_interval_ms);
    let mut consumer = GroupConsumer::join(config).await?;
    let result = group_loop(&mut consumer, a).await;
    let closed = consumer.close().await;
    result?;
    closed?;
    Ok(())
}

async fn group_loop(consumer: &mut GroupConsumer, a: &ConsumeArgs) -> CmdResult {
    let mut out = LineOut::new();
    let mut progress = Progress::new("consumed");
    let (mut count, mut bytes) = (0u64, 0u64);
    let max = a.max_messages.unwrap_or(u64::MAX);
    let wait = if a.follow { Duration::from_millis(500) } else { Duration::ZERO };
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut interrupted = false;
    while count < max {
        let next = tokio::select! {
            r = consumer.next_message(wait) => r?,
            _ = &mut ctrl_c => { interrupted = true; break }
        };
        match next {
            Some(m) => {
                if !out.line(&m.payload)? {
                    return Ok(());
                }
                count += 1;
                bytes += m.payload.len() as u64;
                progress.tick(count, bytes);
            }
            None => {
                if !out.flush()? {
                    return Ok(());
                }
                if !a.follow {
                    break;
                }
            }
        }
    }
    out.flush()?;
    finish(&mut progress, interrupted, count, bytes);
    Ok(())
}

async fn offsets(cluster: &Cluster, a: OffsetsArgs) -> CmdResult {
    let (_, addr) = single_broker(cluster, &a.topic, a.partition).await?;
    let mut conn = BrokerConnection::connect(&addr).await?;
    let offsets = conn.offsets(&a.topic, a.partition, a.time, a.max).await?;
    let mut out = std::io::stdout().lock();
    for o in offsets {
        writeln!(out, "{o}")?;
    }
    Ok(())
}

/// `kwire topics` against one broker (no ZooKeeper): its own topics, through ModifyTopic LIST.
async fn broker_topics(cluster: &Cluster) -> CmdResult {
    let addr = cluster.broker.first().map_or(DEFAULT_BROKER, String::as_str);
    let req = kafka_wire_client::admin::request("LIST", "", &[]);
    let resp = kafka_wire_client::admin::modify_topic(addr, &req, Duration::from_secs(30)).await?;
    if resp.error_code != 0 {
        let why = resp.error_message.as_ref().map_or("no message", |m| m.as_str());
        return Err(format!(
            "broker {addr} cannot list its topics: {why} (error code {}); with ZooKeeper, give --zookeeper",
            resp.error_code
        )
        .into());
    }
    let mut out = format!("topics on {addr} ({}):\n", resp.topics.len());
    for t in &resp.topics {
        let how = if t.configured { "configured" } else { "created by produce" };
        out.push_str(&format!("  {}  {} partitions  ({how})\n", t.name.as_str(), t.partitions));
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

pub async fn topics(cluster: &Cluster) -> CmdResult {
    let Some(connect) = &cluster.zookeeper else {
        return broker_topics(cluster).await;
    };
    let zk = ZkCluster::connect(connect).await?;
    // A malformed registration is reported and skipped; the rest is still listed.
    let (brokers, unreadable) = zk.brokers_lenient().await?;
    for e in &unreadable {
        eprintln!("kwire: warning: skipping {e}");
    }
    let mut out = String::new();
    out.push_str(&format!("brokers ({}):\n", brokers.len()));
    for b in brokers.values() {
        out.push_str(&format!("  {}  {}  (creator {})\n", b.id, b.addr(), b.creator));
    }
    let topics = zk.topics().await?;
    out.push_str(&format!("topics ({}):\n", topics.len()));
    for t in &topics {
        let counts = zk.topic_partition_counts(t).await?;
        let per: Vec<String> = counts.iter().map(|(b, n)| format!("broker {b}: {n}")).collect();
        let total: i32 = counts.values().sum();
        out.push_str(&format!("  {t}  {total} partitions  ({})\n", per.join(", ")));
    }
    let groups = zk.groups().await?;
    out.push_str(&format!("consumer groups ({}):\n", groups.len()));
    let mut conns: std::collections::BTreeMap<i32, Option<BrokerConnection>> = Default::default();
    for g in &groups {
        let members = zk.group_members(g).await?;
        out.push_str(&format!("  {g}  ({} members)\n", members.len()));
        for (id, sub) in &members {
            let s = match sub {
                Ok(s) => kafka_wire_client::zk::subscription_value(s),
                Err(e) => format!("unreadable: {e}"),
            };
            out.push_str(&format!("    member {id}  {s}\n"));
        }
        for t in zk.group_topics(g).await? {
            let committed = zk.group_offsets(g, &t).await?;
            let partitions = kafka_wire_client::assignment::sorted_partitions(&zk.topic_partition_counts(&t).await?);
            let mut all: Vec<_> = partitions.clone();
            for bp in committed.keys() {
                if !all.contains(bp) {
                    all.push(bp.clone());
                }
            }
            let mut total_lag = 0u64;
            for bp in &all {
                let owner = zk.data(&ZkCluster::owner_path(g, &t, bp)?).await?.unwrap_or_else(|| "-".into());
                let end = log_end(&mut conns, &brokers, &t, bp).await;
                let c = committed.get(bp).copied();
                let lag = match (end, c) {
                    (Some(e), Some(c)) => Some(e.saturating_sub(c)),
                    (Some(e), None) => Some(e),
                    _ => None,
                };
                total_lag += lag.unwrap_or(0);
                out.push_str(&format!(
                    "    {t} {}  committed {}  end {}  lag {}  owner {owner}\n",
                    bp.name(),
                    c.map_or("-".into(), |v| v.to_string()),
                    end.map_or("?".into(), |v| v.to_string()),
                    lag.map_or("?".into(), |v| v.to_string()),
                ));
            }
            out.push_str(&format!("    {t} total lag {total_lag} bytes\n"));
        }
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// A partition's log end (OFFSETS −1), or `None` when its broker cannot be asked.
async fn log_end(
    conns: &mut std::collections::BTreeMap<i32, Option<BrokerConnection>>,
    brokers: &std::collections::BTreeMap<i32, kafka_wire_client::zk::BrokerInfo>,
    topic: &str,
    bp: &kafka_wire_client::assignment::BrokerPartition,
) -> Option<u64> {
    let conn = match conns.entry(bp.broker_id) {
        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::btree_map::Entry::Vacant(e) => {
            let conn = match brokers.get(&bp.broker_id) {
                Some(b) => BrokerConnection::connect(&b.addr()).await.ok(),
                None => None,
            };
            e.insert(conn)
        }
    };
    let conn = conn.as_mut()?;
    conn.offset_at(topic, bp.partition, -1).await.ok()
}
