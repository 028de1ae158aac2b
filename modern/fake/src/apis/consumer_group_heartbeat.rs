//! ConsumerGroupHeartbeat (KIP-848): a member joins, keeps its subscription and assignment in
//! step with the coordinator, or leaves. v0 hands new members their id; v1 members bring their
//! own. A group with classic members is not a consumer group.

use kafka_wire::messages::consumer_group_heartbeat_response::{Assignment, TopicPartitions};
use kafka_wire::messages::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};
use kafka_wire::{ErrorCode, StrBytes};

use super::{coordinates, Ctx};
use crate::consumer_groups::{Beat, Owned, HEARTBEAT_INTERVAL_MS};

/// v1: the member generates its id.
const MEMBER_CHOSEN_ID_FROM: i16 = 1;

pub(crate) fn handle(ctx: &Ctx<'_>, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse {
    let refused = |code: ErrorCode, message: String| ConsumerGroupHeartbeatResponse {
        error_code: code,
        error_message: Some(StrBytes::from(message)),
        ..Default::default()
    };
    let mut state = ctx.shared.state();
    let group_id = request.group_id.to_string();
    if let Err(code) = coordinates(&state, ctx.node, &group_id) {
        return refused(code, code.to_string());
    }
    if state.groups.get(&group_id).is_some_and(|g| !g.members.is_empty()) {
        return refused(ErrorCode::GROUP_ID_NOT_FOUND, format!("Group {group_id} is not a consumer group."));
    }
    let mut member_id = request.member_id.to_string();
    if member_id.is_empty() {
        if ctx.version >= MEMBER_CHOSEN_ID_FROM || request.member_epoch != 0 {
            return refused(ErrorCode::INVALID_REQUEST, "MemberId can't be empty.".to_string());
        }
        member_id = crate::state::random_uuid().to_string();
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
    let topics = state.assignable_topics();
    let group = state.consumer_groups.entry(group_id).or_default();
    match group.heartbeat(beat, &topics, std::time::Instant::now()) {
        Err((code, message)) => refused(code, message),
        Ok(answer) => ConsumerGroupHeartbeatResponse {
            member_id: Some(StrBytes::from(answer.member_id)),
            member_epoch: answer.member_epoch,
            heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS,
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
