//! Group commit: `log.flush.interval`'s fsyncs run off the append path (deferred appends, flush
//! tickets, the background flusher), and nothing counts as flushed before its fsync returned.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kwire07_protocol::log::{LogConfig, LogError, LogManager, PartitionLog, Visibility};
use kwire07_protocol::message::put_message_set;
use kwire07_protocol::Magic;

/// A v0 message with a 3-byte payload is 12 bytes long.
fn msg12(tag: u8) -> Vec<u8> {
    let mut out = Vec::new();
    put_message_set(&mut out, Magic::V0, &[[tag, tag, tag]]).unwrap();
    out
}

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_700_000_000_000 + ms)
}

fn config(flush_every: u64, visibility: Visibility) -> LogConfig {
    LogConfig { flush_interval_messages: flush_every, visibility, ..LogConfig::default() }
}

#[test]
fn deferred_append_reports_the_due_flush_and_does_not_fsync() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(tmp.path().join("t-0"), config(2, Visibility::AfterFlush), true, at(0)).unwrap();
    let (info, due) = log.append_deferred(&msg12(0), at(0)).unwrap();
    assert_eq!((info.offset, info.next_offset, due), (0, 12, false));
    let (info, due) = log.append_deferred(&msg12(1), at(0)).unwrap();
    assert_eq!((info.next_offset, due), (24, true));
    // Nothing flushed yet, so with AfterFlush nothing is visible either.
    assert_eq!((log.written_end(), log.flushed_end(), log.end_offset()), (24, 0, 0));
    assert_eq!(log.unflushed_messages(), 2);

    let ticket = log.begin_flush(at(1)).expect("unflushed data");
    assert_eq!(ticket.offset(), 24);
    // The counter restarts at once: appends during the fsync count towards the next flush.
    assert_eq!(log.unflushed_messages(), 0);
    let (_, due) = log.append_deferred(&msg12(2), at(1)).unwrap();
    assert!(!due);
    ticket.sync().unwrap();
    log.finish_flush(ticket);
    // The mark moves to the captured position only, not over the append made meanwhile.
    assert_eq!((log.written_end(), log.flushed_end(), log.end_offset()), (36, 24, 24));
    assert_eq!(log.read_slice(0, 1000).unwrap().len(), 24);
}

#[test]
fn a_failed_flush_gives_its_messages_back_and_nothing_flushed_twice_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(tmp.path().join("t-0"), config(3, Visibility::AfterAppend), true, at(0)).unwrap();
    log.append_deferred(&msg12(0), at(0)).unwrap();
    log.append_deferred(&msg12(1), at(0)).unwrap();
    let ticket = log.begin_flush(at(0)).unwrap();
    // As if the fsync had failed: the two messages count as unflushed again.
    log.abort_flush(ticket);
    assert_eq!((log.unflushed_messages(), log.flushed_end()), (2, 0));
    let (_, due) = log.append_deferred(&msg12(2), at(0)).unwrap();
    assert!(due, "the threshold counts the messages of the failed flush");
    // Two flushes in flight at once: finishing them in either order keeps the furthest mark.
    let first = log.begin_flush(at(0)).unwrap();
    log.append_deferred(&msg12(3), at(0)).unwrap();
    let second = log.begin_flush(at(0)).unwrap();
    second.sync().unwrap();
    first.sync().unwrap();
    log.finish_flush(second);
    log.finish_flush(first);
    assert_eq!(log.flushed_end(), 48);
    assert!(log.begin_flush(at(0)).is_none(), "nothing left to flush");
}

#[test]
fn a_flush_finishing_after_a_roll_leaves_the_new_segment_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = LogConfig { segment_bytes: 20, ..config(1000, Visibility::AfterAppend) };
    let mut log = PartitionLog::open(tmp.path().join("t-0"), cfg, true, at(0)).unwrap();
    log.append_deferred(&msg12(0), at(0)).unwrap();
    log.append_deferred(&msg12(1), at(0)).unwrap();
    let ticket = log.begin_flush(at(0)).unwrap();
    // The active segment (24 bytes) is over 20: this append rolls, and the roll flushes it.
    log.append_deferred(&msg12(2), at(0)).unwrap();
    let segments = log.segments();
    assert_eq!(segments.len(), 2);
    assert_eq!((segments[0].size, segments[0].flushed), (24, 24));
    ticket.sync().unwrap();
    log.finish_flush(ticket);
    let segments = log.segments();
    assert_eq!((segments[1].start, segments[1].size, segments[1].flushed), (24, 12, 0));
    assert_eq!(log.flushed_end(), 24);
}

#[test]
fn manager_flush_points_and_flush_to() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = LogManager::open(tmp.path(), config(2, Visibility::AfterFlush), HashMap::new()).unwrap();
    let first = logs.append_deferred("t", 0, &msg12(0)).unwrap();
    assert!(first.flush.is_none());
    let second = logs.append_deferred("t", 0, &msg12(1)).unwrap();
    let point = second.flush.expect("the second message reaches log.flush.interval");
    assert_eq!(point.offset(), 24);
    // Without a background flusher nothing happens until someone flushes.
    assert_eq!(logs.offsets_before("t", 0, -1, 5).unwrap(), vec![0]);
    logs.flush_to(&point).unwrap();
    assert_eq!(logs.offsets_before("t", 0, -1, 5).unwrap(), vec![24, 0]);
    // Already covered: returns at once (and is still fine after the log is gone).
    logs.flush_to(&point).unwrap();
    logs.delete_topic("t").unwrap();
    logs.flush_to(&point).unwrap();
}

#[test]
fn background_flusher_flushes_what_appends_ask_for() {
    let tmp = tempfile::tempdir().unwrap();
    let mut logs = LogManager::open(tmp.path(), config(5, Visibility::AfterFlush), HashMap::new()).unwrap();
    logs.start_background_flush().unwrap();
    let mut last = None;
    for i in 0..50u8 {
        if let Some(p) = logs.append_deferred("t", 0, &msg12(i)).unwrap().flush {
            last = Some(p);
        }
    }
    let last = last.expect("flushes were asked for");
    // A flush that starts late also takes the messages appended meanwhile and restarts the
    // count, so the last point asked for lies within one interval (5 messages) of the end.
    assert!((552..=600).contains(&last.offset()), "last flush point {}", last.offset());
    // The flusher gets there on its own; poll with a generous bound (no timing assertion).
    let handle = logs.get("t", 0).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while handle.lock().unwrap().flushed_end() < last.offset() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    {
        let log = handle.lock().unwrap();
        assert!(log.flushed_end() >= last.offset());
        assert_eq!(log.written_end(), 600);
        // What no flush has covered yet is less than one interval: nothing was forgotten.
        assert!(log.unflushed_messages() < 5, "{} unflushed", log.unflushed_messages());
    }
    assert_eq!(logs.take_flush_errors().1, 0);
    assert!(logs.take_flush_errors().0.is_empty());
    logs.shutdown().unwrap();
    assert!(matches!(logs.append_deferred("t", 0, &msg12(0)), Err(LogError::Closed(_))));
}

#[test]
fn try_read_never_waits_for_a_locked_partition() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = LogManager::open(tmp.path(), config(1000, Visibility::AfterAppend), HashMap::new()).unwrap();
    logs.append("t", 0, &msg12(0)).unwrap();
    let slice = logs.try_read("t", 0, 0, 100).expect("not locked").unwrap().expect("log exists");
    assert_eq!(slice.len(), 12);
    assert!(logs.try_read("none", 0, 0, 100).expect("not locked").unwrap().is_none());
    assert!(logs.try_read("../x", 0, 0, 100).expect("checked first").is_err());
    let handle = logs.get("t", 0).unwrap();
    let guard = handle.lock().unwrap();
    assert!(logs.try_read("t", 0, 0, 100).is_none(), "locked: hand it to a blocking thread");
    drop(guard);
    assert!(logs.try_read("t", 0, 0, 100).is_some());
}
