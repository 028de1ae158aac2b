//! Reading a decompressor to its end without letting the output grow past a limit.

use std::io::{ErrorKind, Read};

use super::Compression;
use crate::error::RecordsErrorKind;

/// Bytes requested from the decoder per read when the output has no spare room.
const STEP: usize = 64 * 1024;
/// The most a declared size may reserve before any output exists: a frame may claim 2^40
/// bytes in a few dozen, so beyond this the buffer grows only with output actually produced.
const MAX_TRUSTED_HINT: usize = 256 * 1024;

/// Reads `reader` to its end. `size_hint` (for example a size stored in the frame) only sizes
/// the first allocation, up to [`MAX_TRUSTED_HINT`]; it is never trusted for correctness.
pub(super) fn read_bounded<R: Read>(
    mut reader: R,
    codec: Compression,
    limit: usize,
    size_hint: usize,
) -> Result<Vec<u8>, RecordsErrorKind> {
    let mut out: Vec<u8> = Vec::with_capacity(size_hint.min(limit).min(MAX_TRUSTED_HINT));
    let mut filled = 0usize;
    loop {
        if filled == out.len() {
            // Grow into spare capacity first, then by doubling, never past limit + 1 (the
            // extra byte detects output beyond the limit).
            let ceiling = limit.saturating_add(1);
            if filled >= ceiling {
                return Err(RecordsErrorKind::DecompressedTooLarge { codec, limit });
            }
            let spare = out.capacity() - filled;
            let grow = if spare > 0 { spare } else { filled.max(STEP) };
            let new_len = filled.saturating_add(grow).min(ceiling);
            out.resize(new_len, 0);
        }
        let dest = out.get_mut(filled..).unwrap_or_default();
        match reader.read(dest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(RecordsErrorKind::Decompression { codec, reason: e.to_string() });
            }
        }
    }
    if filled > limit {
        return Err(RecordsErrorKind::DecompressedTooLarge { codec, limit });
    }
    out.truncate(filled);
    // Growth by doubling can leave up to half the buffer unused, and records keep the buffer
    // alive: give large slack back.
    if out.capacity() - filled > filled / 4 + STEP {
        out.shrink_to_fit();
    }
    Ok(out)
}
