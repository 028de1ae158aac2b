//! kafka-wire vs kafka-protocol 0.18, same run, same data: decode and encode of a 1 MiB
//! magic 2 batch of 1 KiB records, uncompressed and with each codec, plus a plain
//! memcpy + CRC-32C pass over the batch as the physical floor. Throughput counts
//! uncompressed batch bytes. Both decoders check the CRC and materialise every record:
//! `kafka-wire` as owned `Record`s (shared `Bytes`, like kafka-protocol's), `kafka-wire-views`
//! as borrowed `RecordRef`s.
//!
//! Run: `cargo bench -p kafka-wire-bench --bench records_vs_kafka_protocol`

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafka_protocol::records::{
    Compression as KpCompression, Record as KpRecord, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions,
    TimestampType as KpTimestampType,
};
use kafka_wire_records::{Compression, Records, RecordsExt};

#[path = "../../records/benches/common/records_workload.rs"]
mod workload;
use workload::{
    bench_memcpy_crc32c_floor, build as ours_encode, decode_all as ours_decode, decode_views, values, RECORDS,
    VALUE_LEN,
};

fn kp_records(data: &[(Bytes, Bytes)]) -> Vec<KpRecord> {
    data.iter()
        .enumerate()
        .map(|(i, (key, value))| KpRecord {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: KpTimestampType::Creation,
            offset: i as i64,
            // kafka-protocol starts a new batch whenever offset - sequence changes; keep it
            // constant so both libraries write one batch.
            sequence: i as i32,
            timestamp: 1_700_000_000_000 + i as i64,
            key: Some(key.clone()),
            value: Some(value.clone()),
            headers: Default::default(),
        })
        .collect()
}

fn kp_codec(codec: Compression) -> KpCompression {
    match codec {
        Compression::None => KpCompression::None,
        Compression::Gzip => KpCompression::Gzip,
        Compression::Snappy => KpCompression::Snappy,
        Compression::Lz4 => KpCompression::Lz4,
        Compression::Zstd => KpCompression::Zstd,
    }
}

fn kp_encode(codec: Compression, records: &[KpRecord]) -> Bytes {
    let mut buf = BytesMut::with_capacity(RECORDS * (VALUE_LEN + 32));
    let options = RecordEncodeOptions { version: 2, compression: kp_codec(codec) };
    RecordBatchEncoder::encode(&mut buf, records, &options).unwrap();
    buf.freeze()
}

fn kp_decode(batch: &Bytes) -> Vec<KpRecord> {
    let mut buf = batch.clone();
    RecordBatchDecoder::decode(&mut buf).unwrap().records
}

fn benches(c: &mut Criterion) {
    let data = values();
    let kp_input = kp_records(&data);
    let plain = ours_encode(Compression::None, &data);
    let plain_len = plain.len() as u64;

    let mut group = c.benchmark_group("records_vs_kafka_protocol");
    group.throughput(Throughput::Bytes(plain_len));
    group.sample_size(30);

    bench_memcpy_crc32c_floor(&mut group, &plain);

    for codec in Compression::ALL {
        let ours = ours_encode(codec, &data);
        let theirs = kp_encode(codec, &kp_input);
        eprintln!("{codec}: kafka-wire batch {} bytes, kafka-protocol batch {} bytes", ours.len(), theirs.len());
        assert_eq!(Records::from_bytes(theirs.clone()).batches().count(), 1, "kafka-protocol wrote one batch");
        // Each decoder reads the other's output the same way: a real interoperability check.
        let from_theirs = ours_decode(&theirs);
        let from_ours = kp_decode(&ours);
        assert_eq!(from_theirs.len(), RECORDS);
        assert_eq!(from_ours.len(), RECORDS);
        for ((a, b), (key, value)) in from_theirs.iter().zip(&from_ours).zip(&data) {
            assert_eq!((a.key.as_ref(), a.value.as_ref()), (Some(key), Some(value)));
            assert_eq!((b.key.as_ref(), b.value.as_ref()), (Some(key), Some(value)));
            assert_eq!((a.offset, a.timestamp), (b.offset, b.timestamp));
        }

        group.bench_with_input(BenchmarkId::new("decode/kafka-wire", codec), &ours, |b, batch| {
            b.iter(|| ours_decode(batch))
        });
        assert_eq!(decode_views(&ours), RECORDS);
        group.bench_with_input(BenchmarkId::new("decode/kafka-wire-views", codec), &ours, |b, batch| {
            b.iter(|| decode_views(batch))
        });
        group.bench_with_input(BenchmarkId::new("decode/kafka-protocol", codec), &ours, |b, batch| {
            b.iter(|| kp_decode(batch))
        });
        group.bench_with_input(BenchmarkId::new("encode/kafka-wire", codec), &codec, |b, &codec| {
            b.iter(|| ours_encode(codec, &data))
        });
        group.bench_with_input(BenchmarkId::new("encode/kafka-protocol", codec), &codec, |b, &codec| {
            b.iter(|| kp_encode(codec, &kp_input))
        });
    }
    group.finish();
}

criterion_group!(records, benches);
criterion_main!(records);
