//! The runtime's bounds-checked [`SliceReader`], naming each field it reads: a truncated input
//! yields an error saying which field, where in the frame, what was requested and what was
//! available.

use kwire_runtime::reader::{ReadError, SliceReader};

use crate::error::ProtocolError;

pub(crate) struct Reader<'a> {
    inner: SliceReader<'a>,
    /// Added to the position in error messages, so offsets refer to the whole frame.
    base: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn with_base(buf: &'a [u8], base: usize) -> Self {
        Reader { inner: SliceReader::new(buf, 0), base }
    }

    pub(crate) fn position(&self) -> usize {
        self.inner.position()
    }

    pub(crate) fn remaining(&self) -> usize {
        self.inner.remaining()
    }

    pub(crate) fn abs_offset(&self) -> usize {
        self.base.saturating_add(self.inner.position())
    }

    fn named<T>(&self, what: &'static str, read: Result<T, ReadError>) -> Result<T, ProtocolError> {
        read.map_err(|e| match e {
            ReadError::NotEnoughBytes { requested, available } => {
                ProtocolError::Truncated { what, offset: self.abs_offset(), needed: requested, available }
            }
            // Nothing in the 0.7 format is a varint.
            ReadError::VarintTooLong => {
                ProtocolError::Truncated { what, offset: self.abs_offset(), needed: 0, available: 0 }
            }
        })
    }

    pub(crate) fn get_bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ProtocolError> {
        let read = self.inner.get_slice(n);
        self.named(what, read)
    }

    pub(crate) fn get_i16(&mut self, what: &'static str) -> Result<i16, ProtocolError> {
        let read = self.inner.get_i16();
        self.named(what, read)
    }

    pub(crate) fn get_i32(&mut self, what: &'static str) -> Result<i32, ProtocolError> {
        let read = self.inner.get_i32();
        self.named(what, read)
    }

    pub(crate) fn get_i64(&mut self, what: &'static str) -> Result<i64, ProtocolError> {
        let read = self.inner.get_i64();
        self.named(what, read)
    }

    /// A length field that must be ≥ 0.
    pub(crate) fn get_len_i32(&mut self, what: &'static str) -> Result<usize, ProtocolError> {
        let offset = self.abs_offset();
        let v = self.get_i32(what)?;
        usize::try_from(v).map_err(|_| ProtocolError::NegativeLength { what, offset, value: v.into() })
    }

    /// A count or length field that must be ≥ 0.
    pub(crate) fn get_len_i16(&mut self, what: &'static str) -> Result<usize, ProtocolError> {
        let offset = self.abs_offset();
        let v = self.get_i16(what)?;
        usize::try_from(v).map_err(|_| ProtocolError::NegativeLength { what, offset, value: v.into() })
    }
}
