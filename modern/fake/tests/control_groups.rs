//! The Control seam on groups, through our own client's requests: a forced rebalance and an
//! expired member, in a classic group (JoinGroup, SyncGroup, Heartbeat) and in a KIP-848 group
//! (ConsumerGroupHeartbeat).

use std::time::Duration;

use kwire::messages::join_group_request::JoinGroupRequestProtocol;
use kwire::messages::sync_group_request::SyncGroupRequestAssignment;
use kwire::messages::{ConsumerGroupHeartbeatRequest, HeartbeatRequest, JoinGroupRequest, SyncGroupRequest};
use kwire::{ErrorCode, TopicName};
use kwire_connection::cluster::CoordinatorType;
use kwire_connection::{Client, ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};

async fn start(group: &str) -> (FakeCluster, Client) {
    let config = FakeConfig::default().nodes(2).group_initial_rebalance_delay(Duration::ZERO);
    let fake = FakeCluster::start(config).await.unwrap();
    fake.create_topic("events", 4).unwrap();
    let bootstrap = fake.bootstrap_servers();
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default()).await.unwrap();
    let coordinator = cluster.coordinator(CoordinatorType::Group, group).await.unwrap();
    (fake, coordinator)
}

async fn heartbeat(coordinator: &Client, group: &str, member: &str, generation: i32) -> ErrorCode {
    let beat = HeartbeatRequest {
        group_id: group.into(),
        generation_id: generation,
        member_id: member.into(),
        ..Default::default()
    };
    coordinator.send(beat).await.unwrap().error_code
}

#[tokio::test]
async fn a_classic_group_is_rebalanced_and_its_member_expired_on_demand() {
    let group = "classic";
    let (fake, coordinator) = start(group).await;
    let join = |member_id: &str| JoinGroupRequest {
        group_id: group.into(),
        session_timeout_ms: 30_000,
        rebalance_timeout_ms: 30_000,
        member_id: member_id.into(),
        protocol_type: "consumer".into(),
        protocols: vec![JoinGroupRequestProtocol { name: "range".into(), ..Default::default() }],
        ..Default::default()
    };
    let member = coordinator.send(join("")).await.unwrap().member_id.to_string();
    let joined = coordinator.send(join(&member)).await.unwrap();
    assert_eq!(joined.error_code, ErrorCode::NONE);
    let sync = SyncGroupRequest {
        group_id: group.into(),
        generation_id: joined.generation_id,
        member_id: member.as_str().into(),
        assignments: vec![SyncGroupRequestAssignment { member_id: member.as_str().into(), ..Default::default() }],
        ..Default::default()
    };
    // From v5 the protocol must be named, as Kafka's request handler requires.
    let unnamed = coordinator.send(sync.clone()).await.unwrap();
    assert_eq!(unnamed.error_code, ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
    let sync = SyncGroupRequest { protocol_type: Some("consumer".into()), protocol_name: Some("range".into()), ..sync };
    assert_eq!(coordinator.send(sync).await.unwrap().error_code, ErrorCode::NONE);
    assert_eq!(heartbeat(&coordinator, group, &member, joined.generation_id).await, ErrorCode::NONE);
    assert_eq!(fake.group_members(group), std::slice::from_ref(&member));

    assert!(fake.force_rebalance(group));
    assert_eq!(heartbeat(&coordinator, group, &member, joined.generation_id).await, ErrorCode::REBALANCE_IN_PROGRESS);
    let rejoined = coordinator.send(join(&member)).await.unwrap();
    assert_eq!(rejoined.generation_id, joined.generation_id + 1, "a new generation");

    assert!(fake.expire_member(group, &member));
    assert!(!fake.expire_member(group, &member), "gone already");
    assert_eq!(heartbeat(&coordinator, group, &member, rejoined.generation_id).await, ErrorCode::UNKNOWN_MEMBER_ID);
    assert!(fake.group_members(group).is_empty());
    fake.shutdown().await;
}

#[tokio::test]
async fn a_consumer_group_gets_a_new_epoch_and_loses_its_member_on_demand() {
    let group = "kip-848";
    let (fake, coordinator) = start(group).await;
    let beat = |member_id: &str, member_epoch: i32| ConsumerGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: member_id.into(),
        member_epoch,
        rebalance_timeout_ms: 30_000,
        subscribed_topic_names: (member_epoch == 0).then(|| vec![TopicName::from("events")]),
        // Joining, it owns nothing (Kafka refuses a join without the empty list).
        topic_partitions: (member_epoch == 0).then(Vec::new),
        ..Default::default()
    };
    let joined = coordinator.send_at(beat("m-1", 0), 1).await.unwrap();
    assert_eq!((joined.error_code, joined.member_epoch), (ErrorCode::NONE, 2), "a new group is at 1");
    assert_eq!(joined.assignment.map(|a| a.topic_partitions[0].partitions.len()), Some(4), "the only member takes all");

    assert!(fake.force_rebalance(group));
    let next = coordinator.send_at(beat("m-1", 2), 1).await.unwrap();
    assert_eq!((next.error_code, next.member_epoch), (ErrorCode::NONE, 3), "a new epoch, the same partitions");

    assert!(fake.expire_member(group, "m-1"));
    let gone = coordinator.send_at(beat("m-1", 3), 1).await.unwrap();
    assert_eq!(gone.error_code, ErrorCode::UNKNOWN_MEMBER_ID);
    fake.shutdown().await;
}
