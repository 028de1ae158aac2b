//! OffsetCommit: a member of the current generation (classic) or at its member epoch (KIP-848,
//! v9+) commits, or anyone with a negative epoch for a group without members, as admin tools
//! and manually assigned consumers do.

use std::time::Instant;

use kwire::messages::offset_commit_request::OffsetCommitRequestTopic;
use kwire::messages::offset_commit_response::{OffsetCommitResponsePartition, OffsetCommitResponseTopic};
use kwire::messages::{OffsetCommitRequest, OffsetCommitResponse};
use kwire::{ErrorCode, Uuid};

use super::Ctx;
use crate::groups::offsets::Committed;
use crate::groups::Group;
use crate::state::State;

/// OffsetCommit v9 carries a KIP-848 member's epoch, and learned GROUP_ID_NOT_FOUND.
const MEMBER_EPOCH_FROM: i16 = 9;
/// OffsetCommit v10 names topics by id.
const TOPIC_IDS_FROM: i16 = 10;

pub(super) async fn handle(ctx: &Ctx<'_>, request: OffsetCommitRequest) -> OffsetCommitResponse {
    let mut state = ctx.shared.state();
    let group_id = request.group_id.to_string();
    // Each topic's name: by id from v10 (None for an id no topic has).
    let name = |topic: &OffsetCommitRequestTopic| {
        if ctx.version >= TOPIC_IDS_FROM {
            state.name_of(topic.topic_id).map(str::to_string)
        } else {
            Some(topic.name.to_string())
        }
    };
    let names: Vec<Option<String>> = request.topics.iter().map(name).collect();
    // Kafka's request handler answers unknown topics and partitions itself: only the others go
    // to the group coordinator, and none at all when nothing is left.
    let known: Vec<(Uuid, i32)> = request
        .topics
        .iter()
        .zip(&names)
        .flat_map(|(topic, name)| {
            topic.partitions.iter().filter_map(|p| known_partition(&state, name.as_deref(), p.partition_index))
        })
        .collect();
    let group_error = if known.is_empty() { None } else { validate(ctx, &mut state, &request, &known).err() };
    let mut topics: Vec<OffsetCommitResponseTopic> = request
        .topics
        .iter()
        .zip(names)
        .map(|(topic, name)| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let error_code = match committable(&state, group_error, name.as_deref(), p.partition_index) {
                        Err(code) => code,
                        Ok(name) => {
                            let committed = Committed::new(
                                p.committed_offset,
                                p.committed_leader_epoch,
                                p.committed_metadata.as_ref(),
                            );
                            state.groups_mut().offsets_mut().commit(&group_id, (name, p.partition_index), committed);
                            ErrorCode::NONE
                        }
                    };
                    OffsetCommitResponsePartition {
                        partition_index: p.partition_index,
                        error_code,
                        ..Default::default()
                    }
                })
                .collect();
            let mut response = topic_response(ctx.version, topic, partitions);
            // Kafka's handler answers unknown partitions before it merges the coordinator's
            // answers in: they come first.
            response.partitions.sort_by_key(|p| !early(p.error_code));
            response
        })
        .collect();
    // So do topics with any (their partitions the coordinator answered merged into them).
    topics.sort_by_key(|t| !t.partitions.iter().any(|p| early(p.error_code)));
    OffsetCommitResponse { topics, ..Default::default() }
}

/// Every partition refused with `code`.
pub(super) fn error(request: &OffsetCommitRequest, version: i16, code: ErrorCode) -> OffsetCommitResponse {
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| OffsetCommitResponsePartition {
                    partition_index: p.partition_index,
                    error_code: code,
                    ..Default::default()
                })
                .collect();
            topic_response(version, t, partitions)
        })
        .collect();
    OffsetCommitResponse { topics, ..Default::default() }
}

/// A topic's answer, named as the request names it: by name, or by id from v10.
fn topic_response(
    version: i16,
    topic: &OffsetCommitRequestTopic,
    partitions: Vec<OffsetCommitResponsePartition>,
) -> OffsetCommitResponseTopic {
    let mut response = OffsetCommitResponseTopic { partitions, ..Default::default() };
    if version >= TOPIC_IDS_FROM {
        response.topic_id = topic.topic_id;
    } else {
        response.name = topic.name.clone();
    }
    response
}

/// `name`'s `partition` as (topic id, partition), if the topic and partition exist: what a
/// KIP-848 group checks its committing member holds.
pub(super) fn known_partition(state: &State, name: Option<&str>, partition: i32) -> Option<(Uuid, i32)> {
    let topic = state.topic(name?)?;
    (0..topic.partitions.len() as i32).contains(&partition).then_some((topic.id, partition))
}

/// An answer Kafka's request handler gives before the group coordinator is asked.
fn early(code: ErrorCode) -> bool {
    code == ErrorCode::UNKNOWN_TOPIC_ID || code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
}

/// Whether the group takes this commit of `partitions` (topic id, partition), after Kafka's
/// `OffsetMetadataManager.validateOffsetCommit`: each kind of group checks its own way, and a
/// commit from outside any group (a negative epoch) creates Kafka's "simple" classic group.
fn validate(
    ctx: &Ctx<'_>,
    state: &mut State,
    request: &OffsetCommitRequest,
    partitions: &[(Uuid, i32)],
) -> Result<(), ErrorCode> {
    let group_id = request.group_id.as_str();
    state.coordinates(ctx.node, group_id)?;
    let epoch = request.generation_id_or_member_epoch;
    let member = request.member_id.as_str();
    let now = Instant::now();
    match state.groups_mut().get_mut(group_id) {
        Some(Group::Classic(group)) => {
            group.validate_offset_commit(member, request.group_instance_id.as_deref(), epoch, now)
        }
        Some(Group::Consumer(group)) => group.validate_offset_commit(member, epoch, Some(ctx.version), partitions),
        // Kafka's share group: "is not a consumer group".
        Some(Group::Share(_)) => Err(ErrorCode::GROUP_ID_NOT_FOUND),
        None if epoch < 0 => {
            state.groups_mut().new_classic(group_id, now);
            Ok(())
        }
        // A member's commit to a group that does not exist is refused.
        None if ctx.version >= MEMBER_EPOCH_FROM => Err(ErrorCode::GROUP_ID_NOT_FOUND),
        None => Err(ErrorCode::ILLEGAL_GENERATION),
    }
}

/// Where one partition of an offset commit goes: an unknown topic (by id, v10+, or by name) or
/// partition (answered before the group is asked, as Kafka's request handler does), the
/// group's refusal, or the name of the topic to keep the offset under. Shared with
/// TxnOffsetCommit.
pub(crate) fn committable(
    state: &State,
    group_error: Option<ErrorCode>,
    name: Option<&str>,
    partition: i32,
) -> Result<String, ErrorCode> {
    let name = name.ok_or(ErrorCode::UNKNOWN_TOPIC_ID)?;
    let known = state.topic(name).is_some_and(|t| t.has_partition(partition));
    match group_error {
        _ if !known => Err(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION),
        Some(code) => Err(code),
        None => Ok(name.to_string()),
    }
}
