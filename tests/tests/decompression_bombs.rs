//! A compressed frame that declares an enormous output size costs what its real output costs:
//! the declared size (zstd's content size, gzip's ISIZE trailer, a snappy block's length) only
//! sizes a small first allocation and is never trusted beyond it.

use std::io::Write;

use kwire_test_support::alloc::{peak_during, Counting};

use kwire07_protocol::compression::decompress as legacy_decompress;
use kwire07_protocol::Codec;
use kwire_records::compression::decompress;
use kwire_records::Compression;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const LIMIT: usize = 64 << 20;
/// Far below the 64 MiB a trusted declared size would allocate.
const CEILING: usize = 1 << 20;

/// A zstd frame with a single-segment header declaring `declared` bytes of content, holding
/// one raw block of 4 bytes.
fn zstd_claiming(declared: u64) -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    f.extend_from_slice(&declared.to_le_bytes());
    let block_header = 1u32 | (4 << 3); // last block, raw, 4 bytes
    f.extend_from_slice(&block_header.to_le_bytes()[..3]);
    f.extend_from_slice(b"abcd");
    f
}

fn gzip_claiming_4gib() -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(b"tiny").unwrap();
    let mut g = enc.finish().unwrap();
    let n = g.len();
    g[n - 4..].copy_from_slice(&[0xff; 4]);
    g
}

/// A raw snappy block declaring about 60 MiB in 65 bytes.
fn snappy_claiming_60mib() -> Vec<u8> {
    let mut b = vec![0x80, 0x80, 0x80, 0x1e];
    b.resize(65, 0);
    b
}

#[test]
fn declared_sizes_are_not_trusted() {
    let cases: Vec<(&str, Compression, Vec<u8>)> = vec![
        ("zstd declaring 2^40", Compression::Zstd, zstd_claiming(1 << 40)),
        ("zstd declaring 60 MiB", Compression::Zstd, zstd_claiming(60 << 20)),
        ("gzip with an ffffffff trailer", Compression::Gzip, gzip_claiming_4gib()),
        ("snappy declaring 60 MiB", Compression::Snappy, snappy_claiming_60mib()),
    ];
    for (what, codec, data) in cases {
        let (result, peak) = peak_during(|| decompress(codec, 2, &data, LIMIT));
        assert!(peak < CEILING, "{what} ({} bytes): {peak} bytes allocated, result {result:?}", data.len());
        if let Ok(out) = result {
            assert!(out.len() <= 64, "{what}: {} bytes out", out.len());
        }
    }
}

#[test]
fn legacy_wrappers_do_not_trust_declared_sizes_either() {
    for (what, codec, data) in
        [("gzip", Codec::Gzip, gzip_claiming_4gib()), ("snappy", Codec::Snappy, snappy_claiming_60mib())]
    {
        let (result, peak) = peak_during(|| legacy_decompress(codec, &data, LIMIT, 0));
        assert!(peak < CEILING, "{what}: {peak} bytes allocated, result {result:?}");
    }
}

#[test]
fn real_output_still_decodes_at_full_size() {
    // Inside `peak_during` only so that its allocations do not land in another test's count.
    peak_during(|| {
        let data = vec![7u8; 3 << 20];
        for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd] {
            let compressed = kwire_records::compression::compress(codec, 2, &data).unwrap();
            assert_eq!(decompress(codec, 2, &compressed, LIMIT).unwrap(), data, "{codec:?}");
        }
    });
}

/// Eight zstd batches of a few hundred bytes that each decompress to 8 MiB: streaming them one
/// batch at a time (the path `Records::to_vec` documents for untrusted data) peaks near one
/// batch, not eight.
#[test]
fn streaming_batches_bounds_memory_by_one_batch() {
    use kwire_records::RecordsExt;
    use kwire_records::{BatchBuilder, BatchOptions, ReadOptions};
    use kwire_runtime::Records;

    let (records, _) = peak_during(|| {
        let value = vec![0u8; 8 << 20];
        let mut all = Vec::new();
        for i in 0..8 {
            let mut b =
                BatchBuilder::new(BatchOptions { base_offset: i, ..BatchOptions::new(2, Compression::Zstd) }).unwrap();
            b.append(0, None, Some(&value), &[]).unwrap();
            all.extend_from_slice(&b.build().unwrap());
        }
        Records::from_bytes(all.into())
    });
    assert!(records.len() < 8 * 4096, "{} bytes of batches", records.len());
    let (total, streamed_peak) = peak_during(|| {
        let mut total = 0usize;
        for batch in records.batches() {
            for record in batch.unwrap().records_with(&ReadOptions::default()).unwrap() {
                total += record.unwrap().value.map_or(0, |v| v.len());
            }
        }
        total
    });
    assert_eq!(total, 64 << 20);
    // One batch at a time: growing its output by doubling costs up to three times its size
    // for a moment, but never the eight batches together.
    assert!(streamed_peak < 26 << 20, "streaming peaked at {streamed_peak} bytes");
    let (held, vec_peak) = peak_during(|| records.to_vec(ReadOptions::default()).unwrap().len());
    assert_eq!(held, 8);
    assert!(vec_peak >= 64 << 20, "to_vec holds every batch: {vec_peak}");
}
