//! The compression codecs Kafka uses for record data, with bounded decompression.
//!
//! Decompression never produces more than a caller-chosen number of bytes, so a small batch
//! cannot expand into an unbounded allocation (a "decompression bomb").
//!
//! Each codec is a cargo feature (`gzip`, `snappy`, `lz4`, `zstd`; all on by default). Without
//! its feature a codec is still recognised in batch attributes, and using it is an error
//! ([`BuildError::CodecNotBuilt`], [`RecordsErrorKind::CodecNotBuilt`]).

#[cfg(any(feature = "gzip", feature = "lz4", feature = "zstd"))]
mod bounded;
#[cfg(feature = "gzip")]
mod gzip;
#[cfg(feature = "lz4")]
mod lz4;
#[cfg(feature = "snappy")]
mod snappy;
mod xxhash32;
#[cfg(feature = "zstd")]
mod zstd;

pub(crate) mod codec;
pub use codec::Compression;

use std::fmt;

use super::error::{BuildError, RecordsErrorKind};

pub use xxhash32::xxh32;

/// Default ceiling on the decompressed size of one batch: 64 MiB, well above Kafka's default
/// `message.max.bytes` (1 MiB) and `max.message.bytes` settings but far below what a bomb
/// would reach.
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 64 * 1024 * 1024;

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Compresses `data` as Kafka's clients do for a batch of the given magic.
///
/// Magic 0 with lz4 gets the broken frame header checksum that Kafka before 0.10 wrote and
/// still expects for magic 0.
pub fn compress(codec: Compression, magic: i8, data: &[u8]) -> Result<Vec<u8>, BuildError> {
    let _ = magic; // only lz4 looks at it
    match codec {
        Compression::None => Ok(data.to_vec()),
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip::compress(data),
        #[cfg(feature = "snappy")]
        Compression::Snappy => Ok(snappy::compress_xerial(data)),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::compress(data, magic == 0),
        #[cfg(feature = "zstd")]
        Compression::Zstd => zstd::compress(data),
        #[allow(unreachable_patterns)]
        _ => Err(BuildError::CodecNotBuilt(codec)),
    }
}

/// Decompresses `data`, refusing to produce more than `limit` bytes.
///
/// For lz4 with magic 0 a frame header checksum computed the broken pre-0.10 way is accepted.
pub fn decompress(codec: Compression, magic: i8, data: &[u8], limit: usize) -> Result<Vec<u8>, RecordsErrorKind> {
    let _ = magic; // only lz4 looks at it
    match codec {
        Compression::None => {
            if data.len() > limit {
                return Err(RecordsErrorKind::DecompressedTooLarge { codec, limit });
            }
            Ok(data.to_vec())
        }
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip::decompress(data, limit),
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy::decompress(data, limit),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::decompress(data, limit, magic == 0),
        #[cfg(feature = "zstd")]
        Compression::Zstd => zstd::decompress(data, limit),
        #[allow(unreachable_patterns)]
        _ => Err(RecordsErrorKind::CodecNotBuilt(codec)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every codec either round-trips or, without its feature, refuses both ways by name.
    #[test]
    fn each_codec_works_or_says_its_feature_is_off() {
        let data = b"kwire kwire kwire".repeat(10);
        for codec in Compression::ALL {
            match compress(codec, 2, &data) {
                Ok(packed) => {
                    assert!(codec.is_built(), "{codec}");
                    assert_eq!(decompress(codec, 2, &packed, data.len()).unwrap(), data, "{codec}");
                }
                Err(e) => {
                    assert!(!codec.is_built(), "{codec}: {e}");
                    assert_eq!(e, BuildError::CodecNotBuilt(codec));
                    assert_eq!(decompress(codec, 2, &data, usize::MAX), Err(RecordsErrorKind::CodecNotBuilt(codec)));
                }
            }
        }
    }
}
