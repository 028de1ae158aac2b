//! Incremental framing: `i32 size` then `size` bytes, arriving in any number of pieces, read
//! with the runtime's one reader of it ([`kwire_runtime::framing`]) under 0.7's limits. The
//! size is checked (`0 < size ≤ max` for a request; an answer holds at least its error code)
//! as soon as its 4 bytes are present, before any buffer is grown for the body.

use bytes::{Buf, Bytes, BytesMut};
use kwire_runtime::framing::{FrameLimits, FrameSizeError, SIZE_PREFIX};

use crate::error::ProtocolError;
use crate::request::Request;

/// 0.7's default `max.socket.request.bytes` (100 MiB).
pub const DEFAULT_MAX_REQUEST_SIZE: usize = 104_857_600;

/// The least a request frame holds: 0.7 refuses an empty one.
const MIN_REQUEST: usize = 1;
/// The least an answer frame holds: its error code.
const MIN_ANSWER: usize = 2;

/// Splits frames off the front of a receive buffer (one the caller keeps: the broker's and
/// the client's recycle their memory). Feed it by appending received bytes to the buffer and
/// calling [`FrameDecoder::decode`] until it returns `Ok(None)`; it grows nothing, so a reader
/// makes room for its reads itself ([`FrameDecoder::bytes_needed`] tells how much is missing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameDecoder {
    limits: FrameLimits,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new(DEFAULT_MAX_REQUEST_SIZE)
    }
}

impl FrameDecoder {
    /// Request frames: `max_size` is the largest accepted `size` field (0.7 allows 1..=2^31−1).
    pub fn new(max_size: usize) -> Self {
        FrameDecoder { limits: FrameLimits::new(MIN_REQUEST, max_size.min(i32::MAX as usize)) }
    }

    /// Answer frames (a broker's, read by a client): at least an error code, at most `max_size`.
    pub fn answers(max_size: usize) -> Self {
        FrameDecoder { limits: FrameLimits::new(MIN_ANSWER, max_size.min(i32::MAX as usize)) }
    }

    pub fn max_size(&self) -> usize {
        self.limits.max()
    }

    /// The `size` field at the front of `buf`, checked, if it is there yet.
    pub fn frame_size(&self, buf: &[u8]) -> Result<Option<usize>, ProtocolError> {
        self.limits.size(buf).transpose().map_err(|e| self.refused(e))
    }

    /// Bytes still missing before the next frame is complete (at least 1 while the size field
    /// itself is incomplete). Lets a reader size its next read.
    pub fn bytes_needed(&self, buf: &[u8]) -> Result<usize, ProtocolError> {
        self.limits.missing(buf).map_err(|e| self.refused(e))
    }

    /// Removes and returns the next complete frame's contents (without the size field), or
    /// `Ok(None)` if more bytes are needed. On `Err` the connection should be closed; `buf` is
    /// left as it was.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, ProtocolError> {
        let frame = self.limits.split_frame(buf).map_err(|e| self.refused(e))?;
        Ok(frame.map(|mut frame| {
            frame.advance(SIZE_PREFIX);
            frame
        }))
    }

    /// [`FrameDecoder::decode`] followed by [`Request::decode`].
    pub fn decode_request(&mut self, buf: &mut BytesMut) -> Result<Option<Request>, ProtocolError> {
        match self.decode(buf)? {
            None => Ok(None),
            Some(frame) => Request::decode(frame).map(Some),
        }
    }

    fn refused(&self, e: FrameSizeError) -> ProtocolError {
        let size = match e {
            FrameSizeError::Impossible(size) => size,
            // A size read from an `i32` field.
            FrameSizeError::TooLarge { size, .. } => i32::try_from(size).unwrap_or(i32::MAX),
        };
        ProtocolError::FrameSize { size, max: self.limits.max() }
    }
}
