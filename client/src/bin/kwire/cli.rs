//! Command-line syntax.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use kafka_wire_client::consumer::StartOffset;
use kafka_wire_client::{Codec, Magic, ReceiveBuffer};

#[derive(Debug, Parser)]
#[command(name = "kwire", version, about = "Kafka 0.7 client: produce, consume, offsets, topics, perf")]
pub struct Cli {
    #[command(flatten)]
    pub cluster: Cluster,
    #[command(subcommand)]
    pub command: Command,
}

/// Where the cluster is. Without either, the broker at 127.0.0.1:9092 is used.
#[derive(Debug, Args, Clone)]
pub struct Cluster {
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Send messages, one per line of stdin (or of --file).
    Produce(ProduceArgs),
    /// Print messages, one per line.
    Consume(ConsumeArgs),
    /// Ask a broker for a partition's offsets (OFFSETS request).
    Offsets(OffsetsArgs),
    /// Manage topics (ModifyTopic); without a subcommand, `list`.
    Topics(TopicsArgs),
    /// Inspect Kafka's nodes in ZooKeeper (needs --zookeeper).
    #[command(subcommand)]
    Zk(ZkCommand),
    /// Throughput and latency tests.
    #[command(subcommand)]
    Perf(PerfCommand),
    /// A live decoding proxy for modern Kafka traffic: forwards bytes both ways and prints
    /// every request and response, decoded.
    Tap(crate::tap::TapArgs),
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TopicsArgs {
    #[command(subcommand)]
    pub command: Option<TopicsCommand>,
}

#[derive(Debug, Subcommand)]
pub enum TopicsCommand {
    /// List topics: with --zookeeper what ZooKeeper knows (brokers, topics, partitions,
    /// consumer groups and their lag), else the broker's own topics (ModifyTopic LIST).
    List,
    /// Create a topic with its partitions and setting overrides.
    Create(TopicCreateArgs),
    /// Change a topic's setting overrides.
    Alter(TopicAlterArgs),
    /// Delete a topic, its logs and its settings.
    Delete(TopicNameArg),
    /// Show each setting of a topic and whether it is overridden or inherited.
    Describe(TopicNameArg),
}

#[derive(Debug, Args)]
pub struct TopicNameArg {
    pub topic: String,
}

#[derive(Debug, Args)]
pub struct TopicCreateArgs {
    pub topic: String,
    /// Number of partitions, 1 or more (default: the broker's num.partitions).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_partition_count)]
    pub partitions: Option<i32>,
    /// A setting override NAME=VALUE (repeatable).
    #[arg(long = "config", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub configs: Vec<(String, String)>,
}

#[derive(Debug, Args)]
pub struct TopicAlterArgs {
    pub topic: String,
    /// Set an override NAME=VALUE (repeatable).
    #[arg(long = "config", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub configs: Vec<(String, String)>,
    /// Remove an override, so the broker default applies again (repeatable).
    #[arg(long = "delete-config", value_name = "NAME")]
    pub delete_configs: Vec<String>,
}

/// `NAME=VALUE`; the broker judges the name and the value.
pub fn parse_setting(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected NAME=VALUE, not {s:?}")),
    }
}

#[derive(Debug, Subcommand)]
pub enum ZkCommand {
    /// Print every Kafka node, one per line: `PATH<TAB>KIND<TAB>DATA`, DATA being the node's
    /// value as Kafka writes it (JSON, or 0.7's plain text; `-` when empty), or
    /// `PATH<TAB>INVALID<TAB>REASON` for a node that does not match its schema.
    Dump,
    /// Print every node that does not match its schema; exit status 1 if there is any.
    Check,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompressionArg {
    None,
    Gzip,
    Snappy,
}

impl From<CompressionArg> for Codec {
    fn from(c: CompressionArg) -> Codec {
        match c {
            CompressionArg::None => Codec::None,
            CompressionArg::Gzip => Codec::Gzip,
            CompressionArg::Snappy => Codec::Snappy,
        }
    }
}

pub fn parse_magic(s: &str) -> Result<Magic, String> {
    match s {
        "0" => Ok(Magic::V0),
        "1" => Ok(Magic::V1),
        _ => Err(format!("magic must be 0 or 1, not {s:?}")),
    }
}

/// `--receive-buffer`: `auto`, `system` or a size in bytes.
pub fn parse_receive_buffer(s: &str) -> Result<ReceiveBuffer, String> {
    match s {
        "auto" => Ok(ReceiveBuffer::Auto),
        "system" => Ok(ReceiveBuffer::System),
        n => match n.parse::<usize>() {
            Ok(bytes) if bytes > 0 => Ok(ReceiveBuffer::Bytes(bytes)),
            _ => Err(format!("expected auto, system or a size in bytes, not {n:?}")),
        },
    }
}

/// `--offset`: earliest, latest, a byte offset, or 0.7's −1 (latest) and −2 (earliest).
pub fn parse_start(s: &str) -> Result<StartOffset, String> {
    match s {
        "earliest" | "smallest" | "-2" => Ok(StartOffset::Earliest),
        "latest" | "largest" | "-1" => Ok(StartOffset::Latest),
        n => match n.parse::<i64>() {
            Ok(v) if v >= 0 => Ok(StartOffset::At(v as u64)),
            Ok(v) => Err(format!(
                "offset {v} is out of range: give a byte offset of 0 or more, -1 (latest) or -2 (earliest)"
            )),
            Err(_) => Err(format!("expected earliest, latest or a byte offset, not {n:?}")),
        },
    }
}

/// An `i32` of at least `min`; `out_of_range` words the error for a value below it.
fn parse_at_least(s: &str, min: i32, noun: &str, out_of_range: impl Fn(i64) -> String) -> Result<i32, String> {
    match s.parse::<i64>() {
        Ok(v) if (i64::from(min)..=i64::from(i32::MAX)).contains(&v) => Ok(v as i32),
        Ok(v) => Err(out_of_range(v)),
        Err(_) => Err(format!("expected {noun}, not {s:?}")),
    }
}

/// A partition number: 0 or more.
pub fn parse_partition(s: &str) -> Result<i32, String> {
    parse_at_least(s, 0, "a partition number", |v| format!("partition {v} is out of range 0..={}", i32::MAX))
}

/// `produce --partition`: a partition number, or 0.7's −1 (the broker picks one at random).
pub fn parse_produce_partition(s: &str) -> Result<i32, String> {
    match s {
        "-1" => Ok(-1),
        _ => parse_partition(s).map_err(|e| format!("{e} (or -1: the broker picks one)")),
    }
}

/// `topics create --partitions`: 1 or more.
pub fn parse_partition_count(s: &str) -> Result<i32, String> {
    parse_at_least(s, 1, "a number of partitions", |v| format!("a topic needs 1 to {} partitions, not {v}", i32::MAX))
}

pub fn parse_time(s: &str) -> Result<i64, String> {
    match s {
        "earliest" => Ok(-2),
        "latest" => Ok(-1),
        n => match n.parse::<i64>() {
            Ok(t) if t >= 0 || t == -1 || t == -2 => Ok(t),
            _ => Err(format!("expected earliest, latest or milliseconds since the epoch, not {n:?}")),
        },
    }
}

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

#[derive(Debug, Args)]
pub struct ConsumeArgs {
    #[arg(long)]
    pub topic: String,
    /// Partition to read (simple consumer; default 0 without --group).
    #[arg(long, conflicts_with = "group", allow_hyphen_values = true, value_parser = parse_partition)]
    pub partition: Option<i32>,
    /// Consumer group (needs --zookeeper): partitions are shared with the group's members.
    #[arg(long)]
    pub group: Option<String>,
    /// Where to start: earliest (or -2), latest (or -1) or a byte offset of a message (see
    /// `kwire offsets`). With --group it is the autooffset.reset used when the group has no
    /// committed offset.
    #[arg(long, allow_hyphen_values = true, value_parser = parse_start, default_value = "earliest")]
    pub offset: StartOffset,
    /// Stop after this many messages.
    #[arg(long)]
    pub max_messages: Option<u64>,
    /// Keep waiting for new messages instead of stopping at the end of the log.
    #[arg(long)]
    pub follow: bool,
    /// Initial fetch size in bytes (grows for larger messages).
    #[arg(long, default_value_t = 1_048_576)]
    pub fetch_size: usize,
    /// Group: commit offsets this often (milliseconds).
    #[arg(long, default_value_t = 10_000)]
    pub commit_interval_ms: u64,
    /// Socket receive buffer: auto (room for two fetch answers, at least 4 MiB), system (the
    /// kernel's automatic sizing) or a size in bytes.
    #[arg(long, value_parser = parse_receive_buffer, default_value = "auto")]
    pub receive_buffer: ReceiveBuffer,
}

#[derive(Debug, Args)]
pub struct OffsetsArgs {
    #[arg(long)]
    pub topic: String,
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = parse_partition)]
    pub partition: i32,
    /// earliest (or -2), latest (or -1), or milliseconds since the epoch.
    #[arg(long, allow_hyphen_values = true, value_parser = parse_time, default_value = "latest")]
    pub time: i64,
    /// Most offsets to return.
    #[arg(long, default_value_t = 1)]
    pub max: i32,
}

#[derive(Debug, Subcommand)]
pub enum PerfCommand {
    /// Produce throughput, side by side with a TCP loopback blast and a sequential file write.
    Produce(PerfProduceArgs),
    /// Consume throughput, side by side with a TCP loopback blast.
    Consume(PerfConsumeArgs),
    /// Produce-to-consume latency (p50/p99).
    Latency(PerfLatencyArgs),
    /// Round trips of modern Kafka requests (ApiVersions or Metadata), one at a time: p50/p99.
    Requests(crate::request_latency::PerfRequestsArgs),
    /// Only the ceilings: TCP loopback blast and sequential file write.
    Ceiling(CeilingArgs),
}

#[derive(Debug, Args, Clone)]
pub struct CeilingArgs {
    /// Bytes to move.
    #[arg(long, default_value_t = 200 * 1024 * 1024)]
    pub bytes: u64,
    /// Write size.
    #[arg(long, default_value_t = 206_400)]
    pub chunk: usize,
    /// Directory for the file-write ceiling (use the broker's log filesystem).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// TCP congestion control of the blast's sending socket (default: the system's).
    #[arg(long, value_name = "ALGORITHM")]
    pub congestion: Option<String>,
}

#[derive(Debug, Args)]
pub struct PerfProduceArgs {
    #[arg(long, default_value = "perf")]
    pub topic: String,
    #[arg(long, default_value_t = 0)]
    pub partition: i32,
    #[arg(long, default_value_t = 200_000)]
    pub messages: u64,
    /// Message payload size in bytes.
    #[arg(long, default_value_t = 1024)]
    pub size: usize,
    #[arg(long, default_value_t = 200)]
    pub batch_size: usize,
    #[arg(long, value_enum, default_value = "none")]
    pub compression: CompressionArg,
    #[arg(long, value_parser = parse_magic, default_value = "1")]
    pub magic: Magic,
    /// Skip the ceiling measurements.
    #[arg(long)]
    pub no_ceilings: bool,
    /// Directory for the file-write ceiling (use the broker's log filesystem).
    #[arg(long)]
    pub ceiling_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PerfConsumeArgs {
    #[arg(long, default_value = "perf")]
    pub topic: String,
    #[arg(long, default_value_t = 0)]
    pub partition: i32,
    /// Stop after this many messages (default: at the end of the log).
    #[arg(long)]
    pub messages: Option<u64>,
    #[arg(long, value_parser = parse_start, default_value = "earliest")]
    pub offset: StartOffset,
    #[arg(long, default_value_t = 1_048_576)]
    pub fetch_size: usize,
    /// Passes over the same messages, each followed by the loopback ceiling; medians are
    /// reported (single passes vary, a lot on a shared machine).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Socket receive buffer: auto (room for two fetch answers, at least 4 MiB), system (the
    /// kernel's automatic sizing) or a size in bytes.
    #[arg(long, value_parser = parse_receive_buffer, default_value = "auto")]
    pub receive_buffer: ReceiveBuffer,
    #[arg(long)]
    pub no_ceilings: bool,
    /// TCP congestion control of the ceilings' sending socket: give the broker's
    /// `kwire.socket.congestion.control` so that both move bytes alike (default: the system's).
    #[arg(long, value_name = "ALGORITHM")]
    pub congestion: Option<String>,
    /// Directory for the scratch file the sendfile ceiling sends (as large as one pass; removed
    /// afterwards). Default: the system's temporary directory.
    #[arg(long)]
    pub ceiling_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PerfLatencyArgs {
    #[arg(long, default_value = "perf-latency")]
    pub topic: String,
    #[arg(long, default_value_t = 0)]
    pub partition: i32,
    #[arg(long, default_value_t = 2000)]
    pub messages: u64,
    #[arg(long, default_value_t = 1024)]
    pub size: usize,
    /// Messages per second.
    #[arg(long, default_value_t = 500)]
    pub rate: u64,
}
