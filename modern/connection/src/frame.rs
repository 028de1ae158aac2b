//! Kafka's framing, sans-io: a big-endian `int32` size, then that many bytes. The one
//! implementation of it for today's Kafka in this repository: [`Connection`](crate::Connection)
//! reads responses with it and `kwire tap` reads both directions with it. A size is checked
//! against the limits as soon as its four bytes are in, before anything waits for or holds the
//! bytes it announces, and the buffer grows only as bytes arrive.

use bytes::{Buf, Bytes, BytesMut};

/// How much room [`Framer::read_buf`] makes for one read at most: what a frame's header claims
/// reserves nothing beyond it.
const READ_CHUNK: usize = 64 * 1024;

/// What [`Framer::next_piece`] hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// A whole frame, its size prefix included.
    Frame(Bytes),
    /// The header of a frame larger than the limit, whose `size` bytes follow as [`Piece::Rest`]
    /// pieces as they arrive: a proxy streams them on, a client gives up on the connection.
    Oversized { size: usize },
    /// Bytes of an oversized frame, in order; `last` on the piece that ends it.
    Rest { bytes: Bytes, last: bool },
}

/// A frame size that no frame may have: negative, or below the least the reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("impossible frame size {0}")]
pub struct BadSize(pub i32);

/// Splits received bytes into frames (see the module docs).
#[derive(Debug)]
pub struct Framer {
    buf: BytesMut,
    min: usize,
    max: usize,
    /// Bytes of an oversized frame still to hand out as [`Piece::Rest`].
    passing: usize,
}

impl Framer {
    /// Frames of `min..=max` bytes (after the size prefix); larger ones come as
    /// [`Piece::Oversized`] and [`Piece::Rest`], smaller ones are a [`BadSize`].
    pub fn new(min: usize, max: usize) -> Self {
        Framer { buf: BytesMut::new(), min, max, passing: 0 }
    }

    /// Takes bytes that arrived.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The buffer to read into next, with room for one read of at most 64 KiB (or what the
    /// current frame still lacks, if less): for `AsyncReadExt::read_buf`.
    pub fn read_buf(&mut self) -> &mut BytesMut {
        let wanted = match self.header() {
            Some(Ok(size)) if size <= self.max => (4 + size).saturating_sub(self.buf.len()),
            _ => READ_CHUNK,
        };
        self.buf.reserve(wanted.clamp(1, READ_CHUNK));
        &mut self.buf
    }

    /// The size of the frame being read, its size prefix included, once its header is in and
    /// it is within the limit.
    pub fn announced(&self) -> Option<usize> {
        match self.header() {
            Some(Ok(size)) if size <= self.max && self.passing == 0 => Some(4 + size),
            _ => None,
        }
    }

    /// Makes room for the whole frame being read at once, rather than as its bytes arrive: one
    /// allocation instead of a buffer regrown (and copied) read after read, for a reader that
    /// has already accounted for what the header announces (a server with a byte budget).
    pub fn reserve_announced(&mut self) {
        if let Some(total) = self.announced() {
            self.buf.reserve(total.saturating_sub(self.buf.len()));
        }
    }

    /// The largest frame handed out whole.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Bytes received that are not yet handed out.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Whether the bytes so far stop inside a frame: a stream that ends here was cut.
    pub fn inside_frame(&self) -> bool {
        self.passing > 0 || !self.buf.is_empty()
    }

    /// The next piece, if its bytes are in. After a [`BadSize`] the stream cannot be read on.
    pub fn next_piece(&mut self) -> Result<Option<Piece>, BadSize> {
        if self.passing > 0 {
            if self.buf.is_empty() {
                return Ok(None);
            }
            let n = self.passing.min(self.buf.len());
            self.passing -= n;
            return Ok(Some(Piece::Rest { bytes: self.buf.split_to(n).freeze(), last: self.passing == 0 }));
        }
        let size = match self.header() {
            None => return Ok(None),
            Some(size) => size?,
        };
        if size > self.max {
            self.buf.advance(4);
            self.passing = size;
            return Ok(Some(Piece::Oversized { size }));
        }
        if self.buf.len() < 4 + size {
            return Ok(None);
        }
        Ok(Some(Piece::Frame(self.buf.split_to(4 + size).freeze())))
    }

    /// The size the buffered header announces, once its four bytes are in.
    fn header(&self) -> Option<Result<usize, BadSize>> {
        let head: [u8; 4] = self.buf.get(..4)?.try_into().ok()?;
        let size = i32::from_be_bytes(head);
        Some(usize::try_from(size).ok().filter(|&n| n >= self.min).ok_or(BadSize(size)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut f = (body.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn frames_come_whole_however_the_bytes_arrive() {
        let mut bytes = frame(b"first");
        bytes.extend(frame(b"second frame"));
        for step in 1..bytes.len() {
            let mut framer = Framer::new(0, 64);
            let mut got = Vec::new();
            for chunk in bytes.chunks(step) {
                framer.extend(chunk);
                while let Some(Piece::Frame(f)) = framer.next_piece().unwrap() {
                    got.push(f);
                }
            }
            assert_eq!(got, [Bytes::from(frame(b"first")), Bytes::from(frame(b"second frame"))], "step {step}");
            assert!(!framer.inside_frame());
        }
    }

    #[test]
    fn sizes_are_checked_from_the_header_alone() {
        for (bad, min) in [(-1, 0), (i32::MIN, 0), (3, 4), (0, 4)] {
            let mut framer = Framer::new(min, 1024);
            framer.extend(&bad.to_be_bytes());
            assert_eq!(framer.next_piece(), Err(BadSize(bad)));
        }
        let mut framer = Framer::new(4, 1024);
        framer.extend(&i32::MAX.to_be_bytes());
        assert_eq!(framer.next_piece(), Ok(Some(Piece::Oversized { size: i32::MAX as usize })));
        assert!(framer.buffered() == 0 && framer.inside_frame());
    }

    #[test]
    fn an_oversized_frame_streams_through_and_the_next_one_is_whole() {
        let mut framer = Framer::new(0, 8);
        let big = frame(&[7; 20]);
        framer.extend(&big[..10]);
        assert_eq!(framer.next_piece(), Ok(Some(Piece::Oversized { size: 20 })));
        assert_eq!(framer.next_piece(), Ok(Some(Piece::Rest { bytes: Bytes::from(vec![7; 6]), last: false })));
        assert_eq!(framer.next_piece(), Ok(None));
        framer.extend(&big[10..]);
        framer.extend(&frame(b"small"));
        assert_eq!(framer.next_piece(), Ok(Some(Piece::Rest { bytes: Bytes::from(vec![7; 14]), last: true })));
        assert_eq!(framer.next_piece(), Ok(Some(Piece::Frame(Bytes::from(frame(b"small"))))));
    }

    #[test]
    fn the_announced_frame_is_reserved_only_when_asked() {
        let mut framer = Framer::new(0, 1 << 20);
        assert_eq!(framer.announced(), None);
        framer.extend(&(1i32 << 20).to_be_bytes());
        assert_eq!(framer.announced(), Some(4 + (1 << 20)));
        framer.reserve_announced();
        assert!(framer.read_buf().capacity() >= 4 + (1 << 20));
        let mut over = Framer::new(0, 8);
        over.extend(&9i32.to_be_bytes());
        assert_eq!(over.announced(), None, "an oversized frame announces nothing to reserve");
    }

    #[test]
    fn a_claimed_size_reserves_nothing() {
        let mut framer = Framer::new(0, usize::MAX);
        framer.extend(&i32::MAX.to_be_bytes());
        assert_eq!(framer.next_piece(), Ok(None));
        assert!(framer.read_buf().capacity() <= 4 + READ_CHUNK);
    }
}
