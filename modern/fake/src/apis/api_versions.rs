//! ApiVersions: the APIs served and their versions (KIP-511's client name and version are
//! accepted and not needed).

use kafka_wire::messages::api_versions_response::ApiVersion;
use kafka_wire::messages::{ApiKey, ApiVersionsRequest, ApiVersionsResponse};

use super::SERVED;

/// Whether ApiVersions `version` can be read and answered.
pub(crate) fn supports(version: i16) -> bool {
    ApiKey::ApiVersions.supported_versions().is_some_and(|v| v.contains(version))
}

/// Every served API with the versions kafka-wire's messages know.
pub(crate) fn advertised() -> Vec<ApiVersion> {
    SERVED
        .iter()
        .filter_map(|api| {
            let versions = api.supported_versions()?;
            Some(ApiVersion {
                api_key: api.key(),
                min_version: versions.min,
                max_version: versions.max,
                ..Default::default()
            })
        })
        .collect()
}

pub(crate) fn handle(_request: &ApiVersionsRequest, _version: i16) -> ApiVersionsResponse {
    ApiVersionsResponse { api_keys: advertised(), ..Default::default() }
}
