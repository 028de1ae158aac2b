//! The buffer generated encoders write into: contiguous, or vectored so that large byte and
//! record fields are handed over by reference instead of copied.

use std::ops::{Deref, DerefMut};

use bytes::{BufMut, Bytes, BytesMut};

/// Byte and record fields at least this long are shared rather than copied by a vectored
/// encode. Below it a copy is cheaper than one more chunk (an atomic count and an iovec).
pub const DEFAULT_SHARE_FROM: usize = 1024;

/// Where an encoder writes.
///
/// A contiguous writer copies everything into one [`BytesMut`]. A vectored writer copies the
/// small fields too, but a `bytes` or `records` value of at least `share_from` bytes ends the
/// current chunk and is appended as a clone of the value's own [`Bytes`] (a reference count,
/// no copy), ready for `writev`. That is what makes a FetchResponse of many megabytes cost
/// no more to encode than its headers.
///
/// Fixed-width writes go straight to the current chunk (`Writer` dereferences to it).
#[derive(Debug, Default)]
pub struct Writer {
    buf: BytesMut,
    chunks: Vec<Bytes>,
    share_from: usize,
}

impl Writer {
    /// A writer that copies everything into `buf`, after what it already holds.
    pub fn contiguous(buf: BytesMut) -> Self {
        Writer { buf, chunks: Vec::new(), share_from: usize::MAX }
    }

    /// A writer that shares byte and record values of at least `share_from` bytes. `scratch`
    /// (which should be empty) receives the copied parts; its spare capacity is reused.
    pub fn vectored(scratch: BytesMut, chunks: Vec<Bytes>, share_from: usize) -> Self {
        Writer { buf: scratch, chunks, share_from: share_from.max(1) }
    }

    /// Appends a byte value: shared when it is long enough and the writer is vectored,
    /// copied otherwise.
    #[inline]
    pub fn put_shareable(&mut self, value: &Bytes) {
        if value.len() >= self.share_from {
            self.share(value);
        } else {
            self.buf.put_slice(value);
        }
    }

    #[inline(never)]
    fn share(&mut self, value: &Bytes) {
        if !self.buf.is_empty() {
            self.chunks.push(self.buf.split().freeze());
        }
        self.chunks.push(value.clone());
    }

    /// Bytes written so far, in every chunk.
    pub fn written(&self) -> usize {
        self.chunks.iter().map(Bytes::len).sum::<usize>() + self.buf.len()
    }

    /// The contiguous buffer of a contiguous writer.
    ///
    /// On a vectored writer this is only the part after the last shared value; use
    /// [`Writer::into_chunks`] there.
    pub fn into_inner(self) -> BytesMut {
        debug_assert!(self.chunks.is_empty(), "into_inner on a vectored writer that shared values");
        self.buf
    }

    /// Every chunk in order, and the scratch buffer (emptied, keeping its spare capacity).
    pub fn into_chunks(mut self) -> (Vec<Bytes>, BytesMut) {
        if !self.buf.is_empty() {
            self.chunks.push(self.buf.split().freeze());
        }
        (self.chunks, self.buf)
    }
}

/// Runs `write` on a contiguous writer appending to `buf`.
pub fn write_contiguous<E>(buf: &mut BytesMut, write: impl FnOnce(&mut Writer) -> Result<(), E>) -> Result<(), E> {
    let mut writer = Writer::contiguous(std::mem::take(buf));
    let result = write(&mut writer);
    *buf = writer.into_inner();
    result
}

/// Runs `write` on a vectored writer sharing values of [`DEFAULT_SHARE_FROM`] bytes or more,
/// appending its chunks to `chunks`; `scratch` is left empty with its spare capacity.
pub fn write_vectored<E>(
    scratch: &mut BytesMut,
    chunks: &mut Vec<Bytes>,
    write: impl FnOnce(&mut Writer) -> Result<(), E>,
) -> Result<(), E> {
    let mut writer = Writer::vectored(std::mem::take(scratch), std::mem::take(chunks), DEFAULT_SHARE_FROM);
    let result = write(&mut writer);
    (*chunks, *scratch) = writer.into_chunks();
    result
}

impl Deref for Writer {
    type Target = BytesMut;
    #[inline]
    fn deref(&self) -> &BytesMut {
        &self.buf
    }
}

impl DerefMut for Writer {
    #[inline]
    fn deref_mut(&mut self) -> &mut BytesMut {
        &mut self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectored_shares_long_values_and_copies_short_ones() {
        let long = Bytes::from(vec![7u8; 64]);
        let mut w = Writer::vectored(BytesMut::new(), Vec::new(), 16);
        w.put_u8(1);
        w.put_shareable(&Bytes::from_static(b"short"));
        w.put_shareable(&long);
        w.put_u8(2);
        w.put_shareable(&long);
        assert_eq!(w.written(), 1 + 5 + 64 + 1 + 64);
        let (chunks, scratch) = w.into_chunks();
        assert!(scratch.is_empty());
        let lens: Vec<usize> = chunks.iter().map(Bytes::len).collect();
        assert_eq!(lens, [6, 64, 1, 64]);
        // The long values are the caller's allocation, not copies.
        assert_eq!(chunks[1].as_ptr(), long.as_ptr());
        assert_eq!(chunks[3].as_ptr(), long.as_ptr());
    }

    #[test]
    fn contiguous_copies_everything() {
        let mut w = Writer::contiguous(BytesMut::from(&b"ab"[..]));
        w.put_shareable(&Bytes::from(vec![1u8; 5000]));
        assert_eq!(w.written(), 5002);
        assert_eq!(w.into_inner().len(), 5002);
    }
}
