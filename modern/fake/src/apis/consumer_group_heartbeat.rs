//! ConsumerGroupHeartbeat (KIP-848): a member joins, keeps its subscription and assignment in
//! step with the coordinator, or leaves. v0 hands new members their id; v1 members bring their
//! own. A group with classic members is not a consumer group.

use kwire::messages::consumer_group_heartbeat_response::{Assignment, TopicPartitions};
use kwire::messages::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};
use kwire::{ErrorCode, StrBytes};

use super::Ctx;
use crate::groups::assignors::{Owned, CONSUMER_ASSIGNORS};
use crate::groups::consumer::{Beat, HEARTBEAT_INTERVAL_MS};

/// v1: the member generates its id.
const MEMBER_CHOSEN_ID_FROM: i16 = 1;

pub(super) async fn handle(ctx: &Ctx<'_>, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse {
    let refused = |code: ErrorCode, message: String| ConsumerGroupHeartbeatResponse {
        error_code: code,
        error_message: Some(StrBytes::from(message)),
        ..Default::default()
    };
    if let Some((code, message)) = invalid(ctx.version, &request) {
        return refused(code, message);
    }
    let mut state = ctx.shared.state();
    let group_id = request.group_id.to_string();
    if let Err(code) = state.coordinates(ctx.node, &group_id) {
        return refused(code, code.to_string());
    }
    let mut member_id = request.member_id.to_string();
    if member_id.is_empty() {
        // A v0 member joining (or stepping out) is given its id.
        member_id = crate::ids::random_uuid().to_string();
    }
    let owned = request
        .topic_partitions
        .as_ref()
        .map(|tps| tps.iter().map(|tp| (tp.topic_id, tp.partitions.iter().collect())).collect::<Owned>());
    let beat = Beat {
        member_id,
        member_epoch: request.member_epoch,
        instance_id: request.instance_id.as_ref().map(|s| s.to_string()),
        rack_id: request.rack_id.as_ref().map(|s| s.to_string()),
        rebalance_timeout_ms: request.rebalance_timeout_ms,
        subscribed_names: request.subscribed_topic_names.as_ref().map(|ns| ns.iter().map(|n| n.to_string()).collect()),
        subscribed_regex: request.subscribed_topic_regex.as_ref().map(|r| r.to_string()),
        assignor: request.server_assignor.as_ref().map(|a| a.to_string()),
        owned,
        client_id: ctx.client_id.to_string(),
        client_host: ctx.client_host.to_string(),
    };
    let topics = state.topics().assignable();
    // A classic group with members, or a share group, is not a consumer group.
    let group = match state.groups_mut().consumer_to_join(&group_id) {
        Ok(group) => group,
        Err((code, message)) => return refused(code, message),
    };
    match group.heartbeat(beat, &topics, std::time::Instant::now()) {
        Err((code, message)) => refused(code, message),
        Ok(answer) => ConsumerGroupHeartbeatResponse {
            member_id: Some(StrBytes::from(answer.member_id)),
            member_epoch: answer.member_epoch,
            // A member that left (or stepped out) is not told when to heartbeat.
            heartbeat_interval_ms: if answer.member_epoch < 0 { 0 } else { HEARTBEAT_INTERVAL_MS },
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

/// Kafka's `GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid`, checked
/// before the coordinator is even asked: the refusal and Kafka's message for it.
fn invalid(version: i16, request: &ConsumerGroupHeartbeatRequest) -> Option<(ErrorCode, String)> {
    let bad = |message: &str| Some((ErrorCode::INVALID_REQUEST, message.to_string()));
    let epoch = request.member_epoch;
    if (version >= MEMBER_CHOSEN_ID_FROM || epoch > 0 || epoch == -1) && request.member_id.is_empty() {
        return bad("MemberId can't be empty.");
    }
    if request.group_id.is_empty() {
        return bad("GroupId can't be empty.");
    }
    if request.instance_id.as_ref().is_some_and(|i| i.is_empty()) {
        return bad("InstanceId can't be empty.");
    }
    if request.rack_id.as_ref().is_some_and(|r| r.is_empty()) {
        return bad("RackId can't be empty.");
    }
    if epoch == 0 {
        if request.rebalance_timeout_ms == -1 {
            return bad("RebalanceTimeoutMs must be provided in first request.");
        }
        // A member (re)joining owns nothing, and says so.
        if request.topic_partitions.as_ref().is_none_or(|tps| !tps.is_empty()) {
            return bad("TopicPartitions must be empty when (re-)joining.");
        }
        if request.subscribed_topic_names.is_none() && request.subscribed_topic_regex.is_none() {
            return bad("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.");
        }
    } else if epoch == -2 && request.instance_id.is_none() {
        return bad("InstanceId can't be null.");
    } else if epoch < -2 {
        return bad("MemberEpoch is invalid.");
    }
    match request.server_assignor.as_deref() {
        Some(assignor) if !CONSUMER_ASSIGNORS.contains(&assignor) => Some((
            ErrorCode::UNSUPPORTED_ASSIGNOR,
            format!(
                "ServerAssignor {assignor} is not supported. Supported assignors: {}.",
                CONSUMER_ASSIGNORS.join(", ")
            ),
        )),
        _ => None,
    }
}

/// The request refused with `code` (the group APIs answer a request-wide failure at the top).
pub(super) fn error(
    _request: &ConsumerGroupHeartbeatRequest,
    _version: i16,
    code: ErrorCode,
) -> ConsumerGroupHeartbeatResponse {
    ConsumerGroupHeartbeatResponse { error_code: code, ..Default::default() }
}
