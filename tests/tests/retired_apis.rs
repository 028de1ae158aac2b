//! A schema set shaped like Kafka 4.x's, whose retired APIs keep their schema files as stubs
//! with `validVersions: "none"` (built by tests/build.rs): the keys stay known and reserved,
//! nothing decodes as them.

use bytes::{BufMut, Bytes, BytesMut};
use kwire_runtime::DecodeErrorKind;
use kwire_tests::corpus::retired_4x::{ApiKey, RequestFrame, RequestKind, ResponseKind};

#[test]
fn retired_keys_are_known_and_have_no_versions() {
    for (key, name) in [(4, "LeaderAndIsr"), (5, "StopReplica"), (6, "UpdateMetadata"), (7, "ControlledShutdown")] {
        let api = ApiKey::from_key(key).unwrap_or_else(|| panic!("key {key} unknown"));
        assert_eq!(api.name(), name);
        assert!(api.is_retired());
        assert_eq!(api.valid_versions(), None);
        assert_eq!(api.flexible_versions(), None);
        assert!(ApiKey::ALL.contains(&api));
    }
    assert!(!ApiKey::ApiVersions.is_retired());
    assert_eq!(ApiKey::ApiVersions.valid_versions().map(|v| v.min), Some(0));
    let keys: Vec<i16> = ApiKey::ALL.iter().map(|k| k.key()).collect();
    assert_eq!(keys, [4, 5, 6, 7, 18], "ALL is in key order");
}

#[test]
fn decoding_a_retired_api_is_a_clear_error() {
    // A LeaderAndIsr v0 request frame body: api key 4, version 0, correlation id, client id.
    let mut frame = BytesMut::new();
    frame.put_i16(4);
    frame.put_i16(0);
    frame.put_i32(9);
    frame.put_i16(-1);
    let err = RequestFrame::decode(frame.freeze()).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::RetiredApi(4));
    assert!(err.to_string().contains("retired"), "{err}");
    let err = RequestKind::decode(ApiKey::StopReplica, &mut Bytes::new(), 0).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::RetiredApi(5));
    let err = ResponseKind::decode(ApiKey::ControlledShutdown, &mut Bytes::new(), 3).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::RetiredApi(7));
}
