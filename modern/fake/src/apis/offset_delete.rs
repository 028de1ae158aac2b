//! OffsetDelete: removes a group's committed offsets for partitions of topics no member
//! subscribes to.

use kwire::messages::offset_delete_response::{OffsetDeleteResponsePartition, OffsetDeleteResponseTopic};
use kwire::messages::{OffsetDeleteRequest, OffsetDeleteResponse};
use kwire::ErrorCode;

use super::Ctx;
use crate::groups::Group;

pub(super) async fn handle(ctx: &Ctx<'_>, request: OffsetDeleteRequest) -> OffsetDeleteResponse {
    let mut state = ctx.shared.state();
    if let Err(error_code) = state.coordinates(ctx.node, &request.group_id) {
        return OffsetDeleteResponse { error_code, ..Default::default() };
    }
    // The topics whose offsets stay: those the group's members subscribe to.
    let subscribed = match state.group(&request.group_id) {
        Some(Group::Classic(group)) => group.subscribed_topics(),
        Some(Group::Consumer(group)) => group.subscribed_topics(&state.topics().assignable()),
        // A share group has no offsets of this kind (Kafka: "is not a consumer group").
        Some(Group::Share(_)) | None => {
            return OffsetDeleteResponse { error_code: ErrorCode::GROUP_ID_NOT_FOUND, ..Default::default() };
        }
    };
    let offsets = state.groups_mut().offsets_mut();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let error_code = if subscribed.contains(t.name.as_str()) {
                        ErrorCode::GROUP_SUBSCRIBED_TO_TOPIC
                    } else {
                        offsets.delete(&request.group_id, &t.name, p.partition_index);
                        ErrorCode::NONE
                    };
                    OffsetDeleteResponsePartition { partition_index: p.partition_index, error_code }
                })
                .collect();
            OffsetDeleteResponseTopic { name: t.name.clone(), partitions }
        })
        .collect();
    OffsetDeleteResponse { topics, ..Default::default() }
}
