//! Errors of Kafka 0.7's wire format. Each variant names the structure or field that failed and
//! where (byte offset in the frame, or log offset of the message).

use crate::codec::Codec;
use crate::topic::TopicError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("{what} at byte {offset}: needed {needed} bytes, {available} available")]
    Truncated { what: &'static str, offset: usize, needed: usize, available: usize },

    #[error("{what} at byte {offset} is negative ({value})")]
    NegativeLength { what: &'static str, offset: usize, value: i64 },

    #[error("{what} at byte {offset} is {value}, above the limit of {max}")]
    CountTooLarge { what: &'static str, offset: usize, value: usize, max: usize },

    #[error("frame size {size} is too small for a frame or larger than the limit of {max}")]
    FrameSize { size: i32, max: usize },

    #[error("unknown request type {0}")]
    UnknownRequestType(i16),

    #[error("unknown error code {0} (0.7 defines only -1..4)")]
    UnknownErrorCode(i16),

    #[error("invalid topic name: {0}")]
    InvalidTopic(#[from] TopicError),

    #[error("{what} is {size} bytes, too large to encode (limit {limit})")]
    TooLargeToEncode { what: &'static str, size: usize, limit: usize },

    #[error("message at offset {offset}: negative length {length}")]
    InvalidMessageSize { offset: u64, length: i32 },

    #[error(
        "message at offset {offset} is {needed} bytes long but only {available} bytes are present: \
         a single message larger than the fetch size (or a corrupt log)"
    )]
    MessageLargerThanFetchSize { offset: u64, needed: usize, available: usize },

    #[error("message at offset {offset}: length {length} is shorter than its {min}-byte header")]
    MessageTooShort { offset: u64, length: usize, min: usize },

    #[error("message at offset {offset}: unknown magic byte {magic}")]
    UnknownMagic { offset: u64, magic: u8 },

    #[error("message at offset {offset}: unknown compression codec {codec} (attributes {attributes:#04x})")]
    UnknownCodec { offset: u64, codec: u8, attributes: u8 },

    #[error("message at offset {offset}: CRC mismatch, stored {stored:#010x}, computed {computed:#010x}")]
    CrcMismatch { offset: u64, stored: u32, computed: u32 },

    #[error("message at offset {offset}: compressed messages nested deeper than {max_depth} levels")]
    NestingTooDeep { offset: u64, max_depth: usize },

    #[error("message at offset {offset}: decompressed data exceeds the limit of {limit} bytes")]
    DecompressedTooLarge { offset: u64, limit: usize },

    /// The wrappers of one request together decompressed to more than the request may: each
    /// wrapper has its own limit, and a request of many small bombs has this one.
    #[error("message at offset {offset}: the request's wrappers decompress to more than its budget of {budget} bytes")]
    RequestBudgetExceeded { offset: u64, budget: usize },

    #[error("message at offset {offset}: corrupt {codec:?} payload: {detail}")]
    Decompression { offset: u64, codec: Codec, detail: String },

    #[error("message at offset {offset}: payload of {size} bytes exceeds the maximum message size {max}")]
    MessageSizeTooLarge { offset: u64, size: usize, max: usize },
}
