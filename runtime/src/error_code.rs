//! Kafka's error codes, as every response's `ErrorCode` fields carry them.
//!
//! [`ErrorCode`] is the `i16` itself (`#[repr(transparent)]`, so a generated field of this type
//! costs nothing over a bare `i16` on the wire path), with the name, message and retriable flag
//! of Kafka's `Errors` for the codes Kafka defines. A code this table does not know (a newer
//! broker's) is kept as it is: it converts back to the same `i16` and prints as unknown.

use std::fmt;

// Rendered by a test from Kafka's list, kept as rendered.
#[rustfmt::skip]
mod table;

/// One of Kafka's error codes; `ErrorCode::NONE` (0) is success.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub struct ErrorCode(pub i16);

/// What Kafka says about one code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorInfo {
    pub code: i16,
    /// Kafka's constant name, e.g. `NOT_LEADER_OR_FOLLOWER`.
    pub name: &'static str,
    /// Whether a client should retry the request (Kafka's `RetriableException`).
    pub retriable: bool,
    /// Kafka's default message for the error (empty for `NONE`).
    pub message: &'static str,
}

impl ErrorCode {
    /// The numeric code.
    pub const fn code(self) -> i16 {
        self.0
    }

    /// Whether this is `NONE`: the operation succeeded.
    pub const fn is_ok(self) -> bool {
        self.0 == 0
    }

    /// Whether this code reports an error.
    pub const fn is_err(self) -> bool {
        self.0 != 0
    }

    /// What Kafka says about the code, if this table knows it.
    pub fn info(self) -> Option<&'static ErrorInfo> {
        let at = table::ALL.binary_search_by_key(&self.0, |e| e.code).ok()?;
        table::ALL.get(at)
    }

    /// Kafka's name for the code, if known.
    pub fn name(self) -> Option<&'static str> {
        self.info().map(|e| e.name)
    }

    /// Kafka's message for the code, if known.
    pub fn message(self) -> Option<&'static str> {
        self.info().map(|e| e.message)
    }

    /// Whether a client should retry; `false` for codes this table does not know, as Kafka's
    /// client treats them (`UNKNOWN_SERVER_ERROR`).
    pub fn is_retriable(self) -> bool {
        self.info().is_some_and(|e| e.retriable)
    }

    /// Whether this table knows the code.
    pub fn is_known(self) -> bool {
        self.info().is_some()
    }

    /// `Ok(())` for `NONE`, else `Err(self)`: for `?` on a response's error field.
    pub const fn ok(self) -> Result<(), ErrorCode> {
        if self.0 == 0 {
            Ok(())
        } else {
            Err(self)
        }
    }

    /// Every code Kafka defines, in code order.
    pub fn all() -> &'static [ErrorInfo] {
        table::ALL
    }
}

impl From<i16> for ErrorCode {
    fn from(code: i16) -> Self {
        ErrorCode(code)
    }
}

impl From<ErrorCode> for i16 {
    fn from(code: ErrorCode) -> Self {
        code.0
    }
}

impl PartialEq<i16> for ErrorCode {
    fn eq(&self, other: &i16) -> bool {
        self.0 == *other
    }
}

/// `ErrorCode(6, NOT_LEADER_OR_FOLLOWER)`, or `ErrorCode(1234, unknown)`.
impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ErrorCode({}, {})", self.0, self.name().unwrap_or("unknown"))
    }
}

/// `NOT_LEADER_OR_FOLLOWER (6): For requests intended only for the leader, ...`; a code the
/// table does not know prints as `unknown error code 1234`.
impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Some(e) if e.message.is_empty() => write!(f, "{} ({})", e.name, e.code),
            Some(e) => write!(f, "{} ({}): {}", e.name, e.code, e.message),
            None => write!(f, "unknown error code {}", self.0),
        }
    }
}

impl std::error::Error for ErrorCode {}

/// Read and written as the `i16` it is, also inside fixed-width runs of fields.
impl crate::fixed_array::Fixed for ErrorCode {
    const SIZE: usize = 2;
    #[inline(always)]
    fn write_be(self, out: &mut [u8]) {
        self.0.write_be(out)
    }
    #[inline(always)]
    fn read_be(raw: &[u8]) -> Self {
        ErrorCode(i16::read_be(raw))
    }
}
