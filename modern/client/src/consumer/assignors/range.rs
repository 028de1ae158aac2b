//! Kafka's `RangeAssignor`: per topic, its members in order each take a consecutive range,
//! the first `partitions % members` one more. (Kafka's rack-aware variant, used when members
//! and replicas have racks, is not implemented: the plain ranges are what it falls back to.)

use std::collections::BTreeMap;

use super::{sorted, Member};
use crate::consumer::record::TopicPartition;

pub(super) fn assign(partitions: &BTreeMap<String, i32>, members: &[Member]) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut assignment: BTreeMap<String, Vec<TopicPartition>> = BTreeMap::new();
    let order = sorted(members);
    for (topic, &count) in partitions {
        let consumers: Vec<&Member> = order.iter().copied().filter(|m| m.subscription.topics.contains(topic)).collect();
        if consumers.is_empty() || count <= 0 {
            continue;
        }
        let n = consumers.len() as i32;
        let (each, extra) = (count / n, count % n);
        let mut next = 0;
        for (i, member) in consumers.iter().enumerate() {
            let take = each + i32::from((i as i32) < extra);
            let list = assignment.entry(member.id.clone()).or_default();
            list.extend((next..next + take).map(|p| TopicPartition::new(topic.as_str(), p)));
            next += take;
        }
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::super::tests::member;
    use super::*;

    #[test]
    fn ranges_as_kafkas_range_assignor_gives_them() {
        // Kafka's RangeAssignorTest.testTwoConsumersTwoTopicsSixPartitions: 3 partitions each.
        let partitions = BTreeMap::from([("t1".to_string(), 3), ("t2".to_string(), 3)]);
        let members = [member("consumer2", &["t1", "t2"], &[], -1), member("consumer1", &["t1", "t2"], &[], -1)];
        let a = assign(&partitions, &members);
        let names = |id: &str| a[id].iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(names("consumer1"), ["t1-0", "t1-1", "t2-0", "t2-1"]);
        assert_eq!(names("consumer2"), ["t1-2", "t2-2"]);
    }

    #[test]
    fn a_member_not_subscribed_to_a_topic_gets_none_of_it() {
        let partitions = BTreeMap::from([("a".to_string(), 2), ("b".to_string(), 2)]);
        let members = [member("m1", &["a"], &[], -1), member("m2", &["a", "b"], &[], -1)];
        let a = assign(&partitions, &members);
        assert_eq!(a["m1"].len(), 1);
        assert_eq!(a["m2"].len(), 3);
    }
}
