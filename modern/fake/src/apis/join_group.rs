//! JoinGroup: joins the member, then waits for the round of joins to end (every member
//! rejoined, or the rebalance timeout passed) and answers with the generation, the chosen
//! protocol, the leader, and for the leader every member's metadata.

use std::time::{Duration, Instant};

use kwire::messages::join_group_response::JoinGroupResponseMember;
use kwire::messages::{JoinGroupRequest, JoinGroupResponse};
use kwire::{ErrorCode, StrBytes};

use super::Ctx;
use crate::groups::classic::{JoinRequest, JoinStep};

/// JoinGroup v4 asks a new member to join again with the id it is given (KIP-394).
const KNOWN_MEMBER_ID_FROM: i16 = 4;

pub(super) async fn handle(ctx: &Ctx<'_>, request: JoinGroupRequest) -> JoinGroupResponse {
    let group_id = request.group_id.to_string();
    let refuse = |error_code, member_id: String| refused(ctx.version, error_code, StrBytes::from(member_id));
    let join = JoinRequest {
        member_id: request.member_id.to_string(),
        instance_id: request.group_instance_id.as_ref().map(|s| s.to_string()),
        client_id: ctx.client_id.to_string(),
        client_host: ctx.client_host.to_string(),
        session_timeout_ms: request.session_timeout_ms,
        rebalance_timeout_ms: if ctx.version >= 1 { request.rebalance_timeout_ms } else { request.session_timeout_ms },
        protocol_type: request.protocol_type.to_string(),
        protocols: request.protocols.iter().map(|p| (p.name.to_string(), p.metadata.clone())).collect(),
        require_known_member_id: ctx.version >= KNOWN_MEMBER_ID_FROM,
    };
    let member_id = {
        let mut state = ctx.shared.state();
        if let Err(code) = state.coordinates(ctx.node, &group_id) {
            return refuse(code, join.member_id);
        }
        if group_id.is_empty() {
            return refuse(ErrorCode::INVALID_GROUP_ID, join.member_id);
        }
        let now = Instant::now();
        // A share group, or a consumer group with members, is not joined (Kafka answers
        // without a member id).
        let group = match state.groups_mut().classic_to_join(&group_id, now) {
            Ok(group) => group,
            Err(code) => return refuse(code, String::new()),
        };
        tracing::debug!(group = %group_id, member = %join.member_id, phase = ?group.phase, generation = group.generation, "JoinGroup");
        match group.join(join, now) {
            JoinStep::Refuse(code, member_id) => return refuse(code, member_id),
            JoinStep::Wait(member_id) => member_id,
        }
    };
    ctx.shared.groups_changed.notify_waiters();
    loop {
        let changed = ctx.shared.groups_changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        {
            let mut state = ctx.shared.state();
            let member = state.groups_mut().classic_mut(&group_id).and_then(|g| g.members.get_mut(&member_id));
            let Some(member) = member else {
                return refuse(ErrorCode::UNKNOWN_MEMBER_ID, member_id);
            };
            if let Some(answer) = member.join_answer.take() {
                return JoinGroupResponse {
                    generation_id: answer.generation,
                    protocol_type: Some(StrBytes::from(answer.protocol_type)),
                    protocol_name: Some(StrBytes::from(answer.protocol)),
                    leader: StrBytes::from(answer.leader),
                    member_id: StrBytes::from(member_id),
                    // KIP-814's field is v9+; an older leader gets the members and assigns again.
                    skip_assignment: answer.skip_assignment && ctx.version >= 9,
                    members: answer
                        .members
                        .into_iter()
                        .map(|(id, instance, metadata)| JoinGroupResponseMember {
                            member_id: StrBytes::from(id),
                            group_instance_id: instance.map(StrBytes::from),
                            metadata,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                };
            }
        }
        // The group ticker ends overdue rounds; the timeout only bounds a missed wake-up.
        let _ = tokio::time::timeout(Duration::from_millis(200), changed).await;
    }
}

/// The join refused with `code`.
pub(super) fn error(request: &JoinGroupRequest, version: i16, code: ErrorCode) -> JoinGroupResponse {
    refused(version, code, request.member_id.clone())
}

/// A join refused: no generation, and the member id it was made with (or is to use).
fn refused(version: i16, error_code: ErrorCode, member_id: StrBytes) -> JoinGroupResponse {
    JoinGroupResponse {
        error_code,
        generation_id: -1,
        member_id,
        // Null from v7 on, as Kafka answers an error; an empty string before.
        protocol_name: (version < 7).then(StrBytes::default),
        ..Default::default()
    }
}
