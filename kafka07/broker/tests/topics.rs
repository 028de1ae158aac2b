//! ModifyTopic (request type 5) end to end on `kwire07-broker` processes: standalone (settings in
//! a file in the log dir) and with a real ZooKeeper (settings in `/config/topics`, changes
//! announced under `/config/changes` and applied live by every broker).
//!
//! "Changing a broker default" means restarting a broker with another value in its
//! server.properties / flags: only overrides are stored, so topics without an override follow.

use kwire07_test_support as common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use kwire07_admin_messages::ModifyTopicResponse;
use kwire07_broker::config_file::CONFIG_FILE;
use kwire07_client::admin::{self as client_admin, modify_topic, request};
use kwire_runtime::ErrorCode as KafkaCode;
use zookeeper_client::Client;

/// Each message below is 4 + 1 + 4 + 20 = 29 bytes in the log.
const PAYLOAD: &[u8; 20] = b"twenty bytes payload";

fn admin(addr: &str, op: &str, topic: &str, props: &[(&str, Option<&str>)]) -> ModifyTopicResponse {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    rt.block_on(modify_topic(addr, &request(op, topic, props), Duration::from_secs(60))).expect("ModifyTopic answered")
}

fn ok(r: &ModifyTopicResponse) {
    assert_eq!(r.error_code, KafkaCode::NONE, "refused: {:?}", r.error_message);
}

/// Asserts the error code and returns the message.
fn refused(r: &ModifyTopicResponse, code: KafkaCode) -> String {
    assert_eq!(r.error_code, code, "{r:?}");
    assert!(r.configs.is_empty());
    r.error_message.as_ref().map(|m| m.to_string()).expect("an error message")
}

/// `(value, is_override)` of one setting in a response.
fn setting(r: &ModifyTopicResponse, name: &str) -> (String, bool) {
    let c = r.configs.iter().find(|c| c.name.as_str() == name).unwrap_or_else(|| panic!("{name} in {r:?}"));
    (c.value.to_string(), c.is_override)
}

fn segments(log_dir: &Path, topic: &str, partition: i32) -> usize {
    let dir = log_dir.join(format!("{topic}-{partition}"));
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".kafka")))
        .count()
}

/// Produces `n` messages and waits until they are in the log (OFFSETS on the same connection
/// is answered after the produce was handled).
fn produce(addr: std::net::SocketAddr, topic: &str, partition: i32, n: usize) {
    let mut c = Conn::connect(addr);
    for _ in 0..n {
        c.produce(topic, partition, &msg_v0(PAYLOAD));
    }
    let (err, _) = c.offsets(topic, partition, -1, 1);
    assert_eq!(err, 0);
}

fn partition_dirs(log_dir: &Path, topic: &str) -> Vec<String> {
    tree(log_dir).into_iter().filter(|p| p.starts_with(&format!("{topic}-")) && !p.contains('/')).collect()
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn standalone_create_alter_describe_delete_and_inherited_defaults() {
    let mut b = broker(BrokerOptions::default().set("log.file.size", 1000));
    let addr = b.address();
    let dir = b.log_dir().to_path_buf();

    // CREATE makes every partition now, with the overrides.
    let r = admin(&addr, "CREATE", "orders", &[("partitions", Some("3")), ("retention.ms", Some("-1"))]);
    ok(&r);
    assert_eq!(setting(&r, "partitions"), ("3".into(), true));
    assert_eq!(setting(&r, "segment.bytes"), ("1000".into(), false));
    assert_eq!(partition_dirs(&dir, "orders"), ["orders-0", "orders-1", "orders-2"]);
    ok(&admin(&addr, "CREATE", "pinned", &[("segment.bytes", Some("50"))]));
    assert_eq!(partition_dirs(&dir, "pinned"), ["pinned-0"]);
    let file = std::fs::read_to_string(dir.join(CONFIG_FILE)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert_eq!(json["topics"]["orders"], serde_json::json!({"partitions": "3", "retention.ms": "-1"}));
    assert_eq!(json["topics"]["pinned"], serde_json::json!({"segment.bytes": "50"}));

    // ALTER segment.bytes: the next append rolls at the new size.
    produce(b.addr(), "orders", 0, 3); // 87 bytes, below 1000
    assert_eq!(segments(&dir, "orders", 0), 1);
    let r = admin(&addr, "ALTER", "orders", &[("segment.bytes", Some("50"))]);
    ok(&r);
    assert_eq!(setting(&r, "segment.bytes"), ("50".into(), true));
    produce(b.addr(), "orders", 0, 1);
    assert_eq!(segments(&dir, "orders", 0), 2, "the first append after the change rolled");
    // A null value removes the override: the broker default applies again.
    let r = admin(&addr, "ALTER", "orders", &[("segment.bytes", None)]);
    assert_eq!(setting(&r, "segment.bytes"), ("1000".into(), false));
    assert_eq!(setting(&r, "retention.ms"), ("-1".into(), true));
    // The partition count only grows; growing creates the new partitions at once.
    let msg = refused(&admin(&addr, "ALTER", "orders", &[("partitions", Some("2"))]), KafkaCode::INVALID_PARTITIONS);
    assert!(msg.contains("can only grow"), "{msg}");
    ok(&admin(&addr, "ALTER", "orders", &[("partitions", Some("4"))]));
    assert_eq!(partition_dirs(&dir, "orders").len(), 4);

    // A topic created by a produce can be described and altered too.
    produce(b.addr(), "auto", 0, 1);
    let r = admin(&addr, "DESCRIBE", "auto", &[]);
    ok(&r);
    assert!(r.configs.iter().all(|c| !c.is_override), "{r:?}");
    assert_eq!(r.configs.len(), 8);

    // Change a broker default (restart with another log.file.size): topics without an
    // override follow, the overriding one keeps its value; overrides survive the restart.
    b.terminate().unwrap();
    let b2 = broker(BrokerOptions { log_dir: Some(dir.clone()), ..Default::default() }.set("log.file.size", 60));
    let addr2 = b2.address();
    let orders = admin(&addr2, "DESCRIBE", "orders", &[]);
    assert_eq!(setting(&orders, "segment.bytes"), ("60".into(), false));
    assert_eq!(setting(&orders, "partitions"), ("4".into(), true));
    let pinned = admin(&addr2, "DESCRIBE", "pinned", &[]);
    assert_eq!(setting(&pinned, "segment.bytes"), ("50".into(), true));
    // And in the log: the 4th message rolls at 60 (87 > 60); at 1000 it would not.
    produce(b2.addr(), "orders", 3, 4);
    assert_eq!(segments(&dir, "orders", 3), 2, "inheriting topic rolls at the new default");

    // DELETE removes the partitions and the configuration.
    ok(&admin(&addr2, "DELETE", "orders", &[]));
    assert!(partition_dirs(&dir, "orders").is_empty(), "{:?}", tree(&dir));
    let file = std::fs::read_to_string(dir.join(CONFIG_FILE)).unwrap();
    assert!(!file.contains("orders"), "{file}");
    refused(&admin(&addr2, "DESCRIBE", "orders", &[]), KafkaCode::UNKNOWN_TOPIC_OR_PARTITION);
}

/// Operation, topic, properties, expected error code, text the message must contain.
type Case = (&'static str, &'static str, Vec<(&'static str, Option<&'static str>)>, KafkaCode, &'static str);

#[test]
fn bad_requests_are_refused_and_change_nothing() {
    let b = broker(BrokerOptions::default());
    let addr = b.address();
    let dir = b.log_dir().to_path_buf();
    ok(&admin(&addr, "CREATE", "kept", &[("segment.bytes", Some("500"))]));
    let before = (tree(&dir), std::fs::read(dir.join(CONFIG_FILE)).unwrap());

    let cases: Vec<Case> = vec![
        (
            "ALTER",
            "kept",
            vec![("segment.bytes", Some("600")), ("segment.byte", Some("1"))],
            KafkaCode::INVALID_CONFIG,
            "unknown topic property \"segment.byte\"",
        ),
        ("ALTER", "kept", vec![("segment.bytes", Some("-1"))], KafkaCode::INVALID_CONFIG, "must be in 1..="),
        ("ALTER", "kept", vec![("retention.bytes", Some("-7"))], KafkaCode::INVALID_CONFIG, "or -1 for no limit"),
        ("ALTER", "kept", vec![("flush.ms", Some("soon"))], KafkaCode::INVALID_CONFIG, "not a decimal integer"),
        (
            "ALTER",
            "kept",
            vec![("flush.ms", Some("1")), ("flush.ms", Some("2"))],
            KafkaCode::INVALID_REQUEST,
            "given twice",
        ),
        ("CREATE", "new", vec![("partitions", Some("0"))], KafkaCode::INVALID_CONFIG, "partitions"),
        ("CREATE", "new", vec![("segment.bytes", None)], KafkaCode::INVALID_CONFIG, "has no value"),
        ("CREATE", "kept", vec![], KafkaCode::TOPIC_ALREADY_EXISTS, "already exists"),
        ("CREATE", "", vec![], KafkaCode::INVALID_TOPIC_EXCEPTION, "empty"),
        ("CREATE", "..", vec![], KafkaCode::INVALID_TOPIC_EXCEPTION, "relative path"),
        ("CREATE", "../escape", vec![], KafkaCode::INVALID_TOPIC_EXCEPTION, "U+002F"),
        ("CREATE", "a/b", vec![], KafkaCode::INVALID_TOPIC_EXCEPTION, "U+002F"),
        ("DELETE", "missing", vec![], KafkaCode::UNKNOWN_TOPIC_OR_PARTITION, "does not exist"),
        ("ALTER", "missing", vec![("flush.ms", Some("5"))], KafkaCode::UNKNOWN_TOPIC_OR_PARTITION, "does not exist"),
        ("DELETE", "kept", vec![("flush.ms", Some("5"))], KafkaCode::INVALID_REQUEST, "takes no properties"),
        ("TRUNCATE", "kept", vec![], KafkaCode::INVALID_REQUEST, "unknown operation"),
    ];
    for (op, topic, props, code, needle) in cases {
        let r = admin(&addr, op, topic, &props);
        let msg = refused(&r, code);
        assert!(msg.contains(needle), "{op} {topic:?} {props:?}: {msg}");
    }
    assert_eq!((tree(&dir), std::fs::read(dir.join(CONFIG_FILE)).unwrap()), before, "nothing changed");
    assert_eq!(setting(&admin(&addr, "DESCRIBE", "kept", &[]), "segment.bytes"), ("500".into(), true));

    // An unknown version and a malformed body are answered, not crashed on.
    let mut c = Conn::connect(b.addr());
    c.send(&[0, 0, 0, 5, 0, 5, 0, 9, 0]); // version 9
    let (envelope, body) = c.response();
    assert_eq!(envelope, -1);
    assert_eq!(&body[..2], &[0, 0], "answered in version 0");
    c.send(&[0, 0, 0, 6, 0, 5, 0, 0, 0x7f, 0x7f]); // version 0, garbage body
    let (envelope, body) = c.response();
    assert_eq!(envelope, -1);
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("malformed ModifyTopicRequest"), "{text}");
    assert_eq!(tree(&dir), before.0);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

fn zk_read(rt: &tokio::runtime::Runtime, zk: &Client, path: &str) -> Option<String> {
    rt.block_on(async {
        match zk.get_data(path).await {
            Ok((data, _)) => Some(String::from_utf8(data).unwrap()),
            Err(zookeeper_client::Error::NoNode) => None,
            Err(e) => panic!("get {path}: {e}"),
        }
    })
}

fn zk_children(rt: &tokio::runtime::Runtime, zk: &Client, path: &str) -> Vec<String> {
    rt.block_on(async {
        match zk.list_children(path).await {
            Ok(mut c) => {
                c.sort();
                c
            }
            Err(zookeeper_client::Error::NoNode) => Vec::new(),
            Err(e) => panic!("list {path}: {e}"),
        }
    })
}

fn zk_broker(zk: &ZooKeeper, id: u32, log_dir: Option<std::path::PathBuf>, file_size: u64) -> BrokerProcess {
    let opts =
        BrokerOptions { broker_id: Some(id), zookeeper: Some(zk.connect_string()), log_dir, ..Default::default() }
            .set("log.file.size", file_size);
    let mut b = broker(opts);
    assert!(b.wait_for_stderr("registered in ZooKeeper", Duration::from_secs(30)), "{}", b.stderr());
    let synced = "applied the topic configuration from ZooKeeper";
    assert!(b.wait_for_stderr(synced, Duration::from_secs(30)), "{}", b.stderr());
    b
}

#[test]
fn zookeeper_topics_are_configured_live_on_every_broker() {
    let Some(zk) = ZooKeeper::start_or_skip() else { return };
    let rt = runtime();
    let client = rt.block_on(Client::connect(&zk.connect_string())).unwrap();
    let b0 = zk_broker(&zk, 0, None, 1000);
    let mut b1 = zk_broker(&zk, 1, None, 1000);
    let (dir0, dir1) = (b0.log_dir().to_path_buf(), b1.log_dir().to_path_buf());

    // CREATE through broker 0: configuration node, a change notification, partitions and
    // registrations on both brokers.
    let r = admin(&b0.address(), "CREATE", "events", &[("partitions", Some("3")), ("flush.messages", Some("1"))]);
    ok(&r);
    let config: serde_json::Value =
        serde_json::from_str(&zk_read(&rt, &client, "/config/topics/events").unwrap()).unwrap();
    assert_eq!(config, serde_json::json!({"version": 1, "config": {"partitions": "3", "flush.messages": "1"}}));
    let changes = zk_children(&rt, &client, "/config/changes");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(changes[0].starts_with("config_change_"));
    assert_eq!(zk_read(&rt, &client, &format!("/config/changes/{}", changes[0])).unwrap(), "\"events\"");
    assert_eq!(partition_dirs(&dir0, "events"), ["events-0", "events-1", "events-2"]);
    wait_for("partitions on broker 1", || partition_dirs(&dir1, "events").len() == 3);
    wait_for("both registrations", || zk_children(&rt, &client, "/brokers/topics/events") == ["0", "1"]);
    assert_eq!(zk_read(&rt, &client, "/brokers/topics/events/1").unwrap(), "3");
    ok(&admin(&b0.address(), "CREATE", "pinned", &[("segment.bytes", Some("50"))]));
    wait_for("pinned on broker 1", || partition_dirs(&dir1, "pinned").len() == 1);

    // ALTER through broker 0 reaches the running broker 1: its next append rolls at 50.
    produce(b1.addr(), "events", 0, 3);
    assert_eq!(segments(&dir1, "events", 0), 1);
    ok(&admin(&b0.address(), "ALTER", "events", &[("segment.bytes", Some("50"))]));
    // The newest notification is the ALTER's; broker 1 logs each one it applies.
    let last = zk_children(&rt, &client, "/config/changes").pop().unwrap();
    let applied = b1.wait_for_stderr(&format!("change=\"{last}\""), Duration::from_secs(30));
    assert!(applied, "broker 1 did not apply {last}: {}", b1.stderr());
    produce(b1.addr(), "events", 0, 1);
    assert_eq!(segments(&dir1, "events", 0), 2, "broker 1 rolled at the new size without a restart");
    // Both brokers applied it: broker 0 too.
    produce(b0.addr(), "events", 1, 4);
    assert_eq!(segments(&dir0, "events", 1), 2);

    // Broker default change: restart broker 1 with log.file.size=60. "events" had its
    // override removed and inherits; "pinned" keeps 50.
    ok(&admin(&b0.address(), "ALTER", "events", &[("segment.bytes", None)]));
    b1.terminate().unwrap();
    let b1 = zk_broker(&zk, 1, Some(dir1.clone()), 60);
    let d = admin(&b1.address(), "DESCRIBE", "events", &[]);
    assert_eq!(setting(&d, "segment.bytes"), ("60".into(), false));
    assert_eq!(setting(&d, "partitions"), ("3".into(), true));
    assert_eq!(setting(&admin(&b1.address(), "DESCRIBE", "pinned", &[]), "segment.bytes"), ("50".into(), true));
    assert_eq!(setting(&admin(&b0.address(), "DESCRIBE", "events", &[]), "segment.bytes"), ("1000".into(), false));
    produce(b1.addr(), "events", 2, 4);
    assert_eq!(segments(&dir1, "events", 2), 2, "inheriting topic follows broker 1's new default");
    produce(b0.addr(), "events", 2, 4);
    assert_eq!(segments(&dir0, "events", 2), 1, "broker 0 keeps its own default");

    // Bad input through ZooKeeper mode: refused, nothing written.
    let before = (zk_children(&rt, &client, "/config/changes"), zk_read(&rt, &client, "/config/topics/events"));
    refused(&admin(&b0.address(), "ALTER", "events", &[("segment.bytes", Some("-5"))]), KafkaCode::INVALID_CONFIG);
    refused(&admin(&b0.address(), "ALTER", "events", &[("bogus", Some("1"))]), KafkaCode::INVALID_CONFIG);
    refused(&admin(&b0.address(), "DELETE", "missing", &[]), KafkaCode::UNKNOWN_TOPIC_OR_PARTITION);
    refused(&admin(&b0.address(), "CREATE", "events", &[]), KafkaCode::TOPIC_ALREADY_EXISTS);
    refused(&admin(&b0.address(), "CREATE", "a/b", &[]), KafkaCode::INVALID_TOPIC_EXCEPTION);
    // A name whose partition directory does not fit on disk: refused before anything is written.
    let too_long = "a".repeat(254);
    refused(
        &admin(&b0.address(), "CREATE", &too_long, &[("partitions", Some("1"))]),
        KafkaCode::INVALID_TOPIC_EXCEPTION,
    );
    assert!(!zk_children(&rt, &client, "/config/topics").contains(&too_long), "a refused create left its node");
    assert_eq!((zk_children(&rt, &client, "/config/changes"), zk_read(&rt, &client, "/config/topics/events")), before);

    // Every node the brokers wrote matches its seed-003 schema (what `kwire07 zk check` runs),
    // and the client library finds a broker through ZooKeeper.
    let nodes = rt.block_on(client_admin::walk(&client)).unwrap();
    for n in &nodes {
        assert!(n.result.is_ok(), "{}: {:?}", n.path, n.result);
    }
    let paths: Vec<&str> = nodes.iter().map(|n| n.path.as_str()).collect();
    for p in ["/config/topics/events", "/brokers/topics/events/0", "/brokers/topics/events/1", "/brokers/ids/1"] {
        assert!(paths.contains(&p), "{p} in {paths:?}");
    }
    assert!(paths.iter().filter(|p| p.starts_with("/config/changes/config_change_")).count() >= 4, "{paths:?}");
    let req = request("DESCRIBE", "pinned", &[]);
    let r = rt.block_on(client_admin::modify_topic_via_zookeeper(&client, &req, Duration::from_secs(30))).unwrap();
    ok(&r);
    let table = client_admin::describe_table(&r);
    assert!(table.lines().any(|l| l.starts_with("segment.bytes") && l.contains(" 50  overridden")), "{table}");
    assert!(table.lines().any(|l| l.starts_with("partitions") && l.ends_with("inherited")), "{table}");

    // DELETE through broker 1: logs go on both brokers, and every ZooKeeper node of the topic.
    ok(&admin(&b1.address(), "DELETE", "events", &[]));
    wait_for("logs gone on both brokers", || {
        partition_dirs(&dir0, "events").is_empty() && partition_dirs(&dir1, "events").is_empty()
    });
    wait_for("nodes gone", || {
        zk_read(&rt, &client, "/config/topics/events").is_none()
            && zk_read(&rt, &client, "/brokers/topics/events").is_none()
    });
    assert!(zk_read(&rt, &client, "/config/topics/pinned").is_some());
    assert_eq!(partition_dirs(&dir0, "pinned").len(), 1);
    refused(&admin(&b0.address(), "DESCRIBE", "events", &[]), KafkaCode::UNKNOWN_TOPIC_OR_PARTITION);
}
