//! Errors of the segment log.

use std::io;
use std::path::PathBuf;

use crate::legacy::{ErrorCode, LegacyError, TopicError};

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The produced set failed validation (CRC, magic, codec, framing): 0.7 closes the connection.
    #[error("invalid message set: {0}")]
    InvalidMessageSet(LegacyError),

    /// A shallow message exceeds `max.message.size`: 0.7 drops the produce silently.
    #[error("message at offset {offset}: payload of {size} bytes exceeds max.message.size {max}")]
    MessageTooLarge { offset: u64, size: usize, max: usize },

    #[error("offset {offset} is outside the log range {start}..={end}")]
    OffsetOutOfRange { offset: i64, start: u64, end: u64 },

    #[error("segments are not contiguous: {first} ends at {first_end} but {second} starts at {second_start}")]
    NonContiguous { first: PathBuf, first_end: u64, second: PathBuf, second_start: u64 },

    #[error("segment file name {0} is not a 20-digit offset")]
    BadSegmentName(PathBuf),

    #[error(transparent)]
    InvalidTopic(#[from] TopicError),

    #[error("invalid partition {0}")]
    InvalidPartition(i32),

    #[error("log {0} is closed (shut down or deleted)")]
    Closed(PathBuf),
}

impl LogError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> LogError {
        let path = path.into();
        move |source| LogError::Io { op, path, source }
    }
}

impl LogError {
    /// The code a 0.7 broker puts in a FETCH / MULTIFETCH entry for this failure (spec §1.9):
    /// 1 for an offset out of range, 3 for a bad partition, −1 for everything else.
    pub fn fetch_error_code(&self) -> ErrorCode {
        match self {
            LogError::OffsetOutOfRange { .. } => ErrorCode::OffsetOutOfRange,
            LogError::InvalidPartition(_) => ErrorCode::WrongPartition,
            _ => ErrorCode::Unknown,
        }
    }
}

impl From<LegacyError> for LogError {
    fn from(e: LegacyError) -> Self {
        match e {
            LegacyError::MessageSizeTooLarge { offset, size, max } => LogError::MessageTooLarge { offset, size, max },
            other => LogError::InvalidMessageSet(other),
        }
    }
}
