//! The transaction coordinator through our own client, on what only the in-process cluster
//! makes quick to reach: a transaction that outlives its timeout, one aborted by the Control
//! seam, transactions v2's epoch at every end, and what DescribeTransactions and
//! ListTransactions say. (The real clients' transactions are compared with Kafka's in
//! `against_kafka/`.)

use std::time::Duration;

use kwire::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kwire::messages::{
    AddPartitionsToTxnRequest, DescribeTransactionsRequest, EndTxnRequest, FetchRequest, InitProducerIdRequest,
    ListTransactionsRequest,
};
use kwire::{ErrorCode, ProducerId, Records, StrBytes, TopicName, TransactionalId};
use kwire_connection::cluster::CoordinatorType;
use kwire_connection::{requests, Client, ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

const TOPIC: &str = "txn";

/// A transactional batch of `n` records of producer `(id, epoch)` from `sequence`.
fn batch(producer: (i64, i16), sequence: i32, n: usize) -> Records {
    let options = BatchOptions {
        producer_id: producer.0,
        producer_epoch: producer.1,
        base_sequence: sequence,
        transactional: true,
        ..BatchOptions::new(2, Compression::None)
    };
    let mut builder = BatchBuilder::new(options).unwrap();
    for i in 0..n {
        builder.append(1_700_000_000_000, None, Some(format!("v{i}").as_bytes()), &[]).unwrap();
    }
    Records::from_bytes(builder.build().unwrap())
}

struct Setup {
    fake: FakeCluster,
    cluster: Cluster,
    coordinator: Client,
    leader: Client,
    topic_id: kwire::Uuid,
}

async fn setup(id: &str) -> Setup {
    let fake = FakeCluster::start(FakeConfig::default().nodes(3)).await.unwrap();
    fake.create_topic(TOPIC, 1).unwrap();
    let bootstrap = fake.bootstrap_servers();
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default()).await.unwrap();
    let coordinator = cluster.coordinator(CoordinatorType::Transaction, id).await.unwrap();
    let leader = cluster.leader(TOPIC, 0).await.unwrap();
    let topic_id = cluster.topic_id(TOPIC).await.unwrap();
    Setup { fake, cluster, coordinator, leader, topic_id }
}

async fn init(coordinator: &Client, id: &str, timeout_ms: i32) -> (i64, i16) {
    let request = InitProducerIdRequest {
        transactional_id: Some(TransactionalId(StrBytes::from(id.to_string()))),
        transaction_timeout_ms: timeout_ms,
        producer_id: ProducerId(-1),
        producer_epoch: -1,
        ..Default::default()
    };
    let r = coordinator.send(request).await.unwrap();
    assert_eq!(r.error_code, ErrorCode::NONE);
    (r.producer_id.0, r.producer_epoch)
}

/// Transactions v1: AddPartitionsToTxn (v3), then a transactional batch at Produce v11.
async fn write_v1(s: &Setup, id: &str, producer: (i64, i16), sequence: i32) {
    let add = AddPartitionsToTxnRequest {
        v3_and_below_transactional_id: TransactionalId(StrBytes::from(id.to_string())),
        v3_and_below_producer_id: ProducerId(producer.0),
        v3_and_below_producer_epoch: producer.1,
        v3_and_below_topics: vec![AddPartitionsToTxnTopic {
            name: TopicName(StrBytes::from_static_str(TOPIC)),
            partitions: vec![0].into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let added = s.coordinator.send_at(add, 3).await.unwrap();
    assert_eq!(added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code, ErrorCode::NONE);
    let produce = requests::produce(TOPIC, s.topic_id, 0, batch(producer, sequence, 2), -1, Duration::from_secs(5));
    let written = s.leader.send_at(produce, 11).await.unwrap();
    assert_eq!(written.responses[0].partition_responses[0].error_code, ErrorCode::NONE);
}

async fn end(coordinator: &Client, id: &str, producer: (i64, i16), commit: bool, version: i16) -> (ErrorCode, i16) {
    let request = EndTxnRequest {
        transactional_id: TransactionalId(StrBytes::from(id.to_string())),
        producer_id: ProducerId(producer.0),
        producer_epoch: producer.1,
        committed: commit,
        ..Default::default()
    };
    let r = coordinator.send_at(request, version).await.unwrap();
    (r.error_code, r.producer_epoch)
}

async fn described(coordinator: &Client, id: &str) -> (String, i16) {
    let request = DescribeTransactionsRequest {
        transactional_ids: vec![TransactionalId(StrBytes::from(id.to_string()))],
        ..Default::default()
    };
    let r = coordinator.send(request).await.unwrap();
    let t = &r.transaction_states[0];
    assert_eq!(t.error_code, ErrorCode::NONE);
    (t.transaction_state.to_string(), t.producer_epoch)
}

/// The read_committed view of the partition: (high watermark, last stable offset, aborted
/// transactions' first offsets).
async fn committed_view(s: &Setup) -> (i64, i64, Vec<i64>) {
    let fetch = FetchRequest { isolation_level: 1, max_wait_ms: 0, ..requests::fetch(TOPIC, s.topic_id, 0, 0) };
    let r = s.leader.send(fetch).await.unwrap();
    let p = &r.responses[0].partitions[0];
    let aborted = p.aborted_transactions.iter().flatten().map(|a| a.first_offset).collect();
    (p.high_watermark, p.last_stable_offset, aborted)
}

#[tokio::test]
async fn a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced() {
    let id = "times-out";
    let s = setup(id).await;
    let producer = init(&s.coordinator, id, 300).await;
    write_v1(&s, id, producer, 0).await;
    assert_eq!(committed_view(&s).await, (2, 0, vec![]), "open: the stable offset waits at its first record");
    assert_eq!(described(&s.coordinator, id).await, ("Ongoing".to_string(), producer.1));
    // The cluster checks timeouts every 100 ms; a loaded machine may take longer.
    let mut state = described(&s.coordinator, id).await;
    for _ in 0..100 {
        if state.0 != "Ongoing" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        state = described(&s.coordinator, id).await;
    }
    assert_eq!(state, ("CompleteAbort".to_string(), producer.1 + 1));
    assert_eq!(committed_view(&s).await, (3, 3, vec![0]), "an abort marker, the records named aborted");
    let (code, _) = end(&s.coordinator, id, producer, true, 4).await;
    assert_eq!(code, ErrorCode::PRODUCER_FENCED, "the timed-out producer's epoch is over");
    s.fake.shutdown().await;
}

#[tokio::test]
async fn control_aborts_an_open_transaction() {
    let id = "aborted-by-test";
    let s = setup(id).await;
    let producer = init(&s.coordinator, id, 60_000).await;
    assert!(!s.fake.abort_transaction(id), "nothing open yet");
    write_v1(&s, id, producer, 0).await;
    assert!(s.fake.abort_transaction(id));
    assert_eq!(committed_view(&s).await, (3, 3, vec![0]));
    let stored = s.fake.batches(TOPIC, 0).unwrap();
    assert_eq!(stored.len(), 2, "the records and the abort marker");
    // A new InitProducerId is the producer's way back: the next epoch again.
    let again = init(&s.coordinator, id, 60_000).await;
    assert_eq!(again, (producer.0, producer.1 + 2));
    drop(s.cluster);
    s.fake.shutdown().await;
}

#[tokio::test]
async fn transactions_v2_bump_the_epoch_at_every_end_and_answer_a_retry() {
    let id = "v2";
    let s = setup(id).await;
    let mut producer = init(&s.coordinator, id, 60_000).await;
    for commit in [true, false, true] {
        // Produce v12+ adds the partition itself.
        let produce = requests::produce(TOPIC, s.topic_id, 0, batch(producer, 0, 2), -1, Duration::from_secs(5));
        let written = s.leader.send_at(produce, 12).await.unwrap();
        assert_eq!(written.responses[0].partition_responses[0].error_code, ErrorCode::NONE);
        let (code, epoch) = end(&s.coordinator, id, producer, commit, 5).await;
        assert_eq!((code, epoch), (ErrorCode::NONE, producer.1 + 1), "EndTxn v5 answers the next epoch");
        // The same EndTxn again (a retry after a lost answer): the same answer.
        assert_eq!(end(&s.coordinator, id, producer, commit, 5).await, (ErrorCode::NONE, epoch));
        producer.1 = epoch;
    }
    assert_eq!(committed_view(&s).await, (9, 9, vec![3]), "2 records and a marker each; the second aborted");
    // An old epoch's batch is refused.
    let stale = requests::produce(TOPIC, s.topic_id, 0, batch((producer.0, 0), 0, 1), -1, Duration::from_secs(5));
    let refused = s.leader.send_at(stale, 12).await.unwrap();
    assert_eq!(refused.responses[0].partition_responses[0].error_code, ErrorCode::INVALID_PRODUCER_EPOCH);
    let listed =
        s.coordinator.send(ListTransactionsRequest { duration_filter: -1, ..Default::default() }).await.unwrap();
    let states: Vec<(String, String)> = listed
        .transaction_states
        .iter()
        .map(|t| (t.transactional_id.to_string(), t.transaction_state.to_string()))
        .collect();
    assert_eq!(states, [(id.to_string(), "CompleteCommit".to_string())]);
    s.fake.shutdown().await;
}
