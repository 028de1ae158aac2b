//! Client-side assignors of classic groups, as Kafka's Java consumer has them: `range`,
//! `roundrobin` (eager: every partition is revoked before a rebalance) and
//! `cooperative-sticky` (KIP-429: members keep what they own, and a partition moving to
//! another member is only handed over in the rebalance after its owner released it). The
//! group's leader runs the one the coordinator chose, on every member's subscription
//! (`protocol.rs`: Kafka's `ConsumerProtocol` bytes, so Java members can lead us and be led).

mod cooperative_sticky;
pub(crate) mod protocol;
mod range;
mod round_robin;

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use super::config::AssignmentStrategy;
use super::record::TopicPartition;
pub(crate) use protocol::Subscription;

/// One member as the leader sees it in JoinGroup's answer.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub id: String,
    pub instance_id: Option<String>,
    pub subscription: Subscription,
}

/// Whether members give up every partition before a rebalance, or only those moving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RebalanceProtocol {
    Eager,
    Cooperative,
}

/// The protocol a member follows: cooperative only when every assignor it offers supports
/// it, as Kafka's `ConsumerCoordinator` decides.
pub(crate) fn rebalance_protocol(strategies: &[AssignmentStrategy]) -> RebalanceProtocol {
    if strategies.iter().all(|s| *s == AssignmentStrategy::CooperativeSticky) {
        RebalanceProtocol::Cooperative
    } else {
        RebalanceProtocol::Eager
    }
}

/// What a member puts in its subscription's user data for `strategy`: the cooperative-sticky
/// assignor writes the member's generation (an int32), as Kafka's does for leaders that read
/// subscriptions older than v2.
pub(crate) fn user_data(strategy: AssignmentStrategy, generation: i32) -> Option<Bytes> {
    match strategy {
        AssignmentStrategy::CooperativeSticky => Some(Bytes::copy_from_slice(&generation.to_be_bytes())),
        _ => None,
    }
}

/// The member's generation as the cooperative-sticky assignor reads it: the v2+ field, else
/// its user data.
fn generation_of(subscription: &Subscription) -> i32 {
    if subscription.generation >= 0 {
        return subscription.generation;
    }
    match subscription.user_data.as_deref() {
        Some([a, b, c, d, ..]) => i32::from_be_bytes([*a, *b, *c, *d]),
        _ => -1,
    }
}

/// Assigns `partitions` (partition count of each topic that exists) to `members` with
/// `strategy`: every member gets an entry, possibly empty.
pub(crate) fn assign(
    strategy: AssignmentStrategy,
    partitions: &BTreeMap<String, i32>,
    members: &[Member],
) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut assignment = match strategy {
        AssignmentStrategy::Range => range::assign(partitions, members),
        AssignmentStrategy::RoundRobin => round_robin::assign(partitions, members),
        AssignmentStrategy::CooperativeSticky => cooperative_sticky::assign(partitions, members),
    };
    for member in members {
        assignment.entry(member.id.clone()).or_default();
    }
    for list in assignment.values_mut() {
        list.sort();
    }
    assignment
}

/// Members in Kafka's order: by `group.instance.id` when both have one, members with one
/// first, else by member id.
fn sorted(members: &[Member]) -> Vec<&Member> {
    let mut sorted: Vec<&Member> = members.iter().collect();
    sorted.sort_by(|a, b| match (&a.instance_id, &b.instance_id) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.id.cmp(&b.id),
    });
    sorted
}

/// Every partition of the topics some member subscribes to, that exist.
fn subscribed_partitions(partitions: &BTreeMap<String, i32>, members: &[Member]) -> BTreeSet<TopicPartition> {
    let topics: BTreeSet<&str> =
        members.iter().flat_map(|m| m.subscription.topics.iter().map(String::as_str)).collect();
    topics
        .into_iter()
        .filter_map(|t| Some((t, *partitions.get(t)?)))
        .flat_map(|(t, n)| (0..n).map(move |p| TopicPartition::new(t, p)))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn member(id: &str, topics: &[&str], owned: &[(&str, i32)], generation: i32) -> Member {
        Member {
            id: id.to_owned(),
            instance_id: None,
            subscription: Subscription {
                topics: topics.iter().map(|t| t.to_string()).collect(),
                owned: owned.iter().map(|(t, p)| TopicPartition::new(*t, *p)).collect(),
                generation,
                ..Default::default()
            },
        }
    }

    pub(crate) fn counts(assignment: &BTreeMap<String, Vec<TopicPartition>>) -> Vec<usize> {
        assignment.values().map(Vec::len).collect()
    }

    #[test]
    fn the_protocol_is_cooperative_only_when_every_assignor_is() {
        use AssignmentStrategy::*;
        assert_eq!(rebalance_protocol(&[CooperativeSticky]), RebalanceProtocol::Cooperative);
        assert_eq!(rebalance_protocol(&[Range, CooperativeSticky]), RebalanceProtocol::Eager);
        let data = user_data(CooperativeSticky, 7).unwrap();
        let subscription = Subscription { user_data: Some(data), generation: -1, ..Default::default() };
        assert_eq!(generation_of(&subscription), 7);
    }
}
