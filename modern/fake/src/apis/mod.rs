//! One file per API; this one routes a decoded request to its handler and says which APIs,
//! at which versions, the cluster serves.

mod add_offsets_to_txn;
mod add_partitions_to_txn;
mod alter_configs;
mod alter_share_group_offsets;
mod api_versions;
mod consumer_group_describe;
mod consumer_group_heartbeat;
mod create_partitions;
mod create_topics;
mod delete_groups;
mod delete_records;
mod delete_share_group_offsets;
mod delete_topics;
mod describe_cluster;
mod describe_configs;
mod describe_groups;
mod describe_share_group_offsets;
mod describe_topic_partitions;
mod describe_transactions;
mod end_txn;
mod fetch;
mod find_coordinator;
mod heartbeat;
mod incremental_alter_configs;
mod init_producer_id;
mod join_group;
mod leave_group;
mod list_groups;
mod list_offsets;
mod list_transactions;
mod metadata;
mod offset_commit;
mod offset_delete;
mod offset_fetch;
mod offset_for_leader_epoch;
mod produce;
mod share_acknowledge;
mod share_fetch;
mod share_group_describe;
mod share_group_heartbeat;
mod sync_group;
mod txn_offset_commit;

use kwire::messages::api_versions_response::ApiVersion;
use kwire::messages::{ApiKey, RequestKind, ResponseKind};
use kwire::VersionRange;

pub(crate) use crate::errors::{can_fail, error_response};
use crate::shared::Shared;

/// What a handler knows of the request besides its body.
pub(crate) struct Ctx<'a> {
    pub shared: &'a Shared,
    /// The node the request came to.
    pub node: i32,
    /// The version of the request (and of its response).
    pub version: i16,
    /// The header's client id ("" when null).
    pub client_id: &'a str,
    /// The client's address as Kafka reports it (`/IP`).
    pub client_host: &'a str,
}

/// The APIs the cluster answers; each at every version kwire's messages know.
pub(crate) const SERVED: &[ApiKey] = &[
    ApiKey::Produce,
    ApiKey::Fetch,
    ApiKey::ListOffsets,
    ApiKey::Metadata,
    ApiKey::OffsetCommit,
    ApiKey::OffsetFetch,
    ApiKey::FindCoordinator,
    ApiKey::JoinGroup,
    ApiKey::Heartbeat,
    ApiKey::LeaveGroup,
    ApiKey::SyncGroup,
    ApiKey::DescribeGroups,
    ApiKey::ListGroups,
    ApiKey::ApiVersions,
    ApiKey::CreateTopics,
    ApiKey::DeleteTopics,
    ApiKey::InitProducerId,
    ApiKey::DeleteGroups,
    ApiKey::OffsetDelete,
    ApiKey::DeleteRecords,
    ApiKey::OffsetForLeaderEpoch,
    ApiKey::DescribeConfigs,
    ApiKey::CreatePartitions,
    ApiKey::AlterConfigs,
    ApiKey::IncrementalAlterConfigs,
    ApiKey::DescribeCluster,
    ApiKey::DescribeTopicPartitions,
    ApiKey::AddPartitionsToTxn,
    ApiKey::AddOffsetsToTxn,
    ApiKey::EndTxn,
    ApiKey::TxnOffsetCommit,
    ApiKey::DescribeTransactions,
    ApiKey::ListTransactions,
    ApiKey::ConsumerGroupHeartbeat,
    ApiKey::ConsumerGroupDescribe,
    ApiKey::ShareGroupHeartbeat,
    ApiKey::ShareGroupDescribe,
    ApiKey::ShareFetch,
    ApiKey::ShareAcknowledge,
    ApiKey::DescribeShareGroupOffsets,
    ApiKey::AlterShareGroupOffsets,
    ApiKey::DeleteShareGroupOffsets,
    // Answered by the connection, which holds the authentication's state.
    ApiKey::SaslHandshake,
    ApiKey::SaslAuthenticate,
];

/// The versions of `api` the cluster serves: those kwire's messages read, within the
/// release the cluster behaves as; `None` for an API it does not serve.
pub(crate) fn served_versions(shared: &Shared, api: ApiKey) -> Option<VersionRange> {
    if !SERVED.contains(&api) {
        return None;
    }
    let mut ours = api.supported_versions()?;
    if api == ApiKey::SaslHandshake {
        // v0 is followed by bare tokens outside Kafka's request framing; v1 by SaslAuthenticate.
        ours = ours.intersect(&VersionRange::new(1, i16::MAX))?;
    }
    match &shared.config.versions {
        None => Some(ours),
        Some(release) => {
            let (min, max) = release.get(&api.key())?;
            ours.intersect(&VersionRange::new(*min, *max))
        }
    }
}

/// Every served API with the versions served.
pub(crate) fn advertised(shared: &Shared) -> Vec<ApiVersion> {
    SERVED
        .iter()
        .filter_map(|api| {
            let versions = served_versions(shared, *api)?;
            Some(ApiVersion {
                api_key: api.key(),
                min_version: versions.min,
                max_version: versions.max,
                ..Default::default()
            })
        })
        .collect()
}

/// Whether `api` at `version` is answered (anything else closes the connection, as Kafka
/// closes it for a request it does not advertise).
pub(crate) fn served(shared: &Shared, api: ApiKey, version: i16) -> bool {
    served_versions(shared, api).is_some_and(|v| v.contains(version))
}

/// The answer to a request of a served API; `None` for a request that gets no response.
pub(crate) async fn handle(ctx: &Ctx<'_>, request: RequestKind) -> Option<ResponseKind> {
    let (shared, node, version) = (ctx.shared, ctx.node, ctx.version);
    Some(match request {
        RequestKind::ApiVersions(r) => api_versions::handle(shared, &r).into(),
        RequestKind::Metadata(r) => metadata::handle(shared, r, version).into(),
        RequestKind::CreateTopics(r) => create_topics::handle(shared, r, version).into(),
        RequestKind::DeleteTopics(r) => delete_topics::handle(shared, r, version).into(),
        RequestKind::Produce(r) => return produce::handle(shared, node, r, version).map(Into::into),
        RequestKind::Fetch(r) => fetch::handle(shared, node, r, version).await.into(),
        RequestKind::ListOffsets(r) => list_offsets::handle(shared, node, r, version).into(),
        RequestKind::InitProducerId(r) => init_producer_id::handle(ctx, r).into(),
        RequestKind::AddPartitionsToTxn(r) => add_partitions_to_txn::handle(ctx, r).into(),
        RequestKind::AddOffsetsToTxn(r) => add_offsets_to_txn::handle(ctx, r).into(),
        RequestKind::TxnOffsetCommit(r) => txn_offset_commit::handle(ctx, r).into(),
        RequestKind::EndTxn(r) => end_txn::handle(ctx, r).into(),
        RequestKind::DescribeTransactions(r) => describe_transactions::handle(ctx, r).into(),
        RequestKind::ListTransactions(r) => list_transactions::handle(ctx, r).into(),
        RequestKind::ConsumerGroupHeartbeat(r) => consumer_group_heartbeat::handle(ctx, r).into(),
        RequestKind::ConsumerGroupDescribe(r) => consumer_group_describe::handle(ctx, r).into(),
        RequestKind::ShareGroupHeartbeat(r) => share_group_heartbeat::handle(ctx, r).into(),
        RequestKind::ShareGroupDescribe(r) => share_group_describe::handle(ctx, r).into(),
        RequestKind::ShareFetch(r) => share_fetch::handle(ctx, r).await.into(),
        RequestKind::ShareAcknowledge(r) => share_acknowledge::handle(ctx, r).into(),
        RequestKind::DescribeShareGroupOffsets(r) => describe_share_group_offsets::handle(ctx, r).into(),
        RequestKind::AlterShareGroupOffsets(r) => alter_share_group_offsets::handle(ctx, r).into(),
        RequestKind::DeleteShareGroupOffsets(r) => delete_share_group_offsets::handle(ctx, r).into(),
        RequestKind::FindCoordinator(r) => find_coordinator::handle(ctx, r).into(),
        RequestKind::JoinGroup(r) => join_group::handle(ctx, r).await.into(),
        RequestKind::SyncGroup(r) => sync_group::handle(ctx, r).await.into(),
        RequestKind::Heartbeat(r) => heartbeat::handle(ctx, r).into(),
        RequestKind::LeaveGroup(r) => leave_group::handle(ctx, r).into(),
        RequestKind::OffsetCommit(r) => offset_commit::handle(ctx, r).into(),
        RequestKind::OffsetFetch(r) => offset_fetch::handle(ctx, r).into(),
        RequestKind::DescribeGroups(r) => describe_groups::handle(ctx, r).into(),
        RequestKind::ListGroups(r) => list_groups::handle(ctx, r).into(),
        RequestKind::DeleteGroups(r) => delete_groups::handle(ctx, r).into(),
        RequestKind::OffsetDelete(r) => offset_delete::handle(ctx, r).into(),
        RequestKind::DeleteRecords(r) => delete_records::handle(ctx, r).into(),
        RequestKind::OffsetForLeaderEpoch(r) => offset_for_leader_epoch::handle(ctx, r).into(),
        RequestKind::DescribeConfigs(r) => describe_configs::handle(ctx, r).into(),
        RequestKind::CreatePartitions(r) => create_partitions::handle(ctx, r).into(),
        RequestKind::AlterConfigs(r) => alter_configs::handle(ctx, r).into(),
        RequestKind::IncrementalAlterConfigs(r) => incremental_alter_configs::handle(ctx, r).into(),
        RequestKind::DescribeCluster(r) => describe_cluster::handle(ctx, r).into(),
        RequestKind::DescribeTopicPartitions(r) => describe_topic_partitions::handle(ctx, r).into(),
        _ => return None,
    })
}

/// What a fenced producer gets at this version: PRODUCER_FENCED from `since`, before that
/// INVALID_PRODUCER_EPOCH (Kafka's answer to clients older than the code).
pub(crate) fn fenced(version: i16, since: i16) -> kwire::ErrorCode {
    if version >= since {
        kwire::ErrorCode::PRODUCER_FENCED
    } else {
        kwire::ErrorCode::INVALID_PRODUCER_EPOCH
    }
}

/// KIP-320's check of the leader epoch a client believes current (-1: no check): an older one
/// is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
pub(crate) fn check_leader_epoch(claimed: i32, current: i32) -> Result<(), kwire::ErrorCode> {
    match claimed {
        -1 => Ok(()),
        c if c < current => Err(kwire::ErrorCode::FENCED_LEADER_EPOCH),
        c if c > current => Err(kwire::ErrorCode::UNKNOWN_LEADER_EPOCH),
        _ => Ok(()),
    }
}

/// "Authorized operations" as Kafka answers them without an authorizer: every operation the
/// resource type supports (its `AclEntry.supportedOperations`), one bit per `AclOperation` code.
pub(crate) mod authorized {
    const fn bits(codes: &[u8]) -> i32 {
        let (mut field, mut i) = (0, 0);
        while i < codes.len() {
            field |= 1 << codes[i];
            i += 1;
        }
        field
    }
    // AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
    // CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
    pub(crate) const TOPIC: i32 = bits(&[3, 4, 5, 6, 7, 8, 10, 11]);
    pub(crate) const GROUP: i32 = bits(&[3, 6, 8, 10, 11]);
    pub(crate) const CLUSTER: i32 = bits(&[5, 7, 8, 9, 10, 11, 12]);
}
