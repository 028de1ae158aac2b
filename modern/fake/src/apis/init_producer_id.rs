//! InitProducerId: a fresh producer id at epoch 0 for an idempotent producer; for a
//! transactional id, the transaction coordinator's answer (see `transactions`).

use kwire::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kwire::{ErrorCode, ProducerId};

use super::{fenced, Ctx};

/// InitProducerId v4 learned PRODUCER_FENCED (older clients get INVALID_PRODUCER_EPOCH).
const FENCED_FROM: i16 = 4;

pub(super) async fn handle(ctx: &Ctx<'_>, request: InitProducerIdRequest) -> InitProducerIdResponse {
    let mut state = ctx.shared.state();
    let Some(transactional_id) = &request.transactional_id else {
        let id = state.new_producer_id();
        return InitProducerIdResponse { producer_id: ProducerId(id), producer_epoch: 0, ..Default::default() };
    };
    let id = transactional_id.as_str();
    let expected = (request.producer_id.0 >= 0).then_some((request.producer_id.0, request.producer_epoch));
    let answer = state.coordinates(ctx.node, id).and_then(|()| {
        state.init_transactional(id, request.transaction_timeout_ms, expected, fenced(ctx.version, FENCED_FROM))
    });
    match answer {
        Ok((producer_id, epoch)) => {
            InitProducerIdResponse { producer_id: ProducerId(producer_id), producer_epoch: epoch, ..Default::default() }
        }
        Err(code) => refused(code),
    }
}

/// The request refused with `code`.
pub(super) fn error(_request: &InitProducerIdRequest, _version: i16, code: ErrorCode) -> InitProducerIdResponse {
    refused(code)
}

/// No producer id, and why.
fn refused(error_code: ErrorCode) -> InitProducerIdResponse {
    InitProducerIdResponse { error_code, producer_id: ProducerId(-1), producer_epoch: -1, ..Default::default() }
}
