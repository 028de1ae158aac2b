//! The sans-io core on two inputs a review found mishandled: an ApiVersions answer that fails
//! at the version asked for is read at version 0 only when it says UNSUPPORTED_VERSION (the
//! old code took any body that happened to decode at version 0), and a Produce forwarded with
//! `send_encoded` and `acks = 0` expects no response (the old code waited for one, and the next
//! response's correlation id was out of step).

use kwire::messages::api_versions_response::ApiVersion;
use kwire::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse, ProduceRequest, ResponseFrame,
};
use kwire::{Bytes, BytesMut, Encode, ErrorCode};
use kwire_connection::{Connection, Error};

fn response_bytes(body: impl Into<kwire::messages::ResponseKind>, correlation_id: i32, version: i16) -> Vec<u8> {
    let mut out = BytesMut::new();
    ResponseFrame::new(body, correlation_id).encode(&mut out, version).unwrap();
    out.to_vec()
}

fn api_versions(code: ErrorCode) -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: code,
        api_keys: vec![ApiVersion { api_key: 18, min_version: 0, max_version: 2, ..Default::default() }],
        ..Default::default()
    }
}

#[test]
fn api_versions_falls_back_to_version_0_only_on_unsupported_version() {
    // A version 0 body says NONE: not what KIP-511's fallback answers, so it is the v3
    // response that failed to decode.
    let wire = response_bytes(api_versions(ErrorCode::NONE), 0, 0);
    assert!(ResponseFrame::decode(Bytes::from(wire[4..].to_vec()), ApiKey::ApiVersions, 3).is_err());
    let mut conn = Connection::new(None, 1 << 20);
    conn.send(ApiVersionsRequest::default(), 3).unwrap();
    conn.receive(&wire);
    match conn.next_response() {
        Err(Error::Decode { api: ApiKey::ApiVersions, version: 3, correlation_id: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
    // With UNSUPPORTED_VERSION, it is read at version 0.
    let mut conn = Connection::new(None, 1 << 20);
    conn.send(ApiVersionsRequest::default(), 3).unwrap();
    conn.receive(&response_bytes(api_versions(ErrorCode::UNSUPPORTED_VERSION), 0, 0));
    let received = conn.next_response().unwrap().unwrap();
    assert_eq!(received.version, 0);
    assert_eq!(received.into_typed::<ApiVersionsRequest>().unwrap(), api_versions(ErrorCode::UNSUPPORTED_VERSION));
}

/// At versions with `acks` first (2), after a nullable string (3..8) and after a compact
/// one (9+), with and without a transactional id: acks = 0 expects no response, acks = 1 one.
#[test]
fn send_encoded_knows_a_produce_with_acks_0_gets_no_response() {
    for version in [2, 3, 8, 9, 11, 13] {
        for transactional_id in [None, Some("txn-1")] {
            if version < 3 && transactional_id.is_some() {
                continue;
            }
            for acks in [0, 1] {
                let produce = ProduceRequest {
                    acks,
                    timeout_ms: 1000,
                    transactional_id: transactional_id.map(Into::into),
                    ..Default::default()
                };
                // Kafka 4.x's schemas start Produce at v3; v2, which older clients still send
                // through a proxy, is written by hand: acks, timeout_ms, no topics.
                let body = if version < 3 {
                    let mut v2 = acks.to_be_bytes().to_vec();
                    v2.extend_from_slice(&1000i32.to_be_bytes());
                    v2.extend_from_slice(&0i32.to_be_bytes());
                    Bytes::from(v2)
                } else {
                    produce.encode_to_bytes(version).unwrap()
                };
                let mut conn = Connection::new(None, 1 << 20);
                let sent = conn.send_encoded(ApiKey::Produce, version, &body, version).unwrap();
                let what = format!("v{version} acks={acks} transactional_id={transactional_id:?}");
                assert_eq!(sent.expects_response, acks != 0, "{what}");
                assert_eq!(conn.in_flight(), usize::from(acks != 0), "{what}");
                // The next request's response still finds it.
                let next = conn.send(MetadataRequest::default(), 12).unwrap();
                assert_eq!(next.correlation_id, sent.correlation_id + 1);
                conn.receive(&response_bytes(MetadataResponse::default(), next.correlation_id, 12));
                let received = conn.next_response().unwrap().unwrap();
                assert_eq!(received.correlation_id, next.correlation_id, "{what}");
            }
        }
    }
}

#[test]
fn send_encoded_refuses_a_produce_too_short_to_hold_acks() {
    let mut conn = Connection::new(None, 1 << 20);
    for (version, body) in [(2, &[0u8][..]), (3, &[0, 5, b'a'][..]), (9, &[0x80][..]), (9, &[][..])] {
        let error = conn.send_encoded(ApiKey::Produce, version, body, version).unwrap_err();
        assert!(matches!(error, Error::Protocol(_)), "v{version} {body:?}: {error}");
    }
    assert!(conn.outgoing().is_empty());
    assert_eq!(conn.in_flight(), 0);
}
