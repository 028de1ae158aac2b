//! One namespace of group ids across the kinds of group: an id a group of one kind has is
//! refused to the others with Kafka's errors and messages, an empty classic or consumer group
//! gives way to the other kind, and the offsets committed under an id outlive both
//! conversions and go with DeleteGroups. Observed: every refusal (heartbeats, JoinGroup,
//! OffsetCommit, the describes of each kind), the conversions' answers, and the offsets.
//!
//! Not observed: a share member's join (what it is assigned depends on when Kafka's share
//! coordinator has the group), and a classic member joining a non-empty consumer group, which
//! Kafka takes into the consumer group and the fake refuses (see the README's "Not yet").

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use kwire::messages::join_group_request::JoinGroupRequestProtocol;
use kwire::messages::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
use kwire::messages::offset_fetch_request::{OffsetFetchRequestGroup, OffsetFetchRequestTopics};
use kwire::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, DescribeGroupsRequest,
    JoinGroupRequest, OffsetCommitRequest, OffsetFetchRequest, ShareGroupDescribeRequest, ShareGroupHeartbeatRequest,
};
use kwire::{ErrorCode, GroupId, StrBytes, TopicName};

use super::{Script, To};

type Steps<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Member ids, chosen by the client (ConsumerGroupHeartbeat v1, ShareGroupHeartbeat).
const CONSUMER: &str = "CCCCCCCCCCCCCCCCCCCCCC";
const SHARER: &str = "SSSSSSSSSSSSSSSSSSSSSS";

fn group_id(group: &str) -> GroupId {
    GroupId(StrBytes::from(group.to_owned()))
}

/// A simple group's commit (generation -1, no member) of offset 7 on partition 0 of `topic`.
fn commit(group: &str, topic: &str) -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: group_id(group),
        generation_id_or_member_epoch: -1,
        topics: vec![OffsetCommitRequestTopic {
            name: TopicName(StrBytes::from(topic.to_owned())),
            partitions: vec![OffsetCommitRequestPartition {
                partition_index: 0,
                committed_offset: 7,
                committed_leader_epoch: -1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// What `group` committed on partition 0 of `topic`, asked as an admin (no member).
fn fetch(group: &str, topic: &str) -> OffsetFetchRequest {
    OffsetFetchRequest {
        groups: vec![OffsetFetchRequestGroup {
            group_id: group_id(group),
            member_epoch: -1,
            topics: Some(vec![OffsetFetchRequestTopics {
                name: TopicName(StrBytes::from(topic.to_owned())),
                partition_indexes: vec![0].into(),
                ..Default::default()
            }]),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A KIP-848 member joining (epoch 0, subscribed to `topic`) or leaving (-1) `group`.
fn consumer_heartbeat(group: &str, topic: &str, epoch: i32) -> ConsumerGroupHeartbeatRequest {
    let joining = epoch == 0;
    ConsumerGroupHeartbeatRequest {
        group_id: group_id(group),
        member_id: StrBytes::from_static_str(CONSUMER),
        member_epoch: epoch,
        rebalance_timeout_ms: if joining { 30_000 } else { -1 },
        subscribed_topic_names: joining.then(|| vec![TopicName(StrBytes::from(topic.to_owned()))]),
        server_assignor: joining.then(|| StrBytes::from_static_str("uniform")),
        topic_partitions: joining.then(Vec::new),
        ..Default::default()
    }
}

/// A share group member joining (epoch 0) or leaving (-1) `group`, subscribed to `topic`.
fn share_heartbeat(group: &str, topic: &str, epoch: i32) -> ShareGroupHeartbeatRequest {
    ShareGroupHeartbeatRequest {
        group_id: group_id(group),
        member_id: StrBytes::from_static_str(SHARER),
        member_epoch: epoch,
        subscribed_topic_names: (epoch == 0).then(|| vec![TopicName(StrBytes::from(topic.to_owned()))]),
        ..Default::default()
    }
}

/// A new classic member's JoinGroup (v9: asked to join again with the id it is given).
fn join(group: &str) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: group_id(group),
        session_timeout_ms: 30_000,
        rebalance_timeout_ms: 30_000,
        protocol_type: StrBytes::from_static_str("consumer"),
        protocols: vec![JoinGroupRequestProtocol {
            name: StrBytes::from_static_str("range"),
            metadata: bytes::Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn describe_classic(group: &str) -> DescribeGroupsRequest {
    DescribeGroupsRequest { groups: vec![group_id(group)], ..Default::default() }
}

fn describe_consumer(group: &str) -> ConsumerGroupDescribeRequest {
    ConsumerGroupDescribeRequest { group_ids: vec![group_id(group)], ..Default::default() }
}

fn describe_share(group: &str) -> ShareGroupDescribeRequest {
    ShareGroupDescribeRequest { group_ids: vec![group_id(group)], ..Default::default() }
}

fn delete(group: &str) -> DeleteGroupsRequest {
    DeleteGroupsRequest { groups_names: vec![group_id(group)], ..Default::default() }
}

/// How long Kafka may take to settle a heartbeat that is waited for.
const WAIT: Duration = Duration::from_secs(20);

pub fn one_namespace(s: &mut Script) -> Steps<'_> {
    Box::pin(async move {
        let topic = s.create_topic("in", 1).await;
        let group = s.name("simple");
        let to = To::Group(&group);
        // A commit from outside any group makes a simple classic group: no other kind's.
        // (Its coordinator answers per partition: waited for here, as the runner waits for one
        // that answers at the top.)
        let settled = |r: &kwire::messages::OffsetCommitResponse| {
            r.topics.iter().flat_map(|t| &t.partitions).all(|p| !matches!(p.error_code.0, 14..=16))
        };
        s.send_until("a simple group commits", to, commit(&group, &topic), 9, WAIT, settled).await;
        s.send("a share member is refused", to, share_heartbeat(&group, &topic, 0), 1).await;
        s.send("not a consumer group to describe", to, describe_consumer(&group), 1).await;
        s.send("not a share group to describe", to, describe_share(&group), 1).await;
        // Empty, it gives way to a KIP-848 member; its offsets stay.
        s.send("a consumer member joins", to, consumer_heartbeat(&group, &topic, 0), 1).await;
        s.send("the offsets stay", to, fetch(&group, &topic), 9).await;
        s.send("not a classic group to describe", to, describe_classic(&group), 6).await;
        s.send("nor a share member's", to, share_heartbeat(&group, &topic, 0), 1).await;
        s.send("a non-empty group is not deleted", to, delete(&group), 2).await;
        s.send("the consumer member leaves", to, consumer_heartbeat(&group, &topic, -1), 1).await;
        // Empty again, it gives way to a classic member; its offsets stay.
        let joined = s.send("a classic member joins", to, join(&group), 9).await;
        s.alias("memberId", joined.member_id.to_string(), "classic member");
        s.send("the offsets stay again", to, fetch(&group, &topic), 9).await;
        s.send("deleted", to, delete(&group), 2).await;
        s.send("the offsets are gone", to, fetch(&group, &topic), 9).await;

        // A share group's id is no other kind's, empty or not.
        let share = s.name("share");
        let to = To::Group(&share);
        s.request_until(to, share_heartbeat(&share, &topic, 0), 1, WAIT, |r| r.error_code == ErrorCode::NONE).await;
        s.send("not for a consumer member", to, consumer_heartbeat(&share, &topic, 0), 1).await;
        s.send("not for a classic member", to, join(&share), 9).await;
        s.send("no offsets of a consumer group", to, commit(&share, &topic), 9).await;
        s.send("not a classic group", to, describe_classic(&share), 6).await;
        s.send("not a consumer group", to, describe_consumer(&share), 1).await;
        s.send("the share member leaves", to, share_heartbeat(&share, &topic, -1), 1).await;
        s.send("still not for a consumer member", to, consumer_heartbeat(&share, &topic, 0), 1).await;
        s.send("the share group is deleted", to, delete(&share), 2).await;
    })
}
