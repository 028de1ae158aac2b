//! The APIs the cluster serves: one file per API, each holding its handler (`handle`) and, for
//! an API whose responses carry an error code, the response that fails a request with one code
//! (`error`, shaped after the request as Kafka's `AbstractRequest.getErrorResponse` shapes it:
//! every partition, group or key it names), which a hook's [`Action::Error`](crate::Action)
//! answers with. The table below yields what is served, the dispatch, and what
//! [`FakeCluster::fail`](crate::FakeCluster::fail) accepts: serving another API is its file
//! (with its `mod` line, for rustfmt to see it) and its row; the compiler refuses a row
//! without its file, a file without its row (its handler unused), and an `+ error` row whose
//! file has no error response.

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
use kwire::{ErrorCode, VersionRange};

use crate::shared::Shared;

/// The table: each API key, the file of its handler, and `+ error` where its file has an error
/// response (the APIs a hook's error may fail); then the APIs the connection answers itself.
macro_rules! apis {
    (
        handled: { $( $api:ident => $file:ident $(+ $error:ident)? ),* $(,)? }
        by the connection: { $( $connection:ident ),* $(,)? }
    ) => {
        /// The APIs the cluster answers; each at every version kwire's messages know.
        pub(crate) const SERVED: &[ApiKey] = &[$( ApiKey::$api, )* $( ApiKey::$connection, )*];

        /// The answer to a request of a served API; `None` for a request that gets no response.
        pub(crate) async fn handle(ctx: &Ctx<'_>, request: RequestKind) -> Option<ResponseKind> {
            match request {
                $( RequestKind::$api(r) => Reply::reply($file::handle(ctx, r).await), )*
                _ => None,
            }
        }

        /// `request` failed with `code` at `version`; `None` for an API whose responses carry
        /// no error.
        pub(crate) fn error_response(request: &RequestKind, version: i16, code: ErrorCode) -> Option<ResponseKind> {
            match request {
                $( $( RequestKind::$api(r) => Some($file::$error(r, version, code).into()), )? )*
                _ => None,
            }
        }

        /// Whether a hook's error can fail requests of `api`: whether its responses carry one.
        pub(crate) fn can_fail(api: ApiKey) -> bool {
            match api {
                $( $( ApiKey::$api => {
                    let _ = $file::$error;
                    true
                } )? )*
                _ => false,
            }
        }
    };
}

apis! {
    handled: {
        Produce => produce + error,
        Fetch => fetch + error,
        ListOffsets => list_offsets + error,
        Metadata => metadata + error,
        OffsetCommit => offset_commit + error,
        OffsetFetch => offset_fetch + error,
        FindCoordinator => find_coordinator + error,
        JoinGroup => join_group + error,
        Heartbeat => heartbeat + error,
        LeaveGroup => leave_group + error,
        SyncGroup => sync_group + error,
        DescribeGroups => describe_groups + error,
        ListGroups => list_groups + error,
        ApiVersions => api_versions,
        CreateTopics => create_topics + error,
        DeleteTopics => delete_topics + error,
        InitProducerId => init_producer_id + error,
        DeleteGroups => delete_groups,
        OffsetDelete => offset_delete,
        DeleteRecords => delete_records,
        OffsetForLeaderEpoch => offset_for_leader_epoch,
        DescribeConfigs => describe_configs,
        CreatePartitions => create_partitions,
        AlterConfigs => alter_configs,
        IncrementalAlterConfigs => incremental_alter_configs,
        DescribeCluster => describe_cluster,
        DescribeTopicPartitions => describe_topic_partitions,
        AddPartitionsToTxn => add_partitions_to_txn,
        AddOffsetsToTxn => add_offsets_to_txn + error,
        EndTxn => end_txn + error,
        TxnOffsetCommit => txn_offset_commit,
        DescribeTransactions => describe_transactions,
        ListTransactions => list_transactions,
        ConsumerGroupHeartbeat => consumer_group_heartbeat + error,
        ConsumerGroupDescribe => consumer_group_describe,
        ShareGroupHeartbeat => share_group_heartbeat + error,
        ShareGroupDescribe => share_group_describe,
        ShareFetch => share_fetch + error,
        ShareAcknowledge => share_acknowledge + error,
        DescribeShareGroupOffsets => describe_share_group_offsets,
        AlterShareGroupOffsets => alter_share_group_offsets,
        DeleteShareGroupOffsets => delete_share_group_offsets,
    }
    // They hold the connection's authentication, so the connection answers them.
    by the connection: { SaslHandshake, SaslAuthenticate }
}

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

/// What a handler returns: its response, or a [`MaybeResponse`].
trait Reply {
    fn reply(self) -> Option<ResponseKind>;
}

impl<T: Into<ResponseKind>> Reply for T {
    fn reply(self) -> Option<ResponseKind> {
        Some(self.into())
    }
}

/// A response, or none at all (a Produce with acks=0 gets none).
pub(crate) struct MaybeResponse<T>(pub Option<T>);

impl<T: Into<ResponseKind>> Reply for MaybeResponse<T> {
    fn reply(self) -> Option<ResponseKind> {
        self.0.map(Into::into)
    }
}

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

/// What a fenced producer gets at this version: PRODUCER_FENCED from `since`, before that
/// INVALID_PRODUCER_EPOCH (Kafka's answer to clients older than the code).
pub(crate) fn fenced(version: i16, since: i16) -> ErrorCode {
    if version >= since {
        ErrorCode::PRODUCER_FENCED
    } else {
        ErrorCode::INVALID_PRODUCER_EPOCH
    }
}

/// KIP-320's check of the leader epoch a client believes current (-1: no check): an older one
/// is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
pub(crate) fn check_leader_epoch(claimed: i32, current: i32) -> Result<(), ErrorCode> {
    match claimed {
        -1 => Ok(()),
        c if c < current => Err(ErrorCode::FENCED_LEADER_EPOCH),
        c if c > current => Err(ErrorCode::UNKNOWN_LEADER_EPOCH),
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
