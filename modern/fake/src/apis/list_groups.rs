//! ListGroups: the groups this node coordinates (classic, consumer and share groups), filtered
//! by state (v4+) and type (v5+).

use kwire::messages::list_groups_response::ListedGroup;
use kwire::messages::{ListGroupsRequest, ListGroupsResponse};
use kwire::{GroupId, StrBytes};

use super::Ctx;
use crate::consumer_groups::is_consumer_group;

pub(crate) fn handle(ctx: &Ctx<'_>, request: ListGroupsRequest) -> ListGroupsResponse {
    let state = ctx.shared.state();
    let wanted =
        |filter: &[StrBytes], value: &str| filter.is_empty() || filter.iter().any(|f| f.eq_ignore_ascii_case(value));
    // Each id once, with its type: a KIP-848 group's offsets are kept in a classic group of the
    // same id, which is not listed then.
    let classic = state
        .groups
        .iter()
        .filter(|(id, _)| !is_consumer_group(&state, id))
        .map(|(id, g)| (id, "classic", g.protocol_type.clone().unwrap_or_default(), g.phase.name()));
    let consumer = state
        .consumer_groups
        .iter()
        .filter(|(id, _)| is_consumer_group(&state, id))
        .map(|(id, g)| (id, "consumer", "consumer".to_string(), g.state_name()));
    let shares = ctx.shared.shares();
    let share = shares.groups.iter().map(|(id, g)| (id, "share", "share".to_string(), g.state_name()));
    let groups = classic
        .chain(consumer)
        .chain(share)
        .filter(|(id, ..)| state.coordinator_of(id) == Some(ctx.node))
        .filter(|(_, kind, _, phase)| wanted(&request.states_filter, phase) && wanted(&request.types_filter, kind))
        .map(|(id, kind, protocol_type, phase)| ListedGroup {
            group_id: GroupId(StrBytes::from(id.clone())),
            protocol_type: StrBytes::from(protocol_type),
            group_state: StrBytes::from_static_str(phase),
            group_type: StrBytes::from_static_str(kind),
            ..Default::default()
        })
        .collect();
    ListGroupsResponse { groups, ..Default::default() }
}
