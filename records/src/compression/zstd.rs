//! Zstandard. By default pure Rust (`ruzstd`): it reads every frame Kafka's clients write and
//! writes at its fastest level, about zstd's level 1, so that a default build compiles no C.
//! With the `libzstd` feature the C library is used instead, at the level asked for (Kafka's
//! `compression.zstd.level`, 3 by default), which compresses better and decodes faster.
//!
//! Either way a batch may hold several frames back to back (zstd's streaming decoders read them
//! as one stream), and output is bounded by the caller's limit however large a frame claims to be.

use super::bounded::read_bounded;
use super::Compression;
use crate::error::{BuildError, RecordsErrorKind};

fn failed(reason: impl ToString) -> RecordsErrorKind {
    RecordsErrorKind::Decompression { codec: Compression::Zstd, reason: reason.to_string() }
}

#[cfg(feature = "libzstd")]
mod engine {
    use super::*;

    pub(crate) fn compress(data: &[u8], level: i32) -> Result<Vec<u8>, BuildError> {
        ::zstd::bulk::compress(data, level)
            .map_err(|e| BuildError::Compression { codec: Compression::Zstd, reason: e.to_string() })
    }

    pub(crate) fn decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, RecordsErrorKind> {
        // The frame may state its content size; use it only to size the first allocation.
        let hint = ::zstd::zstd_safe::get_frame_content_size(data).ok().flatten().unwrap_or(0);
        let hint = usize::try_from(hint).unwrap_or(usize::MAX);
        let decoder = ::zstd::stream::read::Decoder::with_buffer(data).map_err(failed)?;
        read_bounded(decoder, Compression::Zstd, limit, hint)
    }
}

#[cfg(not(feature = "libzstd"))]
mod engine {
    use std::io::{self, Read};

    use ruzstd::decoding::{FrameDecoder, StreamingDecoder};
    use ruzstd::encoding::{compress_to_vec, CompressionLevel};

    use super::*;

    /// ruzstd writes one level (its others are not implemented): `level` is not used.
    pub(crate) fn compress(data: &[u8], _level: i32) -> Result<Vec<u8>, BuildError> {
        Ok(compress_to_vec(data, CompressionLevel::Fastest))
    }

    pub(crate) fn decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, RecordsErrorKind> {
        let first = StreamingDecoder::new(data).map_err(failed)?;
        read_bounded(Frames { current: first }, Compression::Zstd, limit, 0)
    }

    /// Frames one after another as one stream, as libzstd's streaming decoder reads them.
    struct Frames<'a> {
        current: StreamingDecoder<&'a [u8], FrameDecoder>,
    }

    impl Read for Frames<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            loop {
                let n = self.current.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                let rest: &[u8] = self.current.get_ref();
                if rest.is_empty() {
                    return Ok(0);
                }
                self.current =
                    StreamingDecoder::new(rest).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            }
        }
    }
}

pub(super) use engine::{compress, decompress};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_back_to_back_read_as_one_stream() {
        let mut two = compress(b"first frame, ", 3).unwrap();
        two.extend(compress(b"second frame", 3).unwrap());
        assert_eq!(decompress(&two, 100).unwrap(), b"first frame, second frame");
        assert!(matches!(decompress(&two, 10), Err(RecordsErrorKind::DecompressedTooLarge { .. })));
    }

    #[test]
    fn garbage_and_truncation_are_errors() {
        assert!(matches!(decompress(b"not zstd at all", 100), Err(RecordsErrorKind::Decompression { .. })));
        let frame = compress(&[7u8; 4096], 3).unwrap();
        assert!(decompress(&frame[..frame.len() - 3], 1 << 20).is_err());
    }
}
