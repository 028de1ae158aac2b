//! Segment-log throughput against the physical ceiling, measured side by side in one run:
//! * append: 64 KiB message sets of 1 KiB messages through `LogManager::append` (full
//!   validation including every CRC, then a positional write) vs a plain sequential
//!   `write_all` of the same bytes to a file in the same directory. Neither fsyncs.
//! * read: 1 MiB fetches through `LogManager::read` + `FileSlice::read_to_slice` vs a plain
//!   `read_exact_at` of the same ranges of the same segment file (page cache warm).
//!
//! The machine this runs on is shared, so each pair is also measured interleaved: every
//! iteration of either benchmark runs both operations back to back and times only its own side
//! for criterion, while both sides are summed over the whole group. After each group the ratio
//! of those sums is printed ("interleaved ratio"); load bursts hit both sides of it alike, so it
//! is the robust number when criterion's two separately timed results are skewed by noise.
//!
//! Run: `cargo bench -p kwire-runtime --bench log`.

use std::cell::Cell;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kwire07_protocol::log::{LogConfig, LogManager};
use kwire07_protocol::message::put_message_set;
use kwire07_protocol::Magic;

const SET_BYTES: usize = 64 * 1024;
const MESSAGE_BYTES: usize = 1024;
const FETCH: usize = 1 << 20;
const LOG_BYTES: usize = 64 << 20;

/// Which operation of an interleaved pair a benchmark reports.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Plain,
    Log,
}

/// 64 messages of exactly 1 KiB each (length prefix + v1 header + 1014-byte payload).
fn message_set() -> Vec<u8> {
    let payloads: Vec<Vec<u8>> = (0..SET_BYTES / MESSAGE_BYTES)
        .map(|i| (0..MESSAGE_BYTES - 10).map(|j| (i * 31 + j * 7) as u8).collect())
        .collect();
    let mut set = Vec::with_capacity(SET_BYTES);
    put_message_set(&mut set, Magic::V1, &payloads).unwrap();
    assert_eq!(set.len(), SET_BYTES);
    set
}

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: 1 << 40,
        flush_interval_messages: u64::MAX,
        flush_interval: Duration::from_secs(3600),
        retention_age: None,
        ..LogConfig::default()
    }
}

/// `iters` appends and `iters` plain writes, interleaved; returns the time of `side`.
fn append_pair(set: &[u8], iters: u64, side: Side, totals: &Cell<(Duration, Duration)>) -> Duration {
    let tmp = tempfile::tempdir().unwrap();
    let mut plain = File::create(tmp.path().join("plain")).unwrap();
    let logs = LogManager::open(tmp.path().join("logs"), config(), HashMap::new()).unwrap();
    logs.append("bench", 0, set).unwrap();
    let (mut plain_time, mut log_time) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..iters {
        let t0 = Instant::now();
        plain.write_all(set).unwrap();
        let t1 = Instant::now();
        logs.append("bench", 0, set).unwrap();
        let t2 = Instant::now();
        plain_time += t1 - t0;
        log_time += t2 - t1;
    }
    settle(totals, side, plain_time, log_time)
}

/// Adds one interleaved sample to the running totals and returns the time of `side`.
fn settle(totals: &Cell<(Duration, Duration)>, side: Side, plain_time: Duration, log_time: Duration) -> Duration {
    let (p, l) = totals.get();
    totals.set((p + plain_time, l + log_time));
    match side {
        Side::Plain => plain_time,
        Side::Log => log_time,
    }
}

fn append(c: &mut Criterion) {
    let set = message_set();
    let mut group = c.benchmark_group("append_64KiB_set_of_1KiB_messages");
    group.throughput(Throughput::Bytes(SET_BYTES as u64));
    group.measurement_time(Duration::from_secs(8));
    let totals = Cell::new((Duration::ZERO, Duration::ZERO));
    group.bench_function(BenchmarkId::new("plain_file_write", "64KiB"), |b| {
        b.iter_custom(|iters| append_pair(&set, iters, Side::Plain, &totals))
    });
    group.bench_function(BenchmarkId::new("log_manager_append", "64KiB"), |b| {
        b.iter_custom(|iters| append_pair(&set, iters, Side::Log, &totals))
    });
    group.finish();
    report("append: log_manager_append / plain_file_write", totals.get());
}

fn read(c: &mut Criterion) {
    let set = message_set();
    let tmp = tempfile::tempdir().unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    for _ in 0..LOG_BYTES / SET_BYTES {
        logs.append("bench", 0, &set).unwrap();
    }
    let segment = File::open(tmp.path().join("bench-0").join("00000000000000000000.kafka")).unwrap();
    let mut buf = vec![0u8; FETCH];
    // Warm the page cache.
    for pos in (0..LOG_BYTES).step_by(FETCH) {
        segment.read_exact_at(&mut buf, pos as u64).unwrap();
    }

    let totals = Cell::new((Duration::ZERO, Duration::ZERO));
    let mut pair = |iters: u64, side: Side| {
        let (mut plain_time, mut log_time) = (Duration::ZERO, Duration::ZERO);
        for i in 0..iters {
            let pos = (i as usize * FETCH) % LOG_BYTES;
            let t0 = Instant::now();
            segment.read_exact_at(&mut buf, pos as u64).unwrap();
            let t1 = Instant::now();
            let slice = logs.read("bench", 0, pos as i64, FETCH as i64).unwrap().unwrap();
            let n = slice.read_to_slice(&mut buf).unwrap();
            let t2 = Instant::now();
            assert_eq!(n, FETCH);
            plain_time += t1 - t0;
            log_time += t2 - t1;
        }
        settle(&totals, side, plain_time, log_time)
    };

    let mut group = c.benchmark_group("read_1MiB_fetch");
    group.throughput(Throughput::Bytes(FETCH as u64));
    group.measurement_time(Duration::from_secs(8));
    group.bench_function(BenchmarkId::new("plain_file_read", "1MiB"), |b| {
        b.iter_custom(|iters| pair(iters, Side::Plain))
    });
    group.bench_function(BenchmarkId::new("log_manager_read_range", "1MiB"), |b| {
        b.iter_custom(|iters| pair(iters, Side::Log))
    });
    group.finish();
    report("read: log_manager_read_range / plain_file_read", totals.get());
}

/// Prints the throughput ratio of the interleaved sums (same bytes on both sides).
fn report(what: &str, (plain, log): (Duration, Duration)) {
    let ratio = plain.as_secs_f64() / log.as_secs_f64();
    println!(
        "interleaved ratio {what}: {:.1}% (plain {:.3} s, log {:.3} s summed)",
        ratio * 100.0,
        plain.as_secs_f64(),
        log.as_secs_f64()
    );
}

criterion_group!(benches, append, read);
criterion_main!(benches);
