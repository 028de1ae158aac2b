//! SyncGroup: the leader hands out the assignments; every member waits for them and gets
//! its own.

use std::time::{Duration, Instant};

use kwire::messages::{SyncGroupRequest, SyncGroupResponse};
use kwire::{Bytes, ErrorCode, StrBytes};

use super::Ctx;
use crate::groups::classic::Phase;

/// SyncGroup v5 made the protocol's type and name mandatory.
const PROTOCOL_NAMED_FROM: i16 = 5;

pub(super) async fn handle(ctx: &Ctx<'_>, request: SyncGroupRequest) -> SyncGroupResponse {
    let group_id = request.group_id.to_string();
    let member_id = request.member_id.to_string();
    // From v5 the protocol's type and name must be given (Kafka's request handler checks).
    if ctx.version >= PROTOCOL_NAMED_FROM && (request.protocol_type.is_none() || request.protocol_name.is_none()) {
        return refused(ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
    }
    {
        let mut state = ctx.shared.state();
        if let Err(code) = state.coordinates(ctx.node, &group_id) {
            return refused(code);
        }
        let Some(group) = state.groups_mut().classic_mut(&group_id) else {
            return refused(ErrorCode::UNKNOWN_MEMBER_ID);
        };
        tracing::debug!(group = %group_id, member = %member_id, generation = request.generation_id, phase = ?group.phase, at = group.generation, "SyncGroup");
        let instance = request.group_instance_id.as_deref();
        if let Err(code) = group
            .check_instance(&member_id, instance)
            .and_then(|()| group.check_member(&member_id, request.generation_id))
        {
            return refused(code);
        }
        if ctx.version >= 5 {
            let type_ok =
                request.protocol_type.as_ref().is_none_or(|t| group.protocol_type.as_deref() == Some(t.as_str()));
            let name_ok = request.protocol_name.as_ref().is_none_or(|n| group.protocol.as_deref() == Some(n.as_str()));
            if !type_ok || !name_ok {
                return refused(ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
            }
        }
        let assignments: Vec<(String, Bytes)> =
            request.assignments.iter().map(|a| (a.member_id.to_string(), a.assignment.clone())).collect();
        group.sync(&member_id, assignments, Instant::now());
    }
    ctx.shared.groups_changed.notify_waiters();
    loop {
        let changed = ctx.shared.groups_changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        {
            let state = ctx.shared.state();
            let Some(group) = state.groups().classic(&group_id) else { return refused(ErrorCode::UNKNOWN_MEMBER_ID) };
            let Some(member) = group.members.get(&member_id) else { return refused(ErrorCode::UNKNOWN_MEMBER_ID) };
            if group.generation != request.generation_id || group.phase == Phase::PreparingRebalance {
                return refused(ErrorCode::REBALANCE_IN_PROGRESS);
            }
            if group.phase == Phase::Stable {
                return SyncGroupResponse {
                    protocol_type: group.protocol_type.clone().map(StrBytes::from),
                    protocol_name: group.protocol.clone().map(StrBytes::from),
                    assignment: member.assignment.clone(),
                    ..Default::default()
                };
            }
        }
        let _ = tokio::time::timeout(Duration::from_millis(200), changed).await;
    }
}

/// The request refused with `code`.
pub(super) fn error(_request: &SyncGroupRequest, _version: i16, code: ErrorCode) -> SyncGroupResponse {
    refused(code)
}

/// A sync refused: no assignment, and no protocol named.
fn refused(error_code: ErrorCode) -> SyncGroupResponse {
    SyncGroupResponse { error_code, protocol_type: None, protocol_name: None, ..Default::default() }
}
