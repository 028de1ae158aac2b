//! CreateTopics: partitions and replication factor (-1 for the cluster's defaults) or replicas
//! assigned by the client, configs kept as given, `validate_only` checked and not applied; from
//! v5 each topic's resulting configs are answered, as DescribeConfigs describes them.

use std::collections::BTreeMap;

use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::create_topics_response::{CreatableTopicConfigs, CreatableTopicResult};
use kwire::messages::{CreateTopicsRequest, CreateTopicsResponse};
use kwire::{ErrorCode, StrBytes, Uuid};

use super::Ctx;
use crate::state::{Refused, State};

pub(super) async fn handle(ctx: &Ctx<'_>, request: CreateTopicsRequest) -> CreateTopicsResponse {
    let version = ctx.version;
    let mut state = ctx.shared.state();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let mut result = CreatableTopicResult { name: t.name.clone(), ..Default::default() };
            match create(&mut state, t, request.validate_only) {
                Ok((id, partitions, replication, configs)) => {
                    // Kafka's controller says null, not the schema's default of "".
                    result.error_message = None;
                    result.topic_id = id;
                    result.num_partitions = partitions;
                    result.replication_factor = replication;
                    if version >= 5 {
                        let entries = super::describe_configs::topic_entries(&configs);
                        result.configs = Some(
                            entries
                                .into_iter()
                                .map(|(name, value, source, _)| CreatableTopicConfigs {
                                    name: StrBytes::from(name),
                                    value: Some(StrBytes::from(value)),
                                    config_source: source,
                                    ..Default::default()
                                })
                                .collect(),
                        );
                    }
                }
                Err(Refused(code, message)) => {
                    result.error_code = code;
                    if version >= 1 {
                        let message = message.unwrap_or_else(|| refusal_message(code, &t.name, t.replication_factor));
                        result.error_message = Some(StrBytes::from(message));
                    }
                }
            }
            result
        })
        .collect();
    CreateTopicsResponse { topics, ..Default::default() }
}

/// Every topic refused with `code`.
pub(super) fn error(request: &CreateTopicsRequest, _version: i16, code: ErrorCode) -> CreateTopicsResponse {
    let topics = request
        .topics
        .iter()
        .map(|t| CreatableTopicResult {
            name: t.name.clone(),
            error_code: code,
            num_partitions: -1,
            replication_factor: -1,
            ..Default::default()
        })
        .collect();
    CreateTopicsResponse { topics, ..Default::default() }
}

/// Creates one topic (or only checks it, for `validate_only`), in the order Kafka's controller
/// checks: the name, the configs, then the partitions (counts, or the replicas assigned).
/// Returns its id (nil when only checked), partition count, replication factor and configs.
fn create(
    state: &mut State,
    t: &CreatableTopic,
    validate_only: bool,
) -> Result<(Uuid, i32, i16, BTreeMap<String, String>), Refused> {
    let name = t.name.as_str();
    state.check_new_name(name)?;
    let bad_config = t.configs.iter().find(|c| {
        let value = c.value.as_ref().map_or("", |v| v.as_str());
        crate::topic_configs::topic_config(&c.name).is_none() || !crate::topic_configs::valid_value(&c.name, value)
    });
    if let Some(bad) = bad_config {
        tracing::debug!(config = %bad.name, "CreateTopics: invalid config");
        return Err(Refused(ErrorCode::INVALID_CONFIG, None));
    }
    let replicas = if t.assignments.is_empty() {
        let partitions = if t.num_partitions == -1 { state.default_partitions() } else { t.num_partitions };
        let replication = if t.replication_factor == -1 { 1 } else { t.replication_factor };
        state.check_counts(partitions, replication)?;
        state.spread(0, partitions as usize, replication as usize)
    } else {
        assigned(state, t)?
    };
    let (partitions, replication) = (replicas.len() as i32, replicas[0].len() as i16);
    let configs: BTreeMap<String, String> =
        t.configs.iter().filter_map(|c| Some((c.name.to_string(), c.value.as_ref()?.to_string()))).collect();
    let id = if validate_only { Uuid::nil() } else { state.add_topic(name, replicas, configs.clone()) };
    Ok((id, partitions, replication, configs))
}

/// The replicas of a manual assignment, partition by partition: the counts must be left to it
/// (-1), each partition assigned once, and the partitions numbered from 0 without gaps.
fn assigned(state: &State, t: &CreatableTopic) -> Result<Vec<Vec<i32>>, Refused> {
    let invalid = |message: &str| Err(Refused::with(ErrorCode::INVALID_REQUEST, message.to_string()));
    if t.replication_factor != -1 {
        return invalid("A manual partition assignment was specified, but replication factor was not set to -1.");
    }
    if t.num_partitions != -1 {
        return invalid("A manual partition assignment was specified, but numPartitions was not set to -1.");
    }
    let mut by_partition: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    let mut replication = None;
    for a in &t.assignments {
        if by_partition.contains_key(&a.partition_index) {
            return Err(Refused::with(
                ErrorCode::INVALID_REPLICA_ASSIGNMENT,
                format!("Found multiple manual partition assignments for partition {}", a.partition_index),
            ));
        }
        let replicas: Vec<i32> = a.broker_ids.iter().map(|b| b.0).collect();
        state.check_assignment(a.partition_index, &replicas, replication)?;
        replication = Some(replicas.len());
        by_partition.insert(a.partition_index, replicas);
    }
    if by_partition.keys().copied().ne(0..by_partition.len() as i32) {
        return Err(Refused::with(
            ErrorCode::INVALID_REPLICA_ASSIGNMENT,
            "partitions should be a consecutive 0-based integer sequence".to_string(),
        ));
    }
    Ok(by_partition.into_values().collect())
}

/// Kafka's message for a refused topic, where clients show it.
fn refusal_message(code: ErrorCode, name: &str, replication: i16) -> String {
    match code {
        ErrorCode::TOPIC_ALREADY_EXISTS => format!("Topic '{name}' already exists."),
        ErrorCode::INVALID_PARTITIONS => "Number of partitions was set to an invalid non-positive value.".to_owned(),
        ErrorCode::INVALID_REPLICATION_FACTOR if replication < 1 => {
            "Replication factor must be larger than 0, or -1 to use the default value.".to_owned()
        }
        ErrorCode::INVALID_REPLICATION_FACTOR => format!("Unable to replicate the partition {replication} time(s): The target replication factor of {replication} cannot be reached because only fewer broker(s) are registered."),
        _ => code.to_string(),
    }
}
