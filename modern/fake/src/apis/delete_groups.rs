//! DeleteGroups: a group without members, and its committed offsets (a share group: its
//! share-partitions' state), go away.

use kwire::messages::delete_groups_response::DeletableGroupResult;
use kwire::messages::{DeleteGroupsRequest, DeleteGroupsResponse};
use kwire::ErrorCode;

use super::{coordinates, Ctx};
use crate::consumer_groups::is_consumer_group;
use crate::groups::Phase;

pub(crate) fn handle(ctx: &Ctx<'_>, request: DeleteGroupsRequest) -> DeleteGroupsResponse {
    let mut state = ctx.shared.state();
    let results = request
        .groups_names
        .iter()
        .map(|id| {
            let error_code = match coordinates(&state, ctx.node, id) {
                Err(code) => code,
                // A KIP-848 group goes with the classic group keeping its offsets.
                // A share group goes with its share-partitions' state.
                Ok(()) if ctx.shared.shares().groups.contains_key(id.as_str()) => {
                    let mut shares = ctx.shared.shares();
                    if shares.groups[id.as_str()].members.is_empty() {
                        shares.groups.remove(id.as_str());
                        shares.partitions.retain(|(g, _, _), _| g != id.as_str());
                        shares.sessions.retain(|(g, _, _), _| g != id.as_str());
                        ErrorCode::NONE
                    } else {
                        ErrorCode::NON_EMPTY_GROUP
                    }
                }
                Ok(()) if is_consumer_group(&state, id) => {
                    if state.consumer_groups[id.as_str()].members.is_empty() {
                        state.consumer_groups.remove(id.as_str());
                        state.groups.remove(id.as_str());
                        ErrorCode::NONE
                    } else {
                        ErrorCode::NON_EMPTY_GROUP
                    }
                }
                Ok(()) => match state.groups.get(id.as_str()).map(|g| g.phase) {
                    None => ErrorCode::GROUP_ID_NOT_FOUND,
                    Some(Phase::Empty) => {
                        state.groups.remove(id.as_str());
                        ErrorCode::NONE
                    }
                    Some(_) => ErrorCode::NON_EMPTY_GROUP,
                },
            };
            DeletableGroupResult { group_id: id.clone(), error_code, ..Default::default() }
        })
        .collect();
    DeleteGroupsResponse { results, ..Default::default() }
}
