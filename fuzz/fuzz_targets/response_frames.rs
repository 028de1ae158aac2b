//! Whole response frames: the first four bytes choose the api key and version (responses do
//! not name their API), the rest is the frame after its size prefix. Decode never panics;
//! what decodes re-encodes and decodes to the same value.
#![no_main]

use bytes::{Bytes, BytesMut};
use kafka_wire::messages::{ApiKey, ResponseFrame};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, body)) = data.split_first_chunk::<4>() else { return };
    let Some(api) = ApiKey::from_key(i16::from_be_bytes([head[0], head[1]])) else { return };
    let version = i16::from_be_bytes([head[2], head[3]]);
    let Ok((frame, _)) = ResponseFrame::decode_with_trailing(Bytes::copy_from_slice(body), api, version) else {
        return;
    };
    let mut out = BytesMut::new();
    frame.encode(&mut out, version).expect("a decoded frame encodes");
    let again = ResponseFrame::decode(out.freeze().slice(4..), api, version).expect("an encoded frame decodes");
    assert_eq!(again, frame);
});
