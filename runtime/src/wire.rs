//! Big-endian wire primitives over `Bytes` (reading) and `BytesMut` (writing).
//!
//! Readers check the bytes present before reading and never advance on failure; errors say
//! what was requested and what was available, like `bytes::TryGetError`.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use uuid::Uuid;

use crate::{DecodeError, DecodeErrorKind};

#[inline]
fn need(buf: &Bytes, n: usize) -> Result<(), DecodeError> {
    if buf.len() < n {
        Err(DecodeError::not_enough(n, buf.len()))
    } else {
        Ok(())
    }
}

macro_rules! getters {
    ($($(#[$doc:meta])* $name:ident -> $ty:ty, $n:literal;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name(buf: &mut Bytes) -> Result<$ty, DecodeError> {
            // One length check: `first_chunk` proves the bytes are there, so neither the
            // conversion nor `advance` re-checks (Bytes::get_* would check twice more).
            match buf.first_chunk::<$n>() {
                Some(raw) => {
                    let value = <$ty>::from_be_bytes(*raw);
                    buf.advance($n);
                    Ok(value)
                }
                None => Err(DecodeError::not_enough($n, buf.len())),
            }
        }
    )*};
}

getters! {
    /// Reads an `i8`. The position advances by 1.
    get_i8 -> i8, 1;
    /// Reads a big-endian `i16`. The position advances by 2.
    get_i16 -> i16, 2;
    /// Reads a big-endian `u16`. The position advances by 2.
    get_u16 -> u16, 2;
    /// Reads a big-endian `i32`. The position advances by 4.
    get_i32 -> i32, 4;
    /// Reads a big-endian `u32`. The position advances by 4.
    get_u32 -> u32, 4;
    /// Reads a big-endian `i64`. The position advances by 8.
    get_i64 -> i64, 8;
    /// Reads a big-endian IEEE 754 `f64`. The position advances by 8.
    get_f64 -> f64, 8;
}

/// Reads a boolean byte; any non-zero value is `true`, as Kafka reads it.
#[inline]
pub fn get_bool(buf: &mut Bytes) -> Result<bool, DecodeError> {
    Ok(get_i8(buf)? != 0)
}

/// Reads a 16-byte UUID.
#[inline]
pub fn get_uuid(buf: &mut Bytes) -> Result<Uuid, DecodeError> {
    match buf.first_chunk::<16>() {
        Some(raw) => {
            let value = Uuid::from_bytes(*raw);
            buf.advance(16);
            Ok(value)
        }
        None => Err(DecodeError::not_enough(16, buf.len())),
    }
}

/// Splits off the next `n` bytes without copying.
#[inline]
pub fn take(buf: &mut Bytes, n: usize) -> Result<Bytes, DecodeError> {
    need(buf, n)?;
    Ok(buf.split_to(n))
}

/// Reads an unsigned LEB128 varint of at most 5 bytes (Kafka's `UNSIGNED_VARINT`).
#[inline]
pub fn get_uvarint(buf: &mut Bytes) -> Result<u32, DecodeError> {
    // Fast path: lengths, counts and tags are almost always below 128 (one byte).
    if let Some(&byte) = buf.first() {
        if byte < 0x80 {
            buf.advance(1);
            return Ok(u32::from(byte));
        }
    }
    let mut value: u32 = 0;
    for (i, &byte) in buf.iter().enumerate().take(5) {
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            if i == 4 && byte > 0x0f {
                return Err(DecodeError::new(DecodeErrorKind::VarintTooLong));
            }
            buf.advance(i + 1);
            return Ok(value);
        }
    }
    if buf.len() >= 5 {
        Err(DecodeError::new(DecodeErrorKind::VarintTooLong))
    } else {
        Err(DecodeError::not_enough(buf.len() + 1, buf.len()))
    }
}

/// Reads an unsigned LEB128 varint of at most 10 bytes.
#[inline]
pub fn get_uvarlong(buf: &mut Bytes) -> Result<u64, DecodeError> {
    let mut value: u64 = 0;
    for (i, &byte) in buf.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            if i == 9 && byte > 0x01 {
                return Err(DecodeError::new(DecodeErrorKind::VarintTooLong));
            }
            buf.advance(i + 1);
            return Ok(value);
        }
    }
    if buf.len() >= 10 {
        Err(DecodeError::new(DecodeErrorKind::VarintTooLong))
    } else {
        Err(DecodeError::not_enough(buf.len() + 1, buf.len()))
    }
}

/// Reads a zig-zag encoded signed varint (Kafka's `VARINT`).
#[inline]
pub fn get_varint(buf: &mut Bytes) -> Result<i32, DecodeError> {
    let raw = get_uvarint(buf)?;
    Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
}

/// Reads a zig-zag encoded signed varlong (Kafka's `VARLONG`).
#[inline]
pub fn get_varlong(buf: &mut Bytes) -> Result<i64, DecodeError> {
    let raw = get_uvarlong(buf)?;
    Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
}

/// Writes a boolean as one byte, 0 or 1.
#[inline]
pub fn put_bool(buf: &mut BytesMut, value: bool) {
    buf.put_u8(u8::from(value));
}

/// Writes a 16-byte UUID.
#[inline]
pub fn put_uuid(buf: &mut BytesMut, value: &Uuid) {
    buf.put_slice(value.as_bytes());
}

/// Writes an unsigned LEB128 varint.
#[inline]
pub fn put_uvarint(buf: &mut BytesMut, mut value: u32) {
    while value >= 0x80 {
        buf.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

/// Writes an unsigned LEB128 varlong.
#[inline]
pub fn put_uvarlong(buf: &mut BytesMut, mut value: u64) {
    while value >= 0x80 {
        buf.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

/// Writes a zig-zag encoded signed varint.
#[inline]
pub fn put_varint(buf: &mut BytesMut, value: i32) {
    put_uvarint(buf, ((value << 1) ^ (value >> 31)) as u32);
}

/// Writes a zig-zag encoded signed varlong.
#[inline]
pub fn put_varlong(buf: &mut BytesMut, value: i64) {
    put_uvarlong(buf, ((value << 1) ^ (value >> 63)) as u64);
}

/// Bytes an unsigned varint takes.
#[inline]
pub const fn uvarint_size(value: u32) -> usize {
    match value {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0xfff_ffff => 4,
        _ => 5,
    }
}

/// Bytes an unsigned varlong takes.
#[inline]
pub const fn uvarlong_size(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Bytes a zig-zag varint takes.
#[inline]
pub const fn varint_size(value: i32) -> usize {
    uvarint_size(((value << 1) ^ (value >> 31)) as u32)
}

/// Bytes a zig-zag varlong takes.
#[inline]
pub const fn varlong_size(value: i64) -> usize {
    uvarlong_size(((value << 1) ^ (value >> 63)) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_size() {
        for v in [0u32, 1, 127, 128, 16383, 16384, u32::MAX] {
            let mut b = BytesMut::new();
            put_uvarint(&mut b, v);
            assert_eq!(b.len(), uvarint_size(v));
            assert_eq!(get_uvarint(&mut b.freeze()).unwrap(), v);
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, 300, -300] {
            let mut b = BytesMut::new();
            put_varlong(&mut b, v);
            assert_eq!(b.len(), varlong_size(v));
            assert_eq!(get_varlong(&mut b.freeze()).unwrap(), v);
        }
    }

    #[test]
    fn short_reads_report_sizes_and_do_not_advance() {
        let mut b = Bytes::from_static(&[1, 2, 3]);
        let err = get_i32(&mut b).unwrap_err();
        assert_eq!(err.kind(), &DecodeErrorKind::NotEnoughBytes { requested: 4, available: 3 });
        assert_eq!(b.len(), 3);
        let mut v = Bytes::from_static(&[0x80, 0x80]);
        assert!(get_uvarint(&mut v).is_err());
        let mut long = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(get_uvarint(&mut long).unwrap_err().kind(), &DecodeErrorKind::VarintTooLong);
    }
}
