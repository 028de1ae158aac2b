//! The Control seam with our own client: injected errors, dropped connections, requests seen
//! decoded, nodes killed and restarted, and behaving as older Kafka releases.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kwire::messages::{ApiKey, RequestKind};
use kwire::{ErrorCode, Records};
use kwire_connection::{requests, ClientConfig, Cluster};
use kwire_fake::{Action, FakeCluster, FakeConfig, Times};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

fn batch(value: &str) -> Records {
    let mut builder = BatchBuilder::new(BatchOptions::new(2, Compression::None)).unwrap();
    builder.append(1_700_000_000_000, None, Some(value.as_bytes()), &[]).unwrap();
    Records::from_bytes(builder.build().unwrap())
}

async fn connect(fake: &FakeCluster) -> Cluster {
    let bootstrap = fake.bootstrap_servers();
    let servers: Vec<&str> = bootstrap.split(',').collect();
    Cluster::connect(&servers, ClientConfig::default().request_timeout(Duration::from_secs(5))).await.unwrap()
}

#[tokio::test]
async fn an_injected_not_leader_is_retried_and_nothing_is_written_twice() {
    let fake = FakeCluster::start(FakeConfig::default().nodes(2)).await.unwrap();
    fake.create_topic("orders", 2).unwrap();
    let cluster = connect(&fake).await;
    fake.fail(ApiKey::Produce, Times::N(2), ErrorCode::NOT_LEADER_OR_FOLLOWER).unwrap();
    let written = cluster.produce("orders", 1, batch("a"), -1, Duration::from_secs(5)).await.unwrap();
    assert_eq!(written.base_offset, 0);
    assert_eq!(fake.batches("orders", 1).unwrap().len(), 1, "the failed attempts wrote nothing");
    // An API whose responses carry no error code cannot be failed.
    assert!(fake.fail(ApiKey::ApiVersions, Times::Once, ErrorCode::NONE).is_err());
}

#[tokio::test]
async fn a_dropped_connection_fails_the_request_and_the_next_one_reconnects() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    fake.create_topic("events", 1).unwrap();
    let cluster = connect(&fake).await;
    cluster.produce("events", 0, batch("a"), -1, Duration::from_secs(5)).await.unwrap();
    let id = cluster.topic_id("events").await.unwrap();
    fake.intercept(ApiKey::Fetch, Times::Once, |_| Action::Drop);
    let leader = cluster.leader("events", 0).await.unwrap();
    assert!(leader.send(requests::fetch("events", id, 0, 0)).await.is_err(), "the connection was dropped");
    let leader = cluster.leader("events", 0).await.unwrap();
    let fetched = leader.send(requests::fetch("events", id, 0, 0)).await.unwrap();
    assert_eq!(fetched.responses[0].partitions[0].error_code, ErrorCode::NONE);
}

#[tokio::test]
async fn a_hook_sees_requests_decoded_until_removed() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    let cluster = connect(&fake).await;
    let acks_seen = Arc::new(AtomicUsize::new(0));
    let seen = acks_seen.clone();
    let hook = fake.intercept(ApiKey::Produce, Times::Always, move |r| {
        if let RequestKind::Produce(p) = r.request {
            assert_eq!(p.acks, -1);
            seen.fetch_add(1, Ordering::Relaxed);
        }
        Action::Pass
    });
    cluster.produce("seen", 0, batch("a"), -1, Duration::from_secs(5)).await.unwrap();
    cluster.produce("seen", 0, batch("b"), -1, Duration::from_secs(5)).await.unwrap();
    assert_eq!(acks_seen.load(Ordering::Relaxed), 2);
    assert!(fake.remove_hook(hook));
    cluster.produce("seen", 0, batch("c"), -1, Duration::from_secs(5)).await.unwrap();
    assert_eq!(acks_seen.load(Ordering::Relaxed), 2, "a removed hook sees nothing");
    assert_eq!(fake.end_offset("seen", 0), Some(3));
}

#[tokio::test]
async fn a_killed_leader_moves_its_partitions_and_comes_back() {
    let fake = FakeCluster::start(FakeConfig::default().nodes(3)).await.unwrap();
    let cluster = connect(&fake).await;
    let create = kwire::messages::CreateTopicsRequest {
        topics: vec![kwire::messages::create_topics_request::CreatableTopic {
            name: kwire::TopicName("replicated".into()),
            num_partitions: 1,
            replication_factor: 2,
            ..Default::default()
        }],
        ..Default::default()
    };
    cluster.any().await.unwrap().send(create).await.unwrap();
    cluster.produce("replicated", 0, batch("a"), -1, Duration::from_secs(5)).await.unwrap();
    let leader = cluster.leader("replicated", 0).await.unwrap().peer().port();
    let killed = fake.listen_addrs().iter().position(|a| a.port() == leader).unwrap() as i32;
    assert!(fake.kill_node(killed).await);
    assert!(!fake.live_nodes().contains(&killed));
    // Our client finds the new leader through Metadata after its connection to the old one fails.
    let moved = cluster.produce("replicated", 0, batch("b"), -1, Duration::from_secs(10)).await.unwrap();
    assert_eq!(moved.base_offset, 1);
    fake.restart_node(killed).await.unwrap();
    assert!(fake.live_nodes().contains(&killed));
    let added = fake.add_node().await.unwrap();
    assert_eq!(fake.live_nodes().len(), 4);
    assert!(fake.remove_node(added).await);
    assert_eq!(fake.live_nodes().len(), 3);
}

/// Behaving as Kafka 2.8 and 3.9 from their kafka-clients jars (which `scripts/kafka-release
/// --minors` fetches): our client negotiates what those brokers would have offered.
#[tokio::test]
async fn behaves_as_older_releases() {
    let jars = kwire_codegen::kafka_jars_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    for (release, produce, fetch, metadata) in [("2.8.2", 9, 12, 11), ("3.9.2", 11, 17, 12), ("4.4.0", 13, 18, 13)] {
        let jar = jars.join(release).join(format!("kafka-clients-{release}.jar"));
        if !jar.is_file() {
            assert!(std::env::var_os("CI").is_none(), "{} is missing (scripts/kafka-release --minors)", jar.display());
            eprintln!("{} missing: skipped", jar.display());
            continue;
        }
        let fake = FakeCluster::start(FakeConfig::default().behave_as(&jar).unwrap()).await.unwrap();
        let cluster = connect(&fake).await;
        let client = cluster.any().await.unwrap();
        let versions =
            [ApiKey::Produce, ApiKey::Fetch, ApiKey::Metadata].map(|api| client.version_of(api).unwrap_or(-1));
        assert_eq!(versions, [produce, fetch, metadata], "as Kafka {release}");
        // The produce and fetch helpers fit the version negotiated.
        let written = cluster.produce("old", 0, batch("a"), -1, Duration::from_secs(5)).await.unwrap();
        let leader = cluster.leader("old", 0).await.unwrap();
        let id = cluster.topic_id("old").await.unwrap();
        let fetched = leader.send(requests::fetch("old", id, 0, written.base_offset)).await.unwrap();
        assert_eq!(fetched.responses[0].partitions[0].error_code, ErrorCode::NONE, "as Kafka {release}");
    }
}

#[tokio::test]
async fn share_and_consumer_group_heartbeats_can_be_failed_once() {
    use kwire::messages::{ConsumerGroupHeartbeatRequest, ShareGroupHeartbeatRequest};
    use kwire::{GroupId, StrBytes, TopicName};
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    fake.create_topic("work", 1).unwrap();
    let cluster = connect(&fake).await;
    let any = cluster.any().await.unwrap();
    let share = || ShareGroupHeartbeatRequest {
        group_id: GroupId(StrBytes::from_static_str("sharers")),
        member_id: StrBytes::from_static_str("SSSSSSSSSSSSSSSSSSSSSS"),
        subscribed_topic_names: Some(vec![TopicName(StrBytes::from_static_str("work"))]),
        ..Default::default()
    };
    let consumer = || ConsumerGroupHeartbeatRequest {
        group_id: GroupId(StrBytes::from_static_str("consumers")),
        member_id: StrBytes::from_static_str("CCCCCCCCCCCCCCCCCCCCCC"),
        rebalance_timeout_ms: 30_000,
        subscribed_topic_names: Some(vec![TopicName(StrBytes::from_static_str("work"))]),
        topic_partitions: Some(Vec::new()),
        ..Default::default()
    };
    for api in [ApiKey::ShareGroupHeartbeat, ApiKey::ConsumerGroupHeartbeat] {
        fake.fail(api, Times::Once, ErrorCode::COORDINATOR_LOAD_IN_PROGRESS).unwrap();
    }
    assert_eq!(any.send(share()).await.unwrap().error_code, ErrorCode::COORDINATOR_LOAD_IN_PROGRESS);
    assert_eq!(any.send(consumer()).await.unwrap().error_code, ErrorCode::COORDINATOR_LOAD_IN_PROGRESS);
    let joined = any.send(share()).await.unwrap();
    assert_eq!((joined.error_code, joined.member_epoch), (ErrorCode::NONE, 1), "{joined:?}");
    let joined = any.send(consumer()).await.unwrap();
    assert_eq!(joined.error_code, ErrorCode::NONE, "{joined:?}");
}
