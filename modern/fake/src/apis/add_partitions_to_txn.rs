//! AddPartitionsToTxn: a transactional producer names the partitions it will write (v0–3,
//! transactions v1); v4+ carries several transactions at once, and `verify_only` asks whether
//! the partitions are in already, as Kafka's brokers ask their coordinator.

use kwire::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kwire::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
};
use kwire::messages::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};
use kwire::{ErrorCode, TransactionalId};

use super::{fenced, Ctx};
use crate::state::State;
use crate::transactions::Producer;

/// v4 batches transactions (and is what brokers send).
const BATCHED_FROM: i16 = 4;
/// v2 learned PRODUCER_FENCED.
const FENCED_FROM: i16 = 2;

pub(super) async fn handle(ctx: &Ctx<'_>, request: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse {
    let mut state = ctx.shared.state();
    if ctx.version < BATCHED_FROM {
        let p = Producer {
            transactional_id: request.v3_and_below_transactional_id.as_str(),
            id: request.v3_and_below_producer_id.0,
            epoch: request.v3_and_below_producer_epoch,
        };
        let results = add(&mut state, ctx, p, false, &request.v3_and_below_topics);
        return AddPartitionsToTxnResponse { results_by_topic_v3_and_below: results, ..Default::default() };
    }
    let results = request
        .transactions
        .iter()
        .map(|t| {
            let p = Producer {
                transactional_id: t.transactional_id.as_str(),
                id: t.producer_id.0,
                epoch: t.producer_epoch,
            };
            AddPartitionsToTxnResult {
                transactional_id: TransactionalId(t.transactional_id.0.clone()),
                topic_results: add(&mut state, ctx, p, t.verify_only, &t.topics),
                ..Default::default()
            }
        })
        .collect();
    AddPartitionsToTxnResponse { results_by_transaction: results, ..Default::default() }
}

/// Adds (or, `verify_only`, checks) one transaction's partitions; every partition gets the
/// transaction's error, or those that do not exist UNKNOWN_TOPIC_OR_PARTITION and the others
/// OPERATION_NOT_ATTEMPTED, as Kafka answers.
fn add(
    state: &mut State,
    ctx: &Ctx<'_>,
    p: Producer<'_>,
    verify_only: bool,
    topics: &[AddPartitionsToTxnTopic],
) -> Vec<AddPartitionsToTxnTopicResult> {
    let wanted: Vec<(String, i32)> =
        topics.iter().flat_map(|t| t.partitions.iter().map(move |i| (t.name.to_string(), i))).collect();
    let exists = |state: &State, (topic, index): &(String, i32)| state.partition(topic, *index).is_some();
    let missing = wanted.iter().any(|tp| !exists(state, tp));
    let outcome = state.coordinates(ctx.node, p.transactional_id).and_then(|()| {
        if missing {
            return Err(ErrorCode::OPERATION_NOT_ATTEMPTED);
        }
        if verify_only {
            let held = wanted.iter().all(|tp| state.transactions().holds(p.id, tp));
            return if held { Ok(()) } else { Err(ErrorCode::INVALID_TXN_STATE) };
        }
        let fenced = fenced(ctx.version, FENCED_FROM);
        state.transactions_mut().add(p, fenced, wanted.iter().cloned(), std::iter::empty())
    });
    let code_of = |tp: &(String, i32)| match outcome {
        Ok(()) => ErrorCode::NONE,
        Err(ErrorCode::OPERATION_NOT_ATTEMPTED) if !exists(state, tp) => ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
        Err(code) => code,
    };
    topics
        .iter()
        .map(|t| AddPartitionsToTxnTopicResult {
            name: t.name.clone(),
            results_by_partition: t
                .partitions
                .iter()
                .map(|i| AddPartitionsToTxnPartitionResult {
                    partition_index: i,
                    partition_error_code: code_of(&(t.name.to_string(), i)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })
        .collect()
}
