//! Round trips against a live `kwire07-broker` process: 0.7 semantics of every request type,
//! segment rolls, OFFSETS, restarts.

use kwire07_test_support as common;

use common::*;

/// Spec §1.4's example frame: topic "t1", partition 0, one v0 message "hello".
const SPEC_PRODUCE: &str = "0000001c000000027431000000000000000e0000000a003610a68668656c6c6f";

#[test]
fn spec_example_produce_is_stored_byte_for_byte_and_fetched() {
    let b = broker(BrokerOptions::default());
    let mut c = Conn::connect(b.addr());
    c.send(&hex(SPEC_PRODUCE));
    // Same connection: the produce is applied before this fetch is answered.
    let (err, data) = c.fetch("t1", 0, 0, 1000);
    assert_eq!(err, 0);
    assert_eq!(data, hex("0000000a003610a68668656c6c6f"));
    let segment = b.log_dir().join("t1-0").join("00000000000000000000.kafka");
    assert_eq!(std::fs::read(segment).unwrap(), hex("0000000a003610a68668656c6c6f"));
    // At the end: empty; past the end or negative: OffsetOutOfRange.
    assert_eq!(c.fetch("t1", 0, 14, 1000), (0, vec![]));
    assert_eq!(c.fetch("t1", 0, 15, 1000).0, 1);
    assert_eq!(c.fetch("t1", 0, -1, 1000).0, 1);
    assert_eq!(c.offsets("t1", 0, -1, 10), (0, vec![14, 0]));
    assert_eq!(c.offsets("t1", 0, -2, 10), (0, vec![0]));
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn magic_0_and_1_mixed_are_kept_exactly_and_offsets_advance_by_bytes() {
    let b = broker(BrokerOptions::default());
    let mut c = Conn::connect(b.addr());
    let mut set = msg_v0(b"zero");
    set.extend(msg_v1(0, b"one"));
    set.extend(msg_v0(b""));
    c.produce("mixed", 0, &set);
    let (err, data) = c.fetch("mixed", 0, 0, 1 << 20);
    assert_eq!(err, 0);
    assert_eq!(data, set, "stored and served unchanged (magic 0 stays magic 0)");
    let msgs = parse_set(&data, 0);
    let got: Vec<(i64, i64, &[u8])> = msgs.iter().map(|(o, n, p)| (*o, *n, p.as_slice())).collect();
    assert_eq!(got, vec![(0, 13, &b"zero"[..]), (13, 26, &b"one"[..]), (26, 35, &b""[..])]);
    // A fetch smaller than the data cuts the last message; the reader keeps whole ones.
    let (_, cut) = c.fetch("mixed", 0, 0, 20);
    assert_eq!(cut.len(), 20);
    assert_eq!(parse_set(&cut, 0).len(), 1);
    // Starting mid-log.
    let (_, tail) = c.fetch("mixed", 0, 13, 100);
    assert_eq!(tail, set[13..]);
}

#[test]
fn compressed_wrappers_round_trip_and_decode_deep() {
    use kwire07_protocol::{message::put_compressed_set, Codec, DeepIter};
    let b = broker(BrokerOptions::default());
    let mut c = Conn::connect(b.addr());
    let mut set = Vec::new();
    put_compressed_set(&mut set, Codec::Gzip, &[b"g1".as_slice(), b"g2"]).unwrap();
    put_compressed_set(&mut set, Codec::Snappy, &[b"s1".as_slice(), b"s2", b"s3"]).unwrap();
    c.produce("zipped", 0, &set);
    let (err, data) = c.fetch("zipped", 0, 0, 1 << 20);
    assert_eq!((err, data.as_slice()), (0, set.as_slice()));
    let payloads: Vec<Vec<u8>> = DeepIter::new(data.into(), 0).map(|m| m.expect("valid").payload.to_vec()).collect();
    assert_eq!(payloads, [b"g1".to_vec(), b"g2".to_vec(), b"s1".to_vec(), b"s2".to_vec(), b"s3".to_vec()]);
}

#[test]
fn unknown_topics_and_bad_partitions_follow_0_7() {
    let b = broker(BrokerOptions { num_partitions: Some(2), ..Default::default() });
    let mut c = Conn::connect(b.addr());
    // Unknown topic: FETCH empty with error 0, OFFSETS [0] for -1/-2 and [] for a time; no log.
    assert_eq!(c.fetch("nothing", 0, 0, 100), (0, vec![]));
    assert_eq!(c.fetch("nothing", 1, 12345, 100), (0, vec![]));
    assert_eq!(c.offsets("nothing", 0, -1, 5), (0, vec![0]));
    assert_eq!(c.offsets("nothing", 1, -2, 5), (0, vec![0]));
    assert_eq!(c.offsets("nothing", 0, 1_000, 5), (0, vec![]));
    assert!(!b.log_dir().join("nothing-0").exists());
    // Wrong partition: FETCH error 3, OFFSETS error 3 (0.7 would close; spec 5.4 item 9).
    assert_eq!(c.fetch("nothing", 2, 0, 100), (3, vec![]));
    assert_eq!(c.fetch("nothing", -1, 0, 100), (3, vec![]));
    assert_eq!(c.offsets("nothing", 2, -1, 5), (3, vec![]));
    // Invalid topic name: FETCH error -1; the connection stays usable.
    assert_eq!(c.fetch("../etc", 0, 0, 100), (-1, vec![]));
    assert_eq!(c.fetch("..", 0, 0, 100), (-1, vec![]));
    assert_eq!(c.offsets("a/b", 0, -1, 5).0, -1);
    assert_eq!(c.fetch("nothing", 0, 0, 100), (0, vec![]));
    // A negative max size reads nothing.
    c.produce("neg", 0, &msg_v0(b"x"));
    assert_eq!(c.fetch("neg", 0, 0, -5), (0, vec![]));
    // PRODUCE to a wrong partition: connection closed, nothing written.
    c.produce("nothing", 2, &msg_v0(b"x"));
    assert!(c.is_closed_by_peer());
    assert!(!b.log_dir().join("nothing-2").exists());
    assert!(!b.log_dir().join("nothing-0").exists());
}

#[test]
fn empty_produce_creates_the_log_and_random_partition_spreads() {
    let b = broker(BrokerOptions { num_partitions: Some(3), ..Default::default() });
    let mut c = Conn::connect(b.addr());
    c.produce("empty", 1, &[]);
    assert_eq!(c.offsets("empty", 1, -1, 5), (0, vec![0]));
    assert!(b.log_dir().join("empty-1").join("00000000000000000000.kafka").exists());
    for i in 0..60 {
        c.produce("spread", -1, &msg_v0(format!("m{i}").as_bytes()));
    }
    let mut total = 0;
    let mut used = 0;
    for p in 0..3 {
        let n = c.fetch_all("spread", p, 0).len();
        total += n;
        used += usize::from(n > 0);
    }
    assert_eq!(total, 60);
    assert!(used >= 2, "60 random picks among 3 partitions used only {used}");
}

#[test]
fn multiproduce_and_multifetch_over_several_partitions() {
    let b = broker(BrokerOptions { num_partitions: Some(3), ..Default::default() });
    let mut c = Conn::connect(b.addr());
    let entries: Vec<(&[u8], i32, Vec<u8>)> = vec![
        (b"mp", 0, set_v0(&["a0", "a1"])),
        (b"mp", 2, set_v0(&["c0"])),
        (b"other", 1, set_v0(&["o"])),
        (b"mp", 0, set_v0(&["a2"])),
    ];
    c.send(&multiproduce_frame(&entries));
    let answers = c.multifetch(&[
        ("mp", 0, 0, 1000),
        ("mp", 1, 0, 1000),
        ("mp", 2, 0, 1000),
        ("other", 1, 0, 1000),
        ("mp", 7, 0, 1000),
        ("mp", 0, 9999, 1000),
        ("unknown", 0, 0, 1000),
        ("mp", 0, 11, 1000),
    ]);
    let payloads = |data: &[u8]| parse_set(data, 0).into_iter().map(|(_, _, p)| p).collect::<Vec<_>>();
    assert_eq!(answers[0].0, 0);
    assert_eq!(payloads(&answers[0].1), [b"a0".to_vec(), b"a1".to_vec(), b"a2".to_vec()]);
    assert_eq!(answers[1], (0, vec![]));
    assert_eq!(payloads(&answers[2].1), [b"c0".to_vec()]);
    assert_eq!(payloads(&answers[3].1), [b"o".to_vec()]);
    assert_eq!(answers[4], (3, vec![]));
    assert_eq!(answers[5], (1, vec![]));
    assert_eq!(answers[6], (0, vec![]));
    assert_eq!(payloads(&answers[7].1), [b"a1".to_vec(), b"a2".to_vec()]);

    // A bad entry closes the connection; entries before it stay appended.
    let bad: Vec<(&[u8], i32, Vec<u8>)> = vec![(b"mp", 1, set_v0(&["kept"])), (b"mp", 9, set_v0(&["x"]))];
    c.send(&multiproduce_frame(&bad));
    assert!(c.is_closed_by_peer());
    let mut c = Conn::connect(b.addr());
    assert_eq!(c.fetch_all("mp", 1, 0).len(), 1);
}

#[test]
fn oversized_message_is_dropped_and_the_connection_stays_open() {
    let b = broker(BrokerOptions::default().set("max.message.size", 100));
    let mut c = Conn::connect(b.addr());
    let entries: Vec<(&[u8], i32, Vec<u8>)> = vec![(b"big", 0, msg_v0(&[7u8; 101])), (b"big", 0, msg_v0(&[8u8; 100]))];
    c.send(&multiproduce_frame(&entries));
    c.produce("big", 0, &msg_v0(&[9u8; 500]));
    let got = c.fetch_all("big", 0, 0);
    assert_eq!(got.len(), 1, "only the 100-byte message is stored");
    assert_eq!(got[0].1, vec![8u8; 100]);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let b = broker(BrokerOptions::default());
    let mut c = Conn::connect(b.addr());
    // One write holding produce, fetch, produce, fetch, offsets.
    let mut bytes = produce_frame(b"pipe", 0, &msg_v0(b"first"));
    bytes.extend(fetch_frame(b"pipe", 0, 0, 1000));
    bytes.extend(produce_frame(b"pipe", 0, &msg_v0(b"second")));
    bytes.extend(fetch_frame(b"pipe", 0, 0, 1000));
    bytes.extend(offsets_frame(b"pipe", 0, -1, 1));
    c.send(&bytes);
    let (_, one) = c.response();
    assert_eq!(parse_set(&one, 0).len(), 1);
    let (_, two) = c.response();
    assert_eq!(parse_set(&two, 0).len(), 2);
    let (_, off) = c.response();
    assert_eq!(off[4..], ((14 + 15) as i64).to_be_bytes());
}

#[test]
fn segments_roll_fetches_stop_at_segment_ends_and_offsets_list_them() {
    // log.file.size=100: roll before an append once the active segment exceeds 100 bytes.
    let b = broker(BrokerOptions::default().set("log.file.size", 100));
    let mut c = Conn::connect(b.addr());
    let payload = [b'x'; 41]; // 50-byte entries
    for _ in 0..7 {
        c.produce("roll", 0, &msg_v0(&payload));
    }
    // (A reply on the same connection means every produce before it was applied.)
    assert_eq!(c.offsets("roll", 0, -2, 1), (0, vec![0]));
    // Segments: [0,150) [150,300) [300,350): a roll happens when the active one is > 100.
    let names: Vec<String> = tree(&b.log_dir().join("roll-0"));
    assert_eq!(names, ["00000000000000000000.kafka", "00000000000000000150.kafka", "00000000000000000300.kafka"]);
    assert_eq!(c.offsets("roll", 0, -1, 10), (0, vec![350, 300, 150, 0]));
    assert_eq!(c.offsets("roll", 0, -1, 2), (0, vec![350, 300]));
    assert_eq!(c.offsets("roll", 0, -2, 10), (0, vec![0]));
    // A big fetch from 0 stops at the first segment's end.
    let (err, data) = c.fetch("roll", 0, 0, 10_000);
    assert_eq!((err, data.len()), (0, 150));
    let (_, data) = c.fetch("roll", 0, 200, 10_000);
    assert_eq!(data.len(), 100);
    assert_eq!(c.fetch_all("roll", 0, 0).len(), 7);
}

#[test]
fn sigterm_writes_the_marker_and_a_restart_serves_the_same_data() {
    let mut b = broker(BrokerOptions { num_partitions: Some(2), ..Default::default() }.set("log.file.size", 60));
    let mut c = Conn::connect(b.addr());
    for i in 0..20 {
        c.produce("keep", i % 2, &msg_v0(format!("message {i:03}").as_bytes()));
    }
    let before: Vec<_> = (0..2).map(|p| c.fetch_all("keep", p, 0)).collect();
    assert_eq!(before[0].len() + before[1].len(), 20);
    let status = b.terminate().unwrap();
    assert!(status.success(), "exit status {status}");
    assert!(b.log_dir().join(".kafka_cleanshutdown").exists());
    b.restart().unwrap();
    assert!(b.stderr().contains("clean-shutdown marker found"), "{}", b.stderr());
    assert!(!b.log_dir().join(".kafka_cleanshutdown").exists());
    let mut c = Conn::connect(b.addr());
    let after: Vec<_> = (0..2).map(|p| c.fetch_all("keep", p, 0)).collect();
    assert_eq!(before, after);
    // And it keeps appending where it left off.
    let end = c.offsets("keep", 0, -1, 1).1[0];
    c.produce("keep", 0, &msg_v0(b"after restart"));
    let (_, data) = c.fetch("keep", 0, end, 1000);
    assert_eq!(parse_set(&data, end)[0].2, b"after restart");
}

#[test]
fn config_file_is_read_and_errors_are_one_line() {
    let dir = TempDir::with_prefix("kwire-config").unwrap();
    let file = dir.path().join("server.properties");
    std::fs::write(&file, "brokerid=4\nnum.partitions=5\ntopic.partition.count.map=small:1, big:8\n").unwrap();
    let b = broker(BrokerOptions { args: vec!["--config".into(), file.display().to_string()], ..Default::default() });
    let mut c = Conn::connect(b.addr());
    assert_eq!(c.fetch("any", 4, 0, 10), (0, vec![]));
    assert_eq!(c.fetch("any", 5, 0, 10).0, 3);
    assert_eq!(c.fetch("small", 1, 0, 10).0, 3);
    assert_eq!(c.fetch("big", 7, 0, 10).0, 0);
    drop(b);

    std::fs::write(&file, "brokerid=4\nlog.retention.hours=soon\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire07-broker"))
        .args(["--config", file.to_str().unwrap(), "--log-dir", dir.path().join("l").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("log.retention.hours=\"soon\"") && err.contains("server.properties:2"), "{err}");
}

#[test]
fn flush_visibility_follows_the_time_based_flush_per_topic() {
    // Visible only once flushed (0.7's high-water mark); the message counter never triggers;
    // the timer runs every 100 ms, but only `fast`'s interval is ever due.
    let b = broker(
        BrokerOptions::default()
            .set("kwire.log.visibility", "flush")
            .set("log.flush.interval", 1_000_000)
            .set("log.default.flush.scheduler.interval.ms", 100)
            .set("log.default.flush.interval.ms", 3_600_000)
            .set("topic.flush.intervals.ms", "fast:200"),
    );
    let mut c = Conn::connect(b.addr());
    c.produce("fast", 0, &msg_v0(b"soon"));
    c.produce("slow", 0, &msg_v0(b"later"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while c.offsets("fast", 0, -1, 1).1 != [13] {
        assert!(std::time::Instant::now() < deadline, "fast topic never flushed");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(c.fetch_all("fast", 0, 0).len(), 1);
    // Unflushed: the end is still 0, and a fetch past it is out of range (0.7 semantics).
    assert_eq!(c.offsets("slow", 0, -1, 1), (0, vec![0]));
    assert_eq!(c.fetch("slow", 0, 0, 100), (0, vec![]));
    assert_eq!(c.fetch("slow", 0, 14, 100).0, 1);
}

#[test]
fn retention_by_size_deletes_old_segments_and_sigint_shuts_down_cleanly() {
    let mut b = broker(
        BrokerOptions::default()
            .set("log.file.size", 100)
            .set("log.retention.size", 200)
            .set("log.flush.interval", 1) // size retention counts flushed bytes only
            .set("kwire.log.cleanup.delay.ms", 1_500),
    );
    let mut c = Conn::connect(b.addr());
    for _ in 0..12 {
        c.produce("old", 0, &msg_v0(&[b'o'; 41])); // 50-byte entries, 150-byte segments
    }
    assert_eq!(c.offsets("old", 0, -1, 10).1, vec![600, 450, 300, 150, 0]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while c.offsets("old", 0, -2, 1).1 == [0] {
        assert!(std::time::Instant::now() < deadline, "retention never ran");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // 600 bytes, limit 200, excess 400: the two oldest 150-byte segments go (then 100 < 150).
    assert_eq!(c.offsets("old", 0, -1, 10).1, vec![600, 450, 300]);
    assert_eq!(c.fetch("old", 0, 0, 100).0, 1, "deleted data is out of range");
    assert_eq!(c.fetch("old", 0, 150, 100).0, 1, "deleted data is out of range");
    assert_eq!(c.fetch_all("old", 0, 300).len(), 6);
    assert_eq!(tree(&b.log_dir().join("old-0")), ["00000000000000000300.kafka", "00000000000000000450.kafka"]);
    b.signal("INT").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while b.is_running() {
        assert!(std::time::Instant::now() < deadline, "no exit after SIGINT");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(b.log_dir().join(".kafka_cleanshutdown").exists());
    assert!(b.stderr().contains("clean shutdown complete"), "{}", b.stderr());
}

/// With `kwire.log.visibility=flush`, data is readable only once fsynced. The fsyncs that
/// `log.flush.interval` asks for run in the background (group commit), yet a FETCH pipelined
/// right behind the PRODUCEs on the same connection still sees every message up to the last
/// flush point, exactly as with 0.7's inline fsync: answers wait for the owed flushes.
#[test]
fn pipelined_fetch_sees_what_the_produces_before_it_flushed() {
    let b = broker(BrokerOptions::default().set("kwire.log.visibility", "flush").set("log.flush.interval", 3));
    let mut c = Conn::connect(b.addr());
    let mut bytes = Vec::new();
    for i in 0..30u8 {
        bytes.extend(produce_frame(b"gc", 0, &msg_v0(&[b'a' + (i % 26); 20])));
    }
    bytes.extend(fetch_frame(b"gc", 0, 0, 1 << 20));
    bytes.extend(produce_frame(b"gc", 0, &msg_v0(b"unflushed")));
    bytes.extend(offsets_frame(b"gc", 0, -1, 1));
    c.send(&bytes);
    let (error, data) = c.response();
    assert_eq!(error, 0);
    // 30 messages, 10 flushes: everything before the FETCH was flushed and is visible.
    assert_eq!(parse_set(&data, 0).len(), 30);
    // The last message did not reach the threshold: not flushed, not visible.
    let (_, end) = c.response();
    assert_eq!(end[4..], (30 * 29i64).to_be_bytes());
}

/// `kwire.socket.congestion.control` is applied to the listening socket at start-up (accepted
/// connections inherit it), so an unknown algorithm is one clear line and exit status 1, and a
/// known one serves as usual.
#[test]
fn congestion_control_is_checked_at_start_up_and_used() {
    let bin = env!("CARGO_BIN_EXE_kwire07-broker");
    let dir = TempDir::with_prefix("kwire-cc").unwrap();
    let out = std::process::Command::new(bin)
        .args(["--log-dir", &dir.path().join("logs").display().to_string(), "--port", "0"])
        .args(["--set", "kwire.socket.congestion.control=nosuchalgorithm"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("kwire.socket.congestion.control=nosuchalgorithm: unknown algorithm"), "{stderr}");

    // reno is built into every Linux kernel and always allowed.
    let b = broker(BrokerOptions::default().set("kwire.socket.congestion.control", "reno"));
    let mut c = Conn::connect(b.addr());
    c.produce("t", 0, &set_v0(&[b"one"]));
    let got: Vec<Vec<u8>> = c.fetch_all("t", 0, 0).into_iter().map(|(_, p)| p).collect();
    assert_eq!(got, vec![b"one".to_vec()]);
}
