//! A bounds-checked big-endian reader over a byte slice, for formats read in place (record
//! batches, Kafka 0.7 requests) rather than split off a `Bytes` like generated messages.
//!
//! It shares its varint decoding with [`crate::wire`], so both follow one rule (Kafka's
//! `ByteUtils`). A failed read does not advance. Callers attach the structure, field and offset
//! to a [`ReadError`].

use std::ops::Range;

pub use crate::error::ReadError;
use crate::wire::{decode_uvarint, decode_uvarlong, zigzag_i32, zigzag_i64};

/// A position in a byte slice; every read checks the bytes present first.
#[derive(Debug, Clone)]
pub struct SliceReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> SliceReader<'a> {
    /// A reader over `data` starting at byte `pos`.
    pub fn new(data: &'a [u8], pos: usize) -> Self {
        SliceReader { data, pos }
    }

    /// The position of the next byte to read, counted from the start of `data`.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left after the position.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let bytes = self
            .data
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk::<N>())
            .ok_or(ReadError::NotEnoughBytes { requested: N, available: self.remaining() })?;
        self.pos += N;
        Ok(*bytes)
    }

    /// Reads an `i8`.
    pub fn get_i8(&mut self) -> Result<i8, ReadError> {
        self.array::<1>().map(i8::from_be_bytes)
    }

    /// Reads a big-endian `i16`.
    pub fn get_i16(&mut self) -> Result<i16, ReadError> {
        self.array::<2>().map(i16::from_be_bytes)
    }

    /// Reads a big-endian `i32`.
    pub fn get_i32(&mut self) -> Result<i32, ReadError> {
        self.array::<4>().map(i32::from_be_bytes)
    }

    /// Reads a big-endian `u32`.
    pub fn get_u32(&mut self) -> Result<u32, ReadError> {
        self.array::<4>().map(u32::from_be_bytes)
    }

    /// Reads a big-endian `i64`.
    pub fn get_i64(&mut self) -> Result<i64, ReadError> {
        self.array::<8>().map(i64::from_be_bytes)
    }

    /// Skips `len` bytes and returns their range in `data`.
    pub fn skip(&mut self, len: usize) -> Result<Range<usize>, ReadError> {
        let available = self.remaining();
        if len > available {
            return Err(ReadError::NotEnoughBytes { requested: len, available });
        }
        let start = self.pos;
        self.pos += len;
        Ok(start..self.pos)
    }

    /// Takes the next `len` bytes.
    pub fn get_slice(&mut self, len: usize) -> Result<&'a [u8], ReadError> {
        let range = self.skip(len)?;
        Ok(&self.data[range])
    }

    /// Reads a zig-zag varint (Kafka's `VARINT`).
    #[inline]
    pub fn get_varint(&mut self) -> Result<i32, ReadError> {
        let (raw, used) = decode_uvarint(self.data.get(self.pos..).unwrap_or_default())?;
        self.pos += used;
        Ok(zigzag_i32(raw))
    }

    /// Reads a zig-zag varlong (Kafka's `VARLONG`).
    #[inline]
    pub fn get_varlong(&mut self) -> Result<i64, ReadError> {
        let (raw, used) = decode_uvarlong(self.data.get(self.pos..).unwrap_or_default())?;
        self.pos += used;
        Ok(zigzag_i64(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_reads_say_what_was_missing_and_do_not_advance() {
        let mut r = SliceReader::new(&[1, 2, 3], 1);
        assert_eq!(r.get_i32(), Err(ReadError::NotEnoughBytes { requested: 4, available: 2 }));
        assert_eq!(r.position(), 1);
        assert_eq!(r.get_i16(), Ok(0x0203));
        assert_eq!(r.skip(1), Err(ReadError::NotEnoughBytes { requested: 1, available: 0 }));
    }

    #[test]
    fn varints_read_as_the_bytes_based_readers_do() {
        let min: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(SliceReader::new(min, 0).get_varint(), Ok(i32::MIN));
        let long_min: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(SliceReader::new(long_min, 0).get_varlong(), Ok(i64::MIN));
        let six: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(SliceReader::new(six, 0).get_varint(), Err(ReadError::VarintTooLong));
        let cut: &[u8] = &[0x80];
        assert!(matches!(SliceReader::new(cut, 0).get_varint(), Err(ReadError::NotEnoughBytes { .. })));
    }
}
