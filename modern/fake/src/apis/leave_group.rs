//! LeaveGroup: one member (v0–2) or several (v3+) leave; the rest rebalance at once.

use std::time::Instant;

use kafka_wire::messages::leave_group_response::MemberResponse;
use kafka_wire::messages::{LeaveGroupRequest, LeaveGroupResponse};
use kafka_wire::ErrorCode;

use super::{coordinates, Ctx};

/// LeaveGroup v3 names several members.
const BATCHED_FROM: i16 = 3;

pub(crate) fn handle(ctx: &Ctx<'_>, request: LeaveGroupRequest) -> LeaveGroupResponse {
    let response = {
        let mut state = ctx.shared.state();
        if let Err(error_code) = coordinates(&state, ctx.node, &request.group_id) {
            return LeaveGroupResponse { error_code, ..Default::default() };
        }
        let ids: Vec<String> = if ctx.version >= BATCHED_FROM {
            request.members.iter().map(|m| m.member_id.to_string()).collect()
        } else {
            vec![request.member_id.to_string()]
        };
        let Some(group) = state.groups.get_mut(request.group_id.as_str()) else {
            return LeaveGroupResponse { error_code: ErrorCode::UNKNOWN_MEMBER_ID, ..Default::default() };
        };
        tracing::debug!(group = %request.group_id, ?ids, "LeaveGroup");
        let known: Vec<bool> = ids.iter().map(|id| group.members.contains_key(id)).collect();
        group.remove(&ids, Instant::now());
        if ctx.version >= BATCHED_FROM {
            let members = request
                .members
                .iter()
                .zip(&known)
                .map(|(m, known)| MemberResponse {
                    member_id: m.member_id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    error_code: if *known { ErrorCode::NONE } else { ErrorCode::UNKNOWN_MEMBER_ID },
                    ..Default::default()
                })
                .collect();
            LeaveGroupResponse { members, ..Default::default() }
        } else {
            let error_code = if known[0] { ErrorCode::NONE } else { ErrorCode::UNKNOWN_MEMBER_ID };
            LeaveGroupResponse { error_code, ..Default::default() }
        }
    };
    ctx.shared.groups_changed.notify_waiters();
    response
}
