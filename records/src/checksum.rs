//! The CRC-32C (Castagnoli) of magic 2 batches, in one place so that reading, building and
//! the tools all use the same implementation.

/// CRC-32C of `data`, as a RecordBatch's `crc` field stores it.
///
/// The `crc32c` crate runs the SSE4.2 `crc32` instruction over three streams at once where the
/// CPU has it (tables elsewhere). Measured here against `crc-fast`'s VPCLMULQDQ folding, it
/// checksummed 1 MiB at 24.5 GB/s against 18.7 (16 KiB: 20.0 against 17.0), and it compiles in
/// a fraction of the time (0.6 s against 2.8 s with `crc-fast`'s `digest` dependencies).
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    #[test]
    fn check_value() {
        // The catalogue's check value for CRC-32/ISCSI.
        assert_eq!(super::crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(super::crc32c(b""), 0);
    }

    /// CRC-32C bit by bit, straight from its definition (reflected polynomial 0x82F63B78): an
    /// oracle that shares nothing with the crate's tables and instructions.
    fn bitwise(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0x82F6_3B78 } else { crc >> 1 };
            }
        }
        !crc
    }

    proptest! {
        /// Over lengths around every stream width of the hardware path and unaligned starts.
        #[test]
        fn matches_the_definition(data in proptest::collection::vec(any::<u8>(), 0..5000), skip in 0usize..64) {
            let data = data.get(skip.min(data.len())..).unwrap_or_default();
            prop_assert_eq!(super::crc32c(data), bitwise(data));
        }
    }
}
