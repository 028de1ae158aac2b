//! Fuzz-style properties: random and mutated bytes through every decoder never panic and never
//! make an allocation out of proportion to the input.
//!
//! The allocation bound is measured with the test-support crate's counting global allocator:
//! the largest single allocation made by the current thread.

use bytes::{Bytes, BytesMut};
use kwire07_protocol::message::{put_compressed_set, put_message_set};
use kwire07_protocol::{
    valid_bytes, validate_message_set, Codec, DecodeLimits, DeepIter, FetchRequest, FetchResponse, FrameDecoder, Magic,
    MultiFetchResponse, OffsetsRequest, OffsetsResponse, ProduceRequest, Request, ShallowIter,
};
use kwire_test_support::alloc::{largest_during, Counting};
use proptest::prelude::*;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns the largest single allocation it made on this thread.
fn peak_of(f: impl FnOnce()) -> usize {
    largest_during(f).1
}

const LIMITS: DecodeLimits = DecodeLimits { max_depth: 3, max_decompressed_bytes: 1 << 20 };

/// Valid frames and message sets to mutate: mutations reach much deeper than pure noise.
fn seeds() -> Vec<Vec<u8>> {
    let mut set = Vec::new();
    put_message_set(&mut set, Magic::V0, &[b"hello".as_ref(), b"world"]).unwrap();
    put_compressed_set(&mut set, Codec::Gzip, &[b"a".as_ref(), b"bb", b"ccc"]).unwrap();
    put_compressed_set(&mut set, Codec::Snappy, &[b"x".as_ref(); 20]).unwrap();
    let fetch = FetchRequest { topic: "topic".into(), partition: 1, offset: 99, max_size: 1000 };
    let produce = ProduceRequest { topic: "t".into(), partition: 0, messages: Bytes::from(set.clone()) };
    let reqs = [
        Request::Produce(produce.clone()),
        Request::Fetch(fetch.clone()),
        Request::MultiFetch(vec![fetch.clone(), fetch]),
        Request::MultiProduce(vec![produce.clone(), produce]),
        Request::Offsets(OffsetsRequest { topic: "o".into(), partition: 2, time: -1, max_offsets: 5 }),
    ];
    let mut out: Vec<Vec<u8>> = reqs.iter().map(|r| r.to_bytes().unwrap().to_vec()).collect();
    out.push(set);
    let mut resp = BytesMut::new();
    OffsetsResponse { error: kwire07_protocol::ErrorCode::NoError, offsets: vec![5, 4, 3] }.encode(&mut resp).unwrap();
    out.push(resp.to_vec());
    out
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    let mutated = (
        proptest::sample::select(seeds()),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(mut bytes, flips, cut, truncate)| {
            for (i, v) in flips {
                let n = bytes.len();
                bytes[i.index(n)] = v;
            }
            if truncate {
                let n = bytes.len();
                bytes.truncate(cut.index(n + 1));
            }
            bytes
        });
    prop_oneof![proptest::collection::vec(any::<u8>(), 0..600), mutated]
}

/// Allowed largest allocation for `n` input bytes when nothing is decompressed: a small
/// constant plus a multiple of the input (entry vectors are a few times their encoded size).
fn plain_bound(n: usize) -> usize {
    64 * 1024 + 16 * n
}

/// With decompression: at most twice the decompression budget on top.
fn inflating_bound(n: usize) -> usize {
    plain_bound(n) + 2 * LIMITS.max_decompressed_bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn request_decoding_is_total_and_bounded(bytes in input()) {
        let peak = peak_of(|| {
            let _ = Request::decode(Bytes::copy_from_slice(&bytes));
            if bytes.len() > 4 {
                let _ = Request::decode(Bytes::copy_from_slice(&bytes[4..]));
            }
            let mut buf = BytesMut::from(bytes.as_slice());
            let mut d = FrameDecoder::new(1 << 16);
            while let Ok(Some(_)) = d.decode_request(&mut buf) {}
        });
        prop_assert!(peak <= plain_bound(bytes.len()), "peak {} for {} bytes", peak, bytes.len());
    }

    #[test]
    fn response_decoding_is_total_and_bounded(bytes in input()) {
        let peak = peak_of(|| {
            let b = Bytes::copy_from_slice(&bytes);
            let _ = FetchResponse::decode(b.clone());
            let _ = MultiFetchResponse::decode(b.clone());
            let _ = OffsetsResponse::decode(b.clone());
            if b.len() > 4 {
                let _ = OffsetsResponse::decode(b.slice(4..));
                let _ = MultiFetchResponse::decode(b.slice(4..));
            }
        });
        prop_assert!(peak <= plain_bound(bytes.len()), "peak {} for {} bytes", peak, bytes.len());
    }

    #[test]
    fn message_set_iteration_is_total_and_bounded(bytes in input(), skip in 0usize..40) {
        // Also start at an arbitrary position, as a misaligned fetch offset would.
        let set = &bytes[skip.min(bytes.len())..];
        let peak = peak_of(|| {
            let _ = valid_bytes(set);
            for e in ShallowIter::new(set, u64::MAX - 10).flatten() {
                let _ = e.message.verify_crc(e.offset);
            }
            for m in DeepIter::with_limits(Bytes::copy_from_slice(set), 0, LIMITS) {
                let _ = m;
            }
            let _ = validate_message_set(set, 0, Some(1_000_000), &LIMITS);
        });
        prop_assert!(peak <= inflating_bound(set.len()), "peak {} for {} bytes", peak, set.len());
    }
}

/// The measurement itself works: a large allocation inside `peak_of` is seen.
#[test]
fn allocation_tracker_sees_allocations() {
    let peak = peak_of(|| {
        let v = std::hint::black_box(vec![1u8; 3 << 20]);
        drop(v);
    });
    assert!(peak >= 3 << 20, "peak {peak}");
}
