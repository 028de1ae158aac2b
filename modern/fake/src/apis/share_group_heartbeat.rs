//! ShareGroupHeartbeat (KIP-932): a share group member joins with its subscription, keeps it
//! and gets its assignment, or leaves (its share sessions close and what it holds is released).
//! The member brings its own id; a group id taken by a consumer or classic group is refused.

use kwire::messages::share_group_heartbeat_response::{Assignment, TopicPartitions};
use kwire::messages::{ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse};
use kwire::{ErrorCode, StrBytes};

use super::Ctx;
use crate::groups::share::Beat;

pub(super) async fn handle(ctx: &Ctx<'_>, request: ShareGroupHeartbeatRequest) -> ShareGroupHeartbeatResponse {
    let refused = |code: ErrorCode, message: String| ShareGroupHeartbeatResponse {
        error_code: code,
        error_message: Some(StrBytes::from(message)),
        ..Default::default()
    };
    let mut state = ctx.shared.state();
    let group_id = request.group_id.to_string();
    if let Err(code) = state.coordinates(ctx.node, &group_id) {
        return refused(code, code.to_string());
    }
    if request.member_id.is_empty() {
        return refused(ErrorCode::INVALID_REQUEST, "MemberId can't be empty.".to_string());
    }
    let topics = state.topics().assignable();
    let settings = state.groups().configs().settings(&group_id, &ctx.shared.config);
    let beat = Beat {
        member_id: request.member_id.to_string(),
        member_epoch: request.member_epoch,
        rack_id: request.rack_id.as_ref().map(|s| s.to_string()),
        subscribed: request.subscribed_topic_names.as_ref().map(|ns| ns.iter().map(|n| n.to_string()).collect()),
        client_id: ctx.client_id.to_string(),
        client_host: ctx.client_host.to_string(),
    };
    // A classic or consumer group, empty or not, is not a share group.
    let group = match state.groups_mut().share_or_create(&group_id) {
        Ok(group) => group,
        Err((code, message)) => return refused(code, message),
    };
    let answer = group.heartbeat(beat, &topics, std::time::Instant::now());
    if answer.as_ref().is_ok_and(|a| a.member_epoch == -1) {
        // Left: its sessions close and its records go back.
        if state.shares_mut().forget_member(&group_id, &request.member_id) {
            ctx.shared.appended.notify_waiters();
        }
    }
    match answer {
        Err((code, message)) => refused(code, message),
        Ok(answer) => ShareGroupHeartbeatResponse {
            member_id: Some(request.member_id.clone()),
            member_epoch: answer.member_epoch,
            // A member that left is not told when to heartbeat (Kafka answers 0).
            heartbeat_interval_ms: if answer.member_epoch < 0 { 0 } else { settings.heartbeat_interval_ms },
            assignment: answer.assignment.map(|owned| Assignment {
                topic_partitions: owned
                    .into_iter()
                    .map(|(topic_id, ps)| TopicPartitions {
                        topic_id,
                        partitions: ps.into_iter().collect::<Vec<_>>().into(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            ..Default::default()
        },
    }
}

/// The request refused with `code`, at the top.
pub(super) fn error(
    _request: &ShareGroupHeartbeatRequest,
    _version: i16,
    code: ErrorCode,
) -> ShareGroupHeartbeatResponse {
    ShareGroupHeartbeatResponse { error_code: code, ..Default::default() }
}
