//! LZ4 frame format, as Kafka's `KafkaLZ4BlockOutputStream` writes it: independent 64 KiB
//! blocks, no block or content checksums, no content size.
//!
//! Kafka before 0.10 computed the frame header checksum (HC) over the magic number, FLG and BD
//! instead of over FLG and BD only; magic 0 message sets keep that broken checksum
//! (`useBrokenFlagDescriptorChecksum`). Writing magic 0 reproduces it; reading magic 0 accepts
//! it as well as the correct one.

use std::io::{Read, Write};

use lz4_flex::frame::{BlockMode, BlockSize, FrameDecoder, FrameEncoder, FrameInfo};

use super::bounded::read_bounded;
use super::xxhash32::xxh32;
use super::Compression;
use crate::error::{BuildError, RecordsErrorKind};

const FRAME_MAGIC: [u8; 4] = 0x184D_2204u32.to_le_bytes();
const FLG_CONTENT_SIZE: u8 = 0x08;
const FLG_DICT_ID: u8 = 0x01;

pub(super) fn compress(data: &[u8], broken_header_checksum: bool) -> Result<Vec<u8>, BuildError> {
    let fail = |reason: String| BuildError::Compression { codec: Compression::Lz4, reason };
    let info = FrameInfo::new()
        .block_size(BlockSize::Max64KB)
        .block_mode(BlockMode::Independent)
        .block_checksums(false)
        .content_checksum(false);
    let mut encoder = FrameEncoder::with_frame_info(info, Vec::with_capacity(data.len() / 2 + 64));
    encoder.write_all(data).map_err(|e| fail(e.to_string()))?;
    let mut frame = encoder.finish().map_err(|e| fail(e.to_string()))?;
    if broken_header_checksum {
        let hc_at = header_checksum_position(&frame).ok_or_else(|| fail("encoder wrote no frame header".into()))?;
        let broken = checksum_byte(frame.get(..hc_at).unwrap_or_default());
        if let Some(hc) = frame.get_mut(hc_at) {
            *hc = broken;
        }
    }
    Ok(frame)
}

pub(super) fn decompress(
    data: &[u8],
    limit: usize,
    accept_broken_header_checksum: bool,
) -> Result<Vec<u8>, RecordsErrorKind> {
    let hint = content_size(data).unwrap_or(data.len().saturating_mul(4));
    if accept_broken_header_checksum {
        if let Some(hc_at) = header_checksum_position(data) {
            let descriptor = data.get(4..hc_at).unwrap_or_default();
            let correct = checksum_byte(descriptor);
            let broken = checksum_byte(data.get(..hc_at).unwrap_or_default());
            let stored = data.get(hc_at).copied();
            if stored != Some(correct) && stored == Some(broken) {
                // Present the decoder a header carrying the correct checksum, without copying
                // the frame body.
                let mut header = data.get(..=hc_at).unwrap_or_default().to_vec();
                if let Some(hc) = header.last_mut() {
                    *hc = correct;
                }
                let body = data.get(hc_at + 1..).unwrap_or_default();
                let reader = FrameDecoder::new(header.as_slice().chain(body));
                return read_bounded(reader, Compression::Lz4, limit, hint);
            }
        }
    }
    read_bounded(FrameDecoder::new(data), Compression::Lz4, limit, hint)
}

/// `(xxh32(bytes) >> 8) & 0xFF`, the frame header checksum byte.
fn checksum_byte(bytes: &[u8]) -> u8 {
    (xxh32(bytes, 0) >> 8) as u8
}

/// Position of the HC byte in a frame starting with the LZ4 magic number.
fn header_checksum_position(frame: &[u8]) -> Option<usize> {
    if !frame.starts_with(&FRAME_MAGIC) {
        return None;
    }
    let flg = *frame.get(4)?;
    let mut at = 6; // magic, FLG, BD
    if flg & FLG_CONTENT_SIZE != 0 {
        at += 8;
    }
    if flg & FLG_DICT_ID != 0 {
        at += 4;
    }
    (at < frame.len()).then_some(at)
}

/// The uncompressed size a frame header declares, if it declares one.
fn content_size(frame: &[u8]) -> Option<usize> {
    let flg = *frame.get(4)?;
    if !frame.starts_with(&FRAME_MAGIC) || flg & FLG_CONTENT_SIZE == 0 {
        return None;
    }
    let size = frame.get(6..14)?;
    let size = u64::from_le_bytes(size.try_into().ok()?);
    usize::try_from(size).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_checksum_frame_differs_only_in_hc_and_reads_back() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let good = compress(&data, false).unwrap();
        let broken = compress(&data, true).unwrap();
        assert_eq!(good.len(), broken.len());
        let differing: Vec<usize> = (0..good.len()).filter(|&i| good[i] != broken[i]).collect();
        assert!(differing.len() <= 1, "only the HC byte may differ: {differing:?}");
        assert_eq!(broken[6], checksum_byte(&broken[..6]));
        assert_eq!(good[6], checksum_byte(&good[4..6]));
        assert_eq!(decompress(&broken, usize::MAX, true).unwrap(), data);
        assert_eq!(decompress(&good, usize::MAX, true).unwrap(), data);
        assert_eq!(decompress(&good, usize::MAX, false).unwrap(), data);
    }

    #[test]
    fn frame_headers_match_kafka() {
        let data = b"header".repeat(50);
        // The standard header for independent 64 KiB blocks without checksums ends in 0x82;
        // kafka-python 3.0.12's lz4_encode_old_kafka (magic 0) writes 0x1A there instead.
        assert_eq!(compress(&data, false).unwrap()[..7], [0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82]);
        assert_eq!(compress(&data, true).unwrap()[..7], [0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x1A]);
    }

    #[test]
    fn broken_checksum_is_rejected_outside_magic_0() {
        // Find input whose broken and correct checksums differ (they coincide 1 time in 256).
        let data = b"kafka lz4 header checksum".repeat(100);
        let broken = compress(&data, true).unwrap();
        if broken[6] != checksum_byte(&broken[4..6]) {
            assert!(decompress(&broken, usize::MAX, false).is_err());
        }
    }
}
