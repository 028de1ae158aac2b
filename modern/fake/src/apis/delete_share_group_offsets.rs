//! DeleteShareGroupOffsets (KIP-932): an empty share group forgets its share-partitions of the
//! topics named (the next fetch starts them again from `share.auto.offset.reset`). A group with
//! members is refused (NON_EMPTY_GROUP); a topic the cluster does not have,
//! UNKNOWN_TOPIC_OR_PARTITION.

use kwire::messages::delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic;
use kwire::messages::{DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse};
use kwire::{ErrorCode, StrBytes};

use super::Ctx;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DeleteShareGroupOffsetsRequest) -> DeleteShareGroupOffsetsResponse {
    let mut state = ctx.shared.state();
    let group = request.group_id.to_string();
    let refused = |code: ErrorCode, message: String| DeleteShareGroupOffsetsResponse {
        error_code: code,
        error_message: Some(StrBytes::from(message)),
        ..Default::default()
    };
    if let Err(code) = state.coordinates(ctx.node, &group) {
        return refused(code, code.to_string());
    }
    if let Err((code, message)) = state.groups().share(&group).and_then(|g| g.check_empty(&group)) {
        return refused(code, message);
    }
    let (shares, topics) = state.shares_and_topics();
    let responses = request
        .topics
        .iter()
        .map(|t| {
            let mut out =
                DeleteShareGroupOffsetsResponseTopic { topic_name: t.topic_name.clone(), ..Default::default() };
            match topics.get(t.topic_name.as_str()) {
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
