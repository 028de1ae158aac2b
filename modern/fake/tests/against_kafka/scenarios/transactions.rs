//! Transactions, request by request: v2 (KIP-890: Produce v12 adds the partition, EndTxn v5
//! bumps the epoch), v1 with offsets committed in the transaction, and fencing. Observed:
//! every answer's error code, the producer's epochs, the records with their control batches,
//! the last stable offset and the aborted ranges a read_committed fetch is told, and the
//! committed offsets.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use kwire::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kwire::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kwire::messages::txn_offset_commit_request::{TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic};
use kwire::messages::{
    AddOffsetsToTxnRequest, AddPartitionsToTxnRequest, EndTxnRequest, FetchRequest, InitProducerIdRequest,
    OffsetFetchRequest, ProduceRequest, TxnOffsetCommitRequest,
};
use kwire::{ErrorCode, GroupId, ProducerId, Records, StrBytes, TopicName, TransactionalId};
use kwire_connection::requests;
use kwire_records::{BatchBuilder, BatchOptions, Compression};

use super::{Script, To};

/// How long Kafka may take to load a coordinator, write a transaction's markers or assign a
/// group.
pub const WAIT: Duration = Duration::from_secs(30);

type Steps<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// A transactional batch of `values` by `producer` (id, epoch) from `sequence`.
fn batch(producer: (ProducerId, i16), sequence: i32, values: &[&str]) -> Records {
    let options = BatchOptions {
        producer_id: producer.0 .0,
        producer_epoch: producer.1,
        base_sequence: sequence,
        transactional: true,
        ..BatchOptions::new(2, Compression::None)
    };
    let mut builder = BatchBuilder::new(options).unwrap();
    for v in values {
        builder.append(super::now_ms(), Some(b"k"), Some(v.as_bytes()), &[]).unwrap();
    }
    Records::from_bytes(builder.build().unwrap())
}

/// InitProducerId for `id` at `version`, sent again while Kafka loads the coordinator or ends
/// an earlier transaction (COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS).
pub(super) async fn init(s: &mut Script, step: &str, id: &str, version: i16) -> (ProducerId, i16) {
    let request = InitProducerIdRequest {
        transactional_id: Some(TransactionalId(StrBytes::from(id.to_owned()))),
        transaction_timeout_ms: 60_000,
        producer_id: ProducerId(-1),
        producer_epoch: -1,
        ..Default::default()
    };
    let retriable = [ErrorCode::COORDINATOR_LOAD_IN_PROGRESS, ErrorCode::CONCURRENT_TRANSACTIONS];
    let r =
        s.send_until(step, To::Transaction(id), request, version, WAIT, |r| !retriable.contains(&r.error_code)).await;
    (r.producer_id, r.producer_epoch)
}

/// Produce of `records` to partition 0 of `topic` in transaction `id`, at `version` (12:
/// transactions v2, the partition added by the broker; 11: added before with
/// AddPartitionsToTxn).
async fn produce(s: &mut Script, step: &str, (topic, id): (&str, &str), records: Records, version: i16) {
    let mut request: ProduceRequest = requests::produce(topic, Default::default(), 0, records, -1, WAIT);
    request.transactional_id = Some(TransactionalId(StrBytes::from(id.to_owned())));
    s.send(step, To::Leader(topic, 0), request, version).await;
}

pub(super) async fn end(
    s: &mut Script,
    step: &str,
    id: &str,
    producer: (ProducerId, i16),
    commit: bool,
    version: i16,
) -> i16 {
    let request = EndTxnRequest {
        transactional_id: TransactionalId(StrBytes::from(id.to_owned())),
        producer_id: producer.0,
        producer_epoch: producer.1,
        committed: commit,
        ..Default::default()
    };
    let r = s
        .send_until(step, To::Transaction(id), request, version, WAIT, |r| {
            r.error_code != ErrorCode::CONCURRENT_TRANSACTIONS
        })
        .await;
    r.producer_epoch
}

/// Fetch v17 of partition 0 from offset 0 at `isolation` (1: read_committed), sent again until
/// the last stable offset reaches `stable` (Kafka writes the markers after EndTxn answers).
async fn fetch(s: &mut Script, step: &str, topic: &str, isolation: i8, stable: i64) {
    let topic_id = s.cluster.topic_id(topic).await.unwrap();
    let mut request: FetchRequest = requests::fetch(topic, topic_id, 0, 0);
    request.max_wait_ms = 0;
    request.isolation_level = isolation;
    s.send_until(step, To::Leader(topic, 0), request, 17, WAIT, |r| {
        r.responses.first().and_then(|t| t.partitions.first()).is_some_and(|p| p.last_stable_offset >= stable)
    })
    .await;
}

/// ListOffsets v10 latest at `isolation`.
async fn latest(s: &mut Script, step: &str, topic: &str, isolation: i8) {
    s.send(step, To::Leader(topic, 0), super::support::latest_offset(topic, 0, isolation), 10).await;
}

/// Transactions v2: one aborted, one committed; readers committed and uncommitted.
pub fn v2_abort_then_commit(s: &mut Script) -> Steps<'_> {
    Box::pin(async move {
        let topic = s.create_topic("out", 1).await;
        let id = s.name("tx");
        let (pid, epoch) = init(s, "init", &id, 5).await;
        s.alias("producerId", pid.0, "producer");
        produce(s, "write a, b", (&topic, &id), batch((pid, epoch), 0, &["a", "b"]), 12).await;
        latest(s, "latest committed, open", &topic, 1).await;
        let epoch = end(s, "abort", &id, (pid, epoch), false, 5).await;
        produce(s, "write c, d", (&topic, &id), batch((pid, epoch), 0, &["c", "d"]), 12).await;
        let epoch = end(s, "commit", &id, (pid, epoch), true, 5).await;
        fetch(s, "read committed", &topic, 1, 6).await;
        fetch(s, "read uncommitted", &topic, 0, 6).await;
        latest(s, "latest committed", &topic, 1).await;
        // A retried commit of the ended transaction, at the epoch before the bump.
        end(s, "commit again, older epoch", &id, (pid, epoch - 1), true, 5).await;
        end(s, "end with nothing open", &id, (pid, epoch), true, 5).await;
    })
}

/// Transactions v1: partitions added by the client, offsets committed in the transaction,
/// seen by OffsetFetch only once it commits.
pub fn v1_with_offsets(s: &mut Script) -> Steps<'_> {
    Box::pin(async move {
        let topic = s.create_topic("out", 1).await;
        let id = s.name("tx");
        let group = s.name("group");
        let (pid, epoch) = init(s, "init", &id, 4).await;
        s.alias("producerId", pid.0, "producer");
        let add = AddPartitionsToTxnRequest {
            v3_and_below_transactional_id: TransactionalId(StrBytes::from(id.clone())),
            v3_and_below_producer_id: pid,
            v3_and_below_producer_epoch: epoch,
            v3_and_below_topics: vec![AddPartitionsToTxnTopic {
                name: TopicName(StrBytes::from(topic.clone())),
                partitions: vec![0].into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        s.send_until("add partition", To::Transaction(&id), add, 3, WAIT, |r| {
            r.error_code != ErrorCode::CONCURRENT_TRANSACTIONS
        })
        .await;
        produce(s, "write a", (&topic, &id), batch((pid, epoch), 0, &["a"]), 11).await;
        let add_offsets = AddOffsetsToTxnRequest {
            transactional_id: TransactionalId(StrBytes::from(id.clone())),
            producer_id: pid,
            producer_epoch: epoch,
            group_id: GroupId(StrBytes::from(group.clone())),
            ..Default::default()
        };
        s.send("add offsets", To::Transaction(&id), add_offsets, 3).await;
        let commit = TxnOffsetCommitRequest {
            transactional_id: TransactionalId(StrBytes::from(id.clone())),
            group_id: GroupId(StrBytes::from(group.clone())),
            producer_id: pid,
            producer_epoch: epoch,
            generation_id_or_member_epoch: -1,
            topics: vec![TxnOffsetCommitRequestTopic {
                name: TopicName(StrBytes::from(topic.clone())),
                partitions: vec![TxnOffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: 7,
                    committed_leader_epoch: -1,
                    committed_metadata: Some(StrBytes::from_static_str("in txn")),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        s.send("commit offset in txn", To::Group(&group), commit, 3).await;
        let offsets = |stable: bool| OffsetFetchRequest {
            group_id: GroupId(StrBytes::from(group.clone())),
            topics: Some(vec![OffsetFetchRequestTopic {
                name: TopicName(StrBytes::from(topic.clone())),
                partition_indexes: vec![0].into(),
                ..Default::default()
            }]),
            require_stable: stable,
            ..Default::default()
        };
        s.send("offsets, open", To::Group(&group), offsets(false), 7).await;
        s.send("offsets stable, open", To::Group(&group), offsets(true), 7).await;
        end(s, "commit", &id, (pid, epoch), true, 4).await;
        s.send_until("offsets stable", To::Group(&group), offsets(true), 7, WAIT, |r| {
            r.error_code != ErrorCode::UNSTABLE_OFFSET_COMMIT
                && r.topics
                    .iter()
                    .flat_map(|t| &t.partitions)
                    .all(|p| p.error_code != ErrorCode::UNSTABLE_OFFSET_COMMIT)
        })
        .await;
        fetch(s, "read committed", &topic, 1, 2).await;
    })
}

/// A second producer of the same transactional id fences the first: what the first is told
/// when it writes and ends, and what a reader sees.
pub fn fencing(s: &mut Script) -> Steps<'_> {
    Box::pin(async move {
        let topic = s.create_topic("out", 1).await;
        let id = s.name("tx");
        let (pid, old) = init(s, "init", &id, 5).await;
        s.alias("producerId", pid.0, "producer");
        produce(s, "write a", (&topic, &id), batch((pid, old), 0, &["a"]), 12).await;
        let (_, new) = init(s, "init again", &id, 5).await;
        produce(s, "write b, fenced epoch", (&topic, &id), batch((pid, old), 1, &["b"]), 12).await;
        end(s, "commit, fenced epoch", &id, (pid, old), true, 5).await;
        produce(s, "write c", (&topic, &id), batch((pid, new), 0, &["c"]), 12).await;
        end(s, "commit", &id, (pid, new), true, 5).await;
        fetch(s, "read committed", &topic, 1, 4).await;
    })
}
