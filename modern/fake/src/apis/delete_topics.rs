//! DeleteTopics: by name, or by topic id (v6+).

use kwire::messages::delete_topics_response::DeletableTopicResult;
use kwire::messages::{DeleteTopicsRequest, DeleteTopicsResponse};
use kwire::{ErrorCode, StrBytes, TopicName, Uuid};

use super::Ctx;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DeleteTopicsRequest) -> DeleteTopicsResponse {
    let version = ctx.version;
    let mut state = ctx.shared.state();
    // Before v6 the topics come as names only; from v6 on as (name or id) pairs.
    let asked: Vec<(Option<String>, Uuid)> = if version < 6 {
        request.topic_names.iter().map(|n| (Some(n.0.to_string()), Uuid::nil())).collect()
    } else {
        request.topics.iter().map(|t| (t.name.as_ref().map(|n| n.0.to_string()), t.topic_id)).collect()
    };
    let responses = asked
        .into_iter()
        .map(|(name, id)| {
            let found = match &name {
                Some(name) => Some(name.clone()),
                None => state.name_of(id).map(str::to_string),
            };
            let mut result = DeletableTopicResult {
                name: name.clone().map(|n| TopicName(StrBytes::from(n))),
                topic_id: id,
                ..Default::default()
            };
            match found.and_then(|n| state.delete_topic(&n).map(|t| (n, t))) {
                Some((name, topic)) => {
                    result.name = Some(TopicName(StrBytes::from(name)));
                    if version >= 6 {
                        result.topic_id = topic.id;
                    }
                }
                None => {
                    result.error_code = if name.is_none() {
                        ErrorCode::UNKNOWN_TOPIC_ID
                    } else {
                        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                    };
                }
            }
            result
        })
        .collect();
    DeleteTopicsResponse { responses, ..Default::default() }
}

/// Every topic refused with `code`: by name before v6, as named (name or id) from v6.
pub(super) fn error(request: &DeleteTopicsRequest, version: i16, code: ErrorCode) -> DeleteTopicsResponse {
    let responses = if version < 6 {
        request
            .topic_names
            .iter()
            .map(|n| DeletableTopicResult { name: Some(n.clone()), error_code: code, ..Default::default() })
            .collect()
    } else {
        request
            .topics
            .iter()
            .map(|t| DeletableTopicResult {
                name: t.name.clone(),
                topic_id: t.topic_id,
                error_code: code,
                ..Default::default()
            })
            .collect()
    };
    DeleteTopicsResponse { responses, ..Default::default() }
}
