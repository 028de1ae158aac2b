//! DescribeTopicPartitions (KIP-966): topics and their partitions, paged by a cursor and the
//! response's partition limit.

use kwire::messages::describe_topic_partitions_response::{
    Cursor, DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic,
};
use kwire::messages::{DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse};
use kwire::{BrokerId, ErrorCode, StrBytes, TopicName};

use super::Ctx;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DescribeTopicPartitionsRequest) -> DescribeTopicPartitionsResponse {
    let state = ctx.shared.state();
    let mut names: Vec<String> = if request.topics.is_empty() {
        state.topics().names().cloned().collect()
    } else {
        request.topics.iter().map(|t| t.name.to_string()).collect()
    };
    names.sort();
    let (from_topic, from_partition) =
        request.cursor.as_ref().map_or((String::new(), 0), |c| (c.topic_name.to_string(), c.partition_index));
    let mut room = usize::try_from(request.response_partition_limit).unwrap_or(0).clamp(1, 2000);
    let mut topics = Vec::new();
    let mut next_cursor = None;
    for name in names.into_iter().filter(|n| *n >= from_topic) {
        let Some(topic) = state.topic(&name) else {
            topics.push(DescribeTopicPartitionsResponseTopic {
                error_code: ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                name: Some(TopicName(StrBytes::from(name))),
                topic_authorized_operations: super::authorized::TOPIC,
                ..Default::default()
            });
            continue;
        };
        let first = if name == from_topic { from_partition.max(0) as usize } else { 0 };
        let mut partitions = Vec::new();
        for (i, p) in topic.partitions.iter().enumerate().skip(first) {
            if room == 0 {
                next_cursor = Some(Cursor {
                    topic_name: TopicName(StrBytes::from(name.clone())),
                    partition_index: i as i32,
                    ..Default::default()
                });
                break;
            }
            room -= 1;
            let replicas: Vec<BrokerId> = p.replicas.iter().map(|r| BrokerId(*r)).collect();
            partitions.push(DescribeTopicPartitionsResponsePartition {
                partition_index: i as i32,
                leader_id: BrokerId(p.leader),
                leader_epoch: p.leader_epoch,
                replica_nodes: replicas.clone().into(),
                isr_nodes: replicas.into(),
                eligible_leader_replicas: Some(Vec::<BrokerId>::new().into()),
                last_known_elr: Some(Vec::<BrokerId>::new().into()),
                ..Default::default()
            });
        }
        topics.push(DescribeTopicPartitionsResponseTopic {
            name: Some(TopicName(StrBytes::from(name))),
            topic_id: topic.id,
            // Always (unknown topics too), as Kafka answers without an authorizer.
            topic_authorized_operations: super::authorized::TOPIC,
            partitions,
            ..Default::default()
        });
        if next_cursor.is_some() {
            break;
        }
    }
    DescribeTopicPartitionsResponse { topics, next_cursor, ..Default::default() }
}
