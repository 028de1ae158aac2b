//! EndTxn: commit or abort the producer's transaction; v5+ is transactions v2 (KIP-890), which
//! answers with the producer's next epoch.

use kwire::messages::{EndTxnRequest, EndTxnResponse};
use kwire::{ErrorCode, ProducerId};

use super::{fenced, Ctx};
use crate::transactions::Producer;

/// EndTxn v5 is transactions v2.
const V2_FROM: i16 = 5;
/// v2 learned PRODUCER_FENCED.
const FENCED_FROM: i16 = 2;

pub(super) async fn handle(ctx: &Ctx<'_>, request: EndTxnRequest) -> EndTxnResponse {
    let mut state = ctx.shared.state();
    let p = Producer {
        transactional_id: request.transactional_id.as_str(),
        id: request.producer_id.0,
        epoch: request.producer_epoch,
    };
    let outcome = state
        .coordinates(ctx.node, p.transactional_id)
        .and_then(|()| state.end_transaction(p, request.committed, ctx.version >= V2_FROM));
    drop(state);
    // Markers were written: read_committed fetches may move on.
    ctx.shared.appended.notify_waiters();
    match outcome {
        Ok((id, epoch)) => EndTxnResponse { producer_id: ProducerId(id), producer_epoch: epoch, ..Default::default() },
        Err(ErrorCode::PRODUCER_FENCED) => refused(fenced(ctx.version, FENCED_FROM)),
        Err(code) => refused(code),
    }
}

/// The request refused with `code`.
pub(super) fn error(_request: &EndTxnRequest, _version: i16, code: ErrorCode) -> EndTxnResponse {
    refused(code)
}

/// No producer id and epoch, and why.
fn refused(error_code: ErrorCode) -> EndTxnResponse {
    EndTxnResponse { error_code, producer_id: ProducerId(-1), producer_epoch: -1, ..Default::default() }
}
