//! AddOffsetsToTxn: a transactional producer will commit a group's offsets in its transaction
//! (transactions v1; in v2, TxnOffsetCommit adds the group itself).

use kwire::messages::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
use kwire::ErrorCode;

use super::{fenced, Ctx};
use crate::transactions::Producer;

/// v2 learned PRODUCER_FENCED.
const FENCED_FROM: i16 = 2;

pub(super) async fn handle(ctx: &Ctx<'_>, request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse {
    let mut state = ctx.shared.state();
    let p = Producer {
        transactional_id: request.transactional_id.as_str(),
        id: request.producer_id.0,
        epoch: request.producer_epoch,
    };
    let outcome = state.coordinates(ctx.node, p.transactional_id).and_then(|()| {
        let group = request.group_id.to_string();
        state.transactions_mut().add(p, fenced(ctx.version, FENCED_FROM), std::iter::empty(), [group])
    });
    AddOffsetsToTxnResponse { error_code: outcome.err().unwrap_or_default(), ..Default::default() }
}

/// The request refused with `code`.
pub(super) fn error(_request: &AddOffsetsToTxnRequest, _version: i16, code: ErrorCode) -> AddOffsetsToTxnResponse {
    AddOffsetsToTxnResponse { error_code: code, ..Default::default() }
}
