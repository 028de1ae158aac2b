//! The 0.7 Scala consumer's range assignment (spec §4.3): partitions `"<brokerid>-<p>"` and
//! consumer thread ids both sorted **as strings**; thread `i` of `C` gets the contiguous range
//! starting at `i·(P div C) + min(i, P mod C)` of length `P div C + (i < P mod C)`.

use std::collections::BTreeMap;

use kwire07_zk::PartitionKey;

/// One partition of a topic on one broker, as named in ZooKeeper: `"<brokerid>-<partition>"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BrokerPartition {
    pub broker_id: i32,
    pub partition: i32,
}

impl BrokerPartition {
    /// How 0.7's owner and offset nodes name it (`kwire07-zk`'s form).
    pub fn zk_key(&self) -> PartitionKey {
        PartitionKey::BrokerPartition { broker_id: self.broker_id, partition: self.partition }
    }

    /// The ZooKeeper node name, e.g. `"2-0"`.
    pub fn name(&self) -> String {
        self.zk_key().to_string()
    }

    /// Parses `"<brokerid>-<partition>"`.
    pub fn parse(name: &str) -> Option<BrokerPartition> {
        match PartitionKey::parse(name)? {
            PartitionKey::BrokerPartition { broker_id, partition } => Some(BrokerPartition { broker_id, partition }),
            PartitionKey::Partition(_) => None,
        }
    }
}

/// Every partition of a topic given each broker's registered partition count, in 0.7's order:
/// sorted by the string `"<brokerid>-<p>"`, so `"10-0" < "2-0"` and `"1-10" < "1-2"`.
pub fn sorted_partitions(counts: &BTreeMap<i32, i32>) -> Vec<BrokerPartition> {
    let mut all: Vec<BrokerPartition> = counts
        .iter()
        .flat_map(|(&broker_id, &n)| (0..n.max(0)).map(move |partition| BrokerPartition { broker_id, partition }))
        .collect();
    all.sort_by_cached_key(|bp| bp.name());
    all
}

/// The slice of `partitions` (already in 0.7 order) that `thread` owns among `threads`
/// (sorted here as strings). Empty when the thread is not in the list or gets nothing.
pub fn range_for<'a>(partitions: &'a [BrokerPartition], threads: &[String], thread: &str) -> &'a [BrokerPartition] {
    let mut sorted: Vec<&str> = threads.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let Some(i) = sorted.iter().position(|t| *t == thread) else { return &[] };
    let (p, c) = (partitions.len(), sorted.len());
    let (per, extra) = (p / c, p % c);
    let start = i * per + i.min(extra);
    let count = per + usize::from(i < extra);
    &partitions[start..start + count]
}

/// The whole assignment: thread id → its partitions, for every thread.
pub fn range_assign(partitions: &[BrokerPartition], threads: &[String]) -> BTreeMap<String, Vec<BrokerPartition>> {
    threads.iter().map(|t| (t.clone(), range_for(partitions, threads, t).to_vec())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[BrokerPartition]) -> Vec<String> {
        v.iter().map(BrokerPartition::name).collect()
    }

    #[test]
    fn partitions_sort_as_strings() {
        let counts = BTreeMap::from([(1, 12), (2, 1), (10, 1)]);
        let sorted = names(&sorted_partitions(&counts));
        assert_eq!(
            sorted,
            ["1-0", "1-1", "1-10", "1-11", "1-2", "1-3", "1-4", "1-5", "1-6", "1-7", "1-8", "1-9", "10-0", "2-0"]
        );
    }

    #[test]
    fn spec_example_extras_go_first() {
        // 5 partitions, 2 threads: per = 2, extra = 1 → [3, 2].
        let counts = BTreeMap::from([(0, 5)]);
        let parts = sorted_partitions(&counts);
        let threads = vec!["g_b-1".to_string(), "g_a-0".to_string()];
        let a = range_assign(&parts, &threads);
        assert_eq!(names(&a["g_a-0"]), ["0-0", "0-1", "0-2"]);
        assert_eq!(names(&a["g_b-1"]), ["0-3", "0-4"]);
    }

    #[test]
    fn threads_sort_as_strings_and_surplus_threads_get_nothing() {
        let counts = BTreeMap::from([(0, 1), (1, 1)]);
        let parts = sorted_partitions(&counts);
        // "c-10" < "c-2" as strings.
        let threads: Vec<String> = ["c-2", "c-10", "c-3"].iter().map(|s| s.to_string()).collect();
        let a = range_assign(&parts, &threads);
        assert_eq!(names(&a["c-10"]), ["0-0"]);
        assert_eq!(names(&a["c-2"]), ["1-0"]);
        assert!(a["c-3"].is_empty());
        assert!(range_for(&parts, &threads, "absent").is_empty());
    }

    /// 0.7's algorithm written the way the Scala code does it, as a reference.
    fn scala_reference(parts: &[String], consumers: &[String]) -> BTreeMap<String, Vec<String>> {
        let mut parts = parts.to_vec();
        parts.sort();
        let mut consumers = consumers.to_vec();
        consumers.sort();
        let n_per = parts.len() / consumers.len();
        let n_extra = parts.len() % consumers.len();
        let mut out = BTreeMap::new();
        for (my_index, c) in consumers.iter().enumerate() {
            let start = n_per * my_index + my_index.min(n_extra);
            let n = n_per + if my_index + 1 > n_extra { 0 } else { 1 };
            out.insert(c.clone(), parts[start..start + n].to_vec());
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn matches_reference_and_partitions_exactly(
            counts in proptest::collection::btree_map(0i32..30, 1i32..15, 1..5),
            consumers in proptest::collection::btree_set("[a-z]{1,3}_h-[0-9]{1,2}", 1..8),
        ) {
            let threads: Vec<String> = consumers.into_iter().collect();
            let parts = sorted_partitions(&counts);
            let ours = range_assign(&parts, &threads);
            let reference = scala_reference(&names(&parts), &threads);
            let mut seen = Vec::new();
            for (t, v) in &ours {
                proptest::prop_assert_eq!(&names(v), &reference[t]);
                seen.extend(names(v));
            }
            seen.sort();
            let mut all = names(&parts);
            all.sort();
            proptest::prop_assert_eq!(seen, all);
        }
    }
}
