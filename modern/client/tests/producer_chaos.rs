//! An idempotent, acks=all producer against three Apache Kafka 4.4 nodes while each node in
//! turn is killed with SIGKILL and started again: every acknowledged record is read back by
//! Kafka's Java consumer exactly once, and each partition holds its records in the order sent.
//!
//! The producer runs until every node was killed and restarted once (about 50 s here: a
//! restarted node takes 10 to 20 s to recover its log on two busy cores), which is what CI runs;
//! `KWIRE_CHAOS_SECS=60` (or more) keeps killing nodes in turn until that many seconds passed.

mod support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kwire_client::producer::{Delivery, Producer, ProducerConfig, ProducerRecord};
use kwire_connection::{ClientConfig, Cluster};
use kwire_test_support::Kafka;
use support::create_topic;

const TOPIC: &str = "chaos";
const PARTITIONS: i32 = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkilling_each_node_in_turn_loses_and_duplicates_nothing() {
    // KWIRE_LOG=kwire_client=debug shows every retry and reset.
    if let Ok(filter) = std::env::var("KWIRE_LOG") {
        let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
    }
    let Some(kafka) = Kafka::start_or_skip(3) else { return };
    let seconds: u64 = std::env::var("KWIRE_CHAOS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let run = Duration::from_secs(seconds);
    let bootstrap = kafka.bootstrap();
    let admin = Cluster::connect(&[&bootstrap], ClientConfig::default()).await.unwrap();
    create_topic(&admin, TOPIC, PARTITIONS, 3, &[("min.insync.replicas", "2")]).await;
    let kafka = Arc::new(Mutex::new(kafka));

    // Node 1, 2, 3 (and again, until `run` passed): killed, started again 3 s later, and 3 s
    // after it is back the next one goes.
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let chaos = {
        let (kafka, done) = (kafka.clone(), done.clone());
        tokio::task::spawn_blocking(move || {
            let log = Kafka::kill_each_in_turn(&kafka, run);
            std::thread::sleep(Duration::from_secs(2));
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            log
        })
    };

    let config = ProducerConfig::new(&bootstrap)
        .linger(Duration::from_millis(5))
        .batch_size(4096)
        .request_timeout(Duration::from_secs(10));
    let producer = Producer::connect(config).await.unwrap();
    let started = Instant::now();
    let mut pending: Vec<(u64, Delivery)> = Vec::new();
    let mut n = 0u64;
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        for _ in 0..50 {
            let record = ProducerRecord::new(TOPIC, format!("{n:012}")).key(format!("k{}", n % 64));
            pending.push((n, producer.send(record).await.unwrap()));
            n += 1;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let produced_for = started.elapsed();
    let mut acked: HashMap<String, (i32, i64)> = HashMap::new();
    let mut failed = Vec::new();
    for (i, delivery) in pending {
        match delivery.await {
            Ok(meta) => {
                acked.insert(format!("{i:012}"), (meta.partition, meta.offset));
            }
            Err(e) => failed.push((i, e.to_string())),
        }
    }
    let chaos_log = chaos.await.unwrap();
    producer.close(Duration::from_secs(30)).await.unwrap();
    let metrics = producer.metrics();

    kwire_test_support::kafka::java_program_built("ProducerCheck").unwrap();
    let out =
        kwire_test_support::kafka::java_program("ProducerCheck", &["values", &bootstrap, TOPIC]).output().unwrap();
    let logs = || kafka.lock().unwrap().logs();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), logs());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut seen: HashSet<String> = HashSet::new();
    let mut duplicates = Vec::new();
    let mut per_partition: BTreeMap<i32, Vec<(i64, String)>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with("end ")) {
        let mut parts = line.splitn(3, ' ');
        let partition: i32 = parts.next().unwrap().parse().unwrap();
        let offset: i64 = parts.next().unwrap().parse().unwrap();
        let value = parts.next().unwrap().to_string();
        if !seen.insert(value.clone()) {
            duplicates.push(value.clone());
        }
        per_partition.entry(partition).or_default().push((offset, value));
    }
    let lost: Vec<&String> = acked.keys().filter(|v| !seen.contains(*v)).collect();
    let mut misplaced = 0;
    for (value, (partition, offset)) in &acked {
        let here = per_partition.get(partition).and_then(|log| log.iter().find(|(o, _)| o == offset));
        if here.map(|(_, v)| v) != Some(value) {
            misplaced += 1;
        }
    }
    let mut out_of_order = 0;
    for log in per_partition.values() {
        out_of_order += log.windows(2).filter(|w| w[0].1 >= w[1].1).count();
    }
    let summary = format!(
        "{n} sent in {:.1?}, {} acknowledged, {} failed, {} read back; {chaos_log:?}; {metrics:?}",
        produced_for,
        acked.len(),
        failed.len(),
        seen.len()
    );
    eprintln!("chaos: {summary}");
    assert!(lost.is_empty(), "{} acknowledged and lost (e.g. {:?}): {summary}", lost.len(), &lost[..lost.len().min(3)]);
    assert!(
        duplicates.is_empty(),
        "{} written twice (e.g. {:?}): {summary}",
        duplicates.len(),
        &duplicates[..duplicates.len().min(3)]
    );
    assert_eq!(misplaced, 0, "acknowledged at another offset than read: {summary}");
    assert_eq!(out_of_order, 0, "records out of the order sent: {summary}");
    assert!(failed.is_empty(), "within delivery.timeout.ms every record gets through: {failed:?}");
}
