//! Whatever a batch claims, reading it allocates a small multiple of its bytes: record and
//! header counts are checked against the bytes present before anything is reserved, and what
//! is reserved ahead of decoding stays small. Each case builds the worst input the checks
//! accept (the largest count, then the cheapest bytes) and measures the peak allocation.

use bytes::Bytes;
use kwire_records::{
    crc32c, Batch, Compression, Malformation, ReadOptions, Records, RecordsErrorKind, RecordsExt, V2_HEADER_LEN,
};
use kwire_test_support::alloc::{peak_during, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The bound every case must meet: four times the input plus 64 KiB.
fn bound(input: usize) -> usize {
    4 * input + (64 << 10)
}

/// The smallest magic 2 record: length 6, attributes, timestamp and offset deltas 0, null key
/// and value, no headers.
const MIN_RECORD: [u8; 7] = [12, 0, 0, 0, 1, 1, 0];

/// A magic 2 batch of `count` records whose records section is `records`, with a valid CRC.
fn batch_v2(count: i32, attributes: i16, records: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(V2_HEADER_LEN + records.len());
    b.extend(0i64.to_be_bytes()); // base offset
    b.extend(((V2_HEADER_LEN - 12 + records.len()) as i32).to_be_bytes());
    b.extend(0i32.to_be_bytes()); // partition leader epoch
    b.push(2);
    b.extend([0; 4]); // crc, below
    b.extend(attributes.to_be_bytes());
    b.extend(count.saturating_sub(1).max(0).to_be_bytes()); // last offset delta
    b.extend(0i64.to_be_bytes()); // base timestamp
    b.extend(0i64.to_be_bytes()); // max timestamp
    b.extend((-1i64).to_be_bytes()); // producer id
    b.extend((-1i16).to_be_bytes()); // producer epoch
    b.extend((-1i32).to_be_bytes()); // base sequence
    b.extend(count.to_be_bytes());
    b.extend_from_slice(records);
    let crc = crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

fn records_of(bytes: Vec<u8>) -> Records {
    Records::from_bytes(Bytes::from(bytes))
}

/// Peak bytes allocated while `to_vec` reads `records`, and its result's error, if any.
fn to_vec_peak(records: &Records) -> (Option<RecordsErrorKind>, usize) {
    let (result, peak) = peak_during(|| records.to_vec(ReadOptions::default()).map(|v| v.len()));
    (result.err().map(|e| e.kind().clone()), peak)
}

fn field_of(kind: &RecordsErrorKind) -> Option<(&'static str, &'static str, usize)> {
    match kind {
        RecordsErrorKind::Malformed { structure, field, offset, .. } => Some((structure, field, *offset)),
        _ => None,
    }
}

/// A record count no number of bytes could hold is refused from the header, naming the field.
#[test]
fn record_count_beyond_the_bytes_is_refused() {
    let records = records_of(batch_v2(i32::MAX, 0, &[0; 1 << 20]));
    let (error, peak) = to_vec_peak(&records);
    println!("record_count i32::MAX, 1 MiB of zeros: peak {peak} bytes");
    let error = error.expect("refused");
    assert_eq!(field_of(&error), Some(("RecordBatch", "record_count", 57)), "{error}");
    assert!(matches!(
        error,
        RecordsErrorKind::Malformed { problem: Malformation::CountExceedsBytes { count: 2147483647, .. }, .. }
    ));
    assert!(peak <= bound(1 << 20), "peak {peak}");
}

/// The largest count the check accepts (one minimal record per 7 bytes), then bytes that are
/// no record at all: the reader reserves a bounded amount up front, not the count.
#[test]
fn largest_accepted_record_count_reserves_little() {
    let len = 1 << 20;
    let input = batch_v2((len / MIN_RECORD.len()) as i32, 0, &vec![0; len]);
    let size = input.len();
    let records = records_of(input);
    let (error, peak) = to_vec_peak(&records);
    println!("record_count {} over {len} zero bytes: peak {peak} bytes (input {size})", len / 7);
    assert!(error.is_some(), "zero bytes are no records");
    assert!(peak <= bound(size), "peak {peak} for {size} bytes");
}

/// The same over compressed data: the count is checked against the decompressed bytes.
#[test]
fn record_count_is_checked_against_decompressed_bytes() {
    let plain = vec![0u8; 1 << 20];
    let compressed = kwire_records::compression::compress(Compression::Gzip, 2, &plain).unwrap();
    let accepted = (plain.len() / MIN_RECORD.len()) as i32;
    let gzip = Compression::Gzip.id() as i16;
    for (count, refused) in [(accepted, false), (accepted + 1, true)] {
        let records = records_of(batch_v2(count, gzip, &compressed));
        let (error, peak) = to_vec_peak(&records);
        println!("gzip, record_count {count} over {} decompressed bytes: peak {peak} bytes", plain.len());
        let error = error.expect("zeros are no records");
        assert_eq!(field_of(&error).map(|f| f.1) == Some("record_count"), refused, "{error}");
        assert!(peak <= bound(plain.len()), "peak {peak}");
    }
}

/// Minimal records, all valid, read one at a time as borrowed views: nothing per record.
#[test]
fn streaming_dense_records_allocates_nothing_per_record() {
    let n = (1 << 20) / MIN_RECORD.len();
    let records = records_of(batch_v2(n as i32, 0, &MIN_RECORD.repeat(n)));
    let Some(Ok(Batch::V2(batch))) = records.batches().next() else { panic!("one v2 batch") };
    let (read, peak) = peak_during(|| {
        let data = batch.record_data(&ReadOptions::default()).expect("valid");
        data.iter().map(|r| r.map(|_| 1)).sum::<Result<usize, _>>()
    });
    println!("{n} minimal records streamed: peak {peak} bytes");
    assert_eq!(read.unwrap(), n);
    assert!(peak <= 64 << 10, "peak {peak}");
}

/// A record's header count: one beyond what its bytes allow (two bytes a header) is refused
/// naming the field; the largest accepted, over bytes that are no header, reserves little.
#[test]
fn header_count_is_bounded_by_the_record() {
    let headers = 1 << 20;
    for (count, refused) in [(headers / 2 + 1, true), (headers / 2, false)] {
        // Null key and value, then the header count, then headers whose key length is -2.
        let mut body = vec![0, 0, 0, 1, 1];
        put_varint(&mut body, count as i64);
        body.resize(body.len() + headers, 3);
        let mut record = Vec::new();
        put_varint(&mut record, body.len() as i64);
        record.extend_from_slice(&body);
        let input = batch_v2(1, 0, &record);
        let size = input.len();
        let records = records_of(input);
        let (error, peak) = to_vec_peak(&records);
        println!("header count {count} over {headers} bytes: peak {peak} bytes");
        let error = error.expect("no valid header");
        let (structure, field, _) = field_of(&error).expect("a malformed field");
        if refused {
            assert_eq!((structure, field), ("Record", "headers"), "{error}");
            assert!(matches!(
                error,
                RecordsErrorKind::Malformed { problem: Malformation::CountExceedsBytes { .. }, .. }
            ));
        } else {
            assert_eq!((structure, field), ("Header", "key"), "{error}");
        }
        assert!(peak <= bound(size), "peak {peak}");
    }
}

/// Zigzag varint, as records write lengths and counts.
fn put_varint(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}
