//! A connection's receive buffer that recycles its memory (used by the broker and the client).
//!
//! Frames are split off the buffer without copying and stay alive while they are handled, so
//! the buffer is shared most of the time. A plain `BytesMut` then allocates fresh memory
//! whenever it runs out, and the kernel zero-fills every new page on the first `recv` into it
//! (at gigabytes per second that is a large share of the receiving side's time). Here a block
//! that ran out is set aside, and a spare whose frames have all been dropped is taken back in
//! place instead: in steady state the same few blocks are reused. Blocks grow geometrically
//! for frames larger than a block, and only as far as bytes actually arrive.

use bytes::BytesMut;

/// Size of a fresh block; reads are at most this large.
const BLOCK: usize = 2 * 1024 * 1024;
/// Blocks kept for reuse besides the current one.
const MAX_SPARES: usize = 3;

#[derive(Debug, Default)]
pub struct RecvBuffer {
    current: BytesMut,
    /// Blocks set aside, oldest first.
    spares: Vec<BytesMut>,
    /// Whether `current` is a block of ours (the initial empty buffer is not worth keeping).
    allocated: bool,
}

impl RecvBuffer {
    /// Received bytes not yet split off as frames.
    pub fn bytes(&mut self) -> &mut BytesMut {
        &mut self.current
    }

    pub fn len(&self) -> usize {
        self.current.len()
    }

    pub fn is_empty(&self) -> bool {
        self.current.is_empty()
    }

    /// Memory this buffer holds for received bytes: what it has received, or the whole block
    /// once a frame outgrew the standard block size (the point where memory is per request
    /// rather than per connection).
    pub fn held(&self) -> usize {
        let capacity = self.current.capacity();
        if capacity > BLOCK {
            capacity
        } else {
            self.current.len()
        }
    }

    /// The bytes [`RecvBuffer::reserve`] would newly allocate to make room for `additional`
    /// more bytes of a frame of `frame_len` bytes in all (0 when the room is already there).
    pub fn reserve_cost(&mut self, additional: usize, frame_len: usize) -> usize {
        if self.current.capacity() - self.current.len() >= additional {
            return 0;
        }
        self.next_capacity(additional, frame_len)
    }

    fn next_capacity(&self, additional: usize, frame_len: usize) -> usize {
        let need = self.current.len().saturating_add(additional);
        // Doubling keeps the copies of a growing frame linear in its size; never beyond the
        // frame itself, whose size the prefix told.
        need.max(BLOCK).max(self.current.len().saturating_mul(2).min(frame_len.max(need)))
    }

    /// Makes room for at least `additional` more bytes, reusing memory where it can.
    pub fn reserve(&mut self, additional: usize) {
        self.reserve_for(additional, usize::MAX)
    }

    /// [`RecvBuffer::reserve`] for a frame of `frame_len` bytes in all: a block grown for it
    /// grows no further than the frame, and is not kept for reuse afterwards.
    pub fn reserve_for(&mut self, additional: usize, frame_len: usize) {
        if self.current.try_reclaim(additional) {
            return;
        }
        let need = self.current.len().saturating_add(additional);
        let reusable = self.spares.iter_mut().position(|s| s.try_reclaim(need));
        let mut next = match reusable {
            Some(i) => self.spares.swap_remove(i),
            None => BytesMut::with_capacity(self.next_capacity(additional, frame_len)),
        };
        // Only the start of a frame still being received moves over.
        next.extend_from_slice(&self.current);
        let mut old = std::mem::replace(&mut self.current, next);
        old.clear();
        // Blocks grown for one large frame are returned to the allocator, not kept.
        if std::mem::replace(&mut self.allocated, true) && old.capacity() <= BLOCK {
            if self.spares.len() == MAX_SPARES {
                self.spares.remove(0);
            }
            self.spares.push(old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_reused_once_their_frames_are_dropped() {
        let mut r = RecvBuffer::default();
        r.reserve(1000);
        let first = r.bytes().as_ptr();
        r.bytes().extend_from_slice(&vec![1u8; BLOCK]);
        let frame = r.bytes().split_to(BLOCK - 100).freeze();
        // The frame keeps the block shared: a new one takes over, with the unfinished tail.
        r.reserve(1000);
        assert_eq!(r.bytes()[..], [1u8; 100][..]);
        assert_ne!(r.bytes().as_ptr(), first);
        drop(frame);
        r.bytes().extend_from_slice(&vec![2u8; BLOCK - 100]);
        let second = r.bytes().split().freeze();
        // The second block is shared now, the first is free again: it is taken back.
        r.reserve(1000);
        assert!(r.is_empty());
        assert_eq!(r.bytes().as_ptr(), first);
        assert_eq!(second.len(), BLOCK);
        assert_eq!(r.len(), 0);
    }
}
