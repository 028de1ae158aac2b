//! The consumer against three Apache Kafka 4.4 nodes (shared by this binary), each in a rack
//! of its own with Kafka's rack-aware replica selector: a consumer with `client.rack` reads
//! from the replica in its rack (KIP-392); the leader SIGKILLed mid-read loses and repeats
//! nothing (the new leader is found, the position validated, KIP-320); and an exactly-once
//! pipeline (our consumer, our transactional producer, `send_offsets_to_transaction`) copies
//! a topic while each node in turn is SIGKILLed and started again, and the copier itself dies
//! mid-transaction every 25 transactions (a new one takes over): Kafka's Java consumer in
//! read_committed finds every input record in the output exactly once.
//!
//! The pipeline runs until each node was killed and restarted once (about a minute here);
//! `KWIRE_CHAOS_SECS=300` keeps killing nodes in turn until that many seconds passed.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::*;
use kwire::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kwire::messages::CreateTopicsRequest;
use kwire_client::consumer::{Consumer, IsolationLevel, TopicPartition};
use kwire_client::producer::{Producer, ProducerConfig, ProducerRecord};
use kwire_connection::{ClientConfig, Cluster};
use kwire_test_support::Kafka;

fn kafka() -> Option<&'static Mutex<Kafka>> {
    static KAFKA: OnceLock<Option<Mutex<Kafka>>> = OnceLock::new();
    KAFKA
        .get_or_init(|| {
            Kafka::start_or_skip_with(
                3,
                &[
                    ("broker.rack", "rack-{id}"),
                    ("replica.selector.class", "org.apache.kafka.common.replica.RackAwareReplicaSelector"),
                ],
            )
            .map(Mutex::new)
        })
        .as_ref()
}

/// One test at a time: one kills nodes.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn writer_retrying(bootstrap: &str) -> Cluster {
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let mut cluster =
        Cluster::connect(&servers, ClientConfig::default().request_timeout(Duration::from_secs(10))).await.unwrap();
    // A killed leader is fenced 3 s after its heartbeats stop (test-support's setting).
    cluster.attempts = 40;
    cluster
}

async fn create_replicated(cluster: &Cluster, topic: &str) {
    create_replicated_with(cluster, topic, 1).await
}

async fn create_replicated_with(cluster: &Cluster, topic: &str, partitions: i32) {
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: topic.into(),
            num_partitions: partitions,
            replication_factor: 3,
            configs: vec![CreatableTopicConfig {
                name: "min.insync.replicas".into(),
                value: Some("2".into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let created = cluster.any().await.unwrap().send(request).await.unwrap();
    assert_eq!(created.topics[0].error_code, kwire::ErrorCode::NONE);
    // Until every replica knows the topic, Metadata may not list its leader.
    for _ in 0..100 {
        cluster.refresh_topics(&[topic], false).await.unwrap();
        if (0..partitions).all(|p| cluster.metadata().leader(topic, p).is_some()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_reads_from_the_replica_in_its_rack() {
    let Some(kafka) = kafka() else { return };
    let _serial = SERIAL.lock().await;
    logs();
    let bootstrap = kafka.lock().unwrap().bootstrap();
    let writer = writer_retrying(&bootstrap).await;
    create_replicated(&writer, "racks").await;
    produce(&writer, "racks", 0, 0, 1000, 50).await;
    let leader = writer.metadata().leader("racks", 0).unwrap();
    let follower = [1, 2, 3].into_iter().find(|n| *n != leader).unwrap();
    let config = config(&bootstrap).client_rack(format!("rack-{follower}"));
    let consumer = Consumer::new(config).await.unwrap();
    consumer.assign([TopicPartition::new("racks", 0)]).await.unwrap();
    let records = read(&consumer, 1000, Duration::from_secs(60)).await.unwrap();
    assert_eq!(records.iter().map(|r| r.offset).collect::<Vec<_>>(), (0..1000).collect::<Vec<i64>>());
    let metrics = consumer.metrics();
    let from_follower = metrics.fetches_by_node.get(&follower).copied().unwrap_or(0);
    let from_leader = metrics.fetches_by_node.get(&leader).copied().unwrap_or(0);
    assert!(from_follower > 0 && from_follower > from_leader, "leader {leader}, follower {follower}: {metrics:?}");
    consumer.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_leader_loses_and_repeats_nothing() {
    let Some(kafka) = kafka() else { return };
    let _serial = SERIAL.lock().await;
    logs();
    let bootstrap = kafka.lock().unwrap().bootstrap();
    let writer = writer_retrying(&bootstrap).await;
    create_replicated(&writer, "failover").await;
    produce(&writer, "failover", 0, 0, 500, 50).await;
    let consumer = Consumer::new(config(&bootstrap).max_poll_records(100)).await.unwrap();
    consumer.assign([TopicPartition::new("failover", 0)]).await.unwrap();
    let mut records = read(&consumer, 250, Duration::from_secs(30)).await.unwrap();
    let leader = writer.metadata().leader("failover", 0).unwrap();
    kafka.lock().unwrap().kill9(leader).unwrap();
    produce(&writer, "failover", 0, 500, 1000, 50).await;
    records.extend(read(&consumer, 1000 - records.len(), Duration::from_secs(60)).await.unwrap());
    assert_eq!(records.iter().map(|r| r.offset).collect::<Vec<_>>(), (0..1000).collect::<Vec<i64>>());
    assert!(records.iter().all(|r| value(r) == r.offset as u64));
    let new_leader = writer.metadata().leader("failover", 0).unwrap();
    assert_ne!(new_leader, leader);
    assert!(records.last().and_then(|r| r.leader_epoch).unwrap_or(0) > 0, "read under the new leader's epoch");
    consumer.close().await.unwrap();
    kafka.lock().unwrap().restart(leader).unwrap();
}

const EOS_IN: &str = "eos-in";
const EOS_OUT: &str = "eos-out";
const EOS_PARTITIONS: i32 = 3;
const EOS_GROUP: &str = "eos-copier";

/// The pipeline's transactional producer, `init_transactions` done: tried again (a new
/// producer each time) while the transaction coordinator is down or moving.
async fn transactional(bootstrap: &str, log: &mut Vec<String>) -> Producer {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let config = ProducerConfig::new(bootstrap)
            .transactional_id("eos-copier")
            .linger(Duration::from_millis(5))
            .request_timeout(Duration::from_secs(10))
            .max_block(Duration::from_secs(20))
            .transaction_timeout(Duration::from_secs(30));
        match Producer::connect(config).await {
            Ok(producer) => match producer.init_transactions().await {
                Ok(()) => return producer,
                Err(e) => {
                    log.push(format!("init_transactions: {e}"));
                    let _ = producer.close(Duration::from_secs(1)).await;
                }
            },
            Err(e) => log.push(format!("connect: {e}")),
        }
        assert!(Instant::now() < deadline, "no transactional producer within 120 s: {log:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// After a transaction failed: every assigned partition goes back to the group's committed
/// offset (what the last committed transaction left), as Kafka's exactly-once examples do;
/// those offsets also tell how far the output is complete. Fetched stable (KIP-447), tried
/// again while the group coordinator is down.
async fn rewind(consumer: &Consumer, done_to: &mut BTreeMap<TopicPartition, i64>, log: &mut Vec<String>) {
    let assigned: Vec<TopicPartition> = consumer.assignment().into_iter().collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match consumer.committed(&assigned).await {
            Ok(committed) => {
                for tp in &assigned {
                    match committed.get(tp).cloned().flatten() {
                        Some(offset) => {
                            done_to.insert(tp.clone(), offset.offset);
                            consumer.seek_to(tp, offset).unwrap();
                        }
                        None => consumer.seek_to_beginning(std::slice::from_ref(tp)).unwrap(),
                    }
                }
                return;
            }
            Err(e) => log.push(format!("committed: {e}")),
        }
        assert!(Instant::now() < deadline, "no committed offsets within 120 s: {log:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Every how many transactions a copier dies in the middle of one.
const CRASH_EVERY: u64 = 25;

/// A copier: its transactional producer (which aborts what the one before left open) and its
/// consumer, a static member of the group (KIP-345: it takes the place of the one before at
/// once), positioned at the committed offsets, read stable (KIP-447).
async fn copier(bootstrap: &str, log: &mut Vec<String>) -> (Producer, Consumer) {
    let producer = transactional(bootstrap, log).await;
    let config = config(bootstrap)
        .group_id(EOS_GROUP)
        .group_instance_id("eos-copier-1")
        .enable_auto_commit(false)
        .isolation_level(IsolationLevel::ReadCommitted)
        .max_poll_records(500);
    let consumer = Consumer::new(config).await.unwrap();
    consumer.subscribe([EOS_IN]).await.unwrap();
    (producer, consumer)
}

/// What the copier writes for `r`: its key and value, to the output.
fn copy_of(r: &kwire_client::consumer::ConsumerRecord) -> ProducerRecord {
    let record = ProducerRecord::new(EOS_OUT, r.value.clone().unwrap_or_default());
    match &r.key {
        Some(key) => record.key(key.clone()),
        None => record,
    }
}

/// One transaction: the polled records copied to the output, the consumer's next offsets
/// committed with them.
async fn copy(
    producer: &Producer,
    consumer: &Consumer,
    records: &[kwire_client::consumer::ConsumerRecord],
    next: &BTreeMap<TopicPartition, i64>,
) -> Result<(), kwire_client::producer::ProduceError> {
    producer.begin_transaction()?;
    for r in records {
        // The outcome comes with the commit: a record that failed fails it.
        let _delivery = producer.send(copy_of(r)).await?;
    }
    let offsets: Vec<(&str, i32, i64)> = next.iter().map(|(tp, o)| (&*tp.topic, tp.partition, *o)).collect();
    producer.send_offsets_to_transaction(&offsets, &consumer.group_metadata().unwrap()).await?;
    producer.commit_transaction().await
}

/// `topic` as Kafka's Java consumer reads it at `isolation`: one value per record.
fn java_values(bootstrap: &str, topic: &str, isolation: &str) -> Vec<String> {
    kwire_test_support::kafka::java_program_built("ProducerCheck").expect("scripts/kafka-release built the oracle");
    let out = kwire_test_support::kafka::java_program("ProducerCheck", &["values", bootstrap, topic, isolation])
        .output()
        .expect("java runs");
    assert!(out.status.success(), "ProducerCheck values failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut values = Vec::new();
    let mut end = None;
    for line in text.lines() {
        if let Some(total) = line.strip_prefix("end ") {
            end = total.parse::<usize>().ok();
            continue;
        }
        values.push(line.splitn(3, ' ').nth(2).unwrap_or_default().to_string());
    }
    assert_eq!(end, Some(values.len()), "the reader reached the end offsets");
    values
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exactly_once_pipeline_survives_each_node_killed_in_turn() {
    let Some(kafka) = kafka() else { return };
    let _serial = SERIAL.lock().await;
    logs();
    let run = Duration::from_secs(std::env::var("KWIRE_CHAOS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(0));
    let bootstrap = kafka.lock().unwrap().bootstrap();
    let admin = writer_retrying(&bootstrap).await;
    create_replicated_with(&admin, EOS_IN, EOS_PARTITIONS).await;
    create_replicated_with(&admin, EOS_OUT, EOS_PARTITIONS).await;

    // Node 1, 2, 3 (and again, until `run` passed): killed, started again 3 s later, and 3 s
    // after it is back the next one goes.
    let chaos_done = Arc::new(AtomicBool::new(false));
    let chaos = {
        let done = chaos_done.clone();
        tokio::task::spawn_blocking(move || {
            let log = Kafka::kill_each_in_turn(kafka, run);
            done.store(true, Ordering::SeqCst);
            log
        })
    };

    // The input, written all along by an idempotent producer (acks=all), which loses and
    // repeats nothing through the kills (producer_chaos.rs).
    let input = {
        let (bootstrap, done) = (bootstrap.clone(), chaos_done.clone());
        tokio::spawn(async move {
            let config = ProducerConfig::new(&bootstrap)
                .linger(Duration::from_millis(5))
                .request_timeout(Duration::from_secs(10));
            let producer = Producer::connect(config).await.unwrap();
            let mut deliveries = Vec::new();
            let mut n = 0u64;
            while !done.load(Ordering::SeqCst) {
                for _ in 0..20 {
                    let record = ProducerRecord::new(EOS_IN, format!("{n:09}")).key(format!("k{}", n % 64));
                    deliveries.push(producer.send(record).await.unwrap());
                    n += 1;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            for delivery in deliveries {
                delivery.await.expect("every input record is written");
            }
            producer.close(Duration::from_secs(30)).await.unwrap();
            n
        })
    };

    let mut log = Vec::new();
    let (mut producer, consumer) = copier(&bootstrap, &mut log).await;
    let mut consumer = consumer;
    let (mut committed, mut aborted, mut new_producers, mut crashes, mut copied) = (0u64, 0u64, 0u64, 0u64, 0u64);
    // How far the output is complete, per input partition.
    let mut done_to: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    let mut input_end: Option<BTreeMap<TopicPartition, i64>> = None;
    let mut input = Some(input);
    let mut written = 0;
    let mut turns = 0u64;
    let started = Instant::now();
    loop {
        if input.as_ref().is_some_and(|task| task.is_finished()) {
            written = input.take().unwrap().await.unwrap();
            let partitions = partitions(EOS_IN, EOS_PARTITIONS);
            input_end = Some(consumer.end_offsets(&partitions).await.unwrap());
        }
        if let Some(end) = &input_end {
            if end.iter().all(|(tp, o)| done_to.get(tp).copied().unwrap_or(0) >= *o) {
                break;
            }
        }
        assert!(started.elapsed() < run + Duration::from_secs(300), "the pipeline never caught up: {log:?}");
        let records = match consumer.poll(Duration::from_millis(200)).await {
            Ok(records) => records,
            Err(e) => {
                log.push(format!("poll: {e}"));
                continue;
            }
        };
        if records.is_empty() {
            continue;
        }
        let next: BTreeMap<TopicPartition, i64> =
            records.next_offsets().iter().map(|(tp, o)| (tp.clone(), o.offset)).collect();
        let records = records.into_vec();
        turns += 1;
        if turns.is_multiple_of(CRASH_EVERY) && input.is_some() {
            // The copier dies in the middle of a transaction, its records and offsets
            // written: the next one (the same transactional.id, the same static member)
            // aborts what it left and goes on from the committed offsets.
            let crash = async {
                producer.begin_transaction()?;
                for r in &records {
                    let _delivery = producer.send(copy_of(r)).await?;
                }
                let offsets: Vec<(&str, i32, i64)> =
                    next.iter().map(|(tp, o)| (&*tp.topic, tp.partition, *o)).collect();
                producer.send_offsets_to_transaction(&offsets, &consumer.group_metadata().unwrap()).await?;
                producer.flush().await
            };
            if let Err(e) = crash.await {
                log.push(format!("before the crash: {e}"));
            }
            drop(producer);
            drop(consumer);
            crashes += 1;
            (producer, consumer) = copier(&bootstrap, &mut log).await;
            continue;
        }
        match copy(&producer, &consumer, &records, &next).await {
            Ok(()) => {
                committed += 1;
                copied += records.len() as u64;
                done_to.extend(next);
            }
            Err(e) => {
                aborted += 1;
                log.push(format!("transaction {}: {e}", committed + aborted));
                let abort = if e.is_fatal() { Err(e) } else { producer.abort_transaction().await };
                if let Err(e) = abort {
                    // Fenced, or the abort's answer lost: a new producer with the same
                    // transactional.id aborts whatever this one left open.
                    log.push(format!("abort: {e}"));
                    let _ = producer.close(Duration::from_secs(1)).await;
                    producer = transactional(&bootstrap, &mut log).await;
                    new_producers += 1;
                }
                rewind(&consumer, &mut done_to, &mut log).await;
            }
        }
    }
    let chaos_log = chaos.await.unwrap();
    producer.close(Duration::from_secs(30)).await.unwrap();
    consumer.close().await.unwrap();

    let input_values = java_values(&bootstrap, EOS_IN, "read_uncommitted");
    let output_values = java_values(&bootstrap, EOS_OUT, "read_committed");
    let mut times: HashMap<&str, u32> = HashMap::new();
    for v in &output_values {
        *times.entry(v.as_str()).or_default() += 1;
    }
    let missing: Vec<&String> = input_values.iter().filter(|v| !times.contains_key(v.as_str())).collect();
    let twice: Vec<(&&str, &u32)> = times.iter().filter(|(_, n)| **n > 1).collect();
    let summary = format!(
        "{written} written, {} in the input, {} in the output (read_committed); {committed} transactions committed \
         ({copied} records), {aborted} failed, {new_producers} new producers, {crashes} copiers crashed; {chaos_log:?}; \
         {log:?}",
        input_values.len(),
        output_values.len()
    );
    eprintln!("exactly once: {summary}");
    assert_eq!(input_values.len() as u64, written, "the input holds what was written: {summary}");
    assert!(
        missing.is_empty(),
        "{} input records not in the output (e.g. {:?}): {summary}",
        missing.len(),
        &missing[..missing.len().min(3)]
    );
    assert!(
        twice.is_empty(),
        "{} input records more than once in the output (e.g. {:?}): {summary}",
        twice.len(),
        &twice[..twice.len().min(3)]
    );
    assert_eq!(output_values.len(), input_values.len(), "{summary}");
    assert!(crashes > 0, "a copier crashed mid-transaction: {summary}");
}
