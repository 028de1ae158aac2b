//! The hashes Kafka's clients and brokers agree on, so that everyone picks the same partition:
//! Java's `String.hashCode` (a group or transactional id to its coordinator's partition of
//! `__consumer_offsets` or `__transaction_state`; Kafka 0.7's key partitioner) and Kafka's
//! `Utils.murmur2` (a record key to its partition, as the Java producer's partitioner does).

/// Java's `String.hashCode`: `h = 31·h + c` over the UTF-16 code units, wrapping at 32 bits.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(i32::from(unit)))
}

/// Kafka's `Utils.murmur2`: 32-bit MurmurHash2 with Kafka's seed, over `data` as Java reads it
/// (signed bytes, little-endian words).
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let length = data.len() as u32;
    let mut h = SEED ^ length;
    let mut words = data.chunks_exact(4);
    for word in &mut words {
        let mut k = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    // Java sign-extends each byte before masking: `(data[i] & 0xff)`, so the tail is unsigned.
    let tail = words.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// Kafka's `Utils.toPositive`: the hash with its sign bit cleared (not its absolute value).
pub fn to_positive(hash: i32) -> i32 {
    hash & 0x7fff_ffff
}

/// The partition Kafka's Java producer (`BuiltInPartitioner.partitionForKey`) picks for a key.
pub fn partition_for_key(key: &[u8], partitions: i32) -> i32 {
    to_positive(murmur2(key)) % partitions.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_string_hash_matches_java() {
        // Values as printed by Java's "...".hashCode().
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
        assert_eq!(java_string_hash("Aa"), java_string_hash("BB"));
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        // UTF-16: 'é' is one unit (233), the emoji a surrogate pair (0xD83D, 0xDE00).
        assert_eq!(java_string_hash("é"), 233);
        assert_eq!(java_string_hash("\u{1F600}"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn murmur2_matches_kafkas_utils_test() {
        // The cases of Kafka's UtilsTest.testMurmur2.
        assert_eq!(murmur2(b"21"), -973_932_308);
        assert_eq!(murmur2(b"foobar"), -790_332_482);
        assert_eq!(murmur2(b"a-little-bit-long-string"), -985_981_536);
        assert_eq!(murmur2(b"a-little-bit-longer-string"), -1_486_304_829);
        assert_eq!(murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58_897_971);
        assert_eq!(murmur2(b"abc"), 479_470_107);
    }

    #[test]
    fn to_positive_clears_the_sign_bit() {
        assert_eq!(to_positive(-1), i32::MAX);
        assert_eq!(to_positive(i32::MIN), 0);
        assert_eq!(partition_for_key(b"21", 6), (-973_932_308i32 & 0x7fff_ffff) % 6);
    }
}
