//! CreatePartitions: grows a topic to `count` partitions, the new ones placed over the live
//! nodes or on the replicas the client assigns (as many replicas as the topic's partitions have).

use kwire::messages::create_partitions_request::CreatePartitionsTopic;
use kwire::messages::create_partitions_response::CreatePartitionsTopicResult;
use kwire::messages::{CreatePartitionsRequest, CreatePartitionsResponse};
use kwire::{ErrorCode, StrBytes};

use super::Ctx;
use crate::state::{Refused, State};

pub(super) async fn handle(ctx: &Ctx<'_>, request: CreatePartitionsRequest) -> CreatePartitionsResponse {
    let mut state = ctx.shared.state();
    let results = request
        .topics
        .iter()
        .map(|t| {
            let mut result = CreatePartitionsTopicResult { name: t.name.clone(), ..Default::default() };
            if let Err(Refused(code, message)) = grow(&mut state, t, request.validate_only) {
                result.error_code = code;
                result.error_message = Some(StrBytes::from(message.unwrap_or_else(|| code.to_string())));
            }
            result
        })
        .collect();
    CreatePartitionsResponse { results, ..Default::default() }
}

/// Adds the partitions `t` asks for (or only checks, for `validate_only`).
fn grow(state: &mut State, t: &CreatePartitionsTopic, validate_only: bool) -> Result<(), Refused> {
    let Some(topic) = state.topic(t.name.as_str()) else {
        return Err(Refused::with(
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            format!("The topic '{}' does not exist.", t.name),
        ));
    };
    let existing = topic.partitions.len();
    let replication = topic.partitions.first().map_or(1, |p| p.replicas.len());
    if t.count <= existing as i32 {
        return Err(Refused::with(
            ErrorCode::INVALID_PARTITIONS,
            format!("Topic currently has {existing} partitions, which is higher than the requested {}.", t.count),
        ));
    }
    let added = t.count as usize - existing;
    let replicas = match &t.assignments {
        None => state.spread(existing, added, replication),
        Some(assignments) => {
            if assignments.len() != added {
                return Err(Refused::with(
                    ErrorCode::INVALID_REPLICA_ASSIGNMENT,
                    format!(
                        "Attempted to add {added} additional partition(s), but only {} assignment(s) were specified.",
                        assignments.len()
                    ),
                ));
            }
            let mut replicas = Vec::with_capacity(added);
            for (i, a) in assignments.iter().enumerate() {
                let ids: Vec<i32> = a.broker_ids.iter().map(|b| b.0).collect();
                state.check_assignment((existing + i) as i32, &ids, Some(replication))?;
                replicas.push(ids);
            }
            replicas
        }
    };
    if !validate_only {
        state.add_partitions(t.name.as_str(), replicas);
    }
    Ok(())
}
