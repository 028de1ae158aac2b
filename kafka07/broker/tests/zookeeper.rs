//! ZooKeeper registration against a real ZooKeeper server (Debian's libzookeeper-java): the 0.7
//! layout and values, topic nodes on first produce, re-registration after a session expiry,
//! refusal of a second live broker with the same id, restart after `kill -9` (also under another
//! name for the same address).

use kwire07_test_support as common;

use std::time::{Duration, Instant};

use common::*;
use zookeeper_client::Client;

fn runtime() -> tokio::runtime::Runtime {
    // Multi-threaded so the test's own session keeps pinging while the test thread sleeps.
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

/// Reads a node: `Some((data, ephemeral owner))`.
fn read(rt: &tokio::runtime::Runtime, zk: &Client, path: &str) -> Option<(String, i64)> {
    rt.block_on(async {
        match zk.get_data(path).await {
            Ok((data, stat)) => Some((String::from_utf8(data).unwrap(), stat.ephemeral_owner)),
            Err(zookeeper_client::Error::NoNode) => None,
            Err(e) => panic!("get {path}: {e}"),
        }
    })
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts a broker and waits for its ZooKeeper registration.
fn zk_broker(opts: BrokerOptions) -> BrokerProcess {
    let mut b = broker(opts);
    assert!(b.wait_for_stderr("registered in ZooKeeper", Duration::from_secs(30)), "{}", b.stderr());
    b
}

/// Broker options for ZooKeeper tests: the smallest session timeout ZooKeeper allows with
/// tickTime=2000 (2 ticks), so expiry tests stay short.
fn zk_opts(zk: &ZooKeeper, id: u32) -> BrokerOptions {
    BrokerOptions {
        broker_id: Some(id),
        zookeeper: Some(zk.connect_string()),
        num_partitions: Some(3),
        ..Default::default()
    }
    .set("zk.sessiontimeout.ms", 4000)
    .set("topic.partition.count.map", "wide:5")
}

#[test]
fn registration_layout_values_and_topics() {
    let Some(zk) = ZooKeeper::start_or_skip() else { return };
    let rt = runtime();
    let client = rt.block_on(Client::connect(&zk.connect_string())).unwrap();
    let b = zk_broker(zk_opts(&zk, 7));

    let (value, owner) = read(&rt, &client, "/brokers/ids/7").expect("broker node");
    assert_ne!(owner, 0, "broker node is ephemeral");
    let parts: Vec<&str> = value.split(':').collect();
    assert_eq!(parts.len(), 3, "creator:host:port has exactly two colons: {value}");
    assert_eq!(parts[1], "127.0.0.1");
    assert_eq!(parts[2], b.port().to_string());
    let (creator_host, creator_ms) = parts[0].rsplit_once('-').unwrap();
    assert_eq!(creator_host, "127.0.0.1");
    let ms: u128 = creator_ms.parse().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    assert!(ms <= now && now - ms < 120_000, "creator time {ms} vs now {now}");
    assert!(read(&rt, &client, "/brokers/topics").is_some(), "/brokers/topics exists");

    // A topic is registered when first produced to, with its partition count.
    let mut c = Conn::connect(b.addr());
    c.produce("events", 1, &msg_v0(b"x"));
    c.produce("wide", 4, &msg_v0(b"y"));
    wait_for("topic nodes", Duration::from_secs(10), || {
        read(&rt, &client, "/brokers/topics/events/7").is_some()
            && read(&rt, &client, "/brokers/topics/wide/7").is_some()
    });
    let (count, owner) = read(&rt, &client, "/brokers/topics/events/7").unwrap();
    assert_eq!(count, "3");
    assert_ne!(owner, 0, "topic node is ephemeral");
    assert_eq!(read(&rt, &client, "/brokers/topics/wide/7").unwrap().0, "5");
    let (persistent, owner) = read(&rt, &client, "/brokers/topics/events").unwrap();
    assert_eq!((persistent.as_str(), owner), ("", 0), "parent is persistent and empty");
    // Fetches of unknown topics register nothing.
    assert_eq!(c.fetch("ghost", 0, 0, 10), (0, vec![]));
    std::thread::sleep(Duration::from_millis(300));
    assert!(read(&rt, &client, "/brokers/topics/ghost").is_none());
    drop(b);
}

#[test]
fn session_expiry_re_registers_and_sigterm_unregisters() {
    let Some(zk) = ZooKeeper::start_or_skip() else { return };
    let rt = runtime();
    let client = rt.block_on(Client::connect(&zk.connect_string())).unwrap();
    let mut b = zk_broker(zk_opts(&zk, 3));
    let mut c = Conn::connect(b.addr());
    c.produce("survivor", 0, &msg_v0(b"x"));
    wait_for("topic node", Duration::from_secs(10), || read(&rt, &client, "/brokers/topics/survivor/3").is_some());
    let (value, first_owner) = read(&rt, &client, "/brokers/ids/3").unwrap();

    // Freeze the broker longer than its session timeout: ZooKeeper expires the session and
    // deletes its ephemeral nodes; once thawed the broker must notice and register again.
    b.signal("STOP").unwrap();
    wait_for("expiry of the frozen broker's session", Duration::from_secs(30), || {
        read(&rt, &client, "/brokers/ids/3").is_none()
    });
    assert!(read(&rt, &client, "/brokers/topics/survivor/3").is_none());
    b.signal("CONT").unwrap();
    wait_for("re-registration", Duration::from_secs(30), || {
        read(&rt, &client, "/brokers/ids/3").is_some() && read(&rt, &client, "/brokers/topics/survivor/3").is_some()
    });
    let (again, owner) = read(&rt, &client, "/brokers/ids/3").unwrap();
    assert_ne!(owner, first_owner, "registered by a new session");
    assert_eq!(again, value, "same registration value");
    assert_eq!(read(&rt, &client, "/brokers/topics/survivor/3").unwrap().0, "3");
    // Still serving.
    let mut c = Conn::connect(b.addr());
    assert_eq!(c.fetch_all("survivor", 0, 0).len(), 1);

    // SIGTERM: clean exit, nodes gone without waiting for a session timeout.
    let status = b.terminate().unwrap();
    assert!(status.success());
    wait_for("unregistration", Duration::from_secs(3), || read(&rt, &client, "/brokers/ids/3").is_none());
}

#[test]
fn second_live_broker_with_the_same_id_is_refused_but_a_restart_after_kill_9_is_not() {
    let Some(zk) = ZooKeeper::start_or_skip() else { return };
    let rt = runtime();
    let client = rt.block_on(Client::connect(&zk.connect_string())).unwrap();
    let mut first = zk_broker(zk_opts(&zk, 5));
    let (value, _) = read(&rt, &client, "/brokers/ids/5").unwrap();

    // Same id, another port and log dir: the holder answers on its published address, so it is
    // live and the second broker is refused without waiting out a possible stale session.
    let mut second = BrokerProcess::start(env!("CARGO_BIN_EXE_kwire07-broker"), zk_opts(&zk, 5));
    let err = second.as_mut().err().map(|e| e.to_string()).unwrap_or_else(|| {
        // It bound its port before registering; it must exit on its own.
        let s = second.as_mut().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while s.is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!s.is_running(), "second broker with id 5 is still running");
        s.stderr()
    });
    assert!(err.contains("already registered by a live broker"), "{err}");
    assert!(!err.contains("waiting up to"), "refused at once, not after the stale-session wait: {err}");
    assert_eq!(read(&rt, &client, "/brokers/ids/5").unwrap().0, value, "first registration untouched");

    // kill -9 leaves the node until the session expires; a restart waits it out and registers.
    first.kill9().unwrap();
    first.restart().unwrap();
    wait_for("re-registration after kill -9", Duration::from_secs(30), || {
        read(&rt, &client, "/brokers/ids/5").is_some_and(|(v, _)| v != value)
    });
    assert!(first.is_running());
}

#[test]
fn chroot_is_created_and_used() {
    let Some(zk) = ZooKeeper::start_or_skip() else { return };
    let rt = runtime();
    let client = rt.block_on(Client::connect(&zk.connect_string())).unwrap();
    let opts = BrokerOptions { zookeeper: Some(format!("{}/kafka/prod", zk.connect_string())), ..zk_opts(&zk, 1) };
    let b = zk_broker(opts);
    assert!(read(&rt, &client, "/kafka/prod/brokers/ids/1").is_some());
    assert!(read(&rt, &client, "/brokers/ids/1").is_none());
    drop(b);
}

/// A broker restarted after `kill -9` under another name for the same address (`localhost`
/// published before, `127.0.0.1` now) finds its own listener behind the old node: that is no
/// live holder, so it waits out the old session and registers instead of being refused.
#[test]
fn restart_under_another_name_for_its_own_address_waits_instead_of_refusing() {
    let Some(zk) = ZooKeeper::start_or_skip() else { return };
    let rt = runtime();
    let client = rt.block_on(Client::connect(&zk.connect_string())).unwrap();
    let mut first = zk_broker(zk_opts(&zk, 8).set("hostname", "localhost"));
    let (value, _) = read(&rt, &client, "/brokers/ids/8").unwrap();
    assert!(value.ends_with(&format!(":localhost:{}", first.port())), "{value}");
    let port = first.port();
    first.kill9().unwrap();

    let again = zk_broker(BrokerOptions { port: Some(port), ..zk_opts(&zk, 8) });
    assert!(again.stderr().contains("waiting up to"), "{}", again.stderr());
    let (value, _) = read(&rt, &client, "/brokers/ids/8").unwrap();
    assert!(value.ends_with(&format!(":127.0.0.1:{port}")), "{value}");
}
