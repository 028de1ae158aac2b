//! Groups of our consumers against the in-process cluster: classic with each assignor, and
//! KIP-848; partitions shared, handed over as members join and leave, every record read.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use kwire_client::consumer::{AssignmentStrategy, GroupProtocol};

async fn two_members_share_then_one_takes_over(protocol: GroupProtocol, strategy: AssignmentStrategy) {
    let fake = fake(3).await;
    fake.create_topic("events", 6).unwrap();
    let bootstrap = fake.bootstrap_servers();
    let writer = writer(&bootstrap).await;
    for p in 0..6 {
        produce(&writer, "events", p, 0, 100, 50).await;
    }
    let group = format!("g-{strategy:?}-{protocol:?}");
    let config = || {
        config(&bootstrap)
            .group_id(group.clone())
            .group_protocol(protocol)
            .partition_assignment_strategy([strategy])
            .heartbeat_interval(Duration::from_millis(200))
            .session_timeout(Duration::from_secs(6))
    };
    let a = Running::start(config(), &["events"]).await;
    assert!(eventually(Duration::from_secs(20), || a.records() >= 600).await, "a alone reads everything");
    let b = Running::start(config(), &["events"]).await;
    let shared = eventually(Duration::from_secs(30), || a.held().len() == 3 && b.held().len() == 3).await;
    assert!(shared, "a holds {:?}, b holds {:?}", a.held(), b.held());
    for p in 0..6 {
        produce(&writer, "events", p, 100, 200, 50).await;
    }
    assert!(eventually(Duration::from_secs(20), || a.records() + b.records() >= 1200).await);
    let a_log = a.stop(true).await;
    assert!(eventually(Duration::from_secs(30), || b.held().len() == 6).await, "b takes over: {:?}", b.held());
    let before = b.records();
    for p in 0..6 {
        produce(&writer, "events", p, 200, 300, 50).await;
    }
    assert!(eventually(Duration::from_secs(20), || b.records() >= before + 600).await);
    let b_log = b.stop(true).await;
    let mut seen: BTreeSet<(i32, i64)> = BTreeSet::new();
    for log in [&a_log, &b_log] {
        assert!(log.errors.is_empty(), "{:?}", log.errors);
        for (tp, offsets) in by_partition(&log.records) {
            assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{tp} read out of order: {offsets:?}");
        }
        seen.extend(log.records.iter().map(|r| (r.partition, r.offset)));
    }
    assert_eq!(seen.len(), 1800, "every record read");
    fake.shutdown().await;
}

#[tokio::test]
async fn classic_range() {
    two_members_share_then_one_takes_over(GroupProtocol::Classic, AssignmentStrategy::Range).await;
}

#[tokio::test]
async fn classic_roundrobin() {
    two_members_share_then_one_takes_over(GroupProtocol::Classic, AssignmentStrategy::RoundRobin).await;
}

#[tokio::test]
async fn classic_cooperative_sticky() {
    two_members_share_then_one_takes_over(GroupProtocol::Classic, AssignmentStrategy::CooperativeSticky).await;
}

#[tokio::test]
async fn kip848() {
    two_members_share_then_one_takes_over(GroupProtocol::Consumer, AssignmentStrategy::Range).await;
}

/// A pattern never matches Kafka's internal topics: the in-process cluster lists
/// `__consumer_offsets` (is_internal) once a group committed, as Kafka does, and a member
/// subscribed to `.*` reads only the other topics.
#[tokio::test]
async fn a_pattern_never_matches_internal_topics() {
    let fake = fake(1).await;
    fake.create_topic("a1", 1).unwrap();
    let bootstrap = fake.bootstrap_servers();
    let writer = writer(&bootstrap).await;
    produce(&writer, "a1", 0, 0, 10, 10).await;
    let first = kwire_client::consumer::Consumer::new(config(&bootstrap).group_id("committer")).await.unwrap();
    first.subscribe(["a1"]).await.unwrap();
    assert_eq!(read(&first, 10, Duration::from_secs(20)).await.unwrap().len(), 10);
    first.commit_sync().await.unwrap();
    first.close().await.unwrap();

    writer.refresh_all().await.unwrap();
    let metadata = writer.metadata();
    let internal = metadata.topics.get("__consumer_offsets").expect("listed once a group committed");
    assert!(internal.is_internal && internal.partitions.len() == 50);
    assert!(!metadata.topics.contains_key("__transaction_state"), "no transaction ran");
    assert!(!metadata.topics["a1"].is_internal);

    let member = kwire_client::consumer::Consumer::new(config(&bootstrap).group_id("everything")).await.unwrap();
    member.subscribe_pattern(".*").await.unwrap();
    assert_eq!(read(&member, 10, Duration::from_secs(20)).await.unwrap().len(), 10);
    let topics: BTreeSet<String> = member.assignment().iter().map(|tp| tp.topic.to_string()).collect();
    assert_eq!(topics, BTreeSet::from(["a1".to_string()]));
    assert_eq!(member.subscription(), BTreeSet::from(["a1".to_string()]));
    member.close().await.unwrap();
    fake.shutdown().await;
}

async fn poll_both(a: &kwire_client::consumer::Consumer, b: &kwire_client::consumer::Consumer) {
    let _ = tokio::join!(a.poll(Duration::from_millis(50)), b.poll(Duration::from_millis(50)));
}

/// KIP-345 and KIP-814: the group's leader, a static member, restarts and Kafka hands it its
/// place back without a rebalance (skipping the assignment); it must not rejoin by itself then.
#[tokio::test]
async fn a_restarted_static_leader_takes_its_place_back_without_a_rebalance() {
    use kwire_client::consumer::Consumer;
    let fake = fake(1).await;
    fake.create_topic("static", 4).unwrap();
    let bootstrap = fake.bootstrap_servers();
    let member = |instance: &str| {
        config(&bootstrap)
            .group_id("static-leader")
            .group_instance_id(instance)
            .session_timeout(Duration::from_secs(30))
            .heartbeat_interval(Duration::from_millis(100))
    };
    // The leader joins first, alone.
    let leader = Consumer::new(member("leader")).await.unwrap();
    leader.subscribe(["static"]).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while leader.assignment().len() != 4 && tokio::time::Instant::now() < deadline {
        let _ = leader.poll(Duration::from_millis(50)).await;
    }
    let other = Consumer::new(member("other")).await.unwrap();
    other.subscribe(["static"]).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while (leader.assignment().len() != 2 || other.assignment().len() != 2) && tokio::time::Instant::now() < deadline {
        poll_both(&leader, &other).await;
    }
    let (held, generation) = (leader.assignment(), leader.group_metadata().unwrap().generation_id);
    assert_eq!(held.len(), 2);
    leader.close().await.unwrap();
    let leader = Consumer::new(member("leader")).await.unwrap();
    leader.subscribe(["static"]).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while leader.assignment().is_empty() && tokio::time::Instant::now() < deadline {
        poll_both(&leader, &other).await;
    }
    // A second of heartbeats and polls: a leader that rejoined by itself would show here.
    for _ in 0..10 {
        poll_both(&leader, &other).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(leader.assignment(), held, "the same partitions back");
    assert_eq!(leader.group_metadata().unwrap().generation_id, generation, "no rebalance");
    assert_eq!(other.group_metadata().unwrap().generation_id, generation);
    leader.close().await.unwrap();
    other.close().await.unwrap();
    fake.shutdown().await;
}
