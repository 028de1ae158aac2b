//! ListGroups: the groups this node coordinates, filtered by state (v4+) and type (v5+).

use kafka_wire::messages::list_groups_response::ListedGroup;
use kafka_wire::messages::{ListGroupsRequest, ListGroupsResponse};
use kafka_wire::{GroupId, StrBytes};

use super::Ctx;

pub(crate) fn handle(ctx: &Ctx<'_>, request: ListGroupsRequest) -> ListGroupsResponse {
    let state = ctx.shared.state();
    let wanted =
        |filter: &[StrBytes], value: &str| filter.is_empty() || filter.iter().any(|f| f.eq_ignore_ascii_case(value));
    let groups = state
        .groups
        .iter()
        .filter(|(id, _)| state.coordinator_of(id) == Some(ctx.node))
        .filter(|(_, g)| wanted(&request.states_filter, g.phase.name()))
        .filter(|_| wanted(&request.types_filter, "classic"))
        .map(|(id, g)| ListedGroup {
            group_id: GroupId(StrBytes::from(id.clone())),
            protocol_type: StrBytes::from(g.protocol_type.clone().unwrap_or_default()),
            group_state: StrBytes::from_static_str(g.phase.name()),
            group_type: StrBytes::from_static_str("classic"),
            ..Default::default()
        })
        .collect();
    ListGroupsResponse { groups, ..Default::default() }
}
