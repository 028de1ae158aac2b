//! A ZooKeeper group consumer whose session expires registers again, as 0.7's Scala consumer
//! does (`ZKSessionExpireListener`): its ephemeral `ids` and `owners` nodes come back under a
//! new session, and it keeps consuming, losing nothing and delivering nothing twice.
//!
//! The expiry is forced the way Curator's `KillSession` does it: a second client attaches to
//! the consumer's session (same id and password) and closes it, so the server ends the
//! session and deletes its ephemeral nodes. The consumer reaches ZooKeeper through a proxy the
//! test cuts meanwhile: otherwise its client, reconnecting at once, can take the session back
//! before the close lands (a race a loaded machine loses often enough to fail a CI run).

use kwire07_test_support as common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{broker, BrokerOptions, ZooKeeper};
use kwire07_client::assignment::BrokerPartition;
use kwire07_client::group::{GroupConfig, GroupConsumer};
use kwire07_client::producer::{Discovery, Producer, ProducerConfig, Record};
use kwire07_client::{BrokerConnection, ZkCluster};
use zookeeper_client::Client;

const GROUP: &str = "g";
const TOPIC: &str = "events";
const ID_NODE: &str = "/consumers/g/ids/g_a";
const OWNER_NODES: [&str; 2] = ["/consumers/g/owners/events/0-0", "/consumers/g/owners/events/0-1"];

/// A TCP proxy to ZooKeeper that can be cut: its connections dropped and new ones refused.
struct CuttableProxy {
    addr: String,
    cut: Arc<AtomicBool>,
    connections: Arc<Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl CuttableProxy {
    async fn start(upstream: &str) -> CuttableProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let (cut, connections) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
        let (cut2, conns2, upstream) = (cut.clone(), connections.clone(), upstream.to_owned());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if cut2.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is closed at once
                }
                let upstream = upstream.clone();
                let task = tokio::spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                conns2.lock().unwrap().push(task.abort_handle());
            }
        });
        CuttableProxy { addr, cut, connections }
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for c in self.connections.lock().unwrap().drain(..) {
            c.abort();
        }
    }

    fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// `(data, ephemeral owner)` of a node, `None` when it does not exist.
async fn node(zk: &ZkCluster, path: &str) -> Option<(String, i64)> {
    match zk.client().get_data(path).await {
        Ok((data, stat)) => Some((String::from_utf8(data).expect("utf8"), stat.ephemeral_owner)),
        Err(zookeeper_client::Error::NoNode) => None,
        Err(e) => panic!("get {path}: {e}"),
    }
}

async fn produce(broker: &str, range: std::ops::Range<u32>) {
    let mut producer =
        Producer::new(ProducerConfig::new(Discovery::Static(vec![broker.to_owned()]))).await.expect("producer");
    for i in range {
        producer.send(Record::new(TOPIC, format!("msg-{i:03}")).with_partition((i % 2) as i32)).await.expect("send");
    }
    producer.close().await.expect("close");
}

/// Consumes until `seen` holds `n` messages (or 30 s pass).
async fn consume_until(c: &mut GroupConsumer, seen: &mut Vec<String>, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.len() < n && Instant::now() < deadline {
        if let Some(m) = c.next_message(Duration::from_millis(50)).await.expect("next") {
            seen.push(String::from_utf8_lossy(&m.payload).into_owned());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_registers_again_after_session_expiry_and_keeps_consuming() {
    let Some(zk_server) = ZooKeeper::start_or_skip() else { return };
    let zkc = zk_server.connect_string();
    let b0 = broker(BrokerOptions {
        broker_id: Some(0),
        num_partitions: Some(2),
        zookeeper: Some(zkc.clone()),
        ..Default::default()
    });
    let zk = ZkCluster::connect(&zkc).await.expect("zk");

    // Registers the topic (first produce) and waits for ZooKeeper to list it.
    produce(&b0.address(), 0..40).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while zk.topic_partition_counts(TOPIC).await.expect("zk").is_empty() {
        assert!(Instant::now() < deadline, "topic not registered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let proxy = CuttableProxy::start(&zkc).await;
    let mut config = GroupConfig::new(&proxy.addr, GROUP, &[TOPIC]);
    config.consumer_id = Some("a".into());
    // The smallest timeout the server grants with tickTime=2000.
    config.session_timeout = Duration::from_millis(4000);
    config.rebalance_backoff = Duration::from_millis(300);
    config.rebalance_retries = 30;
    config.autocommit_interval = Duration::from_millis(200);
    config.poll_backoff = Duration::from_millis(20);
    let mut consumer = GroupConsumer::join(config).await.expect("join");
    let mut seen = Vec::new();
    consume_until(&mut consumer, &mut seen, 40).await;
    assert_eq!(seen.len(), 40);

    let session = consumer.zookeeper().client().session().clone();
    let first_owner = session.id().0;
    let registration = node(&zk, ID_NODE).await.expect("registered");
    assert_eq!(registration, (r#"{ "events": 1 }"#.to_owned(), first_owner));
    for path in OWNER_NODES {
        assert_eq!(node(&zk, path).await, Some(("g_a-0".to_owned(), first_owner)), "{path}");
    }
    let rebalances = consumer.rebalances();

    // Kill the session: cut the consumer off (for the moment it takes; the consumer is not
    // polled meanwhile, or its attempt to open a new session would time out against the cut),
    // attach to its session and close it (retried until the server has ended it), then let the
    // consumer reach ZooKeeper again.
    proxy.cut();
    let deadline = Instant::now() + Duration::from_secs(30);
    let old_session_ended = |n: &Option<(String, i64)>| n.as_ref().is_none_or(|(_, owner)| *owner != first_owner);
    while !old_session_ended(&node(&zk, ID_NODE).await) {
        assert!(Instant::now() < deadline, "session was not ended: {ID_NODE} still exists");
        let attach = Client::connector().with_session(session.clone()).connect(&zkc);
        if let Ok(Ok(killer)) = tokio::time::timeout(Duration::from_secs(2), attach).await {
            drop(killer);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    proxy.restore();
    // Every node of the old session is gone: absent, or created again by a new session.
    for path in OWNER_NODES {
        assert!(old_session_ended(&node(&zk, path).await), "{path} outlived the session");
    }

    // Messages produced after the expiry are consumed once the consumer is back.
    produce(&b0.address(), 40..100).await;
    consume_until(&mut consumer, &mut seen, 100).await;

    // The consumer may fetch on (as 0.7's fetchers do) before its ZooKeeper client has learnt
    // that the session is over; it registers again once it has. Keep polling until then.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let owner = node(&zk, ID_NODE).await.map(|(_, owner)| owner);
        let mut claimed = true;
        for path in OWNER_NODES {
            claimed &= owner.is_some() && node(&zk, path).await.map(|(_, o)| o) == owner;
        }
        if claimed {
            break;
        }
        assert!(Instant::now() < deadline, "{ID_NODE} and its partitions were not registered again");
        assert!(consumer.next_message(Duration::from_millis(20)).await.expect("next").is_none());
    }
    let (value, owner) = node(&zk, ID_NODE).await.expect("registered again");
    assert_eq!(value, registration.0, "same registration value");
    assert_ne!(owner, first_owner, "registered by a new session");
    assert_eq!(owner, consumer.zookeeper().client().session_id().0, "registered by the consumer's new session");
    for path in OWNER_NODES {
        assert_eq!(node(&zk, path).await, Some(("g_a-0".to_owned(), owner)), "{path} claimed again");
    }
    assert!(consumer.rebalances() > rebalances, "rebalanced after the expiry");
    assert!(consumer.next_message(Duration::from_millis(300)).await.expect("next").is_none(), "nothing more");
    consumer.close().await.expect("close");

    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a message was delivered twice: {seen:?}");
    assert_eq!(seen.len(), 100, "{seen:?}");
    for i in 0..100 {
        assert!(unique.contains(&format!("msg-{i:03}")), "msg-{i:03} missing");
    }
    // The new session committed every partition up to its log end.
    let mut conn = BrokerConnection::connect(&b0.address()).await.expect("connect");
    for p in 0..2 {
        let end = conn.offset_at(TOPIC, p, -1).await.expect("log end");
        let bp = BrokerPartition::parse(&format!("0-{p}")).expect("bp");
        assert_eq!(zk.read_offset(GROUP, TOPIC, &bp).await.expect("offset"), Some(end), "0-{p}");
    }
}
