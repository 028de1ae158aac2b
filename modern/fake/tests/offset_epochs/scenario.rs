//! OffsetCommit and OffsetFetch from v9 on, driven by our own client: a KIP-848 group's member
//! ids and epochs (Kafka's `ConsumerGroup.validateOffsetCommit` and `validateOffsetFetch`, with
//! KIP-1251's assignment epochs for commits at an older epoch), a group that does not exist,
//! and a classic group. Every case's error names, in order, with the case's name: shared by the
//! in-process test (`tests/offset_epochs/main.rs`) and the comparison with Apache Kafka 4.4
//! (`tests/against_kafka/offset_epochs.rs`). Whatever the timing, the scenario waits on the
//! state it needs (Kafka computes assignments in the background).

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kwire::messages::consumer_group_heartbeat_request::TopicPartitions;
use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::join_group_request::JoinGroupRequestProtocol;
use kwire::messages::leave_group_request::MemberIdentity;
use kwire::messages::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
use kwire::messages::offset_fetch_request::{OffsetFetchRequestGroup, OffsetFetchRequestTopics};
use kwire::messages::sync_group_request::SyncGroupRequestAssignment;
use kwire::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest, CreateTopicsRequest, JoinGroupRequest,
    LeaveGroupRequest, OffsetCommitRequest, OffsetFetchRequest, SyncGroupRequest,
};
use kwire::{ErrorCode, StrBytes, TopicName, Uuid};
use kwire_connection::cluster::CoordinatorType;
use kwire_connection::{Client, ClientConfig, Cluster};

const PARTITIONS: i32 = 4;
/// Our client's OffsetCommit and OffsetFetch versions: v9 names topics, v10 gives their ids.
const V8: i16 = 8;
const V9: i16 = 9;
const V10: i16 = 10;
/// A partition the topic does not have.
const NO_SUCH_PARTITION: i32 = 99;
/// How long the group may take to reach a state.
const SETTLE: Duration = Duration::from_secs(60);

/// One case: its name and the error names it got (one per partition, or the group's).
pub type Case = (String, Vec<String>);

fn name(code: ErrorCode) -> String {
    code.name().unwrap_or("unknown").to_string()
}

/// A KIP-848 member as the coordinator last answered it: its epoch and assignment.
struct Member {
    id: String,
    epoch: i32,
    assigned: BTreeSet<i32>,
    /// Topics besides the scenario's to subscribe to with the next heartbeat.
    resubscribe: Option<Vec<String>>,
}

struct Run {
    cluster: Cluster,
    topic: String,
    topic_id: Uuid,
    cases: Vec<Case>,
}

/// Runs the scenario against the cluster at `bootstrap` and returns every case.
pub async fn run(bootstrap: &str) -> Vec<Case> {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default()).await.unwrap();
    let topic = format!("offset-epochs-{nanos}");
    let create = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: TopicName(StrBytes::from(topic.clone())),
            num_partitions: PARTITIONS,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    };
    let created = cluster.any().await.unwrap().send(create).await.unwrap();
    assert_eq!(created.topics[0].error_code, ErrorCode::NONE, "{created:?}");
    let mut run = Run { cluster, topic, topic_id: created.topics[0].topic_id, cases: Vec::new() };
    // Before any group: a KIP-848 group joined before the brokers lead the topic moves to a new
    // epoch when they do (seen once in CI: the first member settled at epoch 3, not 2).
    crate::support::wait_for_leaders(&run.cluster, &run.topic, PARTITIONS).await;
    run.heartbeat_refusals(&format!("offset-epochs-refusals-{nanos}")).await;
    run.consumer_group(&format!("offset-epochs-{nanos}")).await;
    run.no_group(&format!("offset-epochs-none-{nanos}")).await;
    run.classic_group(&format!("offset-epochs-classic-{nanos}")).await;
    run.cases
}

impl Run {
    fn case(&mut self, what: &str, errors: Vec<String>) {
        self.cases.push((what.to_string(), errors));
    }

    /// The group's coordinator, once it answers for the group (a broker just started may still
    /// be loading its groups).
    async fn coordinator(&self, group: &str) -> Client {
        let deadline = Instant::now() + SETTLE;
        loop {
            let c = self.cluster.coordinator(CoordinatorType::Group, group).await.unwrap();
            let answer = self.fetch(&c, group, None, -1).await;
            let loading = ["NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE"];
            if !loading.contains(&answer[0].as_str()) {
                return c;
            }
            assert!(Instant::now() < deadline, "{group}'s coordinator never answered: {answer:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A heartbeat (v1) of `m`, which says it owns `owned`; joins at epoch 0, leaves at -1.
    /// The heartbeat interval it is told.
    async fn beat(&self, c: &Client, group: &str, m: &mut Member, owned: &BTreeSet<i32>) -> i32 {
        let request = ConsumerGroupHeartbeatRequest {
            group_id: group.into(),
            member_id: m.id.as_str().into(),
            member_epoch: m.epoch,
            rebalance_timeout_ms: 60_000,
            subscribed_topic_names: (m.epoch == 0 || m.resubscribe.is_some()).then(|| {
                let more = m.resubscribe.take().unwrap_or_default();
                std::iter::once(self.topic.clone()).chain(more).map(|t| TopicName(StrBytes::from(t))).collect()
            }),
            // Joining, it owns nothing (Kafka refuses anything but the empty list).
            topic_partitions: match m.epoch {
                0 => Some(Vec::new()),
                e if e > 0 => Some(vec![TopicPartitions {
                    topic_id: self.topic_id,
                    partitions: owned.iter().copied().collect::<Vec<_>>().into(),
                    ..Default::default()
                }]),
                _ => None,
            },
            ..Default::default()
        };
        let response = c.send_at(request, 1).await.unwrap();
        assert_eq!(response.error_code, ErrorCode::NONE, "{} heartbeating: {response:?}", m.id);
        m.epoch = response.member_epoch;
        if let Some(a) = response.assignment {
            m.assigned = a.topic_partitions.iter().flat_map(|tp| tp.partitions.iter()).collect();
        }
        response.heartbeat_interval_ms
    }

    /// Heartbeats every member (each owning what it was last given) until they share one epoch
    /// and hold every partition between them, none twice, evenly.
    async fn settle(&self, c: &Client, group: &str, members: &mut [&mut Member]) {
        let deadline = Instant::now() + SETTLE;
        loop {
            for m in members.iter_mut() {
                let owned = m.assigned.clone();
                self.beat(c, group, m, &owned).await;
            }
            let sizes: Vec<usize> = members.iter().map(|m| m.assigned.len()).collect();
            let all: BTreeSet<i32> = members.iter().flat_map(|m| m.assigned.iter().copied()).collect();
            // The coordinator's view too: Kafka computes the target assignment in the background,
            // so members may agree on an epoch older than the group's.
            let request = ConsumerGroupDescribeRequest { group_ids: vec![group.into()], ..Default::default() };
            let described = c.send(request).await.unwrap();
            let g = &described.groups[0];
            let stable = g.group_state.as_str() == "Stable" && g.assignment_epoch == g.group_epoch;
            let settled = stable
                && members.iter().all(|m| m.epoch == g.group_epoch)
                && sizes.iter().sum::<usize>() == PARTITIONS as usize
                && all.len() == PARTITIONS as usize
                && sizes.iter().max().unwrap_or(&0) - sizes.iter().min().unwrap_or(&0) <= 1
                && sizes.iter().all(|s| *s > 0);
            if settled {
                return;
            }
            let state: Vec<_> = members.iter().map(|m| (&m.id, m.epoch, &m.assigned)).collect();
            assert!(Instant::now() < deadline, "the group did not settle: {state:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// An OffsetCommit of `partitions` at `offset`: each partition's error.
    async fn commit(
        &self,
        c: &Client,
        group: &str,
        version: i16,
        member: &str,
        epoch: i32,
        partitions: &[i32],
    ) -> Vec<String> {
        self.commit_at(c, group, version, member, epoch, partitions, 10).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn commit_at(
        &self,
        c: &Client,
        group: &str,
        version: i16,
        member: &str,
        epoch: i32,
        partitions: &[i32],
        offset: i64,
    ) -> Vec<String> {
        let mut topic = OffsetCommitRequestTopic {
            partitions: partitions
                .iter()
                .map(|p| OffsetCommitRequestPartition {
                    partition_index: *p,
                    committed_offset: offset,
                    committed_leader_epoch: -1,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        if version >= V10 {
            topic.topic_id = self.topic_id;
        } else {
            topic.name = TopicName(StrBytes::from(self.topic.clone()));
        }
        let request = OffsetCommitRequest {
            group_id: group.into(),
            generation_id_or_member_epoch: epoch,
            member_id: member.into(),
            topics: vec![topic],
            ..Default::default()
        };
        let response = c.send_at(request, version).await.unwrap();
        response.topics.iter().flat_map(|t| t.partitions.iter().map(|p| name(p.error_code))).collect()
    }

    /// An OffsetFetch (v9) of every partition by `member` at `epoch`: the group's error, then
    /// each partition's committed offset.
    async fn fetch(&self, c: &Client, group: &str, member: Option<&str>, epoch: i32) -> Vec<String> {
        let request = OffsetFetchRequest {
            groups: vec![OffsetFetchRequestGroup {
                group_id: group.into(),
                member_id: member.map(StrBytes::from),
                member_epoch: epoch,
                topics: Some(vec![OffsetFetchRequestTopics {
                    name: TopicName(StrBytes::from(self.topic.clone())),
                    partition_indexes: (0..PARTITIONS).collect::<Vec<_>>().into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            ..Default::default()
        };
        let response = c.send_at(request, V9).await.unwrap();
        let g = &response.groups[0];
        let offsets = g.topics.iter().flat_map(|t| t.partitions.iter().map(|p| p.committed_offset.to_string()));
        std::iter::once(name(g.error_code)).chain(offsets).collect()
    }

    /// Heartbeats until one of `holders` is asked to give up partitions, each holder still
    /// saying it owns what it had and `others` owning what they are given: the holder's index
    /// and the partitions it is revoking.
    async fn until_revoking(
        &self,
        c: &Client,
        group: &str,
        holders: &mut [&mut Member],
        others: &mut [&mut Member],
    ) -> (usize, Vec<i32>) {
        let had: Vec<BTreeSet<i32>> = holders.iter().map(|m| m.assigned.clone()).collect();
        let deadline = Instant::now() + SETTLE;
        loop {
            for (m, owned) in holders.iter_mut().zip(&had) {
                self.beat(c, group, m, owned).await;
            }
            for m in others.iter_mut() {
                let owned = m.assigned.clone();
                self.beat(c, group, m, &owned).await;
            }
            if let Some(i) = holders.iter().zip(&had).position(|(m, owned)| m.assigned != *owned) {
                return (i, had[i].difference(&holders[i].assigned).copied().collect());
            }
            assert!(Instant::now() < deadline, "nobody was asked to give up a partition");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn consumer_group(&mut self, group: &str) {
        let c = self.coordinator(group).await;
        let member =
            |n: &str| Member { id: format!("{group}-{n}"), epoch: 0, assigned: BTreeSet::new(), resubscribe: None };
        let (mut a, mut b, mut x) = (member("a"), member("b"), member("c"));
        self.settle(&c, group, &mut [&mut a]).await;
        let first = a.epoch;
        let all: Vec<i32> = a.assigned.iter().copied().collect();
        let r = self.commit(&c, group, V9, &a.id, a.epoch, &all).await;
        self.case("a alone commits at its epoch", r);
        // A new group is at epoch 1 (Kafka 4.4): its first member joins at 2.
        self.case("a new group's first member joins at epoch", vec![first.to_string()]);

        // b joins: a is asked to give up two partitions, and keeps its epoch until it does.
        let (_, revoking) = self.until_revoking(&c, group, &mut [&mut a], &mut [&mut b]).await;
        self.case(
            "a keeps its epoch while it revokes",
            vec![(a.epoch == first).to_string(), revoking.len().to_string()],
        );
        let r = self.commit(&c, group, V9, &a.id, a.epoch, &revoking).await;
        self.case("its epoch, partitions being revoked", r);
        let r = self.commit(&c, group, V9, &b.id, b.epoch, &revoking).await;
        self.case("its epoch, partitions another member holds", r);
        self.settle(&c, group, &mut [&mut a, &mut b]).await;
        let second = a.epoch;
        let kept: Vec<i32> = a.assigned.iter().copied().collect();
        let given: Vec<i32> = b.assigned.iter().copied().collect();
        self.case("a moved to a newer epoch", vec![(second > first).to_string()]);
        // KIP-1251: an older epoch commits what the member has held since then.
        let r = self.commit(&c, group, V9, &a.id, first, &kept[..1]).await;
        self.case("older epoch, a partition held since", r);
        let r = self.commit(&c, group, V10, &a.id, first, &kept[..1]).await;
        self.case("older epoch, a partition held since, by topic id", r);
        let r = self.commit(&c, group, V9, &a.id, first, &given[..1]).await;
        self.case("older epoch, a partition given away", r);
        let r = self.commit_at(&c, group, V9, &a.id, first, &[kept[1], given[0]], 77).await;
        self.case("older epoch, one partition refused refuses all", r);
        let r = self.fetch(&c, group, None, -1).await;
        self.case("offsets after the refused commit (none of 77)", r);
        let r = self.commit(&c, group, V9, &b.id, first, &given[..1]).await;
        self.case("older than the partition's assignment epoch", r);
        let r = self.commit(&c, group, V9, &a.id, a.epoch + 1, &kept[..1]).await;
        self.case("newer epoch", r);
        let r = self.commit(&c, group, V9, &a.id, a.epoch + 1, &[kept[0], NO_SUCH_PARTITION]).await;
        self.case("refused, with a partition the topic lacks", r);
        let r = self.commit(&c, group, V9, "nobody", 3, &[NO_SUCH_PARTITION]).await;
        self.case("only partitions the topic lacks: the group is not asked", r);
        let r = self.commit(&c, group, V9, "nobody", a.epoch, &kept).await;
        self.case("unknown member", r);
        let r = self.commit(&c, group, V9, "", -1, &kept).await;
        self.case("no member, epoch -1, the group has members", r);
        let r = self.commit(&c, group, V8, &a.id, a.epoch, &kept).await;
        self.case("a member commits with v8", r);
        let r = self.commit(&c, group, V9, &b.id, b.epoch, &given).await;
        self.case("b at its epoch", r);

        // A new subscription moves everyone to a new epoch with the partitions they had; then c
        // joins, and whoever gives up a partition may commit it at the epoch before.
        b.resubscribe = Some(vec![format!("{}-absent", self.topic)]);
        self.settle(&c, group, &mut [&mut a, &mut b]).await;
        let third = a.epoch;
        let moved = vec![(third > second).to_string(), (a.assigned == kept.iter().copied().collect()).to_string()];
        self.case("a new subscription: a new epoch, the same partitions", moved);
        self.beat(&c, group, &mut x, &BTreeSet::new()).await;
        let (i, revoking) = self.until_revoking(&c, group, &mut [&mut a, &mut b], &mut [&mut x]).await;
        let revoker = if i == 0 { &a } else { &b };
        self.case(
            "the revoker keeps its epoch",
            vec![(revoker.epoch == third).to_string(), revoking.len().to_string()],
        );
        let r = self.commit(&c, group, V9, &revoker.id, second, &revoking).await;
        self.case("older epoch, a partition being revoked", r);
        self.settle(&c, group, &mut [&mut a, &mut b, &mut x]).await;

        for (what, member, epoch) in [
            ("fetch without member id, epoch -1", None, -1),
            ("fetch by a member at its epoch", Some(a.id.as_str()), a.epoch),
            ("fetch by a member at an older epoch", Some(a.id.as_str()), first),
            ("fetch by a member at a newer epoch", Some(a.id.as_str()), a.epoch + 1),
            ("fetch by an unknown member", Some("nobody"), a.epoch),
            ("fetch with an empty member id, epoch -1", Some(""), -1),
            ("fetch without member id, at an epoch", None, a.epoch),
        ] {
            let mut r = self.fetch(&c, group, member, epoch).await;
            r.truncate(1);
            self.case(what, r);
        }

        // How ConsumerGroupDescribe shows a member subscribed by name.
        let request = ConsumerGroupDescribeRequest { group_ids: vec![group.into()], ..Default::default() };
        let described = c.send(request).await.unwrap();
        let regexes = described.groups[0].members.iter().map(|m| format!("{:?}", m.subscribed_topic_regex.as_deref()));
        self.case("described members' regular expressions", regexes.collect());

        // Everyone leaves: the group is empty.
        let mut intervals = Vec::new();
        for m in [&mut a, &mut b, &mut x] {
            let last = m.epoch;
            m.epoch = -1;
            intervals.push(self.beat(&c, group, m, &BTreeSet::new()).await.to_string());
            m.epoch = last;
        }
        self.case("heartbeat interval told to those leaving", intervals);
        let r = self.commit(&c, group, V9, &a.id, a.epoch, &kept).await;
        self.case("a member that left, at its last epoch", r);
        let mut r = self.fetch(&c, group, Some(&a.id), a.epoch).await;
        r.truncate(1);
        self.case("fetch by a member that left", r);
        let r = self.commit(&c, group, V9, &a.id, -1, &kept).await;
        self.case("epoch -1 with a member id, empty group", r);
        let r = self.commit(&c, group, V9, "", -1, &kept).await;
        self.case("no member, epoch -1, empty group", r);
    }

    /// ConsumerGroupHeartbeats Kafka refuses before asking the coordinator: the error and
    /// Kafka's message.
    async fn heartbeat_refusals(&mut self, group: &str) {
        let c = self.coordinator(group).await;
        let join = || ConsumerGroupHeartbeatRequest {
            group_id: group.into(),
            member_id: format!("{group}-m").as_str().into(),
            member_epoch: 0,
            rebalance_timeout_ms: 60_000,
            subscribed_topic_names: Some(vec![TopicName(StrBytes::from(self.topic.clone()))]),
            topic_partitions: Some(Vec::new()),
            ..Default::default()
        };
        let owning =
            vec![TopicPartitions { topic_id: self.topic_id, partitions: vec![0].into(), ..Default::default() }];
        let cases = [
            ("join without TopicPartitions", ConsumerGroupHeartbeatRequest { topic_partitions: None, ..join() }),
            ("join owning partitions", ConsumerGroupHeartbeatRequest { topic_partitions: Some(owning), ..join() }),
            ("join without a subscription", ConsumerGroupHeartbeatRequest { subscribed_topic_names: None, ..join() }),
            ("join without a rebalance timeout", ConsumerGroupHeartbeatRequest { rebalance_timeout_ms: -1, ..join() }),
            (
                "join with an unknown assignor",
                ConsumerGroupHeartbeatRequest { server_assignor: Some("nope".into()), ..join() },
            ),
            (
                "join with an empty instance id",
                ConsumerGroupHeartbeatRequest { instance_id: Some("".into()), ..join() },
            ),
            ("join without a member id", ConsumerGroupHeartbeatRequest { member_id: "".into(), ..join() }),
            ("epoch -2 without an instance id", ConsumerGroupHeartbeatRequest { member_epoch: -2, ..join() }),
            ("epoch -3", ConsumerGroupHeartbeatRequest { member_epoch: -3, ..join() }),
        ];
        for (what, request) in cases {
            let r = c.send_at(request, 1).await.unwrap();
            let message = r.error_message.map(|m| m.to_string()).unwrap_or_default();
            self.case(what, vec![name(r.error_code), message]);
        }
    }

    async fn no_group(&mut self, group: &str) {
        let c = self.coordinator(group).await;
        // Not even a simple group: the coordinator is not asked.
        let r = self.commit(&c, group, V9, "", -1, &[NO_SUCH_PARTITION]).await;
        self.case("no such group, epoch -1, only partitions the topic lacks", r);
        let r = self.commit(&c, group, V9, "nobody", 3, &[0]).await;
        self.case("no such group, v9, a generation", r);
        let r = self.commit(&c, group, V8, "nobody", 3, &[0]).await;
        self.case("no such group, v8, a generation", r);
        let r = self.fetch(&c, group, None, -1).await;
        self.case("no such group: nothing was created", r);
        let r = self.commit(&c, group, V9, "", -1, &[0]).await;
        self.case("no such group, epoch -1: a simple group", r);
        let r = self.fetch(&c, group, None, -1).await;
        self.case("the simple group's offsets", r);
    }

    async fn classic_group(&mut self, group: &str) {
        let c = self.coordinator(group).await;
        let join = |member_id: &str| JoinGroupRequest {
            group_id: group.into(),
            session_timeout_ms: 30_000,
            rebalance_timeout_ms: 30_000,
            member_id: member_id.into(),
            protocol_type: "wire-test".into(),
            protocols: vec![JoinGroupRequestProtocol { name: "one".into(), ..Default::default() }],
            ..Default::default()
        };
        let first = c.send(join("")).await.unwrap();
        assert_eq!(first.error_code, ErrorCode::MEMBER_ID_REQUIRED, "{first:?}");
        let member = first.member_id.to_string();
        let joined = c.send(join(&member)).await.unwrap();
        assert_eq!(joined.error_code, ErrorCode::NONE, "{joined:?}");
        let generation = joined.generation_id;
        let sync = SyncGroupRequest {
            group_id: group.into(),
            generation_id: generation,
            member_id: member.as_str().into(),
            // Mandatory from v5.
            protocol_type: Some("wire-test".into()),
            protocol_name: Some("one".into()),
            assignments: vec![SyncGroupRequestAssignment { member_id: member.as_str().into(), ..Default::default() }],
            ..Default::default()
        };
        assert_eq!(c.send(sync).await.unwrap().error_code, ErrorCode::NONE);
        let r = self.commit(&c, group, V9, &member, generation, &[0]).await;
        self.case("classic, v9, the member at its generation", r);
        let r = self.commit(&c, group, V9, &member, generation + 1, &[0]).await;
        self.case("classic, v9, another generation", r);
        let r = self.commit(&c, group, V9, &member, generation - 1, &[0]).await;
        self.case("classic, v9, an older generation", r);
        let r = self.commit(&c, group, V9, "", -1, &[0]).await;
        self.case("classic, v9, no member, the group has one", r);
        let r = self.commit(&c, group, V9, "nobody", generation, &[0]).await;
        self.case("classic, v9, unknown member", r);
        let mut r = self.fetch(&c, group, Some("nobody"), 42).await;
        r.truncate(1);
        self.case("classic, v9 fetch: member id and epoch are not checked", r);
        let leave = LeaveGroupRequest {
            group_id: group.into(),
            members: vec![MemberIdentity { member_id: member.as_str().into(), ..Default::default() }],
            ..Default::default()
        };
        assert_eq!(c.send(leave).await.unwrap().error_code, ErrorCode::NONE);
        let r = self.commit(&c, group, V9, &member, -1, &[0]).await;
        self.case("classic, empty, epoch -1 with a member id", r);
        let r = self.commit(&c, group, V9, &member, generation, &[0]).await;
        self.case("classic, empty, the member that left", r);
    }
}

/// What Kafka 4.4 answers in each case.
pub fn expected() -> Vec<Case> {
    let e = |what: &str, errors: &[&str]| (what.to_string(), errors.iter().map(|s| s.to_string()).collect());
    let stale = "STALE_MEMBER_EPOCH";
    let unknown = "UNKNOWN_MEMBER_ID";
    let invalid = "INVALID_REQUEST";
    vec![
        e("join without TopicPartitions", &[invalid, "TopicPartitions must be empty when (re-)joining."]),
        e("join owning partitions", &[invalid, "TopicPartitions must be empty when (re-)joining."]),
        e(
            "join without a subscription",
            &[invalid, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."],
        ),
        e("join without a rebalance timeout", &[invalid, "RebalanceTimeoutMs must be provided in first request."]),
        e(
            "join with an unknown assignor",
            &["UNSUPPORTED_ASSIGNOR", "ServerAssignor nope is not supported. Supported assignors: uniform, range."],
        ),
        e("join with an empty instance id", &[invalid, "InstanceId can't be empty."]),
        e("join without a member id", &[invalid, "MemberId can't be empty."]),
        e("epoch -2 without an instance id", &[invalid, "InstanceId can't be null."]),
        e("epoch -3", &[invalid, "MemberEpoch is invalid."]),
        e("a alone commits at its epoch", &["NONE"; 4]),
        e("a new group's first member joins at epoch", &["2"]),
        e("a keeps its epoch while it revokes", &["true", "2"]),
        e("its epoch, partitions being revoked", &["NONE", "NONE"]),
        e("its epoch, partitions another member holds", &["NONE", "NONE"]),
        e("a moved to a newer epoch", &["true"]),
        e("older epoch, a partition held since", &["NONE"]),
        e("older epoch, a partition held since, by topic id", &["NONE"]),
        e("older epoch, a partition given away", &[stale]),
        e("older epoch, one partition refused refuses all", &[stale, stale]),
        e("offsets after the refused commit (none of 77)", &["NONE", "10", "10", "10", "10"]),
        e("older than the partition's assignment epoch", &[stale]),
        e("newer epoch", &[stale]),
        e("refused, with a partition the topic lacks", &["UNKNOWN_TOPIC_OR_PARTITION", stale]),
        e("only partitions the topic lacks: the group is not asked", &["UNKNOWN_TOPIC_OR_PARTITION"]),
        e("unknown member", &[unknown, unknown]),
        e("no member, epoch -1, the group has members", &[unknown, unknown]),
        e("a member commits with v8", &["UNSUPPORTED_VERSION", "UNSUPPORTED_VERSION"]),
        e("b at its epoch", &["NONE", "NONE"]),
        e("a new subscription: a new epoch, the same partitions", &["true", "true"]),
        e("the revoker keeps its epoch", &["true", "1"]),
        e("older epoch, a partition being revoked", &["NONE"]),
        e("fetch without member id, epoch -1", &["NONE"]),
        e("fetch by a member at its epoch", &["NONE"]),
        e("fetch by a member at an older epoch", &[stale]),
        e("fetch by a member at a newer epoch", &[stale]),
        e("fetch by an unknown member", &[unknown]),
        e("fetch with an empty member id, epoch -1", &[unknown]),
        // Kafka looks the null member id up, and fails.
        e("fetch without member id, at an epoch", &["UNKNOWN_SERVER_ERROR"]),
        e("described members' regular expressions", &["Some(\"\")"; 3]),
        e("heartbeat interval told to those leaving", &["0"; 3]),
        e("a member that left, at its last epoch", &[unknown, unknown]),
        e("fetch by a member that left", &[unknown]),
        e("epoch -1 with a member id, empty group", &["NONE", "NONE"]),
        e("no member, epoch -1, empty group", &["NONE", "NONE"]),
        e("no such group, epoch -1, only partitions the topic lacks", &["UNKNOWN_TOPIC_OR_PARTITION"]),
        e("no such group, v9, a generation", &["GROUP_ID_NOT_FOUND"]),
        e("no such group, v8, a generation", &["ILLEGAL_GENERATION"]),
        e("no such group: nothing was created", &["NONE", "-1", "-1", "-1", "-1"]),
        e("no such group, epoch -1: a simple group", &["NONE"]),
        e("the simple group's offsets", &["NONE", "10", "-1", "-1", "-1"]),
        e("classic, v9, the member at its generation", &["NONE"]),
        e("classic, v9, another generation", &["ILLEGAL_GENERATION"]),
        e("classic, v9, an older generation", &["ILLEGAL_GENERATION"]),
        e("classic, v9, no member, the group has one", &[unknown]),
        e("classic, v9, unknown member", &[unknown]),
        e("classic, v9 fetch: member id and epoch are not checked", &["NONE"]),
        e("classic, empty, epoch -1 with a member id", &["NONE"]),
        e("classic, empty, the member that left", &[unknown]),
    ]
}
