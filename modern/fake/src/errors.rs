//! The response that fails a request with one error code, shaped after the request (every
//! partition, group or key it names), as Kafka's `AbstractRequest.getErrorResponse` builds it:
//! what a hook's [`Action::Error`](crate::Action::Error) answers.

use kwire::messages::*;
use kwire::{BrokerId, ErrorCode};

/// The APIs an error can be injected into.
pub(crate) fn can_fail(api: ApiKey) -> bool {
    matches!(
        api,
        ApiKey::Produce
            | ApiKey::Fetch
            | ApiKey::ListOffsets
            | ApiKey::Metadata
            | ApiKey::OffsetCommit
            | ApiKey::OffsetFetch
            | ApiKey::FindCoordinator
            | ApiKey::JoinGroup
            | ApiKey::Heartbeat
            | ApiKey::LeaveGroup
            | ApiKey::SyncGroup
            | ApiKey::DescribeGroups
            | ApiKey::ListGroups
            | ApiKey::InitProducerId
            | ApiKey::AddOffsetsToTxn
            | ApiKey::EndTxn
            | ApiKey::CreateTopics
            | ApiKey::DeleteTopics
            | ApiKey::ConsumerGroupHeartbeat
            | ApiKey::ShareGroupHeartbeat
            | ApiKey::ShareFetch
            | ApiKey::ShareAcknowledge
    )
}

/// `request` failed with `code` at `version`; `None` for an API outside [`can_fail`].
pub(crate) fn error_response(request: &RequestKind, version: i16, code: ErrorCode) -> Option<ResponseKind> {
    Some(match request {
        RequestKind::Produce(r) => ProduceResponse {
            responses: r
                .topic_data
                .iter()
                .map(|t| produce_response::TopicProduceResponse {
                    name: if version < 13 { t.name.clone() } else { Default::default() },
                    topic_id: if version >= 13 { t.topic_id } else { Default::default() },
                    partition_responses: t
                        .partition_data
                        .iter()
                        .map(|p| produce_response::PartitionProduceResponse {
                            index: p.index,
                            error_code: code,
                            base_offset: -1,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::Fetch(r) => FetchResponse {
            error_code: if version >= 7 { code } else { ErrorCode::NONE },
            responses: r
                .topics
                .iter()
                .map(|t| fetch_response::FetchableTopicResponse {
                    topic: if version < 13 { t.topic.clone() } else { Default::default() },
                    topic_id: if version >= 13 { t.topic_id } else { Default::default() },
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| fetch_response::PartitionData {
                            partition_index: p.partition,
                            error_code: code,
                            high_watermark: -1,
                            last_stable_offset: -1,
                            log_start_offset: -1,
                            aborted_transactions: None,
                            records: Some(Default::default()),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::ListOffsets(r) => ListOffsetsResponse {
            topics: r
                .topics
                .iter()
                .map(|t| list_offsets_response::ListOffsetsTopicResponse {
                    name: t.name.clone(),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| list_offsets_response::ListOffsetsPartitionResponse {
                            partition_index: p.partition_index,
                            error_code: code,
                            timestamp: -1,
                            offset: -1,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::Metadata(r) => MetadataResponse {
            topics: r
                .topics
                .iter()
                .flatten()
                .map(|t| metadata_response::MetadataResponseTopic {
                    error_code: code,
                    name: t.name.clone(),
                    topic_id: t.topic_id,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::OffsetCommit(r) => OffsetCommitResponse {
            topics: r
                .topics
                .iter()
                .map(|t| offset_commit_response::OffsetCommitResponseTopic {
                    name: if version < 10 { t.name.clone() } else { Default::default() },
                    topic_id: if version >= 10 { t.topic_id } else { Default::default() },
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| offset_commit_response::OffsetCommitResponsePartition {
                            partition_index: p.partition_index,
                            error_code: code,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::OffsetFetch(r) if version < 8 => {
            OffsetFetchResponse { error_code: code, ..Default::default() }.into()
        }
        RequestKind::OffsetFetch(r) => OffsetFetchResponse {
            groups: r
                .groups
                .iter()
                .map(|g| offset_fetch_response::OffsetFetchResponseGroup {
                    group_id: g.group_id.clone(),
                    error_code: code,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::FindCoordinator(r) if version >= 4 => FindCoordinatorResponse {
            coordinators: r
                .coordinator_keys
                .iter()
                .map(|key| find_coordinator_response::Coordinator {
                    key: key.clone(),
                    node_id: BrokerId(-1),
                    port: -1,
                    error_code: code,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::FindCoordinator(_) => {
            FindCoordinatorResponse { error_code: code, node_id: BrokerId(-1), port: -1, ..Default::default() }.into()
        }
        RequestKind::JoinGroup(r) => JoinGroupResponse {
            error_code: code,
            generation_id: -1,
            member_id: r.member_id.clone(),
            protocol_name: (version < 7).then(Default::default),
            ..Default::default()
        }
        .into(),
        RequestKind::Heartbeat(_) => HeartbeatResponse { error_code: code, ..Default::default() }.into(),
        RequestKind::LeaveGroup(_) => LeaveGroupResponse { error_code: code, ..Default::default() }.into(),
        RequestKind::SyncGroup(_) => {
            SyncGroupResponse { error_code: code, protocol_type: None, protocol_name: None, ..Default::default() }
                .into()
        }
        RequestKind::DescribeGroups(r) => DescribeGroupsResponse {
            groups: r
                .groups
                .iter()
                .map(|g| describe_groups_response::DescribedGroup {
                    group_id: g.clone(),
                    error_code: code,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::ListGroups(_) => ListGroupsResponse { error_code: code, ..Default::default() }.into(),
        RequestKind::InitProducerId(_) => InitProducerIdResponse {
            error_code: code,
            producer_id: kwire::ProducerId(-1),
            producer_epoch: -1,
            ..Default::default()
        }
        .into(),
        RequestKind::AddOffsetsToTxn(_) => AddOffsetsToTxnResponse { error_code: code, ..Default::default() }.into(),
        RequestKind::EndTxn(_) => EndTxnResponse {
            error_code: code,
            producer_id: kwire::ProducerId(-1),
            producer_epoch: -1,
            ..Default::default()
        }
        .into(),
        RequestKind::CreateTopics(r) => CreateTopicsResponse {
            topics: r
                .topics
                .iter()
                .map(|t| create_topics_response::CreatableTopicResult {
                    name: t.name.clone(),
                    error_code: code,
                    num_partitions: -1,
                    replication_factor: -1,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        RequestKind::DeleteTopics(r) => DeleteTopicsResponse {
            responses: if version < 6 {
                r.topic_names
                    .iter()
                    .map(|n| delete_topics_response::DeletableTopicResult {
                        name: Some(n.clone()),
                        error_code: code,
                        ..Default::default()
                    })
                    .collect()
            } else {
                r.topics
                    .iter()
                    .map(|t| delete_topics_response::DeletableTopicResult {
                        name: t.name.clone(),
                        topic_id: t.topic_id,
                        error_code: code,
                        ..Default::default()
                    })
                    .collect()
            },
            ..Default::default()
        }
        .into(),
        // The group and share APIs answer a request-wide failure with their top-level code.
        RequestKind::ConsumerGroupHeartbeat(_) => {
            ConsumerGroupHeartbeatResponse { error_code: code, ..Default::default() }.into()
        }
        RequestKind::ShareGroupHeartbeat(_) => {
            ShareGroupHeartbeatResponse { error_code: code, ..Default::default() }.into()
        }
        RequestKind::ShareFetch(_) => ShareFetchResponse { error_code: code, ..Default::default() }.into(),
        RequestKind::ShareAcknowledge(_) => ShareAcknowledgeResponse { error_code: code, ..Default::default() }.into(),
        _ => return None,
    })
}
