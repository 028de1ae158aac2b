//! Version negotiation: `VersionRange::intersect`, `ApiKey::negotiate` and
//! `NegotiatedVersions` over the `ApiVersionsResponse` of a real broker (tansu 0.6, through
//! `kwire-connection`), whose negotiated versions are then used for real requests.

use kwire::messages::{
    api_versions_response::ApiVersion, ApiKey, ApiVersionsRequest, ApiVersionsResponse, MetadataRequest,
    NegotiatedVersions,
};
use kwire_connection::{Client, ClientConfig};
use kwire_runtime::VersionRange;
use kwire_test_support::Tansu;

#[test]
fn ranges_intersect_where_they_overlap() {
    let ours = VersionRange::new(0, 12);
    assert_eq!(ours.intersect(&VersionRange::new(4, 17)), Some(VersionRange::new(4, 12)));
    assert_eq!(ours.intersect(&VersionRange::new(12, 12)), Some(VersionRange::new(12, 12)));
    assert_eq!(ours.intersect(&VersionRange::new(13, 20)), None);
    assert_eq!(VersionRange::new(3, i16::MAX).intersect(&ours), Some(VersionRange::new(3, 12)));
    assert_eq!(ours.highest_common(&VersionRange::new(0, 9)), Some(9));
    assert_eq!(ours.highest_common(&VersionRange::new(-5, -1)), None);
}

#[test]
fn negotiate_picks_the_highest_common_version() {
    let fetch = ApiKey::Fetch.supported_versions().unwrap();
    assert_eq!(ApiKey::Fetch.negotiate(VersionRange::new(0, 11)), Some(11));
    assert_eq!(ApiKey::Fetch.negotiate(VersionRange::new(0, i16::MAX)), Some(fetch.max));
    assert_eq!(ApiKey::Fetch.negotiate(VersionRange::new(fetch.max + 1, fetch.max + 5)), None);
    assert_eq!(ApiKey::Fetch.negotiate(VersionRange::new(fetch.min, fetch.min)), Some(fetch.min));
}

#[test]
fn an_unstable_latest_version_is_not_offered() {
    // Kafka 4.4.0's InitProducerId schema marks its latest version (6) unstable: offered up to
    // the one before.
    let valid = ApiKey::InitProducerId.valid_versions().unwrap();
    let offered = ApiKey::InitProducerId.supported_versions().unwrap();
    assert_eq!(offered, VersionRange::new(valid.min, valid.max - 1));
    assert_eq!(ApiKey::InitProducerId.negotiate(VersionRange::new(0, valid.max)), Some(valid.max - 1));
    // An API whose only version is unstable is not offered at all: ConsumerGroupDescribe in 3.7.
    use kwire_tests::corpus::release_3_7_2::ApiKey as ApiKey37;
    let describe = ApiKey37::ConsumerGroupDescribe.valid_versions().unwrap();
    assert_eq!(describe.min, describe.max, "ConsumerGroupDescribe has one (unstable) version in Kafka 3.7");
    assert_eq!(ApiKey37::ConsumerGroupDescribe.supported_versions(), None);
    // Stable APIs offer every valid version.
    assert_eq!(ApiKey::Metadata.supported_versions(), ApiKey::Metadata.valid_versions());
}

#[test]
fn the_helper_covers_a_whole_response() {
    let entry = |key: i16, min: i16, max: i16| ApiVersion {
        api_key: key,
        min_version: min,
        max_version: max,
        ..Default::default()
    };
    let response = ApiVersionsResponse {
        api_keys: vec![
            entry(3, 0, 9),    // Metadata: up to 9
            entry(1, 20, 30),  // Fetch: above ours, nothing in common
            entry(9999, 0, 3), // unknown to us: skipped
            entry(0, 3, 5),    // Produce
            entry(3, 0, 1),    // listed twice: the first entry counts
        ],
        ..Default::default()
    };
    let negotiated = NegotiatedVersions::from_response(&response);
    assert_eq!(negotiated.version(ApiKey::Metadata), Some(9));
    assert_eq!(negotiated.version(ApiKey::Produce), Some(5));
    assert_eq!(negotiated.version(ApiKey::Fetch), None);
    assert_eq!(negotiated.version(ApiKey::ApiVersions), None, "not listed");
    assert_eq!(negotiated.iter().collect::<Vec<_>>(), vec![(ApiKey::Produce, 5), (ApiKey::Metadata, 9)]);
}

#[tokio::test]
async fn negotiation_against_tansu() {
    let Some(tansu) = Tansu::start_or_skip() else { return };
    let config = ClientConfig { software_name: "kwire-tests".into(), ..ClientConfig::default() };
    let client = Client::connect(tansu.addr(), config).await.unwrap();
    let versions = client.api_versions().clone();
    assert_eq!(versions.error_code, 0, "{versions:?}");
    assert!(versions.api_keys.len() >= 10, "tansu lists its APIs: {versions:?}");

    let negotiated = NegotiatedVersions::from_response(&versions);
    assert_eq!(&negotiated, client.negotiated());
    // Every negotiated version is the top of the overlap of the broker's and our ranges,
    // worked out here from the raw response.
    for api in &versions.api_keys {
        let Some(key) = ApiKey::from_key(api.api_key) else { continue };
        let theirs = VersionRange::new(api.min_version, api.max_version);
        let expected = key.supported_versions().and_then(|ours| ours.intersect(&theirs)).map(|r| r.max);
        assert_eq!(negotiated.version(key), expected, "{key:?}: broker {theirs}, ours {:?}", key.supported_versions());
    }
    for key in [ApiKey::Produce, ApiKey::Fetch, ApiKey::Metadata, ApiKey::ApiVersions] {
        assert!(negotiated.version(key).is_some(), "{key:?} negotiated with tansu: {negotiated:?}");
    }

    // The negotiated versions work: a Metadata request at its version decodes.
    let body = client.send(MetadataRequest::default()).await.unwrap();
    assert!(!body.brokers.is_empty(), "tansu names itself: {body:?}");
    assert_eq!(body.brokers[0].port, i32::from(tansu.port()));
    let again = client.send(ApiVersionsRequest::default()).await.unwrap();
    assert_eq!(again.api_keys, versions.api_keys);
}
