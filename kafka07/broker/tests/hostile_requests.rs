//! Requests that used to stop the broker or leave it unable to start: topic names that do not
//! fit on disk, auto-created topics exhausting file descriptors, refused creates leaving state
//! behind, and two brokers on one log dir. Each test failed before its fix.

use kwire07_test_support as common;

use std::time::Duration;

use common::*;
use kwire07_broker::config_file::CONFIG_FILE;
use kwire07_client::admin::{modify_topic, request};
use kwire_runtime::ErrorCode as KafkaCode;

/// Sends a PRODUCE then an OFFSETS on one connection: `true` if the produce was taken (the
/// OFFSETS is answered), `false` if the broker closed the connection.
fn produce_taken(b: &BrokerProcess, topic: &[u8], partition: i32) -> bool {
    let mut c = Conn::connect(b.addr());
    c.send(&produce_frame(topic, partition, &msg_v0(&[b'x'; 280])));
    c.send(&offsets_frame(topic, partition, -1, 1));
    !c.is_closed_by_peer()
}

fn assert_alive(b: &mut BrokerProcess) {
    assert_alive_on(b, "alive");
}

/// The broker runs, and a new connection can produce to `topic` and read its offsets.
fn assert_alive_on(b: &mut BrokerProcess, topic: &str) {
    assert!(b.is_running(), "the broker exited: {}", b.stderr());
    let mut c = Conn::connect(b.addr());
    c.produce(topic, 0, &msg_v0(b"ok"));
    assert_eq!(c.offsets(topic, 0, -1, 1).0, 0, "a new connection is served");
}

#[test]
fn topic_names_that_do_not_fit_on_disk_are_refused_and_the_broker_stays_up() {
    let mut b = broker(BrokerOptions::default());
    let too_long: Vec<String> = vec!["a".repeat(254), "a".repeat(255), "日".repeat(100), "😀".repeat(64)];
    for name in &too_long {
        assert!(!produce_taken(&b, name.as_bytes(), 0), "{} bytes accepted", name.len());
        std::thread::sleep(Duration::from_millis(20));
        assert_alive(&mut b);
    }
    // 253 bytes fits partition 0 (`<topic>-0` is 255 bytes).
    assert!(produce_taken(&b, "a".repeat(253).as_bytes(), 0));
    drop(b);

    // With 11 partitions, partition 10's directory would be 256 bytes: refused for every
    // partition of the topic, since the topic may be given any of them.
    let mut b = broker(BrokerOptions { num_partitions: Some(11), ..Default::default() });
    assert!(!produce_taken(&b, "c".repeat(253).as_bytes(), 0));
    assert!(!produce_taken(&b, "c".repeat(253).as_bytes(), 10));
    assert!(produce_taken(&b, "c".repeat(252).as_bytes(), 10));
    assert_alive(&mut b);
    assert!(b.stderr().contains("too long for") || b.stderr().contains("255-byte limit"), "{}", b.stderr());
}

#[test]
fn auto_created_topics_cannot_exhaust_file_descriptors() {
    let opts = BrokerOptions { nofile: Some(1024), ..Default::default() };
    let mut b = broker(opts);
    let mut taken = 0;
    let mut refused = 0;
    for i in 0..1_100 {
        if produce_taken(&b, format!("t{i}").as_bytes(), 0) {
            taken += 1;
        } else {
            refused += 1;
        }
    }
    // (1024 - 64) / 2 = 480 partitions by default.
    assert_eq!(taken, 480, "{refused} refused");
    assert!(b.stderr().contains("partitions are open"), "{}", b.stderr());
    assert_alive_on(&mut b, "t0");
    let fds = b.open_fds().unwrap();
    assert!(fds < 700, "{fds} descriptors open");
    // A restart opens what is on disk and still has descriptors to accept with.
    b.terminate().unwrap();
    b.restart().unwrap();
    assert_alive_on(&mut b, "t0");
    let fds = b.open_fds().unwrap();
    assert!(fds < 700, "{fds} descriptors open after the restart");
    assert!(!produce_taken(&b, b"one-more", 0), "the limit holds after a restart");
}

#[test]
fn a_refused_create_leaves_nothing_behind_and_the_broker_restarts() {
    let mut b = broker(BrokerOptions::default());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let address = b.address();
    let admin = |op: &str, topic: &str, props: &[(&str, Option<&str>)]| {
        rt.block_on(modify_topic(&address, &request(op, topic, props), Duration::from_secs(30))).unwrap()
    };
    let name = "a".repeat(254);
    let r = admin("CREATE", &name, &[("partitions", Some("1"))]);
    assert_eq!(r.error_code, KafkaCode::INVALID_TOPIC_EXCEPTION, "{r:?}");
    assert!(r.error_message.as_deref().unwrap_or("").contains("255-byte limit"), "{r:?}");
    // 253 bytes fits one partition, not eleven.
    let r = admin("CREATE", &"b".repeat(253), &[("partitions", Some("11"))]);
    assert_eq!(r.error_code, KafkaCode::INVALID_TOPIC_EXCEPTION, "{r:?}");
    let stored = std::fs::read_to_string(b.log_dir().join(CONFIG_FILE)).unwrap_or_default();
    assert!(!stored.contains("aaaa") && !stored.contains("bbbb"), "refused topics were stored: {stored}");
    assert_eq!(admin("CREATE", "fine", &[("partitions", Some("2"))]).error_code, KafkaCode::NONE);
    b.terminate().unwrap();
    b.restart().unwrap();
    assert_alive(&mut b);

    // A stored topic that cannot be opened (written by hand, or by an older broker) is skipped
    // with a warning naming it, and the broker starts.
    b.terminate().unwrap();
    let path = b.log_dir().join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let bad = "z".repeat(254);
    let edited = text.replacen("\"fine\"", &format!("\"{bad}\": {{}}, \"fine\""), 1);
    assert_ne!(edited, text, "{text}");
    std::fs::write(&path, edited).unwrap();
    b.restart().unwrap();
    assert_alive(&mut b);
    assert!(b.stderr().contains(&bad[..40]), "no warning names the skipped topic: {}", b.stderr());
}

#[test]
fn a_second_broker_on_the_same_log_dir_is_refused_naming_the_holder() {
    let mut first = broker(BrokerOptions::default());
    let pid = first.pid().unwrap();
    let mut second = BrokerProcess::start(
        env!("CARGO_BIN_EXE_kwire07-broker"),
        BrokerOptions { log_dir: Some(first.log_dir().to_path_buf()), ..Default::default() },
    );
    let err = match second.as_mut() {
        Ok(b) => panic!("a second broker started on the same log dir: {}", b.stderr()),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("is in use by another kwire07-broker") && err.contains(&format!("pid {pid}")), "{err}");
    // kill -9 releases the lock: the next broker starts on the directory.
    first.kill9().unwrap();
    let mut next = BrokerProcess::start(
        env!("CARGO_BIN_EXE_kwire07-broker"),
        BrokerOptions { log_dir: Some(first.log_dir().to_path_buf()), ..Default::default() },
    )
    .expect("starts after the holder was killed");
    assert_alive(&mut next);
}
