//! Incremental framing: `i32 size` then `size` bytes, arriving in any number of pieces. The
//! size is checked (`0 < size ≤ max`) as soon as its 4 bytes are present, before any buffer is
//! grown for the body.

use bytes::{Buf, Bytes, BytesMut};
use kwire_runtime::reader::SliceReader;

use crate::error::ProtocolError;
use crate::request::Request;

/// 0.7's default `max.socket.request.bytes` (100 MiB).
pub const DEFAULT_MAX_REQUEST_SIZE: usize = 104_857_600;

/// Most a single `decode` call reserves ahead of the received bytes.
const RESERVE_STEP: usize = 1 << 20;

/// Splits frames off the front of a receive buffer. Feed it by appending received bytes to the
/// buffer and calling [`FrameDecoder::decode`] until it returns `Ok(None)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameDecoder {
    max_size: usize,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder { max_size: DEFAULT_MAX_REQUEST_SIZE }
    }
}

impl FrameDecoder {
    /// `max_size` is the largest accepted `size` field (0.7 allows 1..=2^31−1).
    pub fn new(max_size: usize) -> Self {
        FrameDecoder { max_size: max_size.min(i32::MAX as usize) }
    }

    pub fn max_size(&self) -> usize {
        self.max_size
    }

    /// Checks the size field at the front of `buf`, if it is there yet.
    fn frame_size(&self, buf: &[u8]) -> Result<Option<usize>, ProtocolError> {
        let Ok(size) = SliceReader::new(buf, 0).get_i32() else { return Ok(None) };
        match usize::try_from(size) {
            Ok(n) if n > 0 && n <= self.max_size => Ok(Some(n)),
            _ => Err(ProtocolError::FrameSize { size, max: self.max_size }),
        }
    }

    /// Bytes still missing before the next frame is complete (at least 1 while the size field
    /// itself is incomplete). Lets a reader size its next read.
    pub fn bytes_needed(&self, buf: &[u8]) -> Result<usize, ProtocolError> {
        match self.frame_size(buf)? {
            None => Ok(4 - buf.len()),
            Some(n) => Ok((4 + n).saturating_sub(buf.len())),
        }
    }

    /// Removes and returns the next complete frame's contents (without the size field), or
    /// `Ok(None)` if more bytes are needed. On `Err` the connection should be closed; `buf` is
    /// left as it was.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, ProtocolError> {
        let Some(size) = self.frame_size(buf)? else { return Ok(None) };
        if buf.len() < 4 + size {
            // Grow towards the frame, but never by more than RESERVE_STEP ahead of the data
            // actually received: a peer announcing 100 MiB and sending nothing costs little.
            buf.reserve((4 + size - buf.len()).min(RESERVE_STEP));
            return Ok(None);
        }
        buf.advance(4);
        Ok(Some(buf.split_to(size).freeze()))
    }

    /// [`FrameDecoder::decode`] followed by [`Request::decode`].
    pub fn decode_request(&mut self, buf: &mut BytesMut) -> Result<Option<Request>, ProtocolError> {
        match self.decode(buf)? {
            None => Ok(None),
            Some(frame) => Request::decode(frame).map(Some),
        }
    }
}
