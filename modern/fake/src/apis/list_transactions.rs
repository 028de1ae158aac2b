//! ListTransactions: the transactional ids this node coordinates, filtered by state, producer
//! id, how long their transaction has been open (v1) and a regular expression (v2); unknown
//! state names are returned as such.

use std::time::{SystemTime, UNIX_EPOCH};

use kwire::messages::list_transactions_response::TransactionState;
use kwire::messages::{ListTransactionsRequest, ListTransactionsResponse};
use kwire::{ErrorCode, ProducerId, StrBytes, TransactionalId};

use super::Ctx;
use crate::transactions::TxnState;

pub(super) async fn handle(ctx: &Ctx<'_>, request: ListTransactionsRequest) -> ListTransactionsResponse {
    let state = ctx.shared.state();
    let pattern = match request.transactional_id_pattern.as_deref().filter(|p| !p.is_empty()) {
        None => None,
        // Java's `Matcher.matches`: the whole id.
        Some(p) => match regex::Regex::new(&format!("^(?:{p})$")) {
            Ok(pattern) => Some(pattern),
            Err(_) => {
                return ListTransactionsResponse {
                    error_code: ErrorCode::INVALID_REGULAR_EXPRESSION,
                    ..Default::default()
                }
            }
        },
    };
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let unknown_state_filters =
        request.state_filters.iter().filter(|s| !TxnState::KAFKA_NAMES.contains(&s.as_str())).cloned().collect();
    let transaction_states = state
        .transactions()
        .by_id
        .iter()
        .filter(|(id, _)| state.coordinator_of(id) == Some(ctx.node))
        .filter(|(_, t)| {
            request.state_filters.is_empty() || request.state_filters.iter().any(|s| s.as_str() == t.state.name())
        })
        .filter(|(_, t)| {
            request.producer_id_filters.is_empty() || request.producer_id_filters.iter().any(|p| p.0 == t.producer_id)
        })
        // v1: open longer than this many milliseconds.
        .filter(|(_, t)| {
            request.duration_filter < 0 || (t.started_ms >= 0 && now_ms - t.started_ms > request.duration_filter)
        })
        .filter(|(id, _)| pattern.as_ref().is_none_or(|p| p.is_match(id)))
        .map(|(id, t)| TransactionState {
            transactional_id: TransactionalId(StrBytes::from(id.clone())),
            producer_id: ProducerId(t.producer_id),
            transaction_state: StrBytes::from_static_str(t.state.name()),
            ..Default::default()
        })
        .collect();
    ListTransactionsResponse { unknown_state_filters, transaction_states, ..Default::default() }
}
