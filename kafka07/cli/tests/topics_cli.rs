//! `kwire07 topics create|alter|describe|delete` and `kwire07 zk dump|check` against the real
//! `kwire07-broker` binary, standalone and with a real ZooKeeper.

use kwire07_test_support as common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{broker, kwire07, kwire07_output, lines, BrokerOptions, ZooKeeper};
use kwire07_client::ZkCluster;

/// `kwire07 topics describe` output as setting name → (value, "overridden" | "inherited").
fn describe(cluster: &[&str], topic: &str) -> BTreeMap<String, (String, String)> {
    let args: Vec<&str> = cluster.iter().copied().chain(["topics", "describe", topic]).collect();
    lines(&kwire07(&args, b""))
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 3, "describe line {l:?}");
            (f[0].to_owned(), (f[1].to_owned(), f[2].to_owned()))
        })
        .collect()
}

fn setting(name: &str, value: &str, source: &str) -> (String, (String, String)) {
    (name.to_owned(), (value.to_owned(), source.to_owned()))
}

/// A refused command: exit status non-zero, one `kwire07: ` line on stderr naming `needle`.
fn assert_refused(args: &[&str], needle: &str) {
    let out = kwire07_output(args, b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded: {}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("kwire07: "), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} does not mention {needle:?}");
}

fn partition_dirs(b: &common::BrokerProcess, topic: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(b.log_dir())
        .map(|rd| rd.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    v.retain(|n| n.rsplit_once('-').is_some_and(|(t, p)| t == topic && p.parse::<u32>().is_ok()));
    v.sort();
    v
}

#[test]
fn standalone_create_describe_alter_delete() {
    let b = broker(BrokerOptions::default());
    let addr = b.address();
    let at = ["--broker", addr.as_str()];

    let created = lines(&kwire07(
        &["--broker", &addr, "topics", "create", "t", "--partitions", "3", "--config", "segment.bytes=2048"],
        b"",
    ));
    assert!(created.iter().any(|l| l.starts_with("segment.bytes")), "{created:?}");
    assert_eq!(partition_dirs(&b, "t"), ["t-0", "t-1", "t-2"]);

    let d = describe(&at, "t");
    assert_eq!(d.get("segment.bytes"), Some(&setting("segment.bytes", "2048", "overridden").1), "{d:?}");
    assert_eq!(d.get("partitions"), Some(&setting("partitions", "3", "overridden").1), "{d:?}");
    let inherited = d.get("retention.ms").expect("retention.ms listed");
    assert_eq!(inherited.1, "inherited", "{d:?}");

    kwire07(&["--broker", &addr, "topics", "alter", "t", "--delete-config", "segment.bytes"], b"");
    let d = describe(&at, "t");
    let seg = d.get("segment.bytes").expect("segment.bytes listed");
    assert_eq!(seg.1, "inherited", "{d:?}");
    assert_ne!(seg.0, "2048", "{d:?}");

    kwire07(&["--broker", &addr, "topics", "alter", "t", "--config", "flush.messages=7"], b"");
    assert_eq!(describe(&at, "t").get("flush.messages"), Some(&setting("", "7", "overridden").1));

    let deleted = String::from_utf8_lossy(&kwire07(&["--broker", &addr, "topics", "delete", "t"], b"")).into_owned();
    assert!(deleted.contains("deleted topic t"), "{deleted}");
    assert!(partition_dirs(&b, "t").is_empty(), "{:?}", partition_dirs(&b, "t"));
    assert_refused(&["--broker", &addr, "topics", "describe", "t"], "does not exist");
}

#[test]
fn standalone_bad_input_is_one_line_and_changes_nothing() {
    let b = broker(BrokerOptions::default());
    let addr = b.address();
    kwire07(&["--broker", &addr, "topics", "create", "keep", "--config", "segment.bytes=4096"], b"");
    let before = describe(&["--broker", &addr], "keep");

    assert_refused(&["--broker", &addr, "topics", "create", "x", "--config", "nonsense=1"], "nonsense");
    assert_refused(&["--broker", &addr, "topics", "create", "y", "--config", "segment.bytes=-5"], "segment.bytes");
    assert_refused(&["--broker", &addr, "topics", "create", "../x"], "../x");
    assert_refused(&["--broker", &addr, "topics", "create", ""], "empty");
    assert_refused(&["--broker", &addr, "topics", "delete", "missing"], "missing");
    assert_refused(&["--broker", &addr, "topics", "alter", "keep", "--config", "segment.bytes=-5"], "segment.bytes");
    assert_refused(&["--broker", &addr, "topics", "alter", "keep"], "--config");
    assert_refused(&["--broker", &addr, "topics", "create", "z", "--config", "novalue"], "NAME=VALUE");

    assert!(partition_dirs(&b, "x").is_empty() && partition_dirs(&b, "y").is_empty());
    assert!(!b.log_dir().join("../x-0").exists(), "a path-like name escaped the log dir");
    assert_eq!(describe(&["--broker", &addr], "keep"), before);
}

#[test]
fn no_broker_is_one_line() {
    let port = common::free_port().expect("free port");
    assert_refused(&["--broker", &format!("127.0.0.1:{port}"), "topics", "describe", "t"], "127.0.0.1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zookeeper_create_dump_and_check() {
    let Some(zk_server) = ZooKeeper::start_or_skip() else { return };
    let connect = zk_server.connect_string();
    let b = broker(BrokerOptions { broker_id: Some(4), zookeeper: Some(connect.clone()), ..Default::default() });
    let zk = ZkCluster::connect(&connect).await.expect("zk");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while zk.brokers().await.expect("brokers").is_empty() {
        assert!(std::time::Instant::now() < deadline, "broker never registered: {}", b.stderr());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let at = ["--zookeeper", connect.as_str()];

    kwire07(
        &["--zookeeper", &connect, "topics", "create", "zt", "--partitions", "2", "--config", "retention.ms=60000"],
        b"",
    );
    let d = describe(&at, "zt");
    assert_eq!(d.get("retention.ms").map(|v| v.1.as_str()), Some("overridden"), "{d:?}");
    assert_eq!(d.get("segment.bytes").map(|v| v.1.as_str()), Some("inherited"), "{d:?}");

    // `PATH<TAB>KIND<TAB>DATA`, DATA as Kafka writes the node.
    let dump = lines(&kwire07(&["--zookeeper", &connect, "zk", "dump"], b""));
    let line = |path: &str| dump.iter().find(|l| l.split('\t').next() == Some(path)).cloned();
    let config = line("/config/topics/zt").unwrap_or_else(|| panic!("no /config/topics/zt in {dump:#?}"));
    let fields: Vec<&str> = config.split('\t').collect();
    assert_eq!(fields[..2], ["/config/topics/zt", "topic-config"], "{config}");
    let data: serde_json::Value = serde_json::from_str(fields[2]).unwrap_or_else(|e| panic!("{config}: {e}"));
    assert_eq!(data, serde_json::json!({"version": 1, "config": {"partitions": "2", "retention.ms": "60000"}}));
    let registration = line("/brokers/ids/4").unwrap_or_else(|| panic!("no /brokers/ids/4 in {dump:#?}"));
    let fields: Vec<&str> = registration.split('\t').collect();
    assert_eq!(fields[1], "broker", "{registration}");
    assert!(fields[2].ends_with(&format!(":127.0.0.1:{}", b.port())), "0.7's creator:host:port: {registration}");
    assert!(!format!("{dump:?}").contains("Kafka07"), "Rust Debug output: {dump:#?}");
    assert!(dump.iter().all(|l| !l.contains("\tINVALID\t")), "{dump:#?}");

    let ok = kwire07_output(&["--zookeeper", &connect, "zk", "check"], b"");
    assert!(ok.status.success(), "zk check: {}", String::from_utf8_lossy(&ok.stderr));
    let said = String::from_utf8_lossy(&ok.stdout);
    assert!(said.ends_with(" nodes checked, all valid\n") && said.lines().count() == 1, "{said}");

    // One malformed broker registration: `kwire07 topics` warns about it and lists the rest.
    zk.write_persistent("/brokers/ids/7", "garbage").await.expect("write bad node");
    let listed = kwire07_output(&["--zookeeper", &connect, "topics"], b"");
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let err = String::from_utf8_lossy(&listed.stderr);
    assert!(err.contains("warning") && err.contains("/brokers/ids/7"), "{err}");
    let out = String::from_utf8_lossy(&listed.stdout);
    assert!(out.contains("brokers (1)") && out.contains("  zt  "), "{out}");
    zk.delete("/brokers/ids/7").await.expect("remove bad node");

    zk.write_persistent("/config/topics/bad", "not json").await.expect("write bad node");
    let bad = kwire07_output(&["--zookeeper", &connect, "zk", "check"], b"");
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    let reported = lines(&bad.stdout);
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].starts_with("/config/topics/bad\tINVALID\t"), "{reported:?}");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.starts_with("kwire07: ") && err.lines().count() == 1, "{err}");

    kwire07(&["--zookeeper", &connect, "topics", "delete", "zt"], b"");
    let dump = lines(&kwire07(&["--zookeeper", &connect, "zk", "dump"], b""));
    assert!(dump.iter().all(|l| l.split('\t').next() != Some("/config/topics/zt")), "{dump:#?}");
}
