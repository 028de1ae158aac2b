//! The codec ids of record batch attributes: a leaf, so errors can name a codec without
//! depending on the codecs' code.

/// A record compression codec, numbered as in the batch attributes (bits 0-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// No compression.
    #[default]
    None,
    /// gzip (RFC 1952), as `java.util.zip.GZIPOutputStream` writes it.
    Gzip,
    /// Snappy in xerial framing (read: also a bare snappy block).
    Snappy,
    /// LZ4 frame format.
    Lz4,
    /// Zstandard (magic 2 only).
    Zstd,
}

/// A codec's compression levels, as Kafka's `CompressionType` bounds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    pub min: i32,
    pub max: i32,
    /// The level used when none is set (for gzip, zlib's -1).
    pub default: i32,
}

impl Levels {
    /// Whether Kafka accepts `level`: within the bounds, or the default.
    pub fn accepts(self, level: i32) -> bool {
        level == self.default || (self.min..=self.max).contains(&level)
    }
}

impl Compression {
    /// Every codec, in attribute order.
    pub const ALL: [Compression; 5] =
        [Compression::None, Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd];

    /// The codec for attribute bits 0-2, if the id names one.
    pub fn from_id(id: u8) -> Option<Compression> {
        match id {
            0 => Some(Compression::None),
            1 => Some(Compression::Gzip),
            2 => Some(Compression::Snappy),
            3 => Some(Compression::Lz4),
            4 => Some(Compression::Zstd),
            _ => None,
        }
    }

    /// The codec's id in the attribute bits.
    pub fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// Whether a batch of this magic may use the codec (zstd arrived with magic 2).
    pub fn allowed_for_magic(self, magic: i8) -> bool {
        match self {
            Compression::Zstd => magic >= 2,
            _ => (0..=2).contains(&magic),
        }
    }

    /// Whether this build can compress and decompress with the codec (its cargo feature is on).
    pub fn is_built(self) -> bool {
        match self {
            Compression::None => true,
            Compression::Gzip => cfg!(feature = "gzip"),
            Compression::Snappy => cfg!(feature = "snappy"),
            Compression::Lz4 => cfg!(feature = "lz4"),
            Compression::Zstd => cfg!(feature = "zstd"),
        }
    }

    /// The levels Kafka accepts for the codec (`compression.gzip.level`, `compression.lz4.level`,
    /// `compression.zstd.level`, KIP-390) and its default; `None` for codecs without levels.
    pub fn levels(self) -> Option<Levels> {
        match self {
            // zlib's -1 is its default, level 6.
            Compression::Gzip => Some(Levels { min: 1, max: 9, default: -1 }),
            Compression::Lz4 => Some(Levels { min: 1, max: 17, default: 9 }),
            Compression::Zstd => Some(Levels { min: -131072, max: 22, default: 3 }),
            Compression::None | Compression::Snappy => None,
        }
    }

    /// Kafka's name for the codec (`compression.type`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}
