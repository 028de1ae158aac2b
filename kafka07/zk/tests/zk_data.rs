//! Typed ZooKeeper data (`kwire07_zk`): seed 003's examples, the 0.7 text forms of
//! spec §4, the path classifier, errors that name the path, and serialise→parse identity.

use std::collections::BTreeMap;

use kwire07_zk::*;
use proptest::prelude::*;
use serde_json::Value;

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("test input is JSON")
}

/// Parses `text` at `path`, re-serialises it, parses that again: both values must be equal,
/// and the re-serialised JSON must equal the original JSON as a JSON value.
fn json_roundtrip(path: &str, text: &str) -> TypedValue {
    let kind = NodeKind::classify(path).unwrap_or_else(|| panic!("{path} is a known node"));
    let value = kind.parse(text.as_bytes()).unwrap_or_else(|e| panic!("{path}: {e}"));
    let bytes = value.to_bytes();
    assert_eq!(kind.parse(&bytes).unwrap(), value, "{path}: parse(serialise(v)) == v");
    assert_eq!(json(&bytes), json(text.as_bytes()), "{path}: same JSON value as the seed");
    assert_eq!(parse(path, text.as_bytes()).unwrap(), value);
    assert_eq!(check(path, text.as_bytes()), Ok(()));
    value
}

/// Text (non-JSON) round trip: the bytes come back identical.
fn text_roundtrip(path: &str, text: &str) -> TypedValue {
    let value = parse(path, text.as_bytes()).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(value.to_bytes(), text.as_bytes(), "{path}: serialised bytes");
    assert_eq!(parse(path, &value.to_bytes()).unwrap(), value);
    value
}

/// The error for `text` at `path`; asserts that it names the path.
fn error(path: &str, text: &[u8]) -> ZkDataError {
    let err = parse(path, text).expect_err(&format!("{path}: {:?} must be rejected", String::from_utf8_lossy(text)));
    assert_eq!(err.path(), Some(path), "{err}");
    assert!(err.to_string().starts_with(path), "message names the path: {err}");
    assert_eq!(check(path, text), Err(err.clone()));
    err
}

fn topic(name: &str) -> TopicName {
    TopicName::new(name).unwrap()
}

// ---------------------------------------------------------------------------------------
// Seed 003 examples, copied verbatim (spacing included).

#[test]
fn seed_topic_registration() {
    // The seed prints this example with one `}` too many at the end: it is not valid JSON
    // as printed, and we refuse it rather than guess.
    let as_printed = r#"{    "version" :  1 ,    "partitions" : { "0" : [ 0 ,  1 ,  3 ] } } }"#;
    let err = error("/brokers/topics/my-topic", as_printed.as_bytes());
    assert!(matches!(err, ZkDataError::Json { .. }), "{err}");
    let example = r#"{    "version" :  1 ,    "partitions" : { "0" : [ 0 ,  1 ,  3 ] } }"#;
    let value = json_roundtrip("/brokers/topics/my-topic", example);
    let expected = TopicRegistration { partitions: BTreeMap::from([(0, vec![0, 1, 3])]) };
    assert_eq!(value, TypedValue::Topic(TopicNode::Registration(expected)));
}

#[test]
fn seed_partition_state() {
    let example = r#"{    "version" :  1 ,    "isr" : [ 0 , 1 ],    "leader" :  0 ,    "controller_epoch" :  1 ,    "leader_epoch" :  0 }"#;
    let value = json_roundtrip("/brokers/topics/my-topic/partitions/0/state", example);
    let expected = PartitionState { isr: vec![0, 1], leader: 0, controller_epoch: 1, leader_epoch: 0 };
    assert_eq!(value, TypedValue::PartitionState(expected));
}

#[test]
fn seed_broker_registration() {
    let example = r#"{    "version" :  1 ,    "host" :  "192.168.1.148" ,    "port" :  9092 ,    "jmx_port" :  9999 }"#;
    let value = json_roundtrip("/brokers/ids/0", example);
    let expected =
        BrokerRegistration { host: "192.168.1.148".into(), port: 9092, jmx_port: Some(9999), timestamp: None };
    assert_eq!(value, TypedValue::Broker(BrokerNode::Registration(expected)));
    // Kafka 0.8.1 adds a string timestamp, and writes jmx_port -1 when JMX is off.
    let with_ts = r#"{"jmx_port":-1,"timestamp":"1400000000000","host":"h","version":1,"port":9092}"#;
    let value = json_roundtrip("/brokers/ids/0", with_ts);
    let expected = BrokerRegistration { host: "h".into(), port: 9092, jmx_port: None, timestamp: Some(1400000000000) };
    assert_eq!(value, TypedValue::Broker(BrokerNode::Registration(expected)));
}

#[test]
fn seed_controller_and_epoch() {
    // Seed: "/controller -> int (broker id of the controller)", "/controller_epoch -> int".
    assert_eq!(text_roundtrip("/controller", "2"), TypedValue::Controller(ControllerNode::BrokerId(2)));
    assert_eq!(text_roundtrip("/controller_epoch", "17"), TypedValue::ControllerEpoch(ControllerEpoch(17)));
    // The later JSON form, with Kafka's string timestamp.
    let value = json_roundtrip("/controller", r#"{"version":1,"brokerid":3,"timestamp":"1400000000000"}"#);
    assert_eq!(
        value,
        TypedValue::Controller(ControllerNode::Registration { broker_id: 3, timestamp: Some(1400000000000) })
    );
    let TypedValue::Controller(c) = value else { unreachable!() };
    assert_eq!(c.broker_id(), 3);
}

#[test]
fn seed_consumer_registrations() {
    let path = "/consumers/group1/ids/group1_host-1400000000000-0a1b2c3d";
    let stat =
        r#"{    "version" :  1 ,    "pattern" :  "static" ,    "subscription" : { "topic1" :  1 ,  "topic2" :  2 } }"#;
    let white = r#"{    "version" :  1 ,    "pattern" :  "white_list" ,    "subscription" : { "abc" :  1 }}"#;
    let black = r#"{    "version" :  1 ,    "pattern" :  "black_list" ,    "subscription" : { "abc" :  1 }}"#;
    let reg = |subscription| {
        TypedValue::ConsumerRegistration(ConsumerRegistrationNode::Registration(ConsumerRegistration {
            subscription,
            timestamp: None,
        }))
    };
    assert_eq!(
        json_roundtrip(path, stat),
        reg(Subscription::Static(BTreeMap::from([(topic("topic1"), 1), (topic("topic2"), 2)])))
    );
    assert_eq!(json_roundtrip(path, white), reg(Subscription::Whitelist { regex: "abc".into(), streams: 1 }));
    assert_eq!(json_roundtrip(path, black), reg(Subscription::Blacklist { regex: "abc".into(), streams: 1 }));
    // Kafka 0.8.1 also writes a timestamp.
    json_roundtrip(path, r#"{"version":1,"subscription":{"t":3},"pattern":"static","timestamp":"1400000000000"}"#);
}

#[test]
fn seed_owner_and_offset() {
    let owner = "/consumers/group1/owners/topic1/0";
    let value = text_roundtrip(owner, "group1_host-1400000000000-0a1b2c3d-0");
    let TypedValue::ConsumerOwner(thread) = value else { panic!("owner: {value:?}") };
    assert_eq!(thread.consumer_id.as_str(), "group1_host-1400000000000-0a1b2c3d");
    assert_eq!(thread.thread, 0);
    assert_eq!(
        text_roundtrip("/consumers/group1/offsets/topic1/0", "9223372036854775807"),
        TypedValue::ConsumerOffset(ConsumerOffset(i64::MAX))
    );
}

#[test]
fn seed_reassign_partitions() {
    let example = r#"{    "version" :  1 ,    "partitions" :       [          {              "topic" :  "Foo" ,              "partition" :  1 ,              "replicas" : [ 0 ,  1 ,  3 ]          }       ]             }"#;
    let value = json_roundtrip("/admin/reassign_partitions", example);
    let expected = ReassignPartitions {
        partitions: vec![PartitionReassignment { topic: topic("Foo"), partition: 1, replicas: vec![0, 1, 3] }],
    };
    assert_eq!(value, TypedValue::ReassignPartitions(expected));
}

#[test]
fn seed_preferred_replica_election() {
    let example = r#"{    "version" :  1 ,    "partitions" :       [          {              "topic" :  "Foo" ,              "partition" :  1                   },          {              "topic" :  "Bar" ,              "partition" :  0                   }       ]             }"#;
    let value = json_roundtrip("/admin/preferred_replica_election", example);
    let expected = PreferredReplicaElection {
        partitions: vec![
            TopicPartition { topic: topic("Foo"), partition: 1 },
            TopicPartition { topic: topic("Bar"), partition: 0 },
        ],
    };
    assert_eq!(value, TypedValue::PreferredReplicaElection(expected));
}

#[test]
fn seed_delete_topics() {
    let example = r#"{    "version" :  1 ,    "topics" : [ "foo" ,  "bar" ] }"#;
    let value = json_roundtrip("/admin/delete_topics", example);
    let expected = DeleteTopics { topics: vec![topic("foo"), topic("bar")] };
    assert_eq!(value, TypedValue::DeleteTopics(DeleteTopicsNode::List(expected)));
    // Kafka 0.8.1+'s layout: an empty parent with one empty marker per topic.
    assert_eq!(text_roundtrip("/admin/delete_topics", ""), TypedValue::DeleteTopics(DeleteTopicsNode::MarkerParent));
    assert_eq!(text_roundtrip("/admin/delete_topics/foo", ""), TypedValue::Empty);
    error("/admin/delete_topics/foo", b"x");
}

#[test]
fn seed_topic_config_and_change() {
    // The seed elides further entries with `...`, which is not JSON; without it the example parses.
    let as_printed =
        r#"{    "version" :  1 ,    "config" : {      "config.a" :  "x" ,      "config.b" :  "y" ,      ...    } }"#;
    assert!(matches!(error("/config/topics/my-topic", as_printed.as_bytes()), ZkDataError::Json { .. }));
    let example = r#"{    "version" :  1 ,    "config" : {      "config.a" :  "x" ,      "config.b" :  "y"    } }"#;
    let value = json_roundtrip("/config/topics/my-topic", example);
    let expected =
        TopicConfig { config: BTreeMap::from([("config.a".into(), "x".into()), ("config.b".into(), "y".into())]) };
    assert_eq!(value, TypedValue::TopicConfig(expected));
    // "/config/changes/[config_change_x] -> "topic_name"": the topic name as a JSON string.
    let value = json_roundtrip("/config/changes/config_change_0000000042", r#""topic_name""#);
    assert_eq!(value, TypedValue::ConfigChange(ConfigChange { topic: topic("topic_name") }));
    assert_eq!(value.to_bytes(), br#""topic_name""#);
}

// ---------------------------------------------------------------------------------------
// Kafka 0.7 text forms (spec §4).

#[test]
fn kafka07_broker_registration() {
    let value = text_roundtrip("/brokers/ids/0", "10.0.0.5-1370000000000:10.0.0.5:9092");
    let expected = Kafka07BrokerRegistration {
        creator: Kafka07Creator { host: "10.0.0.5".into(), epoch_ms: 1370000000000 },
        host: "10.0.0.5".into(),
        port: 9092,
    };
    assert_eq!(value, TypedValue::Broker(BrokerNode::Kafka07(expected)));
    // A creator host may itself hold dashes: the epoch follows the last one.
    text_roundtrip("/brokers/ids/12", "my-host-1-1370000000000:my-host-1:9093");
    for bad in [
        "10.0.0.5:9092",
        "a-1:b:9092:x",
        "fe80::1-5:fe80::1:9092",
        "10.0.0.5:10.0.0.5:9092",
        "h-x:h:9092",
        "-5:h:9092",
        "h-5::9092",
        "h-5:h:0",
        "h-5:h:65536",
        "h-5:h:-1",
        "h-5:h: 9092",
        "",
    ] {
        assert!(matches!(error("/brokers/ids/1", bad.as_bytes()), ZkDataError::Invalid { .. }), "{bad}");
    }
}

#[test]
fn kafka07_topic_nodes() {
    assert_eq!(text_roundtrip("/brokers/topics/events", ""), TypedValue::Topic(TopicNode::Kafka07Parent));
    assert_eq!(
        text_roundtrip("/brokers/topics/events/3", "1"),
        TypedValue::Kafka07PartitionCount(Kafka07PartitionCount(1))
    );
    text_roundtrip("/brokers/topics/events/3", "16");
    for bad in ["0", "-1", "", "1.0", " 1", "2147483648", "x"] {
        error("/brokers/topics/events/3", bad.as_bytes());
    }
}

#[test]
fn kafka07_consumer_nodes() {
    let path = "/consumers/g/ids/g_host-1370000000000-deadbeef";
    // Exactly the bytes Kafka 0.7 writes: `{ ` + entries joined by `,` + ` }`.
    let value = text_roundtrip(path, r#"{ "topicA": 2,"topicB": 1 }"#);
    let expected = Subscription::Static(BTreeMap::from([(topic("topicA"), 2), (topic("topicB"), 1)]));
    assert_eq!(
        value,
        TypedValue::ConsumerRegistration(ConsumerRegistrationNode::Kafka07(Kafka07ConsumerRegistration(expected)))
    );
    let TypedValue::ConsumerRegistration(node) = parse(path, br#"{"topicA":2}"#).unwrap() else { panic!() };
    assert!(matches!(node, ConsumerRegistrationNode::Kafka07(_)));
    let white = text_roundtrip(path, "*3*foo.*|bar");
    assert_eq!(
        white,
        TypedValue::ConsumerRegistration(ConsumerRegistrationNode::Kafka07(Kafka07ConsumerRegistration(
            Subscription::Whitelist { regex: "foo.*|bar".into(), streams: 3 }
        )))
    );
    // The regex may contain the marker itself.
    text_roundtrip(path, "!1!a!b");
    text_roundtrip(path, "*1*a*");
    for bad in ["*x*abc", "*1*", "**abc", "*0*abc", "!1", "{ }", r#"{ "a": 0 }"#, r#"{ "a/b": 1 }"#, "[1]", "abc"] {
        error(path, bad.as_bytes());
    }
    // 0.7 owner and offset nodes name partitions as <brokerId>-<partition>.
    assert_eq!(
        NodeKind::classify("/consumers/g/owners/t/1-3"),
        Some(NodeKind::ConsumerOwner {
            group: GroupId::new("g").unwrap(),
            topic: topic("t"),
            partition: PartitionKey::BrokerPartition { broker_id: 1, partition: 3 },
        })
    );
    text_roundtrip("/consumers/g/owners/t/1-3", "g_host-1370000000000-deadbeef-2");
    text_roundtrip("/consumers/g/offsets/t/1-3", "0");
    text_roundtrip("/consumers/g/offsets/t/10-0", "123456789");
    for bad in ["-1", "", "1e3", "+5", "5 ", "9223372036854775808", "0x10"] {
        assert!(matches!(error("/consumers/g/offsets/t/1-3", bad.as_bytes()), ZkDataError::Invalid { .. }), "{bad}");
    }
    // Leading zeros are accepted (Java's parseLong accepts them); the value is what counts.
    assert_eq!(parse("/consumers/g/offsets/t/0", b"007").unwrap(), TypedValue::ConsumerOffset(ConsumerOffset(7)));
    for bad in ["nodash", "c-", "c-x", "-1", "c-01", "a/b-1"] {
        error("/consumers/g/owners/t/0", bad.as_bytes());
    }
}

// ---------------------------------------------------------------------------------------
// Errors: malformed data, wrong versions, wrong types, bad ids. Each names the path.

#[test]
fn malformed_json_is_named() {
    for (path, bad) in [
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"0":[0,1]}"#),
        ("/brokers/ids/0", r#"{"version":1,"host":"h","port":9092,"jmx_port":-1,}"#),
        ("/admin/reassign_partitions", "{"),
        ("/config/topics/t", r#"{"version":1,"config":{"a":"b"}} x"#),
        ("/brokers/topics/t/partitions/0/state", "null garbage"),
        ("/config/changes/config_change_0000000000", "topic_name"),
    ] {
        let err = error(path, bad.as_bytes());
        assert!(matches!(err, ZkDataError::Json { .. }), "{path}: {err}");
    }
    // A key given twice is malformed, not silently "last one wins".
    let err = error("/brokers/topics/t", br#"{"version":1,"partitions":{"0":[0],"0":[1]}}"#);
    assert!(matches!(err, ZkDataError::Json { ref detail, .. } if detail.contains("duplicate key")), "{err}");
    let err = error("/brokers/ids/0", br#"{"version":1,"version":1,"host":"h","port":1,"jmx_port":-1}"#);
    assert!(err.to_string().contains("duplicate key"), "{err}");
    // Not UTF-8.
    let err = error("/controller_epoch", b"1\xff");
    assert_eq!(err, ZkDataError::NotUtf8 { path: "/controller_epoch".into(), offset: 1 });
}

#[test]
fn deeply_nested_json_is_an_error_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for path in ["/brokers/topics/t", "/consumers/g/ids/c", "/config/changes/config_change_0000000001"] {
        assert!(matches!(error(path, deep.as_bytes()), ZkDataError::Json { .. }), "{path}");
    }
    let deep_object = format!(r#"{{"version":1,"config":{}1{}}}"#, r#"{"a":"#.repeat(50_000), "}".repeat(50_000));
    assert!(matches!(error("/config/topics/t", deep_object.as_bytes()), ZkDataError::Json { .. }));
}

#[test]
fn wrong_version_is_named() {
    for path in [
        "/brokers/topics/t",
        "/brokers/topics/t/partitions/0/state",
        "/brokers/ids/0",
        "/controller",
        "/consumers/g/ids/c",
        "/admin/reassign_partitions",
        "/admin/preferred_replica_election",
        "/admin/delete_topics",
        "/config/topics/t",
    ] {
        let err = error(path, br#"{"version":2,"pattern":"x"}"#);
        assert_eq!(err, ZkDataError::UnsupportedVersion { path: path.into(), found: 2, supported: 1 }, "{path}");
        assert!(err.to_string().contains("unsupported version 2"), "{err}");
        for bad in [r#"{"version":"1","pattern":"x"}"#, r#"{"version":1.5,"pattern":"x"}"#, r#"{"pattern":"x"}"#] {
            let err = error(path, bad.as_bytes());
            assert!(matches!(err, ZkDataError::Schema { .. }), "{path} {bad}: {err}");
            assert!(err.to_string().contains("version"), "{err}");
        }
    }
    let err = error("/brokers/ids/0", b"[1]");
    assert!(matches!(err, ZkDataError::Invalid { .. }), "0.7 broker value expected: {err}");
}

#[test]
fn wrong_types_and_fields_are_named() {
    for (path, bad, mentions) in [
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"0":["0","1"]}}"#, "invalid type"),
        ("/brokers/topics/t", r#"{"version":1,"partitions":[[0]]}"#, "invalid type"),
        ("/brokers/topics/t", r#"{"version":1}"#, "missing field `partitions`"),
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"0":[0]},"extra":1}"#, "unknown field `extra`"),
        (
            "/brokers/topics/t/partitions/0/state",
            r#"{"version":1,"isr":[0],"leader":"0","controller_epoch":1,"leader_epoch":0}"#,
            "invalid type",
        ),
        (
            "/brokers/topics/t/partitions/0/state",
            r#"{"version":1,"isr":[0],"leader":0,"controller_epoch":1}"#,
            "missing field `leader_epoch`",
        ),
        ("/brokers/ids/0", r#"{"version":1,"host":"h","port":"9092","jmx_port":-1}"#, "invalid type"),
        ("/brokers/ids/0", r#"{"version":1,"host":"h","port":9092,"jmx_port":-1,"timestamp":5}"#, "invalid type"),
        ("/brokers/ids/0", r#"{"version":1,"host":"h","port":4294967296,"jmx_port":-1}"#, "i32"),
        ("/consumers/g/ids/c", r#"{"version":1,"pattern":"grey_list","subscription":{"a":1}}"#, "unknown variant"),
        ("/consumers/g/ids/c", r#"{"version":1,"pattern":"static","subscription":{"a":"1"}}"#, "invalid type"),
        ("/config/topics/t", r#"{"version":1,"config":{"segment.bytes":1024}}"#, "expected a string"),
        (
            "/admin/reassign_partitions",
            r#"{"version":1,"partitions":[{"topic":"..","partition":0,"replicas":[1]}]}"#,
            "relative path",
        ),
        ("/admin/delete_topics", r#"{"version":1,"topics":["a/b"]}"#, "U+002F"),
        (
            "/admin/preferred_replica_election",
            r#"{"version":1,"partitions":[{"topic":"a"}]}"#,
            "missing field `partition`",
        ),
        ("/config/changes/config_change_0000000001", "1", "JSON string"),
    ] {
        let err = error(path, bad.as_bytes());
        assert!(matches!(err, ZkDataError::Schema { .. }), "{path} {bad}: {err}");
        assert!(err.to_string().contains(mentions), "{path}: {err:?} should mention {mentions:?}");
    }
}

#[test]
fn invalid_values_are_named() {
    for (path, bad, mentions) in [
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"-1":[0]}}"#, "\"-1\""),
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"01":[0]}}"#, "\"01\""),
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"x":[0]}}"#, "\"x\""),
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"2147483648":[0]}}"#, "2147483648"),
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"0":[]}}"#, "empty"),
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"0":[1,-2]}}"#, "negative broker id -2"),
        ("/brokers/topics/t", r#"{"version":1,"partitions":{"0":[1,1]}}"#, "twice"),
        ("/brokers/topics/t", r#"{"version":1,"partitions":{}}"#, "no partitions"),
        (
            "/brokers/topics/t/partitions/0/state",
            r#"{"version":1,"isr":[0,0],"leader":0,"controller_epoch":1,"leader_epoch":0}"#,
            "twice",
        ),
        (
            "/brokers/topics/t/partitions/0/state",
            r#"{"version":1,"isr":[0],"leader":-2,"controller_epoch":1,"leader_epoch":0}"#,
            "-2",
        ),
        (
            "/brokers/topics/t/partitions/0/state",
            r#"{"version":1,"isr":[0],"leader":0,"controller_epoch":-1,"leader_epoch":0}"#,
            "controller_epoch",
        ),
        (
            "/brokers/topics/t/partitions/0/state",
            r#"{"version":1,"isr":[0],"leader":0,"controller_epoch":0,"leader_epoch":-3}"#,
            "leader_epoch",
        ),
        ("/brokers/ids/0", r#"{"version":1,"host":"","port":9092,"jmx_port":-1}"#, "host is empty"),
        ("/brokers/ids/0", r#"{"version":1,"host":"h","port":0,"jmx_port":-1}"#, "port"),
        ("/brokers/ids/0", r#"{"version":1,"host":"h","port":70000,"jmx_port":-1}"#, "70000"),
        ("/brokers/ids/0", r#"{"version":1,"host":"h","port":1,"jmx_port":-2}"#, "jmx_port"),
        ("/brokers/ids/0", r#"{"version":1,"host":"h","port":1,"jmx_port":-1,"timestamp":"x"}"#, "timestamp"),
        ("/controller", r#"{"version":1,"brokerid":-1}"#, "brokerid"),
        ("/controller", "-1", "controller broker id"),
        ("/controller", "", "controller broker id"),
        ("/controller_epoch", "-1", "controller epoch"),
        ("/controller_epoch", "2147483648", "controller epoch"),
        ("/consumers/g/ids/c", r#"{"version":1,"pattern":"white_list","subscription":{"a":1,"b":1}}"#, "exactly one"),
        ("/consumers/g/ids/c", r#"{"version":1,"pattern":"black_list","subscription":{}}"#, "exactly one"),
        ("/consumers/g/ids/c", r#"{"version":1,"pattern":"static","subscription":{"a":0}}"#, "stream count 0"),
        ("/consumers/g/ids/c", r#"{"version":1,"pattern":"static","subscription":{}}"#, "no topic"),
        ("/consumers/g/ids/c", r#"{"version":1,"pattern":"static","subscription":{"..":1}}"#, "relative path"),
        (
            "/admin/reassign_partitions",
            r#"{"version":1,"partitions":[{"topic":"a","partition":-1,"replicas":[1]}]}"#,
            "negative",
        ),
        (
            "/admin/reassign_partitions",
            r#"{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[]}]}"#,
            "empty",
        ),
        (
            "/admin/reassign_partitions",
            r#"{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1]},{"topic":"a","partition":0,"replicas":[2]}]}"#,
            "a-0 is listed twice",
        ),
        ("/admin/preferred_replica_election", r#"{"version":1,"partitions":[{"topic":"a","partition":-5}]}"#, "-5"),
        (
            "/admin/preferred_replica_election",
            r#"{"version":1,"partitions":[{"topic":"a","partition":1},{"topic":"a","partition":1}]}"#,
            "twice",
        ),
        ("/admin/delete_topics", r#"{"version":1,"topics":["a","a"]}"#, "twice"),
        ("/config/topics/t", r#"{"version":1,"config":{"":"x"}}"#, "empty name"),
        ("/config/changes/config_change_0000000001", r#"".." "#, "relative path"),
    ] {
        let err = error(path, bad.as_bytes());
        assert!(matches!(err, ZkDataError::Invalid { .. }), "{path} {bad}: {err}");
        assert!(err.to_string().contains(mentions), "{path}: {err} should mention {mentions:?}");
    }
    let err = error("/brokers/topics/t/partitions", b"data");
    assert!(err.to_string().contains("expected no data"), "{err}");
}

#[test]
fn unknown_paths_are_refused() {
    let err = parse("/zookeeper/quota", b"").unwrap_err();
    assert_eq!(err, ZkDataError::UnknownPath { path: "/zookeeper/quota".into() });
    assert_eq!(check("/brokers/", b""), Err(ZkDataError::UnknownPath { path: "/brokers/".into() }));
}

// ---------------------------------------------------------------------------------------
// The classifier.

#[test]
fn classifier_maps_every_path_form() {
    let g = || GroupId::new("grp").unwrap();
    let t = || topic("tp");
    let cases: Vec<(&str, NodeKind)> = vec![
        ("/brokers", NodeKind::Container(Container::Brokers)),
        ("/brokers/ids", NodeKind::Container(Container::BrokerIds)),
        ("/brokers/ids/7", NodeKind::BrokerRegistration { broker_id: 7 }),
        ("/brokers/topics", NodeKind::Container(Container::BrokerTopics)),
        ("/brokers/topics/tp", NodeKind::TopicRegistration { topic: t() }),
        ("/brokers/topics/tp/partitions", NodeKind::Container(Container::TopicPartitions { topic: t() })),
        ("/brokers/topics/tp/partitions/3", NodeKind::Container(Container::Partition { topic: t(), partition: 3 })),
        ("/brokers/topics/tp/partitions/3/state", NodeKind::PartitionState { topic: t(), partition: 3 }),
        ("/brokers/topics/tp/7", NodeKind::Kafka07TopicBroker { topic: t(), broker_id: 7 }),
        ("/brokers/topics/partitions", NodeKind::TopicRegistration { topic: topic("partitions") }),
        ("/controller", NodeKind::Controller),
        ("/controller_epoch", NodeKind::ControllerEpoch),
        ("/consumers", NodeKind::Container(Container::Consumers)),
        ("/consumers/grp", NodeKind::Container(Container::ConsumerGroup { group: g() })),
        ("/consumers/grp/ids", NodeKind::Container(Container::ConsumerIds { group: g() })),
        (
            "/consumers/grp/ids/grp_h-1-abc",
            NodeKind::ConsumerRegistration { group: g(), consumer: ConsumerId::new("grp_h-1-abc").unwrap() },
        ),
        ("/consumers/grp/owners", NodeKind::Container(Container::ConsumerOwners { group: g() })),
        ("/consumers/grp/owners/tp", NodeKind::Container(Container::ConsumerOwnersTopic { group: g(), topic: t() })),
        (
            "/consumers/grp/owners/tp/2",
            NodeKind::ConsumerOwner { group: g(), topic: t(), partition: PartitionKey::Partition(2) },
        ),
        ("/consumers/grp/offsets", NodeKind::Container(Container::ConsumerOffsets { group: g() })),
        ("/consumers/grp/offsets/tp", NodeKind::Container(Container::ConsumerOffsetsTopic { group: g(), topic: t() })),
        (
            "/consumers/grp/offsets/tp/0",
            NodeKind::ConsumerOffset { group: g(), topic: t(), partition: PartitionKey::Partition(0) },
        ),
        (
            "/consumers/grp/offsets/tp/4-1",
            NodeKind::ConsumerOffset {
                group: g(),
                topic: t(),
                partition: PartitionKey::BrokerPartition { broker_id: 4, partition: 1 },
            },
        ),
        ("/admin", NodeKind::Container(Container::Admin)),
        ("/admin/reassign_partitions", NodeKind::ReassignPartitions),
        ("/admin/preferred_replica_election", NodeKind::PreferredReplicaElection),
        ("/admin/delete_topics", NodeKind::DeleteTopics),
        ("/admin/delete_topics/tp", NodeKind::DeleteTopicMarker { topic: t() }),
        ("/config", NodeKind::Container(Container::Config)),
        ("/config/topics", NodeKind::Container(Container::ConfigTopics)),
        ("/config/topics/tp", NodeKind::TopicConfig { topic: t() }),
        ("/config/changes", NodeKind::Container(Container::ConfigChanges)),
        ("/config/changes/config_change_0000000000", NodeKind::ConfigChange { sequence: 0 }),
        ("/config/changes/config_change_2147483647", NodeKind::ConfigChange { sequence: i32::MAX as u32 }),
    ];
    for (path, kind) in cases {
        assert_eq!(NodeKind::classify(path).as_ref(), Some(&kind), "{path}");
        assert_eq!(Node::classify(path).as_ref(), Some(&kind), "{path}");
        assert_eq!(kind.path(), path, "path() inverts classify()");
        assert!(!kind.name().is_empty());
    }
}

#[test]
fn classifier_rejects_other_paths() {
    for path in [
        "",
        "/",
        "brokers",
        "brokers/ids/1",
        "/brokers/",
        "//brokers",
        "/brokers//ids",
        "/brokers/ids/",
        "/brokers/ids/-1",
        "/brokers/ids/01",
        "/brokers/ids/+1",
        "/brokers/ids/x",
        "/brokers/ids/2147483648",
        "/brokers/ids/1/extra",
        "/brokers/topics/..",
        "/brokers/topics/.",
        "/brokers/topics/../ids",
        "/brokers/topics/t/partitions/-1",
        "/brokers/topics/t/partitions/0/status",
        "/brokers/topics/t/partitions/0/state/x",
        "/brokers/topics/t/-1",
        "/brokers/topics/t/01",
        "/brokers/topics/a\u{0}b",
        "/consumers/../ids/x",
        "/consumers/g/ids/..",
        "/consumers/g/owners/t/1-",
        "/consumers/g/owners/t/-3",
        "/consumers/g/owners/t/1-2-3",
        "/consumers/g/owners/t/01-2",
        "/consumers/g/offsets/t/x",
        "/consumers/g/unknown",
        "/controller/x",
        "/admin/other",
        "/admin/delete_topics/..",
        "/config/changes/config_change_1",
        "/config/changes/config_change_00000000001",
        "/config/changes/config_change_-000000001",
        "/config/changes/config_change_2147483648",
        "/config/changes/change_0000000001",
        "/config/topics/a/b",
        "/zookeeper",
        "/zookeeper/quota",
        "/kafka/brokers/ids/1",
    ] {
        assert_eq!(NodeKind::classify(path), None, "{path:?} must not classify");
        assert!(matches!(check(path, b""), Err(ZkDataError::UnknownPath { .. })), "{path:?}");
    }
    let long = format!("/brokers/topics/{}", "a".repeat(256));
    assert_eq!(NodeKind::classify(&long), None);
}

#[test]
fn names_refuse_path_tricks() {
    for bad in ["", ".", "..", "a/b", "/", "../x", "a\u{0}", "a\nb", "\u{FFFD}"] {
        assert!(matches!(TopicName::new(bad), Err(ZkDataError::InvalidName { what: "topic name", .. })), "{bad:?}");
        assert!(GroupId::new(bad).is_err(), "{bad:?}");
        assert!(ConsumerId::new(bad).is_err(), "{bad:?}");
    }
    assert!(TopicName::new("a".repeat(256)).is_err());
    assert!(GroupId::new("a".repeat(1000)).is_ok(), "group ids have no length limit of their own");
    let err = TopicName::new("x/y").unwrap_err();
    assert_eq!(err.to_string(), "invalid topic name \"x/y\": it contains the illegal character U+002F");
    // Validated names build exactly the expected paths.
    let kind = NodeKind::ConsumerOffset {
        group: GroupId::new("my.group").unwrap(),
        topic: topic("events"),
        partition: PartitionKey::Partition(5),
    };
    assert_eq!(kind.path(), "/consumers/my.group/offsets/events/5");
}

// ---------------------------------------------------------------------------------------
// Property tests.

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9._-]{1,20}",
        // Any characters ZooKeeper allows, including quotes, backslashes, spaces and non-ASCII.
        "[ -~\u{a0}-\u{ff}\u{4e00}-\u{4e10}]{1,12}",
    ]
    .prop_filter("valid topic name", |s| TopicName::new(s.as_str()).is_ok())
}

fn topic_name() -> impl Strategy<Value = TopicName> {
    name().prop_map(|s| TopicName::new(s).unwrap())
}

fn group_id() -> impl Strategy<Value = GroupId> {
    name().prop_map(|s| GroupId::new(s).unwrap())
}

fn consumer_id() -> impl Strategy<Value = ConsumerId> {
    name().prop_map(|s| ConsumerId::new(s).unwrap())
}

fn broker_id() -> impl Strategy<Value = i32> {
    prop_oneof![0..20i32, 0..=i32::MAX]
}

fn replicas(allow_empty: bool) -> impl Strategy<Value = Vec<i32>> {
    proptest::collection::btree_set(broker_id(), usize::from(!allow_empty)..6)
        .prop_flat_map(|set| Just(set.into_iter().collect::<Vec<_>>()).prop_shuffle())
}

fn partition_key() -> impl Strategy<Value = PartitionKey> {
    prop_oneof![
        broker_id().prop_map(PartitionKey::Partition),
        (broker_id(), broker_id())
            .prop_map(|(broker_id, partition)| PartitionKey::BrokerPartition { broker_id, partition }),
    ]
}

fn streams() -> impl Strategy<Value = u32> {
    prop_oneof![1..10u32, 1..=i32::MAX as u32]
}

fn regex() -> impl Strategy<Value = String> {
    "[ -~]{1,20}"
}

fn subscription() -> impl Strategy<Value = Subscription> {
    prop_oneof![
        proptest::collection::btree_map(topic_name(), streams(), 1..5).prop_map(Subscription::Static),
        (regex(), streams()).prop_map(|(regex, streams)| Subscription::Whitelist { regex, streams }),
        (regex(), streams()).prop_map(|(regex, streams)| Subscription::Blacklist { regex, streams }),
    ]
}

fn host() -> impl Strategy<Value = String> {
    "[a-z0-9.-]{1,20}"
}

fn port() -> impl Strategy<Value = u16> {
    1..=u16::MAX
}

/// A node kind with a valid random value for it.
fn node() -> impl Strategy<Value = (NodeKind, TypedValue)> {
    let brokers = prop_oneof![
        (broker_id(), host(), port(), proptest::option::of(port()), proptest::option::of(any::<u64>())).prop_map(
            |(id, host, port, jmx_port, timestamp)| {
                (
                    NodeKind::BrokerRegistration { broker_id: id },
                    TypedValue::Broker(BrokerNode::Registration(BrokerRegistration {
                        host,
                        port,
                        jmx_port,
                        timestamp,
                    })),
                )
            }
        ),
        (broker_id(), host(), any::<u64>(), host(), port()).prop_map(|(id, chost, epoch_ms, host, port)| {
            (
                NodeKind::BrokerRegistration { broker_id: id },
                TypedValue::Broker(BrokerNode::Kafka07(Kafka07BrokerRegistration {
                    creator: Kafka07Creator { host: chost, epoch_ms },
                    host,
                    port,
                })),
            )
        }),
        (topic_name(), proptest::collection::btree_map(broker_id(), replicas(false), 1..6)).prop_map(
            |(topic, partitions)| {
                (
                    NodeKind::TopicRegistration { topic },
                    TypedValue::Topic(TopicNode::Registration(TopicRegistration { partitions })),
                )
            }
        ),
        topic_name()
            .prop_map(|topic| (NodeKind::TopicRegistration { topic }, TypedValue::Topic(TopicNode::Kafka07Parent))),
        (topic_name(), broker_id(), replicas(true), -1..=i32::MAX, broker_id(), broker_id()).prop_map(
            |(topic, partition, isr, leader, controller_epoch, leader_epoch)| {
                (
                    NodeKind::PartitionState { topic, partition },
                    TypedValue::PartitionState(PartitionState { isr, leader, controller_epoch, leader_epoch }),
                )
            }
        ),
        (topic_name(), broker_id(), 1..=i32::MAX as u32).prop_map(|(topic, broker_id, count)| {
            (
                NodeKind::Kafka07TopicBroker { topic, broker_id },
                TypedValue::Kafka07PartitionCount(Kafka07PartitionCount(count)),
            )
        }),
        broker_id().prop_map(|id| (NodeKind::Controller, TypedValue::Controller(ControllerNode::BrokerId(id)))),
        (broker_id(), proptest::option::of(any::<u64>())).prop_map(|(broker_id, timestamp)| {
            (NodeKind::Controller, TypedValue::Controller(ControllerNode::Registration { broker_id, timestamp }))
        }),
        broker_id().prop_map(|e| (NodeKind::ControllerEpoch, TypedValue::ControllerEpoch(ControllerEpoch(e)))),
    ];
    let consumers = prop_oneof![
        (group_id(), consumer_id(), subscription(), proptest::option::of(any::<u64>())).prop_map(
            |(group, consumer, subscription, timestamp)| {
                (
                    NodeKind::ConsumerRegistration { group, consumer },
                    TypedValue::ConsumerRegistration(ConsumerRegistrationNode::Registration(ConsumerRegistration {
                        subscription,
                        timestamp,
                    })),
                )
            }
        ),
        (group_id(), consumer_id(), subscription()).prop_map(|(group, consumer, subscription)| {
            (
                NodeKind::ConsumerRegistration { group, consumer },
                TypedValue::ConsumerRegistration(ConsumerRegistrationNode::Kafka07(Kafka07ConsumerRegistration(
                    subscription,
                ))),
            )
        }),
        (group_id(), topic_name(), partition_key(), consumer_id(), 0..=i32::MAX as u32).prop_map(
            |(group, topic, partition, consumer_id, thread)| {
                (
                    NodeKind::ConsumerOwner { group, topic, partition },
                    TypedValue::ConsumerOwner(ConsumerThreadId { consumer_id, thread }),
                )
            }
        ),
        (group_id(), topic_name(), partition_key(), 0..=i64::MAX).prop_map(|(group, topic, partition, offset)| {
            (NodeKind::ConsumerOffset { group, topic, partition }, TypedValue::ConsumerOffset(ConsumerOffset(offset)))
        }),
    ];
    let topic_partitions = || proptest::collection::btree_set((topic_name(), broker_id()), 0..5);
    let admin = prop_oneof![
        (topic_partitions(), proptest::collection::vec(replicas(false), 5)).prop_map(|(set, lists)| {
            let partitions = set
                .into_iter()
                .zip(lists)
                .map(|((topic, partition), replicas)| PartitionReassignment { topic, partition, replicas })
                .collect();
            (NodeKind::ReassignPartitions, TypedValue::ReassignPartitions(ReassignPartitions { partitions }))
        }),
        topic_partitions().prop_map(|set| {
            let partitions = set.into_iter().map(|(topic, partition)| TopicPartition { topic, partition }).collect();
            (
                NodeKind::PreferredReplicaElection,
                TypedValue::PreferredReplicaElection(PreferredReplicaElection { partitions }),
            )
        }),
        proptest::collection::btree_set(topic_name(), 0..5).prop_map(|set| {
            let topics = set.into_iter().collect();
            (NodeKind::DeleteTopics, TypedValue::DeleteTopics(DeleteTopicsNode::List(DeleteTopics { topics })))
        }),
        Just((NodeKind::DeleteTopics, TypedValue::DeleteTopics(DeleteTopicsNode::MarkerParent))),
        topic_name().prop_map(|topic| (NodeKind::DeleteTopicMarker { topic }, TypedValue::Empty)),
        (topic_name(), proptest::collection::btree_map("[a-z.]{1,15}", ".{0,10}", 0..6)).prop_map(|(topic, config)| {
            (NodeKind::TopicConfig { topic }, TypedValue::TopicConfig(TopicConfig { config }))
        }),
        (0..=i32::MAX as u32, topic_name()).prop_map(|(sequence, topic)| {
            (NodeKind::ConfigChange { sequence }, TypedValue::ConfigChange(ConfigChange { topic }))
        }),
        (group_id(), topic_name()).prop_map(|(group, topic)| {
            (NodeKind::Container(Container::ConsumerOffsetsTopic { group, topic }), TypedValue::Empty)
        }),
    ];
    prop_oneof![brokers, consumers, admin]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn serialise_then_parse_is_identity((kind, value) in node()) {
        let path = kind.path();
        let classified = NodeKind::classify(&path);
        prop_assert_eq!(classified.as_ref(), Some(&kind), "path {}", path);
        let bytes = value.to_bytes();
        let parsed = parse(&path, &bytes);
        prop_assert_eq!(parsed.as_ref(), Ok(&value), "{} <- {:?}", path, String::from_utf8_lossy(&bytes));
        prop_assert_eq!(check(&path, &bytes), Ok(()));
    }

    #[test]
    fn arbitrary_bytes_never_panic((kind, _) in node(), bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Err(err) = kind.parse(&bytes) {
            let path = kind.path();
            prop_assert_eq!(err.path(), Some(path.as_str()));
        }
    }

    #[test]
    fn mutated_values_never_panic((kind, value) in node(), index in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = value.to_bytes();
        if !bytes.is_empty() {
            let i = index.index(bytes.len());
            bytes[i] = byte;
        }
        if let Ok(reparsed) = kind.parse(&bytes) {
            // Whatever still parses re-serialises to something that parses to the same value.
            prop_assert_eq!(kind.parse(&reparsed.to_bytes()), Ok(reparsed));
        }
    }

    #[test]
    fn arbitrary_paths_never_panic(path in "(/[a-z0-9_.-]{0,8}){0,7}/?") {
        if let Some(kind) = NodeKind::classify(&path) {
            prop_assert_eq!(kind.path(), path);
        }
    }
}
