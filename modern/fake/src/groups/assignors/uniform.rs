//! KIP-848's `uniform` assignor, the consumer groups' default.

use std::collections::BTreeMap;

use kwire::Uuid;

use super::{Assignable, Owned, Subscriptions, Target};

/// `uniform`: every subscribed partition to one member, each member's count within one of the
/// others' among those subscribed alike; a partition stays with the member that had it in the
/// previous target while that keeps the balance.
pub(crate) fn uniform(subscriptions: &Subscriptions, topics: &Assignable, previous: &Target) -> Target {
    let mut target: Target = subscriptions.keys().map(|m| (m.clone(), Owned::new())).collect();
    let mut counts: BTreeMap<&str, usize> = subscriptions.keys().map(|m| (m.as_str(), 0)).collect();
    let partitions: Vec<(&str, Uuid, i32)> = topics
        .iter()
        .filter(|(name, _)| subscriptions.values().any(|s| s.contains(*name)))
        .flat_map(|(name, (id, n))| (0..*n).map(move |p| (name.as_str(), *id, p)))
        .collect();
    let eligible = |topic: &str| -> Vec<&str> {
        subscriptions.iter().filter(|(_, s)| s.contains(topic)).map(|(m, _)| m.as_str()).collect()
    };
    let homogeneous = subscriptions.values().all(|s| subscriptions.values().next() == Some(s));
    let quota: BTreeMap<&str, usize> = if homogeneous {
        // Kafka's UniformHomogeneousAssignmentBuilder: each member total / members, and
        // total % members of them one more (Kafka's are the first in its member map's order;
        // here those that had the most, so that fewer partitions move).
        let n = subscriptions.len().max(1);
        let (each, extra) = (partitions.len() / n, partitions.len() % n);
        let had = |m: &str| {
            let prev = previous.get(m);
            partitions.iter().filter(|(_, id, p)| prev.and_then(|o| o.get(id)).is_some_and(|ps| ps.contains(p))).count()
        };
        let mut by_had: Vec<&str> = subscriptions.keys().map(String::as_str).collect();
        by_had.sort_by_key(|m| (std::cmp::Reverse(had(m)), *m));
        by_had.into_iter().enumerate().map(|(i, m)| (m, each + usize::from(i < extra))).collect()
    } else {
        // The most a member should hold: the partitions it may be given over the members
        // sharing any of its topics, rounded up.
        subscriptions
            .iter()
            .map(|(m, topics_of_m)| {
                let mine = partitions.iter().filter(|(t, _, _)| topics_of_m.contains(*t)).count();
                let sharing = subscriptions.values().filter(|s| !s.is_disjoint(topics_of_m)).count().max(1);
                (m.as_str(), mine.div_ceil(sharing))
            })
            .collect()
    };
    let mut unassigned = Vec::new();
    for &(topic, id, p) in &partitions {
        let keeper = previous
            .iter()
            .find(|(m, owned)| {
                owned.get(&id).is_some_and(|ps| ps.contains(&p))
                    && subscriptions.get(*m).is_some_and(|s| s.contains(topic))
            })
            .map(|(m, _)| m.as_str())
            .filter(|m| counts[m] < quota[m]);
        match keeper {
            Some(m) => {
                target.get_mut(m).expect("a member").entry(id).or_default().insert(p);
                *counts.get_mut(m).expect("a member") += 1;
            }
            None => unassigned.push((topic, id, p)),
        }
    }
    for (topic, id, p) in unassigned {
        // Those below their quota first, the least loaded first.
        let Some(m) = eligible(topic).into_iter().min_by_key(|m| (counts[m] >= quota[m], counts[m], *m)) else {
            continue;
        };
        target.get_mut(m).expect("a member").entry(id).or_default().insert(p);
        *counts.get_mut(m).expect("a member") += 1;
    }
    // Balance before stickiness (Kafka's UniformHeterogeneousAssignmentBuilder): while a
    // member holds two more than one subscribed to any of its partitions' topics, one moves.
    // Each move narrows the spread, so this ends; alike subscriptions are balanced already.
    let topic_of: BTreeMap<Uuid, &str> = partitions.iter().map(|(t, id, _)| (*id, *t)).collect();
    loop {
        let mut by_count: Vec<&str> = counts.keys().copied().collect();
        by_count.sort_by_key(|m| (counts[m], *m));
        let found = by_count.iter().rev().find_map(|&from| {
            by_count.iter().filter(|&&to| counts[to] + 1 < counts[from]).find_map(|&to| {
                let (id, p) = target[from]
                    .iter()
                    .flat_map(|(id, ps)| ps.iter().map(move |p| (*id, *p)))
                    .find(|(id, _)| subscriptions[to].contains(topic_of[id]))?;
                Some((from, to, id, p))
            })
        });
        let Some((from, to, id, p)) = found else { break };
        let owned = target.get_mut(from).expect("a member");
        owned.get_mut(&id).expect("its partition").remove(&p);
        owned.retain(|_, ps| !ps.is_empty());
        target.get_mut(to).expect("a member").entry(id).or_default().insert(p);
        *counts.get_mut(from).expect("a member") -= 1;
        *counts.get_mut(to).expect("a member") += 1;
    }
    target
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::intersect;
    use super::*;

    fn count(o: &Owned) -> usize {
        o.values().map(BTreeSet::len).sum()
    }

    /// Kafka's shape whatever the previous target: `total % members` members one more than
    /// the others (7 over 3 is 3 + 2 + 2, not 3 + 3 + 1 kept from a 4 + 3 split).
    #[test]
    fn uniform_balances_like_kafka_when_members_come_and_go() {
        let id = Uuid::from_bytes([1; 16]);
        let topics: Assignable = [("t".to_string(), (id, 7))].into();
        let subs =
            |ms: &[&str]| -> Subscriptions { ms.iter().map(|m| (m.to_string(), ["t".to_string()].into())).collect() };
        let sizes = |t: &Target| {
            let mut s: Vec<usize> = t.values().map(count).collect();
            s.sort();
            s
        };
        let mut target = BTreeMap::new();
        for (members, expected) in [
            (&["a"][..], vec![7]),
            (&["a", "b"], vec![3, 4]),
            (&["a", "b", "c"], vec![2, 2, 3]),
            (&["b", "c"], vec![3, 4]),
            (&["b", "c", "d", "e"], vec![1, 2, 2, 2]),
        ] {
            let next = uniform(&subs(members), &topics, &target);
            assert_eq!(sizes(&next), expected, "{members:?}");
            let all: BTreeSet<i32> = next.values().flat_map(|o| o[&id].iter().copied()).collect();
            assert_eq!(all.len(), 7, "every partition once: {next:?}");
            // A member keeps what it had up to its share.
            for (m, owned) in &next {
                let kept = target.get(m).map_or(0, |prev: &Owned| count(&intersect(prev, owned)));
                let had = target.get(m).map_or(0, count);
                assert_eq!(kept, had.min(count(owned)), "{m} in {members:?}");
            }
            target = next;
        }
    }

    /// Subscriptions that differ: balanced where they allow it (a: x only; b: x and y).
    #[test]
    fn uniform_balances_members_subscribed_differently() {
        let (x, y, z) = (Uuid::from_bytes([1; 16]), Uuid::from_bytes([2; 16]), Uuid::from_bytes([3; 16]));
        let topics: Assignable =
            [("x".to_string(), (x, 2)), ("y".to_string(), (y, 2)), ("z".to_string(), (z, 4))].into();
        let sub = |ts: &[&str]| -> BTreeSet<String> { ts.iter().map(|t| t.to_string()).collect() };
        let subs: Subscriptions = [("a".to_string(), sub(&["x"])), ("b".to_string(), sub(&["x", "y"]))].into();
        let t = uniform(&subs, &topics, &BTreeMap::new());
        assert_eq!((count(&t["a"]), count(&t["b"])), (2, 2), "{t:?}");
        assert_eq!(t["b"][&y], [0, 1].into());
        // c alone on z holds all of it: nobody else may take any.
        let subs: Subscriptions =
            [("a".to_string(), sub(&["x"])), ("b".to_string(), sub(&["x", "y"])), ("c".to_string(), sub(&["z"]))]
                .into();
        let t = uniform(&subs, &topics, &t);
        assert_eq!([count(&t["a"]), count(&t["b"]), count(&t["c"])], [2, 2, 4], "{t:?}");
    }
}
