//! ListGroups: the groups this node coordinates (classic, consumer and share groups), filtered
//! by state (v4+) and type (v5+).

use kwire::messages::list_groups_response::ListedGroup;
use kwire::messages::{ListGroupsRequest, ListGroupsResponse};
use kwire::{ErrorCode, GroupId, StrBytes};

use super::Ctx;

pub(super) async fn handle(ctx: &Ctx<'_>, request: ListGroupsRequest) -> ListGroupsResponse {
    let state = ctx.shared.state();
    let wanted =
        |filter: &[StrBytes], value: &str| filter.is_empty() || filter.iter().any(|f| f.eq_ignore_ascii_case(value));
    let groups = state
        .groups()
        .iter()
        .filter(|(id, _)| state.coordinator_of(id) == Some(ctx.node))
        .filter(|(_, g)| wanted(&request.states_filter, g.state_name()) && wanted(&request.types_filter, g.type_name()))
        .map(|(id, g)| ListedGroup {
            group_id: GroupId(StrBytes::from(id.clone())),
            protocol_type: StrBytes::from(g.protocol_type().to_string()),
            group_state: StrBytes::from_static_str(g.state_name()),
            group_type: StrBytes::from_static_str(g.type_name()),
            ..Default::default()
        })
        .collect();
    ListGroupsResponse { groups, ..Default::default() }
}

/// The request refused with `code`.
pub(super) fn error(_request: &ListGroupsRequest, _version: i16, code: ErrorCode) -> ListGroupsResponse {
    ListGroupsResponse { error_code: code, ..Default::default() }
}
