//! Kafka 0.7's wire format, hand-written from `shared/spec/kafka07.md`.
//!
//! * [`frame`]: the `i32 size` framing of requests and responses: an incremental decoder with
//!   0.7's limits over the runtime's one framing reader.
//! * [`request`] / [`response`]: the five request types and the three responses, both directions.
//! * [`versioned`]: kwire's MODIFY_TOPIC (type 5), versioned requests with generated bodies.
//! * [`message`], [`compression`], [`message_set`]: messages (magic 0 and 1), gzip and xerial
//!   snappy, and shallow/deep iteration with 0.7's next-offset rules.
//! * [`topic`]: 0.7.2's topic-name validation (a topic name becomes a directory name).
//! * [`RecvBuffer`]: a receive buffer for frames that recycles its memory.
//! * [`ErrorCode`]: the complete 0.7 error-code set (−1..4).
//! * [`log`]: the on-disk segment log (segments named by byte offset, recovery after a crash,
//!   group commit, retention).
//!
//! No network code lives here; the broker and client build on these pieces.
#![forbid(unsafe_code)]

mod codec;
pub mod compression;
pub mod error;
pub mod error_code;
pub mod frame;
pub mod log;
pub mod message;
pub mod message_set;
mod reader;
pub mod recv_buffer;
pub mod request;
pub mod response;
pub mod topic;
pub mod versioned;

pub use compression::{Codec, DecodeLimits};
pub use error::ProtocolError;
pub use error_code::ErrorCode;
pub use frame::{FrameDecoder, DEFAULT_MAX_REQUEST_SIZE};
pub use message::{Magic, MessageRef};
pub use message_set::{
    complete_bytes, valid_bytes, validate_message_set, validate_message_set_within, DeepIter, DeepMessage, SetSummary,
    ShallowEntry, ShallowIter,
};
pub use recv_buffer::RecvBuffer;
pub use request::{
    FetchRequest, OffsetsRequest, ProduceRequest, Request, RequestType, OFFSETS_EARLIEST, OFFSETS_LATEST,
};
pub use response::{FetchResponse, MultiFetchResponse, OffsetsResponse};
pub use topic::{
    validate_new_topic, validate_topic, validate_topic_dirs, TopicError, DEFAULT_MAX_TOPIC_NAME_LENGTH,
    MAX_DIR_NAME_BYTES,
};
pub use versioned::{VersionedRequest, VersionedResponse};

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
