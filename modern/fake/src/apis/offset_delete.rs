//! OffsetDelete: removes a group's committed offsets for partitions of topics no member
//! subscribes to.

use kwire::messages::offset_delete_response::{OffsetDeleteResponsePartition, OffsetDeleteResponseTopic};
use kwire::messages::{OffsetDeleteRequest, OffsetDeleteResponse};
use kwire::ErrorCode;

use super::{coordinates, Ctx};

pub(crate) fn handle(ctx: &Ctx<'_>, request: OffsetDeleteRequest) -> OffsetDeleteResponse {
    let mut state = ctx.shared.state();
    if let Err(error_code) = coordinates(&state, ctx.node, &request.group_id) {
        return OffsetDeleteResponse { error_code, ..Default::default() };
    }
    let Some(group) = state.groups.get_mut(request.group_id.as_str()) else {
        return OffsetDeleteResponse { error_code: ErrorCode::GROUP_ID_NOT_FOUND, ..Default::default() };
    };
    let subscribed = group.subscribed_topics();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let name = t.name.to_string();
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let error_code = if subscribed.contains(&name) {
                        ErrorCode::GROUP_SUBSCRIBED_TO_TOPIC
                    } else {
                        group.offsets.remove(&(name.clone(), p.partition_index));
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
