//! Kafka 4.4's stateful protocols through the connection, against a real broker (one combined
//! node shared by this file's tests): idempotent produce, transactions (v1, and KIP-890's v2), the classic group
//! protocol and KIP-848's consumer groups.

use std::sync::OnceLock;
use std::time::Duration;

use kwire::messages::consumer_group_heartbeat_request::TopicPartitions;
use kwire::messages::join_group_request::JoinGroupRequestProtocol;
use kwire::messages::leave_group_request::MemberIdentity;
use kwire::messages::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
use kwire::messages::offset_fetch_request::{OffsetFetchRequestGroup, OffsetFetchRequestTopics};
use kwire::messages::sync_group_request::SyncGroupRequestAssignment;
use kwire::messages::{
    ApiKey, ConsumerGroupHeartbeatRequest, FetchResponse, HeartbeatRequest, InitProducerIdRequest, JoinGroupRequest,
    LeaveGroupRequest, OffsetCommitRequest, OffsetFetchRequest, SyncGroupRequest,
};
use kwire::{ErrorCode, Records, Uuid};
use kwire_connection::cluster::CoordinatorType;
use kwire_connection::{Client, ClientConfig, Cluster, Error};
use kwire_records::{BatchOptions, Compression, RecordsExt};
use kwire_test_support::Kafka;

mod common;
use common::{batch_with, create_topic, fetch_request, init_producer_id, produce_request, Transactional, TxnProtocol};

fn kafka() -> Option<&'static Kafka> {
    static KAFKA: OnceLock<Option<Kafka>> = OnceLock::new();
    KAFKA.get_or_init(|| Kafka::start_or_skip(1)).as_ref()
}

/// A batch of `n` records written by idempotent producer `(id, epoch)` from `sequence`.
fn batch(producer: (i64, i16), sequence: i32, n: usize, tag: &str) -> Records {
    let options = BatchOptions {
        producer_id: producer.0,
        producer_epoch: producer.1,
        base_sequence: sequence,
        ..BatchOptions::new(2, Compression::Lz4)
    };
    batch_with(options, n, tag)
}

async fn fetch(client: &Client, topic: &str, topic_id: Uuid, isolation_level: i8) -> FetchResponse {
    client.send(fetch_request(topic, topic_id, 0, isolation_level)).await.unwrap()
}

#[tokio::test]
async fn idempotent_produce_answers_a_resent_batch_once_and_refuses_a_gap() {
    let Some(kafka) = kafka() else { return };
    let client = Client::connect(kafka.plaintext(), ClientConfig::default()).await.unwrap();
    let topic = "idempotent";
    let topic_id = create_topic(&client, topic, 1).await;
    // No transactional id: null, which is not this field's default ("", refused as invalid).
    let init = InitProducerIdRequest { transactional_id: None, transaction_timeout_ms: i32::MAX, ..Default::default() };
    let cluster = Cluster::connect(&[&kafka.bootstrap()], ClientConfig::default()).await.unwrap();
    let init = init_producer_id(&cluster, &client, init).await;
    let producer = (init.producer_id.get(), init.producer_epoch);
    assert!(producer.0 >= 0);

    let first = batch(producer, 0, 5, "a");
    let answer = client.send(produce_request(topic, topic_id, 0, first.clone(), -1)).await.unwrap();
    let p = &answer.responses[0].partition_responses[0];
    assert_eq!((p.error_code, p.base_offset), (ErrorCode::NONE, 0), "{:?}", p.error_message);
    // The same batch again: acknowledged with the first offset, written once.
    let answer = client.send(produce_request(topic, topic_id, 0, first, -1)).await.unwrap();
    let p = &answer.responses[0].partition_responses[0];
    assert_eq!((p.error_code, p.base_offset), (ErrorCode::NONE, 0), "a duplicate is answered as the original");
    // The next sequence is 5; 7 leaves a gap.
    let gap = client.send(produce_request(topic, topic_id, 0, batch(producer, 7, 1, "gap"), -1)).await.unwrap();
    assert_eq!(gap.responses[0].partition_responses[0].error_code, ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
    let next = client.send(produce_request(topic, topic_id, 0, batch(producer, 5, 2, "b"), -1)).await.unwrap();
    assert_eq!(next.responses[0].partition_responses[0].base_offset, 5);

    let fetched = fetch(&client, topic, topic_id, 0).await;
    let partition = &fetched.responses[0].partitions[0];
    assert_eq!(partition.high_watermark, 7, "5 + 2 records, the duplicate and the gap not written");
    let keys: Vec<String> = partition
        .records
        .clone()
        .unwrap()
        .records()
        .map(|r| String::from_utf8(r.unwrap().key.unwrap().to_vec()).unwrap())
        .collect();
    assert_eq!(keys, ["a-key-0", "a-key-1", "a-key-2", "a-key-3", "a-key-4", "b-key-0", "b-key-1"]);
}

#[tokio::test]
async fn a_committed_and_an_aborted_transaction() {
    committed_aborted_committed(TxnProtocol::V1, "transactions", "kwire-txn").await;
}

/// Transactions v2 (KIP-890) as Kafka 4.4 runs them: no AddPartitionsToTxn (Produce v12+ adds
/// the partition), EndTxn v5, and a new epoch after every transaction.
#[tokio::test]
async fn transactions_v2_add_partitions_implicitly_and_bump_the_epoch_at_every_end() {
    let epochs = committed_aborted_committed(TxnProtocol::V2, "transactions-v2", "kwire-txn-v2").await;
    assert!(epochs.windows(2).all(|w| w[1] == w[0] + 1), "one epoch more at every EndTxn: {epochs:?}");
}

/// A committed, an aborted and a committed transaction of 3 records each to a new topic in
/// `protocol`; then read_committed sees the two committed ones, and Kafka names the aborted
/// one. Returns the producer's epoch at the start and after each transaction.
async fn committed_aborted_committed(protocol: TxnProtocol, topic: &str, transactional_id: &str) -> Vec<i16> {
    let Some(kafka) = kafka() else { return Vec::new() };
    let cluster = Cluster::connect(&[&kafka.bootstrap()], ClientConfig::default()).await.unwrap();
    let client = cluster.any().await.unwrap();
    let topic_id = create_topic(&client, topic, 1).await;
    let mut txn = Transactional::init_with(&cluster, transactional_id, protocol).await;
    let producer_id = txn.producer.0.get();
    let mut epochs = vec![txn.producer.1];
    for (commit, tag) in [(true, "committed"), (false, "aborted"), (true, "committed-again")] {
        txn.begin(&cluster, topic).await;
        let request = txn.produce(topic, topic_id, Compression::Lz4, 3, tag);
        let produced = client.send_at(request, txn.produce_version(&client)).await.unwrap();
        assert_eq!(produced.responses[0].partition_responses[0].error_code, ErrorCode::NONE, "{tag}");
        txn.end(commit).await;
        epochs.push(txn.producer.1);
    }

    // read_committed: the stable offset reaches the end once the markers are written; Kafka
    // names the aborted transaction so a reader can drop its records.
    let mut response = fetch(&client, topic, topic_id, 1).await;
    for _ in 0..50 {
        let p = &response.responses[0].partitions[0];
        if p.last_stable_offset == p.high_watermark {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        response = fetch(&client, topic, topic_id, 1).await;
    }
    let p = &response.responses[0].partitions[0];
    // 9 records and 3 markers.
    assert_eq!((p.high_watermark, p.last_stable_offset), (12, 12));
    let aborted = p.aborted_transactions.clone().unwrap_or_default();
    assert_eq!(aborted.len(), 1, "{aborted:?}");
    assert_eq!((aborted[0].producer_id.get(), aborted[0].first_offset), (producer_id, 4));
    // What a read_committed reader keeps: records not in the aborted range, markers dropped.
    let mut committed = Vec::new();
    for b in p.records.clone().unwrap().batches() {
        let b = b.unwrap();
        if b.is_control() || (b.position() > 0 && (4..8).contains(&b.last_offset())) {
            continue;
        }
        for r in b.records().unwrap() {
            committed.push(String::from_utf8(r.unwrap().key.unwrap().to_vec()).unwrap());
        }
    }
    let expected = ["committed-key-0", "committed-key-1", "committed-key-2"];
    let again = ["committed-again-key-0", "committed-again-key-1", "committed-again-key-2"];
    assert_eq!(committed, [&expected[..], &again[..]].concat());
    epochs
}

#[tokio::test]
async fn the_classic_group_protocol_end_to_end() {
    let Some(kafka) = kafka() else { return };
    let cluster = Cluster::connect(&[&kafka.bootstrap()], ClientConfig::default()).await.unwrap();
    let admin = cluster.any().await.unwrap();
    let topic = "classic-group";
    let topic_id = create_topic(&admin, topic, 2).await;
    let group = "kwire-classic";
    let coordinator = cluster.coordinator(CoordinatorType::Group, group).await.unwrap();
    let join = |member_id: String| JoinGroupRequest {
        group_id: group.into(),
        session_timeout_ms: 30_000,
        rebalance_timeout_ms: 30_000,
        member_id: member_id.into(),
        protocol_type: "kwire".into(),
        protocols: vec![JoinGroupRequestProtocol {
            name: "static".into(),
            metadata: vec![1, 2, 3].into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    // KIP-394: the first JoinGroup is refused with the member id to use.
    let first = coordinator.send(join(String::new())).await.unwrap();
    assert_eq!(first.error_code, ErrorCode::MEMBER_ID_REQUIRED);
    let member = first.member_id.to_string();
    let joined = coordinator.send(join(member.clone())).await.unwrap();
    assert_eq!(joined.error_code, ErrorCode::NONE);
    assert_eq!(joined.leader.as_str(), member, "the only member leads");
    assert_eq!(joined.members.len(), 1);
    assert_eq!(&joined.members[0].metadata[..], [1, 2, 3]);
    let generation = joined.generation_id;

    let sync = SyncGroupRequest {
        group_id: group.into(),
        generation_id: generation,
        member_id: member.as_str().into(),
        protocol_type: Some("kwire".into()),
        protocol_name: Some("static".into()),
        assignments: vec![SyncGroupRequestAssignment {
            member_id: member.as_str().into(),
            assignment: b"partitions 0,1".to_vec().into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let synced = coordinator.send(sync).await.unwrap();
    assert_eq!(synced.error_code, ErrorCode::NONE);
    assert_eq!(&synced.assignment[..], b"partitions 0,1");

    let beat = coordinator
        .send(HeartbeatRequest {
            group_id: group.into(),
            generation_id: generation,
            member_id: member.as_str().into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(beat.error_code, ErrorCode::NONE);

    let commit = OffsetCommitRequest {
        group_id: group.into(),
        generation_id_or_member_epoch: generation,
        member_id: member.as_str().into(),
        // OffsetCommit and OffsetFetch v10 (Kafka 4.4) name topics by id, earlier ones by name.
        topics: vec![OffsetCommitRequestTopic {
            name: topic.into(),
            topic_id,
            partitions: [(0, 42), (1, 7)]
                .map(|(partition_index, committed_offset)| OffsetCommitRequestPartition {
                    partition_index,
                    committed_offset,
                    committed_metadata: Some("kwire".into()),
                    ..Default::default()
                })
                .to_vec(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let committed = coordinator.send(commit).await.unwrap();
    for p in &committed.topics[0].partitions {
        assert_eq!(p.error_code, ErrorCode::NONE);
    }
    let fetched = coordinator
        .send(OffsetFetchRequest {
            groups: vec![OffsetFetchRequestGroup {
                group_id: group.into(),
                topics: Some(vec![OffsetFetchRequestTopics {
                    name: topic.into(),
                    topic_id,
                    partition_indexes: vec![0, 1].into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    let offsets: Vec<(i32, i64)> =
        fetched.groups[0].topics[0].partitions.iter().map(|p| (p.partition_index, p.committed_offset)).collect();
    assert_eq!(offsets, [(0, 42), (1, 7)]);

    let left = coordinator
        .send(LeaveGroupRequest {
            group_id: group.into(),
            members: vec![MemberIdentity { member_id: member.as_str().into(), ..Default::default() }],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(left.error_code, ErrorCode::NONE);
    assert_eq!(left.members[0].error_code, ErrorCode::NONE);
}

#[tokio::test]
async fn kip_848_consumer_group_heartbeats_share_two_partitions_between_two_members() {
    let Some(kafka) = kafka() else { return };
    let cluster = Cluster::connect(&[&kafka.bootstrap()], ClientConfig::default()).await.unwrap();
    let admin = cluster.any().await.unwrap();
    let topic = "consumer-group";
    let topic_id = create_topic(&admin, topic, 2).await;
    let group = "kwire-848";
    let coordinator = cluster.coordinator(CoordinatorType::Group, group).await.unwrap();
    // Version 1: members name themselves (KIP-1082).
    let members = ["member-a-0123456789abcdef", "member-b-0123456789abcdef"];
    let mut state: Vec<(i32, Vec<i32>)> = vec![(0, Vec::new()), (0, Vec::new())];
    let mut rounds = 0;
    loop {
        rounds += 1;
        for (i, member) in members.iter().enumerate() {
            let (epoch, owned) = state[i].clone();
            let request = ConsumerGroupHeartbeatRequest {
                group_id: group.into(),
                member_id: (*member).into(),
                member_epoch: epoch,
                rebalance_timeout_ms: 30_000,
                subscribed_topic_names: Some(vec![topic.into()]),
                // Empty when joining; afterwards what the member owns.
                topic_partitions: Some(if owned.is_empty() {
                    Vec::new()
                } else {
                    vec![TopicPartitions { topic_id, partitions: owned.into(), ..Default::default() }]
                }),
                ..Default::default()
            };
            // NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS while the fresh cluster loads
            // its offsets topic: retried.
            let answer = cluster
                .retrying(|| async {
                    let answer = coordinator.send(request.clone()).await?;
                    match answer.error_code {
                        ErrorCode::NONE => Ok(answer),
                        code => Err(Error::Broker {
                            api: ApiKey::ConsumerGroupHeartbeat,
                            code,
                            message: answer.error_message.map(|m| m.to_string()),
                        }),
                    }
                })
                .await
                .unwrap();
            state[i].0 = answer.member_epoch;
            if let Some(assignment) = answer.assignment {
                state[i].1 = assignment.topic_partitions.iter().flat_map(|t| t.partitions.iter()).collect();
            }
        }
        let mut all: Vec<i32> = state.iter().flat_map(|(_, p)| p.iter().copied()).collect();
        all.sort();
        if all == [0, 1] && state.iter().all(|(_, p)| p.len() == 1) {
            break;
        }
        assert!(rounds < 50, "no stable assignment after {rounds} rounds: {state:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Leaving: epoch -1.
    for (i, member) in members.iter().enumerate() {
        let leave = ConsumerGroupHeartbeatRequest {
            group_id: group.into(),
            member_id: (*member).into(),
            member_epoch: -1,
            ..Default::default()
        };
        let answer = coordinator.send(leave).await.unwrap();
        assert_eq!((answer.error_code, answer.member_epoch), (ErrorCode::NONE, -1), "member {i}");
    }
}
