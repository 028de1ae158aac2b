//! CreateTopics: partitions and replication factor (-1 for the cluster's defaults), configs
//! kept as given, `validate_only` checked and not applied.

use std::collections::BTreeMap;

use kafka_wire::messages::create_topics_response::CreatableTopicResult;
use kafka_wire::messages::{CreateTopicsRequest, CreateTopicsResponse};
use kafka_wire::{ErrorCode, StrBytes};

use crate::cluster::Shared;

pub(crate) fn handle(shared: &Shared, request: CreateTopicsRequest, version: i16) -> CreateTopicsResponse {
    let mut state = shared.state();
    let topics = request
        .topics
        .into_iter()
        .map(|t| {
            let name = t.name.0.to_string();
            let partitions = if t.num_partitions == -1 { state.default_partitions } else { t.num_partitions };
            let replication = if t.replication_factor == -1 { 1 } else { t.replication_factor };
            let configs: BTreeMap<String, String> =
                t.configs.iter().filter_map(|c| Some((c.name.to_string(), c.value.as_ref()?.to_string()))).collect();
            let mut result = CreatableTopicResult { name: t.name.clone(), ..Default::default() };
            let bad_config = t.configs.iter().find(|c| {
                let value = c.value.as_ref().map_or("", |v| v.as_str());
                crate::topic_configs::topic_config(&c.name).is_none()
                    || !crate::topic_configs::valid_value(&c.name, value)
            });
            let outcome = if let Some(bad) = bad_config {
                tracing::debug!(config = %bad.name, "CreateTopics: invalid config");
                Err(ErrorCode::INVALID_CONFIG)
            } else if !t.assignments.is_empty() {
                // Manual assignments are not served yet: Kafka's code for a request it will not carry out.
                Err(ErrorCode::INVALID_REQUEST)
            } else if request.validate_only {
                state.check_new_topic(&name, partitions, replication).map(|()| kafka_wire::Uuid::nil()).map_err(|r| r.0)
            } else {
                state.create_topic(&name, partitions, replication, configs).map_err(|r| r.0)
            };
            match outcome {
                Ok(id) => {
                    if !request.validate_only {
                        result.topic_id = id;
                    }
                    result.num_partitions = partitions;
                    result.replication_factor = replication;
                    if version >= 5 {
                        result.configs = Some(Vec::new());
                    }
                }
                Err(code) => {
                    result.error_code = code;
                    if version >= 1 {
                        result.error_message = Some(StrBytes::from(refusal_message(code, &name, replication)));
                    }
                }
            }
            result
        })
        .collect();
    CreateTopicsResponse { topics, ..Default::default() }
}

/// Kafka's message for a refused topic, where clients show it.
fn refusal_message(code: ErrorCode, name: &str, replication: i16) -> String {
    match code {
        ErrorCode::TOPIC_ALREADY_EXISTS => format!("Topic '{name}' already exists."),
        ErrorCode::INVALID_REPLICATION_FACTOR => format!("Unable to replicate the partition {replication} time(s): The target replication factor of {replication} cannot be reached because only fewer broker(s) are registered."),
        _ => code.to_string(),
    }
}
