//! AlterShareGroupOffsets (KIP-932): an empty share group's share-partitions start over at the
//! offsets given (what was in flight is forgotten); a group id nobody uses becomes an empty
//! share group. A group with members is refused (NON_EMPTY_GROUP); a partition the cluster does
//! not have, UNKNOWN_TOPIC_OR_PARTITION.

use kwire::messages::alter_share_group_offsets_response::{
    AlterShareGroupOffsetsResponsePartition, AlterShareGroupOffsetsResponseTopic,
};
use kwire::messages::{AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse};
use kwire::{ErrorCode, StrBytes};

use super::Ctx;
use crate::share_partitions::SharePartition;

pub(super) async fn handle(ctx: &Ctx<'_>, request: AlterShareGroupOffsetsRequest) -> AlterShareGroupOffsetsResponse {
    let mut state = ctx.shared.state();
    let group = request.group_id.to_string();
    let refused = |code: ErrorCode, message: String| AlterShareGroupOffsetsResponse {
        error_code: code,
        error_message: Some(StrBytes::from(message)),
        ..Default::default()
    };
    if let Err(code) = state.coordinates(ctx.node, &group) {
        return refused(code, code.to_string());
    }
    // As Kafka, offsets given to a group nobody joined make it an empty share group.
    if let Err((code, message)) = state.groups_mut().share_or_create(&group).and_then(|g| g.check_empty(&group)) {
        return refused(code, message);
    }
    let (shares, topics) = state.shares_and_topics();
    let responses = request
        .topics
        .iter()
        .map(|t| {
            let topic = topics.get(t.topic_name.as_str());
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut out = AlterShareGroupOffsetsResponsePartition {
                        partition_index: p.partition_index,
                        ..Default::default()
                    };
                    match topic.filter(|topic| topic.has_partition(p.partition_index)) {
                        None => {
                            out.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
                            out.error_message = Some(StrBytes::from(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.to_string()));
                        }
                        Some(topic) => {
                            let key = (group.clone(), topic.id, p.partition_index);
                            shares.partitions.insert(key, SharePartition::new(p.start_offset));
                        }
                    }
                    out
                })
                .collect();
            AlterShareGroupOffsetsResponseTopic {
                topic_name: t.topic_name.clone(),
                topic_id: topic.map(|t| t.id).unwrap_or_default(),
                partitions,
                ..Default::default()
            }
        })
        .collect();
    AlterShareGroupOffsetsResponse { responses, ..Default::default() }
}
