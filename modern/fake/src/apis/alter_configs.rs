//! AlterConfigs (the older, whole-set form): a topic's configs become exactly those given,
//! each checked as IncrementalAlterConfigs checks them.

use std::collections::BTreeMap;

use kwire::messages::alter_configs_response::AlterConfigsResourceResponse;
use kwire::messages::{AlterConfigsRequest, AlterConfigsResponse};
use kwire::{ErrorCode, StrBytes};

use super::describe_configs::alterable_topic;
use super::Ctx;
use crate::topic_configs::{topic_config, valid_value};

pub(super) async fn handle(ctx: &Ctx<'_>, request: AlterConfigsRequest) -> AlterConfigsResponse {
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
            let topic = match alterable_topic(&mut state, resource.resource_type, &resource.resource_name) {
                Ok(topic) => topic,
                Err((code, message)) => {
                    response.error_code = code;
                    response.error_message = message.map(StrBytes::from_static_str);
                    return response;
                }
            };
            let mut configs = BTreeMap::new();
            for c in &resource.configs {
                let value = c.value.as_ref().map(|v| v.to_string()).unwrap_or_default();
                if topic_config(&c.name).is_none() || !valid_value(&c.name, &value) {
                    response.error_code = ErrorCode::INVALID_CONFIG;
                    response.error_message =
                        Some(StrBytes::from(format!("Invalid value {value} for configuration {}", c.name)));
                    return response;
                }
                configs.insert(c.name.to_string(), value);
            }
            if !request.validate_only {
                topic.configs = configs;
            }
            response
        })
        .collect();
    AlterConfigsResponse { responses, ..Default::default() }
}
