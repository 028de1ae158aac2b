//! DescribeShareGroupOffsets (KIP-932): each share-partition's start offset as Kafka's share
//! coordinator stored it (one write behind: see `SharePartition::persisted_start`) and, v1,
//! its lag (records to the log's end not yet acknowledged or archived), for the partitions
//! named or every one the group has read. A partition the group never read has offset -1.

use kwire::messages::describe_share_group_offsets_response::{
    DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponsePartition,
    DescribeShareGroupOffsetsResponseTopic,
};
use kwire::messages::{DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse};
use kwire::{ErrorCode, StrBytes, TopicName};

use super::Ctx;

pub(super) async fn handle(
    ctx: &Ctx<'_>,
    request: DescribeShareGroupOffsetsRequest,
) -> DescribeShareGroupOffsetsResponse {
    let state = ctx.shared.state();
    let shares = state.shares();
    let groups = request
        .groups
        .iter()
        .map(|g| {
            let id = g.group_id.to_string();
            let mut out = DescribeShareGroupOffsetsResponseGroup { group_id: g.group_id.clone(), ..Default::default() };
            if let Err(code) = state.coordinates(ctx.node, &id) {
                out.error_code = code;
                return out;
            }
            if let Err((code, message)) = state.groups().share(&id) {
                out.error_code = code;
                out.error_message = Some(StrBytes::from(message));
                return out;
            }
            // (topic name, partitions) asked for, or every partition the group has read.
            let wanted: Vec<(String, Vec<i32>)> = match &g.topics {
                Some(topics) => {
                    topics.iter().map(|t| (t.topic_name.to_string(), t.partitions.iter().collect())).collect()
                }
                None => {
                    let mut read: std::collections::BTreeMap<String, Vec<i32>> = Default::default();
                    for (group, topic, index) in shares.partitions.keys() {
                        if *group == id {
                            if let Some(name) = state.name_of(*topic) {
                                read.entry(name.to_string()).or_default().push(*index);
                            }
                        }
                    }
                    read.into_iter().collect()
                }
            };
            out.topics = wanted
                .into_iter()
                .map(|(name, indexes)| {
                    let topic = state.topic(&name);
                    let topic_id = topic.map(|t| t.id).unwrap_or_default();
                    let partitions = indexes
                        .into_iter()
                        .map(|index| {
                            let mut p = DescribeShareGroupOffsetsResponsePartition {
                                partition_index: index,
                                start_offset: -1,
                                leader_epoch: -1,
                                lag: -1,
                                ..Default::default()
                            };
                            let Some(part) = topic.and_then(|t| t.partition(index)) else {
                                p.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
                                return p;
                            };
                            if let Some(share) = shares.partitions.get(&(id.clone(), topic_id, index)) {
                                p.start_offset = share.persisted_start;
                                p.leader_epoch = part.leader_epoch;
                                p.lag = share.lag(part.log.end_offset());
                            }
                            p
                        })
                        .collect();
                    DescribeShareGroupOffsetsResponseTopic {
                        topic_name: TopicName(StrBytes::from(name)),
                        topic_id,
                        partitions,
                        ..Default::default()
                    }
                })
                .collect();
            out
        })
        .collect();
    DescribeShareGroupOffsetsResponse { groups, ..Default::default() }
}
