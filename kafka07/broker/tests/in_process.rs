//! The broker as a library: started on a tokio runtime inside the test, with per-topic log
//! settings and partition counts changed while it runs (what live topic configuration uses).

use kwire07_test_support as common;

use std::time::Duration;

use common::*;
use kwire07_broker::{Broker, BrokerConfig};
use kwire07_protocol::log::TopicOverrides;

#[test]
fn live_topic_overrides_and_partition_counts_apply_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().display().to_string();
    let config = BrokerConfig::from_pairs(&[("log.dir", log_dir.as_str()), ("port", "0")]).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let broker = rt.block_on(Broker::start(config)).unwrap();
    let addr = broker.local_addr();
    let state = broker.state().clone();

    let mut c = Conn::connect(addr);
    let entry = msg_v0(&[b'l'; 41]); // 50 bytes
    for _ in 0..4 {
        c.produce("live", 0, &entry);
    }
    assert_eq!(c.offsets("live", 0, -1, 10).1, vec![200, 0], "1 GiB segments: no roll yet");

    // Smaller segments for this topic only, from the next append on.
    state.set_topic_overrides("live", TopicOverrides { segment_bytes: Some(60), ..Default::default() }).unwrap();
    for _ in 0..3 {
        c.produce("live", 0, &entry);
    }
    // Rolls before appends once the active segment is over 60 bytes: at 200, then at 300.
    assert_eq!(c.offsets("live", 0, -1, 10).1, vec![350, 300, 200, 0]);
    c.produce("other", 0, &entry);
    c.produce("other", 0, &entry);
    assert_eq!(c.offsets("other", 0, -1, 10).1, vec![100, 0], "other topics keep the default");

    // More partitions for one topic.
    assert_eq!(c.fetch("live", 3, 0, 10).0, 3);
    state.set_partition_count("live", Some(4));
    c.produce("live", 3, &entry);
    assert_eq!(c.fetch_all("live", 3, 0).len(), 1);
    assert_eq!(state.topics(), ["live", "other"]);

    rt.block_on(async { tokio::time::timeout(Duration::from_secs(30), broker.shutdown()).await }).unwrap().unwrap();
    assert!(dir.path().join(".kafka_cleanshutdown").exists());
}
