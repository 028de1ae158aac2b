//! Runtime for kafka-wire: the wire primitives and traits that generated Kafka messages call,
//! record formats, and a hand-written implementation of Kafka 0.7's legacy protocol and log.
// No unsafe code except one audited line: `StrBytes::as_str` skips re-checking UTF-8 that its
// constructors already checked.
#![deny(unsafe_code)]

pub mod error;
pub mod fixed_array;
pub mod legacy;
pub mod log;
pub mod records;
pub mod str_bytes;
pub mod tagged;
pub mod traits;
pub mod version;
pub mod wire;
pub mod writer;
pub mod zk;

#[doc(hidden)]
pub mod __codegen;

pub use bytes::{Bytes, BytesMut};
pub use error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
pub use fixed_array::{Fixed, FixedArray};
pub use records::Records;
pub use str_bytes::StrBytes;
pub use tagged::UnknownTags;
pub use traits::{Decode, Encode, Message, Request, Response};
pub use uuid::Uuid;
pub use version::VersionRange;
pub use writer::Writer;
