//! DeleteGroups: a group without members, and its committed offsets (a share group: its
//! share-partitions' state), go away.

use kwire::messages::delete_groups_response::DeletableGroupResult;
use kwire::messages::{DeleteGroupsRequest, DeleteGroupsResponse};
use kwire::ErrorCode;

use super::Ctx;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DeleteGroupsRequest) -> DeleteGroupsResponse {
    let mut state = ctx.shared.state();
    let results = request
        .groups_names
        .iter()
        .map(|id| {
            let deleted = state.coordinates(ctx.node, id).and_then(|()| state.delete_group(id));
            let error_code = deleted.err().unwrap_or(ErrorCode::NONE);
            DeletableGroupResult { group_id: id.clone(), error_code, ..Default::default() }
        })
        .collect();
    DeleteGroupsResponse { results, ..Default::default() }
}
