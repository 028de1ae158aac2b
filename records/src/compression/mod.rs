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
pub use codec::{Compression, Levels};

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
    compress_at(codec, magic, data, None)
}

/// [`compress`] at a level of Kafka's (`compression.<codec>.level`; `None`: the codec's
/// default, see [`Compression::levels`]). gzip takes every level Kafka does; zstd every level
/// with the `libzstd` feature, while the pure-Rust encoder writes its one level (about zstd's
/// level 1) whatever the level; lz4 is written with the fast compressor, which is what
/// Kafka's default level 9 is, and other lz4 levels (Kafka's LZ4 HC) are refused. A level
/// Kafka does not accept is refused.
pub fn compress_at(codec: Compression, magic: i8, data: &[u8], level: Option<i32>) -> Result<Vec<u8>, BuildError> {
    let _ = magic; // only lz4 looks at it
    if let (Some(level), Some(levels)) = (level, codec.levels()) {
        if !levels.accepts(level) {
            return Err(BuildError::Compression {
                codec,
                reason: format!("level {level} is not one Kafka accepts ({} to {})", levels.min, levels.max),
            });
        }
        if codec == Compression::Lz4 && level != levels.default {
            return Err(BuildError::Compression {
                codec,
                reason: format!(
                    "level {level} is LZ4 HC, which this build does not write (only level {})",
                    levels.default
                ),
            });
        }
    }
    match codec {
        Compression::None => Ok(data.to_vec()),
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip::compress(data, level.unwrap_or(-1)),
        #[cfg(feature = "snappy")]
        Compression::Snappy => Ok(snappy::compress_xerial(data)),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::compress(data, magic == 0),
        #[cfg(feature = "zstd")]
        Compression::Zstd => zstd::compress(data, level.unwrap_or(3)),
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

#[cfg(all(test, feature = "gzip", feature = "lz4", feature = "zstd"))]
mod level_tests {
    use super::*;

    #[test]
    fn levels_are_kafkas_and_each_codec_honours_or_refuses_them() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8 ^ (i / 1000) as u8).collect();
        let fast = compress_at(Compression::Gzip, 2, &data, Some(1)).unwrap();
        let best = compress_at(Compression::Gzip, 2, &data, Some(9)).unwrap();
        assert_ne!(fast, best, "gzip levels 1 and 9 write different streams");
        assert_eq!(
            compress_at(Compression::Gzip, 2, &data, Some(-1)).unwrap(),
            compress(Compression::Gzip, 2, &data).unwrap()
        );
        for stream in [&fast, &best] {
            assert_eq!(decompress(Compression::Gzip, 2, stream, data.len()).unwrap(), data);
        }
        let zstd = compress_at(Compression::Zstd, 2, &data, Some(19)).unwrap();
        assert_eq!(decompress(Compression::Zstd, 2, &zstd, data.len()).unwrap(), data);
        // Outside Kafka's bounds, and LZ4 HC, are refused with a reason.
        for (codec, level) in
            [(Compression::Gzip, 0), (Compression::Gzip, 10), (Compression::Zstd, 23), (Compression::Lz4, 12)]
        {
            let err = compress_at(codec, 2, &data, Some(level)).unwrap_err();
            assert!(err.to_string().contains(&format!("level {level}")), "{err}");
        }
        assert!(compress_at(Compression::Lz4, 2, &data, Some(9)).is_ok(), "Kafka's default lz4 level");
        assert_eq!(Compression::Snappy.levels(), None);
    }
}
