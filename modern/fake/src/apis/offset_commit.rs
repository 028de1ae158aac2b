//! OffsetCommit: a member of the current generation commits (or anyone, with generation -1,
//! for a group without members, as admin tools and manually assigned consumers do).

use std::time::Instant;

use kafka_wire::messages::offset_commit_response::{OffsetCommitResponsePartition, OffsetCommitResponseTopic};
use kafka_wire::messages::{OffsetCommitRequest, OffsetCommitResponse};
use kafka_wire::ErrorCode;

use super::{coordinates, Ctx};
use crate::groups::{Committed, Group, Phase};
use crate::state::State;

/// OffsetCommit v9 carries a KIP-848 member's epoch.
const MEMBER_EPOCH_FROM: i16 = 9;
/// OffsetCommit v10 names topics by id.
const TOPIC_IDS_FROM: i16 = 10;

pub(crate) fn handle(ctx: &Ctx<'_>, request: OffsetCommitRequest) -> OffsetCommitResponse {
    let mut state = ctx.shared.state();
    let group_id = request.group_id.to_string();
    let now = Instant::now();
    let group_error = (|| {
        coordinates(&state, ctx.node, &group_id)?;
        let generation = request.generation_id_or_member_epoch;
        let member = request.member_id.to_string();
        state
            .groups
            .entry(group_id.clone())
            .or_insert_with(|| Group::new(now, ctx.shared.config.group_initial_rebalance_delay));
        // A KIP-848 group: its member at its current epoch (OffsetCommit v9+ carries it).
        if let Some(cg) = state.consumer_groups.get(&group_id).filter(|g| !g.members.is_empty()) {
            if generation < 0 && member.is_empty() {
                return Err(ErrorCode::UNKNOWN_MEMBER_ID);
            }
            if ctx.version < MEMBER_EPOCH_FROM {
                return Err(ErrorCode::UNSUPPORTED_VERSION);
            }
            return cg.check_member(&member, generation);
        }
        let group = state.groups.get_mut(&group_id).expect("created above");
        if generation < 0 && member.is_empty() {
            // A commit from outside the group: only while it has no members.
            return if group.phase == Phase::Empty { Ok(()) } else { Err(ErrorCode::UNKNOWN_MEMBER_ID) };
        }
        // Kafka's order (`ClassicGroup.validateOffsetCommit`): the member, its generation, then
        // the phase. Members may commit while a round of joins runs (before they rejoin), not
        // between its end and the leader's assignment.
        group.check_instance(&member, request.group_instance_id.as_deref())?;
        group.check_member(&member, generation)?;
        if group.phase == Phase::CompletingRebalance {
            return Err(ErrorCode::REBALANCE_IN_PROGRESS);
        }
        if let Some(m) = group.members.get_mut(&member) {
            m.last_seen = now;
        }
        Ok(())
    })()
    .err();
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let name = if ctx.version >= TOPIC_IDS_FROM {
                state.name_of(topic.topic_id)
            } else {
                Some(topic.name.to_string())
            };
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
            if ctx.version >= TOPIC_IDS_FROM {
                response.topic_id = topic.topic_id;
            } else {
                response.name = topic.name.clone();
            }
            response
        })
        .collect();
    OffsetCommitResponse { topics, ..Default::default() }
}

/// Where one partition of an offset commit goes: the group's refusal, an unknown topic (by id,
/// v10+, or by name) or partition, or the name of the topic to keep the offset under. Shared
/// with TxnOffsetCommit.
pub(crate) fn committable(
    state: &State,
    group_error: Option<ErrorCode>,
    name: Option<&str>,
    partition: i32,
) -> Result<String, ErrorCode> {
    if let Some(code) = group_error {
        return Err(code);
    }
    let name = name.ok_or(ErrorCode::UNKNOWN_TOPIC_ID)?;
    let known = state.topics.get(name).is_some_and(|t| (0..t.partitions.len() as i32).contains(&partition));
    if known {
        Ok(name.to_string())
    } else {
        Err(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)
    }
}
