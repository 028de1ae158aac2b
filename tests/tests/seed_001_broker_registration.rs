//! Seed 001: the smallest legal BrokerRegistrationRequest v4 (header v2) is exactly 79 bytes
//! and the response v4 (header v1) exactly 24, byte for byte as the seed lays them out.

use bytes::{Bytes, BytesMut};
use kwire::messages::{ApiKey, RequestFrame, RequestHeader, RequestKind, ResponseFrame, ResponseHeader, ResponseKind};
use kwire07_admin_messages::broker_registration_request::{Feature, Listener};
use kwire07_admin_messages::{BrokerRegistrationRequest, BrokerRegistrationResponse};
use kwire_runtime::{Decode, Encode, StrBytes, Uuid};

const REQUEST_HEX: &str = concat!(
    "0000004b003e00040000000000000000",
    "00000001000000000000000000000000",
    "00000000020101000000000002010000",
    "00000001000200000000000000000000",
    "0000000000000000000000000000",
    "00",
);
const RESPONSE_HEX: &str = concat!(
    "00000014", // size 20
    "00000000",
    "00", // header v1: correlation id, no tags
    "00000000",
    "0000",             // throttle time, error code
    "0000000000000000", // broker epoch
    "00",               // no tags
);

fn request_body() -> BrokerRegistrationRequest {
    BrokerRegistrationRequest {
        broker_id: kwire::BrokerId(0),
        cluster_id: StrBytes::from_static_str(""),
        incarnation_id: Uuid::nil(),
        listeners: vec![Listener::default()],
        features: vec![Feature::default()],
        rack: Some(StrBytes::from_static_str("")),
        is_migrating_zk_broker: false,
        log_dirs: vec![Uuid::nil()].into(),
        previous_broker_epoch: 0,
        ..Default::default()
    }
}

fn header() -> RequestHeader {
    RequestHeader {
        request_api_key: 62,
        request_api_version: 4,
        correlation_id: 0,
        client_id: Some(StrBytes::from_static_str("")),
        ..Default::default()
    }
}

#[test]
fn request_is_the_seeds_79_bytes() {
    let expected = hex::decode(REQUEST_HEX).unwrap();
    assert_eq!(expected.len(), 79);
    assert_eq!(ApiKey::BrokerRegistration.request_header_version(4), 2);

    let body = request_body();
    let header = header();
    let mut frame = BytesMut::new();
    frame.extend_from_slice(&75i32.to_be_bytes());
    header.encode(&mut frame, 2).unwrap();
    body.encode(&mut frame, 4).unwrap();
    assert_eq!(hex::encode(&frame), REQUEST_HEX);
    assert_eq!(header.encoded_size(2).unwrap(), 11);
    assert_eq!(body.encoded_size(4).unwrap(), 64);

    // Decoding gives back equal values.
    let mut rest = Bytes::from(expected.clone()).slice(4..);
    assert_eq!(RequestHeader::decode(&mut rest, 2).unwrap(), header);
    assert_eq!(BrokerRegistrationRequest::decode(&mut rest, 4).unwrap(), body);
    assert!(rest.is_empty());
}

#[test]
fn request_frame_from_kafkas_own_schema_matches_the_project_schema() {
    // The same message generated from Kafka's corpus (root package) frames to the same bytes.
    let body = kwire::messages::BrokerRegistrationRequest {
        listeners: vec![Default::default()],
        features: vec![Default::default()],
        log_dirs: vec![Uuid::nil()].into(),
        previous_broker_epoch: 0,
        ..Default::default()
    };
    let frame = RequestFrame { header: header(), body: RequestKind::BrokerRegistration(body) };
    let mut buf = BytesMut::new();
    frame.encode(&mut buf).unwrap();
    assert_eq!(hex::encode(&buf), REQUEST_HEX);
    let decoded = RequestFrame::decode(buf.freeze().slice(4..)).unwrap();
    assert_eq!(decoded, frame);
}

#[test]
fn response_is_the_seeds_24_bytes() {
    assert_eq!(ApiKey::BrokerRegistration.response_header_version(4), 1);
    let body = BrokerRegistrationResponse {
        throttle_time_ms: 0,
        error_code: kwire::ErrorCode::NONE,
        broker_epoch: 0,
        ..Default::default()
    };
    let header = ResponseHeader { correlation_id: 0, ..Default::default() };
    let mut frame = BytesMut::new();
    frame.extend_from_slice(&20i32.to_be_bytes());
    header.encode(&mut frame, 1).unwrap();
    body.encode(&mut frame, 4).unwrap();
    assert_eq!(frame.len(), 24);
    assert_eq!(hex::encode(&frame), RESPONSE_HEX);

    let decoded = ResponseFrame::decode(frame.freeze().slice(4..), ApiKey::BrokerRegistration, 4).unwrap();
    assert_eq!(decoded.header, header);
    let ResponseKind::BrokerRegistration(root_body) = decoded.body else { panic!("wrong api") };
    assert_eq!(root_body.broker_epoch, 0);
    let mut raw = Bytes::from(hex::decode(RESPONSE_HEX).unwrap()).slice(9..);
    assert_eq!(BrokerRegistrationResponse::decode(&mut raw, 4).unwrap(), body);
}

#[test]
fn the_ir_driven_sample_encoder_agrees_with_the_seed() {
    // The independent, IR-driven encoder writes the same 64-byte body for the minimal instance.
    let text =
        std::fs::read_to_string(kwire_tests::workspace_root().join("schemas/BrokerRegistrationRequest.json")).unwrap();
    let msg = kwire_codegen::load_str("BrokerRegistrationRequest.json", &text).unwrap();
    let body = kwire_tests::sample::encode(&msg, 4, kwire_tests::sample::Mode::Minimal);
    assert_eq!(hex::encode(body), &REQUEST_HEX[30..]);
}
