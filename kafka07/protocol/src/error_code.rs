//! The complete Kafka 0.7 error-code set. Clients (samsa) crash on any other code, so nothing
//! outside −1..4 can be represented, let alone sent.

use crate::error::ProtocolError;

/// A 0.7 response error code (signed i16 on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// −1: any failure without a mapping (invalid topic name, I/O error, …).
    Unknown,
    /// 0: success.
    NoError,
    /// 1: fetch offset before the first segment or after the visible end of the log.
    OffsetOutOfRange,
    /// 2: a CRC failure; the 0.7 broker never sends it, clients use it internally.
    InvalidMessage,
    /// 3: partition < 0 or ≥ the topic's partition count.
    WrongPartition,
    /// 4: a single message larger than the fetch size; the broker never sends it.
    InvalidFetchSize,
}

impl ErrorCode {
    /// Every code, in wire order.
    pub const ALL: [ErrorCode; 6] = [
        ErrorCode::Unknown,
        ErrorCode::NoError,
        ErrorCode::OffsetOutOfRange,
        ErrorCode::InvalidMessage,
        ErrorCode::WrongPartition,
        ErrorCode::InvalidFetchSize,
    ];

    /// The value written on the wire.
    pub fn code(self) -> i16 {
        match self {
            ErrorCode::Unknown => -1,
            ErrorCode::NoError => 0,
            ErrorCode::OffsetOutOfRange => 1,
            ErrorCode::InvalidMessage => 2,
            ErrorCode::WrongPartition => 3,
            ErrorCode::InvalidFetchSize => 4,
        }
    }

    /// Maps a wire value; anything outside −1..4 is an error, never a guess.
    pub fn from_code(code: i16) -> Result<ErrorCode, ProtocolError> {
        Ok(match code {
            -1 => ErrorCode::Unknown,
            0 => ErrorCode::NoError,
            1 => ErrorCode::OffsetOutOfRange,
            2 => ErrorCode::InvalidMessage,
            3 => ErrorCode::WrongPartition,
            4 => ErrorCode::InvalidFetchSize,
            other => return Err(ProtocolError::UnknownErrorCode(other)),
        })
    }

    pub fn is_ok(self) -> bool {
        self == ErrorCode::NoError
    }
}

impl TryFrom<i16> for ErrorCode {
    type Error = ProtocolError;
    fn try_from(code: i16) -> Result<Self, Self::Error> {
        ErrorCode::from_code(code)
    }
}

impl From<ErrorCode> for i16 {
    fn from(code: ErrorCode) -> i16 {
        code.code()
    }
}
