//! Heartbeat: keeps a member alive; tells it when a rebalance has begun.

use std::time::Instant;

use kwire::messages::{HeartbeatRequest, HeartbeatResponse};
use kwire::ErrorCode;

use super::Ctx;
use crate::groups::classic::Phase;

pub(super) async fn handle(ctx: &Ctx<'_>, request: HeartbeatRequest) -> HeartbeatResponse {
    let mut state = ctx.shared.state();
    let error_code = (|| {
        state.coordinates(ctx.node, &request.group_id)?;
        let group = state.groups_mut().classic_mut(&request.group_id).ok_or(ErrorCode::UNKNOWN_MEMBER_ID)?;
        let member = request.member_id.to_string();
        group.check_instance(&member, request.group_instance_id.as_deref())?;
        if !group.members.contains_key(&member) {
            return Err(ErrorCode::UNKNOWN_MEMBER_ID);
        }
        if let Some(m) = group.members.get_mut(&member) {
            m.last_seen = Instant::now();
        }
        // Kafka's order: the member's generation, then whether a round of joins runs.
        group.check_member(&member, request.generation_id)?;
        if group.phase == Phase::PreparingRebalance {
            return Err(ErrorCode::REBALANCE_IN_PROGRESS);
        }
        Ok(())
    })()
    .err()
    .unwrap_or(ErrorCode::NONE);
    tracing::debug!(group = %request.group_id, member = %request.member_id, generation = request.generation_id, %error_code, "Heartbeat");
    HeartbeatResponse { error_code, ..Default::default() }
}

/// The request refused with `code`.
pub(super) fn error(_request: &HeartbeatRequest, _version: i16, code: ErrorCode) -> HeartbeatResponse {
    HeartbeatResponse { error_code: code, ..Default::default() }
}
