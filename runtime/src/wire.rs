//! Big-endian wire primitives over `Bytes` (reading) and `BytesMut` (writing).
//!
//! Readers check the bytes present before reading and never advance on failure; errors say
//! what was requested and what was available, like `bytes::TryGetError`.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use uuid::Uuid;

use crate::error::ReadError;
use crate::DecodeError;

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

/// Decodes an unsigned LEB128 varint of at most 5 bytes from the start of `data`, returning it
/// and the bytes it used. The one varint rule of the workspace, Kafka's `ByteUtils`: a fifth
/// byte with its continuation bit set is too long; the bits of a fifth byte beyond the 32 a
/// `u32` holds are dropped, as Java's `int` shift drops them.
#[inline]
pub fn decode_uvarint(data: &[u8]) -> Result<(u32, usize), ReadError> {
    let mut value: u32 = 0;
    for (i, &byte) in data.iter().enumerate().take(5) {
        value |= u32::from(byte & 0x7f).wrapping_shl(7 * i as u32);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    if data.len() >= 5 {
        Err(ReadError::VarintTooLong)
    } else {
        Err(ReadError::NotEnoughBytes { requested: data.len() + 1, available: data.len() })
    }
}

/// [`decode_uvarint`] for a varlong: at most 10 bytes, the bits of a tenth byte beyond 64
/// dropped.
#[inline]
pub fn decode_uvarlong(data: &[u8]) -> Result<(u64, usize), ReadError> {
    let mut value: u64 = 0;
    for (i, &byte) in data.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f).wrapping_shl(7 * i as u32);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    if data.len() >= 10 {
        Err(ReadError::VarintTooLong)
    } else {
        Err(ReadError::NotEnoughBytes { requested: data.len() + 1, available: data.len() })
    }
}

/// Zig-zag decoding of a varint's raw value.
#[inline]
pub const fn zigzag_i32(raw: u32) -> i32 {
    ((raw >> 1) as i32) ^ -((raw & 1) as i32)
}

/// Zig-zag decoding of a varlong's raw value.
#[inline]
pub const fn zigzag_i64(raw: u64) -> i64 {
    ((raw >> 1) as i64) ^ -((raw & 1) as i64)
}

/// Reads an unsigned LEB128 varint of at most 5 bytes (Kafka's `UNSIGNED_VARINT`; see
/// [`decode_uvarint`] for the rule on a fifth byte).
#[inline]
pub fn get_uvarint(buf: &mut Bytes) -> Result<u32, DecodeError> {
    // Fast path: lengths, counts and tags are almost always below 128 (one byte).
    if let Some(&byte) = buf.first() {
        if byte < 0x80 {
            buf.advance(1);
            return Ok(u32::from(byte));
        }
    }
    let (value, used) = decode_uvarint(buf)?;
    buf.advance(used);
    Ok(value)
}

/// Reads an unsigned LEB128 varint of at most 10 bytes.
#[inline]
pub fn get_uvarlong(buf: &mut Bytes) -> Result<u64, DecodeError> {
    let (value, used) = decode_uvarlong(buf)?;
    buf.advance(used);
    Ok(value)
}

/// Reads a zig-zag encoded signed varint (Kafka's `VARINT`).
#[inline]
pub fn get_varint(buf: &mut Bytes) -> Result<i32, DecodeError> {
    get_uvarint(buf).map(zigzag_i32)
}

/// Reads a zig-zag encoded signed varlong (Kafka's `VARLONG`).
#[inline]
pub fn get_varlong(buf: &mut Bytes) -> Result<i64, DecodeError> {
    get_uvarlong(buf).map(zigzag_i64)
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

/// The LEB128 bytes of `value` and how many of them there are: the one varint encoder, shared
/// by the `BytesMut` writers here and by writers into plain `Vec`s (record batches).
#[inline]
pub fn encode_uvarlong(mut value: u64) -> ([u8; 10], usize) {
    let mut out = [0u8; 10];
    let mut n = 0;
    while value >= 0x80 && n < 9 {
        out[n] = (value as u8) | 0x80;
        value >>= 7;
        n += 1;
    }
    out[n] = value as u8;
    (out, n + 1)
}

/// Zig-zag encoding of a signed varint's value.
#[inline]
pub const fn zigzag_encode_i32(value: i32) -> u32 {
    ((value << 1) ^ (value >> 31)) as u32
}

/// Zig-zag encoding of a signed varlong's value.
#[inline]
pub const fn zigzag_encode_i64(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// Writes an unsigned LEB128 varint.
#[inline]
pub fn put_uvarint(buf: &mut BytesMut, value: u32) {
    if value < 0x80 {
        buf.put_u8(value as u8);
    } else {
        put_uvarlong(buf, u64::from(value));
    }
}

/// Writes an unsigned LEB128 varlong.
#[inline]
pub fn put_uvarlong(buf: &mut BytesMut, value: u64) {
    put_uvarlong_into(buf, value);
}

/// Writes an unsigned LEB128 varlong to any buffer: the one varint writer, which record
/// batches and sample instances (built in `Vec<u8>`s) share with the messages.
#[inline]
pub fn put_uvarlong_into(buf: &mut impl BufMut, value: u64) {
    let (bytes, n) = encode_uvarlong(value);
    buf.put_slice(&bytes[..n]);
}

/// Writes a zig-zag encoded signed varint.
#[inline]
pub fn put_varint(buf: &mut BytesMut, value: i32) {
    put_uvarint(buf, zigzag_encode_i32(value));
}

/// Writes a zig-zag encoded signed varlong.
#[inline]
pub fn put_varlong(buf: &mut BytesMut, value: i64) {
    put_uvarlong(buf, zigzag_encode_i64(value));
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
    uvarint_size(zigzag_encode_i32(value))
}

/// Bytes a zig-zag varlong takes.
#[inline]
pub const fn varlong_size(value: i64) -> usize {
    uvarlong_size(zigzag_encode_i64(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DecodeErrorKind;

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
    }

    // Zig-zag encodings as specified by Protocol Buffers, whose varints Kafka uses.
    #[test]
    fn kafka_reference_encodings() {
        let varints: [(i32, &[u8]); 8] = [
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (63, &[0x7e]),
            (-64, &[0x7f]),
            (64, &[0x80, 0x01]),
            (i32::MAX, &[0xfe, 0xff, 0xff, 0xff, 0x0f]),
            (i32::MIN, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ];
        for (value, bytes) in varints {
            let mut out = BytesMut::new();
            put_varint(&mut out, value);
            assert_eq!(&out[..], bytes, "encoding {value}");
            assert_eq!(varint_size(value), bytes.len());
            assert_eq!(get_varint(&mut Bytes::from_static(bytes)).unwrap(), value);
            // A varint is also a valid varlong of the same value.
            assert_eq!(get_varlong(&mut Bytes::from_static(bytes)).unwrap(), i64::from(value));
        }
        let long_min: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(get_varlong(&mut Bytes::from_static(long_min)).unwrap(), i64::MIN);
    }

    /// Both edges of Kafka's `ByteUtils.readUnsignedVarint`: a fifth byte may carry any of its
    /// seven value bits (those beyond bit 31 are dropped, as Java's `int` shift drops them), and
    /// a fifth byte with the continuation bit is too long. The same for a varlong's tenth byte.
    #[test]
    fn a_fifth_byte_follows_java() {
        let fits = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(get_uvarint(&mut fits.clone()).unwrap(), u32::MAX);
        let mut high_bits = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x7f, 0xaa]);
        assert_eq!(get_uvarint(&mut high_bits).unwrap(), u32::MAX);
        assert_eq!(&high_bits[..], &[0xaa], "the five bytes are consumed");
        let mut continued = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x80, 0x01]);
        assert_eq!(get_uvarint(&mut continued).unwrap_err().kind(), &DecodeErrorKind::VarintTooLong);
        assert_eq!(continued.len(), 6, "a failed read does not advance");
        let mut tenth = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(get_uvarlong(&mut tenth).unwrap(), u64::MAX);
        let mut eleven = Bytes::from_static(&[0xff; 11]);
        assert_eq!(get_uvarlong(&mut eleven).unwrap_err().kind(), &DecodeErrorKind::VarintTooLong);
        // The slice reader of record batches and 0.7 requests reads the same way.
        let mut r = crate::reader::SliceReader::new(&[0xfe, 0xff, 0xff, 0xff, 0x7f], 0);
        assert_eq!(r.get_varint(), Ok(i32::MAX));
    }
}
