//! LeaveGroup: one member (v0–2) or several (v3+) leave; the rest rebalance at once.

use std::time::Instant;

use kwire::messages::leave_group_response::MemberResponse;
use kwire::messages::{LeaveGroupRequest, LeaveGroupResponse};
use kwire::ErrorCode;

use super::Ctx;

/// LeaveGroup v3 names several members.
const BATCHED_FROM: i16 = 3;

pub(super) async fn handle(ctx: &Ctx<'_>, request: LeaveGroupRequest) -> LeaveGroupResponse {
    let response = {
        let mut state = ctx.shared.state();
        if let Err(error_code) = state.coordinates(ctx.node, &request.group_id) {
            return LeaveGroupResponse { error_code, ..Default::default() };
        }
        let Some(group) = state.groups_mut().classic_mut(&request.group_id) else {
            return LeaveGroupResponse { error_code: ErrorCode::UNKNOWN_MEMBER_ID, ..Default::default() };
        };
        // v3+: a static member may be named by its instance id alone (KIP-345's admin removal);
        // a member id another member's instance holds now is fenced.
        let leaving: Vec<(String, ErrorCode)> = if ctx.version >= BATCHED_FROM {
            request
                .members
                .iter()
                .map(|m| {
                    let instance = m.group_instance_id.as_deref();
                    let id = match (m.member_id.is_empty(), instance.and_then(|i| group.static_member(i))) {
                        (true, Some(current)) => current,
                        _ => m.member_id.to_string(),
                    };
                    let code = match group.check_instance(&m.member_id, instance) {
                        Err(code) if !m.member_id.is_empty() => code,
                        _ if group.members.contains_key(&id) => ErrorCode::NONE,
                        _ => ErrorCode::UNKNOWN_MEMBER_ID,
                    };
                    (id, code)
                })
                .collect()
        } else {
            let id = request.member_id.to_string();
            let code = if group.members.contains_key(&id) { ErrorCode::NONE } else { ErrorCode::UNKNOWN_MEMBER_ID };
            vec![(id, code)]
        };
        tracing::debug!(group = %request.group_id, ?leaving, "LeaveGroup");
        let ids: Vec<String> =
            leaving.iter().filter(|(_, c)| *c == ErrorCode::NONE).map(|(id, _)| id.clone()).collect();
        let known: Vec<ErrorCode> = leaving.into_iter().map(|(_, code)| code).collect();
        group.remove(&ids, Instant::now());
        if ctx.version >= BATCHED_FROM {
            let members = request
                .members
                .iter()
                .zip(&known)
                .map(|(m, known)| MemberResponse {
                    member_id: m.member_id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    error_code: *known,
                    ..Default::default()
                })
                .collect();
            LeaveGroupResponse { members, ..Default::default() }
        } else {
            LeaveGroupResponse { error_code: known[0], ..Default::default() }
        }
    };
    ctx.shared.groups_changed.notify_waiters();
    response
}

/// The request refused with `code` (as a whole, not member by member).
pub(super) fn error(_request: &LeaveGroupRequest, _version: i16, code: ErrorCode) -> LeaveGroupResponse {
    LeaveGroupResponse { error_code: code, ..Default::default() }
}
