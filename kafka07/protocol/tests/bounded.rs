//! Whatever a 0.7 frame or message set claims, decoding it allocates a small multiple of its
//! bytes (of the decompressed bytes, for compressed wrappers). Each case builds the worst input
//! the checks accept (the largest count, then the cheapest bytes) and measures the peak live
//! allocation with the counting allocator.

use bytes::Bytes;
use kwire07_protocol::compression::compress;
use kwire07_protocol::message::put_message;
use kwire07_protocol::{validate_message_set, Codec, DecodeLimits, DeepIter, Magic, ProtocolError, Request};
use kwire_test_support::alloc::{peak_during, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The bound every case must meet: four times the input plus 64 KiB.
fn bound(input: usize) -> usize {
    4 * input + (64 << 10)
}

/// A MULTIFETCH (type 2) or MULTIPRODUCE (type 3) frame body claiming `count` entries, then
/// `entry_bytes` bytes of 0xff: every entry's topic length reads -1, refused at the first.
fn multi_request(kind: i16, count: i16, entry_bytes: usize) -> Vec<u8> {
    let mut frame = Vec::with_capacity(4 + entry_bytes);
    frame.extend(kind.to_be_bytes());
    frame.extend(count.to_be_bytes());
    frame.resize(4 + entry_bytes, 0xff);
    frame
}

/// The largest count each multi request accepts, over the fewest bytes that allow it.
#[test]
fn multi_request_counts_reserve_little() {
    // The smallest entries: PRODUCE topic length, partition, set size (10 bytes); FETCH adds
    // the offset and max size to the topic and partition (18 bytes).
    for (kind, name, min_entry) in [(3i16, "multiproduce", 10usize), (2, "multifetch", 18)] {
        let count = i16::MAX;
        let frame = Bytes::from(multi_request(kind, count, count as usize * min_entry));
        let size = frame.len();
        let (result, peak) = peak_during(|| Request::decode(frame.clone()).map(|_| ()));
        println!("{name} count {count} over {size} bytes: peak {peak} bytes");
        assert!(
            matches!(result, Err(ProtocolError::NegativeLength { what: "topic length", offset: 8, value: -1 })),
            "{result:?}"
        );
        assert!(peak <= bound(size), "{name}: peak {peak} for {size} bytes");
    }
}

/// One entry more than the bytes could hold is refused from the count, naming it.
#[test]
fn multi_request_count_beyond_the_bytes_is_refused() {
    for (kind, what, min_entry) in [(3i16, "multiproduce count", 10usize), (2, "multifetch count", 18)] {
        let frame = Bytes::from(multi_request(kind, 100, 99 * min_entry + min_entry - 1));
        assert_eq!(
            Request::decode(frame),
            Err(ProtocolError::CountTooLarge { what, offset: 6, value: 100, max: 99 }),
            "{what}"
        );
    }
}

/// The smallest valid 0.7 message: length 5, magic 0, the CRC-32 of an empty payload (0).
const MIN_MESSAGE: [u8; 9] = [0, 0, 0, 5, 0, 0, 0, 0, 0];

/// A gzip wrapper holding `n` empty messages: a few KiB that decompress to 9 bytes a message.
fn wrapper_of_empty_messages(n: usize) -> Vec<u8> {
    let inner = MIN_MESSAGE.repeat(n);
    let mut set = Vec::new();
    put_message(&mut set, Magic::V1, Codec::Gzip, &compress(Codec::Gzip, &inner)).unwrap();
    set
}

/// Deep iteration over a wrapper of the smallest messages: memory is the decompressed set,
/// not a per-message copy of its fields (which is seven times larger).
#[test]
fn deep_iteration_holds_the_decompressed_set_only() {
    let n = (4 << 20) / MIN_MESSAGE.len();
    let decompressed = n * MIN_MESSAGE.len();
    let set = Bytes::from(wrapper_of_empty_messages(n));
    let limits = DecodeLimits { max_depth: 4, max_decompressed_bytes: 4 << 20 };
    let (read, peak) = peak_during(|| {
        let mut iter = DeepIter::with_limits(set.clone(), 0, limits);
        let first = iter.next().map(|m| m.map(|m| m.next_offset));
        (first, iter.count() + 1)
    });
    println!("{n} messages in a {}-byte gzip wrapper ({decompressed} decompressed): peak {peak} bytes", set.len());
    assert_eq!(read, (Some(Ok(0)), n));
    assert!(peak <= bound(decompressed), "peak {peak} for {decompressed} decompressed bytes");
}

/// Validation walks the same wrapper counting, holding nothing per message.
#[test]
fn validation_holds_the_decompressed_set_only() {
    let n = (4 << 20) / MIN_MESSAGE.len();
    let decompressed = n * MIN_MESSAGE.len();
    let set = wrapper_of_empty_messages(n);
    let limits = DecodeLimits { max_depth: 4, max_decompressed_bytes: 4 << 20 };
    let (summary, peak) = peak_during(|| validate_message_set(&set, 0, None, &limits));
    println!("validating {n} wrapped messages: peak {peak} bytes");
    assert_eq!(summary.map(|s| s.deep_count), Ok(n as u64));
    assert!(peak <= bound(decompressed), "peak {peak}");
}

/// The last message of a wrapper points past the wrapper; the others at its start (spec §2.5),
/// also when the wrapper nests another.
#[test]
fn deep_iteration_keeps_next_offsets_across_nesting() {
    let mut inner = Vec::new();
    put_message(&mut inner, Magic::V0, Codec::None, b"a").unwrap();
    let mut nested = Vec::new();
    put_message(&mut nested, Magic::V0, Codec::None, b"b").unwrap();
    put_message(&mut nested, Magic::V0, Codec::None, b"c").unwrap();
    put_message(&mut inner, Magic::V1, Codec::Snappy, &compress(Codec::Snappy, &nested)).unwrap();
    let mut empty = Vec::new();
    put_message(&mut empty, Magic::V1, Codec::Gzip, &compress(Codec::Gzip, b"")).unwrap();
    inner.extend_from_slice(&empty);
    let mut set = Vec::new();
    put_message(&mut set, Magic::V1, Codec::Gzip, &compress(Codec::Gzip, &inner)).unwrap();
    put_message(&mut set, Magic::V0, Codec::None, b"d").unwrap();
    let wrapper_end = (set.len() - 10) as u64;
    let read: Vec<(u64, Vec<u8>)> = DeepIter::new(Bytes::from(set.clone()), 100)
        .map(|m| m.map(|m| (m.next_offset, m.payload.to_vec())))
        .collect::<Result<_, _>>()
        .unwrap();
    let end = 100 + set.len() as u64;
    assert_eq!(
        read,
        [(100, b"a".to_vec()), (100, b"b".to_vec()), (100 + wrapper_end, b"c".to_vec()), (end, b"d".to_vec())]
    );
}

/// A corrupt message inside a wrapper is reported before any of the wrapper's messages.
#[test]
fn a_bad_wrapper_yields_none_of_its_messages() {
    let mut inner = Vec::new();
    put_message(&mut inner, Magic::V0, Codec::None, b"good").unwrap();
    put_message(&mut inner, Magic::V0, Codec::None, b"bad").unwrap();
    let last = inner.len() - 1;
    inner[last] ^= 1;
    let mut set = Vec::new();
    put_message(&mut set, Magic::V1, Codec::Gzip, &compress(Codec::Gzip, &inner)).unwrap();
    let mut iter = DeepIter::new(Bytes::from(set), 0);
    assert!(matches!(iter.next(), Some(Err(ProtocolError::CrcMismatch { offset: 0, .. }))));
    assert!(iter.next().is_none());
}
