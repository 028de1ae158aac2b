//! ShareAcknowledge (KIP-932): acknowledgements through an open share session: accept (1),
//! release (2), reject (3), renew (4) or gap (0) per record. Epoch 0 cannot open a session;
//! -1 acknowledges and closes it, releasing what the member still holds here; any other must
//! be the epoch the session expects.

use std::collections::BTreeMap;

use kwire::messages::share_acknowledge_response::{PartitionData, ShareAcknowledgeTopicResponse};
use kwire::messages::{ShareAcknowledgeRequest, ShareAcknowledgeResponse};
use kwire::{ErrorCode, Uuid};

use super::share_fetch::{acknowledge, close_session, Acks};
use super::Ctx;
use crate::share_partitions::next_epoch;

pub(super) async fn handle(ctx: &Ctx<'_>, request: ShareAcknowledgeRequest) -> ShareAcknowledgeResponse {
    let shared = ctx.shared;
    let group = request.group_id.as_ref().map(|g| g.to_string()).unwrap_or_default();
    let member = request.member_id.as_ref().map(|m| m.to_string()).unwrap_or_default();
    if group.is_empty() || member.is_empty() {
        return failed(ErrorCode::INVALID_REQUEST);
    }
    let mut state = shared.state();
    let settings = state.groups().configs().settings(&group, &shared.config);
    let key = (group.clone(), member.clone(), ctx.node);
    let epoch = request.share_session_epoch;
    match state.shares_mut().sessions.get_mut(&key) {
        _ if epoch == 0 => return failed(ErrorCode::INVALID_SHARE_SESSION_EPOCH),
        None => return failed(ErrorCode::SHARE_SESSION_NOT_FOUND),
        Some(session) if epoch != -1 && session.next_epoch != epoch => {
            return failed(ErrorCode::INVALID_SHARE_SESSION_EPOCH)
        }
        Some(session) => session.next_epoch = next_epoch(epoch),
    }
    let acks: BTreeMap<(Uuid, i32), Acks> = request
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| ((t.topic_id, p.partition_index), p)))
        .map(|(key, p)| {
            let batches = p
                .acknowledgement_batches
                .iter()
                .map(|b| (b.first_offset, b.last_offset, b.acknowledge_types.iter().collect()))
                .collect();
            (key, batches)
        })
        .collect();
    let acked = acknowledge(&mut state, &group, &member, ctx.node, &acks, shared);
    if epoch == -1 {
        close_session(state.shares_mut(), &key, shared);
    }
    let mut by_topic: BTreeMap<Uuid, Vec<PartitionData>> = BTreeMap::new();
    for ((topic, index), code) in acked {
        by_topic.entry(topic).or_default().push(PartitionData {
            partition_index: index,
            error_code: code,
            ..Default::default()
        });
    }
    ShareAcknowledgeResponse {
        acquisition_lock_timeout_ms: settings.lock.as_millis().min(i32::MAX as u128) as i32,
        responses: by_topic
            .into_iter()
            .map(|(topic_id, partitions)| ShareAcknowledgeTopicResponse { topic_id, partitions, ..Default::default() })
            .collect(),
        ..Default::default()
    }
}

/// The request refused with `code`, at the top.
pub(super) fn error(_request: &ShareAcknowledgeRequest, _version: i16, code: ErrorCode) -> ShareAcknowledgeResponse {
    failed(code)
}

fn failed(error_code: ErrorCode) -> ShareAcknowledgeResponse {
    ShareAcknowledgeResponse { error_code, ..Default::default() }
}
