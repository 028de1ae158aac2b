//! The Rust side of the producer bench (bench/producer/run.py drives it):
//!
//! ```text
//! producer-bench kafka                              one Apache Kafka 4.4 node (test-support's);
//!                                                   prints "bootstrap=HOST:PORT", runs until stdin closes
//! producer-bench topic BOOTSTRAP TOPIC PARTITIONS   creates TOPIC (PARTITIONS 0: deletes it)
//! producer-bench ours|rdkafka BOOTSTRAP TOPIC TOTAL_BYTES RECORD_SIZE CODEC RATE [KEY=VALUE...]
//!                                                   produces TOTAL_BYTES of RECORD_SIZE records, acks=all,
//!                                                   idempotent, each client's defaults otherwise; RATE
//!                                                   records/s (0: as fast as it goes); one JSON line
//! ```
//!
//! Every record carries the same payload of random capital letters, made once, as Kafka's
//! `ProducerPerformance` sends. Latency is from the send call to the acknowledgement, per record.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    match args.first().map(String::as_str) {
        Some("kafka") => kafka(),
        Some("topic") => runtime.block_on(topic(&args[1], &args[2], args[3].parse().unwrap())),
        Some(client @ ("ours" | "rdkafka")) => {
            let run = Run {
                bootstrap: args[1].clone(),
                topic: args[2].clone(),
                total: args[3].parse().unwrap(),
                size: args[4].parse().unwrap(),
                codec: args[5].clone(),
                rate: args[6].parse().unwrap(),
                extra: args[7..]
                    .iter()
                    .map(|kv| kv.split_once('=').expect("KEY=VALUE"))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            };
            let result = if client == "ours" { runtime.block_on(ours(&run)) } else { rdkafka(&run) };
            result.print(client, &run);
        }
        _ => {
            eprintln!("usage: see bench/producer/src/main.rs");
            std::process::exit(2);
        }
    }
}

fn kafka() {
    let kafka = kwire_test_support::Kafka::start(kwire_test_support::kafka::kafka_jars(), 1).expect("Kafka starts");
    println!("bootstrap={}", kafka.bootstrap());
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
        line.clear();
    }
    drop(kafka);
}

async fn topic(bootstrap: &str, name: &str, partitions: i32) {
    use kwire::messages::create_topics_request::CreatableTopic;
    use kwire::messages::delete_topics_request::DeleteTopicState;
    use kwire::messages::{CreateTopicsRequest, DeleteTopicsRequest};
    let cluster =
        kwire_connection::Cluster::connect(&[bootstrap], kwire_connection::ClientConfig::default()).await.unwrap();
    let client = cluster.any().await.unwrap();
    if partitions == 0 {
        let request = DeleteTopicsRequest {
            topics: vec![DeleteTopicState { name: Some(name.into()), ..Default::default() }],
            timeout_ms: 30_000,
            ..Default::default()
        };
        client.send(request).await.unwrap();
        return;
    }
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let answer = client.send(request).await.unwrap();
    assert_eq!(answer.topics[0].error_code, kwire::ErrorCode::NONE, "{:?}", answer.topics[0].error_message);
    // Wait until every partition has a leader that takes writes.
    for _ in 0..100 {
        cluster.refresh_topics(&[name], false).await.unwrap();
        if cluster.metadata().topics.get(name).is_some_and(|t| t.partitions.iter().all(|p| p.leader >= 0)) {
            tokio::time::sleep(Duration::from_millis(500)).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no leaders for {name}");
}

struct Run {
    bootstrap: String,
    topic: String,
    total: u64,
    size: usize,
    codec: String,
    rate: u64,
    extra: Vec<(String, String)>,
}

impl Run {
    fn records(&self) -> u64 {
        self.total / self.size as u64
    }

    /// `ProducerPerformance`'s payload: random capital letters, made once.
    fn payload(&self) -> Bytes {
        (0..self.size).map(|_| fastrand::u8(b'A'..=b'Z')).collect::<Vec<u8>>().into()
    }

    /// When record `i` is due at `rate` records/s.
    fn due(&self, started: Instant, i: u64) -> Option<Instant> {
        (self.rate > 0).then(|| started + Duration::from_secs_f64(i as f64 / self.rate as f64))
    }
}

struct Outcome {
    seconds: f64,
    latencies_us: Vec<u64>,
    errors: u64,
}

impl Outcome {
    fn print(mut self, client: &str, run: &Run) {
        self.latencies_us.sort_unstable();
        let pct = |q: f64| {
            if self.latencies_us.is_empty() {
                return -1.0;
            }
            self.latencies_us[((self.latencies_us.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0
        };
        let bytes = run.records() * run.size as u64;
        println!(
            "{{\"client\":\"{client}\",\"codec\":\"{}\",\"records\":{},\"bytes\":{bytes},\"seconds\":{:.3},\"mb_per_s\":{:.1},\"p50_ms\":{:.2},\"p99_ms\":{:.2},\"errors\":{}}}",
            run.codec,
            run.records(),
            self.seconds,
            bytes as f64 / 1e6 / self.seconds,
            pct(0.50),
            pct(0.99),
            self.errors
        );
    }
}

async fn ours(run: &Run) -> Outcome {
    use kwire_client::producer::{Delivery, Producer, ProducerConfig, ProducerRecord};
    let mut config = ProducerConfig::new(&run.bootstrap)
        .set("acks", "all")
        .unwrap()
        .set("enable.idempotence", "true")
        .unwrap()
        .set("compression.type", &run.codec)
        .unwrap();
    for (k, v) in &run.extra {
        config = config.set(k, v).unwrap();
    }
    let producer = Producer::connect(config).await.unwrap();
    let payload = run.payload();
    let topic: Arc<str> = Arc::from(run.topic.as_str());
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(if run.rate > 0 { run.records() as usize } else { 0 })));
    let mut outstanding: std::collections::VecDeque<Delivery> = std::collections::VecDeque::new();
    let mut measuring = tokio::task::JoinSet::new();
    let mut errors = 0;
    let started = Instant::now();
    for i in 0..run.records() {
        if let Some(due) = run.due(started, i) {
            tokio::time::sleep_until(due.into()).await;
        }
        let record = ProducerRecord {
            topic: topic.clone(),
            partition: None,
            key: None,
            value: Some(payload.clone()),
            headers: Vec::new(),
            timestamp: None,
        };
        let sent = (run.rate > 0).then(Instant::now);
        let delivery = producer.send(record).await.unwrap();
        if let Some(sent) = sent {
            let latencies = latencies.clone();
            measuring.spawn(async move {
                if delivery.await.is_ok() {
                    latencies.lock().unwrap().push(sent.elapsed().as_micros() as u64);
                }
            });
            continue;
        }
        outstanding.push_back(delivery);
        while outstanding.front().is_some_and(|d| d.is_done()) {
            if outstanding.pop_front().unwrap().await.is_err() {
                errors += 1;
            }
        }
    }
    producer.flush().await.unwrap();
    for delivery in outstanding {
        if delivery.await.is_err() {
            errors += 1;
        }
    }
    while measuring.join_next().await.is_some() {}
    let seconds = started.elapsed().as_secs_f64();
    producer.close(Duration::from_secs(30)).await.unwrap();
    let latencies_us = std::mem::take(&mut *latencies.lock().unwrap());
    if run.rate > 0 {
        errors = run.records() - latencies_us.len() as u64;
    }
    Outcome { seconds, latencies_us, errors }
}

fn rdkafka(run: &Run) -> Outcome {
    use rdkafka::config::ClientConfig;
    use rdkafka::error::{KafkaError, RDKafkaErrorCode};
    use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
    use rdkafka::ClientContext;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The opaque of a message is when it was sent, in ns after `started` (no allocation, and
    /// no clock read unless latency is measured).
    struct Context {
        latencies: Mutex<Vec<u64>>,
        errors: AtomicU64,
        measure: bool,
        started: Instant,
    }
    impl ClientContext for Context {}
    impl ProducerContext for Context {
        type DeliveryOpaque = usize;
        fn delivery(&self, result: &DeliveryResult<'_>, sent_ns: usize) {
            if result.is_err() {
                self.errors.fetch_add(1, Ordering::Relaxed);
            } else if self.measure {
                let sent = self.started + Duration::from_nanos(sent_ns as u64);
                self.latencies.lock().unwrap().push(sent.elapsed().as_micros() as u64);
            }
        }
    }

    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", &run.bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("compression.type", &run.codec);
    for (k, v) in &run.extra {
        config.set(k, v);
    }
    let started = Instant::now();
    let context =
        Context { latencies: Mutex::new(Vec::new()), errors: AtomicU64::new(0), measure: run.rate > 0, started };
    let producer: ThreadedProducer<Context> = config.create_with_context(context).unwrap();
    let payload = run.payload();
    let started = Instant::now();
    for i in 0..run.records() {
        if let Some(due) = run.due(started, i) {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        let mut opaque = if run.rate > 0 { producer.context().started.elapsed().as_nanos() as usize } else { 0 };
        loop {
            let record = BaseRecord::<(), [u8], usize>::with_opaque_to(&run.topic, opaque).payload(&payload[..]);
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), record)) => {
                    opaque = record.delivery_opaque;
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err((e, _)) => panic!("rdkafka: {e}"),
            }
        }
    }
    producer.flush(Duration::from_secs(300)).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let context = producer.context();
    let latencies_us = std::mem::take(&mut *context.latencies.lock().unwrap());
    Outcome { seconds, latencies_us, errors: context.errors.load(Ordering::Relaxed) }
}
