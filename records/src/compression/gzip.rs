//! gzip, as `java.util.zip.GZIPOutputStream` writes it (default level 6) and
//! `GZIPInputStream` reads it (concatenated members allowed).

use std::io::Write;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use super::bounded::read_bounded;
use super::Compression;
use crate::error::{BuildError, RecordsErrorKind};

/// At `level` 1 to 9, or -1 for zlib's default (6), as `java.util.zip.Deflater` takes them.
pub(super) fn compress(data: &[u8], level: i32) -> Result<Vec<u8>, BuildError> {
    let fail = |e: std::io::Error| BuildError::Compression { codec: Compression::Gzip, reason: e.to_string() };
    let level = u32::try_from(level).ok().filter(|l| (1..=9).contains(l)).unwrap_or(6);
    let mut encoder = GzEncoder::new(Vec::with_capacity(data.len() / 2 + 64), flate2::Compression::new(level));
    encoder.write_all(data).map_err(fail)?;
    encoder.finish().map_err(fail)
}

pub(super) fn decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, RecordsErrorKind> {
    // The trailer's ISIZE (uncompressed size mod 2^32) is a good first guess for the buffer.
    let hint = match data.len().checked_sub(4).and_then(|at| data.get(at..)) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]) as usize,
        _ => 0,
    };
    read_bounded(MultiGzDecoder::new(data), Compression::Gzip, limit, hint)
}
