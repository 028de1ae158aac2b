//! Bad input: flipped bytes, cut-off data, arbitrary bytes and decompression bombs are all
//! reported as errors naming the batch, never a panic.

use std::io::Write;

use bytes::{Bytes, BytesMut};
use kwire_records::{
    Batch, BatchBuilder, BatchOptions, Compression, Header, ReadOptions, Record, Records, RecordsError,
    RecordsErrorKind, RecordsExt,
};
use proptest::prelude::*;

/// A small batch of each magic/codec combination, with keys, values and (v2) headers.
fn sample(magic: i8, compression: Compression, count: usize) -> Bytes {
    let options = BatchOptions {
        base_offset: 100,
        producer_id: 5,
        producer_epoch: 1,
        base_sequence: 0,
        ..BatchOptions::new(magic, compression)
    };
    let mut builder = BatchBuilder::new(options).unwrap();
    for i in 0..count {
        let headers = if magic == 2 { vec![Header::new(format!("h{i}"), Some(vec![i as u8; 3]))] } else { vec![] };
        let value = format!("value {i} ").repeat(i + 1);
        builder
            .append(1_700_000_000_000 + i as i64, Some(format!("k{i}").as_bytes()), Some(value.as_bytes()), &headers)
            .unwrap();
    }
    builder.build().unwrap()
}

fn combinations() -> Vec<(i8, Compression)> {
    let mut out = Vec::new();
    for magic in 0..=2 {
        for codec in Compression::ALL {
            if codec.allowed_for_magic(magic) {
                out.push((magic, codec));
            }
        }
    }
    out
}

/// Reads everything: CRC check plus every record.
fn read_all(records: &Records, options: ReadOptions) -> Result<Vec<Record>, RecordsError> {
    // The borrowed views parse the same bytes; they must agree on success or failure.
    let mut views_ok = true;
    for batch in records.batches() {
        match batch {
            Ok(Batch::V2(batch)) => match batch.record_data(&options) {
                Ok(data) => views_ok &= data.iter().all(|r| r.is_ok()),
                Err(_) => views_ok = false,
            },
            Ok(_) => {}
            Err(_) => views_ok = false,
        }
    }
    let owned: Result<Vec<Record>, RecordsError> = records.records_with(options).collect();
    let v2_only = records.batches().all(|b| matches!(b, Ok(Batch::V2(_))));
    if v2_only {
        assert_eq!(owned.is_ok(), views_ok, "views and owned records disagree");
    }
    owned
}

/// Bytes of an entry that no checksum covers: the offset (all magics) and, for magic 2, the
/// partition leader epoch, which brokers rewrite in place. Changing them yields valid data
/// with a different offset or epoch.
fn uncovered(magic: i8, position: usize) -> bool {
    position < 8 || (magic == 2 && (12..16).contains(&position))
}

#[test]
fn every_flipped_byte_is_caught_or_outside_the_checksum() {
    for (magic, codec) in combinations() {
        // Legacy uncompressed data is one message per record: use one record so the whole
        // field is one entry.
        let count = if magic < 2 && codec == Compression::None { 1 } else { 4 };
        let original = sample(magic, codec, count);
        let expected = read_all(&Records::from_bytes(original.clone()), ReadOptions::default()).unwrap();
        for position in 0..original.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut bytes = original.to_vec();
                bytes[position] ^= mask;
                let records = Records::from_bytes(Bytes::from(bytes));
                let checked = read_all(&records, ReadOptions::default());
                // Without CRC checks the parser meets the damage itself; it must not panic.
                let unchecked = read_all(&records, ReadOptions { verify_crc: false, ..ReadOptions::default() });
                let what = format!("magic {magic} {codec} byte {position} ^ {mask:#04x}");
                if uncovered(magic, position) {
                    let got = checked.unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(got.len(), expected.len(), "{what}");
                    assert!(records.verify().is_ok(), "{what}");
                } else {
                    let err = checked.expect_err(&what);
                    assert_eq!(err.batch_index(), 0, "{what}: {err}");
                    assert!(
                        records.verify().is_err() || records.verify().unwrap().truncated_tail.is_some(),
                        "{what}: verify missed it"
                    );
                    if unchecked.is_ok() {
                        // Only a CRC could have caught it; the bytes still parse.
                        assert!(matches!(err.kind(), RecordsErrorKind::CrcMismatch { .. }), "{what}: {err}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_bad_batch_is_named_by_index_and_position() {
    let batches: Vec<Bytes> =
        [(2, Compression::None), (1, Compression::Gzip), (2, Compression::Lz4), (0, Compression::Snappy)]
            .into_iter()
            .map(|(magic, codec)| sample(magic, codec, 3))
            .collect();
    for bad in 0..batches.len() {
        let mut all = BytesMut::new();
        let mut position = 0;
        for (i, batch) in batches.iter().enumerate() {
            if i == bad {
                position = all.len();
                let mut damaged = batch.to_vec();
                let last = damaged.len() - 1;
                damaged[last] ^= 0x40;
                all.extend_from_slice(&damaged);
            } else {
                all.extend_from_slice(batch);
            }
        }
        let records = Records::from_bytes(all.freeze());
        let err = records.verify().unwrap_err();
        assert_eq!((err.batch_index(), err.batch_position()), (bad, position));
        assert!(matches!(err.kind(), RecordsErrorKind::CrcMismatch { .. }), "{err}");
        assert!(err.to_string().contains(&format!("#{bad} at byte {position}")), "{err}");
    }
}

#[test]
fn a_partial_trailing_batch_is_truncated_not_corrupt() {
    for (magic, codec) in combinations() {
        let first = sample(2, Compression::None, 2);
        // Legacy uncompressed data is one entry per record; one record makes one entry.
        let second = sample(magic, codec, if magic < 2 && codec == Compression::None { 1 } else { 3 });
        for cut in 1..second.len() {
            let mut all = BytesMut::from(&first[..]);
            all.extend_from_slice(&second[..cut]);
            let records = Records::from_bytes(all.freeze());
            let what = format!("magic {magic} {codec} cut at {cut}");
            let results: Vec<_> = records.batches().collect();
            assert!(results[0].is_ok(), "{what}");
            let tail = results.last().unwrap().as_ref().expect_err(&what);
            assert!(tail.is_truncated(), "{what}: {tail}");
            assert_eq!((tail.batch_index(), tail.batch_position()), (1, first.len()), "{what}");
            let verified = records.verify().unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(verified.batches, 1, "{what}");
            assert!(verified.truncated_tail.is_some(), "{what}");
            // Reading records gives the first batch's records, then the truncation.
            let read: Vec<_> = records.records().collect();
            assert_eq!(read.iter().filter(|r| r.is_ok()).count(), 2, "{what}");
            assert!(read.last().unwrap().as_ref().unwrap_err().is_truncated(), "{what}");
        }
    }
}

#[test]
fn a_length_below_the_format_minimum_is_malformed() {
    let mut bytes = sample(2, Compression::None, 1).to_vec();
    bytes[8..12].copy_from_slice(&10i32.to_be_bytes());
    let err = Records::from_bytes(Bytes::from(bytes)).verify().unwrap_err();
    assert!(matches!(err.kind(), RecordsErrorKind::LengthTooSmall { length: 10, .. }), "{err}");
    assert!(!err.is_truncated());
}

/// A magic 2 batch holding one record whose value is `zeros` zero bytes, compressed with
/// `codec` by streaming, so the test never holds the decompressed data.
fn bomb(codec: Compression, zeros: usize) -> Bytes {
    let mut prefix = Vec::new();
    // record: attributes 0, timestamp delta 0, offset delta 0, null key, value length, ...
    let value_len = zeros as i64;
    let mut body = vec![0u8, 0, 0, 1];
    put_varlong(&mut body, value_len);
    let body_len = body.len() as i64 + value_len + 1; // + header count
    put_varlong(&mut prefix, body_len);
    prefix.extend_from_slice(&body);
    let chunk = vec![0u8; 1 << 20];
    let feed = |w: &mut dyn Write| {
        w.write_all(&prefix).unwrap();
        let mut left = zeros;
        while left > 0 {
            let n = left.min(chunk.len());
            w.write_all(&chunk[..n]).unwrap();
            left -= n;
        }
        w.write_all(&[0]).unwrap(); // no headers
    };
    let payload = match codec {
        Compression::Zstd => {
            let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
            feed(&mut enc);
            enc.finish().unwrap()
        }
        Compression::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            feed(&mut enc);
            enc.finish().unwrap()
        }
        Compression::Lz4 => {
            let mut enc = lz4_flex::frame::FrameEncoder::new(Vec::new());
            feed(&mut enc);
            enc.finish().unwrap()
        }
        other => panic!("no streaming bomb for {other}"),
    };
    v2_batch_around(codec, &payload)
}

fn put_varlong(out: &mut Vec<u8>, v: i64) {
    let mut raw = ((v << 1) ^ (v >> 63)) as u64;
    while raw >= 0x80 {
        out.push(raw as u8 | 0x80);
        raw >>= 7;
    }
    out.push(raw as u8);
}

/// Wraps an already compressed payload of one record in a valid magic 2 header.
fn v2_batch_around(codec: Compression, payload: &[u8]) -> Bytes {
    let mut b = Vec::new();
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&((49 + payload.len()) as i32).to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.push(2);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&i16::from(codec.id()).to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes()); // last offset delta
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&(-1i64).to_be_bytes());
    b.extend_from_slice(&(-1i16).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(payload);
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(b)
}

#[test]
fn a_zstd_bomb_is_refused_by_the_default_limit() {
    // 1 GiB of zeros in a batch of a few tens of KiB.
    let batch = bomb(Compression::Zstd, 1 << 30);
    assert!(batch.len() < 100 * 1024, "bomb is {} bytes", batch.len());
    let records = Records::from_bytes(batch);
    let err = read_all(&records, ReadOptions::default()).unwrap_err();
    assert!(matches!(err.kind(), RecordsErrorKind::DecompressedTooLarge { .. }), "{err}");
}

#[test]
fn every_codec_honours_a_configured_limit() {
    let limit = ReadOptions { max_decompressed_size: 1 << 20, ..ReadOptions::default() };
    for codec in [Compression::Zstd, Compression::Gzip, Compression::Lz4] {
        // Just above the limit is refused; a roomier limit reads the same batch.
        let records = Records::from_bytes(bomb(codec, (1 << 20) + 1));
        let err = read_all(&records, limit).unwrap_err();
        assert!(
            matches!(err.kind(), RecordsErrorKind::DecompressedTooLarge { codec: c, limit: 1_048_576 } if *c == codec),
            "{codec}: {err}"
        );
        let roomy = ReadOptions { max_decompressed_size: 2 << 20, ..ReadOptions::default() };
        let read = read_all(&records, roomy).unwrap();
        assert_eq!(read[0].value.as_ref().unwrap().len(), (1 << 20) + 1, "{codec}");
    }
    // Snappy states sizes up front: a bare block claiming 4 GiB is refused before allocating.
    let mut claim = Vec::new();
    let mut raw: u64 = u32::MAX as u64;
    while raw >= 0x80 {
        claim.push(raw as u8 | 0x80);
        raw >>= 7;
    }
    claim.push(raw as u8);
    claim.extend_from_slice(&[0; 16]);
    let records = Records::from_bytes(v2_batch_around(Compression::Snappy, &claim));
    let err = read_all(&records, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(err.kind(), RecordsErrorKind::DecompressedTooLarge { .. } | RecordsErrorKind::Decompression { .. }),
        "{err}"
    );
    // Xerial framing: each block is checked against what is left of the limit.
    let big = sample(2, Compression::Snappy, 200);
    let err =
        read_all(&Records::from_bytes(big), ReadOptions { max_decompressed_size: 1000, ..ReadOptions::default() })
            .unwrap_err();
    assert!(matches!(err.kind(), RecordsErrorKind::DecompressedTooLarge { .. }), "{err}");
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let records = Records::from_bytes(Bytes::from(bytes));
        let _ = records.verify();
        let _ = read_all(&records, ReadOptions { verify_crc: false, max_decompressed_size: 1 << 20 });
    }

    #[test]
    fn damaged_batches_never_panic_without_crc_checks(
        pick in 0usize..13,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let (magic, codec) = combinations()[pick % combinations().len()];
        let mut bytes = sample(magic, codec, 5).to_vec();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let keep = cut.index(bytes.len() + 1);
        bytes.truncate(keep.max(1));
        let records = Records::from_bytes(Bytes::from(bytes));
        let _ = records.verify();
        let _ = read_all(&records, ReadOptions { verify_crc: false, max_decompressed_size: 1 << 20 });
    }
}
