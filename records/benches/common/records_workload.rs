//! The record-batch workload shared by `runtime/benches/records.rs` and the bench crate's
//! `records_vs_kafka_protocol.rs` (included there by path): the same 1 MiB batch of 1 KiB
//! records, built and decoded the same way, so both benches measure the same thing.

use std::hint::black_box;

use bytes::Bytes;
use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use kwire_records::{
    Batch, BatchBuilder, BatchOptions, Compression, Header, ReadOptions, Record, RecordRef, Records, RecordsExt,
};

pub const RECORDS: usize = 1024;
pub const VALUE_LEN: usize = 1000;

/// Deterministic, moderately compressible values: log-line-like text with varying numbers.
pub fn values() -> Vec<(Bytes, Bytes)> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..RECORDS)
        .map(|i| {
            let key = format!("user-{:08}", next() % 100_000_000).into_bytes();
            let mut value = Vec::with_capacity(VALUE_LEN);
            while value.len() < VALUE_LEN {
                let line = format!(
                    "{{\"seq\":{i},\"id\":{},\"status\":\"{}\",\"latency_ms\":{}}} ",
                    next() % 1_000_000_000,
                    ["ok", "retry", "fail", "timeout"][(next() % 4) as usize],
                    next() % 10_000
                );
                value.extend_from_slice(line.as_bytes());
            }
            value.truncate(VALUE_LEN);
            (Bytes::from(key), Bytes::from(value))
        })
        .collect()
}

/// One magic 2 batch of `data`, compressed with `codec`.
pub fn build(codec: Compression, data: &[(Bytes, Bytes)]) -> Bytes {
    build_with_headers(codec, data, |_| Vec::new())
}

/// [`build`], record `i` carrying `headers(i)` (for the bench crate's kafka-python batches,
/// which `records.rs` does not build).
#[allow(dead_code)]
pub fn build_with_headers(
    codec: Compression,
    data: &[(Bytes, Bytes)],
    headers: impl Fn(usize) -> Vec<Header>,
) -> Bytes {
    let mut builder = BatchBuilder::with_capacity(BatchOptions::new(2, codec), RECORDS * (VALUE_LEN + 32)).unwrap();
    for (i, (key, value)) in data.iter().enumerate() {
        builder.append(1_700_000_000_000 + i as i64, Some(key), Some(value), &headers(i)).unwrap();
    }
    builder.build().unwrap()
}

/// Every record of `batch`, owned (CRC checked).
pub fn decode_all(batch: &Bytes) -> Vec<Record> {
    Records::from_bytes(batch.clone()).to_vec(ReadOptions::default()).unwrap()
}

/// Borrowed views: every record parsed and materialised as a `RecordRef` (no reference counts).
pub fn decode_views(batch: &Bytes) -> usize {
    let mut total = 0;
    for batch in Records::from_bytes(batch.clone()).batches() {
        if let Batch::V2(batch) = batch.unwrap() {
            let data = batch.record_data(&ReadOptions::default()).unwrap();
            let views: Vec<RecordRef<'_>> = data.iter().collect::<Result<_, _>>().unwrap();
            total += black_box(views).len();
        }
    }
    total
}

/// The floor any decoder that checks the CRC must pay: copy the batch and checksum it with the
/// CRC-32C the records crate uses (the `crc32c` crate, as kafka-protocol does).
pub fn bench_memcpy_crc32c_floor(group: &mut BenchmarkGroup<'_, WallTime>, batch: &Bytes) {
    let mut scratch = vec![0u8; batch.len()];
    group.bench_function("baseline/memcpy+crc32c", |b| {
        b.iter(|| {
            scratch.copy_from_slice(black_box(batch));
            black_box(kwire_records::crc32c(&scratch))
        })
    });
}
