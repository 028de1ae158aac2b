//! Errors of the segment log.

use std::io;
use std::path::PathBuf;

use crate::{ErrorCode, ProtocolError, TopicError};

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
    InvalidMessageSet(ProtocolError),

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

    /// Creating the partition would exceed the configured number of open partitions (each
    /// holds a file descriptor).
    #[error("cannot create {topic}-{partition}: {open} partitions are open, the limit is {max}")]
    TooManyPartitions { topic: String, partition: i32, open: usize, max: usize },
}

/// `errno` values that a request can cause on its own, with the disk healthy (Linux numbers;
/// `std::io::ErrorKind` names none of them on the supported Rust versions).
mod errno {
    pub const EEXIST: i32 = 17;
    pub const ENOTDIR: i32 = 20;
    pub const EISDIR: i32 = 21;
    pub const EINVAL: i32 = 22;
    pub const ENFILE: i32 = 23;
    pub const EMFILE: i32 = 24;
    pub const ENAMETOOLONG: i32 = 36;
}

impl LogError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> LogError {
        let path = path.into();
        move |source| LogError::Io { op, path, source }
    }
}

impl LogError {
    /// Whether this error means the disk itself failed, so that what was acknowledged may not
    /// be stored and the broker must halt (0.7 does; spec §3): any failed fsync, and every I/O
    /// error except those a request can cause with the disk healthy: a name too long for the
    /// filesystem, an invalid argument, too many open files (the process's or the system's),
    /// and a path that exists or is of the wrong kind. Errors that are not I/O errors are
    /// never the disk's fault.
    pub fn is_disk_failure(&self) -> bool {
        let LogError::Io { op, source, .. } = self else { return false };
        if op.starts_with("fsync") {
            return true;
        }
        !matches!(
            source.raw_os_error(),
            Some(
                errno::ENAMETOOLONG
                    | errno::EINVAL
                    | errno::EMFILE
                    | errno::ENFILE
                    | errno::EEXIST
                    | errno::ENOTDIR
                    | errno::EISDIR
            )
        )
    }

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

impl From<ProtocolError> for LogError {
    fn from(e: ProtocolError) -> Self {
        match e {
            ProtocolError::MessageSizeTooLarge { offset, size, max } => LogError::MessageTooLarge { offset, size, max },
            other => LogError::InvalidMessageSet(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(op: &'static str, errno: i32) -> LogError {
        LogError::Io { op, path: PathBuf::from("/log/t-0"), source: io::Error::from_raw_os_error(errno) }
    }

    #[test]
    fn only_the_disk_itself_halts() {
        // EIO, ENOSPC, EROFS, EDQUOT, EFBIG: the disk (or its limits) failed.
        for errno in [5, 28, 30, 122, 27] {
            assert!(io("append segment", errno).is_disk_failure(), "errno {errno}");
        }
        // A failed fsync always halts, whatever it says.
        assert!(io("fsync segment", errno::EINVAL).is_disk_failure());
        // What a request causes with the disk healthy.
        for errno in [
            errno::ENAMETOOLONG,
            errno::EINVAL,
            errno::EMFILE,
            errno::ENFILE,
            errno::EEXIST,
            errno::ENOTDIR,
            errno::EISDIR,
        ] {
            assert!(!io("create partition directory", errno).is_disk_failure(), "errno {errno}");
        }
        assert!(!LogError::InvalidPartition(-1).is_disk_failure());
        let too_many = LogError::TooManyPartitions { topic: "t".into(), partition: 0, open: 2, max: 2 };
        assert!(!too_many.is_disk_failure());
    }
}
