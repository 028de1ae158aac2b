//! ZooKeeper group consumers against a real ZooKeeper and two real `kwire07-broker`s: the
//! producer's discovery (spec §4.4), two consumers splitting the partitions by 0.7's range
//! assignment, one leaving and the other taking everything, committed offsets surviving a
//! restart, the CLI's `--group` and `topics`, and a bounded load test.

use kwire07_test_support as common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{broker, kwire07, lines, BrokerOptions, BrokerProcess, ZooKeeper};
use kwire07_client::assignment::BrokerPartition;
use kwire07_client::group::{GroupConfig, GroupConsumer};
use kwire07_client::producer::{Discovery, Producer, ProducerConfig, Record};
use kwire07_client::{BrokerConnection, ZkCluster};

fn zk_broker(zk: &str, id: u32, partitions: u32) -> BrokerProcess {
    broker(BrokerOptions {
        broker_id: Some(id),
        num_partitions: Some(partitions),
        zookeeper: Some(zk.to_owned()),
        ..Default::default()
    })
}

fn group_config(zk: &str, group: &str, topic: &str, id: &str) -> GroupConfig {
    let mut c = GroupConfig::new(zk, group, &[topic]);
    c.consumer_id = Some(id.to_owned());
    c.rebalance_backoff = Duration::from_millis(300);
    c.rebalance_retries = 30;
    c.autocommit_interval = Duration::from_millis(500);
    c.poll_backoff = Duration::from_millis(20);
    c
}

/// Registers `topic` on every broker by producing one message to partition 0 of each, then
/// waits until ZooKeeper lists them all.
async fn register_topic(zk: &ZkCluster, brokers: &[&BrokerProcess], topic: &str) -> usize {
    for b in brokers {
        let mut p = Producer::new(ProducerConfig::new(Discovery::Static(vec![b.address()]))).await.expect("producer");
        p.send(Record::new(topic, format!("warm-{}", b.address())).with_partition(0)).await.expect("send");
        p.close().await.expect("close");
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let counts = zk.topic_partition_counts(topic).await.expect("zk");
        if counts.len() == brokers.len() {
            return brokers.len();
        }
        assert!(Instant::now() < deadline, "topic {topic} not registered: {counts:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Owner node values of a group's topic: `"<b>-<p>"` → thread id.
async fn owners(zk: &ZkCluster, group: &str, topic: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for child in zk.children(&format!("/consumers/{group}/owners/{topic}")).await.expect("owners") {
        if let Some(v) = zk.data(&format!("/consumers/{group}/owners/{topic}/{child}")).await.expect("owner") {
            out.insert(child, v);
        }
    }
    out
}

/// Takes at most one message (waiting up to 50 ms) and records it.
async fn take(c: &mut GroupConsumer, seen: &mut Vec<String>) {
    if let Some(m) = c.next_message(Duration::from_millis(50)).await.expect("next") {
        seen.push(String::from_utf8_lossy(&m.payload).into_owned());
    }
}

fn names(v: &[(String, String)]) -> Vec<String> {
    v.iter().map(|(_, p)| p.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_consumers_split_one_leaves_offsets_survive_restart() {
    let Some(zk_server) = ZooKeeper::start_or_skip() else { return };
    let zkc = zk_server.connect_string();
    let b0 = zk_broker(&zkc, 0, 2);
    let b1 = zk_broker(&zkc, 1, 2);
    let zk = ZkCluster::connect(&zkc).await.expect("zk");
    let topic = "events";
    let warm = register_topic(&zk, &[&b0, &b1], topic).await;

    // Producer with ZooKeeper discovery: keyed messages spread over (0,0),(0,1),(1,0),(1,1).
    let mut config = ProducerConfig::new(Discovery::ZooKeeper(zkc.clone()));
    config.refresh_interval = Duration::ZERO;
    config.batch_size = 50;
    let mut producer = Producer::new(config).await.expect("producer");
    let n = 400;
    for i in 0..n {
        producer.send(Record::new(topic, format!("msg-{i:04}")).with_key(&format!("key-{i}"))).await.expect("send");
    }
    producer.close().await.expect("close");
    let total = n + warm;
    let mut log_ends = BTreeMap::new();
    for (id, b) in [(0, &b0), (1, &b1)] {
        let mut conn = BrokerConnection::connect(&b.address()).await.expect("connect");
        for p in 0..2 {
            let end = conn.offset_at(topic, p, -1).await.expect("offsets");
            assert!(end > 0, "keyed messages reached {id}-{p}");
            log_ends.insert(format!("{id}-{p}"), end);
        }
    }

    let mut seen: Vec<String> = Vec::new();

    let mut a = GroupConsumer::join(group_config(&zkc, "g1", topic, "a")).await.expect("a joins");
    assert_eq!(names(&a.owned_partitions()), ["0-0", "0-1", "1-0", "1-1"]);
    while seen.len() < 100 {
        take(&mut a, &mut seen).await;
    }

    // b joins while a keeps consuming; a must release before b can claim.
    let zkc2 = zkc.clone();
    let b_join = tokio::spawn(async move { GroupConsumer::join(group_config(&zkc2, "g1", topic, "b")).await });
    while !b_join.is_finished() {
        take(&mut a, &mut seen).await;
    }
    let mut b = b_join.await.expect("task").expect("b joins");
    // Let a finish its own rebalance.
    let deadline = Instant::now() + Duration::from_secs(20);
    while a.owned_partitions().len() != 2 && Instant::now() < deadline {
        take(&mut a, &mut seen).await;
    }
    // Range assignment over sorted "0-0" < "0-1" < "1-0" < "1-1" and threads g1_a-0 < g1_b-0.
    assert_eq!(names(&a.owned_partitions()), ["0-0", "0-1"]);
    assert_eq!(names(&b.owned_partitions()), ["1-0", "1-1"]);
    let own = owners(&zk, "g1", topic).await;
    assert_eq!(
        own,
        BTreeMap::from([
            ("0-0".into(), "g1_a-0".into()),
            ("0-1".into(), "g1_a-0".into()),
            ("1-0".into(), "g1_b-0".into()),
            ("1-1".into(), "g1_b-0".into()),
        ])
    );
    let registration = zk.data("/consumers/g1/ids/g1_a").await.expect("id");
    assert_eq!(registration.as_deref(), Some(r#"{ "events": 1 }"#));

    while seen.len() < 250 {
        take(&mut a, &mut seen).await;
        take(&mut b, &mut seen).await;
    }
    b.close().await.expect("b leaves");
    let deadline = Instant::now() + Duration::from_secs(20);
    while a.owned_partitions().len() != 4 && Instant::now() < deadline {
        take(&mut a, &mut seen).await;
    }
    assert_eq!(names(&a.owned_partitions()), ["0-0", "0-1", "1-0", "1-1"]);
    while seen.len() < 320 {
        take(&mut a, &mut seen).await;
    }
    a.close().await.expect("a leaves");
    assert!(owners(&zk, "g1", topic).await.is_empty(), "owners released on close");

    // A restarted consumer resumes from the committed offsets.
    let mut c = GroupConsumer::join(group_config(&zkc, "g1", topic, "a")).await.expect("a rejoins");
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.len() < total && Instant::now() < deadline {
        take(&mut c, &mut seen).await;
    }
    // Nothing more arrives.
    assert!(c.next_message(Duration::from_millis(300)).await.expect("next").is_none());
    c.close().await.expect("close");

    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a message was delivered twice within the group");
    assert_eq!(seen.len(), total);
    for i in 0..n {
        assert!(unique.contains(&format!("msg-{i:04}")), "msg-{i:04} missing");
    }
    for (bp, end) in &log_ends {
        let bp = BrokerPartition::parse(bp).expect("bp");
        assert_eq!(zk.read_offset("g1", topic, &bp).await.expect("offset"), Some(*end), "{}", bp.name());
    }

    // The CLI: two group consumers one after the other share the work; `topics` shows it.
    let args = |max: &'static str| {
        vec![
            "--zookeeper".to_string(),
            zkc.clone(),
            "consume".into(),
            "--topic".into(),
            topic.into(),
            "--group".into(),
            "cli".into(),
            "--max-messages".into(),
            max.into(),
        ]
    };
    let run = |a: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            lines(&kwire07(&a, b""))
        })
    };
    let first = run(args("150")).await.expect("cli");
    let second = run(args("100000")).await.expect("cli");
    assert_eq!(first.len(), 150);
    assert_eq!(first.len() + second.len(), total);
    let all: BTreeSet<&String> = first.iter().chain(&second).collect();
    assert_eq!(all.len(), total, "CLI group consumers overlapped");
    let zkc3 = zkc.clone();
    let topics = tokio::task::spawn_blocking(move || {
        String::from_utf8(kwire07(&["--zookeeper", &zkc3, "topics"], b"")).expect("utf8")
    })
    .await
    .expect("topics");
    assert!(topics.contains(&format!("0  {}", b0.address())), "{topics}");
    assert!(topics.contains(&format!("1  {}", b1.address())), "{topics}");
    assert!(topics.contains("events  4 partitions  (broker 0: 2, broker 1: 2)"), "{topics}");
    assert!(topics.contains("cli  (0 members)"), "{topics}");
    assert!(topics.contains("events total lag 0 bytes"), "{topics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_every_message_once_within_the_group() {
    let Some(zk_server) = ZooKeeper::start_or_skip() else { return };
    let zkc = zk_server.connect_string();
    let b0 = zk_broker(&zkc, 0, 3);
    let b1 = zk_broker(&zkc, 1, 3);
    let zk = ZkCluster::connect(&zkc).await.expect("zk");
    let topic = "load";
    let warm = register_topic(&zk, &[&b0, &b1], topic).await as u64;

    let produced = Arc::new(AtomicU64::new(warm));
    let producing = Arc::new(AtomicBool::new(true));
    let consumed = Arc::new(Mutex::new(Vec::<String>::new()));
    let run_for = Duration::from_secs(3);

    let mut producers = Vec::new();
    for p in 0..3 {
        let (zkc, produced) = (zkc.clone(), produced.clone());
        producers.push(tokio::spawn(async move {
            let mut config = ProducerConfig::new(Discovery::ZooKeeper(zkc));
            config.batch_size = 20;
            config.codec = [kwire07_client::Codec::None, kwire07_client::Codec::Gzip, kwire07_client::Codec::Snappy][p];
            let mut producer = Producer::new(config).await.expect("producer");
            let start = Instant::now();
            let mut i = 0u64;
            while start.elapsed() < run_for {
                producer.send(Record::new(topic, format!("p{p}-{i}")).with_key(&format!("{i}"))).await.expect("send");
                i += 1;
                if i.is_multiple_of(20) {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
            producer.close().await.expect("close");
            produced.fetch_add(i, Ordering::SeqCst);
        }));
    }

    let mut consumers = Vec::new();
    for c in 0..3 {
        let (zkc, consumed, produced, producing) = (zkc.clone(), consumed.clone(), produced.clone(), producing.clone());
        consumers.push(tokio::spawn(async move {
            // The third consumer joins late, forcing a rebalance under load.
            if c == 2 {
                tokio::time::sleep(Duration::from_millis(1500)).await;
            }
            let mut consumer =
                GroupConsumer::join(group_config(&zkc, "load-group", topic, &format!("c{c}"))).await.expect("join");
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if let Some(m) = consumer.next_message(Duration::from_millis(50)).await.expect("next") {
                    consumed.lock().expect("lock").push(String::from_utf8_lossy(&m.payload).into_owned());
                }
                let done = !producing.load(Ordering::SeqCst)
                    && consumed.lock().expect("lock").len() as u64 >= produced.load(Ordering::SeqCst);
                if done || Instant::now() > deadline {
                    break;
                }
            }
            consumer.close().await.expect("close");
        }));
    }
    for p in producers {
        p.await.expect("producer task");
    }
    producing.store(false, Ordering::SeqCst);
    for c in consumers {
        c.await.expect("consumer task");
    }
    let consumed = consumed.lock().expect("lock").clone();
    let total = produced.load(Ordering::SeqCst);
    let unique: BTreeSet<&String> = consumed.iter().collect();
    eprintln!("load test: {total} messages produced, {} consumed, {} distinct", consumed.len(), unique.len());
    assert_eq!(unique.len(), consumed.len(), "a message was consumed twice within the group");
    assert_eq!(consumed.len() as u64, total, "every produced message consumed");
    assert!(total > 300, "the load test produced only {total} messages");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assignment_counts_scala_members_with_several_streams_and_wildcards() {
    let Some(zk_server) = ZooKeeper::start_or_skip() else { return };
    let zkc = zk_server.connect_string();
    let b0 = zk_broker(&zkc, 0, 4);
    let zk = ZkCluster::connect(&zkc).await.expect("zk");
    let topic = "events";
    register_topic(&zk, &[&b0], topic).await;
    let counts = zk.topic_partition_counts(topic).await.expect("counts");
    assert_eq!(counts, BTreeMap::from([(0, 4)]));

    // A Scala consumer with two streams, registered the way 0.7 writes it (kept alive by this
    // test's session).
    zk.mkdirs("/consumers/g/ids").await.expect("mkdirs");
    assert!(zk.create_ephemeral("/consumers/g/ids/g_scala", r#"{ "events": 2 }"#).await.expect("register"));
    let mut ours = GroupConsumer::join(group_config(&zkc, "g", topic, "z")).await.expect("join");
    // Threads g_scala-0 < g_scala-1 < g_z-0 over 0-0..0-3: per 1, extra 1 → g_z-0 gets 0-3.
    assert_eq!(names(&ours.owned_partitions()), ["0-3"]);

    // The Scala member leaves; a whitelist member `*1*ev.*` joins in its place.
    zk.delete("/consumers/g/ids/g_scala").await.expect("leave");
    assert!(zk.create_ephemeral("/consumers/g/ids/g_w", "*1*ev.*").await.expect("register"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while names(&ours.owned_partitions()) != ["0-2", "0-3"] && Instant::now() < deadline {
        take(&mut ours, &mut seen).await;
    }
    // Threads g_w-0 < g_z-0: two partitions each.
    assert_eq!(names(&ours.owned_partitions()), ["0-2", "0-3"]);
    zk.delete("/consumers/g/ids/g_w").await.expect("leave");
    let deadline = Instant::now() + Duration::from_secs(20);
    while ours.owned_partitions().len() != 4 && Instant::now() < deadline {
        take(&mut ours, &mut seen).await;
    }
    assert_eq!(names(&ours.owned_partitions()), ["0-0", "0-1", "0-2", "0-3"]);
    assert!(ours.rebalances() >= 3, "{}", ours.rebalances());
    ours.close().await.expect("close");
}
