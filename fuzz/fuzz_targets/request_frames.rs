//! Whole request frames (the bytes after the size prefix) of every api key and version: decode
//! never panics, and whatever decodes re-encodes to a frame that decodes and re-encodes to the
//! same bytes (bytes, not values: a float64 field may hold NaN, which equals nothing). The
//! body's Kafka-style JSON reads back to a body with the same JSON (compared as JSON: a NaN's
//! payload bits do not survive JSON), which encodes.
#![no_main]

use bytes::{Bytes, BytesMut};
use kwire::messages::{RequestFrame, RequestKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok((frame, _trailing)) = RequestFrame::decode_with_trailing(Bytes::copy_from_slice(data)) else { return };
    let mut first = BytesMut::new();
    frame.encode(&mut first).expect("a decoded frame encodes");
    let again = RequestFrame::decode(first.clone().freeze().slice(4..)).expect("an encoded frame decodes");
    let mut second = BytesMut::new();
    again.encode(&mut second).expect("a decoded frame encodes");
    assert_eq!(first, second);
    let (api, version) = (frame.api_key(), frame.version());
    let json = frame.body.to_json(version).expect("a decoded body has JSON");
    let back = RequestKind::from_json(api, &json, version).expect("its JSON reads back");
    assert_eq!(back.to_json(version).expect("a body read from JSON has JSON"), json);
    back.encode(&mut BytesMut::new(), version).expect("a body read from JSON encodes");
});
