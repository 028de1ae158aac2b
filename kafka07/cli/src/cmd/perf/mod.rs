//! `kwire07 perf`: throughput and latency against a running broker, with the physical ceilings
//! measured in the same run so the report can give ratios.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kwire07_client::consumer::{SimpleConsumer, StartOffset};
use kwire07_client::producer::{Producer, ProducerConfig, Record};
use kwire07_client::{BrokerConnection, Codec};

use clap::{Args, Subcommand};
use kwire07_client::{Magic, ReceiveBuffer};

use crate::endpoints::{discovery, partition_consumer, single_broker, CmdResult, Endpoints};
use crate::parse::{parse_magic, parse_receive_buffer, parse_start, CompressionArg};
use crate::progress::{interrupt_flag, Progress};
use ceiling::{best_of, file_write, tcp_blast, BlastSource, Measured, ScratchFile, CEILING_RUNS};

mod ceiling;

pub async fn run(cluster: &Endpoints, command: PerfCommand) -> CmdResult {
    match command {
        PerfCommand::Produce(a) => produce(cluster, a).await,
        PerfCommand::Consume(a) => consume(cluster, a).await,
        PerfCommand::Latency(a) => latency(cluster, a).await,
        PerfCommand::Ceiling(a) => ceilings(a),
    }
}

/// `count` distinct random alphanumeric payloads of `size` bytes (random so compression sees
/// realistic text, several so batches are not one repeated message).
fn payloads(size: usize, count: usize) -> Vec<Bytes> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ";
    (0..count)
        .map(|_| (0..size).map(|_| ALPHABET[fastrand::usize(..ALPHABET.len())]).collect::<Vec<u8>>().into())
        .collect()
}

fn default_ceiling_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| std::env::temp_dir())
}

fn print_ceiling(name: &str, m: &Measured, ours: f64) {
    outln!(
        "  ceiling {name:<13} {:>9.1} MB/s   ({:.2} s, best of {CEILING_RUNS})   ratio {:.0}%",
        m.mb_per_s(),
        m.elapsed.as_secs_f64(),
        100.0 * ours / m.mb_per_s()
    );
}

async fn produce(cluster: &Endpoints, a: PerfProduceArgs) -> CmdResult {
    let (_, addr) = single_broker(cluster, &a.topic, a.partition).await?;
    let mut probe = BrokerConnection::connect(&addr).await?;
    let start_offset = probe.offset_at(&a.topic, a.partition, -1).await?;
    let mut config = ProducerConfig::new(discovery(cluster));
    config.codec = Codec::from(a.compression);
    config.magic = a.magic;
    config.batch_size = a.batch_size.max(1);
    let mut producer = Producer::new(config).await?;
    let pool = payloads(a.size, 256);
    let mut progress = Progress::new("perf produce");
    let interrupt = interrupt_flag();
    let start = Instant::now();
    let mut sent = 0u64;
    while sent < a.messages {
        if sent.is_multiple_of(1000) {
            if interrupt.load(Ordering::Relaxed) {
                break;
            }
            progress.tick(sent, sent * a.size as u64);
        }
        let payload = pool[(sent % pool.len() as u64) as usize].clone();
        producer.send(Record::new(&a.topic, payload).with_partition(a.partition)).await?;
        sent += 1;
    }
    producer.sync().await?;
    if interrupt.load(Ordering::Relaxed) {
        progress.interrupted(sent, sent * a.size as u64);
        outln!("perf produce: interrupted after {sent} of {} messages; no ceilings measured", a.messages);
        return Ok(());
    }
    let appended = start.elapsed();
    let stats = producer.stats();
    // Visible to consumers: the broker's log end covers everything sent.
    let expected = start_offset + stats.set_bytes;
    let visible_deadline = Instant::now() + Duration::from_secs(60);
    let mut end = start_offset;
    while end < expected && Instant::now() < visible_deadline {
        end = probe.offset_at(&a.topic, a.partition, -1).await?;
        if end < expected {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    let visible = start.elapsed();
    progress.finish(a.messages, a.messages * a.size as u64);
    let payload_bytes = a.messages * a.size as u64;
    let wire_mbs = stats.set_bytes as f64 / 1e6 / appended.as_secs_f64().max(1e-9);
    outln!(
        "perf produce: {} messages of {} B, batch {}, {:?}, magic {:?}, {} requests",
        a.messages,
        a.size,
        a.batch_size,
        a.compression,
        a.magic,
        stats.requests
    );
    outln!(
        "  produce         {wire_mbs:>9.1} MB/s   ({:.2} s until appended; {:.1} MB/s of payload, {:.0} msg/s)",
        appended.as_secs_f64(),
        payload_bytes as f64 / 1e6 / appended.as_secs_f64().max(1e-9),
        a.messages as f64 / appended.as_secs_f64().max(1e-9)
    );
    if end >= expected {
        outln!(
            "  visible         {:>9.1} MB/s   ({:.2} s until OFFSETS -1 covered all {} bytes)",
            stats.set_bytes as f64 / 1e6 / visible.as_secs_f64().max(1e-9),
            visible.as_secs_f64(),
            stats.set_bytes
        );
    } else {
        outln!("  visible         not reached within 60 s (log end {end}, expected {expected})");
    }
    if !a.no_ceilings {
        let chunk = (stats.set_bytes / stats.requests.max(1)).max(1) as usize;
        let dir = a.ceiling_dir.unwrap_or_else(default_ceiling_dir);
        progress.phase("measuring the TCP loopback ceiling");
        let tcp = best_of(|| tcp_blast(stats.set_bytes, BlastSource::Pattern { chunk }, None, None))?;
        if interrupt.load(Ordering::Relaxed) {
            outln!("perf produce: interrupted before the file-write ceiling");
            return Ok(());
        }
        progress.phase("measuring the file-write ceiling");
        let file = best_of(|| file_write(&dir, stats.set_bytes, chunk))?;
        progress.clear();
        print_ceiling("tcp loopback", &tcp, wire_mbs);
        print_ceiling("file write", &file, wire_mbs);
        let lower = if tcp.mb_per_s() < file.mb_per_s() { tcp } else { file };
        outln!("  produce / lower ceiling = {:.0}%", 100.0 * wire_mbs / lower.mb_per_s());
    }
    Ok(())
}

/// One pass of `perf consume`: a fresh consumer reads up to `--messages` from `from`.
struct ConsumePass {
    count: u64,
    payload_bytes: u64,
    fetches: u64,
    /// Log bytes consumed and the time it took.
    wire: Measured,
}

async fn consume_pass(
    addr: &str,
    a: &PerfConsumeArgs,
    from: StartOffset,
    progress: &mut Progress,
) -> kwire07_client::Result<ConsumePass> {
    let mut consumer = partition_consumer(addr, &a.topic, a.partition, from, a.fetch_size, a.receive_buffer).await?;
    let first = consumer.offset();
    let max = a.messages.unwrap_or(u64::MAX);
    let (mut count, mut payload_bytes, mut fetches) = (0u64, 0u64, 0u64);
    let mut batch = Vec::new();
    let start = Instant::now();
    while count < max {
        batch.clear();
        let n = consumer.fetch_into(&mut batch).await?;
        fetches += 1;
        if n == 0 {
            break;
        }
        count += n as u64;
        payload_bytes += batch.iter().map(|m| m.payload.len() as u64).sum::<u64>();
        progress.tick(count, payload_bytes);
    }
    let elapsed = start.elapsed();
    progress.finish(count, payload_bytes);
    Ok(ConsumePass { count, payload_bytes, fetches, wire: Measured { bytes: consumer.offset() - first, elapsed } })
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn best(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

fn rates_list(values: &[f64]) -> String {
    values.iter().map(|v| format!("{v:.0}")).collect::<Vec<_>>().join(" ")
}

/// `perf consume`: `--runs` passes over the same messages, each followed by two TCP blasts of
/// as many bytes, so that all three see the same machine; the ratios are of medians (and of
/// bests), the same statistic on every side. One blast writes a buffer that stays in the CPU
/// cache; the other sends a file of the same size from the page cache with `sendfile`, the way
/// the broker sends its log, so its bytes come from memory as the log's do.
async fn consume(cluster: &Endpoints, a: PerfConsumeArgs) -> CmdResult {
    let (_, addr) = single_broker(cluster, &a.topic, a.partition).await?;
    // Every pass starts at the same offset, even when `--offset latest` moves meanwhile.
    let first = a.offset.resolve(&mut BrokerConnection::connect(&addr).await?, &a.topic, a.partition).await?;
    let from = StartOffset::At(first);
    let runs = a.runs.max(1);
    // The blasts' reader gets the consumer's receive buffer (as their sender gets the broker's
    // congestion control): the ceilings move the bytes the same way.
    let blast_receive_buffer = a.receive_buffer.bytes_for_fetch_size(a.fetch_size);
    let congestion = a.congestion.as_deref();
    let mut progress = Progress::new("perf consume");
    let (mut ours, mut memory, mut page_cache) = (Vec::new(), Vec::new(), Vec::new());
    let mut scratch: Option<ScratchFile> = None;
    let mut last = None;
    for _ in 0..runs {
        let pass = consume_pass(&addr, &a, from, &mut progress).await?;
        ours.push(pass.wire.mb_per_s());
        if !a.no_ceilings && pass.wire.bytes > 0 {
            let pattern = BlastSource::Pattern { chunk: a.fetch_size };
            memory.push(tcp_blast(pass.wire.bytes, pattern, congestion, blast_receive_buffer)?.mb_per_s());
            if scratch.is_none() {
                let dir = a.ceiling_dir.clone().unwrap_or_else(std::env::temp_dir);
                scratch = Some(ScratchFile::create(&dir, pass.wire.bytes)?);
            }
            if let Some(file) = &scratch {
                let source = BlastSource::File { path: file.path(), chunk: a.fetch_size };
                page_cache.push(tcp_blast(pass.wire.bytes, source, congestion, blast_receive_buffer)?.mb_per_s());
            }
        }
        last = Some(pass);
    }
    drop(scratch);
    let Some(pass) = last else { return Ok(()) };
    let secs = pass.wire.elapsed.as_secs_f64().max(1e-9);
    let ours_median = median(&ours);
    outln!(
        "perf consume: {} messages, {} log bytes from offset {first}, fetch size {}, {runs} run(s)",
        pass.count,
        pass.wire.bytes,
        a.fetch_size
    );
    outln!(
        "  consume         {ours_median:>9.1} MB/s   (median of {runs}: {}; last run {secs:.2} s, {} fetches, {:.1} MB/s of payload, {:.0} msg/s)",
        rates_list(&ours),
        pass.fetches,
        pass.payload_bytes as f64 / 1e6 / secs,
        pass.count as f64 / secs
    );
    for (name, ceiling) in [("tcp loopback", &memory), ("tcp sendfile", &page_cache)] {
        if ceiling.is_empty() {
            continue;
        }
        let ceiling_median = median(ceiling);
        outln!(
            "  ceiling {name} {ceiling_median:>9.1} MB/s   (median of {}: {})   ratio {:.0}%, best of each: {:.0}%",
            ceiling.len(),
            rates_list(ceiling),
            100.0 * ours_median / ceiling_median,
            100.0 * best(&ours) / best(ceiling)
        );
    }
    if !memory.is_empty() {
        outln!("  (tcp loopback: one cache-resident buffer written again and again; tcp sendfile: a file of the same size sent from the page cache, as the broker sends its log)");
        if let Some(algorithm) = &a.congestion {
            outln!("  (ceilings sent with congestion control {algorithm})");
        }
    }
    Ok(())
}

async fn latency(cluster: &Endpoints, a: PerfLatencyArgs) -> CmdResult {
    let (_, addr) = single_broker(cluster, &a.topic, a.partition).await?;
    let mut config = ProducerConfig::new(discovery(cluster));
    config.batch_size = 1;
    let mut producer = Producer::new(config).await?;
    // Make sure the partition exists before the consumer asks for its end.
    producer.send(Record::new(&a.topic, Bytes::from_static(b"warm-up")).with_partition(a.partition)).await?;
    producer.sync().await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut consumer = SimpleConsumer::connect(&addr, &a.topic, a.partition, StartOffset::Latest).await?;
    let base = Instant::now();
    let size = a.size.max(8);
    let interval = Duration::from_secs_f64(1.0 / a.rate.max(1) as f64);
    let total = a.messages;
    let produce_loop = async {
        for i in 0..total {
            let due = base + interval * i as u32;
            tokio::time::sleep_until(due.into()).await;
            let mut payload = vec![b'x'; size];
            payload[..8].copy_from_slice(&(base.elapsed().as_nanos() as u64).to_be_bytes());
            producer.send(Record::new(&a.topic, payload).with_partition(a.partition)).await?;
        }
        producer.sync().await?;
        Ok::<(), kwire07_client::ClientError>(())
    };
    let consume_loop = async {
        let mut latencies = Vec::with_capacity(total as usize);
        let deadline = base + interval * total as u32 + Duration::from_secs(30);
        while (latencies.len() as u64) < total && Instant::now() < deadline {
            let batch = consumer.fetch().await?;
            let now = base.elapsed().as_nanos() as u64;
            for m in &batch {
                if m.payload.len() == size {
                    let sent = u64::from_be_bytes(m.payload[..8].try_into().unwrap_or([0; 8]));
                    latencies.push(now.saturating_sub(sent));
                }
            }
            if batch.is_empty() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        Ok::<Vec<u64>, kwire07_client::ClientError>(latencies)
    };
    let (p, c) = tokio::join!(produce_loop, consume_loop);
    p?;
    let mut lat = c?;
    if lat.is_empty() {
        return Err("no message came back to the consumer".into());
    }
    lat.sort_unstable();
    let pct = |q: f64| lat[((lat.len() as f64 - 1.0) * q).round() as usize] as f64 / 1e6;
    outln!(
        "perf latency: {} of {} messages of {size} B at {}/s; produce-to-consume p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        lat.len(),
        total,
        a.rate,
        pct(0.50),
        pct(0.99),
        pct(1.0)
    );
    Ok(())
}

fn ceilings(a: CeilingArgs) -> CmdResult {
    let dir = a.dir.unwrap_or_else(default_ceiling_dir);
    let mut progress = Progress::new("perf ceiling");
    progress.phase("measuring the TCP loopback ceiling");
    let tcp = best_of(|| tcp_blast(a.bytes, BlastSource::Pattern { chunk: a.chunk }, a.congestion.as_deref(), None))?;
    progress.phase("measuring the file-write ceiling");
    let file = best_of(|| file_write(&dir, a.bytes, a.chunk))?;
    progress.clear();
    outln!(
        "ceiling tcp loopback {:>9.1} MB/s ({} bytes in {:.2} s)",
        tcp.mb_per_s(),
        tcp.bytes,
        tcp.elapsed.as_secs_f64()
    );
    outln!(
        "ceiling file write   {:>9.1} MB/s ({} bytes in {:.2} s, {})",
        file.mb_per_s(),
        file.bytes,
        file.elapsed.as_secs_f64(),
        dir.display()
    );
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum PerfCommand {
    /// Produce throughput, side by side with a TCP loopback blast and a sequential file write.
    Produce(PerfProduceArgs),
    /// Consume throughput, side by side with a TCP loopback blast.
    Consume(PerfConsumeArgs),
    /// Produce-to-consume latency (p50/p99).
    Latency(PerfLatencyArgs),
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
