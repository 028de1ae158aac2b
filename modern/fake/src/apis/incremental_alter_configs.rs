//! IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on a topic's configs, SET and
//! DELETE on a group's share.* configs, each checked (a name Kafka does not know, or a value of
//! the wrong type or outside Kafka's bounds, is INVALID_CONFIG).

use kwire::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kwire::messages::{IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse};
use kwire::{ErrorCode, StrBytes};

use super::describe_configs::alterable_topic;
use super::Ctx;
use crate::groups::configs::check;
use crate::topic_configs::{topic_config, valid_value, Kind};

const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
const SUBTRACT: i8 = 3;

pub(super) async fn handle(ctx: &Ctx<'_>, request: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse {
    let mut state = ctx.shared.state();
    let responses = request
        .resources
        .iter()
        .map(|resource| {
            let mut response = AlterConfigsResourceResponse {
                resource_type: resource.resource_type,
                resource_name: resource.resource_name.clone(),
                ..Default::default()
            };
            if resource.resource_type == super::describe_configs::GROUP {
                if let Err((code, message)) = alter_group(&mut state, resource, request.validate_only) {
                    response.error_code = code;
                    response.error_message = Some(StrBytes::from(message));
                }
                return response;
            }
            let topic = match alterable_topic(&mut state, resource.resource_type, &resource.resource_name) {
                Ok(topic) => topic,
                Err((code, message)) => {
                    response.error_code = code;
                    response.error_message = message.map(StrBytes::from_static_str);
                    return response;
                }
            };
            // Applied to a copy, kept only if every change is valid.
            let mut configs = topic.configs.clone();
            for change in &resource.configs {
                let name = change.name.to_string();
                let Some((default, kind)) = topic_config(&name) else {
                    response.error_code = ErrorCode::INVALID_CONFIG;
                    response.error_message = Some(StrBytes::from(format!("Unknown topic config name: {name}")));
                    return response;
                };
                let value = change.value.as_ref().map(|v| v.to_string());
                let current = configs.get(&name).cloned().unwrap_or_else(|| default.to_string());
                let list = |s: &str| {
                    s.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect::<Vec<_>>()
                };
                let next = match (change.config_operation, value) {
                    (SET, Some(v)) => Some(v),
                    (DELETE, _) => None,
                    (APPEND | SUBTRACT, _) if kind != Kind::List => {
                        response.error_code = ErrorCode::INVALID_CONFIG;
                        response.error_message = Some(StrBytes::from(format!("{name} is not a list")));
                        return response;
                    }
                    (APPEND, Some(v)) => {
                        let mut items = list(&current);
                        items.extend(list(&v).into_iter().filter(|i| !list(&current).contains(i)));
                        Some(items.join(","))
                    }
                    (SUBTRACT, Some(v)) => {
                        let gone = list(&v);
                        Some(list(&current).into_iter().filter(|i| !gone.contains(i)).collect::<Vec<_>>().join(","))
                    }
                    _ => {
                        response.error_code = ErrorCode::INVALID_REQUEST;
                        return response;
                    }
                };
                match next {
                    Some(v) if !valid_value(&name, &v) => {
                        response.error_code = ErrorCode::INVALID_CONFIG;
                        response.error_message =
                            Some(StrBytes::from(format!("Invalid value {v} for configuration {name}")));
                        return response;
                    }
                    Some(v) => {
                        configs.insert(name, v);
                    }
                    None => {
                        configs.remove(&name);
                    }
                }
            }
            if !request.validate_only {
                topic.configs = configs;
            }
            response
        })
        .collect();
    IncrementalAlterConfigsResponse { responses, ..Default::default() }
}

/// SET and DELETE on a group's share.* configs (the group need not exist yet), all or none.
fn alter_group(
    state: &mut crate::state::State,
    resource: &kwire::messages::incremental_alter_configs_request::AlterConfigsResource,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let group = resource.resource_name.as_str();
    let mut configs = state.groups().configs().get(group).cloned().unwrap_or_default();
    for change in &resource.configs {
        let name = change.name.to_string();
        let value = change.value.as_ref().map(|v| v.to_string());
        match (change.config_operation, value) {
            (SET, Some(v)) => {
                check(&name, &v).map_err(|m| (ErrorCode::INVALID_CONFIG, m))?;
                configs.insert(name, v);
            }
            (DELETE, _) => {
                check(&name, "")
                    .or_else(|m| if m.starts_with("Unknown") { Err(m) } else { Ok(()) })
                    .map_err(|m| (ErrorCode::INVALID_CONFIG, m))?;
                configs.remove(&name);
            }
            (APPEND | SUBTRACT, _) => {
                return Err((ErrorCode::INVALID_CONFIG, format!("{name} is not a list")));
            }
            _ => return Err((ErrorCode::INVALID_REQUEST, "A value is needed".to_string())),
        }
    }
    if !validate_only {
        state.groups_mut().configs_mut().set(group, configs);
    }
    Ok(())
}
