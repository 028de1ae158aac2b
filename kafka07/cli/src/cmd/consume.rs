//! `kwire07 consume`: print messages of one partition, or of a topic as a group member.

use std::io::Write;
use std::time::Duration;

use clap::Args;
use kwire07_client::consumer::StartOffset;
use kwire07_client::group::{GroupConfig, GroupConsumer, OffsetReset};
use kwire07_client::{ClientError, ReceiveBuffer};

use crate::endpoints::{partition_consumer, single_broker, CmdResult, Endpoints};
use crate::parse::{parse_partition, parse_receive_buffer, parse_start};
use crate::progress::Progress;

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
    /// `kwire07 offsets`). With --group it is the autooffset.reset used when the group has no
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

pub async fn run(cluster: &Endpoints, a: ConsumeArgs) -> CmdResult {
    match &a.group {
        Some(group) => consume_group(cluster, group, &a).await,
        None => consume_partition(cluster, &a).await,
    }
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
                 start at earliest, latest or an offset that `kwire07 offsets --topic {topic} --partition {partition} \
                 --time earliest --max 100` lists"
            )
            .into()
        }
        _ => e.into(),
    }
}

async fn consume_partition(cluster: &Endpoints, a: &ConsumeArgs) -> CmdResult {
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

async fn consume_group(cluster: &Endpoints, group: &str, a: &ConsumeArgs) -> CmdResult {
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
