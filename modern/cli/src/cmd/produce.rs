//! `kwire produce`: records from standard input or files, one a line, to a topic, with kcat's
//! flags: `-b` brokers, `-t` topic, `-p` partition, `-K` key delimiter, `-H` header, `-X` any
//! producer config by Kafka's name, `-z` codec. Kafka's partitioner picks the partition when
//! none is given. Errors name what was wrong: an unreachable broker, an unknown topic, an
//! oversized record (with its line number), a refused config.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Args;
use kwire::ErrorCode;
use kwire_client::producer::{Delivery, ProduceError, Producer, ProducerConfig, ProducerRecord};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};

use crate::cmd::CmdResult;

/// Deliveries awaited once this many are outstanding, so errors are reported as they happen
/// and memory stays bounded beyond `buffer.memory`.
const OUTSTANDING: usize = 100_000;

#[derive(Debug, Args)]
#[command(about = "Produce records to a topic, one per line of standard input or FILEs (kcat's -P)")]
pub struct ProduceArgs {
    /// Bootstrap brokers, HOST:PORT[,HOST:PORT...].
    #[arg(short = 'b', value_name = "BROKERS")]
    pub brokers: String,
    /// The topic.
    #[arg(short = 't', value_name = "TOPIC")]
    pub topic: String,
    /// The partition (default: Kafka's partitioner, by key or sticky).
    #[arg(short = 'p', value_name = "PARTITION")]
    pub partition: Option<i32>,
    /// Split each line at the first DELIM into key and value (a line without it: no key).
    #[arg(short = 'K', value_name = "DELIM")]
    pub key_delimiter: Option<String>,
    /// A header on every record, NAME=VALUE (repeatable).
    #[arg(short = 'H', value_name = "NAME=VALUE")]
    pub headers: Vec<String>,
    /// A producer config by Kafka's name, KEY=VALUE (repeatable): acks, linger.ms,
    /// enable.idempotence, batch.size, ...
    #[arg(short = 'X', value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Compression: none, gzip, snappy, lz4 or zstd.
    #[arg(short = 'z', value_name = "CODEC")]
    pub compression: Option<String>,
    /// Files to read lines from instead of standard input.
    pub files: Vec<PathBuf>,
}

fn pair<'a>(what: &str, text: &'a str) -> Result<(&'a str, &'a str), String> {
    text.split_once('=').ok_or_else(|| format!("{what} {text:?} is not KEY=VALUE"))
}

pub async fn run(a: ProduceArgs) -> CmdResult {
    let mut config = ProducerConfig::new(&a.brokers).client_id("kwire-produce");
    for setting in &a.config {
        let (key, value) = pair("-X", setting)?;
        config = config.set(key, value)?;
    }
    if let Some(codec) = &a.compression {
        config = config.set("compression.type", codec)?;
    }
    let headers: Vec<(Bytes, Bytes)> = a
        .headers
        .iter()
        .map(|h| {
            pair("-H", h).map(|(k, v)| (Bytes::copy_from_slice(k.as_bytes()), Bytes::copy_from_slice(v.as_bytes())))
        })
        .collect::<Result<_, _>>()?;
    let producer = Producer::connect(config).await.map_err(|e| match e {
        ProduceError::Connection(c) => format!("cannot reach the brokers {}: {c}", a.brokers),
        other => other.to_string(),
    })?;
    check_topic(&producer, &a.topic, a.partition).await?;

    let started = Instant::now();
    let mut sent = Sent { outstanding: std::collections::VecDeque::new(), acknowledged: 0 };
    let mut line_no = 0u64;
    let inputs: Vec<Option<PathBuf>> =
        if a.files.is_empty() { vec![None] } else { a.files.iter().cloned().map(Some).collect() };
    for input in inputs {
        let reader: Box<dyn AsyncBufRead + Unpin + Send> = match &input {
            None => Box::new(BufReader::new(tokio::io::stdin())),
            Some(path) => Box::new(BufReader::new(
                tokio::fs::File::open(path).await.map_err(|e| format!("{}: {e}", path.display()))?,
            )),
        };
        let mut lines = reader.split(b'\n');
        while let Some(mut line) = lines.next_segment().await? {
            line_no += 1;
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = Bytes::from(line);
            let (key, value) = match a.key_delimiter.as_deref().map(str::as_bytes) {
                Some(delim) if !delim.is_empty() => match find(&line, delim) {
                    Some(at) => (Some(line.slice(..at)), line.slice(at + delim.len()..)),
                    None => (None, line),
                },
                _ => (None, line),
            };
            let mut record = ProducerRecord::new(a.topic.as_str(), value);
            record.key = key;
            record.partition = a.partition;
            for (k, v) in &headers {
                record = record.header(k.clone(), v.clone());
            }
            let delivery = producer.send(record).await.map_err(|e| at_line(line_no, e))?;
            sent.push(line_no, delivery).await?;
        }
    }
    producer.flush().await?;
    sent.drain().await?;
    producer.close(Duration::from_secs(30)).await?;
    eprintln!(
        "kwire produce: {} records to {} in {:.2} s",
        sent.acknowledged,
        a.topic,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Fails fast for a topic the cluster does not have (rather than waiting `max.block.ms`),
/// and for a partition it does not have.
async fn check_topic(producer: &Producer, topic: &str, partition: Option<i32>) -> CmdResult {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let metadata = producer.partitions_for(topic).await?;
        match metadata.error {
            ErrorCode::NONE if !metadata.partitions.is_empty() => {
                let count = metadata.partitions.len() as i32;
                if let Some(p) = partition.filter(|p| *p < 0 || *p >= count) {
                    return Err(format!("topic {topic} has no partition {p} (it has {count})").into());
                }
                return Ok(());
            }
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION => {
                return Err(format!("unknown topic {topic} (and the cluster does not create topics on use)").into())
            }
            // LEADER_NOT_AVAILABLE while the cluster creates it.
            code if code.is_retriable() && Instant::now() < deadline => {
                producer.cluster().forget_topic(topic);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            code => return Err(format!("topic {topic}: {code}").into()),
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn at_line(line: u64, error: ProduceError) -> String {
    format!("record of line {line}: {error}")
}

/// Deliveries not yet awaited, with their line numbers.
struct Sent {
    outstanding: std::collections::VecDeque<(u64, Delivery)>,
    acknowledged: u64,
}

impl Sent {
    async fn push(&mut self, line: u64, delivery: Delivery) -> CmdResult {
        self.outstanding.push_back((line, delivery));
        while self.outstanding.len() > OUTSTANDING || self.outstanding.front().is_some_and(|(_, d)| d.is_done()) {
            self.settle_one().await?;
        }
        Ok(())
    }

    async fn settle_one(&mut self) -> CmdResult {
        if let Some((line, delivery)) = self.outstanding.pop_front() {
            delivery.await.map_err(|e| at_line(line, e))?;
            self.acknowledged += 1;
        }
        Ok(())
    }

    async fn drain(&mut self) -> CmdResult {
        while !self.outstanding.is_empty() {
            self.settle_one().await?;
        }
        Ok(())
    }
}
