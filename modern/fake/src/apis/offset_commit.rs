//! OffsetCommit: a member of the current generation (classic) or at its member epoch (KIP-848,
//! v9+) commits, or anyone with a negative epoch for a group without members, as admin tools
//! and manually assigned consumers do.

use std::collections::btree_map::Entry;
use std::time::Instant;

use kwire::messages::offset_commit_request::OffsetCommitRequestTopic;
use kwire::messages::offset_commit_response::{OffsetCommitResponsePartition, OffsetCommitResponseTopic};
use kwire::messages::{OffsetCommitRequest, OffsetCommitResponse};
use kwire::{ErrorCode, Uuid};

use super::{coordinates, Ctx};
use crate::consumer_groups::is_consumer_group;
use crate::groups::{Committed, Group, Phase};
use crate::state::State;

/// OffsetCommit v9 carries a KIP-848 member's epoch, and learned GROUP_ID_NOT_FOUND.
const MEMBER_EPOCH_FROM: i16 = 9;
/// OffsetCommit v10 names topics by id.
const TOPIC_IDS_FROM: i16 = 10;

pub(crate) fn handle(ctx: &Ctx<'_>, request: OffsetCommitRequest) -> OffsetCommitResponse {
    let mut state = ctx.shared.state();
    let group_id = request.group_id.to_string();
    // Each topic's name: by id from v10 (None for an id no topic has).
    let name = |topic: &OffsetCommitRequestTopic| {
        if ctx.version >= TOPIC_IDS_FROM {
            state.name_of(topic.topic_id)
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
                            if let Some(group) = state.groups.get_mut(&group_id) {
                                group.offsets.insert((name, p.partition_index), committed);
                            }
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
            let mut response = OffsetCommitResponseTopic { partitions, ..Default::default() };
            // Kafka's handler answers unknown partitions before it merges the coordinator's
            // answers in: they come first.
            response.partitions.sort_by_key(|p| !early(p.error_code));
            if ctx.version >= TOPIC_IDS_FROM {
                response.topic_id = topic.topic_id;
            } else {
                response.name = topic.name.clone();
            }
            response
        })
        .collect();
    // So do topics with any (their partitions the coordinator answered merged into them).
    topics.sort_by_key(|t| !t.partitions.iter().any(|p| early(p.error_code)));
    OffsetCommitResponse { topics, ..Default::default() }
}

/// `name`'s `partition` as (topic id, partition), if the topic and partition exist: what a
/// KIP-848 group checks its committing member holds.
pub(super) fn known_partition(state: &State, name: Option<&str>, partition: i32) -> Option<(Uuid, i32)> {
    let topic = state.topics.get(name?)?;
    (0..topic.partitions.len() as i32).contains(&partition).then_some((topic.id, partition))
}

/// An answer Kafka's request handler gives before the group coordinator is asked.
fn early(code: ErrorCode) -> bool {
    code == ErrorCode::UNKNOWN_TOPIC_ID || code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
}

/// Whether the group takes this commit of `partitions` (topic id, partition), after Kafka's
/// `OffsetMetadataManager.validateOffsetCommit`; the group that keeps the offsets exists after.
fn validate(
    ctx: &Ctx<'_>,
    state: &mut State,
    request: &OffsetCommitRequest,
    partitions: &[(Uuid, i32)],
) -> Result<(), ErrorCode> {
    let group_id = request.group_id.to_string();
    coordinates(state, ctx.node, &group_id)?;
    let epoch = request.generation_id_or_member_epoch;
    let member = request.member_id.as_str();
    let new_group = || Group::new(Instant::now(), ctx.shared.config.group_initial_rebalance_delay);
    if is_consumer_group(state, &group_id) {
        state.consumer_groups[&group_id].validate_offset_commit(member, epoch, Some(ctx.version), partitions)?;
        // Its offsets are kept by the classic group of the same id.
        state.groups.entry(group_id).or_insert_with(new_group);
        return Ok(());
    }
    let group = match state.groups.entry(group_id) {
        Entry::Occupied(group) => group.into_mut(),
        // A commit from outside any group creates one (Kafka's "simple" group); a member's
        // commit to a group that does not exist is refused.
        Entry::Vacant(none) if epoch < 0 => none.insert(new_group()),
        Entry::Vacant(_) if ctx.version >= MEMBER_EPOCH_FROM => return Err(ErrorCode::GROUP_ID_NOT_FOUND),
        Entry::Vacant(_) => return Err(ErrorCode::ILLEGAL_GENERATION),
    };
    // Kafka's `ClassicGroup.validateOffsetCommit`: with a negative generation anyone commits
    // while the group has no members; without member id or instance id nobody else does. A
    // member needs its instance id's current member id and the group's generation, and may
    // commit while a round of joins runs (before it rejoins), not between its end and the
    // leader's assignment.
    if epoch < 0 && group.phase == Phase::Empty {
        return Ok(());
    }
    let instance = request.group_instance_id.as_deref();
    if epoch < 0 && member.is_empty() && instance.is_none() {
        return Err(ErrorCode::UNKNOWN_MEMBER_ID);
    }
    group.check_instance(member, instance)?;
    group.check_member(member, epoch)?;
    if group.phase == Phase::CompletingRebalance {
        return Err(ErrorCode::REBALANCE_IN_PROGRESS);
    }
    if let Some(m) = group.members.get_mut(member) {
        m.last_seen = Instant::now();
    }
    Ok(())
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
    let known = state.topics.get(name).is_some_and(|t| (0..t.partitions.len() as i32).contains(&partition));
    match group_error {
        _ if !known => Err(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION),
        Some(code) => Err(code),
        None => Ok(name.to_string()),
    }
}
