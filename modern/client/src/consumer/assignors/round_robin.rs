//! Kafka's `RoundRobinAssignor`: every partition of every subscribed topic, sorted by topic
//! then partition, dealt to the members in order, skipping a member not subscribed to the
//! partition's topic.

use std::collections::BTreeMap;

use super::{sorted, subscribed_partitions, Member};
use crate::consumer::record::TopicPartition;

pub(super) fn assign(partitions: &BTreeMap<String, i32>, members: &[Member]) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut assignment: BTreeMap<String, Vec<TopicPartition>> = BTreeMap::new();
    let order = sorted(members);
    if order.is_empty() {
        return assignment;
    }
    let mut next = 0usize;
    for tp in subscribed_partitions(partitions, members) {
        // Some member subscribes to the topic, so this finds one within a turn.
        for _ in 0..order.len() {
            let member = order[next % order.len()];
            next += 1;
            if member.subscription.topics.iter().any(|t| **t == *tp.topic) {
                assignment.entry(member.id.clone()).or_default().push(tp);
                break;
            }
        }
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::super::tests::member;
    use super::*;

    #[test]
    fn partitions_are_dealt_in_turn_as_kafkas_round_robin_assignor_does() {
        // Kafka's RoundRobinAssignorTest.testTwoConsumersTwoTopicsSixPartitions.
        let partitions = BTreeMap::from([("t1".to_string(), 3), ("t2".to_string(), 3)]);
        let members = [member("consumer1", &["t1", "t2"], &[], -1), member("consumer2", &["t1", "t2"], &[], -1)];
        let a = assign(&partitions, &members);
        let names = |id: &str| a[id].iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(names("consumer1"), ["t1-0", "t1-2", "t2-1"]);
        assert_eq!(names("consumer2"), ["t1-1", "t2-0", "t2-2"]);
    }

    #[test]
    fn unsubscribed_members_are_skipped() {
        // Kafka's testMultipleConsumersMixedTopics: c1 [t1], c2 [t1 t2], c3 [t1].
        let partitions = BTreeMap::from([("t1".to_string(), 3), ("t2".to_string(), 2)]);
        let members =
            [member("c1", &["t1"], &[], -1), member("c2", &["t1", "t2"], &[], -1), member("c3", &["t1"], &[], -1)];
        let a = assign(&partitions, &members);
        let names = |id: &str| a[id].iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(names("c1"), ["t1-0"]);
        assert_eq!(names("c2"), ["t1-1", "t2-0", "t2-1"]);
        assert_eq!(names("c3"), ["t1-2"]);
    }
}
