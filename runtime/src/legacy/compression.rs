//! gzip and snappy for 0.7 compressed wrappers, with bounded decompression.
//!
//! Snappy uses snappy-java's own stream framing ("xerial"): a 16-byte header
//! (`0x82 "SNAPPY" 0`, `i32 version = 1`, `i32 minCompatibleVersion = 1`) followed by blocks of
//! `i32 compressedLength` + one raw snappy block, each holding at most 32 KiB of input. On read a
//! bare raw snappy block is accepted too, as snappy-java 1.0.4.1 does. This is implemented here
//! rather than shared with the modern record code so that the two modules stay independent.

use std::io::{Read, Write};

use crate::legacy::error::LegacyError;

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
}

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

const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_VERSION: i32 = 1;
const XERIAL_MIN_COMPATIBLE: i32 = 1;
const XERIAL_HEADER_LEN: usize = 16;
/// snappy-java's default block size.
const XERIAL_BLOCK: usize = 32 * 1024;

/// Compresses `data` with `codec` (`Codec::None` copies it).
pub fn compress(codec: Codec, data: &[u8]) -> Vec<u8> {
    match codec {
        Codec::None => data.to_vec(),
        Codec::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            // Writing into a Vec cannot fail.
            let _ = enc.write_all(data);
            enc.finish().unwrap_or_default()
        }
        Codec::Snappy => xerial_snappy_compress(data),
    }
}

/// snappy-java `SnappyOutputStream` framing of `data`.
pub fn xerial_snappy_compress(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(XERIAL_HEADER_LEN + data.len() / 2 + 64);
    out.extend_from_slice(&XERIAL_MAGIC);
    out.extend_from_slice(&XERIAL_VERSION.to_be_bytes());
    out.extend_from_slice(&XERIAL_MIN_COMPATIBLE.to_be_bytes());
    let mut encoder = snap::raw::Encoder::new();
    let mut block = vec![0u8; snap::raw::max_compress_len(XERIAL_BLOCK)];
    for chunk in data.chunks(XERIAL_BLOCK) {
        // A chunk of at most 32 KiB always fits `block`, so this cannot fail.
        let n = encoder.compress(chunk, &mut block).unwrap_or(0);
        out.extend_from_slice(&(n as i32).to_be_bytes());
        out.extend_from_slice(&block[..n]);
    }
    out
}

/// Decompresses a wrapper's payload. `offset` (the wrapper's log offset) is used in errors;
/// more than `limit` output bytes is an error, detected without allocating beyond `limit`.
pub fn decompress(codec: Codec, data: &[u8], limit: usize, offset: u64) -> Result<Vec<u8>, LegacyError> {
    match codec {
        Codec::None => {
            if data.len() > limit {
                return Err(LegacyError::DecompressedTooLarge { offset, limit });
            }
            Ok(data.to_vec())
        }
        Codec::Gzip => gzip_decompress(data, limit, offset),
        Codec::Snappy => xerial_snappy_decompress(data, limit, offset),
    }
}

fn gzip_decompress(data: &[u8], limit: usize, offset: u64) -> Result<Vec<u8>, LegacyError> {
    let decoder = flate2::read::MultiGzDecoder::new(data);
    let mut out = Vec::new();
    decoder.take(limit as u64 + 1).read_to_end(&mut out).map_err(|e| LegacyError::Decompression {
        offset,
        codec: Codec::Gzip,
        detail: e.to_string(),
    })?;
    if out.len() > limit {
        return Err(LegacyError::DecompressedTooLarge { offset, limit });
    }
    Ok(out)
}

fn snappy_err(offset: u64, detail: impl ToString) -> LegacyError {
    LegacyError::Decompression { offset, codec: Codec::Snappy, detail: detail.to_string() }
}

/// Decodes one raw snappy block, appending to `out`, checking its declared length first.
fn raw_block_into(block: &[u8], out: &mut Vec<u8>, limit: usize, offset: u64) -> Result<(), LegacyError> {
    let n = snap::raw::decompress_len(block).map_err(|e| snappy_err(offset, e))?;
    if n > crate::records::compression::snappy::max_block_output(block.len()) {
        return Err(snappy_err(offset, format!("a {}-byte block cannot hold the {n} bytes it declares", block.len())));
    }
    if n > limit.saturating_sub(out.len()) {
        return Err(LegacyError::DecompressedTooLarge { offset, limit });
    }
    let start = out.len();
    out.resize(start + n, 0);
    let written = snap::raw::Decoder::new().decompress(block, &mut out[start..]).map_err(|e| snappy_err(offset, e))?;
    out.truncate(start + written);
    Ok(())
}

/// snappy-java 1.0.4.1 `SnappyInputStream`: xerial framing, or else one bare raw block.
pub fn xerial_snappy_decompress(data: &[u8], limit: usize, offset: u64) -> Result<Vec<u8>, LegacyError> {
    let mut out = Vec::new();
    let framed = data.len() >= XERIAL_HEADER_LEN && data[..8] == XERIAL_MAGIC;
    if !framed {
        raw_block_into(data, &mut out, limit, offset)?;
        return Ok(out);
    }
    let version = i32::from_be_bytes([data[8], data[9], data[10], data[11]]);
    if version < XERIAL_MIN_COMPATIBLE {
        return Err(snappy_err(offset, format!("xerial stream version {version} is older than 1")));
    }
    let mut pos = XERIAL_HEADER_LEN;
    // Like snappy-java, fewer than 4 trailing bytes end the stream.
    while data.len().saturating_sub(pos) >= 4 {
        let len = i32::from_be_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]]);
        pos += 4;
        let len =
            usize::try_from(len).map_err(|_| snappy_err(offset, format!("negative xerial block length {len}")))?;
        let available = data.len() - pos;
        if len > available {
            return Err(snappy_err(
                offset,
                format!("xerial block of {len} bytes at byte {} but only {available} remain", pos - 4),
            ));
        }
        raw_block_into(&data[pos..pos + len], &mut out, limit, offset)?;
        pos += len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xerial_header_is_byte_exact() {
        let framed = xerial_snappy_compress(b"");
        assert_eq!(hex(&framed), "82534e415050590000000001".to_owned() + "00000001");
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn snappy_round_trip_multi_block() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let framed = xerial_snappy_compress(&data);
        // 100,000 bytes → 4 blocks of at most 32 KiB.
        let mut pos = 16;
        let mut blocks = 0;
        while pos < framed.len() {
            let len = i32::from_be_bytes(framed[pos..pos + 4].try_into().unwrap()) as usize;
            let block = &framed[pos + 4..pos + 4 + len];
            assert!(snap::raw::decompress_len(block).unwrap() <= XERIAL_BLOCK);
            pos += 4 + len;
            blocks += 1;
        }
        assert_eq!(blocks, 4);
        assert_eq!(xerial_snappy_decompress(&framed, usize::MAX, 0).unwrap(), data);
    }

    #[test]
    fn snappy_bare_block_is_accepted() {
        let raw = snap::raw::Encoder::new().compress_vec(b"hello hello hello").unwrap();
        assert_eq!(xerial_snappy_decompress(&raw, 1000, 0).unwrap(), b"hello hello hello");
    }

    #[test]
    fn limits_are_enforced_before_allocation() {
        let data = vec![0u8; 1 << 20];
        for codec in [Codec::Gzip, Codec::Snappy] {
            let c = compress(codec, &data);
            assert_eq!(decompress(codec, &c, 1 << 20, 7).unwrap().len(), 1 << 20);
            assert_eq!(
                decompress(codec, &c, (1 << 20) - 1, 7),
                Err(LegacyError::DecompressedTooLarge { offset: 7, limit: (1 << 20) - 1 })
            );
        }
        // A raw block that claims 2^31 bytes of output is refused from its header alone.
        let claim = [0x80, 0x80, 0x80, 0x80, 0x08, 0x00];
        let refused = xerial_snappy_decompress(&claim, 1 << 20, 0);
        assert!(
            matches!(&refused, Err(LegacyError::Decompression { detail, .. }) if detail.contains("cannot hold")),
            "{refused:?}"
        );
        // Within the limit but impossible for its size: a 65-byte block claiming 60 MiB.
        let mut lie = vec![0x80, 0x80, 0x80, 0x1e];
        lie.resize(65, 0);
        assert!(matches!(xerial_snappy_decompress(&lie, 64 << 20, 0), Err(LegacyError::Decompression { .. })));
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
            Err(LegacyError::Decompression { offset: 3, .. })
        ));
        let mut framed = xerial_snappy_compress(b"hello");
        framed[19] = 0x7f; // block length now points past the end
        assert!(matches!(decompress(Codec::Snappy, &framed, 100, 0), Err(LegacyError::Decompression { .. })));
    }
}
