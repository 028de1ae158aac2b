//! Kafka's framing, sans-io: a big-endian `int32` size, then that many bytes. The one reader
//! of it in kwire: today's connection reads responses with it, `kwire tap` both directions,
//! the in-process cluster requests, and Kafka 0.7's protocol, broker and client read their
//! frames with it too. A size is checked against the limits as soon as its four bytes are in,
//! before anything waits for or holds the bytes it announces.
//!
//! [`FrameLimits`] reads and checks the size at the front of any buffer, for readers that keep
//! their own (the 0.7 broker's recycled blocks); [`Framer`] owns its buffer, grows it only as
//! bytes arrive, and can stream a frame over the limit through in pieces (a proxy's need).

use std::fmt;

use bytes::{Buf, Bytes, BytesMut};

/// The bytes of a frame's size prefix.
pub const SIZE_PREFIX: usize = 4;

/// How much room [`Framer::read_buf`] makes for one read at most: what a frame's header claims
/// reserves nothing beyond it.
const READ_CHUNK: usize = 64 * 1024;

/// Why a reader refuses a frame, from its size alone. Either way the stream cannot be read on:
/// where the next frame starts is unknown, or too far to wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameSizeError {
    /// A size no frame may have: negative, or below the least the reader accepts.
    Impossible(i32),
    /// More than the reader takes whole (see [`Piece::Oversized`] for one that streams it).
    TooLarge { size: usize, max: usize },
}

impl fmt::Display for FrameSizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Impossible(size) => write!(f, "impossible frame size {size}"),
            Self::TooLarge { size, max } => write!(f, "a frame of {size} bytes, over the limit of {max}"),
        }
    }
}

impl std::error::Error for FrameSizeError {}

/// The frame sizes a reader accepts, after the size prefix: `min..=max` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLimits {
    min: usize,
    max: usize,
}

impl FrameLimits {
    /// Frames of `min..=max` bytes after the size prefix.
    pub const fn new(min: usize, max: usize) -> Self {
        FrameLimits { min, max }
    }

    /// The least frame size accepted.
    pub fn min(&self) -> usize {
        self.min
    }

    /// The largest frame size accepted.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The size the prefix at the front of `bytes` announces (after the prefix), checked, once
    /// its four bytes are in.
    pub fn size(&self, bytes: &[u8]) -> Option<Result<usize, FrameSizeError>> {
        let head: [u8; SIZE_PREFIX] = bytes.get(..SIZE_PREFIX)?.try_into().ok()?;
        let size = i32::from_be_bytes(head);
        Some(match usize::try_from(size) {
            Ok(n) if n < self.min => Err(FrameSizeError::Impossible(size)),
            Ok(n) if n > self.max => Err(FrameSizeError::TooLarge { size: n, max: self.max }),
            Ok(n) => Ok(n),
            Err(_) => Err(FrameSizeError::Impossible(size)),
        })
    }

    /// How many more bytes the frame at the front of `bytes` needs to be whole: the rest of the
    /// size prefix while that is incomplete, then the rest of the frame (0 once it is whole).
    /// For a reader that sizes its reads itself.
    pub fn missing(&self, bytes: &[u8]) -> Result<usize, FrameSizeError> {
        match self.size(bytes) {
            None => Ok(SIZE_PREFIX - bytes.len()),
            Some(size) => Ok((SIZE_PREFIX + size?).saturating_sub(bytes.len())),
        }
    }

    /// Splits the frame at the front of `buf` off once it is whole, its size prefix included.
    /// Reserves nothing: the reader makes room for its reads.
    pub fn split_frame(&self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameSizeError> {
        let Some(size) = self.size(buf) else { return Ok(None) };
        let total = SIZE_PREFIX + size?;
        Ok((buf.len() >= total).then(|| buf.split_to(total).freeze()))
    }
}

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

/// Splits received bytes into frames in a buffer of its own (see the module docs).
#[derive(Debug)]
pub struct Framer {
    buf: BytesMut,
    limits: FrameLimits,
    /// Bytes of an oversized frame still to hand out as [`Piece::Rest`].
    passing: usize,
}

impl Framer {
    /// Frames of `min..=max` bytes (after the size prefix); larger ones come as
    /// [`Piece::Oversized`] and [`Piece::Rest`], smaller ones are an error.
    pub fn new(min: usize, max: usize) -> Self {
        Framer { buf: BytesMut::new(), limits: FrameLimits::new(min, max), passing: 0 }
    }

    /// Takes bytes that arrived.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The buffer to read into next, with room for one read of at most 64 KiB (or what the
    /// current frame still lacks, if less): for `AsyncReadExt::read_buf`.
    pub fn read_buf(&mut self) -> &mut BytesMut {
        let wanted = match self.announced() {
            Some(total) => total.saturating_sub(self.buf.len()),
            None => READ_CHUNK,
        };
        self.buf.reserve(wanted.clamp(1, READ_CHUNK));
        &mut self.buf
    }

    /// The size of the frame being read, its size prefix included, once its header is in and
    /// it is within the limit.
    pub fn announced(&self) -> Option<usize> {
        match self.limits.size(&self.buf) {
            Some(Ok(size)) if self.passing == 0 => Some(SIZE_PREFIX + size),
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

    /// The sizes accepted.
    pub fn limits(&self) -> FrameLimits {
        self.limits
    }

    /// The largest frame handed out whole.
    pub fn max(&self) -> usize {
        self.limits.max
    }

    /// Bytes received that are not yet handed out.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Whether the bytes so far stop inside a frame: a stream that ends here was cut.
    pub fn inside_frame(&self) -> bool {
        self.passing > 0 || !self.buf.is_empty()
    }

    /// The next piece, if its bytes are in. After an error the stream cannot be read on.
    pub fn next_piece(&mut self) -> Result<Option<Piece>, FrameSizeError> {
        if self.passing > 0 {
            if self.buf.is_empty() {
                return Ok(None);
            }
            let n = self.passing.min(self.buf.len());
            self.passing -= n;
            return Ok(Some(Piece::Rest { bytes: self.buf.split_to(n).freeze(), last: self.passing == 0 }));
        }
        match self.limits.split_frame(&mut self.buf) {
            Err(FrameSizeError::TooLarge { size, .. }) => {
                self.buf.advance(SIZE_PREFIX);
                self.passing = size;
                Ok(Some(Piece::Oversized { size }))
            }
            split => split.map(|frame| frame.map(Piece::Frame)),
        }
    }

    /// The next whole frame, its size prefix included, for a reader that takes no frame over
    /// the limit (a client): such a frame is an error, as an impossible size is.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, FrameSizeError> {
        self.limits.split_frame(&mut self.buf)
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
            assert_eq!(framer.next_piece(), Err(FrameSizeError::Impossible(bad)));
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
    fn a_reader_that_takes_no_oversized_frame_is_refused_one() {
        let mut framer = Framer::new(0, 8);
        framer.extend(&frame(b"small"));
        framer.extend(&frame(&[7; 9]));
        assert_eq!(framer.next_frame(), Ok(Some(Bytes::from(frame(b"small")))));
        assert_eq!(framer.next_frame(), Err(FrameSizeError::TooLarge { size: 9, max: 8 }));
    }

    #[test]
    fn the_missing_bytes_are_the_prefix_then_the_rest_of_the_frame() {
        let limits = FrameLimits::new(1, 16);
        let whole = frame(b"abc");
        for have in 0..=whole.len() {
            let expected = if have < 4 { 4 - have } else { whole.len() - have };
            assert_eq!(limits.missing(&whole[..have]), Ok(expected), "{have} bytes in");
        }
        assert_eq!(limits.missing(&frame(&[0; 17])[..4]), Err(FrameSizeError::TooLarge { size: 17, max: 16 }));
        assert_eq!(limits.missing(&0i32.to_be_bytes()), Err(FrameSizeError::Impossible(0)));
        let mut buf = BytesMut::from(&whole[..6]);
        assert_eq!(limits.split_frame(&mut buf), Ok(None));
        assert_eq!(buf.capacity(), 6, "an incomplete frame reserves nothing");
        buf.extend_from_slice(&whole[6..]);
        assert_eq!(limits.split_frame(&mut buf), Ok(Some(Bytes::from(whole))));
        assert!(buf.is_empty());
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
