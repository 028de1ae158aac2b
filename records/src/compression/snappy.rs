//! Snappy as Kafka's Java client writes it: xerial's `SnappyOutputStream` framing (a 16-byte
//! header, then blocks each prefixed with a big-endian i32 compressed length). Reading also
//! accepts a bare snappy block, as xerial's `SnappyInputStream` does when the header is absent,
//! and ends the stream quietly at fewer than 4 trailing bytes, as `SnappyInputStream` does.
//! Kafka 0.7's wrappers and today's batches use this same framing, so this is the one snappy.

use snap::raw::{decompress_len, max_compress_len, Decoder, Encoder};

use super::Compression;
use crate::error::RecordsErrorKind;

/// Magic bytes opening a xerial stream: 0x82 "SNAPPY" 0x00.
const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
/// Header version and minimum compatible version written after the magic (both 1).
const XERIAL_VERSION: i32 = 1;
const XERIAL_COMPATIBLE_VERSION: i32 = 1;
const XERIAL_HEADER_LEN: usize = 16;
/// Uncompressed bytes per block; xerial's default block size, which Kafka uses.
const XERIAL_BLOCK_SIZE: usize = 32 * 1024;

pub(super) fn compress_xerial(data: &[u8]) -> Vec<u8> {
    let blocks = data.len().div_ceil(XERIAL_BLOCK_SIZE);
    let mut out = Vec::with_capacity(XERIAL_HEADER_LEN + data.len() / 2 + blocks * 8);
    out.extend_from_slice(&XERIAL_MAGIC);
    out.extend_from_slice(&XERIAL_VERSION.to_be_bytes());
    out.extend_from_slice(&XERIAL_COMPATIBLE_VERSION.to_be_bytes());
    let mut encoder = Encoder::new();
    for chunk in data.chunks(XERIAL_BLOCK_SIZE) {
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        let start = out.len();
        out.resize(start + max_compress_len(chunk.len()), 0);
        // A block of at most 32 KiB into a buffer of max_compress_len cannot fail.
        let written = match out.get_mut(start..) {
            Some(dest) => encoder.compress(chunk, dest).unwrap_or(0),
            None => 0,
        };
        out.truncate(start + written);
        // written <= max_compress_len(32 KiB) fits an i32.
        let len = (written as u32).to_be_bytes();
        if let Some(slot) = out.get_mut(len_at..len_at + 4) {
            slot.copy_from_slice(&len);
        }
    }
    out
}

fn failed(reason: impl ToString) -> RecordsErrorKind {
    RecordsErrorKind::Decompression { codec: Compression::Snappy, reason: reason.to_string() }
}

pub(super) fn decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, RecordsErrorKind> {
    match data.get(..XERIAL_HEADER_LEN) {
        Some(header) if header.starts_with(&XERIAL_MAGIC) => {
            let version = i32::from_be_bytes([header[8], header[9], header[10], header[11]]);
            if version < XERIAL_COMPATIBLE_VERSION {
                return Err(failed(format!("xerial stream version {version} is older than 1")));
            }
            decompress_xerial(data.get(XERIAL_HEADER_LEN..).unwrap_or_default(), limit)
        }
        _ => {
            let mut out = Vec::new();
            decompress_block(data, &mut out, limit)?;
            Ok(out)
        }
    }
}

fn decompress_xerial(mut blocks: &[u8], limit: usize) -> Result<Vec<u8>, RecordsErrorKind> {
    let mut out = Vec::new();
    // Like `SnappyInputStream`, fewer than 4 bytes where a block length belongs end the stream.
    while let Some((len, rest)) = blocks.split_first_chunk::<4>() {
        let len = i32::from_be_bytes(*len);
        let len = usize::try_from(len).map_err(|_| failed(format!("negative block length {len}")))?;
        let Some((block, rest)) = rest.split_at_checked(len) else {
            return Err(failed(format!("block of {len} bytes but only {} remain", rest.len())));
        };
        decompress_block(block, &mut out, limit)?;
        blocks = rest;
    }
    Ok(out)
}

/// The most a raw snappy block of `block_len` bytes can decode to: its best element is a
/// 3-byte copy of 64 bytes. A declared length above this is a lie, refused before anything is
/// allocated for it, so the output buffer is never sized by a number the input only claims.
pub(crate) fn max_block_output(block_len: usize) -> usize {
    block_len.saturating_mul(64) / 3 + 64
}

/// Appends one raw snappy block to `out`, checking the size it declares against `limit` and
/// against what the block could produce first.
fn decompress_block(block: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), RecordsErrorKind> {
    let len = decompress_len(block).map_err(failed)?;
    if len > max_block_output(block.len()) {
        return Err(failed(format!("a {}-byte block cannot hold the {len} bytes it declares", block.len())));
    }
    let start = out.len();
    if len > limit.saturating_sub(start) {
        return Err(RecordsErrorKind::DecompressedTooLarge { codec: Compression::Snappy, limit });
    }
    out.resize(start + len, 0);
    let dest = out.get_mut(start..).unwrap_or_default();
    let written = Decoder::new().decompress(block, dest).map_err(failed)?;
    if written != len {
        return Err(failed(format!("block declared {len} bytes but produced {written}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        (0..100_000u32).flat_map(|i| (i % 1000).to_be_bytes()).collect()
    }

    #[test]
    fn writes_xerial_framing_with_32_kib_blocks() {
        let data = sample();
        let framed = compress_xerial(&data);
        // 0x82 "SNAPPY" 0x00, version 1, compatible version 1.
        assert_eq!(framed[..16], [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1]);
        let mut blocks = 0;
        let mut rest = &framed[16..];
        while !rest.is_empty() {
            let len = i32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            let block = &rest[4..4 + len];
            assert!(decompress_len(block).unwrap() <= XERIAL_BLOCK_SIZE);
            rest = &rest[4 + len..];
            blocks += 1;
        }
        assert_eq!(blocks, data.len().div_ceil(XERIAL_BLOCK_SIZE));
        assert_eq!(decompress(&framed, usize::MAX).unwrap(), data);
    }

    #[test]
    fn reads_a_bare_snappy_block() {
        let data = sample();
        let bare = Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(&bare, usize::MAX).unwrap(), data);
        assert!(matches!(decompress(&bare, data.len() - 1), Err(RecordsErrorKind::DecompressedTooLarge { .. })));
    }

    #[test]
    fn fewer_than_four_trailing_bytes_end_the_stream() {
        let data = sample();
        let mut framed = compress_xerial(&data);
        framed.extend_from_slice(&[0, 0, 1]);
        assert_eq!(decompress(&framed, usize::MAX).unwrap(), data);
        // Four bytes are a block length, and the block it announces is missing.
        framed.push(5);
        assert!(matches!(decompress(&framed, usize::MAX), Err(RecordsErrorKind::Decompression { .. })));
    }

    #[test]
    fn refuses_a_stream_version_below_1() {
        let mut framed = compress_xerial(b"hello");
        framed[8..12].copy_from_slice(&0i32.to_be_bytes());
        assert!(matches!(decompress(&framed, 100), Err(RecordsErrorKind::Decompression { .. })));
    }

    #[test]
    fn rejects_bad_xerial_block_lengths() {
        let mut framed = compress_xerial(&sample());
        framed[16..20].copy_from_slice(&(-5i32).to_be_bytes());
        assert!(matches!(decompress(&framed, usize::MAX), Err(RecordsErrorKind::Decompression { .. })));
        framed[16..20].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(matches!(decompress(&framed, usize::MAX), Err(RecordsErrorKind::Decompression { .. })));
    }
}
