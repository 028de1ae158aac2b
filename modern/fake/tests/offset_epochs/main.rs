//! OffsetCommit and OffsetFetch v9+ against member ids and epochs, in process: each case of
//! `scenario.rs` must get what Kafka 4.4 answers (`scenario::expected`);
//! `tests/against_kafka/offset_epochs.rs` runs the same scenario on Kafka itself.

mod scenario;
#[path = "../support/mod.rs"]
mod support;

use std::time::Duration;

use kwire_fake::{FakeCluster, FakeConfig};

#[tokio::test]
async fn offset_commit_and_fetch_check_member_epochs_as_kafka_does() {
    let config = FakeConfig::default().nodes(2).group_initial_rebalance_delay(Duration::ZERO);
    let fake = FakeCluster::start(config).await.unwrap();
    let cases = scenario::run(&fake.bootstrap_servers()).await;
    let expected = scenario::expected();
    for (got, want) in cases.iter().zip(&expected) {
        assert_eq!(got, want, "every case: {cases:#?}");
    }
    assert_eq!(cases.len(), expected.len(), "{cases:#?}");
    fake.shutdown().await;
}
