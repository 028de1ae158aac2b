//! Producing to and fetching from a real Apache Kafka 4.4 broker, side by side in one run:
//! `kwire-connection` with batches built by `kwire-records` (building counted) against
//! Kafka's own `ProducerPerformance`, and fetching with every record decoded and its batch's CRC
//! checked against `ConsumerPerformance`. 1 KiB records, 1 MiB batches, one partition, acks=all.
//! Reports MB/s and client CPU seconds per GB, medians of `RUNS` runs.
//!
//! `cargo bench -p kwire-bench --bench kafka_throughput` (after `scripts/kafka-release`).
//! `KAFKA_BENCH_MB` sets the data per run (default 256).

use std::process::Command;
use std::time::{Duration, Instant};

use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::metadata_request::MetadataRequestTopic;
use kwire::messages::{CreateTopicsRequest, MetadataRequest};
use kwire::{ErrorCode, Records, Uuid};
use kwire_connection::{requests, Client, ClientConfig};
use kwire_records::{BatchBuilder, BatchOptions, Compression, RecordsExt};
use kwire_test_support::kafka::{kafka_jars, Kafka};
use nix::sys::resource::{getrusage, UsageWho};

const RUNS: usize = 3;
const RECORD: usize = 1024;
/// Records per batch: a batch of 1,000 1 KiB records with their framing stays under the
/// broker's default `max.message.bytes` (1 MiB + 12), as the Java client's 1 MiB `batch.size` does.
const PER_BATCH: usize = 1000;

fn cpu(who: UsageWho) -> Duration {
    let usage = getrusage(who).expect("getrusage");
    let t = |tv: nix::sys::time::TimeVal| Duration::new(tv.tv_sec() as u64, tv.tv_usec() as u32 * 1000);
    t(usage.user_time()) + t(usage.system_time())
}

/// One measurement: MB/s (10^6 bytes of record values) and CPU seconds per GB.
#[derive(Debug, Clone, Copy)]
struct Sample {
    mb_per_s: f64,
    cpu_s_per_gb: f64,
}

fn sample(bytes: usize, wall: Duration, cpu: Duration) -> Sample {
    Sample { mb_per_s: bytes as f64 / 1e6 / wall.as_secs_f64(), cpu_s_per_gb: cpu.as_secs_f64() / (bytes as f64 / 1e9) }
}

async fn create(client: &Client, topic: &str) -> Uuid {
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: topic.into(),
            num_partitions: 1,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let response = client.send(request).await.unwrap();
    assert_eq!(response.topics[0].error_code, ErrorCode::NONE);
    // CreateTopics answers before the broker leads the partition.
    let metadata = MetadataRequest {
        topics: Some(vec![MetadataRequestTopic { name: Some(topic.into()), ..Default::default() }]),
        ..Default::default()
    };
    while client.send(metadata.clone()).await.unwrap().topics[0]
        .partitions
        .first()
        .is_none_or(|p| p.leader_id.get() < 0)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    response.topics[0].topic_id
}

/// Ours: batches built from the records here (counted), up to 5 produce requests in flight.
async fn produce_ours(client: &Client, topic: &str, topic_id: Uuid, records: usize) -> Sample {
    let value = vec![b'x'; RECORD];
    let (wall0, cpu0) = (Instant::now(), cpu(UsageWho::RUSAGE_SELF));
    let mut in_flight = tokio::task::JoinSet::new();
    // Timestamps of now: Kafka's time-based retention deletes records stamped 1970 at its next
    // check, before they are fetched.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    for first in (0..records).step_by(PER_BATCH) {
        let mut builder =
            BatchBuilder::with_capacity(BatchOptions::new(2, Compression::None), PER_BATCH * (RECORD + 16)).unwrap();
        for _ in first..(first + PER_BATCH).min(records) {
            builder.append(now, None, Some(&value), &[]).unwrap();
        }
        let records = Records::from_bytes(builder.build().unwrap());
        let request = requests::produce(topic, topic_id, 0, records, -1, Duration::from_secs(30));
        if in_flight.len() >= 5 {
            in_flight.join_next().await.unwrap().unwrap();
        }
        let client = client.clone();
        in_flight.spawn(async move {
            let answer = client.send(request).await.unwrap();
            assert_eq!(answer.responses[0].partition_responses[0].error_code, ErrorCode::NONE);
        });
    }
    while let Some(done) = in_flight.join_next().await {
        done.unwrap();
    }
    sample(records * RECORD, wall0.elapsed(), cpu(UsageWho::RUSAGE_SELF) - cpu0)
}

/// Ours: fetch everything, every batch's CRC checked and every record decoded.
async fn fetch_ours(client: &Client, topic: &str, topic_id: Uuid, records: usize) -> Sample {
    let (wall0, cpu0) = (Instant::now(), cpu(UsageWho::RUSAGE_SELF));
    let (mut offset, mut bytes) = (0i64, 0usize);
    while (offset as usize) < records {
        let request = requests::fetch(topic, topic_id, 0, offset);
        let response = client.send(request).await.unwrap();
        let partition = &response.responses[0].partitions[0];
        assert_eq!(partition.error_code, ErrorCode::NONE, "fetch at {offset}");
        let data = partition.records.clone().unwrap_or_default();
        for batch in data.batches() {
            let Ok(batch) = batch else { break }; // a partial batch at the end of the response
            batch.verify_crc().unwrap();
            for record in batch.records().unwrap() {
                let record = record.unwrap();
                if record.offset >= offset {
                    bytes += record.value.map_or(0, |v| v.len());
                    offset = record.offset + 1;
                }
            }
        }
    }
    sample(bytes, wall0.elapsed(), cpu(UsageWho::RUSAGE_SELF) - cpu0)
}

/// Runs one of Kafka's perf tools; its output, and its CPU time (as a reaped child).
fn java_tool(class: &str, args: &[String]) -> (String, Duration, Duration) {
    let (wall0, cpu0) = (Instant::now(), cpu(UsageWho::RUSAGE_CHILDREN));
    let out = Command::new("java")
        .args(["-Xmx1g", "-cp", &format!("{}/*", kafka_jars().display()), class])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{class}: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), wall0.elapsed(), cpu(UsageWho::RUSAGE_CHILDREN) - cpu0)
}

fn produce_java(bootstrap: &str, topic: &str, records: usize) -> Sample {
    let props = [
        format!("bootstrap.servers={bootstrap}"),
        "acks=all".into(),
        format!("batch.size={}", PER_BATCH * RECORD),
        "linger.ms=5".into(),
        "max.request.size=2097152".into(),
        "buffer.memory=67108864".into(),
    ];
    let mut args: Vec<String> =
        ["--topic", topic, "--num-records", &records.to_string(), "--record-size", &RECORD.to_string()]
            .iter()
            .map(|s| s.to_string())
            .collect();
    args.extend(["--throughput".into(), "-1".into(), "--producer-props".into()]);
    args.extend(props);
    let (out, _, cpu) = java_tool("org.apache.kafka.tools.ProducerPerformance", &args);
    // "N records sent, R records/sec (X MB/sec), …" on the last line.
    let last = out.lines().rev().find(|l| l.contains("records sent")).unwrap_or_else(|| panic!("{out}"));
    let mb = last.split('(').nth(1).and_then(|s| s.split(' ').next()).and_then(|s| s.parse::<f64>().ok()).unwrap();
    // Kafka's MB is 2^20 bytes; ours 10^6.
    let mb_per_s = mb * 1_048_576.0 / 1e6;
    Sample { mb_per_s, cpu_s_per_gb: cpu.as_secs_f64() / ((records * RECORD) as f64 / 1e9) }
}

fn fetch_java(bootstrap: &str, topic: &str, records: usize) -> Sample {
    let args: Vec<String> =
        ["--bootstrap-server", bootstrap, "--topic", topic, "--messages", &records.to_string(), "--timeout", "60000"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let (out, _, cpu) = java_tool("org.apache.kafka.tools.ConsumerPerformance", &args);
    // A header line, then: start, end, MB consumed, MB/sec, ...
    let values = out
        .lines()
        .rev()
        .find(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("{out}"));
    let fields: Vec<&str> = values.split(',').map(str::trim).collect();
    let mb_per_s = fields[3].parse::<f64>().unwrap() * 1_048_576.0 / 1e6;
    Sample { mb_per_s, cpu_s_per_gb: cpu.as_secs_f64() / ((records * RECORD) as f64 / 1e9) }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let jars = kafka_jars();
    if !jars.join("kafka_2.13-4.4.0.jar").is_file() {
        eprintln!("kafka_throughput: no broker jars in {} (scripts/kafka-release)", jars.display());
        return;
    }
    let mb: usize = std::env::var("KAFKA_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    let records = mb * 1_000_000 / RECORD;
    let kafka = Kafka::start(jars, 1).expect("Kafka starts");
    let bootstrap = kafka.bootstrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = runtime.block_on(Client::connect(kafka.plaintext(), ClientConfig::default())).unwrap();
    let mut rows: [(&str, Vec<Sample>); 4] = [
        ("produce, ours", vec![]),
        ("produce, Kafka's Java client", vec![]),
        ("fetch, ours", vec![]),
        ("fetch, Kafka's Java client", vec![]),
    ];
    for run in 0..RUNS {
        let (ours, java) = (format!("ours-{run}"), format!("java-{run}"));
        let id = runtime.block_on(create(&client, &ours));
        runtime.block_on(create(&client, &java));
        rows[0].1.push(runtime.block_on(produce_ours(&client, &ours, id, records)));
        rows[1].1.push(produce_java(&bootstrap, &java, records));
        rows[2].1.push(runtime.block_on(fetch_ours(&client, &ours, id, records)));
        rows[3].1.push(fetch_java(&bootstrap, &java, records));
        eprintln!("run {run}: {:?}", rows.iter().map(|(_, s)| s[run]).collect::<Vec<_>>());
    }
    println!("{records} records of {RECORD} B ({mb} MB) per run, medians of {RUNS} runs, one Kafka 4.4.0 broker on this machine:");
    println!("{:<32} {:>10} {:>16}", "", "MB/s", "CPU s per GB");
    let medians: Vec<(f64, f64)> = rows
        .iter()
        .map(|(name, s)| {
            let m =
                (median(s.iter().map(|x| x.mb_per_s).collect()), median(s.iter().map(|x| x.cpu_s_per_gb).collect()));
            println!("{name:<32} {:>10.1} {:>16.2}", m.0, m.1);
            m
        })
        .collect();
    println!(
        "ratios ours/Java: produce {:.2}x throughput, {:.2}x CPU per GB; fetch {:.2}x throughput, {:.2}x CPU per GB",
        medians[0].0 / medians[1].0,
        medians[0].1 / medians[1].1,
        medians[2].0 / medians[3].0,
        medians[2].1 / medians[3].1
    );
}
