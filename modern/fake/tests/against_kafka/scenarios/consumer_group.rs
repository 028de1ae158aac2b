//! A KIP-848 consumer group, heartbeat by heartbeat: a joins alone, b joins, a revokes what
//! b is to get, b takes it, a leaves, b takes everything. Observed: every heartbeat's member
//! epoch, assignment and error, and ConsumerGroupDescribe's view.
//!
//! Kafka 4.4 answers the heartbeat that changes the group (a member joining or leaving) before
//! it has computed the new target assignment: the group is `Assigning` for a while, its
//! assignment epoch behind its group epoch. So that heartbeat's answer depends on Kafka's
//! timing and is not observed (b's join: Kafka answered with the old epoch, the fake, which
//! assigns at once, with the new one); the script then waits until the group is assigned
//! before the next observed heartbeat.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use kwire::messages::consumer_group_heartbeat_request::TopicPartitions;
use kwire::messages::offset_fetch_request::{OffsetFetchRequestGroup, OffsetFetchRequestTopics};
use kwire::messages::txn_offset_commit_request::{TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic};
use kwire::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, OffsetFetchRequest,
    TxnOffsetCommitRequest,
};
use kwire::{ErrorCode, GroupId, StrBytes, TopicName, TransactionalId};

use super::transactions::WAIT;

use super::{Script, To};

type Steps<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Member ids, chosen by the client since ConsumerGroupHeartbeat v1.
const A: &str = "AAAAAAAAAAAAAAAAAAAAAA";
const B: &str = "BBBBBBBBBBBBBBBBBBBBBB";

/// One member's view: its epoch and the partitions it owns.
struct Member {
    id: &'static str,
    epoch: i32,
    owned: Vec<TopicPartitions>,
}

impl Member {
    fn new(id: &'static str) -> Self {
        Member { id, epoch: 0, owned: Vec::new() }
    }

    /// Takes what the response says: its epoch, and its assignment when it sends one.
    fn heard(&mut self, r: &ConsumerGroupHeartbeatResponse) {
        self.epoch = r.member_epoch;
        if let Some(a) = &r.assignment {
            self.owned = a
                .topic_partitions
                .iter()
                .map(|t| TopicPartitions {
                    topic_id: t.topic_id,
                    partitions: t.partitions.clone(),
                    ..Default::default()
                })
                .collect();
        }
    }
}

/// A heartbeat of `m` in `group`: the first one (epoch 0) subscribes to `topic`; later ones
/// report what `m` owns; epoch -1 leaves. `step: None`: not observed (see the module's doc).
async fn heartbeat(s: &mut Script, step: Option<&str>, group: &str, topic: &str, m: &mut Member, leave: bool) {
    let joining = m.epoch == 0;
    let request = ConsumerGroupHeartbeatRequest {
        group_id: GroupId(StrBytes::from(group.to_owned())),
        member_id: StrBytes::from_static_str(m.id),
        member_epoch: if leave { -1 } else { m.epoch },
        rebalance_timeout_ms: if joining { 30_000 } else { -1 },
        subscribed_topic_names: joining.then(|| vec![TopicName(StrBytes::from(topic.to_owned()))]),
        server_assignor: joining.then(|| StrBytes::from_static_str("uniform")),
        topic_partitions: (!leave).then(|| m.owned.clone()),
        ..Default::default()
    };
    let r = match step {
        Some(step) => s.send(step, To::Group(group), request, 1).await,
        None => s.request_until(To::Group(group), request, 1, Duration::ZERO, |_| true).await,
    };
    m.heard(&r);
}

fn describe(group: &str) -> ConsumerGroupDescribeRequest {
    ConsumerGroupDescribeRequest { group_ids: vec![GroupId(StrBytes::from(group.to_owned()))], ..Default::default() }
}

/// Waits (observing nothing) until `group`'s target assignment has caught up with its epoch.
async fn assigned(s: &mut Script, group: &str) {
    s.request_until(To::Group(group), describe(group), 1, WAIT, |r| {
        r.groups.iter().all(|g| g.assignment_epoch == g.group_epoch)
    })
    .await;
}

pub fn hand_over(s: &mut Script) -> Steps<'_> {
    Box::pin(async move {
        let topic = s.create_topic("in", 4).await;
        let group = s.name("group");
        let (mut a, mut b) = (Member::new(A), Member::new(B));
        heartbeat(s, Some("a joins"), &group, &topic, &mut a, false).await;
        heartbeat(s, Some("a owns all"), &group, &topic, &mut a, false).await;
        heartbeat(s, None, &group, &topic, &mut b, false).await;
        assigned(s, &group).await;
        heartbeat(s, Some("a is asked to revoke"), &group, &topic, &mut a, false).await;
        heartbeat(s, Some("a revoked"), &group, &topic, &mut a, false).await;
        heartbeat(s, Some("b is given its share"), &group, &topic, &mut b, false).await;
        heartbeat(s, Some("b owns its share"), &group, &topic, &mut b, false).await;
        s.send("described, two members", To::Group(&group), describe(&group), 1).await;
        heartbeat(s, Some("a leaves"), &group, &topic, &mut a, true).await;
        assigned(s, &group).await;
        heartbeat(s, Some("b is given the rest"), &group, &topic, &mut b, false).await;
        heartbeat(s, Some("b owns all"), &group, &topic, &mut b, false).await;
        s.send("described, one member", To::Group(&group), describe(&group), 1).await;
    })
}

/// Offsets committed in a transaction by a KIP-848 member: at its epoch, at a newer one, by a
/// member the group does not know; then what the member fetches once the transaction commits.
pub fn transactional_commits(s: &mut Script) -> Steps<'_> {
    Box::pin(async move {
        let topic = s.create_topic("in", 2).await;
        let group = s.name("group");
        let id = s.name("tx");
        let mut a = Member::new(A);
        heartbeat(s, Some("a joins"), &group, &topic, &mut a, false).await;
        heartbeat(s, Some("a owns all"), &group, &topic, &mut a, false).await;
        let (pid, epoch) = super::transactions::init(s, "init", &id, 5).await;
        s.alias("producerId", pid.0, "producer");
        let commit = |member: &str, member_epoch: i32| TxnOffsetCommitRequest {
            transactional_id: TransactionalId(StrBytes::from(id.clone())),
            group_id: GroupId(StrBytes::from(group.clone())),
            producer_id: pid,
            producer_epoch: epoch,
            generation_id_or_member_epoch: member_epoch,
            member_id: StrBytes::from(member.to_owned()),
            topics: vec![TxnOffsetCommitRequestTopic {
                name: TopicName(StrBytes::from(topic.clone())),
                partitions: (0..2)
                    .map(|p| TxnOffsetCommitRequestPartition {
                        partition_index: p,
                        committed_offset: 10 + i64::from(p),
                        committed_leader_epoch: -1,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        s.send("commit at a newer epoch", To::Group(&group), commit(A, a.epoch + 1), 5).await;
        s.send("commit by a stranger", To::Group(&group), commit(B, a.epoch), 5).await;
        s.send("commit at its epoch", To::Group(&group), commit(A, a.epoch), 5).await;
        super::transactions::end(s, "commit", &id, (pid, epoch), true, 5).await;
        let fetch = OffsetFetchRequest {
            groups: vec![OffsetFetchRequestGroup {
                group_id: GroupId(StrBytes::from(group.clone())),
                member_id: Some(StrBytes::from_static_str(A)),
                member_epoch: a.epoch,
                topics: Some(vec![OffsetFetchRequestTopics {
                    name: TopicName(StrBytes::from(topic.clone())),
                    partition_indexes: vec![0, 1].into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            require_stable: true,
            ..Default::default()
        };
        s.send_until("a fetches its offsets", To::Group(&group), fetch, 9, WAIT, |r| {
            r.groups
                .iter()
                .flat_map(|g| &g.topics)
                .flat_map(|t| &t.partitions)
                .all(|p| p.error_code != ErrorCode::UNSTABLE_OFFSET_COMMIT)
        })
        .await;
    })
}
