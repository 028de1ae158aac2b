//! Transactions against the in-process cluster, v2 (KIP-890: the cluster finalizes
//! `transaction.version` 2) and v1: committed and aborted transactions leave their markers,
//! records of an aborted transaction not yet sent fail with `TransactionAborted`, a newer
//! producer with the same `transactional.id` fences the older one, calls out of order are
//! `IllegalState`, and offsets go into the transaction.

mod support;

use std::time::Duration;

use kwire::messages::{ApiKey, RequestKind};
use kwire_client::producer::{
    ConsumerGroupMetadata, ProduceError, Producer, ProducerConfig, ProducerRecord, TransactionProtocol,
};
use kwire_fake::{Action, FakeCluster, FakeConfig, Times};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use support::{markers, read_back};

fn config(fake: &FakeCluster, id: &str, protocol: TransactionProtocol) -> ProducerConfig {
    ProducerConfig::new(&fake.bootstrap_servers())
        .linger(Duration::from_millis(1))
        .transactional_id(id)
        .transaction_protocol(protocol)
}

async fn commit_abort_commit(protocol: TransactionProtocol) {
    let fake = FakeCluster::start(FakeConfig::default().nodes(3)).await.unwrap();
    fake.create_topic("payments", 2).unwrap();
    let used_add_partitions = Arc::new(AtomicBool::new(false));
    let seen = used_add_partitions.clone();
    fake.intercept(ApiKey::AddPartitionsToTxn, Times::Always, move |_| {
        seen.store(true, Ordering::SeqCst);
        Action::Pass
    });
    let producer = Producer::connect(config(&fake, "payments-writer", protocol)).await.unwrap();
    let early = producer.send(ProducerRecord::new("payments", "x")).await.unwrap_err();
    assert!(matches!(early, ProduceError::IllegalState(_)), "{early}");
    producer.init_transactions().await.unwrap();
    let outside = producer.send(ProducerRecord::new("payments", "x")).await.unwrap_err();
    assert!(matches!(outside, ProduceError::IllegalState(_)), "{outside}");

    for (round, commit) in [("one", true), ("two", false), ("three", true)] {
        producer.begin_transaction().unwrap();
        let mut deliveries = Vec::new();
        for i in 0..10 {
            let record = ProducerRecord::new("payments", format!("{round}-{i}")).partition(i % 2);
            deliveries.push(producer.send(record).await.unwrap());
        }
        if commit {
            producer.commit_transaction().await.unwrap();
            for d in deliveries {
                assert!(d.await.unwrap().offset >= 0);
            }
        } else {
            // Written first, so that the abort has records to mark aborted.
            producer.flush().await.unwrap();
            producer.abort_transaction().await.unwrap();
            for d in deliveries {
                assert!(d.await.unwrap().offset >= 0, "written, then aborted");
            }
        }
    }
    for p in 0..2 {
        let kinds: Vec<bool> = markers(&fake, "payments", p).iter().map(|m| m.2).collect();
        assert_eq!(kinds, [true, false, true], "partition {p}: commit, abort, commit markers");
        let values: Vec<String> = read_back(&fake, "payments", p)
            .into_iter()
            .map(|r| String::from_utf8(r.value.unwrap().to_vec()).unwrap())
            .filter(|v| !v.starts_with("two"))
            .collect();
        assert_eq!(values.len(), 10, "partition {p}: {values:?}");
    }
    assert_eq!(
        used_add_partitions.load(Ordering::SeqCst),
        protocol == TransactionProtocol::V1,
        "v1 adds partitions with AddPartitionsToTxn, v2 through Produce"
    );
    producer.close(Duration::from_secs(5)).await.unwrap();
    fake.shutdown().await;
}

#[tokio::test]
async fn v2_transactions_commit_and_abort() {
    commit_abort_commit(TransactionProtocol::Auto).await;
}

#[tokio::test]
async fn v1_transactions_commit_and_abort() {
    commit_abort_commit(TransactionProtocol::V1).await;
}

#[tokio::test]
async fn records_not_sent_when_the_transaction_aborts_fail_as_aborted() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    fake.create_topic("unsent", 1).unwrap();
    let config = config(&fake, "unsent-writer", TransactionProtocol::Auto).linger(Duration::from_secs(30));
    let producer = Producer::connect(config).await.unwrap();
    producer.init_transactions().await.unwrap();
    producer.begin_transaction().unwrap();
    let delivery = producer.send(ProducerRecord::new("unsent", "never")).await.unwrap();
    producer.abort_transaction().await.unwrap();
    let error = delivery.await.unwrap_err();
    assert!(matches!(error, ProduceError::TransactionAborted), "{error}");
    assert!(read_back(&fake, "unsent", 0).is_empty());
    fake.shutdown().await;
}

#[tokio::test]
async fn a_newer_producer_with_the_same_id_fences_the_older() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    fake.create_topic("fenced", 1).unwrap();
    let old = Producer::connect(config(&fake, "writer", TransactionProtocol::Auto)).await.unwrap();
    old.init_transactions().await.unwrap();
    old.begin_transaction().unwrap();
    old.send(ProducerRecord::new("fenced", "old")).await.unwrap().await.unwrap();
    let new = Producer::connect(config(&fake, "writer", TransactionProtocol::Auto)).await.unwrap();
    new.init_transactions().await.unwrap();
    let error = old.commit_transaction().await.unwrap_err();
    assert!(matches!(error, ProduceError::ProducerFenced(_)), "{error}");
    assert!(error.is_fatal());
    let again = old.begin_transaction().unwrap_err();
    assert!(matches!(again, ProduceError::ProducerFenced(_)), "fatal for good: {again}");
    new.begin_transaction().unwrap();
    let _written_at_commit = new.send(ProducerRecord::new("fenced", "new")).await.unwrap();
    new.commit_transaction().await.unwrap();
    fake.shutdown().await;
}

#[tokio::test]
async fn offsets_go_into_the_transaction() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    fake.create_topic("in", 1).unwrap();
    fake.create_topic("out", 1).unwrap();
    for protocol in [TransactionProtocol::Auto, TransactionProtocol::V1] {
        let saw_commit = Arc::new(AtomicBool::new(false));
        let seen = saw_commit.clone();
        let hook = fake.intercept(ApiKey::TxnOffsetCommit, Times::Always, move |i| {
            if let RequestKind::TxnOffsetCommit(r) = i.request {
                if r.group_id.as_str() == "copier" && r.topics[0].partitions[0].committed_offset == 42 {
                    seen.store(true, Ordering::SeqCst);
                }
            }
            Action::Pass
        });
        let producer = Producer::connect(config(&fake, &format!("copier-{protocol:?}"), protocol)).await.unwrap();
        producer.init_transactions().await.unwrap();
        producer.begin_transaction().unwrap();
        let _written_at_commit = producer.send(ProducerRecord::new("out", "copied")).await.unwrap();
        producer.send_offsets_to_transaction(&[("in", 0, 42)], &ConsumerGroupMetadata::new("copier")).await.unwrap();
        producer.commit_transaction().await.unwrap();
        assert!(saw_commit.load(Ordering::SeqCst), "{protocol:?}: TxnOffsetCommit of offset 42");
        fake.remove_hook(hook);
    }
    fake.shutdown().await;
}

#[tokio::test]
async fn a_failed_batch_makes_the_transaction_abortable() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    fake.create_topic("doomed", 1).unwrap();
    let producer = Producer::connect(config(&fake, "doomed-writer", TransactionProtocol::Auto)).await.unwrap();
    producer.init_transactions().await.unwrap();
    producer.begin_transaction().unwrap();
    fake.fail(ApiKey::Produce, Times::Once, kwire::ErrorCode::INVALID_RECORD).unwrap();
    let failed = producer.send(ProducerRecord::new("doomed", "bad")).await.unwrap().await.unwrap_err();
    assert!(matches!(failed, ProduceError::InvalidRecord(_)), "{failed}");
    let commit = producer.commit_transaction().await.unwrap_err();
    assert!(matches!(commit, ProduceError::TransactionAbortable(_)), "{commit}");
    producer.abort_transaction().await.unwrap();
    producer.begin_transaction().unwrap();
    let ok = producer.send(ProducerRecord::new("doomed", "good")).await.unwrap();
    producer.commit_transaction().await.unwrap();
    assert!(ok.await.unwrap().offset >= 0);
    fake.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_while_a_batch_is_being_retried_does_not_hang() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    fake.create_topic("retrying", 1).unwrap();
    let producer = Producer::connect(config(&fake, "retrying-writer", TransactionProtocol::Auto)).await.unwrap();
    producer.init_transactions().await.unwrap();
    producer.begin_transaction().unwrap();
    // Every Produce is refused with a retriable error, slowly: the batch is in flight when the
    // abort comes, and comes back wanting a retry.
    let hook = fake.intercept(ApiKey::Produce, Times::Always, |_| {
        std::thread::sleep(Duration::from_millis(400));
        Action::Error(kwire::ErrorCode::NOT_ENOUGH_REPLICAS)
    });
    let delivery = producer.send(ProducerRecord::new("retrying", "x")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    tokio::time::timeout(Duration::from_secs(10), producer.abort_transaction()).await.expect("no hang").unwrap();
    let error = delivery.await.unwrap_err();
    assert!(matches!(error, ProduceError::TransactionAborted), "{error}");
    fake.remove_hook(hook);
    producer.begin_transaction().unwrap();
    let ok = producer.send(ProducerRecord::new("retrying", "y")).await.unwrap();
    producer.commit_transaction().await.unwrap();
    assert!(ok.await.unwrap().offset >= 0);
    fake.shutdown().await;
}
