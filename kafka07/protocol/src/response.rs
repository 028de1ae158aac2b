//! The three 0.7 responses (FETCH, MULTIFETCH, OFFSETS). A frame is `i32 size | i16 error |
//! body`. Responses carry no type, so the client decodes with the type it asked for.
//!
//! The header helpers let a server write the fixed part and then send the message-set bytes
//! straight from a segment file.

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::ProtocolError;
use crate::error_code::ErrorCode;
use crate::reader::Reader;

const I32_LIMIT: usize = i32::MAX as usize;

fn checked_i32(what: &'static str, size: usize) -> Result<i32, ProtocolError> {
    i32::try_from(size).map_err(|_| ProtocolError::TooLargeToEncode { what, size, limit: I32_LIMIT })
}

/// FETCH response, and one entry of a MULTIFETCH response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchResponse {
    pub error: ErrorCode,
    /// Raw log bytes; the last message may be cut off (see [`crate::message_set`]).
    pub messages: Bytes,
}

impl FetchResponse {
    /// `i32 (2 + payload_len)` and `i16 error`: the FETCH frame header, which is also exactly a
    /// MULTIFETCH entry header.
    pub fn header(error: ErrorCode, payload_len: usize) -> Result<[u8; 6], ProtocolError> {
        let size = checked_i32("fetch response", payload_len.saturating_add(2))?;
        let mut h = [0u8; 6];
        h[..4].copy_from_slice(&size.to_be_bytes());
        h[4..].copy_from_slice(&error.code().to_be_bytes());
        Ok(h)
    }

    pub fn encode(&self, out: &mut BytesMut) -> Result<(), ProtocolError> {
        let header = Self::header(self.error, self.messages.len())?;
        out.reserve(6 + self.messages.len());
        out.put_slice(&header);
        out.put_slice(&self.messages);
        Ok(())
    }

    /// Decodes a frame's contents (after the size field): error then the rest as messages.
    pub fn decode(frame: Bytes) -> Result<FetchResponse, ProtocolError> {
        let mut r = Reader::with_base(&frame, 4);
        let error = ErrorCode::from_code(r.get_i16("fetch response error")?)?;
        Ok(FetchResponse { error, messages: frame.slice(2..) })
    }
}

/// MULTIFETCH response: top-level error (always 0 from a 0.7 broker), then one entry per
/// request entry, in request order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiFetchResponse {
    pub error: ErrorCode,
    pub entries: Vec<FetchResponse>,
}

impl MultiFetchResponse {
    /// The frame header for entries whose message bytes total `payload_len` over `count`
    /// entries: `i32 (2 + Σ(6 + N_i))`, `i16 0`.
    pub fn header(count: usize, payload_len: usize) -> Result<[u8; 6], ProtocolError> {
        let size = count.saturating_mul(6).saturating_add(payload_len).saturating_add(2);
        let size = checked_i32("multifetch response", size)?;
        let mut h = [0u8; 6];
        h[..4].copy_from_slice(&size.to_be_bytes());
        h[4..].copy_from_slice(&ErrorCode::NoError.code().to_be_bytes());
        Ok(h)
    }

    pub fn encode(&self, out: &mut BytesMut) -> Result<(), ProtocolError> {
        let payload: usize = self.entries.iter().fold(0usize, |a, e| a.saturating_add(e.messages.len()));
        let mut header = Self::header(self.entries.len(), payload)?;
        header[4..].copy_from_slice(&self.error.code().to_be_bytes());
        out.reserve(6 + 6 * self.entries.len() + payload);
        out.put_slice(&header);
        for e in &self.entries {
            e.encode(out)?;
        }
        Ok(())
    }

    /// Decodes entries until the frame ends (the client knows how many it asked for).
    pub fn decode(frame: Bytes) -> Result<MultiFetchResponse, ProtocolError> {
        let mut r = Reader::with_base(&frame, 4);
        let error = ErrorCode::from_code(r.get_i16("multifetch response error")?)?;
        let mut entries = Vec::new();
        while r.remaining() > 0 {
            let offset = r.abs_offset();
            let len = r.get_len_i32("multifetch entry length")?;
            if len < 2 {
                return Err(ProtocolError::Truncated {
                    what: "multifetch entry error",
                    offset,
                    needed: 2,
                    available: len,
                });
            }
            let entry_error = ErrorCode::from_code(r.get_i16("multifetch entry error")?)?;
            let start = r.position();
            r.get_bytes(len - 2, "multifetch entry messages")?;
            entries.push(FetchResponse { error: entry_error, messages: frame.slice(start..start + len - 2) });
        }
        Ok(MultiFetchResponse { error, entries })
    }
}

/// OFFSETS response: offsets in descending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetsResponse {
    pub error: ErrorCode,
    pub offsets: Vec<i64>,
}

impl OffsetsResponse {
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), ProtocolError> {
        let n = checked_i32("offsets count", self.offsets.len())?;
        let size = checked_i32("offsets response", self.offsets.len().saturating_mul(8).saturating_add(6))?;
        out.reserve(4 + size as usize);
        out.put_i32(size);
        out.put_i16(self.error.code());
        out.put_i32(n);
        for &o in &self.offsets {
            out.put_i64(o);
        }
        Ok(())
    }

    /// Decodes a frame's contents. A count larger than the bytes present is refused before
    /// anything is allocated. A 0.7 broker sends no count with a non-zero error; that decodes
    /// to an empty list.
    pub fn decode(frame: Bytes) -> Result<OffsetsResponse, ProtocolError> {
        let mut r = Reader::with_base(&frame, 4);
        let error = ErrorCode::from_code(r.get_i16("offsets response error")?)?;
        if error != ErrorCode::NoError && r.remaining() == 0 {
            return Ok(OffsetsResponse { error, offsets: Vec::new() });
        }
        let offset = r.abs_offset();
        let n = r.get_len_i32("offsets count")?;
        let max = r.remaining() / 8;
        if n > max {
            return Err(ProtocolError::CountTooLarge { what: "offsets count", offset, value: n, max });
        }
        let mut offsets = Vec::with_capacity(n);
        for _ in 0..n {
            offsets.push(r.get_i64("offset")?);
        }
        Ok(OffsetsResponse { error, offsets })
    }
}
