//! The segment log's behaviours from spec §3, one by one.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kwire07_protocol::log::{
    LogConfig, LogError, LogManager, PartitionLog, TopicOverrides, Visibility, CLEAN_SHUTDOWN_FILE,
};
use kwire07_protocol::message::{put_compressed_set, put_message_set};
use kwire07_protocol::{Codec, Magic, ProtocolError};

/// A v0 message with a 3-byte payload is 12 bytes long.
fn msg12(tag: u8) -> Vec<u8> {
    let mut out = Vec::new();
    put_message_set(&mut out, Magic::V0, &[[tag, tag, tag]]).unwrap();
    assert_eq!(out.len(), 12);
    out
}

fn set_of(magic: Magic, payloads: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    put_message_set(&mut out, magic, payloads).unwrap();
    out
}

const T0: u64 = 1_700_000_000_000;

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

struct Clock(Arc<AtomicU64>);
impl Clock {
    fn new() -> Self {
        Clock(Arc::new(AtomicU64::new(T0)))
    }
    fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst)
    }
    fn func(&self) -> Arc<dyn Fn() -> SystemTime + Send + Sync> {
        let c = self.0.clone();
        Arc::new(move || at(c.load(Ordering::SeqCst)))
    }
}

fn config() -> LogConfig {
    LogConfig { flush_interval_messages: 1_000_000, ..LogConfig::default() }
}

fn open(dir: &Path, cfg: LogConfig) -> PartitionLog {
    PartitionLog::open(dir.join("t-0"), cfg, true, at(T0)).unwrap()
}

fn segment_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    v.sort();
    v
}

fn set_mtime(path: &Path, ms: u64) {
    fs::OpenOptions::new().write(true).open(path).unwrap().set_modified(at(ms)).unwrap();
}

#[test]
fn layout_and_byte_for_byte_storage() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    let v0 = set_of(Magic::V0, &[b"hello", b"world"]);
    let info = logs.append("events", 0, &v0).unwrap();
    assert_eq!((info.offset, info.next_offset, info.messages), (0, v0.len() as u64, 2));
    let mut gz = Vec::new();
    put_compressed_set(&mut gz, Codec::Gzip, &[b"a".as_ref(), b"b"]).unwrap();
    let info = logs.append("events", 0, &gz).unwrap();
    assert_eq!((info.offset, info.messages), (v0.len() as u64, 2));

    let file = tmp.path().join("events-0").join("00000000000000000000.kafka");
    assert_eq!(fs::read(&file).unwrap(), [v0.clone(), gz.clone()].concat(), "stored exactly as sent");
    let slice = logs.read("events", 0, 0, 1 << 20).unwrap().unwrap();
    assert_eq!(slice.to_bytes().unwrap().as_ref(), [v0, gz].concat().as_slice());
    assert_eq!(slice.path(), file.as_path());
}

#[test]
fn append_trims_cut_off_tail_and_rejects_bad_sets_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = open(tmp.path(), config());
    let good = set_of(Magic::V1, &[b"one", b"two"]);
    let mut with_tail = good.clone();
    with_tail.extend(&msg12(9)[..7]);
    let info = log.append(&with_tail, at(T0)).unwrap();
    assert_eq!(info.bytes, good.len() as u64);
    assert_eq!(log.written_end(), good.len() as u64);

    // First message incomplete: an error and nothing written.
    let err = log.append(&msg12(1)[..8], at(T0)).unwrap_err();
    assert!(matches!(err, LogError::InvalidMessageSet(ProtocolError::MessageLargerThanFetchSize { .. })), "{err}");

    // A corrupt message after a good one: the whole set is refused.
    let mut bad = [msg12(1), msg12(2)].concat();
    bad[20] ^= 0x40;
    assert!(matches!(log.append(&bad, at(T0)), Err(LogError::InvalidMessageSet(ProtocolError::CrcMismatch { .. }))));

    // A bad CRC inside a compressed wrapper is found too.
    let mut inner = set_of(Magic::V1, &[b"inner"]);
    let n = inner.len();
    inner[n - 1] ^= 1;
    let mut wrapper = Vec::new();
    kwire07_protocol::message::put_message(
        &mut wrapper,
        Magic::V1,
        Codec::Snappy,
        &kwire07_protocol::compression::compress(Codec::Snappy, &inner),
    )
    .unwrap();
    assert!(matches!(
        log.append(&wrapper, at(T0)),
        Err(LogError::InvalidMessageSet(ProtocolError::CrcMismatch { .. }))
    ));

    // Oversized payloads are their own error (0.7 drops these silently).
    let mut cfg = config();
    cfg.max_message_size = Some(2);
    log.set_config(cfg, at(T0)).unwrap();
    assert!(matches!(log.append(&msg12(3), at(T0)), Err(LogError::MessageTooLarge { size: 3, max: 2, .. })));

    assert_eq!(log.written_end(), good.len() as u64, "nothing from the refused sets was written");
    // An empty set appends nothing.
    assert_eq!(log.append(&[], at(T0)).unwrap().bytes, 0);
}

#[test]
fn roll_by_size_happens_before_append_when_strictly_larger() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = open(tmp.path(), LogConfig { segment_bytes: 24, ..config() });
    for i in 0..2 {
        log.append(&msg12(i), at(T0)).unwrap();
    }
    // 24 bytes is not strictly larger than 24: no roll.
    log.append(&msg12(2), at(T0)).unwrap();
    assert_eq!(log.segments().len(), 1);
    // Now 36 > 24: roll before this append.
    let info = log.append(&msg12(3), at(T0)).unwrap();
    assert_eq!(info.offset, 36);
    let segs = log.segments();
    assert_eq!(segs.iter().map(|s| (s.start, s.size)).collect::<Vec<_>>(), vec![(0, 36), (36, 12)]);
    assert_eq!(
        segment_names(&tmp.path().join("t-0")),
        vec!["00000000000000000000.kafka", "00000000000000000036.kafka"]
    );
    assert_eq!(segs[0].flushed, 36, "a rolled segment is flushed");
}

#[test]
fn roll_by_age_counts_from_first_append() {
    let tmp = tempfile::tempdir().unwrap();
    let hour = 3_600_000;
    let mut log = open(tmp.path(), LogConfig { roll_age: Some(Duration::from_millis(hour)), ..config() });
    log.append(&msg12(0), at(T0 + 10)).unwrap();
    log.append(&msg12(1), at(T0 + 10 + hour)).unwrap();
    assert_eq!(log.segments().len(), 1, "exactly the roll age is not older");
    log.append(&msg12(2), at(T0 + 11 + hour)).unwrap();
    assert_eq!(log.segments().iter().map(|s| s.start).collect::<Vec<_>>(), vec![0, 24]);
    // The new segment's clock starts at its own first append.
    log.append(&msg12(3), at(T0 + 11 + 2 * hour)).unwrap();
    assert_eq!(log.segments().len(), 2);
}

#[test]
fn flush_by_count_and_visibility_after_flush() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = LogConfig { flush_interval_messages: 3, visibility: Visibility::AfterFlush, ..config() };
    let mut log = open(tmp.path(), cfg);
    log.append(&msg12(0), at(T0)).unwrap();
    log.append(&msg12(1), at(T0)).unwrap();
    assert_eq!((log.written_end(), log.flushed_end(), log.end_offset()), (24, 0, 0));
    // Reads, the range check and OFFSETS all use the flushed end.
    assert_eq!(log.read_slice(0, 1000).unwrap().len(), 0);
    assert!(matches!(log.read_slice(12, 1000), Err(LogError::OffsetOutOfRange { offset: 12, start: 0, end: 0 })));
    assert_eq!(log.offsets_before(-1, 10, at(T0)).unwrap(), vec![0]);
    // A wrapper of 3 counts as 3 messages: the counter reaches 5 ≥ 3 and flushes.
    let mut w = Vec::new();
    put_compressed_set(&mut w, Codec::Gzip, &[b"a".as_ref(), b"b", b"c"]).unwrap();
    log.append(&w, at(T0)).unwrap();
    let end = 24 + w.len() as u64;
    assert_eq!((log.flushed_end(), log.end_offset(), log.unflushed_messages()), (end, end, 0));
    assert_eq!(log.read_slice(12, 1000).unwrap().len(), end - 12);
    assert_eq!(log.offsets_before(-1, 10, at(T0)).unwrap(), vec![end as i64, 0]);
}

#[test]
fn flush_by_time() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = LogConfig { flush_interval: Duration::from_millis(3000), visibility: Visibility::AfterFlush, ..config() };
    let clock = Clock::new();
    let logs = LogManager::open_with_clock(tmp.path(), cfg, HashMap::new(), clock.func()).unwrap();
    logs.append("t", 0, &msg12(0)).unwrap();
    clock.set(T0 + 2999);
    assert_eq!(logs.flush_due().unwrap(), 0);
    assert_eq!(logs.offsets_before("t", 0, -1, 5).unwrap(), vec![0]);
    clock.set(T0 + 3000);
    assert_eq!(logs.flush_due().unwrap(), 1);
    assert_eq!(logs.offsets_before("t", 0, -1, 5).unwrap(), vec![12, 0]);
    // Nothing unflushed: nothing to do.
    clock.set(T0 + 10_000);
    assert_eq!(logs.flush_due().unwrap(), 0);
}

#[test]
fn visible_after_append_is_the_default_and_consistent() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = open(tmp.path(), config());
    log.append(&msg12(0), at(T0)).unwrap();
    assert_eq!((log.flushed_end(), log.end_offset()), (0, 12));
    assert_eq!(log.read(0, 100).unwrap().len(), 12);
    assert_eq!(log.read_slice(12, 100).unwrap().len(), 0, "offset == end is empty, not an error");
    assert!(matches!(log.read_slice(13, 100), Err(LogError::OffsetOutOfRange { end: 12, .. })));
    assert_eq!(log.offsets_before(-1, 10, at(T0)).unwrap(), vec![12, 0]);
}

#[test]
fn reads_never_cross_a_segment_boundary() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = open(tmp.path(), config());
    for i in 0..3 {
        log.append(&msg12(i), at(T0)).unwrap();
        log.roll(at(T0)).unwrap();
    }
    log.append(&msg12(3), at(T0)).unwrap();
    assert_eq!(log.segments().iter().map(|s| s.start).collect::<Vec<_>>(), vec![0, 12, 24, 36]);
    let s = log.read_slice(0, 1000).unwrap();
    assert_eq!((s.segment_start(), s.position(), s.len()), (0, 0, 12));
    let s = log.read_slice(5, 1000).unwrap();
    assert_eq!((s.segment_start(), s.position(), s.len(), s.offset()), (0, 5, 7, 5));
    let s = log.read_slice(12, 5).unwrap();
    assert_eq!((s.segment_start(), s.len()), (12, 5));
    let s = log.read_slice(36, 1000).unwrap();
    assert_eq!(s.to_bytes().unwrap().as_ref(), msg12(3).as_slice());
    assert_eq!(log.read_slice(48, 1000).unwrap().len(), 0);
    assert_eq!(log.read_slice(0, -5).unwrap().len(), 0, "negative max size reads nothing");
    assert!(matches!(log.read_slice(-1, 10), Err(LogError::OffsetOutOfRange { .. })));
    let mut buf = b"prefix".to_vec();
    log.read_slice(24, 100).unwrap().read_into(&mut buf).unwrap();
    assert_eq!(buf, [b"prefix".to_vec(), msg12(2)].concat());
    // Rolling an empty active segment does nothing.
    log.roll(at(T0)).unwrap();
    log.roll(at(T0)).unwrap();
    assert_eq!(log.segments().len(), 5);
    log.roll(at(T0)).unwrap();
    assert_eq!(log.segments().len(), 5);
}

/// Kafka's own test: segments at 0, 108, 216 and an end at 240.
#[test]
fn offsets_before_matches_spec_3_7() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = open(tmp.path(), config());
    for seg in 0..2 {
        for i in 0..9 {
            log.append(&msg12(seg * 10 + i), at(T0)).unwrap();
        }
        log.roll(at(T0)).unwrap();
    }
    log.append(&[msg12(90), msg12(91)].concat(), at(T0)).unwrap();
    let segs = log.segments();
    assert_eq!(segs.iter().map(|s| s.start).collect::<Vec<_>>(), vec![0, 108, 216]);
    for (s, mtime) in segs.iter().zip([T0 - 3000, T0 - 2000, T0 - 1000]) {
        set_mtime(&s.path, mtime);
    }
    let now = at(T0);
    assert_eq!(log.offsets_before(-1, 10, now).unwrap(), vec![240, 216, 108, 0]);
    assert_eq!(log.offsets_before(-1, 2, now).unwrap(), vec![240, 216]);
    assert_eq!(log.offsets_before(-2, 10, now).unwrap(), vec![0]);
    assert_eq!(log.offsets_before(-1, 0, now).unwrap(), Vec::<i64>::new());
    assert_eq!(log.offsets_before((T0 - 3001) as i64, 10, now).unwrap(), Vec::<i64>::new());
    assert_eq!(log.offsets_before((T0 - 3000) as i64, 10, now).unwrap(), vec![0]);
    assert_eq!(log.offsets_before((T0 - 1500) as i64, 10, now).unwrap(), vec![108, 0]);
    assert_eq!(log.offsets_before((T0 - 1500) as i64, 1, now).unwrap(), vec![108]);
    assert_eq!(log.offsets_before(T0 as i64, 10, now).unwrap(), vec![240, 216, 108, 0]);

    // With the active segment empty, the end equals its start and is listed once.
    log.roll(now).unwrap();
    assert_eq!(log.offsets_before(-1, 10, now).unwrap(), vec![240, 216, 108, 0]);
}

#[test]
fn unknown_partitions_read_empty_and_offsets_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    assert!(logs.read("nope", 0, 0, 100).unwrap().is_none());
    assert_eq!(logs.offsets_before("nope", 0, -1, 10).unwrap(), vec![0]);
    assert_eq!(logs.offsets_before("nope", 0, -2, 10).unwrap(), vec![0]);
    assert_eq!(logs.offsets_before("nope", 0, 12345, 10).unwrap(), Vec::<i64>::new());
    assert!(segment_names(tmp.path()).is_empty(), "reads create nothing");
}

#[test]
fn retention_by_age_is_a_take_while_and_never_goes_back_to_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let hour = 3_600_000u64;
    let cfg = LogConfig { retention_age: Some(Duration::from_millis(hour)), ..config() };
    let mut log = open(tmp.path(), cfg);
    for i in 0..4 {
        log.append(&msg12(i), at(T0)).unwrap();
        log.roll(at(T0)).unwrap();
    }
    log.append(&msg12(9), at(T0)).unwrap();
    let segs = log.segments();
    assert_eq!(segs.len(), 5);
    let now = T0 + 10 * hour;
    // Old, old, young, old, (active) old: the take-while stops at the young one.
    for (s, m) in segs.iter().zip([0, 0, now, 0, 0]) {
        set_mtime(&s.path, m);
    }
    let info = log.apply_retention(at(now)).unwrap();
    assert_eq!((info.segments_deleted, info.bytes_deleted), (2, 24));
    assert_eq!(log.start_offset(), 24);
    assert!(matches!(log.read_slice(0, 10), Err(LogError::OffsetOutOfRange { start: 24, .. })));

    // Everything old and the active segment holds data: roll first, keep an empty segment at the end.
    for s in log.segments() {
        set_mtime(&s.path, 0);
    }
    log.apply_retention(at(now)).unwrap();
    let segs = log.segments();
    assert_eq!(segs.iter().map(|s| (s.start, s.size)).collect::<Vec<_>>(), vec![(60, 0)]);
    assert_eq!(log.offsets_before(-2, 1, at(now)).unwrap(), vec![60]);
    assert_eq!(log.end_offset(), 60);

    // Only an empty, old active segment: kept, its mtime reset to now.
    set_mtime(&segs[0].path, 0);
    assert_eq!(log.apply_retention(at(now)).unwrap().segments_deleted, 0);
    let mtime = fs::metadata(&segs[0].path).unwrap().modified().unwrap();
    assert_eq!(mtime, at(now));
    let info = log.append(&msg12(1), at(now)).unwrap();
    assert_eq!(info.offset, 60, "never back to offset 0");
}

#[test]
fn retention_by_size() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = LogConfig { retention_bytes: Some(30), retention_age: None, ..config() };
    let mut log = open(tmp.path(), cfg);
    for i in 0..4 {
        log.append(&msg12(i), at(T0)).unwrap();
        log.roll(at(T0)).unwrap();
    }
    log.append(&msg12(9), at(T0)).unwrap();
    log.flush(at(T0)).unwrap();
    // Total 60 ≥ 30: excess 30 deletes two 12-byte segments (30−12−12 = 6 < 12 stops).
    let info = log.apply_retention(at(T0)).unwrap();
    assert_eq!(info.segments_deleted, 2);
    assert_eq!(log.start_offset(), 24);
    // Total 36 ≥ 30: excess 6 < 12, nothing more.
    assert_eq!(log.apply_retention(at(T0)).unwrap().segments_deleted, 0);
    // A limit of 0 would delete everything: the active segment is rolled and an empty one stays.
    let mut cfg = log.config().clone();
    cfg.retention_bytes = Some(0);
    log.set_config(cfg, at(T0)).unwrap();
    log.apply_retention(at(T0)).unwrap();
    assert_eq!(log.segments().iter().map(|s| (s.start, s.size)).collect::<Vec<_>>(), vec![(60, 0)]);
}

#[test]
fn recovery_truncates_torn_and_corrupt_tails() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    {
        let mut log = open(tmp.path(), config());
        log.append(&[msg12(0), msg12(1)].concat(), at(T0)).unwrap();
        log.flush(at(T0)).unwrap();
        log.append(&msg12(2), at(T0)).unwrap();
        // dropped without close: a crash
    }
    let file = dir.join("00000000000000000000.kafka");
    // A corrupt third message and a torn fourth.
    let mut bytes = fs::read(&file).unwrap();
    bytes[34] ^= 0xff;
    bytes.extend(&msg12(3)[..5]);
    fs::write(&file, &bytes).unwrap();
    let log = open(tmp.path(), config());
    assert_eq!((log.written_end(), log.flushed_end()), (24, 24));
    assert_eq!(fs::metadata(&file).unwrap().len(), 24);

    // Without recovery (clean shutdown) the file length is trusted as is.
    drop(log);
    fs::write(&file, [msg12(0), vec![0, 0, 0, 3]].concat()).unwrap();
    let log = PartitionLog::open(&dir, config(), false, at(T0)).unwrap();
    assert_eq!(log.written_end(), 16);
    drop(log);
    // Lengths below 5, unknown magic and a bad codec all stop the scan.
    for tail in [vec![0, 0, 0, 4, 0, 0, 0, 0], vec![0, 0, 0, 5, 7, 0, 0, 0, 0], vec![0, 0, 0, 6, 1, 3, 0, 0, 0, 0]] {
        fs::write(&file, [msg12(0), tail, msg12(1)].concat()).unwrap();
        assert_eq!(open(tmp.path(), config()).written_end(), 12);
    }
}

#[test]
fn clean_shutdown_marker_skips_recovery_once() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    logs.append("t", 0, &msg12(0)).unwrap();
    logs.shutdown().unwrap();
    assert!(matches!(logs.append("t", 0, &msg12(1)), Err(LogError::Closed(_))));
    assert!(tmp.path().join(CLEAN_SHUTDOWN_FILE).exists());
    drop(logs);

    // Garbage after a clean shutdown is trusted (no scan), like 0.7.
    let file = tmp.path().join("t-0/00000000000000000000.kafka");
    let mut f = fs::OpenOptions::new().append(true).open(&file).unwrap();
    std::io::Write::write_all(&mut f, &[0, 0, 0, 1]).unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    assert!(!logs.recovered());
    assert!(!tmp.path().join(CLEAN_SHUTDOWN_FILE).exists(), "the marker is consumed");
    assert_eq!(logs.offsets_before("t", 0, -1, 1).unwrap(), vec![16]);
    drop(logs);
    // The next unclean start recovers.
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    assert!(logs.recovered());
    assert_eq!(logs.offsets_before("t", 0, -1, 1).unwrap(), vec![12]);
}

#[test]
fn non_contiguous_segments_fail_to_open_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("00000000000000000000.kafka"), msg12(0)).unwrap();
    fs::write(dir.join("00000000000000000013.kafka"), msg12(1)).unwrap();
    let err = PartitionLog::open(&dir, config(), true, at(T0)).unwrap_err();
    match &err {
        LogError::NonContiguous { first, first_end: 12, second, second_start: 13 } => {
            assert!(first.ends_with("00000000000000000000.kafka"));
            assert!(second.ends_with("00000000000000000013.kafka"));
        }
        other => panic!("{other}"),
    }
    fs::write(dir.join("0000000000000000001x.kafka"), b"").unwrap();
    assert!(matches!(PartitionLog::open(&dir, config(), true, at(T0)), Err(LogError::BadSegmentName(_))));
}

#[test]
fn topic_names_cannot_escape_the_log_dir() {
    let outer = tempfile::tempdir().unwrap();
    let logdir = outer.path().join("logs");
    let logs = LogManager::open(&logdir, config(), HashMap::new()).unwrap();
    let long = "a".repeat(256);
    for bad in [
        "..",
        ".",
        "../escape",
        "a/b",
        "/abs",
        "tab\there",
        "nul\0",
        "del\u{7f}",
        "\u{85}",
        "\u{E000}",
        "\u{FFFF}",
        "",
        long.as_str(),
    ] {
        let err = logs.append(bad, 0, &msg12(0)).unwrap_err();
        assert!(matches!(err, LogError::InvalidTopic(_)), "{bad:?}: {err}");
        assert!(matches!(logs.read(bad, 0, 0, 10), Err(LogError::InvalidTopic(_))), "{bad:?}");
        assert!(matches!(logs.offsets_before(bad, 0, -1, 1), Err(LogError::InvalidTopic(_))), "{bad:?}");
    }
    assert!(matches!(logs.append("ok", -1, &msg12(0)), Err(LogError::InvalidPartition(-1))));
    assert_eq!(segment_names(outer.path()), vec!["logs"], "nothing created beside the log dir");
    assert!(segment_names(&logdir).is_empty(), "nothing created inside it");
    // Dashes and dots inside a name are fine; the partition is after the last dash.
    logs.append("my-topic.v2", 3, &msg12(0)).unwrap();
    assert_eq!(segment_names(&logdir), vec!["my-topic.v2-3"]);
    drop(logs);
    let logs = LogManager::open(&logdir, config(), HashMap::new()).unwrap();
    assert_eq!(logs.topics(), vec![("my-topic.v2".to_string(), vec![3])]);
}

#[test]
fn junk_in_the_log_dir_is_skipped_with_warnings() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("stray.txt"), b"x").unwrap();
    fs::create_dir(tmp.path().join("nodash")).unwrap();
    fs::create_dir(tmp.path().join("t-x")).unwrap();
    fs::create_dir(tmp.path().join("..-0")).unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    assert_eq!(logs.load_warnings().len(), 4, "{:?}", logs.load_warnings());
    assert!(logs.topics().is_empty());
}

#[test]
fn topic_overrides_and_live_config_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut overrides = HashMap::new();
    overrides.insert("small".to_string(), TopicOverrides { segment_bytes: Some(10), ..Default::default() });
    let cfg = LogConfig { visibility: Visibility::AfterFlush, ..config() };
    let logs = LogManager::open(tmp.path(), cfg, overrides).unwrap();
    for i in 0..3 {
        logs.append("small", 0, &msg12(i)).unwrap();
        logs.append("big", 0, &msg12(i)).unwrap();
    }
    let segs = |t: &str| logs.get(t, 0).unwrap().lock().unwrap().segments().len();
    assert_eq!((segs("small"), segs("big")), (3, 1));

    // New roll size, takes effect on the next append.
    logs.set_topic_overrides("big", TopicOverrides { segment_bytes: Some(20), ..Default::default() }).unwrap();
    logs.append("big", 0, &msg12(9)).unwrap();
    assert_eq!(segs("big"), 2);
    // A lower flush threshold flushes at once.
    let flushed = |t: &str| logs.get(t, 0).unwrap().lock().unwrap().flushed_end();
    let before = flushed("small");
    assert!(before < 36);
    logs.set_topic_overrides("small", TopicOverrides { flush_interval_messages: Some(1), ..Default::default() })
        .unwrap();
    assert_eq!(flushed("small"), 36);
    // New retention applies at the next cleanup.
    logs.set_topic_overrides("big", TopicOverrides { retention_bytes: Some(1), ..Default::default() }).unwrap();
    logs.flush_all().unwrap();
    // Total 48, excess 47: the 36-byte segment goes (47 − 36 ≥ 0), the 12-byte one stays.
    logs.cleanup().unwrap();
    assert_eq!(logs.offsets_before("big", 0, -2, 1).unwrap(), vec![36]);
}

#[test]
fn delete_topic_removes_files_but_open_slices_stay_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    logs.append("gone", 0, &msg12(1)).unwrap();
    logs.append("gone", 1, &msg12(2)).unwrap();
    logs.append("kept", 0, &msg12(3)).unwrap();
    let handle = logs.get("gone", 0).unwrap();
    let slice = logs.read("gone", 0, 0, 100).unwrap().unwrap();
    assert_eq!(logs.delete_topic("gone").unwrap(), 2);
    assert_eq!(segment_names(tmp.path()), vec!["kept-0"]);
    assert!(logs.read("gone", 0, 0, 100).unwrap().is_none());
    assert_eq!(slice.to_bytes().unwrap().as_ref(), msg12(1).as_slice());
    assert!(matches!(handle.lock().unwrap().append(&msg12(4), at(T0)), Err(LogError::Closed(_))));
    // Producing again starts a fresh log at 0.
    assert_eq!(logs.append("gone", 0, &msg12(5)).unwrap().offset, 0);
}

#[test]
fn concurrent_appends_and_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let logs =
        Arc::new(LogManager::open(tmp.path(), LogConfig { segment_bytes: 500, ..config() }, HashMap::new()).unwrap());
    let writers: Vec<_> = (0..4u8)
        .map(|w| {
            let logs = logs.clone();
            std::thread::spawn(move || {
                for i in 0..200u8 {
                    logs.append("c", (w % 2) as i32, &msg12(w.wrapping_mul(50).wrapping_add(i))).unwrap();
                }
            })
        })
        .collect();
    let reader = {
        let logs = logs.clone();
        std::thread::spawn(move || {
            for _ in 0..200 {
                if let Some(s) = logs.read("c", 0, 0, 1 << 20).unwrap() {
                    let bytes = s.to_bytes().unwrap();
                    // Whatever is visible is whole, valid messages.
                    kwire07_protocol::validate_message_set(&bytes, 0, None, &Default::default()).unwrap();
                    assert_eq!(bytes.len() % 12, 0);
                }
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    reader.join().unwrap();
    for p in 0..2 {
        let end = logs.offsets_before("c", p, -1, 1).unwrap()[0];
        assert_eq!(end, 2 * 200 * 12);
    }
}

#[test]
fn fetch_error_codes_follow_spec_1_9() {
    use kwire07_protocol::ErrorCode;
    let tmp = tempfile::tempdir().unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    logs.append("t", 0, &msg12(0)).unwrap();
    let code = |r: Result<_, LogError>| r.err().map(|e| e.fetch_error_code());
    assert_eq!(code(logs.read("t", 0, 13, 10).map(|_| ())), Some(ErrorCode::OffsetOutOfRange));
    assert_eq!(code(logs.read("t", 0, -1, 10).map(|_| ())), Some(ErrorCode::OffsetOutOfRange));
    assert_eq!(code(logs.read("a/b", 0, 0, 10).map(|_| ())), Some(ErrorCode::Unknown));
    assert_eq!(code(logs.append("t", -2, &msg12(0)).map(|_| ())), Some(ErrorCode::WrongPartition));
    assert_eq!(code(logs.read("t", 0, 12, 10).map(|_| ())), None);
}

#[test]
fn log_manager_is_shareable_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<LogManager>();
    assert_send_sync::<kwire07_protocol::log::FileSlice>();
}

#[test]
fn per_topic_max_message_size_and_hidden_files() {
    let tmp = tempfile::tempdir().unwrap();
    // A broker's hidden files (its topic configuration) are neither logs nor worth a warning.
    fs::write(tmp.path().join(".kwire-topic-config.json"), b"{}").unwrap();
    let logs = LogManager::open(tmp.path(), config(), HashMap::new()).unwrap();
    assert!(logs.load_warnings().is_empty(), "{:?}", logs.load_warnings());
    logs.append("t", 0, &msg12(1)).unwrap();
    // msg12 carries a 3-byte payload.
    logs.set_topic_overrides("t", TopicOverrides { max_message_size: Some(2), ..Default::default() }).unwrap();
    assert!(matches!(logs.append("t", 0, &msg12(2)), Err(LogError::MessageTooLarge { size: 3, max: 2, .. })));
    logs.append("other", 0, &msg12(3)).unwrap();
    logs.set_topic_overrides("t", TopicOverrides::default()).unwrap();
    logs.append("t", 0, &msg12(4)).unwrap();
}
