//! The bytes a connection has yet to write, as chunks: the request frames' headers and small
//! fields copied into buffers of the connection's own, and every large `bytes` or `records`
//! value (a producer's record batches) the caller's own [`Bytes`], shared rather than copied,
//! so a batch reaches the socket through `writev` without another copy after it was built.

use std::collections::VecDeque;
use std::io::IoSlice;

use bytes::{Buf, Bytes, BytesMut};

/// Chunks of bytes waiting to be written, in order; a [`Buf`] whose
/// [`chunks_vectored`](Buf::chunks_vectored) hands them all to one vectored write
/// (tokio's `write_all_buf` uses it when the stream supports vectored writes).
#[derive(Debug, Default, Clone)]
pub struct Outgoing {
    chunks: VecDeque<Bytes>,
    remaining: usize,
}

impl Outgoing {
    /// No bytes.
    pub fn new() -> Self {
        Outgoing::default()
    }

    /// Appends `chunk` (an empty one is dropped: [`Buf::chunk`] must not be empty while bytes
    /// remain).
    pub fn push(&mut self, chunk: Bytes) {
        if !chunk.is_empty() {
            self.remaining += chunk.len();
            self.chunks.push_back(chunk);
        }
    }

    /// Appends every chunk of `other`, leaving it empty.
    pub fn append(&mut self, other: &mut Outgoing) {
        self.remaining += other.remaining;
        self.chunks.append(&mut other.chunks);
        other.remaining = 0;
    }

    /// How many chunks the bytes are in.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Every byte in one contiguous buffer (a copy, unless there is a single chunk).
    pub fn concat(&self) -> Bytes {
        match self.chunks.len() {
            0 => Bytes::new(),
            1 => self.chunks[0].clone(),
            _ => {
                let mut all = BytesMut::with_capacity(self.remaining);
                for chunk in &self.chunks {
                    all.extend_from_slice(chunk);
                }
                all.freeze()
            }
        }
    }
}

impl Buf for Outgoing {
    fn remaining(&self) -> usize {
        self.remaining
    }

    fn chunk(&self) -> &[u8] {
        self.chunks.front().map_or(&[], |chunk| &chunk[..])
    }

    fn advance(&mut self, mut cnt: usize) {
        assert!(cnt <= self.remaining, "advance past the end: {cnt} of {} bytes", self.remaining);
        self.remaining -= cnt;
        while cnt > 0 {
            let front = self.chunks.front_mut().expect("bytes remain, so a chunk does");
            if cnt < front.len() {
                front.advance(cnt);
                return;
            }
            cnt -= front.len();
            self.chunks.pop_front();
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, chunk) in dst.iter_mut().zip(&self.chunks) {
            *slot = IoSlice::new(chunk);
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_across_chunks_keeps_the_order_and_the_count() {
        let mut out = Outgoing::new();
        out.push(Bytes::from_static(b"abc"));
        out.push(Bytes::new());
        out.push(Bytes::from_static(b"defgh"));
        assert_eq!((out.remaining(), out.chunk_count()), (8, 2));
        out.advance(4);
        assert_eq!(out.chunk(), b"efgh");
        let mut slices = [IoSlice::new(&[]); 4];
        assert_eq!(out.chunks_vectored(&mut slices), 1);
        assert_eq!(&*slices[0], b"efgh");
        out.advance(4);
        assert_eq!((out.remaining(), out.chunk_count(), out.chunk()), (0, 0, &b""[..]));
    }

    #[test]
    fn concat_is_every_byte_in_order() {
        let mut a = Outgoing::new();
        a.push(Bytes::from_static(b"12"));
        let mut b = Outgoing::new();
        b.push(Bytes::from_static(b"345"));
        a.append(&mut b);
        assert_eq!((&a.concat()[..], b.remaining()), (&b"12345"[..], 0));
    }
}
