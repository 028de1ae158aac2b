//! ApiVersions: the APIs served and their versions (KIP-511's client name and version are
//! accepted and not needed), and the features clients decide by, as a Kafka 4.x cluster
//! finalizes them: `transaction.version` 2 (KIP-890's transactions v2) when EndTxn v5 is
//! served, `group.version` 1 (KIP-848's consumer groups) when ConsumerGroupHeartbeat is,
//! `share.version` 2 (KIP-932's share groups, Kafka 4.4's latest production level) when
//! ShareGroupHeartbeat is.

use kwire::messages::api_versions_response::{FinalizedFeatureKey, SupportedFeatureKey};
use kwire::messages::{ApiKey, ApiVersionsRequest, ApiVersionsResponse};
use kwire::StrBytes;

use super::{advertised, served_versions, Ctx};

/// EndTxn v5 ends a transaction of transactions v2.
const TXN_V2_END_TXN: i16 = 5;

pub(super) async fn handle(ctx: &Ctx<'_>, _request: ApiVersionsRequest) -> ApiVersionsResponse {
    let shared = ctx.shared;
    let mut response = ApiVersionsResponse { api_keys: advertised(shared), ..Default::default() };
    let mut feature = |name: &'static str, max: i16| {
        let name = StrBytes::from_static_str(name);
        response.supported_features.push(SupportedFeatureKey {
            name: name.clone(),
            min_version: 0,
            max_version: max,
            ..Default::default()
        });
        response.finalized_features.push(FinalizedFeatureKey {
            name,
            min_version_level: max,
            max_version_level: max,
            ..Default::default()
        });
    };
    if served_versions(shared, ApiKey::EndTxn).is_some_and(|v| v.contains(TXN_V2_END_TXN)) {
        feature("transaction.version", 2);
    }
    if served_versions(shared, ApiKey::ConsumerGroupHeartbeat).is_some() {
        // KIP-848's consumer groups.
        feature("group.version", 1);
    }
    if served_versions(shared, ApiKey::ShareGroupHeartbeat).is_some() {
        // KIP-932's share groups, at the level a fresh Kafka 4.4 cluster finalizes.
        feature("share.version", 2);
    }
    if !response.finalized_features.is_empty() {
        response.finalized_features_epoch = 1;
    }
    response
}
