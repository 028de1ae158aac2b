//! The codec bits of a magic-1 message's attributes: a leaf, so errors can name a codec
//! without depending on the compression code.

use kwire_records::Compression;

/// The compression codec in bits 0–1 of a magic-1 message's attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    None,
    Gzip,
    Snappy,
}

impl Codec {
    /// Attribute bits 0–1 for this codec.
    pub fn attribute_bits(self) -> u8 {
        match self {
            Codec::None => 0,
            Codec::Gzip => 1,
            Codec::Snappy => 2,
        }
    }

    /// The codec in `attributes & 0x03`; `Err(3)` for the invalid value 3.
    pub fn from_attributes(attributes: u8) -> Result<Codec, u8> {
        match attributes & 0x03 {
            0 => Ok(Codec::None),
            1 => Ok(Codec::Gzip),
            2 => Ok(Codec::Snappy),
            other => Err(other),
        }
    }

    /// The same codec as numbered in record batches.
    pub(crate) fn as_compression(self) -> Compression {
        match self {
            Codec::None => Compression::None,
            Codec::Gzip => Compression::Gzip,
            Codec::Snappy => Compression::Snappy,
        }
    }
}
