//! Whole frames with bytes after the body, as real clients send them: strict decoding refuses
//! them, `decode_with_trailing` accepts them as Kafka's broker does and says how many there were.

use bytes::{Bytes, BytesMut};
use kwire::messages::{ApiKey, MetadataRequest, RequestFrame, RequestKind, ResponseFrame};
use kwire_runtime::DecodeErrorKind;

/// librdkafka 2.16's (confluent-kafka's) Metadata v12 request for all topics: 3 bytes follow
/// the body (a known librdkafka bug).
const LIBRDKAFKA_METADATA_V12: &str = "000000210003000c00000005000f636f6e666c75656e742d6b61666b610000000000010000";

fn frame_body(hex_frame: &str) -> Bytes {
    let bytes = hex::decode(hex_frame).unwrap();
    let size = i32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
    assert_eq!(size, bytes.len() - 4);
    Bytes::from(bytes).slice(4..)
}

#[test]
fn strict_decoding_refuses_trailing_bytes() {
    let err = RequestFrame::decode(frame_body(LIBRDKAFKA_METADATA_V12)).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::TrailingBytes(3), "{err}");
}

#[test]
fn lenient_decoding_accepts_and_reports_them() {
    let (frame, trailing) = RequestFrame::decode_with_trailing(frame_body(LIBRDKAFKA_METADATA_V12)).unwrap();
    assert_eq!(trailing.len(), 3);
    assert_eq!(frame.header.request_api_key, ApiKey::Metadata.key());
    assert_eq!(frame.header.request_api_version, 12);
    assert_eq!(frame.header.correlation_id, 5);
    assert_eq!(frame.header.client_id.as_deref(), Some("confluent-kafka"));
    let RequestKind::Metadata(body) = &frame.body else { panic!("not a Metadata body: {frame:?}") };
    assert_eq!(body.topics, None, "all topics");
    // Re-encoded, the frame is the client's bytes without the three extra ones.
    let mut out = BytesMut::new();
    frame.encode(&mut out).unwrap();
    let original = hex::decode(LIBRDKAFKA_METADATA_V12).unwrap();
    assert_eq!(&out[4..], &original[4..original.len() - 3]);
}

#[test]
fn a_well_formed_frame_has_no_trailing_bytes() {
    let frame = RequestFrame {
        header: kwire::messages::RequestHeader {
            request_api_key: ApiKey::Metadata.key(),
            request_api_version: 12,
            ..Default::default()
        },
        body: RequestKind::Metadata(MetadataRequest::default()),
    };
    let mut buf = BytesMut::new();
    frame.encode(&mut buf).unwrap();
    let (back, trailing) = RequestFrame::decode_with_trailing(buf.freeze().slice(4..)).unwrap();
    assert!(trailing.is_empty());
    assert_eq!(back, frame);
}

#[test]
fn responses_have_the_same_two_modes() {
    let response =
        ResponseFrame { header: Default::default(), body: kwire::messages::ResponseKind::Metadata(Default::default()) };
    let mut buf = BytesMut::new();
    response.encode(&mut buf, 12).unwrap();
    buf.extend_from_slice(&[0, 0]);
    let body = buf.freeze().slice(4..);
    let err = ResponseFrame::decode(body.clone(), ApiKey::Metadata, 12).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::TrailingBytes(2));
    let (back, trailing) = ResponseFrame::decode_with_trailing(body, ApiKey::Metadata, 12).unwrap();
    assert_eq!((back, trailing.len()), (response, 2));
}
