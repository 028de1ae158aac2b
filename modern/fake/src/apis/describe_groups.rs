//! DescribeGroups: state, protocol and members (with metadata and assignment once stable).

use kwire::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kwire::messages::{DescribeGroupsRequest, DescribeGroupsResponse};
use kwire::{Bytes, ErrorCode, StrBytes};

use super::Ctx;
use crate::groups::classic::Phase;
use crate::groups::Group;

/// DescribeGroups v6 answers GROUP_ID_NOT_FOUND for a group that does not exist (KIP-1043);
/// before, such a group is described as Dead.
const NOT_FOUND_FROM: i16 = 6;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DescribeGroupsRequest) -> DescribeGroupsResponse {
    let state = ctx.shared.state();
    // Asked for from v3; a group answered with an error gets none (Kafka's schema default).
    let operations =
        if ctx.version >= 3 && request.include_authorized_operations { super::authorized::GROUP } else { i32::MIN };
    let groups = request
        .groups
        .iter()
        .map(|id| {
            let mut described = DescribedGroup { group_id: id.clone(), ..Default::default() };
            if let Err(code) = state.coordinates(ctx.node, id) {
                described.error_code = code;
                return described;
            }
            // Only a classic group is described here.
            let group = match state.group(id) {
                Some(Group::Classic(group)) => Ok(group),
                Some(_) => Err("is not a classic group"),
                None => Err("not found"),
            };
            let group = match group {
                Ok(group) => group,
                Err(why) => {
                    described.group_state = StrBytes::from_static_str("Dead");
                    if ctx.version >= NOT_FOUND_FROM {
                        described.error_code = ErrorCode::GROUP_ID_NOT_FOUND;
                        described.error_message = Some(StrBytes::from(format!("Group {id} {why}.")));
                    } else {
                        described.authorized_operations = operations;
                    }
                    return described;
                }
            };
            described.group_state = StrBytes::from_static_str(group.phase.name());
            described.authorized_operations = operations;
            described.protocol_type = StrBytes::from(group.protocol_type.clone().unwrap_or_default());
            // The protocol is named, and metadata and assignments shown, once it is chosen.
            let settled = matches!(group.phase, Phase::Stable | Phase::CompletingRebalance);
            if settled {
                described.protocol_data = StrBytes::from(group.protocol.clone().unwrap_or_default());
            }
            described.members = group
                .members
                .iter()
                .map(|(member_id, m)| {
                    let metadata = if settled {
                        m.protocols.iter().find(|(n, _)| Some(n) == group.protocol.as_ref()).map(|(_, b)| b.clone())
                    } else {
                        None
                    };
                    DescribedGroupMember {
                        member_id: StrBytes::from(member_id.clone()),
                        group_instance_id: m.instance_id.clone().map(StrBytes::from),
                        client_id: StrBytes::from(m.client_id.clone()),
                        client_host: StrBytes::from(m.client_host.clone()),
                        member_metadata: metadata.unwrap_or_default(),
                        member_assignment: if group.phase == Phase::Stable {
                            m.assignment.clone()
                        } else {
                            Bytes::new()
                        },
                        ..Default::default()
                    }
                })
                .collect();
            described
        })
        .collect();
    DescribeGroupsResponse { groups, ..Default::default() }
}

/// Every group refused with `code`.
pub(super) fn error(request: &DescribeGroupsRequest, _version: i16, code: ErrorCode) -> DescribeGroupsResponse {
    let groups = request
        .groups
        .iter()
        .map(|g| DescribedGroup { group_id: g.clone(), error_code: code, ..Default::default() })
        .collect();
    DescribeGroupsResponse { groups, ..Default::default() }
}
