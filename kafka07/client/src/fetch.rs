//! Turning fetched bytes into messages: deep iteration through compressed wrappers, 0.7's
//! next-offset rules (spec §2.5) and the fetch-size growth that 0.7's Scala consumer lacks
//! (spec §2.6): when the first message of a response is cut off, the next fetch asks for
//! enough bytes to hold it.

use bytes::Bytes;
use kwire07_protocol::{DeepIter, ProtocolError};

/// 0.7 consumer default `fetch.size`.
pub const DEFAULT_FETCH_SIZE: usize = 1_048_576;
/// Default ceiling the fetch size may grow to.
pub const DEFAULT_MAX_FETCH_SIZE: usize = 64 * 1_048_576;

/// One message read from a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Log offset of the outer entry holding the message (the wrapper, if compressed).
    pub offset: u64,
    /// Where to resume after this message: the entry's end, or for any but the last message
    /// of a compressed wrapper, the wrapper's start (so a restart re-reads the wrapper).
    pub next_offset: u64,
    pub payload: Bytes,
}

/// What one fetched message set holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// Messages (possibly none) and the offset to fetch from next: the end of the last
    /// complete outer entry.
    Messages { messages: Vec<Fetched>, next_offset: u64 },
    /// The first entry is longer than the response: a fetch of `needed` bytes would hold it.
    TooSmall { needed: usize },
}

/// How a fetched message set ended, for [`decode_each`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetEnd {
    /// Every complete outer entry was decoded; fetch from `next_offset` next.
    Next { next_offset: u64 },
    /// The first entry is longer than the response: a fetch of `needed` bytes would hold it.
    TooSmall { needed: usize },
}

/// Decodes a fetch response's bytes taken from log offset `base`. A CRC failure or other
/// corruption is an error, even after good messages, because skipping it would lose data.
pub fn decode_set(set: Bytes, base: u64) -> Result<Decoded, ProtocolError> {
    let mut messages = Vec::new();
    match decode_each(set, base, |m| messages.push(m))? {
        SetEnd::Next { next_offset } => Ok(Decoded::Messages { messages, next_offset }),
        SetEnd::TooSmall { needed } => Ok(Decoded::TooSmall { needed }),
    }
}

/// [`decode_set`] handing each message to `f` instead of collecting them, so a caller can put
/// them straight where it wants them. On `TooSmall` nothing was handed over.
pub fn decode_each(set: Bytes, base: u64, mut f: impl FnMut(Fetched)) -> Result<SetEnd, ProtocolError> {
    let mut iter = DeepIter::new(set, base);
    let mut any = false;
    for item in iter.by_ref() {
        match item {
            Ok(m) => {
                any = true;
                f(Fetched { offset: m.outer_offset, next_offset: m.next_offset, payload: m.payload });
            }
            Err(ProtocolError::MessageLargerThanFetchSize { needed, .. }) if !any => {
                return Ok(SetEnd::TooSmall { needed });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(SetEnd::Next { next_offset: base.saturating_add(iter.valid_bytes() as u64) })
}

/// The fetch size of one partition: starts at `initial`, grows (at least doubling) to hold a
/// message larger than it, never beyond `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchSize {
    current: usize,
    max: usize,
}

impl FetchSize {
    pub fn new(initial: usize, max: usize) -> FetchSize {
        let initial = initial.clamp(1, i32::MAX as usize);
        FetchSize { current: initial, max: max.clamp(initial, i32::MAX as usize) }
    }

    pub fn current(&self) -> usize {
        self.current
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// The value for the wire's `i32 maxSize`.
    pub fn as_i32(&self) -> i32 {
        self.current as i32
    }

    /// Grows to hold an entry of `needed` bytes (length prefix included). Returns `false`
    /// when that is beyond `max`, i.e. the message can never be fetched with this limit.
    pub fn grow_for(&mut self, needed: usize) -> bool {
        if needed > self.max {
            return false;
        }
        self.current = needed.max(self.current.saturating_mul(2)).min(self.max);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use kwire07_protocol::message::{put_compressed_set, put_message_set};
    use kwire07_protocol::{Codec, Magic};

    #[test]
    fn growth_doubles_then_fits_and_stops_at_max() {
        let mut s = FetchSize::new(100, 1000);
        assert!(s.grow_for(150));
        assert_eq!(s.current(), 200); // doubling beats 150
        assert!(s.grow_for(700));
        assert_eq!(s.current(), 700); // the message needs more than double
        assert!(s.grow_for(800));
        assert_eq!(s.current(), 1000); // doubling capped at max
        assert!(!s.grow_for(1001));
        assert_eq!(s.current(), 1000);
        assert_eq!(FetchSize::new(0, 0).current(), 1);
        assert_eq!(FetchSize::new(5000, 10).max(), 5000);
    }

    #[test]
    fn too_small_fetch_reports_the_needed_size_and_growth_reads_it() {
        let big = vec![7u8; 5000];
        let mut set = BytesMut::new();
        put_message_set(&mut set, Magic::V1, &[&big[..], b"after"]).unwrap();
        let set = set.freeze();
        let mut size = FetchSize::new(1024, 1 << 20);
        // Simulate the broker: it returns at most `size` bytes from offset 0.
        let first = loop {
            let cut = set.slice(..size.current().min(set.len()));
            match decode_set(cut, 0).unwrap() {
                Decoded::TooSmall { needed } => {
                    assert_eq!(needed, 4 + 6 + 5000);
                    assert!(size.grow_for(needed));
                }
                Decoded::Messages { messages, next_offset } => break (messages, next_offset),
            }
        };
        assert_eq!(size.current(), 5010);
        assert_eq!(first.0.len(), 1);
        assert_eq!(first.0[0].payload.len(), 5000);
        assert_eq!(first.1, 5010);
    }

    #[test]
    fn compressed_wrapper_offsets_follow_scala() {
        for codec in [Codec::Gzip, Codec::Snappy] {
            let mut set = BytesMut::new();
            put_message_set(&mut set, Magic::V0, &[b"plain"]).unwrap();
            let wrapper_start = set.len() as u64;
            put_compressed_set(&mut set, codec, &[b"a", b"b", b"c"]).unwrap();
            let end = set.len() as u64;
            let base = 1000;
            let Decoded::Messages { messages, next_offset } = decode_set(set.freeze(), base).unwrap() else {
                panic!("expected messages")
            };
            let got: Vec<(&[u8], u64)> = messages.iter().map(|m| (&m.payload[..], m.next_offset)).collect();
            assert_eq!(
                got,
                [
                    (&b"plain"[..], base + wrapper_start),
                    (b"a", base + wrapper_start),
                    (b"b", base + wrapper_start),
                    (b"c", base + end)
                ]
            );
            assert_eq!(next_offset, base + end);
        }
    }

    #[test]
    fn cut_off_tail_is_left_for_the_next_fetch_and_corruption_is_an_error() {
        let mut set = BytesMut::new();
        put_message_set(&mut set, Magic::V0, &[b"one", b"two"]).unwrap();
        let full = set.freeze();
        let cut = full.slice(..full.len() - 2);
        let Decoded::Messages { messages, next_offset } = decode_set(cut, 0).unwrap() else { panic!() };
        assert_eq!(messages.len(), 1);
        assert_eq!(next_offset, 12);
        let mut bad = full.to_vec();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(matches!(decode_set(Bytes::from(bad), 0), Err(ProtocolError::CrcMismatch { offset: 12, .. })));
        assert_eq!(decode_set(Bytes::new(), 5).unwrap(), Decoded::Messages { messages: vec![], next_offset: 5 });
    }
}
