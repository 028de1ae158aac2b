//! KIP-932's `simple` assignor, the share groups' (after Kafka's `SimpleAssignor`): every subscribed
//! partition goes to at least one member. With fewer members than partitions each partition has
//! one member and the members' counts differ by at most one; with more members, each partition
//! is shared by ceil(members / partitions) of them. Balance comes first, then keeping what a
//! member had.

use std::collections::{BTreeMap, BTreeSet};

use kwire::Uuid;

use super::{Assignable, Owned, Subscriptions, Target};

/// The target assignment of members subscribed to `subscriptions` (member → topic names).
pub(crate) fn simple(subscriptions: &Subscriptions, topics: &Assignable, previous: &Target) -> Target {
    let members: Vec<&String> = subscriptions.keys().collect();
    // Every partition some member subscribes to, and who may have it.
    let mut eligible: BTreeMap<(Uuid, i32), Vec<usize>> = BTreeMap::new();
    for (i, m) in members.iter().enumerate() {
        for name in &subscriptions[*m] {
            if let Some((id, count)) = topics.get(name) {
                for p in 0..*count {
                    eligible.entry((*id, p)).or_default().push(i);
                }
            }
        }
    }
    let mut holders: BTreeMap<(Uuid, i32), BTreeSet<usize>> = eligible.keys().map(|k| (*k, BTreeSet::new())).collect();
    let mut held: Vec<BTreeSet<(Uuid, i32)>> = vec![BTreeSet::new(); members.len()];
    if !eligible.is_empty() && !members.is_empty() {
        let (m, p) = (members.len(), eligible.len());
        let sharing = m.div_ceil(p);
        // Kafka's desired count per member: the slots (sharing × partitions) spread evenly.
        let precise = (sharing * p) as f64 / m as f64;
        let quota: Vec<usize> =
            (0..m).map(|i| ((precise * (i + 1) as f64).ceil() - (precise * i as f64).ceil()) as usize).collect();
        // What each member had and may keep.
        for (i, member) in members.iter().enumerate() {
            for (topic, ps) in previous.get(*member).into_iter().flatten() {
                for p in ps {
                    let key = (*topic, *p);
                    let ok = eligible.get(&key).is_some_and(|e| e.contains(&i));
                    if ok && held[i].len() < quota[i] && holders[&key].len() < sharing {
                        holders.get_mut(&key).expect("eligible").insert(i);
                        held[i].insert(key);
                    }
                }
            }
        }
        // Members under their count take the partitions with the fewest members.
        for i in 0..m {
            while held[i].len() < quota[i] {
                let next = eligible
                    .iter()
                    .filter(|(k, e)| e.contains(&i) && !held[i].contains(k) && holders[k].len() < sharing)
                    .min_by_key(|(k, _)| (holders[k].len(), **k))
                    .map(|(k, _)| *k);
                let Some(key) = next else { break };
                holders.get_mut(&key).expect("eligible").insert(i);
                held[i].insert(key);
            }
        }
        // Subscriptions that differ can leave a partition without a member: the eligible member
        // with the fewest takes it.
        for (key, e) in &eligible {
            if holders[key].is_empty() {
                let i = *e.iter().min_by_key(|i| (held[**i].len(), **i)).expect("someone subscribes");
                holders.get_mut(key).expect("eligible").insert(i);
                held[i].insert(*key);
            }
        }
    }
    members
        .iter()
        .zip(held)
        .map(|(m, keys)| {
            let mut owned = Owned::new();
            for (topic, p) in keys {
                owned.entry(topic).or_default().insert(p);
            }
            ((*m).clone(), owned)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(t: &Target) -> Vec<usize> {
        let mut s: Vec<usize> = t.values().map(|o| o.values().map(BTreeSet::len).sum()).collect();
        s.sort();
        s
    }

    #[test]
    fn partitions_split_then_shared() {
        let id = Uuid::from_bytes([1; 16]);
        let topics: Assignable = [("t".to_string(), (id, 3))].into();
        let subs =
            |ms: &[&str]| -> Subscriptions { ms.iter().map(|m| (m.to_string(), ["t".to_string()].into())).collect() };
        let one = simple(&subs(&["a"]), &topics, &BTreeMap::new());
        assert_eq!(sizes(&one), vec![3]);
        let two = simple(&subs(&["a", "b"]), &topics, &one);
        assert_eq!(sizes(&two), vec![1, 2]);
        assert!(two["a"][&id].is_subset(&one["a"][&id]), "a keeps what it can");
        // Four members over three partitions: each partition shared by two.
        let four = simple(&subs(&["a", "b", "c", "d"]), &topics, &two);
        assert_eq!(sizes(&four), vec![1, 1, 2, 2]);
        let mut per_partition = BTreeMap::<i32, usize>::new();
        for p in four.values().flat_map(|o| o[&id].iter()) {
            *per_partition.entry(*p).or_default() += 1;
        }
        assert_eq!(per_partition.values().copied().collect::<Vec<_>>(), vec![2, 2, 2]);
    }
}
