//! kwire: Apache Kafka's wire protocol in Rust.
//!
//! [`messages`] holds one type per message schema of Apache Kafka 4.4.0 (another release through
//! `KAFKA_SCHEMAS_DIR`), generated at build time by
//! `kwire-codegen`, with encoders and decoders for every version; [`runtime`] holds the
//! wire primitives, traits and record formats they use.
//!
//! ```
//! use kwire::messages::{ApiKey, ApiVersionsRequest};
//! use kwire::{Decode, Encode};
//!
//! let request = ApiVersionsRequest { client_software_name: "demo".into(), ..Default::default() };
//! let bytes = request.encode_to_bytes(3).unwrap();
//! assert_eq!(ApiVersionsRequest::decode(&mut bytes.clone(), 3).unwrap(), request);
//! assert_eq!(ApiKey::ApiVersions.response_header_version(3), 0);
//! ```

pub use kwire_runtime as runtime;
#[cfg(feature = "json")]
pub use kwire_runtime::json::{Json, JsonError};
pub use kwire_runtime::{
    BrokerId, Bytes, BytesMut, Decode, DecodeError, DecodeErrorKind, Encode, EncodeError, EncodeErrorKind, ErrorCode,
    GroupId, Keyed, KeyedSlice, Message, ProducerId, Records, Request, Response, StrBytes, TopicName, TransactionalId,
    Uuid, VersionRange,
};

/// Every request, response and header of Apache Kafka's schemas (4.4.0 unless `KAFKA_SCHEMAS_DIR` names another release).
#[allow(missing_docs)]
pub mod messages {
    include!(concat!(env!("OUT_DIR"), "/kwire/mod.rs"));
}

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
