//! FindCoordinator: the node coordinating a group or a transactional id, one key (v0–3) or
//! several (v4+).

use kwire::messages::find_coordinator_response::Coordinator;
use kwire::messages::{FindCoordinatorRequest, FindCoordinatorResponse};
use kwire::{BrokerId, ErrorCode, StrBytes};

use super::Ctx;

/// FindCoordinator v4 batches keys.
const BATCHED_FROM: i16 = 4;

pub(crate) fn handle(ctx: &Ctx<'_>, request: FindCoordinatorRequest) -> FindCoordinatorResponse {
    let state = ctx.shared.state();
    let find = |key: &StrBytes| {
        let mut entry = Coordinator { key: key.clone(), node_id: BrokerId(-1), port: -1, ..Default::default() };
        match (request.key_type, state.coordinator_of(key)) {
            (0 | 1, Some(node)) => {
                let info = state.node(node).expect("a coordinator is a node");
                entry.node_id = BrokerId(node);
                entry.host = StrBytes::from(info.host.clone());
                entry.port = info.port;
            }
            (0 | 1, None) => entry.error_code = ErrorCode::COORDINATOR_NOT_AVAILABLE,
            _ => entry.error_code = ErrorCode::INVALID_REQUEST,
        }
        entry
    };
    if ctx.version >= BATCHED_FROM {
        return FindCoordinatorResponse {
            coordinators: request.coordinator_keys.iter().map(find).collect(),
            ..Default::default()
        };
    }
    let one = find(&request.key);
    FindCoordinatorResponse {
        error_code: one.error_code,
        node_id: one.node_id,
        host: one.host,
        port: one.port,
        ..Default::default()
    }
}
