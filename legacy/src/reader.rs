//! A bounds-checked big-endian cursor: every read names the field it wanted, so a truncated
//! input yields an error saying what was requested and what was available.

use crate::error::LegacyError;

pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Added to `pos` in error messages, so offsets refer to the whole frame.
    base: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn with_base(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn abs_offset(&self) -> usize {
        self.base.saturating_add(self.pos)
    }

    pub(crate) fn get_bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], LegacyError> {
        let available = self.remaining();
        if n > available {
            return Err(LegacyError::Truncated { what, offset: self.abs_offset(), needed: n, available });
        }
        let start = self.pos;
        self.pos += n;
        Ok(&self.buf[start..self.pos])
    }

    fn get_array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], LegacyError> {
        let bytes = self.get_bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub(crate) fn get_i16(&mut self, what: &'static str) -> Result<i16, LegacyError> {
        Ok(i16::from_be_bytes(self.get_array(what)?))
    }

    pub(crate) fn get_i32(&mut self, what: &'static str) -> Result<i32, LegacyError> {
        Ok(i32::from_be_bytes(self.get_array(what)?))
    }

    pub(crate) fn get_i64(&mut self, what: &'static str) -> Result<i64, LegacyError> {
        Ok(i64::from_be_bytes(self.get_array(what)?))
    }

    /// A length field that must be ≥ 0.
    pub(crate) fn get_len_i32(&mut self, what: &'static str) -> Result<usize, LegacyError> {
        let offset = self.abs_offset();
        let v = self.get_i32(what)?;
        usize::try_from(v).map_err(|_| LegacyError::NegativeLength { what, offset, value: v.into() })
    }

    /// A count or length field that must be ≥ 0.
    pub(crate) fn get_len_i16(&mut self, what: &'static str) -> Result<usize, LegacyError> {
        let offset = self.abs_offset();
        let v = self.get_i16(what)?;
        usize::try_from(v).map_err(|_| LegacyError::NegativeLength { what, offset, value: v.into() })
    }
}
