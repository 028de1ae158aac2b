//! One file per API; this one routes a decoded request to its handler and says which APIs,
//! at which versions, the cluster serves.

pub(crate) mod api_versions;
mod create_topics;
mod delete_topics;
mod fetch;
mod init_producer_id;
mod list_offsets;
mod metadata;
mod produce;

use kafka_wire::messages::{ApiKey, RequestKind, ResponseKind};

use crate::cluster::Shared;

/// The APIs the cluster answers; each at every version kafka-wire's messages know.
pub(crate) const SERVED: &[ApiKey] = &[
    ApiKey::Produce,
    ApiKey::Fetch,
    ApiKey::ListOffsets,
    ApiKey::Metadata,
    ApiKey::ApiVersions,
    ApiKey::CreateTopics,
    ApiKey::DeleteTopics,
    ApiKey::InitProducerId,
];

/// Whether `api` at `version` is answered (anything else closes the connection, as Kafka
/// closes it for a request it does not advertise).
pub(crate) fn served(api: ApiKey, version: i16) -> bool {
    SERVED.contains(&api) && api.supported_versions().is_some_and(|v| v.contains(version))
}

/// The answer to a request of a served API; `None` for a request that gets no response.
pub(crate) async fn handle(shared: &Shared, node: i32, request: RequestKind, version: i16) -> Option<ResponseKind> {
    Some(match request {
        RequestKind::ApiVersions(r) => api_versions::handle(&r, version).into(),
        RequestKind::Metadata(r) => metadata::handle(shared, r, version).into(),
        RequestKind::CreateTopics(r) => create_topics::handle(shared, r, version).into(),
        RequestKind::DeleteTopics(r) => delete_topics::handle(shared, r, version).into(),
        RequestKind::Produce(r) => return produce::handle(shared, node, r, version).map(Into::into),
        RequestKind::Fetch(r) => fetch::handle(shared, node, r, version).await.into(),
        RequestKind::ListOffsets(r) => list_offsets::handle(shared, node, r, version).into(),
        RequestKind::InitProducerId(r) => init_producer_id::handle(shared, r).into(),
        _ => return None,
    })
}
