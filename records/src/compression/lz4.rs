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
    if let Some(decoded) = decompress_blocks(data, limit, accept_broken_header_checksum) {
        return decoded;
    }
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

const FLG_VERSION_MASK: u8 = 0xC0;
const FLG_VERSION_01: u8 = 0x40;
const FLG_INDEPENDENT: u8 = 0x20;
const FLG_BLOCK_CHECKSUM: u8 = 0x10;
const FLG_CONTENT_CHECKSUM: u8 = 0x04;
const FLG_RESERVED: u8 = 0x02;
const BLOCK_UNCOMPRESSED: u32 = 0x8000_0000;
/// What linked blocks may refer back to.
const WINDOW: usize = 64 * 1024;
/// The most one byte of an LZ4 block can expand to (a match-length byte of 255): a compressed
/// block of `n` bytes decodes to at most `255 n`, whatever its frame's block size claims.
const MAX_EXPANSION: usize = 255;
/// What reading a frame reserves ahead of output, per input byte plus a constant: the decode
/// budget of `kwire_runtime::budget` (8 bytes a byte, 64 KiB).
const BUDGET_PER_INPUT_BYTE: usize = 8;
const BUDGET_SLACK: usize = 64 << 10;

/// Decodes a frame block by block straight into one buffer sized once from the block headers
/// (within the input's decode budget): no copy through the frame decoder's own buffer, no
/// regrowth, nothing zeroed twice. `None`
/// for what it leaves to the frame decoder (a dictionary id, a frame not starting with the
/// magic number, a header that does not parse): that path then reads it, or reports why not.
fn decompress_blocks(data: &[u8], limit: usize, accept_broken: bool) -> Option<Result<Vec<u8>, RecordsErrorKind>> {
    let fail = |reason: &str| {
        Some(Err(RecordsErrorKind::Decompression { codec: Compression::Lz4, reason: reason.to_owned() }))
    };
    if !data.starts_with(&FRAME_MAGIC) {
        return None;
    }
    let (flg, bd) = (*data.get(4)?, *data.get(5)?);
    if flg & FLG_VERSION_MASK != FLG_VERSION_01 || flg & (FLG_RESERVED | FLG_DICT_ID) != 0 || bd & 0x8F != 0 {
        return None;
    }
    let block_max = match (bd >> 4) & 0x07 {
        4 => 64 << 10,
        5 => 256 << 10,
        6 => 1 << 20,
        7 => 4 << 20,
        _ => return None,
    };
    let hc_at = header_checksum_position(data)?;
    let stored = *data.get(hc_at)?;
    let correct = stored == checksum_byte(data.get(4..hc_at)?);
    let broken = accept_broken && stored == checksum_byte(data.get(..hc_at)?);
    if !(correct || broken) {
        return fail("frame header checksum mismatch");
    }
    let blocks = Blocks { data, at: hc_at + 1, block_max, checksums: flg & FLG_BLOCK_CHECKSUM != 0 };
    // First the headers alone (nothing kept per block, so a frame of many tiny blocks costs
    // nothing): each block checked, and what all can give added up.
    let mut bound = 0usize;
    let mut walk = blocks.clone();
    loop {
        match walk.next_block() {
            Ok(Some(block)) => bound = bound.saturating_add(block.most),
            Ok(None) => break,
            Err(reason) => return fail(reason),
        }
    }
    let at = walk.at;
    let too_large = || Some(Err(RecordsErrorKind::DecompressedTooLarge { codec: Compression::Lz4, limit }));
    // Sized once by what the blocks can give, within the limit (plus one byte, to see a block
    // going past it) and within the decode budget of the input: a frame whose blocks could
    // expand past that is read here as far as the budget goes, then by the frame decoder,
    // whose buffer grows only with output it produced.
    let budget = data.len().saturating_mul(BUDGET_PER_INPUT_BYTE).saturating_add(BUDGET_SLACK);
    let mut out: Vec<u8> = Vec::with_capacity(bound.min(limit.saturating_add(1)).min(budget));
    let independent = flg & FLG_INDEPENDENT != 0;
    let mut walk = blocks;
    while let Ok(Some(block)) = walk.next_block() {
        let Block { data: block, uncompressed, most } = block;
        let start = out.len();
        if uncompressed {
            if start + block.len() > limit {
                return too_large();
            }
            out.extend_from_slice(block);
            continue;
        }
        // Within what the block can give and the capacity reserved, so `out` never regrows.
        let by_limit = limit.saturating_add(1) - start;
        let room = most.min(by_limit).min(out.capacity() - start);
        out.resize(start + room, 0);
        let (before, after) = out.split_at_mut(start);
        let decoded = if independent || start == 0 {
            lz4_flex::block::decompress_into(block, after)
        } else {
            lz4_flex::block::decompress_into_with_dict(block, after, &before[start.saturating_sub(WINDOW)..])
        };
        match decoded {
            Ok(n) if start + n > limit => return too_large(),
            Ok(n) => out.truncate(start + n),
            // A block that does not fit the room left by the limit is too large; one that
            // does not fit the budget goes to the frame decoder; any other failure (or one not
            // fitting all a block can give) is corruption.
            Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if room == by_limit => return too_large(),
            Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if room < most => return None,
            Err(e) => return fail(&e.to_string()),
        }
    }
    if flg & FLG_CONTENT_CHECKSUM != 0 {
        let Some(sum) = data.get(at..at + 4) else { return fail("the frame ends inside its content checksum") };
        if u32::from_le_bytes(sum.try_into().ok()?) != xxh32(&out, 0) {
            return fail("content checksum mismatch");
        }
    }
    if let Some(declared) = content_size(data) {
        if declared != out.len() {
            return fail("the frame's content size does not match its blocks");
        }
    }
    Some(Ok(out))
}

/// The blocks of a frame after its header, read from their headers on.
#[derive(Clone)]
struct Blocks<'a> {
    data: &'a [u8],
    /// Where the next block header is.
    at: usize,
    block_max: usize,
    checksums: bool,
}

/// One block of a frame.
struct Block<'a> {
    data: &'a [u8],
    uncompressed: bool,
    /// The most it can decode to: its size when stored, else what its bytes can encode within
    /// the frame's block size (so a frame of tiny blocks claiming 4 MiB each reserves only
    /// what its data supports).
    most: usize,
}

impl<'a> Blocks<'a> {
    /// The next block, checked against its checksum if the frame has them; `None` at the end
    /// mark (then `at` is just past it).
    fn next_block(&mut self) -> Result<Option<Block<'a>>, &'static str> {
        let data = self.data;
        let header = data.get(self.at..self.at + 4).ok_or("the frame ends inside a block header")?;
        let word = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        self.at += 4;
        if word == 0 {
            return Ok(None);
        }
        let uncompressed = word & BLOCK_UNCOMPRESSED != 0;
        let size = (word & !BLOCK_UNCOMPRESSED) as usize;
        if size > self.block_max {
            return Err("a block is larger than the frame's block size");
        }
        let block = data.get(self.at..self.at + size).ok_or("the frame ends inside a block")?;
        self.at += size;
        if self.checksums {
            let sum = data.get(self.at..self.at + 4).ok_or("the frame ends inside a block checksum")?;
            if u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]) != xxh32(block, 0) {
                return Err("block checksum mismatch");
            }
            self.at += 4;
        }
        let most = if uncompressed { size } else { self.block_max.min(size.saturating_mul(MAX_EXPANSION)) };
        Ok(Some(Block { data: block, uncompressed, most }))
    }
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

    /// The frame decoder's reading of `frame`, for comparison.
    fn by_frame_decoder(frame: &[u8], limit: usize) -> Result<Vec<u8>, RecordsErrorKind> {
        let hint = content_size(frame).unwrap_or(frame.len().saturating_mul(4));
        read_bounded(FrameDecoder::new(frame), Compression::Lz4, limit, hint)
    }

    fn frame(
        data: &[u8],
        size: BlockSize,
        mode: BlockMode,
        block_sums: bool,
        content_sum: bool,
        sized: bool,
    ) -> Vec<u8> {
        let mut info = FrameInfo::new()
            .block_size(size)
            .block_mode(mode)
            .block_checksums(block_sums)
            .content_checksum(content_sum);
        if sized {
            info = info.content_size(Some(data.len() as u64));
        }
        let mut encoder = FrameEncoder::with_frame_info(info, Vec::new());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    proptest::proptest! {
        /// Block by block, every kind of frame decodes to what lz4_flex's frame decoder reads,
        /// and a frame with a byte changed is an error for one exactly when for the other (or
        /// decodes the same); limits are honoured alike.
        #[test]
        fn blocks_decode_as_the_frame_decoder_reads(
            seed in proptest::prelude::any::<u64>(),
            len in 0usize..400_000,
            repetitive in proptest::prelude::any::<bool>(),
            size in 0usize..4,
            linked in proptest::prelude::any::<bool>(),
            block_sums in proptest::prelude::any::<bool>(),
            content_sum in proptest::prelude::any::<bool>(),
            sized in proptest::prelude::any::<bool>(),
            flip in proptest::prelude::any::<(usize, u8)>(),
            limit_cut in 0usize..3,
        ) {
            let mut state = seed | 1;
            let data: Vec<u8> = (0..len)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    if repetitive { (i % 97) as u8 ^ (state % 3) as u8 } else { state as u8 }
                })
                .collect();
            let size = [BlockSize::Max64KB, BlockSize::Max256KB, BlockSize::Max1MB, BlockSize::Max4MB][size];
            let mode = if linked { BlockMode::Linked } else { BlockMode::Independent };
            let frame = frame(&data, size, mode, block_sums, content_sum, sized);
            // Block by block unless the data expands past the input's decode budget.
            match decompress_blocks(&frame, usize::MAX, false) {
                Some(ours) => proptest::prop_assert_eq!(ours.as_ref().ok(), Some(&data)),
                None => proptest::prop_assert!(data.len() > BUDGET_PER_INPUT_BYTE * frame.len() + BUDGET_SLACK),
            }
            proptest::prop_assert_eq!(decompress(&frame, usize::MAX, false).ok(), Some(data.clone()));
            let limit = [usize::MAX, len, len.saturating_sub(1)][limit_cut];
            let (a, b) = (decompress(&frame, limit, false), by_frame_decoder(&frame, limit));
            proptest::prop_assert_eq!(a.is_ok(), b.is_ok(), "limit {}: {:?} / {:?}", limit, a.as_ref().err(), b.as_ref().err());
            let mut bad = frame.clone();
            if !bad.is_empty() {
                let at = flip.0 % bad.len();
                bad[at] ^= flip.1 | 1;
                let (a, b) = (decompress(&bad, 1 << 26, false), by_frame_decoder(&bad, 1 << 26));
                if let (Ok(a), Ok(b)) = (&a, &b) {
                    proptest::prop_assert_eq!(a, b);
                }
            }
        }
    }

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
