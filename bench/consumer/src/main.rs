//! The consumer benchmark: one Apache Kafka 4.4 broker (started from `target/kafka/broker-4.4.0`
//! by test-support), two topics of 6 partitions holding the same `CONSUMER_BENCH_MB` MiB
//! (default 1024) of 1 KiB records, one uncompressed and one lz4; then each consumer reads a
//! whole topic in a one-member group of its own, as a process of its own:
//!
//! - kwire-client's `Consumer` (`src/bin/kwire_consume.rs`),
//! - franz-go's kgo (`kgo/`),
//! - rust-rdkafka's `BaseConsumer`, librdkafka 2.12.1 (`src/bin/rdkafka_consume.rs`),
//! - Kafka's `ConsumerPerformance` (kafka-tools 4.4.0).
//!
//! Each with its own defaults, only `auto.offset.reset=earliest` set. Reported per client and
//! codec, medians of `RUNS` (default 3) rounds, the clients' order rotating each round:
//! throughput in MB/s (10^6 bytes of record values, from the first record to the last, as each
//! client measures it: ConsumerPerformance's fetch time), CPU seconds per GB (user + system of
//! the whole process, start-up and group join included), and peak memory (its maximum RSS).
//!
//! `bench/consumer/run` (after `scripts/kafka-release`); not part of CI.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::CreateTopicsRequest;
use kwire::Records;
use kwire_connection::{ClientConfig, Cluster};
use kwire_records::{BatchBuilder, BatchOptions, Compression};
use kwire_test_support::kafka::{kafka_jars, Kafka};

const RECORD: usize = 1024;
const PARTITIONS: i32 = 6;
/// Records per produced batch: 1,000 1 KiB records stay under the broker's `max.message.bytes`.
const PER_BATCH: usize = 1000;

/// What one run of one client measured.
#[derive(Debug, Clone, Copy)]
struct Sample {
    mb_per_s: f64,
    cpu_s_per_gb: f64,
    peak_mib: f64,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository")
}

/// Produces `records` records into every partition of `topic`, values of random letters,
/// timestamped now. lz4 finds nothing to compress in them: its frames hold the blocks stored (the
/// lz4 topic is as large as the other), so reading it costs the frames and a copy, not LZ4 decoding.
async fn fill(bootstrap: &str, topic: &str, compression: Compression, records: usize) {
    let per_partition = records / PARTITIONS as usize;
    let mut tasks = tokio::task::JoinSet::new();
    for partition in 0..PARTITIONS {
        // A connection per partition, so the partitions' produces go in parallel.
        let bootstrap = bootstrap.to_string();
        let topic = topic.to_string();
        tasks.spawn(async move {
            let cluster = Cluster::connect(&[&bootstrap], ClientConfig::default()).await.unwrap();
            let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
            let mut left = per_partition;
            while left > 0 {
                let n = left.min(PER_BATCH);
                let mut batch = BatchBuilder::new(BatchOptions::new(2, compression)).unwrap();
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
                for _ in 0..n {
                    let value: Vec<u8> = (0..RECORD).map(|_| alphabet[fastrand::usize(..alphabet.len())]).collect();
                    batch.append(now, None, Some(&value), &[]).unwrap();
                }
                let batch = Records::from_bytes(batch.build().unwrap());
                cluster.produce(&topic, partition, batch, -1, Duration::from_secs(30)).await.unwrap();
                left -= n;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
}

async fn create(cluster: &Cluster, topic: &str) {
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic { name: topic.into(), num_partitions: PARTITIONS, replication_factor: 1, ..Default::default() }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let created = cluster.any().await.unwrap().send(request).await.unwrap();
    assert_eq!(created.topics[0].error_code, kwire::ErrorCode::NONE);
    for _ in 0..200 {
        cluster.refresh_topics(&[topic], false).await.unwrap();
        if (0..PARTITIONS).all(|p| cluster.metadata().leader(topic, p).is_some()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{topic} has no leaders");
}

/// The peak RSS of process `pid` so far (VmHWM, reset by exec, unlike `ru_maxrss`, which
/// also counts the forked copy of this process), in MiB.
fn peak_rss(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
}

/// Runs `command` to its end; its stdout, its CPU time from `wait4`, and its peak RSS as last
/// seen (sampled every 20 ms while it runs).
fn measure(mut command: Command) -> (String, Duration, f64) {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("the client starts");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let pid = child.id() as libc::pid_t;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut peak = 0f64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(now) = peak_rss(pid as u32) {
                    peak = peak.max(now);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        })
    };
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not waited for yet; `status` and `usage` outlive the call.
    // Waits until it exited without reaping it, so that its last VmHWM can be read.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child; `info` outlives the call.
    unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
    let last = peak_rss(pid as u32);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let sampled = sampler.join().unwrap();
    // SAFETY: as above; this reaps it.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{command:?} failed: status {status}");
    let out = reader.join().unwrap();
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (out, time(usage.ru_utime) + time(usage.ru_stime), last.unwrap_or(0.0).max(sampled))
}

/// A client: how to run it on a topic, and how to read its report into (bytes, seconds).
struct Client {
    name: &'static str,
    command: Box<dyn Fn(&str, &str, &str, usize) -> Command>,
    report: fn(&str) -> (f64, f64),
}

fn json_report(out: &str) -> (f64, f64) {
    let line = out.lines().rev().find(|l| l.starts_with('{')).expect("a JSON report");
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    (v["bytes"].as_f64().unwrap(), v["seconds"].as_f64().unwrap())
}

/// ConsumerPerformance's line: its MB are MiB, its fetch time excludes the group join.
fn java_report(out: &str) -> (f64, f64) {
    let mut lines = out.lines().filter(|l| l.contains(','));
    let header: Vec<&str> = lines.next().expect("a header").split(',').map(str::trim).collect();
    let values: Vec<&str> = lines.last().expect("a line").split(',').map(str::trim).collect();
    let field = |name: &str| -> f64 {
        let i = header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} in {header:?}"));
        values[i].parse().unwrap()
    };
    (field("data.consumed.in.MB") * 1024.0 * 1024.0, field("fetch.time.ms") / 1000.0)
}

fn clients(bins: PathBuf, kgo: PathBuf) -> Vec<Client> {
    let log4j = std::env::temp_dir().join("kwire-consumer-bench-log4j2.properties");
    std::fs::write(&log4j, "rootLogger.level=WARN\nrootLogger.appenderRef.err.ref=err\nappender.err.type=Console\nappender.err.name=err\nappender.err.target=SYSTEM_ERR\nappender.err.layout.type=PatternLayout\nappender.err.layout.pattern=%p %m%n\n").unwrap();
    let ours = bins.join("kwire_consume");
    let rdkafka = bins.join("rdkafka_consume");
    vec![
        Client {
            name: "kwire-client",
            command: Box::new(move |b, t, g, n| {
                let mut c = Command::new(&ours);
                c.args([b, t, g, &n.to_string()]);
                c
            }),
            report: json_report,
        },
        Client {
            name: "franz-go kgo",
            command: Box::new(move |b, t, g, n| {
                let mut c = Command::new(&kgo);
                c.args([b, t, g, &n.to_string()]);
                c
            }),
            report: json_report,
        },
        Client {
            name: "rust-rdkafka (librdkafka)",
            command: Box::new(move |b, t, g, n| {
                let mut c = Command::new(&rdkafka);
                c.args([b, t, g, &n.to_string()]);
                c
            }),
            report: json_report,
        },
        Client {
            name: "Java ConsumerPerformance",
            command: Box::new(move |b, t, g, n| {
                let mut c = Command::new("java");
                c.args(["-Xmx512M", "-XX:+UseG1GC"])
                    .arg(format!("-Dlog4j2.configurationFile={}", log4j.display()))
                    .args(["-cp", &format!("{}/*", kafka_jars().display()), "org.apache.kafka.tools.ConsumerPerformance"])
                    .args(["--bootstrap-server", b, "--topic", t, "--group", g, "--messages", &n.to_string()]);
                c
            }),
            report: java_report,
        },
    ]
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main]
async fn main() {
    let mb: usize = std::env::var("CONSUMER_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(1024);
    let runs: usize = std::env::var("RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let only: Option<String> = std::env::var("CLIENTS").ok();
    let records = mb * 1024 * 1024 / RECORD / PARTITIONS as usize * PARTITIONS as usize;
    let root = root();
    let bins = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let kgo = root.join("target/bench-consumer/kgo-consume");
    let built = Command::new("go")
        .args(["build", "-o", kgo.to_str().unwrap(), "."])
        .current_dir(root.join("bench/consumer/kgo"))
        .env("PATH", format!("/usr/local/go/bin:{}", std::env::var("PATH").unwrap_or_default()))
        .status()
        .expect("go builds the kgo client");
    assert!(built.success());

    let kafka = Kafka::start(kafka_jars(), 1).expect("Kafka starts");
    let bootstrap = kafka.bootstrap();
    let cluster = Cluster::connect(&[&bootstrap], ClientConfig::default()).await.unwrap();
    let codecs = [("none", Compression::None), ("lz4", Compression::Lz4)];
    for (name, compression) in codecs {
        let topic = format!("bench-{name}");
        create(&cluster, &topic).await;
        let started = std::time::Instant::now();
        fill(&bootstrap, &topic, compression, records).await;
        eprintln!("{topic}: {records} records of {RECORD} bytes written in {:?}", started.elapsed());
    }

    if std::env::var_os("BENCH_SERVE").is_some() {
        // For profiling by hand: the broker and its topics, until killed.
        println!("bootstrap.servers={bootstrap} records={records}");
        loop {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }
    let clients: Vec<Client> = clients(bins, kgo)
        .into_iter()
        .filter(|c| only.as_deref().is_none_or(|only| only.split(',').any(|o| c.name.to_lowercase().contains(o))))
        .collect();
    let mut samples: Vec<Vec<Vec<Sample>>> = clients.iter().map(|_| codecs.iter().map(|_| Vec::new()).collect()).collect();
    for run in 0..runs {
        for k in 0..clients.len() {
            // The order rotates every round, so no client always runs first (or last).
            let i = (k + run) % clients.len();
            let client = &clients[i];
            for (j, (codec, _)) in codecs.iter().enumerate() {
                let topic = format!("bench-{codec}");
                let group = format!("bench-{i}-{codec}-{run}");
                let (out, cpu, peak_mib) = measure((client.command)(&bootstrap, &topic, &group, records));
                let (bytes, seconds) = (client.report)(&out);
                let sample = Sample {
                    mb_per_s: bytes / 1e6 / seconds,
                    cpu_s_per_gb: cpu.as_secs_f64() / (bytes / 1e9),
                    peak_mib,
                };
                eprintln!("run {run}: {} {codec}: {sample:?}", client.name);
                samples[i][j].push(sample);
            }
        }
    }
    println!("| client | codec | MB/s | CPU s/GB | peak memory (MiB) |");
    println!("|---|---|---:|---:|---:|");
    for (i, client) in clients.iter().enumerate() {
        for (j, (codec, _)) in codecs.iter().enumerate() {
            let s = &samples[i][j];
            println!(
                "| {} | {codec} | {:.0} | {:.2} | {:.0} |",
                client.name,
                median(s.iter().map(|s| s.mb_per_s).collect()),
                median(s.iter().map(|s| s.cpu_s_per_gb).collect()),
                median(s.iter().map(|s| s.peak_mib).collect()),
            );
        }
    }
    drop(kafka);
}
