//! Whole request frames (the bytes after the size prefix) of every api key and version: decode
//! never panics, and whatever decodes re-encodes to a frame that decodes to the same value.
#![no_main]

use bytes::{Bytes, BytesMut};
use kafka_wire::messages::RequestFrame;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok((frame, _trailing)) = RequestFrame::decode_with_trailing(Bytes::copy_from_slice(data)) else { return };
    let mut out = BytesMut::new();
    frame.encode(&mut out).expect("a decoded frame encodes");
    let again = RequestFrame::decode(out.freeze().slice(4..)).expect("an encoded frame decodes");
    assert_eq!(again, frame);
});
