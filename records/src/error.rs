//! Errors from reading and building record data.
//!
//! Every read error names the batch (its index and byte position inside the `records` field)
//! and what was wrong with it, so a caller can tell one bad batch from a fetch cut short.

use super::compression::codec::Compression;

/// A problem with one batch of a `records` field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record batch #{batch_index} at byte {batch_position}: {kind}")]
pub struct RecordsError {
    batch_index: usize,
    batch_position: usize,
    kind: RecordsErrorKind,
}

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
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordsErrorKind {
    /// The data ends before the batch does (a partial trailing batch).
    #[error("truncated: the batch needs {needed} bytes but only {available} remain")]
    Truncated { needed: usize, available: usize },
    /// The batch length field is below the minimum size of its format.
    #[error("batch length {length} is below the minimum {minimum} for magic {magic}")]
    LengthTooSmall { length: i32, minimum: usize, magic: i8 },
    /// The magic byte names no format this crate reads.
    #[error("unsupported magic {0}")]
    UnsupportedMagic(i8),
    /// The stored checksum does not match the bytes (CRC-32C for magic 2, CRC-32 before).
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    CrcMismatch { stored: u32, computed: u32 },
    /// The attributes name a compression codec that does not exist, or not for this magic.
    #[error("compression codec id {codec} is not valid for magic {magic}")]
    InvalidCodec { codec: u8, magic: i8 },
    /// The codec's cargo feature is off in this build.
    #[error("{0} data, but this build of kwire-records has no {0} (its cargo feature is off)")]
    CodecNotBuilt(Compression),
    /// The compressed payload could not be decompressed.
    #[error("{codec} decompression failed: {reason}")]
    Decompression { codec: Compression, reason: String },
    /// Decompressing would exceed the configured limit.
    #[error("{codec} data decompresses to more than the limit of {limit} bytes")]
    DecompressedTooLarge { codec: Compression, limit: usize },
    /// A field inside the batch is malformed.
    #[error("{structure}.{field} at byte {offset}: {problem}")]
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

/// How a field is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Malformation {
    /// Fewer bytes remained than the field needs.
    #[error("not enough bytes (requested {requested}, available {available})")]
    NotEnoughBytes { requested: usize, available: usize },
    /// A varint ran past its maximum width.
    #[error("varint longer than its maximum width")]
    VarintTooLong,
    /// A length or count was negative where that is not allowed.
    #[error("invalid length or count {0}")]
    InvalidLength(i64),
    /// A count claims more elements than the bytes left could hold at the smallest size an
    /// element can have; refused before anything is reserved for it.
    #[error("count {count} cannot fit: the {available} bytes left hold at most {max}")]
    CountExceedsBytes { count: u64, available: usize, max: usize },
    /// A record's declared length disagrees with the bytes its fields used.
    #[error("declared {declared} bytes but the fields used {used}")]
    LengthMismatch { declared: usize, used: usize },
    /// Bytes were left after the declared number of records.
    #[error("{0} bytes left after the last record")]
    TrailingBytes(usize),
    /// A compressed legacy wrapper contains another compressed message.
    #[error("nested compression inside a compressed message set")]
    NestedCompression,
    /// A compressed legacy wrapper has a null value.
    #[error("compressed wrapper message has a null value")]
    NullWrapperValue,
    /// An inner legacy message's magic differs from its wrapper's.
    #[error("inner message magic {inner} differs from wrapper magic {wrapper}")]
    MagicMismatch { wrapper: i8, inner: i8 },
    /// A compressed legacy wrapper holds no messages.
    #[error("compressed wrapper message holds no messages")]
    EmptyWrapper,
    /// A control record's key or value is not a known control record layout.
    #[error("not a valid control record: {0}")]
    InvalidControlRecord(&'static str),
}

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
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The codec cannot be used with the chosen magic (zstd needs magic 2).
    #[error("{codec} compression is not available with magic {magic}")]
    CodecNotAllowed { codec: Compression, magic: i8 },
    /// Record headers need magic 2.
    #[error("record headers need magic 2, the batch uses magic {magic}")]
    HeadersNeedMagic2 { magic: i8 },
    /// Offsets must increase within a batch and stay within i32 of the base offset.
    #[error("offset {offset} cannot follow {previous:?} in a batch with base offset {base}")]
    InvalidOffset { offset: i64, previous: Option<i64>, base: i64 },
    /// A timestamp is too far from the batch's base timestamp to store as a delta.
    #[error("timestamp {timestamp} is too far from base timestamp {base}")]
    TimestampOutOfRange { timestamp: i64, base: i64 },
    /// A key, value, header or the batch itself exceeds the i32 length Kafka can encode.
    #[error("{what} of {len} bytes exceeds the maximum Kafka can encode")]
    TooLarge { what: &'static str, len: usize },
    /// The codec's cargo feature is off in this build.
    #[error("{0} compression is not in this build of kwire-records (its cargo feature is off)")]
    CodecNotBuilt(Compression),
    /// Compression failed.
    #[error("{codec} compression failed: {reason}")]
    Compression { codec: Compression, reason: String },
    /// Control batches are magic 2 only.
    #[error("control batches need magic 2")]
    ControlNeedsMagic2,
}
