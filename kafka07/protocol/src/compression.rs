//! gzip and snappy for 0.7 compressed wrappers: the codec bits of a message's attributes and the
//! bounds on reading them. The codecs themselves are `kwire-records`' (one gzip, one
//! xerial-framed snappy, with bounded decompression), which is what 0.7's Java producer wrote:
//! `GZIPOutputStream` and snappy-java's `SnappyOutputStream`.

pub use crate::codec::Codec;

use kwire_records::compression as codecs;
use kwire_records::RecordsErrorKind;

use crate::error::ProtocolError;

/// Bounds on reading compressed messages; they keep hostile input from exhausting memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// How many compressed wrappers may be nested (1 = a wrapper of plain messages, all that a
    /// 0.7 producer ever writes).
    pub max_depth: usize,
    /// Total decompressed bytes allowed for one outer wrapper, all nesting levels together.
    pub max_decompressed_bytes: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits { max_depth: 4, max_decompressed_bytes: 64 * 1024 * 1024 }
    }
}

/// Compresses `data` with `codec` (`Codec::None` copies it).
pub fn compress(codec: Codec, data: &[u8]) -> Vec<u8> {
    // gzip and snappy into a Vec cannot fail (only lz4 and zstd report errors).
    codecs::compress(codec.as_compression(), MAGIC, data).unwrap_or_default()
}

/// Decompresses a wrapper's payload. `offset` (the wrapper's log offset) is used in errors;
/// more than `limit` output bytes is an error, detected without allocating beyond `limit`.
pub fn decompress(codec: Codec, data: &[u8], limit: usize, offset: u64) -> Result<Vec<u8>, ProtocolError> {
    codecs::decompress(codec.as_compression(), MAGIC, data, limit).map_err(|kind| match kind {
        RecordsErrorKind::DecompressedTooLarge { .. } => ProtocolError::DecompressedTooLarge { offset, limit },
        RecordsErrorKind::Decompression { reason, .. } => {
            ProtocolError::Decompression { offset, codec, detail: reason }
        }
        other => ProtocolError::Decompression { offset, codec, detail: other.to_string() },
    })
}

/// The record-batch magic whose codec rules match 0.7's wrappers (gzip and snappy only).
const MAGIC: i8 = 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xerial_header_is_byte_exact() {
        let framed = compress(Codec::Snappy, b"");
        assert_eq!(hex(&framed), "82534e415050590000000001".to_owned() + "00000001");
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn snappy_round_trip_multi_block() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let framed = compress(Codec::Snappy, &data);
        // 100,000 bytes → 4 blocks of at most 32 KiB.
        let mut pos = 16;
        let mut blocks = 0;
        while pos < framed.len() {
            let len = i32::from_be_bytes(framed[pos..pos + 4].try_into().unwrap()) as usize;
            let block = &framed[pos + 4..pos + 4 + len];
            assert!(snap::raw::decompress_len(block).unwrap() <= 32 * 1024);
            pos += 4 + len;
            blocks += 1;
        }
        assert_eq!(blocks, 4);
        assert_eq!(decompress(Codec::Snappy, &framed, usize::MAX, 0).unwrap(), data);
    }

    #[test]
    fn snappy_bare_block_is_accepted() {
        let raw = snap::raw::Encoder::new().compress_vec(b"hello hello hello").unwrap();
        assert_eq!(decompress(Codec::Snappy, &raw, 1000, 0).unwrap(), b"hello hello hello");
    }

    #[test]
    fn limits_are_enforced_before_allocation() {
        let data = vec![0u8; 1 << 20];
        for codec in [Codec::Gzip, Codec::Snappy] {
            let c = compress(codec, &data);
            assert_eq!(decompress(codec, &c, 1 << 20, 7).unwrap().len(), 1 << 20);
            assert_eq!(
                decompress(codec, &c, (1 << 20) - 1, 7),
                Err(ProtocolError::DecompressedTooLarge { offset: 7, limit: (1 << 20) - 1 })
            );
        }
        // A raw block that claims 2^31 bytes of output is refused from its header alone.
        let claim = [0x80, 0x80, 0x80, 0x80, 0x08, 0x00];
        let refused = decompress(Codec::Snappy, &claim, 1 << 20, 0);
        assert!(
            matches!(&refused, Err(ProtocolError::Decompression { detail, .. }) if detail.contains("cannot hold")),
            "{refused:?}"
        );
        // Within the limit but impossible for its size: a 65-byte block claiming 60 MiB.
        let mut lie = vec![0x80, 0x80, 0x80, 0x1e];
        lie.resize(65, 0);
        assert!(matches!(decompress(Codec::Snappy, &lie, 64 << 20, 0), Err(ProtocolError::Decompression { .. })));
    }

    #[test]
    fn gzip_accepts_concatenated_members() {
        let mut both = compress(Codec::Gzip, b"abc");
        both.extend(compress(Codec::Gzip, b"def"));
        assert_eq!(decompress(Codec::Gzip, &both, 100, 0).unwrap(), b"abcdef");
    }

    #[test]
    fn corrupt_input_is_an_error() {
        assert!(matches!(
            decompress(Codec::Gzip, b"\x1f\x8bxx", 100, 3),
            Err(ProtocolError::Decompression { offset: 3, .. })
        ));
        let mut framed = compress(Codec::Snappy, b"hello");
        framed[19] = 0x7f; // block length now points past the end
        assert!(matches!(decompress(Codec::Snappy, &framed, 100, 0), Err(ProtocolError::Decompression { .. })));
    }
}
