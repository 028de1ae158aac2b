//! Runtime for kwire: the wire primitives and traits that generated Kafka messages call, and
//! what every reader of Kafka's streams shares with them: the one reader of its size-prefixed
//! framing ([`framing`]) and the hashes clients and brokers agree on ([`hash`]). Record batches
//! and their codecs are `kwire-records`; Kafka 0.7's protocol and log are `kwire07-protocol`;
//! ZooKeeper data is `kwire07-zk`.
// No unsafe code except one audited line: `StrBytes::as_str` skips re-checking UTF-8 that its
// constructors already checked.
#![deny(unsafe_code)]

pub mod budget;
pub mod entity;
pub mod error;
pub mod error_code;
pub mod fixed_array;
pub mod frame;
pub mod framing;
pub mod hash;
#[cfg(feature = "json")]
pub mod json;
pub mod keyed;
pub mod reader;
pub mod records;
pub mod str_bytes;
pub mod tagged;
pub mod traits;
pub mod version;
pub mod wire;
pub mod writer;

#[doc(hidden)]
pub mod __codegen;

pub use bytes::{Bytes, BytesMut};
pub use entity::{BrokerId, GroupId, ProducerId, TopicName, TransactionalId};
pub use error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
pub use error_code::{ErrorCode, ErrorInfo};
pub use fixed_array::{Fixed, FixedArray};
pub use frame::{FrameApi, FrameBody, RequestFrame, RequestHeaderFields, ResponseFrame, ResponseHeaderFields};
pub use keyed::{Keyed, KeyedSlice};
pub use records::Records;
pub use str_bytes::StrBytes;
pub use tagged::UnknownTags;
pub use traits::{Decode, Encode, Message, Request, Response};
pub use uuid::Uuid;
pub use version::VersionRange;
pub use writer::Writer;

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
