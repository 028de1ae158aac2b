//! Frames built from their body: the header's api key and version come from the body, and a
//! hand-built header that names another API is refused on encode.

use bytes::BytesMut;
use kwire::messages::{
    ApiKey, ApiVersionsRequest, FetchRequest, MetadataResponse, RequestFrame, RequestHeader, RequestKind, ResponseFrame,
};
use kwire_runtime::EncodeErrorKind;

#[test]
fn new_takes_the_api_key_from_the_body() {
    let frame = RequestFrame::new(ApiVersionsRequest::default(), 3, 7, Some("demo"));
    assert_eq!(frame.header.request_api_key, ApiKey::ApiVersions.key());
    assert_eq!(frame.header.request_api_version, 3);
    assert_eq!(frame.header.correlation_id, 7);
    assert_eq!(frame.header.client_id.as_deref(), Some("demo"));
    assert_eq!((frame.api_key(), frame.version()), (ApiKey::ApiVersions, 3));
    let mut buf = BytesMut::new();
    frame.encode(&mut buf).unwrap();
    // size, api key 18, version 3, correlation 7, client id "demo", then the flexible
    // header's empty tag section (request header v2).
    assert_eq!(&buf[4..14], &[0, 18, 0, 3, 0, 0, 0, 7, 0, 4]);
    assert_eq!(&buf[14..19], b"demo\0");
    assert_eq!(RequestFrame::decode(buf.freeze().slice(4..)).unwrap(), frame);
}

#[test]
fn a_header_naming_another_api_is_refused() {
    let frame = RequestFrame {
        header: RequestHeader { request_api_key: ApiKey::Fetch.key(), request_api_version: 3, ..Default::default() },
        body: RequestKind::ApiVersions(ApiVersionsRequest::default()),
    };
    let err = frame.encode(&mut BytesMut::new()).unwrap_err();
    assert_eq!(err.kind(), &EncodeErrorKind::ApiKeyMismatch { header: 1, body: 18 }, "{err}");
    assert!(err.to_string().contains("api key 1"), "{err}");
    // The vectored path refuses it too.
    let err = frame.encode_vectored(&mut BytesMut::new(), &mut Vec::new()).unwrap_err();
    assert_eq!(err.kind(), &EncodeErrorKind::ApiKeyMismatch { header: 1, body: 18 });
}

#[test]
fn the_header_version_follows_from_api_and_version() {
    // Fetch v11 is not flexible (header v1, no tag section); v12 is (header v2).
    let mut classic = BytesMut::new();
    RequestFrame::new(FetchRequest::default(), 11, 1, None).encode(&mut classic).unwrap();
    let mut flexible = BytesMut::new();
    RequestFrame::new(FetchRequest::default(), 12, 1, None).encode(&mut flexible).unwrap();
    // api key, version, correlation id, null client id (-1) ...
    assert_eq!(&classic[4..14], &[0, 1, 0, 11, 0, 0, 0, 1, 0xff, 0xff]);
    assert_eq!(&flexible[4..15], &[0, 1, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0]);
    for (buf, version) in [(classic, 11), (flexible, 12)] {
        let back = RequestFrame::decode(buf.freeze().slice(4..)).unwrap();
        assert_eq!((back.api_key(), back.version()), (ApiKey::Fetch, version));
    }
}

#[test]
fn response_frames_are_built_from_the_body_too() {
    let frame = ResponseFrame::new(MetadataResponse::default(), 9);
    assert_eq!(frame.api_key(), ApiKey::Metadata);
    assert_eq!(frame.header.correlation_id, 9);
    let mut buf = BytesMut::new();
    frame.encode(&mut buf, 12).unwrap();
    assert_eq!(ResponseFrame::decode(buf.freeze().slice(4..), ApiKey::Metadata, 12).unwrap(), frame);
}
