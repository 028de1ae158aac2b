//! ShareGroupDescribe (KIP-932): each share group's state, epochs, assignor and members with
//! their subscriptions and assignments.

use kwire::messages::share_group_describe_response::{Assignment, DescribedGroup, Member, TopicPartitions};
use kwire::messages::{ShareGroupDescribeRequest, ShareGroupDescribeResponse};
use kwire::{StrBytes, TopicName};

use super::Ctx;
use crate::groups::assignors::Owned;
use crate::groups::GroupKind;
use crate::state::State;

pub(super) async fn handle(ctx: &Ctx<'_>, request: ShareGroupDescribeRequest) -> ShareGroupDescribeResponse {
    let state = ctx.shared.state();
    let groups = request
        .group_ids
        .iter()
        .map(|id| {
            let mut described = DescribedGroup { group_id: id.clone(), ..Default::default() };
            if let Err(code) = state.coordinates(ctx.node, id.as_str()) {
                described.error_code = code;
                return described;
            }
            let group = match state.groups().share(id) {
                Ok(group) => group,
                Err((code, message)) => {
                    described.error_code = code;
                    described.error_message = Some(StrBytes::from(message));
                    return described;
                }
            };
            described.group_state = StrBytes::from_static_str(group.state_name());
            described.group_epoch = group.epoch;
            described.assignment_epoch = group.assignment_epoch;
            described.assignor_name = StrBytes::from_static_str("simple");
            described.authorized_operations =
                if request.include_authorized_operations { super::authorized::GROUP } else { i32::MIN };
            described.members = group
                .members
                .iter()
                .map(|(member_id, m)| Member {
                    member_id: StrBytes::from(member_id.clone()),
                    rack_id: m.rack_id.clone().map(StrBytes::from),
                    member_epoch: m.epoch,
                    client_id: StrBytes::from(m.client_id.clone()),
                    client_host: StrBytes::from(m.client_host.clone()),
                    subscribed_topic_names: m.subscribed.iter().map(|n| TopicName(StrBytes::from(n.clone()))).collect(),
                    assignment: assignment(&state, &m.assigned),
                    ..Default::default()
                })
                .collect();
            described
        })
        .collect();
    ShareGroupDescribeResponse { groups, ..Default::default() }
}

fn assignment(state: &State, owned: &Owned) -> Assignment {
    Assignment {
        topic_partitions: owned
            .iter()
            .map(|(id, ps)| TopicPartitions {
                topic_id: *id,
                topic_name: TopicName(StrBytes::from(state.name_of(*id).unwrap_or_default())),
                partitions: ps.iter().copied().collect::<Vec<_>>().into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
