//! Kafka 0.7 request frames and message sets: decoding never panics, a decoded request
//! re-encodes to a frame that decodes the same, and every PRODUCE set is validated and deeply
//! iterated within small decompression limits.
#![no_main]

use bytes::Bytes;
use kwire07_protocol::{validate_message_set, DecodeLimits, DeepIter, Request};
use libfuzzer_sys::fuzz_target;

const LIMITS: DecodeLimits = DecodeLimits { max_depth: 4, max_decompressed_bytes: 4 << 20 };

fuzz_target!(|data: &[u8]| {
    // The bytes as a message set on their own.
    check_set(data);
    let Ok(request) = Request::decode(Bytes::copy_from_slice(data)) else { return };
    if let Ok(frame) = request.to_bytes() {
        let again = Request::decode(frame.slice(4..)).expect("an encoded request decodes");
        assert_eq!(again, request);
    }
    match &request {
        Request::Produce(p) => check_set(&p.messages),
        Request::MultiProduce(entries) => entries.iter().for_each(|p| check_set(&p.messages)),
        _ => {}
    }
});

fn check_set(set: &[u8]) {
    let _ = validate_message_set(set, 0, Some(1 << 20), &LIMITS);
    for message in DeepIter::with_limits(Bytes::copy_from_slice(set), 0, LIMITS) {
        if message.is_err() {
            break;
        }
    }
}
