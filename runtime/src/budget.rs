//! The memory a decode may take, as a multiple of its input.
//!
//! A length check against the bytes present bounds how many elements an array can claim, but
//! not what they take once decoded: an empty string is one byte on the wire and 32 in memory,
//! so a frame of nothing but empty strings would decode to 32 times its size. Every decode of
//! a whole message therefore gets a budget of [`BYTES_PER_INPUT_BYTE`] times its input plus
//! [`SLACK`], and each allocation the decoded value makes (array storage, kept unknown tags)
//! is charged to it before it is made. A message that would exceed it is refused with
//! [`DecodeErrorKind::MemoryLimit`]. Real messages stay well below it: their elements carry
//! data, while a frame built to expand is mostly empty elements.
//!
//! The budget is per thread and per message: [`with_budget`] sets it for one top-level decode
//! and restores the one before (a nested top-level decode gets its own). Code that decodes a
//! nested struct by itself runs without one, bounded only by the length checks.

use std::cell::Cell;

use crate::error::{DecodeError, DecodeErrorKind};

/// How many bytes of memory a decoded message may take per byte of its input. Real messages
/// come close to 5 (a Produce response v3 of many partitions takes 5.1×: its partition struct
/// holds every version's fields, 112 bytes, where v3 sends 22), so the budget leaves room
/// above that; a frame of empty elements is what reaches it.
pub const BYTES_PER_INPUT_BYTE: usize = 8;

/// Memory every message may take whatever its size: small messages with a few arrays of
/// empty elements are common (a request naming one topic) and must never be refused.
pub const SLACK: usize = 64 << 10;

thread_local! {
    /// Bytes left to charge in the current top-level decode; `usize::MAX` outside one.
    static LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The budget of a message decoded from `input_len` bytes.
#[inline]
pub fn budget_for(input_len: usize) -> usize {
    input_len.saturating_mul(BYTES_PER_INPUT_BYTE).saturating_add(SLACK)
}

/// Runs `decode` with the budget of a message of `input_len` bytes, then restores the
/// budget that was in force before.
///
/// Only the call to `decode` is generic: the budget's bookkeeping is two plain functions, so
/// that each message type's decoder does not carry its own copy of the thread-local access.
#[inline]
pub fn with_budget<T>(input_len: usize, decode: impl FnOnce() -> T) -> T {
    let outer = enter(input_len);
    let out = decode();
    leave(outer);
    out
}

/// Sets the budget of a message of `input_len` bytes and returns the one it replaces.
fn enter(input_len: usize) -> usize {
    LEFT.with(|left| left.replace(budget_for(input_len)))
}

/// Restores the budget [`enter`] replaced.
fn leave(outer: usize) {
    LEFT.with(|left| left.set(outer));
}

/// Charges `bytes` to the current budget, or refuses them when less is left.
#[inline]
pub fn charge(bytes: usize) -> Result<(), DecodeError> {
    LEFT.with(|left| {
        let available = left.get();
        if bytes > available {
            return Err(DecodeError::new(DecodeErrorKind::MemoryLimit { requested: bytes, available }));
        }
        left.set(available - bytes);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_charged_and_restored() {
        assert!(charge(1 << 40).is_ok(), "no budget outside a decode");
        with_budget(1000, || {
            assert!(charge(8000).is_ok());
            assert!(charge(SLACK).is_ok());
            let err = charge(1).unwrap_err();
            assert_eq!(err.kind(), &DecodeErrorKind::MemoryLimit { requested: 1, available: 0 });
            with_budget(0, || assert!(charge(SLACK).is_ok()));
            assert!(charge(1).is_err(), "the outer budget is restored, still spent");
        });
        assert!(charge(1 << 40).is_ok());
    }
}
