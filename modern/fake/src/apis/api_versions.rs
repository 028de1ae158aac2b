//! ApiVersions: the APIs served and their versions (KIP-511's client name and version are
//! accepted and not needed).

use kafka_wire::messages::api_versions_response::ApiVersion;
use kafka_wire::messages::{ApiVersionsRequest, ApiVersionsResponse};

use super::{served_versions, SERVED};
use crate::cluster::Shared;

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

pub(crate) fn handle(shared: &Shared, _request: &ApiVersionsRequest) -> ApiVersionsResponse {
    ApiVersionsResponse { api_keys: advertised(shared), ..Default::default() }
}
