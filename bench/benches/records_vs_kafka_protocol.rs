//! kwire vs kafka-protocol 0.18, same run, same data: decode and encode of a 1 MiB
//! magic 2 batch of 1 KiB records, uncompressed and with each codec, plus a plain
//! memcpy + CRC-32C pass over the batch as the physical floor. Throughput counts
//! uncompressed batch bytes. Both decoders check the CRC and materialise every record:
//! `kwire` as owned `Record`s (shared `Bytes`, like kafka-protocol's), `kwire-views`
//! as borrowed `RecordRef`s.
//!
//! A second group decodes batches written by kafka-python's own producer code
//! (`bench/kafka_python_batch.py`, the same records, without and with a header per record),
//! so the figures do not rest on our builder's layout alone. It needs kafka-python: the
//! interpreter in `KWIRE_PYTHON`, else `target/kafka-python-venv/bin/python` (which
//! `scripts/test` creates); without it that group is skipped with a message.
//!
//! Run: `cargo bench -p kwire-bench --bench records_vs_kafka_protocol`

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafka_protocol::records::{
    Compression as KpCompression, Record as KpRecord, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions,
    TimestampType as KpTimestampType,
};
use kwire_records::{Compression, Header, Records, RecordsExt};

#[path = "../../records/benches/common/records_workload.rs"]
mod workload;
use workload::{
    bench_memcpy_crc32c_floor, build as ours_encode, build_with_headers, decode_all as ours_decode, decode_views,
    values, RECORDS, VALUE_LEN,
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
        eprintln!("{codec}: kwire batch {} bytes, kafka-protocol batch {} bytes", ours.len(), theirs.len());
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

        group
            .bench_with_input(BenchmarkId::new("decode/kwire", codec), &ours, |b, batch| b.iter(|| ours_decode(batch)));
        assert_eq!(decode_views(&ours), RECORDS);
        group.bench_with_input(BenchmarkId::new("decode/kwire-views", codec), &ours, |b, batch| {
            b.iter(|| decode_views(batch))
        });
        group.bench_with_input(BenchmarkId::new("decode/kafka-protocol", codec), &ours, |b, batch| {
            b.iter(|| kp_decode(batch))
        });
        group.bench_with_input(BenchmarkId::new("encode/kwire", codec), &codec, |b, &codec| {
            b.iter(|| ours_encode(codec, &data))
        });
        group.bench_with_input(BenchmarkId::new("encode/kafka-protocol", codec), &codec, |b, &codec| {
            b.iter(|| kp_encode(codec, &kp_input))
        });
    }
    group.finish();
}

/// The interpreter with kafka-python, if there is one.
fn kafka_python() -> Option<std::path::PathBuf> {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/kafka-python-venv/bin/python");
    std::env::var_os("KWIRE_PYTHON").map(Into::into).or_else(|| venv.exists().then_some(venv))
}

/// The batch `bench/kafka_python_batch.py` writes (`headers`: one header per record).
fn kafka_python_batch(python: &std::path::Path, headers: bool) -> Result<Bytes, String> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kafka_python_batch.py");
    let mut command = std::process::Command::new(python);
    command.arg(&script);
    if headers {
        command.arg("--headers");
    }
    let out = command.output().map_err(|e| format!("{}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(Bytes::from(out.stdout))
}

/// The header `bench/kafka_python_batch.py --headers` gives record `i`.
fn trace_header(i: usize) -> Header {
    Header::new(&b"trace"[..], Some(format!("{:016x}", i as u64 * 2_654_435_761).into_bytes()))
}

fn kafka_python_benches(c: &mut Criterion) {
    let Some(python) = kafka_python() else {
        eprintln!("records_vs_kafka_protocol: no kafka-python (set KWIRE_PYTHON or run scripts/test once); skipping the kafka-python batches");
        return;
    };
    let data = values();
    let mut group = c.benchmark_group("records_from_kafka_python");
    group.sample_size(30);
    for (name, headers) in [("plain", false), ("one-header", true)] {
        let batch = match kafka_python_batch(&python, headers) {
            Ok(batch) => batch,
            Err(e) => {
                eprintln!("records_vs_kafka_protocol: kafka-python failed ({e}); skipping the kafka-python batches");
                return;
            }
        };
        // Our builder, given the same records, writes the same bytes but for the partition
        // leader epoch (bytes 12..16, outside the CRC), where kafka-python writes 0 and Kafka's
        // Java producer, like us, -1: the layouts agree.
        let expected_headers = |i| if headers { vec![trace_header(i)] } else { Vec::new() };
        let mut built = build_with_headers(Compression::None, &data, expected_headers).to_vec();
        assert_eq!((&built[12..16], &batch[12..16]), (&[0xff; 4][..], &[0; 4][..]), "{name}: leader epochs");
        built[12..16].copy_from_slice(&batch[12..16]);
        assert!(built == batch, "{name}: kafka-python's batch and ours differ beyond the leader epoch");
        // Both decoders read every record of kafka-python's batch back as it was written.
        let ours = ours_decode(&batch);
        let theirs = kp_decode(&batch);
        assert_eq!((ours.len(), theirs.len()), (RECORDS, RECORDS));
        for (i, ((a, b), (key, value))) in ours.iter().zip(&theirs).zip(&data).enumerate() {
            assert_eq!((a.key.as_ref(), a.value.as_ref()), (Some(key), Some(value)));
            assert_eq!((b.key.as_ref(), b.value.as_ref()), (Some(key), Some(value)));
            assert_eq!((a.offset, a.timestamp), (i as i64, 1_700_000_000_000 + i as i64));
            assert_eq!((a.offset, a.timestamp), (b.offset, b.timestamp));
            let expected = expected_headers(i);
            assert_eq!(a.headers, expected);
            assert_eq!(b.headers.len(), expected.len());
        }
        assert_eq!(decode_views(&batch), RECORDS);
        eprintln!(
            "kafka-python {name} batch: {} bytes, identical to kwire's builder but for the leader epoch",
            batch.len()
        );
        group.throughput(Throughput::Bytes(batch.len() as u64));
        group
            .bench_with_input(BenchmarkId::new("decode/kwire", name), &batch, |b, batch| b.iter(|| ours_decode(batch)));
        group.bench_with_input(BenchmarkId::new("decode/kwire-views", name), &batch, |b, batch| {
            b.iter(|| decode_views(batch))
        });
        group.bench_with_input(BenchmarkId::new("decode/kafka-protocol", name), &batch, |b, batch| {
            b.iter(|| kp_decode(batch))
        });
    }
    group.finish();
}

criterion_group!(records, benches, kafka_python_benches);
criterion_main!(records);
