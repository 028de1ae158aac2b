//! The consumer against the in-process cluster's fault hooks, each handled as Kafka's Java
//! consumer handles it, and bad input met with typed errors (never a panic or a hang).

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use kwire::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kwire::messages::offset_for_leader_epoch_response::{EpochEndOffset, OffsetForLeaderTopicResult};
use kwire::messages::{ApiKey, FetchResponse, OffsetForLeaderEpochResponse, RequestKind, ResponseKind};
use kwire::{ErrorCode, Records};
use kwire_client::consumer::{
    Consumer, ConsumerConfig, ConsumerError, ConsumerRebalanceListener, GroupProtocol, ListenerFuture,
    OffsetAndMetadata, OffsetReset, TopicPartition,
};
use kwire_fake::{Action, Times};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

/// A listener call: its kind and the partitions it named.
type Call = (&'static str, Vec<i32>);

/// Which listener calls a member saw, in order.
#[derive(Clone, Default)]
struct Calls(Arc<Mutex<Vec<Call>>>);

impl Calls {
    fn kinds(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().iter().map(|(k, _)| *k).collect()
    }
}

impl ConsumerRebalanceListener for Calls {
    fn on_partitions_revoked<'a>(&'a mut self, _: &'a Consumer, p: &'a [TopicPartition]) -> ListenerFuture<'a> {
        self.0.lock().unwrap().push(("revoked", p.iter().map(|tp| tp.partition).collect()));
        Box::pin(async {})
    }
    fn on_partitions_assigned<'a>(&'a mut self, _: &'a Consumer, p: &'a [TopicPartition]) -> ListenerFuture<'a> {
        self.0.lock().unwrap().push(("assigned", p.iter().map(|tp| tp.partition).collect()));
        Box::pin(async {})
    }
    fn on_partitions_lost<'a>(&'a mut self, _: &'a Consumer, p: &'a [TopicPartition]) -> ListenerFuture<'a> {
        self.0.lock().unwrap().push(("lost", p.iter().map(|tp| tp.partition).collect()));
        Box::pin(async {})
    }
}

/// A group member of `protocol` reading `topic`, with its listener's calls.
async fn member(bootstrap: &str, group: &str, protocol: GroupProtocol, topic: &str) -> (Consumer, Calls) {
    member_with(bootstrap, group, protocol, topic, |c| c).await
}

/// [`member`] with settings of the test's own.
async fn member_with(
    bootstrap: &str,
    group: &str,
    protocol: GroupProtocol,
    topic: &str,
    tweak: impl FnOnce(ConsumerConfig) -> ConsumerConfig,
) -> (Consumer, Calls) {
    let config = config(bootstrap)
        .group_id(group)
        .group_protocol(protocol)
        .heartbeat_interval(Duration::from_millis(100))
        .session_timeout(Duration::from_secs(6))
        .retry_backoff(Duration::from_millis(20));
    let consumer = Consumer::new(tweak(config)).await.unwrap();
    let calls = Calls::default();
    consumer.set_rebalance_listener(calls.clone()).await;
    consumer.subscribe([topic]).await.unwrap();
    (consumer, calls)
}

/// Polls (rebalance steps run in poll) until `check` holds, up to 20 s.
async fn poll_until(consumer: &Consumer, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        let _ = consumer.poll(Duration::from_millis(100)).await;
    }
    check()
}

async fn setup(partitions: i32, records: u64) -> kwire_fake::FakeCluster {
    let fake = fake(3).await;
    fake.create_topic("t", partitions).unwrap();
    let writer = writer(&fake.bootstrap_servers()).await;
    for p in 0..partitions {
        produce(&writer, "t", p, 0, records, 10).await;
    }
    fake
}

/// COORDINATOR_NOT_AVAILABLE on FindCoordinator and JoinGroup, NOT_COORDINATOR on Heartbeat
/// and OffsetCommit: Kafka's consumer marks the coordinator unknown, finds it again and
/// retries; nothing reaches the application.
#[tokio::test]
async fn coordinator_errors_are_retried_at_the_coordinator_found_again() {
    let fake = setup(2, 50).await;
    fake.fail(ApiKey::FindCoordinator, Times::N(2), ErrorCode::COORDINATOR_NOT_AVAILABLE).unwrap();
    fake.fail(ApiKey::JoinGroup, Times::N(2), ErrorCode::COORDINATOR_NOT_AVAILABLE).unwrap();
    fake.fail(ApiKey::Heartbeat, Times::N(2), ErrorCode::NOT_COORDINATOR).unwrap();
    let (consumer, _) = member(&fake.bootstrap_servers(), "g", GroupProtocol::Classic, "t").await;
    let records = read(&consumer, 100, Duration::from_secs(20)).await.unwrap();
    assert_eq!(records.len(), 100);
    fake.fail(ApiKey::OffsetCommit, Times::N(2), ErrorCode::NOT_COORDINATOR).unwrap();
    consumer.commit_sync().await.unwrap();
    let committed = consumer.committed(&partitions("t", 2)).await.unwrap();
    assert!(committed.values().all(|o| o.as_ref().map(|o| o.offset) == Some(50)), "{committed:?}");
    consumer.close().await.unwrap();
    fake.shutdown().await;
}

/// REBALANCE_IN_PROGRESS: on a heartbeat the member rejoins (Kafka's `requestRejoin`); on a
/// commit the application gets RebalanceInProgressException's variant.
#[tokio::test]
async fn rebalance_in_progress_rejoins_and_fails_a_commit_with_its_own_error() {
    let fake = setup(2, 20).await;
    // No periodic auto commit: the one OffsetCommit failed below must be the application's own.
    let rarely = |c: ConsumerConfig| c.set("auto.commit.interval.ms", "3600000").expect("valid");
    let (consumer, calls) = member_with(&fake.bootstrap_servers(), "g", GroupProtocol::Classic, "t", rarely).await;
    assert_eq!(read(&consumer, 40, Duration::from_secs(20)).await.unwrap().len(), 40);
    fake.fail(ApiKey::Heartbeat, Times::Once, ErrorCode::REBALANCE_IN_PROGRESS).unwrap();
    let rejoined = poll_until(&consumer, || calls.kinds().iter().filter(|k| **k == "assigned").count() >= 2).await;
    assert!(rejoined, "{:?}", calls.kinds());
    assert!(calls.kinds().contains(&"revoked"), "an eager member revokes before rejoining: {:?}", calls.kinds());
    // Positions known again (committed offsets fetched), so the commit has offsets to send: with
    // none, it sends nothing and succeeds, as Kafka's commitSync does (the test failed so about
    // 1 run in 5 under load).
    for tp in consumer.assignment() {
        consumer.position(&tp).await.unwrap();
    }
    fake.fail(ApiKey::OffsetCommit, Times::Once, ErrorCode::REBALANCE_IN_PROGRESS).unwrap();
    let committed = consumer.commit_sync().await;
    assert!(matches!(committed, Err(ConsumerError::RebalanceInProgress)), "{committed:?}");
    consumer.close().await.unwrap();
    fake.shutdown().await;
}

/// UNKNOWN_MEMBER_ID on a heartbeat: the generation is over, so the partitions are lost
/// (`onPartitionsLost`, no commit) and the member joins again under a new id.
#[tokio::test]
async fn unknown_member_id_loses_the_partitions_and_rejoins() {
    let fake = setup(2, 20).await;
    let (consumer, calls) = member(&fake.bootstrap_servers(), "g", GroupProtocol::Classic, "t").await;
    assert_eq!(read(&consumer, 40, Duration::from_secs(20)).await.unwrap().len(), 40);
    let before = fake.group_members("g");
    fake.fail(ApiKey::Heartbeat, Times::Once, ErrorCode::UNKNOWN_MEMBER_ID).unwrap();
    assert!(poll_until(&consumer, || calls.kinds().contains(&"lost")).await, "{:?}", calls.kinds());
    let writer = writer(&fake.bootstrap_servers()).await;
    produce(&writer, "t", 0, 20, 30, 10).await;
    let more = read(&consumer, 10, Duration::from_secs(20)).await.unwrap();
    assert!(calls.kinds().contains(&"lost"), "{:?}", calls.kinds());
    assert!(!calls.kinds().contains(&"revoked"), "lost partitions are not revoked: {:?}", calls.kinds());
    assert_eq!(more.iter().map(|r| r.offset).max(), Some(29));
    assert_ne!(fake.group_members("g"), before, "a new member id");
    consumer.close().await.unwrap();
    fake.shutdown().await;
}

/// KIP-848: FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID lose the partitions and the member
/// rejoins at epoch 0, as Kafka's `ConsumerMembershipManager.transitionToFenced` does; an
/// expired member too.
#[tokio::test]
async fn a_fenced_kip848_member_loses_its_partitions_and_rejoins() {
    let fake = setup(2, 20).await;
    let (consumer, calls) = member(&fake.bootstrap_servers(), "g848", GroupProtocol::Consumer, "t").await;
    assert_eq!(read(&consumer, 40, Duration::from_secs(20)).await.unwrap().len(), 40);
    fake.fail(ApiKey::ConsumerGroupHeartbeat, Times::Once, ErrorCode::FENCED_MEMBER_EPOCH).unwrap();
    assert!(poll_until(&consumer, || calls.kinds().contains(&"lost")).await, "{:?}", calls.kinds());
    let writer = writer(&fake.bootstrap_servers()).await;
    produce(&writer, "t", 1, 20, 30, 10).await;
    let more = read(&consumer, 10, Duration::from_secs(20)).await.unwrap();
    assert_eq!(more.iter().map(|r| r.offset).max(), Some(29));
    let lost_before = calls.kinds().iter().filter(|k| **k == "lost").count();
    for member in fake.group_members("g848") {
        fake.expire_member("g848", &member);
    }
    let lost_again =
        poll_until(&consumer, || calls.kinds().iter().filter(|k| **k == "lost").count() > lost_before).await;
    assert!(lost_again, "{:?}", calls.kinds());
    produce(&writer, "t", 1, 30, 40, 10).await;
    let again = read(&consumer, 10, Duration::from_secs(20)).await.unwrap();
    assert_eq!(again.iter().map(|r| r.offset).max(), Some(39));
    consumer.close().await.unwrap();
    fake.shutdown().await;
}

/// A Fetch whose connection drops, and NOT_LEADER_OR_FOLLOWER: the consumer reconnects,
/// reads the metadata again and goes on, losing and repeating nothing.
#[tokio::test]
async fn a_dropped_fetch_connection_and_a_stale_leader_lose_nothing() {
    let fake = setup(3, 200).await;
    fake.intercept(ApiKey::Fetch, Times::N(2), |_| Action::Drop);
    fake.fail(ApiKey::Fetch, Times::N(3), ErrorCode::NOT_LEADER_OR_FOLLOWER).unwrap();
    let consumer = Consumer::new(config(&fake.bootstrap_servers())).await.unwrap();
    consumer.assign(partitions("t", 3)).await.unwrap();
    let records = read(&consumer, 600, Duration::from_secs(20)).await.unwrap();
    for (tp, offsets) in by_partition(&records) {
        assert_eq!(offsets, (0..200).collect::<Vec<i64>>(), "{tp}");
    }
    consumer.close().await.unwrap();
    fake.shutdown().await;
}

/// A leader moved, and the new one's log diverges below the position (KIP-320): with a reset
/// policy the position goes back to the first offset known to diverge, as Kafka's
/// `SubscriptionState.maybeCompleteValidation` does; without one, LogTruncation is raised.
#[tokio::test]
async fn a_moved_leader_with_a_truncated_log_is_detected() {
    for policy in [OffsetReset::Earliest, OffsetReset::None] {
        let fake = setup(1, 100).await;
        let consumer = Consumer::new(config(&fake.bootstrap_servers()).auto_offset_reset(policy)).await.unwrap();
        consumer.assign(partitions("t", 1)).await.unwrap();
        if policy == OffsetReset::None {
            consumer.seek(&TopicPartition::new("t", 0), 0).unwrap();
        }
        assert_eq!(read(&consumer, 100, Duration::from_secs(20)).await.unwrap().len(), 100);
        let leader = fake.leader("t", 0).unwrap();
        let other = fake.live_nodes().into_iter().find(|n| *n != leader).unwrap();
        // The new leader's log for epoch 0 ends at 60.
        fake.intercept(ApiKey::OffsetForLeaderEpoch, Times::Once, |seen| {
            let RequestKind::OffsetForLeaderEpoch(request) = seen.request else { return Action::Pass };
            let topics = request
                .topics
                .iter()
                .map(|t| OffsetForLeaderTopicResult {
                    topic: t.topic.clone(),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| EpochEndOffset {
                            partition: p.partition,
                            leader_epoch: 0,
                            end_offset: 60,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect();
            Action::Respond(Box::new(ResponseKind::OffsetForLeaderEpoch(OffsetForLeaderEpochResponse {
                topics,
                ..Default::default()
            })))
        });
        fake.move_leader("t", 0, other).unwrap();
        let writer = writer(&fake.bootstrap_servers()).await;
        produce(&writer, "t", 0, 100, 110, 10).await;
        let after = read(&consumer, 50, Duration::from_secs(20)).await;
        match policy {
            OffsetReset::None => match after {
                Err(ConsumerError::LogTruncation { offset, divergent_offset, .. }) => {
                    assert_eq!((offset, divergent_offset), (100, Some(60)));
                }
                other => panic!("expected LogTruncation, got {other:?}"),
            },
            _ => {
                let after = after.unwrap();
                assert_eq!(after.first().map(|r| r.offset), Some(60), "read again from where the log diverges");
                assert_eq!(after.last().map(|r| r.offset), Some(109));
            }
        }
        consumer.close().await.unwrap();
        fake.shutdown().await;
    }
}

/// A batch failing its CRC: the records before it are returned, then every poll raises
/// CorruptRecord at its offset until the application seeks past it (Kafka's consumer does
/// the same, with a KafkaException).
#[tokio::test]
async fn a_corrupt_batch_is_raised_until_the_application_seeks_past_it() {
    let fake = setup(1, 20).await;
    let topic_id = fake.topic_id("t").unwrap();
    let mut good = BatchBuilder::new(BatchOptions::new(2, Compression::None)).unwrap();
    for i in 0..5u8 {
        good.append(now_ms() as i64, None, Some(&[b'0' + i]), &[]).unwrap();
    }
    let mut bad =
        BatchBuilder::new(BatchOptions { base_offset: 5, ..BatchOptions::new(2, Compression::None) }).unwrap();
    for _ in 5..10 {
        bad.append(now_ms() as i64, None, Some(b"x"), &[]).unwrap();
    }
    let mut bytes = good.build().unwrap().to_vec();
    let mut bad = bad.build().unwrap().to_vec();
    let last = bad.len() - 1;
    bad[last] ^= 0x55;
    bytes.extend(bad);
    let records = Records::from_bytes(bytes.into());
    fake.intercept(ApiKey::Fetch, Times::Once, move |_| {
        let partition = PartitionData {
            partition_index: 0,
            high_watermark: 20,
            last_stable_offset: 20,
            log_start_offset: 0,
            records: Some(records.clone()),
            ..Default::default()
        };
        let topic =
            FetchableTopicResponse { topic: "t".into(), topic_id, partitions: vec![partition], ..Default::default() };
        Action::Respond(Box::new(ResponseKind::Fetch(FetchResponse { responses: vec![topic], ..Default::default() })))
    });
    let consumer = Consumer::new(config(&fake.bootstrap_servers())).await.unwrap();
    let tp = TopicPartition::new("t", 0);
    consumer.assign([tp.clone()]).await.unwrap();
    let first = read(&consumer, 5, Duration::from_secs(10)).await.unwrap();
    assert_eq!(first.iter().map(|r| r.offset).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    for _ in 0..2 {
        match consumer.poll(Duration::from_secs(2)).await {
            Err(ConsumerError::CorruptRecord { partition, offset, .. }) => {
                assert_eq!((partition, offset), (tp.clone(), 5))
            }
            other => panic!("expected CorruptRecord, got {other:?}"),
        }
    }
    consumer.seek(&tp, 10).unwrap();
    let rest = read(&consumer, 10, Duration::from_secs(10)).await.unwrap();
    assert_eq!(rest.iter().map(|r| r.offset).collect::<Vec<_>>(), (10..20).collect::<Vec<i64>>());
    consumer.close().await.unwrap();
    fake.shutdown().await;
}

/// A seek past the end meets OFFSET_OUT_OF_RANGE: reset by `auto.offset.reset`, or raised as
/// OffsetOutOfRange with no policy (Kafka's `OffsetOutOfRangeException`); with no committed
/// offset and no policy, NoOffsetForPartition.
#[tokio::test]
async fn a_seek_past_the_end_is_reset_or_raised() {
    let fake = setup(1, 10).await;
    let tp = TopicPartition::new("t", 0);
    let earliest = Consumer::new(config(&fake.bootstrap_servers())).await.unwrap();
    earliest.assign([tp.clone()]).await.unwrap();
    earliest.seek(&tp, 1_000).unwrap();
    let records = read(&earliest, 10, Duration::from_secs(10)).await.unwrap();
    assert_eq!(records.first().map(|r| r.offset), Some(0), "reset to the beginning");
    earliest.close().await.unwrap();

    let none = Consumer::new(config(&fake.bootstrap_servers()).auto_offset_reset(OffsetReset::None)).await.unwrap();
    none.assign([tp.clone()]).await.unwrap();
    match none.poll(Duration::from_secs(5)).await {
        Err(ConsumerError::NoOffsetForPartition(partitions)) => assert_eq!(partitions, std::slice::from_ref(&tp)),
        other => panic!("expected NoOffsetForPartition, got {other:?}"),
    }
    none.seek(&tp, 1_000).unwrap();
    let raised = read(&none, 1, Duration::from_secs(5)).await;
    match raised {
        Err(ConsumerError::OffsetOutOfRange(positions)) => assert_eq!(positions, BTreeMap::from([(tp.clone(), 1_000)])),
        other => panic!("expected OffsetOutOfRange, got {other:?}"),
    }
    none.seek(&tp, 5).unwrap();
    assert_eq!(read(&none, 5, Duration::from_secs(5)).await.unwrap().len(), 5);
    none.close().await.unwrap();
    fake.shutdown().await;
}

/// Unknown topics, bad names and arguments, calls that do not fit the state, and a closed
/// consumer: each a typed error, at once.
#[tokio::test]
async fn bad_input_gets_typed_errors() {
    let fake = setup(1, 1).await;
    let bootstrap = fake.bootstrap_servers();
    let plain = Consumer::new(config(&bootstrap)).await.unwrap();
    assert!(matches!(plain.poll(Duration::ZERO).await, Err(ConsumerError::IllegalState(_))));
    assert!(matches!(
        plain.assign([TopicPartition::new("missing", 0)]).await,
        Err(ConsumerError::UnknownTopicOrPartition(_))
    ));
    assert!(matches!(
        plain.assign([TopicPartition::new("t", 7)]).await,
        Err(ConsumerError::UnknownTopicOrPartition(_))
    ));
    assert!(matches!(plain.assign([TopicPartition::new("no/slash", 0)]).await, Err(ConsumerError::InvalidTopic(_))));
    assert!(matches!(plain.subscribe(["t"]).await, Err(ConsumerError::IllegalState(_))), "no group.id");
    assert!(matches!(plain.commit_sync().await, Err(ConsumerError::IllegalState(_))));
    assert!(matches!(plain.seek(&TopicPartition::new("t", 0), 1), Err(ConsumerError::IllegalState(_))), "not assigned");
    plain.assign([TopicPartition::new("t", 0)]).await.unwrap();
    assert!(matches!(plain.seek(&TopicPartition::new("t", 0), -1), Err(ConsumerError::InvalidArgument(_))));
    let offsets = BTreeMap::from([(TopicPartition::new("missing", 0), 5)]);
    assert!(matches!(plain.offsets_for_times(offsets).await, Err(ConsumerError::UnknownTopicOrPartition(_))));
    plain.close().await.unwrap();
    assert!(matches!(plain.poll(Duration::ZERO).await, Err(ConsumerError::Closed)));
    assert!(matches!(plain.seek(&TopicPartition::new("t", 0), 0), Err(ConsumerError::Closed)));
    assert!(matches!(plain.position(&TopicPartition::new("t", 0)).await, Err(ConsumerError::Closed)));
    plain.close().await.unwrap();

    let grouped = Consumer::new(config(&bootstrap).group_id("g")).await.unwrap();
    assert!(matches!(
        grouped.subscribe_pattern("(unclosed").await,
        Err(ConsumerError::InvalidRegularExpression { .. })
    ));
    let negative = BTreeMap::from([(TopicPartition::new("t", 0), OffsetAndMetadata::new(-5))]);
    assert!(matches!(grouped.commit_offsets(negative).await, Err(ConsumerError::InvalidArgument(_))));
    grouped.subscribe(["t"]).await.unwrap();
    assert!(matches!(grouped.assign([TopicPartition::new("t", 0)]).await, Err(ConsumerError::IllegalState(_))));
    drop(grouped);
    let config_error = Consumer::new(config(&bootstrap).set("session.timeout.ms", "10").unwrap()).await;
    assert!(matches!(config_error, Err(ConsumerError::Config(_))));
    fake.shutdown().await;
}
