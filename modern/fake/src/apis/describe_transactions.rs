//! DescribeTransactions: each transactional id's state, timeout, start, producer and the
//! partitions of its open transaction.

use std::collections::BTreeMap;

use kwire::messages::describe_transactions_response::{TopicData, TransactionState};
use kwire::messages::{DescribeTransactionsRequest, DescribeTransactionsResponse};
use kwire::{ErrorCode, ProducerId, StrBytes, TopicName};

use super::Ctx;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DescribeTransactionsRequest) -> DescribeTransactionsResponse {
    let state = ctx.shared.state();
    let transaction_states = request
        .transactional_ids
        .iter()
        .map(|id| {
            let mut described = TransactionState { transactional_id: id.clone(), ..Default::default() };
            let found = state.coordinates(ctx.node, id.as_str()).and_then(|()| {
                state.transactions().by_id.get(id.as_str()).ok_or(ErrorCode::TRANSACTIONAL_ID_NOT_FOUND)
            });
            match found {
                Err(code) => described.error_code = code,
                Ok(txn) => {
                    described.transaction_state = StrBytes::from_static_str(txn.state.name());
                    described.transaction_timeout_ms = txn.timeout_ms;
                    described.transaction_start_time_ms = txn.started_ms;
                    described.producer_id = ProducerId(txn.producer_id);
                    described.producer_epoch = txn.epoch;
                    let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
                    for (topic, partition) in &txn.partitions {
                        topics.entry(topic).or_default().push(*partition);
                    }
                    described.topics = topics
                        .into_iter()
                        .map(|(topic, partitions)| TopicData {
                            topic: TopicName(StrBytes::from(topic.to_string())),
                            partitions: partitions.into(),
                            ..Default::default()
                        })
                        .collect();
                }
            }
            described
        })
        .collect();
    DescribeTransactionsResponse { transaction_states, ..Default::default() }
}
