//! A bounds-checked reader over a byte slice, for batch and record fields.
//!
//! Failures come back as a [`Malformation`]; the caller attaches the structure, field and
//! offset. Varints follow Kafka's `ByteUtils`: zig-zag, at most 5 bytes (varint) or 10 bytes
//! (varlong), high bits of the last byte ignored as Java ignores them.

use super::error::Malformation;

pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], pos: usize) -> Self {
        Cursor { data, pos }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformation> {
        let bytes = self
            .data
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk::<N>())
            .ok_or(Malformation::NotEnoughBytes { requested: N, available: self.remaining() })?;
        self.pos += N;
        Ok(*bytes)
    }

    pub(crate) fn i8(&mut self) -> Result<i8, Malformation> {
        self.array::<1>().map(i8::from_be_bytes)
    }

    pub(crate) fn i16(&mut self) -> Result<i16, Malformation> {
        self.array::<2>().map(i16::from_be_bytes)
    }

    pub(crate) fn i32(&mut self) -> Result<i32, Malformation> {
        self.array::<4>().map(i32::from_be_bytes)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Malformation> {
        self.array::<4>().map(u32::from_be_bytes)
    }

    pub(crate) fn i64(&mut self) -> Result<i64, Malformation> {
        self.array::<8>().map(i64::from_be_bytes)
    }

    /// Skips `len` bytes and returns their range.
    pub(crate) fn skip(&mut self, len: usize) -> Result<std::ops::Range<usize>, Malformation> {
        let available = self.remaining();
        if len > available {
            return Err(Malformation::NotEnoughBytes { requested: len, available });
        }
        let start = self.pos;
        self.pos += len;
        Ok(start..self.pos)
    }

    /// A zig-zag varint (Kafka `VARINT`).
    #[inline]
    pub(crate) fn varint(&mut self) -> Result<i32, Malformation> {
        // Fast path: one byte covers -64..=63, which is most lengths and deltas of 0.
        if let Some(&byte) = self.data.get(self.pos) {
            if byte & 0x80 == 0 {
                self.pos += 1;
                let raw = u32::from(byte);
                return Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32));
            }
        }
        let mut raw: u32 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = self.data.get(self.pos) else {
                return Err(Malformation::NotEnoughBytes { requested: 1, available: 0 });
            };
            self.pos += 1;
            raw |= u32::from(byte & 0x7f).wrapping_shl(shift);
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 28 {
                return Err(Malformation::VarintTooLong);
            }
        }
        Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
    }

    /// A zig-zag varlong (Kafka `VARLONG`).
    #[inline]
    pub(crate) fn varlong(&mut self) -> Result<i64, Malformation> {
        let mut raw: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = self.data.get(self.pos) else {
                return Err(Malformation::NotEnoughBytes { requested: 1, available: 0 });
            };
            self.pos += 1;
            raw |= u64::from(byte & 0x7f).wrapping_shl(shift);
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return Err(Malformation::VarintTooLong);
            }
        }
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }
}

/// Appends a zig-zag varint.
#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, value: i32) {
    put_uvarint64(out, u64::from(((value << 1) ^ (value >> 31)) as u32));
}

/// Appends a zig-zag varlong.
#[inline]
pub(crate) fn put_varlong(out: &mut Vec<u8>, value: i64) {
    put_uvarint64(out, ((value << 1) ^ (value >> 63)) as u64);
}

#[inline]
fn put_uvarint64(out: &mut Vec<u8>, mut raw: u64) {
    while raw >= 0x80 {
        out.push((raw as u8 & 0x7f) | 0x80);
        raw >>= 7;
    }
    out.push(raw as u8);
}

/// Bytes a zig-zag varint of `value` takes.
pub(crate) fn varint_len(value: i32) -> usize {
    let raw = ((value << 1) ^ (value >> 31)) as u32;
    match raw {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0xfff_ffff => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Zig-zag encodings as specified by Protocol Buffers, whose varints Kafka uses.
    #[test]
    fn kafka_reference_encodings() {
        let varints: [(i32, &[u8]); 6] =
            [(0, &[0x00]), (-1, &[0x01]), (1, &[0x02]), (63, &[0x7e]), (-64, &[0x7f]), (64, &[0x80, 0x01])];
        for (value, bytes) in varints {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(out, bytes, "encoding {value}");
            assert_eq!(Cursor::new(bytes, 0).varint(), Ok(value));
            assert_eq!(varint_len(value), bytes.len());
        }
        let max: &[u8] = &[0xfe, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(Cursor::new(max, 0).varint(), Ok(i32::MAX));
        let min: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(Cursor::new(min, 0).varint(), Ok(i32::MIN));
        let long_min: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Cursor::new(long_min, 0).varlong(), Ok(i64::MIN));
    }

    #[test]
    fn overlong_varints_are_rejected() {
        let six: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Cursor::new(six, 0).varint(), Err(Malformation::VarintTooLong));
        let eleven: &[u8] = &[0xff; 11];
        assert_eq!(Cursor::new(eleven, 0).varlong(), Err(Malformation::VarintTooLong));
        let cut: &[u8] = &[0x80];
        assert!(matches!(Cursor::new(cut, 0).varint(), Err(Malformation::NotEnoughBytes { .. })));
    }

    proptest! {
        #[test]
        fn varint_round_trips(value: i32) {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            prop_assert_eq!(out.len(), varint_len(value));
            let mut cursor = Cursor::new(&out, 0);
            prop_assert_eq!(cursor.varint(), Ok(value));
            prop_assert_eq!(cursor.remaining(), 0);
            // A varint is also a valid varlong of the same value.
            prop_assert_eq!(Cursor::new(&out, 0).varlong(), Ok(i64::from(value)));
        }

        #[test]
        fn varlong_round_trips(value: i64) {
            let mut out = Vec::new();
            put_varlong(&mut out, value);
            let mut cursor = Cursor::new(&out, 0);
            prop_assert_eq!(cursor.varlong(), Ok(value));
            prop_assert_eq!(cursor.remaining(), 0);
        }
    }
}
