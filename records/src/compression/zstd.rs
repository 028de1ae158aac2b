//! Zstandard, at level 3 (Kafka's default `compression.zstd.level`).

use super::bounded::read_bounded;
use super::Compression;
use crate::error::{BuildError, RecordsErrorKind};

const LEVEL: i32 = 3;

pub(super) fn compress(data: &[u8]) -> Result<Vec<u8>, BuildError> {
    ::zstd::bulk::compress(data, LEVEL)
        .map_err(|e| BuildError::Compression { codec: Compression::Zstd, reason: e.to_string() })
}

pub(super) fn decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, RecordsErrorKind> {
    let fail = |e: std::io::Error| RecordsErrorKind::Decompression { codec: Compression::Zstd, reason: e.to_string() };
    // The frame may state its content size; use it only to size the first allocation.
    let hint = ::zstd::zstd_safe::get_frame_content_size(data).ok().flatten().unwrap_or(0);
    let hint = usize::try_from(hint).unwrap_or(usize::MAX);
    let decoder = ::zstd::stream::read::Decoder::with_buffer(data).map_err(fail)?;
    read_bounded(decoder, Compression::Zstd, limit, hint)
}
