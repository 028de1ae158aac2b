//! CreatePartitions: grows a topic to `count` partitions, leaders spread over the live nodes.

use kafka_wire::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_wire::messages::{CreatePartitionsRequest, CreatePartitionsResponse};
use kafka_wire::{ErrorCode, StrBytes};

use super::Ctx;

pub(crate) fn handle(ctx: &Ctx<'_>, request: CreatePartitionsRequest) -> CreatePartitionsResponse {
    let mut state = ctx.shared.state();
    let live = state.live_nodes();
    let results = request
        .topics
        .iter()
        .map(|t| {
            let mut result = CreatePartitionsTopicResult { name: t.name.clone(), ..Default::default() };
            let outcome = match state.topics.get_mut(t.name.as_str()) {
                None => Err((ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, format!("The topic '{}' does not exist.", t.name))),
                Some(_) if t.assignments.is_some() => {
                    Err((ErrorCode::INVALID_REQUEST, "Manual partition assignments are not served.".to_string()))
                }
                Some(topic) if t.count <= topic.partitions.len() as i32 => Err((
                    ErrorCode::INVALID_PARTITIONS,
                    format!(
                        "Topic currently has {} partitions, which is higher than the requested {}.",
                        topic.partitions.len(),
                        t.count
                    ),
                )),
                Some(topic) => {
                    if !request.validate_only {
                        let replication = topic.partitions.first().map_or(1, |p| p.replicas.len());
                        for p in topic.partitions.len()..t.count as usize {
                            let replicas: Vec<i32> = (0..replication).map(|r| live[(p + r) % live.len()]).collect();
                            topic.partitions.push(crate::state::Partition::new(replicas));
                        }
                    }
                    Ok(())
                }
            };
            if let Err((code, message)) = outcome {
                result.error_code = code;
                result.error_message = Some(StrBytes::from(message));
            }
            result
        })
        .collect();
    CreatePartitionsResponse { results, ..Default::default() }
}
