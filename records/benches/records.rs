//! Record batch throughput: decode and encode of a 1 MiB magic 2 batch of 1 KiB records,
//! uncompressed and with each codec, next to the raw codec speed (the ceiling for a
//! compressed batch) and a plain memcpy + CRC-32C pass over the same bytes (the floor any
//! decoder that checks the CRC must pay). Throughput counts uncompressed batch bytes.
//!
//! Run: `cargo bench -p kwire-runtime --bench records`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kwire_records::compression::{compress, decompress};
use kwire_records::{Compression, ReadOptions, Records, RecordsExt, V2_HEADER_LEN};

#[path = "common/records_workload.rs"]
mod workload;
use workload::{bench_memcpy_crc32c_floor, build, decode_all, decode_views, values, RECORDS};

fn benches(c: &mut Criterion) {
    let data = values();
    let plain = build(Compression::None, &data);
    let plain_len = plain.len() as u64;
    eprintln!("uncompressed batch: {plain_len} bytes, {RECORDS} records");

    let mut group = c.benchmark_group("records");
    group.throughput(Throughput::Bytes(plain_len));
    group.sample_size(30);

    // Floor: copy the batch and checksum it, nothing else.
    bench_memcpy_crc32c_floor(&mut group, &plain);

    // Breakdown of the uncompressed decode: the checksum alone, and the parse alone.
    group.bench_function("baseline/crc32c", |b| b.iter(|| black_box(kwire_records::crc32c(black_box(&plain)))));
    let no_crc = ReadOptions { verify_crc: false, ..ReadOptions::default() };
    group.bench_function("decode-without-crc/none", |b| {
        b.iter(|| Records::from_bytes(plain.clone()).to_vec(no_crc).unwrap())
    });
    // The lazy iterator, collected the way a caller would write it.
    group.bench_function("decode-iterator-collect/none", |b| {
        b.iter(|| Records::from_bytes(plain.clone()).records().collect::<Result<Vec<_>, _>>().unwrap())
    });

    for codec in Compression::ALL {
        let batch = build(codec, &data);
        eprintln!(
            "{codec}: {} bytes ({:.1}% of uncompressed)",
            batch.len(),
            100.0 * batch.len() as f64 / plain_len as f64
        );
        assert_eq!(decode_all(&batch).len(), RECORDS);
        assert_eq!(decode_views(&batch), RECORDS);
        group.bench_with_input(BenchmarkId::new("decode", codec), &batch, |b, batch| b.iter(|| decode_all(batch)));
        group.bench_with_input(BenchmarkId::new("decode-views", codec), &batch, |b, batch| {
            b.iter(|| decode_views(batch))
        });
        group.bench_with_input(BenchmarkId::new("encode", codec), &codec, |b, &codec| b.iter(|| build(codec, &data)));
        if codec != Compression::None {
            // Ceiling: the codec alone over the records section of the same batch.
            let section = &plain[V2_HEADER_LEN..];
            let compressed = compress(codec, 2, section).unwrap();
            group.bench_function(BenchmarkId::new("codec-decompress", codec), |b| {
                b.iter(|| decompress(codec, 2, black_box(&compressed), usize::MAX).unwrap())
            });
            group.bench_function(BenchmarkId::new("codec-compress", codec), |b| {
                b.iter(|| compress(codec, 2, black_box(section)).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(records, benches);
criterion_main!(records);
