//! Choosing a record's partition as Kafka's Java producer does (`BuiltInPartitioner`): a
//! keyed record goes to `murmur2(key)` modulo the partition count, over all partitions, so the
//! same key lands where Java's producer puts it; a record without a key (or with
//! `partitioner.ignore.keys`) goes to the topic's sticky partition (KIP-794), which changes
//! once `batch.size` bytes went to it, to a partition with a leader picked at random, weighted
//! towards shorter queues (`partitioner.adaptive.partitioning.enable`). A user's
//! [`Partitioner`] is asked first.

use std::sync::Mutex;

/// A partitioner of the user's. `None` leaves the record to Kafka's built-in partitioner.
pub trait Partitioner: Send + Sync + 'static {
    /// The partition of a record to `topic`, which has `partitions` partitions.
    fn partition(&self, topic: &str, key: Option<&[u8]>, value: Option<&[u8]>, partitions: i32) -> Option<i32>;
}

/// Kafka's partition for a key: `toPositive(murmur2(key)) % partitions`.
pub fn partition_for_key(key: &[u8], partitions: i32) -> i32 {
    kwire_runtime::hash::partition_for_key(key, partitions)
}

/// What the sticky choice looks at: each partition with a leader, and its queue of batches.
pub(crate) struct Candidate {
    pub partition: i32,
    pub queued: usize,
}

/// One topic's sticky partition and the bytes sent to it since it was chosen.
#[derive(Default)]
pub(crate) struct Sticky {
    state: Mutex<(Option<i32>, usize)>,
}

impl Sticky {
    /// The current sticky partition, choosing one if there is none.
    pub fn current(&self, partitions: i32, candidates: impl FnOnce() -> Vec<Candidate>, adaptive: bool) -> i32 {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match state.0 {
            Some(p) if p < partitions => p,
            _ => {
                let p = choose(partitions, &candidates(), adaptive);
                *state = (Some(p), 0);
                p
            }
        }
    }

    /// Counts `bytes` sent to `partition`; past `batch_size` (when its batch just filled, or
    /// past twice that in any case) the next record picks a new partition.
    pub fn appended(&self, partition: i32, bytes: usize, batch_size: usize, batch_filled: bool) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.0 != Some(partition) {
            return;
        }
        state.1 += bytes;
        if (state.1 >= batch_size && batch_filled) || state.1 >= batch_size.saturating_mul(2) {
            *state = (None, 0);
        }
    }
}

/// A partition among those with a leader (all of them when none has one), uniformly, or
/// weighted by `max queue + 1 - queue` when queues differ, as Kafka's adaptive partitioning
/// builds its cumulative frequency table.
fn choose(partitions: i32, candidates: &[Candidate], adaptive: bool) -> i32 {
    if candidates.is_empty() {
        return fastrand::i32(0..partitions.max(1));
    }
    let max = candidates.iter().map(|c| c.queued).max().unwrap_or(0);
    let equal = candidates.iter().all(|c| c.queued == max);
    if !adaptive || equal {
        return candidates[fastrand::usize(0..candidates.len())].partition;
    }
    let weights: Vec<usize> = candidates.iter().map(|c| max + 1 - c.queued).collect();
    let mut pick = fastrand::usize(0..weights.iter().sum::<usize>());
    for (candidate, weight) in candidates.iter().zip(&weights) {
        if pick < *weight {
            return candidate.partition;
        }
        pick -= weight;
    }
    candidates[candidates.len() - 1].partition
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_go_where_kafkas_murmur2_sends_them() {
        // Kafka's BuiltInPartitioner: toPositive(murmur2("key-1")) % 6, checked against Java
        // with 10,000 keys in tests/producer_kafka.rs.
        let p = partition_for_key(b"key-1", 6);
        assert_eq!(p, kwire_runtime::hash::to_positive(kwire_runtime::hash::murmur2(b"key-1")) % 6);
    }

    #[test]
    fn the_sticky_partition_changes_after_a_batch_worth_of_bytes() {
        let sticky = Sticky::default();
        let all = || (0..4).map(|partition| Candidate { partition, queued: 0 }).collect();
        let first = sticky.current(4, all, true);
        sticky.appended(first, 100, 1000, false);
        assert_eq!(sticky.current(4, all, true), first, "100 bytes of 1000: stays");
        sticky.appended(first, 1000, 1000, true);
        let _next = sticky.current(4, all, true);
        assert_eq!(sticky.state.lock().unwrap().1, 0, "a new partition was picked, its count reset");
    }

    #[test]
    fn adaptive_choice_favours_short_queues() {
        let candidates = [Candidate { partition: 0, queued: 10 }, Candidate { partition: 1, queued: 0 }];
        let picks: usize = (0..1000).map(|_| choose(2, &candidates, true) as usize).sum();
        assert!(picks > 850, "partition 1 (empty queue) weighs 11 to 1: picked {picks} of 1000");
        let without_leaders = choose(3, &[], true);
        assert!((0..3).contains(&without_leaders));
    }
}
