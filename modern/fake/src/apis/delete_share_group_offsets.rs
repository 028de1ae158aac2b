//! DeleteShareGroupOffsets (KIP-932): an empty share group forgets its share-partitions of the
//! topics named (the next fetch starts them again from `share.auto.offset.reset`). A group with
//! members is refused (NON_EMPTY_GROUP); a topic the cluster does not have,
//! UNKNOWN_TOPIC_OR_PARTITION.

use kwire::messages::delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic;
use kwire::messages::{DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse};
use kwire::{ErrorCode, StrBytes};

use super::{coordinates, Ctx};
use crate::share_groups::Shares;

/// Whether a group id is taken by a classic or consumer group.
pub(super) fn taken(state: &crate::state::State, group: &str) -> bool {
    state.groups.contains_key(group) || state.consumer_groups.contains_key(group)
}

/// Whether a share group's offsets may be altered or deleted: it is one, and has no members.
pub(super) fn alterable(shares: &Shares, group: &str) -> Result<(), (ErrorCode, String)> {
    match shares.groups.get(group) {
        None => Err((ErrorCode::GROUP_ID_NOT_FOUND, format!("Group {group} not found."))),
        Some(g) if !g.members.is_empty() => {
            Err((ErrorCode::NON_EMPTY_GROUP, format!("Share group {group} is not empty.")))
        }
        Some(_) => Ok(()),
    }
}

pub(crate) fn handle(ctx: &Ctx<'_>, request: DeleteShareGroupOffsetsRequest) -> DeleteShareGroupOffsetsResponse {
    let state = ctx.shared.state();
    let mut shares = ctx.shared.shares();
    let group = request.group_id.to_string();
    let refused = |code: ErrorCode, message: String| DeleteShareGroupOffsetsResponse {
        error_code: code,
        error_message: Some(StrBytes::from(message)),
        ..Default::default()
    };
    if let Err(code) = coordinates(&state, ctx.node, &group) {
        return refused(code, code.to_string());
    }
    if let Err((code, message)) = alterable(&shares, &group) {
        return refused(code, message);
    }
    let responses = request
        .topics
        .iter()
        .map(|t| {
            let mut out =
                DeleteShareGroupOffsetsResponseTopic { topic_name: t.topic_name.clone(), ..Default::default() };
            match state.topics.get(t.topic_name.as_str()) {
                None => {
                    out.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
                    out.error_message = Some(StrBytes::from(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.to_string()));
                }
                Some(topic) => {
                    out.topic_id = topic.id;
                    shares.partitions.retain(|(g, id, _), _| !(*g == group && *id == topic.id));
                }
            }
            out
        })
        .collect();
    DeleteShareGroupOffsetsResponse { responses, ..Default::default() }
}
