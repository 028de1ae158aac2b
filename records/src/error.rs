//! Errors from reading and building record data. Their messages are written out rather than
//! derived, so that a build of this crate compiles no proc-macro crate (nor syn) before it.
//!
//! Every read error names the batch (its index and byte position inside the `records` field)
//! and what was wrong with it, so a caller can tell one bad batch from a fetch cut short.

use std::fmt;

use super::compression::codec::Compression;

/// A problem with one batch of a `records` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordsError {
    batch_index: usize,
    batch_position: usize,
    kind: RecordsErrorKind,
}

impl fmt::Display for RecordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let RecordsError { batch_index, batch_position, kind } = self;
        write!(f, "record batch #{batch_index} at byte {batch_position}: {kind}")
    }
}

impl std::error::Error for RecordsError {}

impl RecordsError {
    pub(crate) fn new(batch_index: usize, batch_position: usize, kind: RecordsErrorKind) -> Self {
        RecordsError { batch_index, batch_position, kind }
    }

    /// Which batch failed, counting from 0 in the order batches appear.
    pub fn batch_index(&self) -> usize {
        self.batch_index
    }

    /// Byte position of the failing batch's first byte inside the `records` field.
    pub fn batch_position(&self) -> usize {
        self.batch_position
    }

    /// What went wrong.
    pub fn kind(&self) -> &RecordsErrorKind {
        &self.kind
    }

    /// Whether the data simply stops inside the last batch, as fetch responses may do.
    /// Such a tail is not corruption: the batch is complete on the broker.
    pub fn is_truncated(&self) -> bool {
        matches!(self.kind, RecordsErrorKind::Truncated { .. })
    }
}

/// What went wrong with a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordsErrorKind {
    /// The data ends before the batch does (a partial trailing batch).
    Truncated { needed: usize, available: usize },
    /// The batch length field is below the minimum size of its format.
    LengthTooSmall { length: i32, minimum: usize, magic: i8 },
    /// The magic byte names no format this crate reads.
    UnsupportedMagic(i8),
    /// The stored checksum does not match the bytes (CRC-32C for magic 2, CRC-32 before).
    CrcMismatch { stored: u32, computed: u32 },
    /// The attributes name a compression codec that does not exist, or not for this magic.
    InvalidCodec { codec: u8, magic: i8 },
    /// The codec's cargo feature is off in this build.
    CodecNotBuilt(Compression),
    /// The compressed payload could not be decompressed.
    Decompression { codec: Compression, reason: String },
    /// Decompressing would exceed the configured limit.
    DecompressedTooLarge { codec: Compression, limit: usize },
    /// A field inside the batch is malformed.
    Malformed {
        /// The structure being read: "RecordBatch", "Record", "Header", "Message", ...
        structure: &'static str,
        /// The field being read.
        field: &'static str,
        /// Byte offset of the field inside the batch, or inside the decompressed data for
        /// records of a compressed batch.
        offset: usize,
        /// What is wrong with it.
        problem: Malformation,
    },
}

impl fmt::Display for RecordsErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordsErrorKind::Truncated { needed, available } => {
                write!(f, "truncated: the batch needs {needed} bytes but only {available} remain")
            }
            RecordsErrorKind::LengthTooSmall { length, minimum, magic } => {
                write!(f, "batch length {length} is below the minimum {minimum} for magic {magic}")
            }
            RecordsErrorKind::UnsupportedMagic(v0) => write!(f, "unsupported magic {v0}"),
            RecordsErrorKind::CrcMismatch { stored, computed } => {
                write!(f, "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")
            }
            RecordsErrorKind::InvalidCodec { codec, magic } => {
                write!(f, "compression codec id {codec} is not valid for magic {magic}")
            }
            RecordsErrorKind::CodecNotBuilt(v0) => {
                write!(f, "{v0} data, but this build of kwire-records has no {v0} (its cargo feature is off)")
            }
            RecordsErrorKind::Decompression { codec, reason } => write!(f, "{codec} decompression failed: {reason}"),
            RecordsErrorKind::DecompressedTooLarge { codec, limit } => {
                write!(f, "{codec} data decompresses to more than the limit of {limit} bytes")
            }
            RecordsErrorKind::Malformed { structure, field, offset, problem } => {
                write!(f, "{structure}.{field} at byte {offset}: {problem}")
            }
        }
    }
}

impl std::error::Error for RecordsErrorKind {}

/// How a field is malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformation {
    /// Fewer bytes remained than the field needs.
    NotEnoughBytes { requested: usize, available: usize },
    /// A varint ran past its maximum width.
    VarintTooLong,
    /// A length or count was negative where that is not allowed.
    InvalidLength(i64),
    /// A count claims more elements than the bytes left could hold at the smallest size an
    /// element can have; refused before anything is reserved for it.
    CountExceedsBytes { count: u64, available: usize, max: usize },
    /// A record's declared length disagrees with the bytes its fields used.
    LengthMismatch { declared: usize, used: usize },
    /// Bytes were left after the declared number of records.
    TrailingBytes(usize),
    /// A compressed legacy wrapper contains another compressed message.
    NestedCompression,
    /// A compressed legacy wrapper has a null value.
    NullWrapperValue,
    /// An inner legacy message's magic differs from its wrapper's.
    MagicMismatch { wrapper: i8, inner: i8 },
    /// A compressed legacy wrapper holds no messages.
    EmptyWrapper,
    /// A control record's key or value is not a known control record layout.
    InvalidControlRecord(&'static str),
}

impl fmt::Display for Malformation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformation::NotEnoughBytes { requested, available } => {
                write!(f, "not enough bytes (requested {requested}, available {available})")
            }
            Malformation::VarintTooLong => write!(f, "varint longer than its maximum width"),
            Malformation::InvalidLength(v0) => write!(f, "invalid length or count {v0}"),
            Malformation::CountExceedsBytes { count, available, max } => {
                write!(f, "count {count} cannot fit: the {available} bytes left hold at most {max}")
            }
            Malformation::LengthMismatch { declared, used } => {
                write!(f, "declared {declared} bytes but the fields used {used}")
            }
            Malformation::TrailingBytes(v0) => write!(f, "{v0} bytes left after the last record"),
            Malformation::NestedCompression => write!(f, "nested compression inside a compressed message set"),
            Malformation::NullWrapperValue => write!(f, "compressed wrapper message has a null value"),
            Malformation::MagicMismatch { wrapper, inner } => {
                write!(f, "inner message magic {inner} differs from wrapper magic {wrapper}")
            }
            Malformation::EmptyWrapper => write!(f, "compressed wrapper message holds no messages"),
            Malformation::InvalidControlRecord(v0) => write!(f, "not a valid control record: {v0}"),
        }
    }
}

impl std::error::Error for Malformation {}

impl From<kwire_runtime::reader::ReadError> for Malformation {
    fn from(e: kwire_runtime::reader::ReadError) -> Self {
        use kwire_runtime::reader::ReadError;
        match e {
            ReadError::NotEnoughBytes { requested, available } => Malformation::NotEnoughBytes { requested, available },
            ReadError::VarintTooLong => Malformation::VarintTooLong,
        }
    }
}

/// Why a batch could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// The codec cannot be used with the chosen magic (zstd needs magic 2).
    CodecNotAllowed { codec: Compression, magic: i8 },
    /// Record headers need magic 2.
    HeadersNeedMagic2 { magic: i8 },
    /// Offsets must increase within a batch and stay within i32 of the base offset.
    InvalidOffset { offset: i64, previous: Option<i64>, base: i64 },
    /// A timestamp is too far from the batch's base timestamp to store as a delta.
    TimestampOutOfRange { timestamp: i64, base: i64 },
    /// A key, value, header or the batch itself exceeds the i32 length Kafka can encode.
    TooLarge { what: &'static str, len: usize },
    /// The codec's cargo feature is off in this build.
    CodecNotBuilt(Compression),
    /// Compression failed.
    Compression { codec: Compression, reason: String },
    /// Control batches are magic 2 only.
    ControlNeedsMagic2,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::CodecNotAllowed { codec, magic } => {
                write!(f, "{codec} compression is not available with magic {magic}")
            }
            BuildError::HeadersNeedMagic2 { magic } => {
                write!(f, "record headers need magic 2, the batch uses magic {magic}")
            }
            BuildError::InvalidOffset { offset, previous, base } => {
                write!(f, "offset {offset} cannot follow {previous:?} in a batch with base offset {base}")
            }
            BuildError::TimestampOutOfRange { timestamp, base } => {
                write!(f, "timestamp {timestamp} is too far from base timestamp {base}")
            }
            BuildError::TooLarge { what, len } => {
                write!(f, "{what} of {len} bytes exceeds the maximum Kafka can encode")
            }
            BuildError::CodecNotBuilt(v0) => {
                write!(f, "{v0} compression is not in this build of kwire-records (its cargo feature is off)")
            }
            BuildError::Compression { codec, reason } => write!(f, "{codec} compression failed: {reason}"),
            BuildError::ControlNeedsMagic2 => write!(f, "control batches need magic 2"),
        }
    }
}

impl std::error::Error for BuildError {}
