//! Share groups (KIP-932) through our own client's requests: ShareGroupHeartbeat's assignment,
//! ShareFetch's acquired records and share session epochs, acknowledgements (accept, release,
//! reject) on ShareFetch and ShareAcknowledge, acquisition locks that run out, the delivery
//! limit, members that leave or expire, group configs, and the admin side (ListGroups,
//! ShareGroupDescribe, DescribeShareGroupOffsets, DeleteGroups).

use std::time::Duration;

use kwire::messages::describe_configs_request::DescribeConfigsResource;
use kwire::messages::describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup;
use kwire::messages::incremental_alter_configs_request::{AlterConfigsResource, AlterableConfig};
use kwire::messages::share_acknowledge_request::{self, AcknowledgePartition, AcknowledgeTopic};
use kwire::messages::share_fetch_request::{AcknowledgementBatch, FetchPartition, FetchTopic};
use kwire::messages::{
    ApiVersionsRequest, DeleteGroupsRequest, DescribeConfigsRequest, DescribeShareGroupOffsetsRequest,
    IncrementalAlterConfigsRequest, ListGroupsRequest, ShareAcknowledgeRequest, ShareFetchRequest, ShareFetchResponse,
    ShareGroupDescribeRequest, ShareGroupHeartbeatRequest,
};
use kwire::{ErrorCode, GroupId, Records, StrBytes, TopicName, Uuid};
use kwire_connection::{Client, ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

const TOPIC: &str = "work";
const GROUP: &str = "sharers";
const ACCEPT: i8 = 1;
const RELEASE: i8 = 2;
const REJECT: i8 = 3;
const RENEW: i8 = 4;

struct Setup {
    fake: FakeCluster,
    cluster: Cluster,
    /// The only node: coordinator and leader.
    node: Client,
    topic_id: Uuid,
}

/// One node (so that it coordinates the group and leads every partition), a topic of
/// `partitions` partitions, a group reading from the earliest offset.
async fn setup(config: FakeConfig, partitions: i32) -> Setup {
    let fake = FakeCluster::start(config).await.unwrap();
    let topic_id = fake.create_topic(TOPIC, partitions).unwrap();
    let bootstrap = fake.bootstrap_servers();
    let cluster = Cluster::connect(&[bootstrap.as_str()], ClientConfig::default()).await.unwrap();
    let node = cluster.any().await.unwrap();
    let s = Setup { fake, cluster, node, topic_id };
    assert_eq!(s.set_group_config("share.auto.offset.reset", "earliest").await, ErrorCode::NONE);
    s
}

impl Setup {
    /// One batch of `n` records on `partition`.
    async fn produce(&self, partition: i32, n: usize) {
        let mut builder = BatchBuilder::new(BatchOptions::new(2, Compression::None)).unwrap();
        for i in 0..n {
            builder.append(1_700_000_000_000, None, Some(format!("v{i}").as_bytes()), &[]).unwrap();
        }
        let records = Records::from_bytes(builder.build().unwrap());
        self.cluster.produce(TOPIC, partition, records, -1, Duration::from_secs(5)).await.unwrap();
    }

    async fn set_group_config(&self, name: &str, value: &str) -> ErrorCode {
        let request = IncrementalAlterConfigsRequest {
            resources: vec![AlterConfigsResource {
                resource_type: 32,
                resource_name: StrBytes::from_static_str(GROUP),
                configs: vec![AlterableConfig {
                    name: StrBytes::from(name.to_string()),
                    config_operation: 0,
                    value: Some(StrBytes::from(value.to_string())),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        self.node.send(request).await.unwrap().responses[0].error_code
    }

    /// A heartbeat: (error, member epoch, assigned partitions if sent).
    async fn heartbeat(&self, member: &str, epoch: i32) -> (ErrorCode, i32, Option<Vec<i32>>) {
        let request = ShareGroupHeartbeatRequest {
            group_id: GroupId(StrBytes::from_static_str(GROUP)),
            member_id: StrBytes::from(member.to_string()),
            member_epoch: epoch,
            subscribed_topic_names: (epoch == 0).then(|| vec![TopicName(StrBytes::from_static_str(TOPIC))]),
            ..Default::default()
        };
        let r = self.node.send(request).await.unwrap();
        let assigned = r.assignment.map(|a| {
            let mut ps: Vec<i32> = a.topic_partitions.iter().flat_map(|t| t.partitions.iter()).collect();
            ps.sort();
            ps
        });
        (r.error_code, r.member_epoch, assigned)
    }

    /// A ShareFetch of `partitions` at session `epoch`, acknowledging `acks` (partition,
    /// first, last, types).
    async fn fetch(
        &self,
        member: &str,
        epoch: i32,
        partitions: &[i32],
        acks: &[(i32, i64, i64, Vec<i8>)],
        wait_ms: i32,
    ) -> ShareFetchResponse {
        let mut named: Vec<i32> = partitions.to_vec();
        named.extend(acks.iter().map(|a| a.0).filter(|p| !partitions.contains(p)));
        let request = ShareFetchRequest {
            group_id: Some(GroupId(StrBytes::from_static_str(GROUP))),
            member_id: Some(StrBytes::from(member.to_string())),
            share_session_epoch: epoch,
            max_wait_ms: wait_ms,
            min_bytes: 1,
            max_bytes: 1 << 20,
            max_records: 500,
            batch_size: 500,
            topics: vec![FetchTopic {
                topic_id: self.topic_id,
                partitions: named
                    .iter()
                    .map(|p| FetchPartition {
                        partition_index: *p,
                        acknowledgement_batches: acks
                            .iter()
                            .filter(|a| a.0 == *p)
                            .map(|(_, first, last, types)| AcknowledgementBatch {
                                first_offset: *first,
                                last_offset: *last,
                                acknowledge_types: types.clone().into(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        self.node.send(request).await.unwrap()
    }

    /// A ShareAcknowledge at session `epoch`: its top-level error and each partition's.
    async fn acknowledge(
        &self,
        member: &str,
        epoch: i32,
        acks: &[(i32, i64, i64, Vec<i8>)],
    ) -> (ErrorCode, Vec<ErrorCode>) {
        let request = ShareAcknowledgeRequest {
            group_id: Some(GroupId(StrBytes::from_static_str(GROUP))),
            member_id: Some(StrBytes::from(member.to_string())),
            share_session_epoch: epoch,
            topics: vec![AcknowledgeTopic {
                topic_id: self.topic_id,
                partitions: acks
                    .iter()
                    .map(|(p, first, last, types)| AcknowledgePartition {
                        partition_index: *p,
                        acknowledgement_batches: vec![share_acknowledge_request::AcknowledgementBatch {
                            first_offset: *first,
                            last_offset: *last,
                            acknowledge_types: types.clone().into(),
                            ..Default::default()
                        }],
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let r = self.node.send(request).await.unwrap();
        let codes = r.responses.iter().flat_map(|t| t.partitions.iter().map(|p| p.error_code)).collect();
        (r.error_code, codes)
    }

    /// Each share-partition's (start offset as stored, lag).
    async fn offsets(&self) -> Vec<(i32, i64, i64)> {
        let request = DescribeShareGroupOffsetsRequest {
            groups: vec![DescribeShareGroupOffsetsRequestGroup {
                group_id: GroupId(StrBytes::from_static_str(GROUP)),
                topics: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        let r = self.node.send(request).await.unwrap();
        r.groups[0]
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| (p.partition_index, p.start_offset, p.lag)))
            .collect()
    }
}

/// Each run of acquired records: (partition, first, last, delivery count).
fn acquired(r: &ShareFetchResponse) -> Vec<(i32, i64, i64, i16)> {
    assert_eq!(r.error_code, ErrorCode::NONE, "{r:?}");
    r.responses
        .iter()
        .flat_map(|t| t.partitions.iter())
        .flat_map(|p| {
            p.acquired_records.iter().map(|a| (p.partition_index, a.first_offset, a.last_offset, a.delivery_count))
        })
        .collect()
}

/// Each partition's acknowledgement error.
fn ack_errors(r: &ShareFetchResponse) -> Vec<ErrorCode> {
    r.responses.iter().flat_map(|t| t.partitions.iter().map(|p| p.acknowledge_error_code)).collect()
}

#[tokio::test]
async fn accepted_records_are_delivered_once() {
    let s = setup(FakeConfig::default(), 1).await;
    assert_eq!(s.heartbeat("a", 0).await, (ErrorCode::NONE, 1, Some(vec![0])));
    s.produce(0, 3).await;
    let first = s.fetch("a", 0, &[0], &[], 1000).await;
    assert_eq!(acquired(&first), [(0, 0, 2, 1)]);
    assert_eq!(first.acquisition_lock_timeout_ms, 30_000, "Kafka's default lock");
    // Locked: nothing more to hand out.
    assert_eq!(acquired(&s.fetch("a", 1, &[], &[], 0).await), []);
    // Renewing keeps them a's.
    assert_eq!(s.acknowledge("a", 2, &[(0, 0, 2, vec![RENEW])]).await, (ErrorCode::NONE, vec![ErrorCode::NONE]));
    assert_eq!(s.acknowledge("a", 3, &[(0, 0, 2, vec![ACCEPT])]).await, (ErrorCode::NONE, vec![ErrorCode::NONE]));
    assert_eq!(acquired(&s.fetch("a", 4, &[], &[], 0).await), []);
    // Accepted twice, or renewed once accepted: not acquired any more.
    assert_eq!(s.acknowledge("a", 5, &[(0, 0, 0, vec![ACCEPT])]).await.1, vec![ErrorCode::INVALID_RECORD_STATE]);
    assert_eq!(s.acknowledge("a", 6, &[(0, 1, 1, vec![RENEW])]).await.1, vec![ErrorCode::INVALID_RECORD_STATE]);
    // Nothing left; the stored start offset is one write behind, as Kafka's.
    assert_eq!(s.offsets().await, [(0, 0, 0)]);
    s.produce(0, 1).await;
    assert_eq!(acquired(&s.fetch("a", 7, &[], &[], 1000).await), [(0, 3, 3, 1)]);
    s.fake.shutdown().await;
}

#[tokio::test]
async fn released_records_come_back_and_rejected_ones_never() {
    let s = setup(FakeConfig::default(), 1).await;
    s.heartbeat("a", 0).await;
    s.produce(0, 3).await;
    assert_eq!(acquired(&s.fetch("a", 0, &[0], &[], 1000).await), [(0, 0, 2, 1)]);
    // Acknowledged on the next fetch: 0 accepted, 1 released, 2 rejected; 1 comes back at once.
    let next = s.fetch("a", 1, &[], &[(0, 0, 2, vec![ACCEPT, RELEASE, REJECT])], 1000).await;
    assert_eq!(ack_errors(&next), [ErrorCode::NONE]);
    assert_eq!(acquired(&next), [(0, 1, 1, 2)], "delivered a second time");
    let done = s.fetch("a", 2, &[], &[(0, 1, 1, vec![ACCEPT])], 0).await;
    assert_eq!(acquired(&done), [], "the rejected record is never delivered again");
    assert_eq!(s.offsets().await, [(0, 1, 0)], "stored at the released record, nothing left");
    s.fake.shutdown().await;
}

#[tokio::test]
async fn a_lock_that_runs_out_hands_the_records_out_again() {
    let config = FakeConfig::default().share_record_lock_duration(Duration::from_millis(300));
    let s = setup(config, 1).await;
    s.heartbeat("a", 0).await;
    s.heartbeat("b", 0).await;
    s.produce(0, 2).await;
    let first = s.fetch("a", 0, &[0], &[], 1000).await;
    assert_eq!((acquired(&first), first.acquisition_lock_timeout_ms), (vec![(0, 0, 1, 1)], 300));
    // b waits until a's lock runs out, and gets them with their delivery count kept.
    assert_eq!(acquired(&s.fetch("b", 0, &[0], &[], 10_000).await), [(0, 0, 1, 2)]);
    // a's acknowledgement comes too late.
    let late = s.acknowledge("a", 1, &[(0, 0, 1, vec![ACCEPT])]).await;
    assert_eq!(late.1, [ErrorCode::INVALID_RECORD_STATE]);
    s.fake.shutdown().await;
}

#[tokio::test]
async fn records_past_the_delivery_limit_are_archived() {
    let s = setup(FakeConfig::default(), 1).await;
    assert_eq!(s.set_group_config("share.delivery.count.limit", "2").await, ErrorCode::NONE);
    assert_eq!(s.set_group_config("share.delivery.count.limit", "1").await, ErrorCode::INVALID_CONFIG);
    assert_eq!(s.set_group_config("share.no.such.config", "1").await, ErrorCode::INVALID_CONFIG);
    let described = s
        .node
        .send(DescribeConfigsRequest {
            resources: vec![DescribeConfigsResource {
                resource_type: 32,
                resource_name: StrBytes::from_static_str(GROUP),
                configuration_keys: Some(vec![StrBytes::from_static_str("share.delivery.count.limit")]),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    let config = &described.results[0].configs[0];
    assert_eq!((config.value.as_deref(), config.config_source), (Some("2"), 8));

    s.heartbeat("a", 0).await;
    s.produce(0, 1).await;
    assert_eq!(acquired(&s.fetch("a", 0, &[0], &[], 1000).await), [(0, 0, 0, 1)]);
    let again = s.fetch("a", 1, &[], &[(0, 0, 0, vec![RELEASE])], 1000).await;
    assert_eq!(acquired(&again), [(0, 0, 0, 2)]);
    // Released at the limit: archived, never delivered again.
    let gone = s.fetch("a", 2, &[], &[(0, 0, 0, vec![RELEASE])], 0).await;
    assert_eq!((ack_errors(&gone), acquired(&gone)), (vec![ErrorCode::NONE], vec![]));
    assert_eq!(s.offsets().await[0].2, 0, "no lag left");
    s.fake.shutdown().await;
}

#[tokio::test]
async fn two_members_split_the_partitions_and_a_leaver_releases_its_records() {
    let s = setup(FakeConfig::default(), 2).await;
    assert_eq!(s.heartbeat("a", 0).await, (ErrorCode::NONE, 1, Some(vec![0, 1])));
    let (code, epoch, b) = s.heartbeat("b", 0).await;
    assert_eq!((code, epoch), (ErrorCode::NONE, 2));
    let (_, _, a) = s.heartbeat("a", 1).await;
    let (a, b) = (a.expect("a new assignment"), b.expect("an assignment"));
    assert_eq!((a.len(), b.len()), (1, 1), "{a:?} {b:?}");
    assert_ne!(a, b, "each partition to one member");
    assert_eq!(s.heartbeat("a", 7).await.0, ErrorCode::FENCED_MEMBER_EPOCH);
    let described = s
        .node
        .send(ShareGroupDescribeRequest {
            group_ids: vec![GroupId(StrBytes::from_static_str(GROUP))],
            ..Default::default()
        })
        .await
        .unwrap();
    let group = &described.groups[0];
    assert_eq!((group.group_state.as_str(), group.members.len(), group.group_epoch), ("Stable", 2, 2));
    let mut members = s.fake.share_group_members(GROUP);
    members.sort();
    assert_eq!(members, ["a", "b"]);

    // a holds records of its partition and expires: they go back, and b, alone, gets them.
    s.produce(a[0], 2).await;
    assert_eq!(acquired(&s.fetch("a", 0, &a, &[], 1000).await), [(a[0], 0, 1, 1)]);
    assert!(s.fake.expire_share_member(GROUP, "a"));
    assert!(!s.fake.expire_share_member(GROUP, "a"), "gone already");
    assert_eq!(s.heartbeat("b", 2).await, (ErrorCode::NONE, 3, Some(vec![0, 1])));
    // Released as never delivered (Kafka's releaseAcquiredRecords): the delivery count goes back.
    assert_eq!(acquired(&s.fetch("b", 0, &[0, 1], &[], 1000).await), [(a[0], 0, 1, 1)]);
    // b leaves: the group is empty, and its records are released.
    assert_eq!(s.heartbeat("b", -1).await.1, -1);
    assert!(s.fake.share_group_members(GROUP).is_empty());
    s.fake.shutdown().await;
}

#[tokio::test]
async fn share_session_epochs_are_checked() {
    let s = setup(FakeConfig::default(), 1).await;
    s.heartbeat("a", 0).await;
    s.produce(0, 1).await;
    assert_eq!(s.fetch("a", 1, &[0], &[], 0).await.error_code, ErrorCode::SHARE_SESSION_NOT_FOUND);
    // A new session has nothing to acknowledge.
    let early = s.fetch("a", 0, &[0], &[(0, 0, 0, vec![ACCEPT])], 0).await;
    assert_eq!(early.error_code, ErrorCode::INVALID_REQUEST);
    assert_eq!(acquired(&s.fetch("a", 0, &[0], &[], 1000).await), [(0, 0, 0, 1)]);
    assert_eq!(s.fetch("a", 5, &[], &[], 0).await.error_code, ErrorCode::INVALID_SHARE_SESSION_EPOCH);
    assert_eq!(s.fetch("a", 1, &[], &[], 0).await.error_code, ErrorCode::NONE);
    // A ShareAcknowledge cannot open a session, and must carry the next epoch.
    assert_eq!(s.acknowledge("a", 0, &[]).await.0, ErrorCode::INVALID_SHARE_SESSION_EPOCH);
    assert_eq!(s.acknowledge("a", 3, &[]).await.0, ErrorCode::INVALID_SHARE_SESSION_EPOCH);
    assert_eq!(s.acknowledge("a", 2, &[]).await.0, ErrorCode::NONE);
    // -1 closes the session: what it held is released (as never delivered), and the epochs
    // start over.
    assert_eq!(s.acknowledge("a", -1, &[]).await.0, ErrorCode::NONE);
    assert_eq!(s.fetch("a", 3, &[], &[], 0).await.error_code, ErrorCode::SHARE_SESSION_NOT_FOUND);
    assert_eq!(acquired(&s.fetch("a", 0, &[0], &[], 1000).await), [(0, 0, 0, 1)]);
    s.fake.shutdown().await;
}

#[tokio::test]
async fn share_groups_are_advertised_listed_and_deleted() {
    let s = setup(FakeConfig::default(), 1).await;
    let versions = s.node.send(ApiVersionsRequest::default()).await.unwrap();
    let share = versions.finalized_features.iter().find(|f| f.name.as_str() == "share.version");
    assert_eq!(share.map(|f| f.max_version_level), Some(2));
    s.heartbeat("a", 0).await;
    let list = |types: &[&'static str]| ListGroupsRequest {
        types_filter: types.iter().map(|t| StrBytes::from_static_str(t)).collect(),
        ..Default::default()
    };
    let listed = s.node.send(list(&["share"])).await.unwrap();
    let names: Vec<(&str, &str, &str)> =
        listed.groups.iter().map(|g| (g.group_id.as_str(), g.group_type.as_str(), g.group_state.as_str())).collect();
    assert_eq!(names, [(GROUP, "share", "Stable")]);
    assert!(s.node.send(list(&["consumer"])).await.unwrap().groups.is_empty());
    let delete =
        || DeleteGroupsRequest { groups_names: vec![GroupId(StrBytes::from_static_str(GROUP))], ..Default::default() };
    assert_eq!(s.node.send(delete()).await.unwrap().results[0].error_code, ErrorCode::NON_EMPTY_GROUP);
    s.heartbeat("a", -1).await;
    assert_eq!(s.node.send(delete()).await.unwrap().results[0].error_code, ErrorCode::NONE);
    assert!(s.node.send(list(&["share"])).await.unwrap().groups.is_empty());
    s.fake.shutdown().await;
}

#[tokio::test]
async fn an_empty_groups_offsets_are_altered_and_deleted() {
    use kwire::messages::alter_share_group_offsets_request::{
        AlterShareGroupOffsetsRequestPartition, AlterShareGroupOffsetsRequestTopic,
    };
    use kwire::messages::delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic;
    use kwire::messages::{AlterShareGroupOffsetsRequest, DeleteShareGroupOffsetsRequest};

    let s = setup(FakeConfig::default(), 1).await;
    let alter = |offset: i64| AlterShareGroupOffsetsRequest {
        group_id: GroupId(StrBytes::from_static_str(GROUP)),
        topics: vec![AlterShareGroupOffsetsRequestTopic {
            topic_name: TopicName(StrBytes::from_static_str(TOPIC)),
            partitions: vec![AlterShareGroupOffsetsRequestPartition {
                partition_index: 0,
                start_offset: offset,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let delete = || DeleteShareGroupOffsetsRequest {
        group_id: GroupId(StrBytes::from_static_str(GROUP)),
        topics: vec![DeleteShareGroupOffsetsRequestTopic {
            topic_name: TopicName(StrBytes::from_static_str(TOPIC)),
            ..Default::default()
        }],
        ..Default::default()
    };
    assert_eq!(s.node.send(delete()).await.unwrap().error_code, ErrorCode::GROUP_ID_NOT_FOUND);
    s.heartbeat("a", 0).await;
    s.produce(0, 4).await;
    assert_eq!(acquired(&s.fetch("a", 0, &[0], &[], 1000).await), [(0, 0, 3, 1)]);
    assert_eq!(s.node.send(alter(2)).await.unwrap().error_code, ErrorCode::NON_EMPTY_GROUP);
    assert_eq!(s.heartbeat("a", -1).await.0, ErrorCode::NONE);
    // Empty: the share-partition starts over at 2, forgetting what was in flight.
    let altered = s.node.send(alter(2)).await.unwrap();
    assert_eq!((altered.error_code, altered.responses[0].partitions[0].error_code), (ErrorCode::NONE, ErrorCode::NONE));
    assert_eq!(s.offsets().await, [(0, 2, 2)]);
    s.heartbeat("b", 0).await;
    assert_eq!(acquired(&s.fetch("b", 0, &[0], &[], 1000).await), [(0, 2, 3, 1)]);
    s.heartbeat("b", -1).await;
    // Deleted: the next fetch starts from share.auto.offset.reset (earliest) again.
    let deleted = s.node.send(delete()).await.unwrap();
    assert_eq!((deleted.error_code, deleted.responses[0].error_code), (ErrorCode::NONE, ErrorCode::NONE));
    assert_eq!(s.offsets().await, []);
    s.heartbeat("c", 0).await;
    assert_eq!(acquired(&s.fetch("c", 0, &[0], &[], 1000).await), [(0, 0, 3, 1)]);
    s.fake.shutdown().await;
}
