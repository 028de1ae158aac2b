//! DescribeConfigs: a topic's configs (set ones as DYNAMIC_TOPIC_CONFIG, the rest as Kafka's
//! defaults, cluster-wide or built in), a node's broker defaults, or a group's share.* configs
//! (set ones as GROUP_CONFIG), all or the keys asked.

use std::collections::BTreeMap;

use kwire::messages::describe_configs_response::{DescribeConfigsResourceResult, DescribeConfigsResult};
use kwire::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use kwire::{ErrorCode, StrBytes};

use super::Ctx;
use crate::groups::configs::{default_value, GROUP_CONFIGS};
use crate::topic_configs::{broker_configs, Kind, CLUSTER_DEFAULTS, TOPIC_CONFIGS};

pub(crate) const TOPIC: i8 = 2;
pub(crate) const BROKER: i8 = 4;
/// A group's configs (KIP-848, KIP-932): here its share.* ones.
pub(crate) const GROUP: i8 = 32;
/// A value set on a group.
const GROUP_CONFIG: i8 = 8;
/// Where a value comes from (`ConfigSource` in Kafka).
const DYNAMIC_TOPIC_CONFIG: i8 = 1;
const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
const DEFAULT_CONFIG: i8 = 5;
const STATIC_BROKER_CONFIG: i8 = 4;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DescribeConfigsRequest) -> DescribeConfigsResponse {
    let state = ctx.shared.state();
    let results = request
        .resources
        .iter()
        .map(|resource| {
            let mut result = DescribeConfigsResult {
                resource_type: resource.resource_type,
                resource_name: resource.resource_name.clone(),
                ..Default::default()
            };
            let entries: Vec<(String, String, i8, Kind)> = match resource.resource_type {
                TOPIC => match state.topic(resource.resource_name.as_str()) {
                    None => {
                        result.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
                        return result;
                    }
                    Some(topic) => topic_entries(&topic.configs),
                },
                BROKER if resource.resource_name.parse::<i32>().is_ok_and(|id| state.node(id).is_some()) => {
                    broker_configs(state.default_partitions())
                        .into_iter()
                        .map(|(name, value, kind)| (name.to_string(), value, STATIC_BROKER_CONFIG, kind))
                        .collect()
                }
                BROKER => {
                    result.error_code = ErrorCode::INVALID_REQUEST;
                    return result;
                }
                GROUP => {
                    let set = state.groups().configs().get(resource.resource_name.as_str());
                    GROUP_CONFIGS
                        .iter()
                        .map(|(name, kind, _)| match set.and_then(|s| s.get(*name)) {
                            Some(value) => (name.to_string(), value.clone(), GROUP_CONFIG, *kind),
                            None => {
                                let value = default_value(name, &ctx.shared.config);
                                (name.to_string(), value, DEFAULT_CONFIG, *kind)
                            }
                        })
                        .collect()
                }
                _ => {
                    result.error_code = ErrorCode::INVALID_REQUEST;
                    return result;
                }
            };
            let wanted = |name: &str| {
                resource
                    .configuration_keys
                    .as_ref()
                    .is_none_or(|keys| keys.is_empty() || keys.iter().any(|k| k.as_str() == name))
            };
            result.configs = entries
                .into_iter()
                .filter(|(name, ..)| wanted(name))
                .map(|(name, value, source, kind)| DescribeConfigsResourceResult {
                    name: StrBytes::from(name),
                    value: Some(StrBytes::from(value)),
                    read_only: source == STATIC_BROKER_CONFIG,
                    config_source: source,
                    is_sensitive: false,
                    config_type: kind as i8,
                    documentation: None,
                    ..Default::default()
                })
                .collect();
            result
        })
        .collect();
    DescribeConfigsResponse { results, ..Default::default() }
}

/// Every config of a topic that sets `configs`: (name, value, source, type), in name order.
pub(crate) fn topic_entries(configs: &BTreeMap<String, String>) -> Vec<(String, String, i8, Kind)> {
    TOPIC_CONFIGS
        .iter()
        .map(|(name, default, kind)| match configs.get(*name) {
            Some(set) => (name.to_string(), set.clone(), DYNAMIC_TOPIC_CONFIG, *kind),
            None if CLUSTER_DEFAULTS.contains(name) => {
                (name.to_string(), default.to_string(), DYNAMIC_DEFAULT_BROKER_CONFIG, *kind)
            }
            None => (name.to_string(), default.to_string(), DEFAULT_CONFIG, *kind),
        })
        .collect()
}

/// The topic an alter request names, or its refusal: only topic configs are altered here.
pub(crate) fn alterable_topic<'s>(
    state: &'s mut crate::state::State,
    resource_type: i8,
    name: &str,
) -> Result<&'s mut crate::state::Topic, (ErrorCode, Option<&'static str>)> {
    if resource_type != TOPIC {
        return Err((ErrorCode::INVALID_REQUEST, Some("only topic configs can be altered here")));
    }
    state.topics_mut().get_mut(name).ok_or((ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, None))
}
