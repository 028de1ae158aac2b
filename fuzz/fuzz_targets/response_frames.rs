//! Whole response frames: the first four bytes choose the api key and version (responses do
//! not name their API), the rest is the frame after its size prefix. Decode never panics;
//! what decodes re-encodes to a frame that decodes and re-encodes to the same bytes.
#![no_main]

use bytes::{Bytes, BytesMut};
use kwire::messages::{ApiKey, ResponseFrame};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, body)) = data.split_first_chunk::<4>() else { return };
    let Some(api) = ApiKey::from_key(i16::from_be_bytes([head[0], head[1]])) else { return };
    let version = i16::from_be_bytes([head[2], head[3]]);
    let Ok((frame, _)) = ResponseFrame::decode_with_trailing(Bytes::copy_from_slice(body), api, version) else {
        return;
    };
    let mut first = BytesMut::new();
    frame.encode(&mut first, version).expect("a decoded frame encodes");
    let again =
        ResponseFrame::decode(first.clone().freeze().slice(4..), api, version).expect("an encoded frame decodes");
    let mut second = BytesMut::new();
    again.encode(&mut second, version).expect("a decoded frame encodes");
    assert_eq!(first, second);
});
