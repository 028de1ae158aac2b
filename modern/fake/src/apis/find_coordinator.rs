//! FindCoordinator: the node coordinating a group or a transactional id, one key (v0–3) or
//! several (v4+).

use kwire::messages::find_coordinator_response::Coordinator;
use kwire::messages::{FindCoordinatorRequest, FindCoordinatorResponse};
use kwire::{BrokerId, ErrorCode, StrBytes};

use super::Ctx;

/// FindCoordinator v4 batches keys.
const BATCHED_FROM: i16 = 4;

pub(super) async fn handle(ctx: &Ctx<'_>, request: FindCoordinatorRequest) -> FindCoordinatorResponse {
    let state = ctx.shared.state();
    let find = |key: &StrBytes| {
        let found = state.coordinator_of(key).and_then(|node| Some((node, state.node(node)?)));
        match (request.key_type, found) {
            (0 | 1, Some((node, info))) => Coordinator {
                key: key.clone(),
                node_id: BrokerId(node),
                host: StrBytes::from(info.host.clone()),
                port: info.port,
                ..Default::default()
            },
            (0 | 1, None) => refused(key, ErrorCode::COORDINATOR_NOT_AVAILABLE),
            _ => refused(key, ErrorCode::INVALID_REQUEST),
        }
    };
    respond(ctx.version, &request, find)
}

/// Every key refused with `code`.
pub(super) fn error(request: &FindCoordinatorRequest, version: i16, code: ErrorCode) -> FindCoordinatorResponse {
    respond(version, request, |key| refused(key, code))
}

/// The coordinator of each key from v4; before, of the one key, in the response itself.
fn respond(
    version: i16,
    request: &FindCoordinatorRequest,
    find: impl Fn(&StrBytes) -> Coordinator,
) -> FindCoordinatorResponse {
    if version >= BATCHED_FROM {
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

/// A key whose coordinator is not found.
fn refused(key: &StrBytes, error_code: ErrorCode) -> Coordinator {
    Coordinator { key: key.clone(), node_id: BrokerId(-1), port: -1, error_code, ..Default::default() }
}
