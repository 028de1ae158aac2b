//! The consumer against Apache Kafka 4.4 (one node, shared by this binary): what it reads in
//! read_committed and read_uncommitted is exactly what Kafka's own Java consumer reads of the
//! same log (every codec, a committed and an aborted transaction); fetch sessions go
//! incremental; a KIP-848 member's regular expression is evaluated by the broker, new topics
//! included; a static member (KIP-345) restarts into its place without a rebalance.

mod common;

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Duration;

use common::*;
use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::CreateTopicsRequest;
use kwire_client::consumer::{
    Consumer, ConsumerConfig, ConsumerRecord, GroupProtocol, IsolationLevel, OffsetReset, TopicPartition,
};
use kwire_test_support::kafka::java_client;
use kwire_test_support::Kafka;

fn kafka() -> Option<&'static Kafka> {
    logs();
    static KAFKA: OnceLock<Option<Kafka>> = OnceLock::new();
    KAFKA.get_or_init(|| Kafka::start_or_skip(1)).as_ref()
}

async fn create(bootstrap: &str, topic: &str, partitions: i32) {
    let cluster = writer(bootstrap).await;
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: topic.into(),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let created = cluster.any().await.unwrap().send(request).await.unwrap();
    assert_eq!(created.topics[0].error_code, kwire::ErrorCode::NONE, "{topic}");
}

/// A record as Kafka's Java consumer prints it (`ClientRound consume`).
fn as_json(r: &ConsumerRecord) -> serde_json::Value {
    let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
    let headers: Vec<serde_json::Value> = r
        .headers
        .iter()
        .map(|h| serde_json::json!([String::from_utf8_lossy(&h.key), text(h.value.as_deref())]))
        .collect();
    serde_json::json!({ "offset": r.offset, "key": text(r.key.as_deref()), "value": text(r.value.as_deref()), "headers": headers })
}

/// Reads partition 0 from the beginning until the end of the log (as the isolation level
/// sees it).
async fn read_to_end(bootstrap: &str, topic: &str, isolation: IsolationLevel) -> Vec<ConsumerRecord> {
    let config = ConsumerConfig::new(bootstrap).isolation_level(isolation).auto_offset_reset(OffsetReset::Earliest);
    let consumer = Consumer::new(config).await.unwrap();
    let tp = TopicPartition::new(topic, 0);
    consumer.assign([tp.clone()]).await.unwrap();
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while consumer.current_lag(&tp) != Some(0) && tokio::time::Instant::now() < deadline {
        out.extend(consumer.poll(Duration::from_millis(500)).await.unwrap());
    }
    consumer.close().await.unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_exactly_what_kafkas_consumer_reads_in_both_isolation_levels() {
    let Some(kafka) = kafka() else { return };
    logs();
    let bootstrap = kafka.bootstrap();
    create(&bootstrap, "isolation", 1).await;
    let produced = tokio::task::spawn_blocking({
        let bootstrap = bootstrap.clone();
        move || java_client(&["produce", &bootstrap, "isolation", "40"]).unwrap()
    })
    .await
    .unwrap();
    assert!(produced.status.success(), "{}", String::from_utf8_lossy(&produced.stderr));
    // Five codecs of 40, then 40 committed and 40 aborted transactional records.
    for (isolation, name, expected) in [
        (IsolationLevel::ReadCommitted, "read_committed", 240),
        (IsolationLevel::ReadUncommitted, "read_uncommitted", 280),
    ] {
        let java = tokio::task::spawn_blocking({
            let bootstrap = bootstrap.clone();
            move || java_client(&["consume", &bootstrap, "isolation", &expected.to_string(), name]).unwrap()
        })
        .await
        .unwrap();
        let theirs: Vec<serde_json::Value> =
            String::from_utf8_lossy(&java.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let ours: Vec<serde_json::Value> =
            read_to_end(&bootstrap, "isolation", isolation).await.iter().map(as_json).collect();
        assert_eq!(theirs.len(), expected, "{name}: Kafka's consumer");
        assert_eq!(ours, theirs, "{name}");
        let aborted = ours.iter().filter(|r| r["value"].as_str().is_some_and(|v| v.contains("aborted"))).count();
        assert_eq!(aborted, if isolation == IsolationLevel::ReadCommitted { 0 } else { 40 });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_sessions_go_incremental_and_lose_nothing() {
    let Some(kafka) = kafka() else { return };
    let bootstrap = kafka.bootstrap();
    create(&bootstrap, "sessions", 4).await;
    let writer = writer(&bootstrap).await;
    let consumer = Consumer::new(config(&bootstrap).fetch_max_wait(Duration::from_millis(50))).await.unwrap();
    consumer.assign(partitions("sessions", 4)).await.unwrap();
    let mut read = Vec::new();
    // Records arrive in some partitions while others stay idle: the session sends only what
    // changed.
    for round in 0..10u64 {
        produce(&writer, "sessions", (round % 4) as i32, round * 10, round * 10 + 10, 10).await;
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        while read.len() < ((round + 1) * 10) as usize && tokio::time::Instant::now() < until {
            read.extend(consumer.poll(Duration::from_millis(200)).await.unwrap());
        }
    }
    let metrics = consumer.metrics();
    assert_eq!(read.len(), 100);
    for (tp, offsets) in by_partition(&read) {
        let n = offsets.len() as i64;
        assert_eq!(offsets, (0..n).collect::<Vec<_>>(), "{tp}");
    }
    // One full fetch opens the session; every later one (however many the timing makes) is
    // incremental. Without sessions every fetch would be full.
    assert_eq!(metrics.fetches_full, 1, "{metrics:?}");
    assert!(metrics.fetches_incremental >= 9, "{metrics:?}");
    consumer.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kip848_pattern_is_evaluated_by_the_broker_new_topics_included() {
    let Some(kafka) = kafka() else { return };
    let bootstrap = kafka.bootstrap();
    create(&bootstrap, "regex-a", 2).await;
    create(&bootstrap, "regex-b", 1).await;
    create(&bootstrap, "unmatched", 1).await;
    let config = config(&bootstrap).group_id("regex-group").group_protocol(GroupProtocol::Consumer);
    let consumer = Consumer::new(config).await.unwrap();
    consumer.subscribe_pattern("regex-.*").await.unwrap();
    let topics = |c: &Consumer| c.assignment().iter().map(|tp| tp.topic.to_string()).collect::<BTreeSet<_>>();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while topics(&consumer).len() < 2 && tokio::time::Instant::now() < deadline {
        consumer.poll(Duration::from_millis(200)).await.unwrap();
    }
    assert_eq!(topics(&consumer), BTreeSet::from(["regex-a".to_string(), "regex-b".to_string()]));
    assert_eq!(consumer.assignment().len(), 3);
    create(&bootstrap, "regex-c", 1).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !topics(&consumer).contains("regex-c") && tokio::time::Instant::now() < deadline {
        consumer.poll(Duration::from_millis(200)).await.unwrap();
    }
    assert!(topics(&consumer).contains("regex-c"), "{:?}", consumer.assignment());
    assert!(!topics(&consumer).contains("unmatched"));
    consumer.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_member_restarts_into_its_place_without_a_rebalance() {
    let Some(kafka) = kafka() else { return };
    let bootstrap = kafka.bootstrap();
    create(&bootstrap, "static", 4).await;
    let member = |instance: &str| {
        config(&bootstrap)
            .group_id("static-group")
            .group_instance_id(instance)
            .session_timeout(Duration::from_secs(30))
            .heartbeat_interval(Duration::from_millis(500))
    };
    let a = Consumer::new(member("a")).await.unwrap();
    a.subscribe(["static"]).await.unwrap();
    let b = Consumer::new(member("b")).await.unwrap();
    b.subscribe(["static"]).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while (a.assignment().len() != 2 || b.assignment().len() != 2) && tokio::time::Instant::now() < deadline {
        let _ = tokio::join!(a.poll(Duration::from_millis(100)), b.poll(Duration::from_millis(100)));
    }
    assert_eq!((a.assignment().len(), b.assignment().len()), (2, 2));
    let (held, generation) = (b.assignment(), b.group_metadata().unwrap().generation_id);
    // b goes away without leaving (a static member keeps its place) and comes back.
    b.close().await.unwrap();
    let b = Consumer::new(member("b")).await.unwrap();
    b.subscribe(["static"]).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while b.assignment().is_empty() && tokio::time::Instant::now() < deadline {
        let _ = tokio::join!(a.poll(Duration::from_millis(100)), b.poll(Duration::from_millis(100)));
    }
    assert_eq!(b.assignment(), held, "the same partitions back");
    assert_eq!(b.group_metadata().unwrap().generation_id, generation, "no rebalance: the same generation");
    assert_eq!(a.group_metadata().unwrap().generation_id, generation);
    a.close().await.unwrap();
    b.close().await.unwrap();
}
