//! Choosing a partition the way the 0.7 Scala producer does (spec §4.4): the candidate
//! (broker, partition) pairs sorted by broker id then partition; with a key,
//! `abs(key.hashCode) mod size` using Java's `String.hashCode`, otherwise a uniform random pick.

/// Java's `String.hashCode`, what 0.7's `DefaultPartitioner` hashes for a string key (the
/// runtime's, which today's Kafka hashes group and transactional ids with).
pub use kwire_runtime::hash::java_string_hash;

/// `abs(hash) mod n` as 0.7's `DefaultPartitioner`. For the one hash whose absolute value
/// Java cannot represent (`i32::MIN`), 0.7 yields a negative index and the send fails; here
/// the true absolute value is used instead. `n` must be > 0.
pub fn hash_index(hash: i32, n: usize) -> usize {
    (hash.unsigned_abs() as u64 % n.max(1) as u64) as usize
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Partitioner {
    /// Key hash when the record has a key, random otherwise (0.7's default behaviour).
    #[default]
    KeyHash,
    /// Always random, keys are ignored.
    Random,
}

impl Partitioner {
    /// Index into the sorted candidate list of length `n` (> 0).
    pub fn choose(self, key: Option<&str>, n: usize) -> usize {
        match (self, key) {
            (Partitioner::KeyHash, Some(k)) => hash_index(java_string_hash(k), n),
            _ => fastrand::usize(..n.max(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_known_values() {
        // Values as printed by Java's "...".hashCode().
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
        assert_eq!(java_string_hash("Aa"), java_string_hash("BB"));
        assert_eq!(java_string_hash("Aa"), 2112);
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        // UTF-16: 'é' is one unit (233), the emoji is a surrogate pair (0xD83D, 0xDE00).
        assert_eq!(java_string_hash("é"), 233);
        assert_eq!(java_string_hash("\u{1F600}"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn hash_index_is_abs_mod() {
        assert_eq!(hash_index(99_162_322, 4), 2);
        assert_eq!(hash_index(-7, 4), 3);
        assert_eq!(hash_index(7, 4), 3);
        assert_eq!(hash_index(i32::MIN, 3), (2_147_483_648u64 % 3) as usize);
        assert_eq!(hash_index(5, 1), 0);
    }

    #[test]
    fn same_key_same_partition_and_random_covers_all() {
        let n = 7;
        let a = Partitioner::KeyHash.choose(Some("user-42"), n);
        for _ in 0..100 {
            assert_eq!(Partitioner::KeyHash.choose(Some("user-42"), n), a);
        }
        let mut seen = [false; 7];
        for _ in 0..2000 {
            seen[Partitioner::Random.choose(Some("user-42"), n)] = true;
            seen[Partitioner::KeyHash.choose(None, n)] = true;
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
    }

    proptest::proptest! {
        #[test]
        fn index_always_in_range(key in ".*", n in 1usize..1000) {
            proptest::prop_assert!(Partitioner::KeyHash.choose(Some(&key), n) < n);
        }
    }
}
