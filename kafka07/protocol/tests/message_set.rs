//! Message-set iteration: shallow and deep, 0.7's next-offset rules, cut-off final messages,
//! nesting limits, bounded decompression and produce-side validation.

use bytes::Bytes;
use kwire07_protocol::compression::compress;
use kwire07_protocol::message::{put_compressed_set, put_message, put_message_set};
use kwire07_protocol::{
    valid_bytes, validate_message_set, Codec, DecodeLimits, DeepIter, Magic, ProtocolError, SetSummary, ShallowIter,
};
use proptest::prelude::*;

fn v0_set(payloads: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    put_message_set(&mut out, Magic::V0, payloads).unwrap();
    out
}

fn wrapper(codec: Codec, payloads: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    put_compressed_set(&mut out, codec, payloads).unwrap();
    out
}

/// A wrapper around an arbitrary inner set (lets tests build nesting, which the API won't write).
fn wrap_raw(codec: Codec, inner_set: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_message(&mut out, Magic::V1, codec, &compress(codec, inner_set)).unwrap();
    out
}

fn deep(set: &[u8], base: u64) -> Result<Vec<(u64, Vec<u8>)>, ProtocolError> {
    DeepIter::new(Bytes::copy_from_slice(set), base).map(|r| r.map(|m| (m.next_offset, m.payload.to_vec()))).collect()
}

#[test]
fn mixed_set_offsets_follow_spec_2_5() {
    let a = v0_set(&[b"a"]); // 10 bytes
    let w = wrapper(Codec::Gzip, &[b"b", b"c", b"d"]);
    let e = v0_set(&[b"e"]);
    let set = [a.clone(), w.clone(), e.clone()].concat();
    let base = 5000u64;
    let ws = base + a.len() as u64;
    let we = ws + w.len() as u64;
    assert_eq!(
        deep(&set, base).unwrap(),
        vec![
            (ws, b"a".to_vec()),
            (ws, b"b".to_vec()),
            (ws, b"c".to_vec()),
            (we, b"d".to_vec()),
            (we + e.len() as u64, b"e".to_vec()),
        ]
    );
    let shallow: Vec<_> = ShallowIter::new(&set, base).map(|e| e.unwrap().next_offset).collect();
    assert_eq!(shallow, vec![ws, we, we + e.len() as u64]);
}

#[test]
fn empty_wrapper_is_skipped() {
    let empty = wrap_raw(Codec::Snappy, b"");
    let set = [empty.clone(), v0_set(&[b"x"])].concat();
    assert_eq!(deep(&set, 0).unwrap(), vec![(set.len() as u64, b"x".to_vec())]);
    let summary = validate_message_set(&set, 0, None, &DecodeLimits::default()).unwrap();
    assert_eq!(summary, SetSummary { valid_bytes: set.len(), shallow_count: 2, deep_count: 1 });
}

#[test]
fn cut_off_last_message_is_dropped_quietly() {
    let full = v0_set(&[b"one", b"two", b"three"]);
    let first_len = 4 + 5 + 3;
    for cut in 0..full.len() {
        let part = &full[..cut];
        let result = valid_bytes(part);
        if cut == 0 || cut < 4 {
            // Fewer than 4 bytes: nothing, no error.
            assert_eq!(result, Ok(0), "cut {cut}");
        } else if cut < first_len {
            assert_eq!(
                result,
                Err(ProtocolError::MessageLargerThanFetchSize { offset: 0, needed: first_len, available: cut }),
                "cut {cut}"
            );
            let err = deep(part, 0).unwrap_err();
            assert!(err.to_string().contains("larger than the fetch size"), "{err}");
        } else {
            let complete = ShallowIter::new(part, 0).count();
            let expect = [0, 12, 24, 39][complete];
            assert_eq!(result, Ok(expect), "cut {cut}");
            assert_eq!(deep(part, 0).unwrap().len(), complete);
        }
    }
}

#[test]
fn negative_length_is_an_error_anywhere() {
    let mut set = v0_set(&[b"ok"]);
    set.extend((-3i32).to_be_bytes());
    assert_eq!(valid_bytes(&set), Err(ProtocolError::InvalidMessageSize { offset: 11, length: -3 }));
    let r: Vec<_> = ShallowIter::new(&set, 100).collect();
    assert!(r[0].is_ok());
    assert_eq!(r[1], Err(ProtocolError::InvalidMessageSize { offset: 111, length: -3 }));
    assert_eq!(r.len(), 2, "iteration stops after an error");
}

#[test]
fn crc_failures_are_found_outside_and_inside_wrappers() {
    let mut set = v0_set(&[b"hello"]);
    set[13] ^= 1; // payload byte
    assert!(matches!(
        validate_message_set(&set, 7, None, &DecodeLimits::default()),
        Err(ProtocolError::CrcMismatch { offset: 7, stored: 0x3610_A686, .. })
    ));
    assert!(matches!(deep(&set, 7), Err(ProtocolError::CrcMismatch { .. })));

    // Corrupt an inner message but give the wrapper a correct CRC over the corrupt payload.
    let mut inner = Vec::new();
    put_message_set(&mut inner, Magic::V1, &[b"in"]).unwrap();
    let last = inner.len() - 1;
    inner[last] ^= 0xff;
    for codec in [Codec::Gzip, Codec::Snappy] {
        let w = wrap_raw(codec, &inner);
        let err = validate_message_set(&w, 0, None, &DecodeLimits::default()).unwrap_err();
        assert!(matches!(err, ProtocolError::CrcMismatch { offset: 0, .. }), "{err}");
        assert!(matches!(deep(&w, 0), Err(ProtocolError::CrcMismatch { .. })));
    }
}

#[test]
fn unknown_magic_and_codec_are_refused() {
    let mut set = v0_set(&[b"x"]);
    set[4] = 7;
    assert_eq!(
        validate_message_set(&set, 0, None, &DecodeLimits::default()),
        Err(ProtocolError::UnknownMagic { offset: 0, magic: 7 })
    );
    let mut set = Vec::new();
    put_message(&mut set, Magic::V1, Codec::None, b"x").unwrap();
    set[5] = 3;
    assert_eq!(
        validate_message_set(&set, 0, None, &DecodeLimits::default()),
        Err(ProtocolError::UnknownCodec { offset: 0, codec: 3, attributes: 3 })
    );
}

#[test]
fn nesting_is_read_up_to_the_limit() {
    let leaf = v0_set(&[b"deep"]);
    let level1 = wrap_raw(Codec::Gzip, &leaf);
    let level2 = wrap_raw(Codec::Snappy, &level1);
    let level3 = wrap_raw(Codec::Gzip, &level2);
    let limits = |max_depth| DecodeLimits { max_depth, max_decompressed_bytes: 1 << 20 };
    let run =
        |set: &[u8], d| DeepIter::with_limits(Bytes::copy_from_slice(set), 0, limits(d)).collect::<Result<Vec<_>, _>>();
    assert_eq!(run(&level3, 3).unwrap()[0].payload.as_ref(), b"deep");
    assert_eq!(run(&level3, 3).unwrap()[0].next_offset, level3.len() as u64);
    assert_eq!(run(&level3, 2).unwrap_err(), ProtocolError::NestingTooDeep { offset: 0, max_depth: 2 });
    assert_eq!(run(&level1, 1).unwrap().len(), 1);
    assert!(validate_message_set(&level3, 0, None, &limits(2)).is_err());
    assert_eq!(validate_message_set(&level3, 0, None, &limits(3)).unwrap().deep_count, 1);
}

#[test]
fn decompression_bomb_is_bounded() {
    // 64 MiB of zeros compresses to ~64 KiB of gzip.
    let zeros = vec![0u8; 64 << 20];
    let w = wrap_raw(Codec::Gzip, &zeros);
    assert!(w.len() < 200_000);
    let limits = DecodeLimits { max_depth: 4, max_decompressed_bytes: 1 << 20 };
    assert_eq!(
        validate_message_set(&w, 0, None, &limits),
        Err(ProtocolError::DecompressedTooLarge { offset: 0, limit: 1 << 20 })
    );
    // The budget covers all nesting levels together.
    let inner = wrap_raw(Codec::Gzip, &v0_set(&[&vec![0u8; 600_000]]));
    let one = DecodeLimits { max_depth: 4, max_decompressed_bytes: 1_000_000 };
    assert!(validate_message_set(&wrap_raw(Codec::Gzip, &inner), 0, None, &one).is_ok());
    let outer = wrap_raw(Codec::Gzip, &[inner.clone(), inner].concat());
    let limits = DecodeLimits { max_depth: 4, max_decompressed_bytes: 1_000_000 };
    assert!(matches!(validate_message_set(&outer, 0, None, &limits), Err(ProtocolError::DecompressedTooLarge { .. })));
}

#[test]
fn max_message_size_checks_shallow_payloads_first() {
    // A compressed payload counts with its compressed size.
    let big = vec![b'z'; 5000];
    let w = wrapper(Codec::Gzip, &[&big]);
    let compressed_len = w.len() - 10;
    assert!(validate_message_set(&w, 0, Some(compressed_len), &DecodeLimits::default()).is_ok());
    assert_eq!(
        validate_message_set(&w, 0, Some(compressed_len - 1), &DecodeLimits::default()),
        Err(ProtocolError::MessageSizeTooLarge { offset: 0, size: compressed_len, max: compressed_len - 1 })
    );
    // Size is checked before CRCs: a set with both problems reports the size (0.7 drops it silently).
    let mut set = v0_set(&[b"abc", &big]);
    set[9] ^= 1;
    assert!(matches!(
        validate_message_set(&set, 0, Some(100), &DecodeLimits::default()),
        Err(ProtocolError::MessageSizeTooLarge { offset: 12, .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Whatever mix of plain messages and wrappers, deep iteration returns every payload in
    /// order, and the offsets only ever land on outer-entry boundaries.
    #[test]
    fn deep_iteration_returns_every_payload(
        groups in proptest::collection::vec(
            (0u8..4, proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..50), 0..5)),
            0..8),
        base in 0u64..1 << 40,
    ) {
        let mut set = Vec::new();
        let mut expected = Vec::new();
        let mut boundaries = vec![base];
        for (kind, payloads) in &groups {
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            match kind {
                0 => put_message_set(&mut set, Magic::V0, &refs).unwrap(),
                1 => put_message_set(&mut set, Magic::V1, &refs).unwrap(),
                2 => put_compressed_set(&mut set, Codec::Gzip, &refs).unwrap(),
                _ => put_compressed_set(&mut set, Codec::Snappy, &refs).unwrap(),
            }
            expected.extend(payloads.iter().cloned());
            for e in ShallowIter::new(&set, base) {
                boundaries.push(e.unwrap().next_offset);
            }
        }
        let got = deep(&set, base).unwrap();
        prop_assert_eq!(got.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>(), expected);
        for (off, _) in &got {
            prop_assert!(boundaries.contains(off));
        }
        // Offsets never go backwards.
        prop_assert!(got.windows(2).all(|w| w[0].0 <= w[1].0));
        let summary = validate_message_set(&set, base, None, &DecodeLimits::default()).unwrap();
        prop_assert_eq!(summary.valid_bytes, set.len());
        prop_assert_eq!(summary.deep_count as usize, got.len());
        // When the last group holds messages, the very last one reports the end of the set.
        if let (Some((last, _)), Some((_, payloads))) = (got.last(), groups.last()) {
            if !payloads.is_empty() {
                prop_assert_eq!(*last, base + set.len() as u64);
            }
        }
    }
}

#[test]
fn offsets_near_the_top_of_the_range_saturate_without_losing_place() {
    let set = v0_set(&[b"a", b"b", b"c"]);
    let base = u64::MAX - 5;
    let entries: Vec<_> = ShallowIter::new(&set, base).collect::<Result<_, _>>().unwrap();
    assert_eq!(entries.iter().map(|e| e.message.payload).collect::<Vec<_>>(), vec![b"a", b"b", b"c"]);
    assert!(entries.iter().all(|e| e.next_offset == u64::MAX));
    assert_eq!(deep(&set, base).unwrap().len(), 3);
}
