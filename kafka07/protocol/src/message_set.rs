//! Message sets: `(i32 length, message)*` with no count and no offsets. Offsets are byte
//! positions, so every iterator takes the log offset of the set's first byte (`base`).
//!
//! Framing rules for a set that may end part-way through a message (spec §2.6): fewer than 4
//! bytes left ends the set; a negative length is an error; a length running past the end ends
//! the set quietly unless it is the first message, which is the "message larger than the fetch
//! size" error.

use bytes::Bytes;
use kwire_runtime::reader::SliceReader;

use crate::compression::{decompress, DecodeLimits};
use crate::error::ProtocolError;
use crate::message::{Magic, MessageRef};

/// One step of the framing walk: `Some((start, end))` of the next complete entry (`start` at its
/// length prefix, `end` after its body), `None` when the set is done.
fn next_frame(buf: &[u8], pos: usize, base: u64) -> Result<Option<(usize, usize)>, ProtocolError> {
    let remaining = buf.len().saturating_sub(pos);
    let Ok(length) = SliceReader::new(buf, pos).get_i32() else { return Ok(None) };
    let offset = base.saturating_add(pos as u64);
    let Ok(len) = usize::try_from(length) else {
        return Err(ProtocolError::InvalidMessageSize { offset, length });
    };
    if len > remaining - 4 {
        if pos == 0 {
            return Err(ProtocolError::MessageLargerThanFetchSize { offset, needed: len + 4, available: remaining });
        }
        return Ok(None);
    }
    Ok(Some((pos, pos + 4 + len)))
}

/// Length in bytes of the complete shallow entries at the front of `set`, i.e. where the next
/// fetch should start relative to this one. Errors only on a negative length or a first message
/// that is incomplete.
pub fn valid_bytes(set: &[u8]) -> Result<usize, ProtocolError> {
    let mut pos = 0;
    while let Some((_, end)) = next_frame(set, pos, 0)? {
        pos = end;
    }
    Ok(pos)
}

/// Length in bytes of the complete shallow entries at the front of `bytes` (taken from log
/// offset `base`), part of a message set still arriving: an incomplete entry at the end (even
/// the first) is simply not counted yet. Errors only on a negative length, which no amount of
/// further bytes can mend.
pub fn complete_bytes(bytes: &[u8], base: u64) -> Result<usize, ProtocolError> {
    let mut pos = 0;
    loop {
        match next_frame(bytes, pos, base) {
            Ok(Some((start, end))) => {
                touch_ahead(bytes, end, end - start);
                pos = end
            }
            // An incomplete first entry is only "too large" once the whole answer is in.
            Ok(None) | Err(ProtocolError::MessageLargerThanFetchSize { .. }) => return Ok(pos),
            Err(e) => return Err(e),
        }
    }
}

/// Loads the byte three entries of `len` bytes past `end`, if there is one. Each step of a
/// framing walk waits for the length prefix it reads, and on bytes just copied out of a socket
/// that is a cache miss per message; messages often have one size, so the line a later step
/// will read is then already on its way. A wrong guess costs one load.
#[inline]
fn touch_ahead(bytes: &[u8], end: usize, len: usize) {
    if let Some(b) = len.checked_mul(3).and_then(|d| end.checked_add(d)).and_then(|i| bytes.get(i)) {
        std::hint::black_box(*b);
    }
}

/// An outer entry of a message set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShallowEntry<'a> {
    /// Log offset of the entry's length prefix.
    pub offset: u64,
    /// Log offset just after the entry: where to fetch next.
    pub next_offset: u64,
    pub message: MessageRef<'a>,
}

/// Walks the outer entries of a set without decompressing or checking CRCs. Stops after the
/// first error.
#[derive(Debug, Clone)]
pub struct ShallowIter<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
    done: bool,
}

impl<'a> ShallowIter<'a> {
    pub fn new(set: &'a [u8], base: u64) -> Self {
        ShallowIter { buf: set, pos: 0, base, done: false }
    }

    /// Bytes consumed so far (end of the last entry returned).
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for ShallowIter<'a> {
    type Item = Result<ShallowEntry<'a>, ProtocolError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let step = next_frame(self.buf, self.pos, self.base).and_then(|frame| {
            let Some((start, end)) = frame else { return Ok(None) };
            let offset = self.base.saturating_add(start as u64);
            let message = MessageRef::parse(&self.buf[start + 4..end], offset)?;
            Ok(Some((end, ShallowEntry { offset, next_offset: self.base.saturating_add(end as u64), message })))
        });
        match step {
            Ok(Some((end, entry))) => {
                self.pos = end;
                Some(Ok(entry))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Decompresses the wrapper `message` (at log offset `offset`) and calls `on_message` for every
/// message inside, recursing into nested wrappers up to `limits.max_depth`; `on_set` sees each
/// decompressed set first (the wrapper's own, then nested ones in the order they are met).
/// Every inner CRC is checked. Inner sets must be complete: trailing partial entries are
/// corruption, not a fetch cut.
fn walk_wrapper(
    message: &MessageRef<'_>,
    offset: u64,
    depth: usize,
    limits: &DecodeLimits,
    budget: &mut usize,
    on_set: &mut dyn FnMut(&Bytes),
    on_message: &mut dyn FnMut(&MessageRef<'_>),
) -> Result<(), ProtocolError> {
    if depth > limits.max_depth {
        return Err(ProtocolError::NestingTooDeep { offset, max_depth: limits.max_depth });
    }
    let inner = decompress(message.codec(), message.payload, *budget, offset)?;
    *budget -= inner.len();
    let inner = Bytes::from(inner);
    on_set(&inner);
    let mut pos = 0;
    while pos < inner.len() {
        let remaining = inner.len() - pos;
        let Ok(length) = SliceReader::new(&inner, pos).get_i32() else {
            return Err(ProtocolError::Truncated {
                what: "inner message length",
                offset: pos,
                needed: 4,
                available: remaining,
            });
        };
        let len = usize::try_from(length).map_err(|_| ProtocolError::InvalidMessageSize { offset, length })?;
        if len > remaining - 4 {
            return Err(ProtocolError::Truncated {
                what: "inner message",
                offset: pos + 4,
                needed: len,
                available: remaining - 4,
            });
        }
        let m = MessageRef::parse(&inner[pos + 4..pos + 4 + len], offset)?;
        m.verify_crc(offset)?;
        if m.is_compressed() {
            walk_wrapper(&m, offset, depth + 1, limits, budget, on_set, on_message)?;
        } else {
            on_message(&m);
        }
        pos += 4 + len;
    }
    Ok(())
}

/// A validated wrapper's messages, handed out one at a time from its decompressed sets: memory
/// is what decompression produced, nothing per message (a queue of [`DeepMessage`]s would be
/// seven times the decompressed bytes for the smallest messages).
#[derive(Debug)]
struct Unwrapped {
    outer_offset: u64,
    /// Where the wrapper ends: the last message's next offset.
    end_offset: u64,
    /// Sets of nested wrappers not reached yet, in the order [`walk_wrapper`] met them.
    nested: std::vec::IntoIter<Bytes>,
    /// Sets being read, innermost last, each with the position of its next entry.
    stack: Vec<(Bytes, usize)>,
    /// The next message, read one ahead to know which message is the last.
    ahead: Option<DeepMessage>,
}

impl Unwrapped {
    fn new(sets: Vec<Bytes>, outer_offset: u64, end_offset: u64) -> Self {
        let mut nested = sets.into_iter();
        let stack = nested.next().map(|set| vec![(set, 0)]).unwrap_or_default();
        let mut unwrapped = Unwrapped { outer_offset, end_offset, nested, stack, ahead: None };
        unwrapped.ahead = unwrapped.read();
        unwrapped
    }

    /// The next plain message of the walk. [`walk_wrapper`] validated every entry, so a read
    /// that fails here cannot happen; it would end the wrapper rather than panic.
    fn read(&mut self) -> Option<DeepMessage> {
        loop {
            let (set, pos) = self.stack.last_mut()?;
            let Ok(length) = SliceReader::new(set, *pos).get_i32() else {
                self.stack.pop();
                continue;
            };
            let body = set.get(*pos + 4..).and_then(|rest| rest.get(..usize::try_from(length).ok()?))?;
            let m = MessageRef::parse(body, self.outer_offset).ok()?;
            *pos += 4 + body.len();
            if m.is_compressed() {
                let inner = self.nested.next()?;
                self.stack.push((inner, 0));
                continue;
            }
            let payload = set.slice_ref(m.payload);
            return Some(DeepMessage {
                outer_offset: self.outer_offset,
                next_offset: self.outer_offset,
                magic: m.magic,
                attributes: m.attributes,
                crc: m.crc,
                payload,
            });
        }
    }
}

impl Iterator for Unwrapped {
    type Item = DeepMessage;

    fn next(&mut self) -> Option<DeepMessage> {
        let mut message = self.ahead.take()?;
        self.ahead = self.read();
        if self.ahead.is_none() {
            message.next_offset = self.end_offset;
        }
        Some(message)
    }
}

/// What validating a produced set found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetSummary {
    /// End of the last complete outer entry; bytes after it are a cut-off message to drop.
    pub valid_bytes: usize,
    /// Complete outer entries.
    pub shallow_count: u64,
    /// Messages counting each one inside a compressed wrapper (0.7's flush counter input).
    pub deep_count: u64,
}

/// The broker's produce-side checks (spec §3.2 steps 2–4), in 0.7's order: first every shallow
/// payload against `max_message_size` (if given), then a deep walk checking every CRC, magic and
/// codec, including inside compressed wrappers. `base` is only used in error offsets.
pub fn validate_message_set(
    set: &[u8],
    base: u64,
    max_message_size: Option<usize>,
    limits: &DecodeLimits,
) -> Result<SetSummary, ProtocolError> {
    let mut unlimited = usize::MAX;
    validate_message_set_within(set, base, max_message_size, limits, &mut unlimited)
}

/// [`validate_message_set`] within a decompression budget shared by everything one request
/// carries (a MULTIPRODUCE holds many sets): what the set's wrappers decompress to is taken from
/// `request_budget`, and exceeding it is [`ProtocolError::RequestBudgetExceeded`].
pub fn validate_message_set_within(
    set: &[u8],
    base: u64,
    max_message_size: Option<usize>,
    limits: &DecodeLimits,
    request_budget: &mut usize,
) -> Result<SetSummary, ProtocolError> {
    // One pass over the set. A content error (CRC, compression, ...) is remembered while the
    // remaining sizes are still checked, so that an oversized message wins as in 0.7, whose
    // size check runs over the whole set before validation.
    let mut summary = SetSummary::default();
    let mut content_error: Option<ProtocolError> = None;
    let mut iter = ShallowIter::new(set, base);
    for entry in iter.by_ref() {
        let entry = entry?;
        let size = entry.message.payload.len();
        if let Some(max) = max_message_size {
            if size > max {
                return Err(ProtocolError::MessageSizeTooLarge { offset: entry.offset, size, max });
            }
        }
        if content_error.is_some() {
            continue;
        }
        match check_entry(&entry, limits, request_budget) {
            Ok(count) => {
                summary.shallow_count += 1;
                summary.deep_count += count;
            }
            Err(e) => content_error = Some(e),
        }
    }
    if let Some(e) = content_error {
        return Err(e);
    }
    summary.valid_bytes = iter.position();
    Ok(summary)
}

/// Checks one outer entry deeply; returns how many messages it holds.
fn check_entry(
    entry: &ShallowEntry<'_>,
    limits: &DecodeLimits,
    request_budget: &mut usize,
) -> Result<u64, ProtocolError> {
    entry.message.verify_crc(entry.offset)?;
    if !entry.message.is_compressed() {
        return Ok(1);
    }
    let request_bound = *request_budget < limits.max_decompressed_bytes;
    let start = limits.max_decompressed_bytes.min(*request_budget);
    let mut budget = start;
    let mut count = 0u64;
    let walked = walk_wrapper(&entry.message, entry.offset, 1, limits, &mut budget, &mut |_| {}, &mut |_| count += 1);
    *request_budget -= start - budget;
    match walked {
        Err(ProtocolError::DecompressedTooLarge { offset, .. }) if request_bound => {
            Err(ProtocolError::RequestBudgetExceeded { offset, budget: start })
        }
        other => other.map(|()| count),
    }
}

/// A message from deep iteration, with 0.7's consumer offset (spec §2.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeepMessage {
    /// Log offset of the outer entry this message came from.
    pub outer_offset: u64,
    /// The offset to fetch from next: the outer entry's end for a plain message and for the
    /// last message of a wrapper, the wrapper's start for the others.
    pub next_offset: u64,
    pub magic: Magic,
    pub attributes: u8,
    pub crc: u32,
    pub payload: Bytes,
}

/// Walks every message, decompressing wrappers (nested up to `limits.max_depth`), checking every
/// CRC. Empty wrappers yield nothing. Stops after the first error.
#[derive(Debug)]
pub struct DeepIter {
    set: Bytes,
    pos: usize,
    base: u64,
    limits: DecodeLimits,
    /// The wrapper whose messages are being handed out.
    wrapper: Option<Unwrapped>,
    done: bool,
}

impl DeepIter {
    pub fn new(set: Bytes, base: u64) -> Self {
        Self::with_limits(set, base, DecodeLimits::default())
    }

    pub fn with_limits(set: Bytes, base: u64, limits: DecodeLimits) -> Self {
        DeepIter { set, pos: 0, base, limits, wrapper: None, done: false }
    }

    /// Bytes of outer entries consumed so far.
    pub fn valid_bytes(&self) -> usize {
        self.pos
    }

    /// Reads the next outer entry: a plain message is handed back as it is (the common case),
    /// a wrapper is validated whole, then its messages are handed out from its sets.
    fn advance(&mut self) -> Result<Step, ProtocolError> {
        let Some((start, end)) = next_frame(&self.set, self.pos, self.base)? else { return Ok(Step::End) };
        let offset = self.base.saturating_add(start as u64);
        let next_offset = self.base.saturating_add(end as u64);
        let message = MessageRef::parse(&self.set[start + 4..end], offset)?;
        message.verify_crc(offset)?;
        if !message.is_compressed() {
            let plain = DeepMessage {
                outer_offset: offset,
                next_offset,
                magic: message.magic,
                attributes: message.attributes,
                crc: message.crc,
                payload: self.set.slice_ref(message.payload),
            };
            self.pos = end;
            return Ok(Step::Plain(plain));
        }
        let mut sets = Vec::new();
        let mut budget = self.limits.max_decompressed_bytes;
        walk_wrapper(&message, offset, 1, &self.limits, &mut budget, &mut |set| sets.push(set.clone()), &mut |_| {})?;
        self.pos = end;
        Ok(Step::Wrapper(Unwrapped::new(sets, offset, next_offset)))
    }
}

/// What [`DeepIter::advance`] found.
enum Step {
    Plain(DeepMessage),
    /// A valid wrapper (maybe of no messages).
    Wrapper(Unwrapped),
    End,
}

impl Iterator for DeepIter {
    type Item = Result<DeepMessage, ProtocolError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(m) = self.wrapper.as_mut().and_then(Iterator::next) {
                return Some(Ok(m));
            }
            self.wrapper = None;
            if self.done {
                return None;
            }
            match self.advance() {
                Ok(Step::Plain(m)) => return Some(Ok(m)),
                Ok(Step::Wrapper(w)) => self.wrapper = Some(w),
                Ok(Step::End) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
