//! What can go wrong on a connection, as one error type that names what failed.

use std::sync::Arc;
use std::time::Duration;

use kwire::messages::ApiKey;
use kwire::{DecodeError, EncodeError, ErrorCode};
use kwire_runtime::framing::FrameSizeError;

/// An error of a connection. Cloneable, so that a connection that fails can hand the same
/// error to every request waiting on it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A response frame declared more bytes than the configured maximum.
    #[error("a response frame of {size} bytes exceeds the maximum of {max} bytes")]
    FrameTooLarge { size: i64, max: usize },
    /// A response frame declared a negative size, or one too small for a header.
    #[error("a response frame declared an impossible size of {0} bytes")]
    BadFrameSize(i32),
    /// A response answered no request in flight.
    #[error("a response with correlation id {0} matches no request in flight")]
    UnknownCorrelationId(i32),
    /// A response did not decode.
    #[error("{api:?} v{version} response (correlation id {correlation_id}): {source}")]
    Decode { api: ApiKey, version: i16, correlation_id: i32, source: DecodeError },
    /// A request did not encode.
    #[error("encoding {api:?} v{version}: {source}")]
    Encode { api: ApiKey, version: i16, source: EncodeError },
    /// A version this code cannot write (outside the schema's valid versions).
    #[error("{api:?} v{version} is not a version this code can write")]
    UnsupportedVersion { api: ApiKey, version: i16 },
    /// The broker and this code share no version of an API.
    #[error("the broker supports no version of {0:?} that this code can write")]
    NoCommonVersion(ApiKey),
    /// The response was of another API than the request (a broker or proxy bug).
    #[error("expected a {expected:?} response, got {got:?}")]
    UnexpectedResponse { expected: ApiKey, got: ApiKey },
    /// The socket failed.
    #[error("I/O: {0}")]
    Io(Arc<std::io::Error>),
    /// The connection is closed (by the broker, or after an earlier error).
    #[error("the connection is closed{}", .0.as_deref().map(|why| format!(": {why}")).unwrap_or_default())]
    Closed(Option<Arc<str>>),
    /// No response within the request timeout. A request that was written when it timed out
    /// also closes its connection (as Kafka's clients do at `request.timeout.ms`): the broker
    /// may never answer, and a later request would wait behind it.
    #[error("no response within {0:?}")]
    Timeout(Duration),
    /// SASL authentication failed: Kafka's error code and message.
    #[error("authentication failed ({code}): {message}")]
    Authentication { code: ErrorCode, message: String },
    /// The broker does not enable the SASL mechanism asked for.
    #[error("the broker does not enable SASL mechanism {mechanism} (it enables {enabled:?})")]
    MechanismNotEnabled { mechanism: String, enabled: Vec<String> },
    /// The broker answered a request with an error code.
    #[error("{api:?} failed with {code}{}", .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker { api: ApiKey, code: ErrorCode, message: Option<String> },
    /// A retriable error persisted after the retries allowed.
    #[error("gave up after {attempts} attempts: {last}")]
    RetriesExhausted { attempts: u32, last: Box<Error> },
    /// The TLS configuration or handshake failed (an untrusted certificate, a wrong name).
    #[error("TLS: {0}")]
    Tls(String),
    /// A name did not resolve, or the cluster has no broker for what was asked.
    #[error("{0}")]
    Routing(String),
    /// Bytes that break the protocol although they decode: a FindCoordinator answer without
    /// the key asked for, a Produce frame to forward too short to hold its `acks`.
    #[error("protocol violation: {0}")]
    Protocol(String),
}

impl From<FrameSizeError> for Error {
    fn from(e: FrameSizeError) -> Self {
        match e {
            FrameSizeError::Impossible(size) => Error::BadFrameSize(size),
            FrameSizeError::TooLarge { size, max } => Error::FrameTooLarge { size: size as i64, max },
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(Arc::new(e))
    }
}

impl Error {
    /// Whether retrying (after refreshing metadata) may succeed. A routing error counts: a
    /// partition without a leader gets one after an election.
    pub fn is_retriable(&self) -> bool {
        match self {
            Error::Broker { code, .. } => code.is_retriable(),
            Error::Io(_) | Error::Closed(_) | Error::Timeout(_) | Error::Routing(_) => true,
            _ => false,
        }
    }
}
