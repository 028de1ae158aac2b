//! InitProducerId for idempotent producers: a fresh producer id at epoch 0. Transactional ids
//! are refused until transactions are served.

use kafka_wire::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kafka_wire::{ErrorCode, ProducerId};

use crate::cluster::Shared;

pub(crate) fn handle(shared: &Shared, request: InitProducerIdRequest) -> InitProducerIdResponse {
    if request.transactional_id.is_some() {
        return InitProducerIdResponse {
            error_code: ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            ..Default::default()
        };
    }
    let mut state = shared.state();
    let id = state.next_producer_id;
    state.next_producer_id += 1;
    InitProducerIdResponse { producer_id: ProducerId(id), producer_epoch: 0, ..Default::default() }
}
