//! TxnOffsetCommit: offsets committed in a transaction, held by the group until the
//! transaction ends (applied on commit, dropped on abort). v5+ (transactions v2) adds the
//! group to the transaction itself; v6 names topics by id.

use std::time::Instant;

use kwire::messages::txn_offset_commit_response::{TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic};
use kwire::messages::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use kwire::{ErrorCode, Uuid};

use super::offset_commit::{committable, known_partition};
use super::{fenced, Ctx};
use crate::groups::offsets::Committed;
use crate::groups::Group;
use crate::state::State;
use crate::transactions::Producer;

/// v5 is transactions v2.
const V2_FROM: i16 = 5;
/// v6 names topics by id.
const TOPIC_IDS_FROM: i16 = 6;
/// v2 learned PRODUCER_FENCED.
const FENCED_FROM: i16 = 2;

pub(super) async fn handle(ctx: &Ctx<'_>, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse {
    let mut state = ctx.shared.state();
    let group_id = request.group_id.to_string();
    let producer_id = request.producer_id.0;
    let group_error = (|| {
        state.coordinates(ctx.node, &group_id)?;
        // v3+ may say who commits; without that (older clients) the commit is the producer's.
        let member = request.member_id.as_str();
        let epoch = request.generation_id_or_member_epoch;
        let partitions = known_partitions(&state, &request, ctx.version);
        let groups = state.groups_mut();
        if groups.get(&group_id).is_none() {
            // A commit from outside any group creates Kafka's "simple" classic group.
            groups.new_classic(&group_id, Instant::now());
        }
        match groups.get_mut(&group_id) {
            Some(Group::Consumer(group)) => {
                // A KIP-848 group checks its member's epoch as for OffsetCommit, at any version;
                // STALE_MEMBER_EPOCH is not among TxnOffsetCommit's errors: ILLEGAL_GENERATION.
                group.validate_offset_commit(member, epoch, None, &partitions).map_err(|code| match code {
                    ErrorCode::STALE_MEMBER_EPOCH => ErrorCode::ILLEGAL_GENERATION,
                    code => code,
                })?;
            }
            Some(Group::Classic(group)) if epoch >= 0 || !member.is_empty() => group.check_member(member, epoch)?,
            Some(Group::Classic(_)) | None => {}
            // Kafka's share group: "is not a consumer group".
            Some(Group::Share(_)) => return Err(ErrorCode::GROUP_ID_NOT_FOUND),
        }
        if ctx.version >= V2_FROM {
            let p = Producer {
                transactional_id: request.transactional_id.as_str(),
                id: producer_id,
                epoch: request.producer_epoch,
            };
            state.transactions_mut().add(
                p,
                fenced(ctx.version, FENCED_FROM),
                std::iter::empty(),
                [group_id.clone()],
            )?;
        }
        Ok(())
    })()
    .err();
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let name = if ctx.version >= TOPIC_IDS_FROM {
                state.name_of(topic.topic_id).map(str::to_string)
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
                            let offsets = state.groups_mut().offsets_mut();
                            offsets.commit_pending(&group_id, producer_id, (name, p.partition_index), committed);
                            ErrorCode::NONE
                        }
                    };
                    TxnOffsetCommitResponsePartition {
                        partition_index: p.partition_index,
                        error_code,
                        ..Default::default()
                    }
                })
                .collect();
            let mut response = TxnOffsetCommitResponseTopic { partitions, ..Default::default() };
            if ctx.version >= TOPIC_IDS_FROM {
                response.topic_id = topic.topic_id;
            } else {
                response.name = topic.name.clone();
            }
            response
        })
        .collect();
    TxnOffsetCommitResponse { topics, ..Default::default() }
}

/// The (topic id, partition) pairs of the request that exist.
fn known_partitions(state: &State, request: &TxnOffsetCommitRequest, version: i16) -> Vec<(Uuid, i32)> {
    request
        .topics
        .iter()
        .flat_map(|t| {
            let name = if version >= TOPIC_IDS_FROM {
                state.name_of(t.topic_id).map(str::to_string)
            } else {
                Some(t.name.to_string())
            };
            t.partitions.iter().filter_map(move |p| known_partition(state, name.as_deref(), p.partition_index))
        })
        .collect()
}
