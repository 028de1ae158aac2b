//! Kafka's `CooperativeStickyAssignor`, in its own words: balanced (the counts of members
//! that could take each other's partitions differ by at most one, as far as subscriptions
//! allow), sticky (a member keeps what it owns unless balance needs it elsewhere), and
//! cooperative (KIP-429: a partition that some member still owns is not given to another in
//! this rebalance; its owner revokes it and rejoins, and the next rebalance hands it over).
//!
//! Ownership comes from each member's subscription (`owned_partitions`), checked by
//! generation as Kafka does: of two claims the newer generation wins, and two claims of the
//! same generation both lose the partition.

use std::collections::{BTreeMap, BTreeSet};

use super::{generation_of, sorted, subscribed_partitions, Member};
use crate::consumer::record::TopicPartition;

pub(super) fn assign(partitions: &BTreeMap<String, i32>, members: &[Member]) -> BTreeMap<String, Vec<TopicPartition>> {
    let all = subscribed_partitions(partitions, members);
    let order = sorted(members);
    let subscribed = |member: &Member, tp: &TopicPartition| member.subscription.topics.iter().any(|t| **t == *tp.topic);

    // Valid ownership: highest generation wins; equal generations void the claim.
    let mut owner: BTreeMap<TopicPartition, (usize, i32)> = BTreeMap::new();
    let mut contested: BTreeSet<TopicPartition> = BTreeSet::new();
    for (i, member) in order.iter().enumerate() {
        let generation = generation_of(&member.subscription);
        for tp in &member.subscription.owned {
            if !all.contains(tp) || !subscribed(member, tp) {
                continue;
            }
            match owner.get(tp) {
                None if !contested.contains(tp) => {
                    owner.insert(tp.clone(), (i, generation));
                }
                None => {}
                Some(&(_, other)) if other < generation => {
                    owner.insert(tp.clone(), (i, generation));
                }
                Some(&(_, other)) if other == generation => {
                    tracing::warn!(partition = %tp, generation, "two members claim the same partition in one generation");
                    owner.remove(tp);
                    contested.insert(tp.clone());
                }
                Some(_) => {}
            }
        }
    }

    let mut held: Vec<BTreeSet<TopicPartition>> = vec![BTreeSet::new(); order.len()];
    for (tp, (i, _)) in &owner {
        held[*i].insert(tp.clone());
    }

    // Unowned partitions, hardest to place first (fewest members subscribed), each to the
    // eligible member holding fewest.
    let mut unowned: Vec<(usize, TopicPartition)> = all
        .iter()
        .filter(|tp| !owner.contains_key(*tp))
        .map(|tp| (order.iter().filter(|m| subscribed(m, tp)).count(), tp.clone()))
        .filter(|(eligible, _)| *eligible > 0)
        .collect();
    unowned.sort();
    for (_, tp) in unowned {
        let target = (0..order.len()).filter(|&i| subscribed(order[i], &tp)).min_by_key(|&i| (held[i].len(), i));
        if let Some(i) = target {
            held[i].insert(tp);
        }
    }

    // Balance: move a partition from a member holding more than one above a member that
    // could take it, until none can move. Each move lowers the sum of squares of the counts,
    // so this ends; moves prefer the last partitions of the fullest member.
    let mut moves = 0usize;
    let limit = all.len().saturating_mul(order.len()).max(1);
    while moves < limit {
        let mut best: Option<(usize, usize, TopicPartition)> = None;
        let mut by_count: Vec<usize> = (0..order.len()).collect();
        by_count.sort_by_key(|&i| (std::cmp::Reverse(held[i].len()), i));
        'search: for &from in &by_count {
            for tp in held[from].iter().rev() {
                let target = (0..order.len())
                    .filter(|&to| to != from && subscribed(order[to], tp) && held[to].len() + 1 < held[from].len())
                    .min_by_key(|&to| (held[to].len(), to));
                if let Some(to) = target {
                    best = Some((from, to, tp.clone()));
                    break 'search;
                }
            }
        }
        let Some((from, to, tp)) = best else { break };
        held[from].remove(&tp);
        held[to].insert(tp);
        moves += 1;
    }

    // Cooperative: a partition still claimed by another member waits for the next rebalance.
    let mut assignment = BTreeMap::new();
    for (i, member) in order.iter().enumerate() {
        let mut list = Vec::new();
        for tp in &held[i] {
            let claimed_elsewhere =
                order.iter().enumerate().any(|(j, other)| j != i && other.subscription.owned.contains(tp));
            if claimed_elsewhere && !member.subscription.owned.contains(tp) {
                continue;
            }
            list.push(tp.clone());
        }
        assignment.insert(member.id.clone(), list);
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::super::tests::{counts, member};
    use super::*;

    fn six() -> BTreeMap<String, i32> {
        BTreeMap::from([("t".to_string(), 6)])
    }

    #[test]
    fn a_new_member_waits_for_partitions_until_their_owner_released_them() {
        let all: Vec<(&str, i32)> = (0..6).map(|p| ("t", p)).collect();
        // a owns all six; b joins: a keeps three, b gets nothing yet (a must revoke first).
        let first = assign(&six(), &[member("a", &["t"], &all, 1), member("b", &["t"], &[], -1)]);
        assert_eq!(first["a"].len(), 3);
        assert!(first["b"].is_empty());
        // a rejoins owning its three: b gets the other three.
        let kept: Vec<(&str, i32)> = first["a"].iter().map(|tp| ("t", tp.partition)).collect();
        let second = assign(&six(), &[member("a", &["t"], &kept, 2), member("b", &["t"], &[], 2)]);
        assert_eq!(second["a"], first["a"], "sticky: a keeps what it kept");
        assert_eq!(counts(&second), [3, 3]);
    }

    #[test]
    fn the_newer_generation_wins_a_claim_and_equal_claims_both_lose() {
        let newer = assign(&six(), &[member("a", &["t"], &[("t", 0)], 3), member("b", &["t"], &[("t", 0)], 2)]);
        assert!(newer["a"].contains(&TopicPartition::new("t", 0)));
        assert!(!newer["b"].contains(&TopicPartition::new("t", 0)));
        let tie = assign(&six(), &[member("a", &["t"], &[("t", 0)], 2), member("b", &["t"], &[("t", 0)], 2)]);
        // Neither claim counts: it goes to one of them, as an unowned partition would.
        assert_eq!(tie.values().filter(|l| l.contains(&TopicPartition::new("t", 0))).count(), 1);
    }

    #[test]
    fn unequal_subscriptions_are_balanced_where_they_can_be() {
        let partitions = BTreeMap::from([("x".to_string(), 4), ("y".to_string(), 4)]);
        let a = assign(
            &partitions,
            &[member("a", &["x"], &[], -1), member("b", &["x", "y"], &[], -1), member("c", &["y"], &[], -1)],
        );
        assert_eq!(a.values().map(Vec::len).sum::<usize>(), 8);
        let (min, max) = (a.values().map(Vec::len).min().unwrap(), a.values().map(Vec::len).max().unwrap());
        assert!(max - min <= 1, "{a:?}");
        assert!(a["a"].iter().all(|tp| &*tp.topic == "x") && a["c"].iter().all(|tp| &*tp.topic == "y"));
    }

    #[test]
    fn every_partition_is_assigned_once_and_owners_keep_theirs_when_balanced() {
        let partitions = BTreeMap::from([("t".to_string(), 7)]);
        let a = assign(
            &partitions,
            &[
                member("m1", &["t"], &[("t", 6), ("t", 5)], 4),
                member("m2", &["t"], &[("t", 0)], 4),
                member("m3", &["t"], &[], 4),
            ],
        );
        let mut seen: Vec<i32> = a.values().flatten().map(|tp| tp.partition).collect();
        seen.sort();
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
        assert!(a["m1"].contains(&TopicPartition::new("t", 6)) && a["m1"].contains(&TopicPartition::new("t", 5)));
        assert!(a["m2"].contains(&TopicPartition::new("t", 0)));
    }
}
