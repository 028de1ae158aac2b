//! The producer's errors, one variant per exception of Kafka's Java producer that a caller
//! can meet (`TimeoutException`, `RecordTooLargeException`, `ProducerFencedException`, ...), so
//! that code moving off the Java client or librdkafka finds the names it handles.

use std::sync::Arc;
use std::time::Duration;

use kwire::ErrorCode;

use crate::config::ConfigError;

/// Why a send, a delivery, a flush or a transactional call failed. Cloneable: a batch that
/// fails hands the same error to each of its records.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProduceError {
    /// Java's `TimeoutException`: a record not delivered within `delivery.timeout.ms`, metadata
    /// or a transactional call not answered within `max.block.ms`.
    #[error("timeout: {0}")]
    Timeout(String),
    /// Java's `BufferExhaustedException` (a `TimeoutException`): `buffer.memory` stayed full
    /// for `max.block.ms`.
    #[error("failed to allocate {size} bytes within the configured max blocking time {waited:?} (buffer.memory {buffer_memory})")]
    BufferExhausted { size: usize, buffer_memory: usize, waited: Duration },
    /// Java's `RecordTooLargeException`: a record over `max.request.size` or `buffer.memory`,
    /// or a batch the broker refused as too large (MESSAGE_TOO_LARGE).
    #[error("the record to {topic} is {size} bytes, which is larger than {limit} ({what})")]
    RecordTooLarge { topic: Arc<str>, size: usize, limit: usize, what: &'static str },
    /// A partition the topic does not have (Java: `KafkaException` "Invalid partition").
    #[error("invalid partition {partition} for {topic}: it has {partitions} partitions")]
    InvalidPartition { topic: Arc<str>, partition: i32, partitions: i32 },
    /// Java's `UnknownTopicOrPartitionException`.
    #[error("unknown topic or partition: {0}")]
    UnknownTopicOrPartition(String),
    /// Java's `InvalidTopicException`: a name Kafka refuses.
    #[error("invalid topic: {0}")]
    InvalidTopic(String),
    /// Java's `TopicAuthorizationException`.
    #[error("not authorized to access topic {0}")]
    TopicAuthorization(String),
    /// Java's `ClusterAuthorizationException` (an idempotent producer needs IDEMPOTENT_WRITE).
    #[error("cluster authorization failed: {0}")]
    ClusterAuthorization(String),
    /// Java's `TransactionalIdAuthorizationException`.
    #[error("transactional id authorization failed: {0}")]
    TransactionalIdAuthorization(String),
    /// Java's `ProducerFencedException`: a newer producer with the same `transactional.id`
    /// (or a transaction coordinator that timed this one out) fenced this one. Fatal: close it.
    #[error("producer fenced: {0}")]
    ProducerFenced(String),
    /// Java's `InvalidProducerEpochException`: the broker has seen a newer epoch of this
    /// producer id. In a transaction, abort it.
    #[error("invalid producer epoch: {0}")]
    InvalidProducerEpoch(String),
    /// Java's `OutOfOrderSequenceException`: the broker saw a gap in this producer's sequence
    /// numbers; with a transactional producer, abort the transaction.
    #[error("out of order sequence number: {0}")]
    OutOfOrderSequence(String),
    /// Java's `UnknownProducerIdException`: the broker lost this producer's state (its
    /// records were deleted by retention); abort the transaction.
    #[error("unknown producer id: {0}")]
    UnknownProducerId(String),
    /// Java's `TransactionAbortedException`: the record was in a transaction that was aborted
    /// before it was sent.
    #[error("failing the record since the transaction was aborted")]
    TransactionAborted,
    /// Java's `TransactionAbortableException` (and the abortable state of its
    /// `KafkaException`): an earlier error left the transaction unable to commit; call
    /// `abort_transaction` and go on.
    #[error("the transaction cannot be committed, abort it: {0}")]
    TransactionAbortable(Arc<ProduceError>),
    /// Java's `InvalidTxnStateException`.
    #[error("invalid transaction state: {0}")]
    InvalidTxnState(String),
    /// Java's `CommitFailedException` in `send_offsets_to_transaction`: the group moved on
    /// (a new generation, an unknown member); abort the transaction.
    #[error("commit failed: {0}")]
    CommitFailed(String),
    /// Java's `IllegalStateException`: a call the producer's state does not allow (sending
    /// before `init_transactions`, committing with no transaction, using a closed producer).
    #[error("{0}")]
    IllegalState(String),
    /// Java's `UnsupportedVersionException`: the broker lacks what the configuration needs.
    #[error("unsupported version: {0}")]
    UnsupportedVersion(String),
    /// Java's `InvalidRecordException`: the broker refused records of the batch (KIP-467).
    #[error("invalid record: {0}")]
    InvalidRecord(String),
    /// Any other error code Kafka answered (Java's `ApiException` of that code).
    #[error("{code}{}", .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker { code: ErrorCode, message: Option<String> },
    /// The connection failed in a way no retry cured (bootstrap servers unreachable, ...).
    #[error("{0}")]
    Connection(kwire_connection::Error),
    /// A configuration Kafka's producer would refuse.
    #[error("{0}")]
    Config(#[from] ConfigError),
}

/// What a closed producer answers, in the words of Java's `IllegalStateException`.
pub(crate) const CLOSED: &str = "Cannot perform operation after producer has been closed";

impl ProduceError {
    pub(crate) fn closed() -> ProduceError {
        ProduceError::IllegalState(CLOSED.to_string())
    }

    /// Whether this is the error of a closed producer.
    pub fn is_closed(&self) -> bool {
        matches!(self, ProduceError::IllegalState(m) if m == CLOSED)
    }

    /// The exception Kafka's Java client raises for `code` from a broker, with its message.
    pub fn from_code(code: ErrorCode, message: Option<String>) -> ProduceError {
        let text =
            || message.clone().or_else(|| code.message().map(str::to_string)).unwrap_or_else(|| code.to_string());
        match code {
            ErrorCode::REQUEST_TIMED_OUT => ProduceError::Timeout(text()),
            ErrorCode::MESSAGE_TOO_LARGE | ErrorCode::RECORD_LIST_TOO_LARGE => {
                ProduceError::Broker { code, message: Some(text()) }
            }
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION | ErrorCode::UNKNOWN_TOPIC_ID => {
                ProduceError::UnknownTopicOrPartition(text())
            }
            ErrorCode::INVALID_TOPIC_EXCEPTION => ProduceError::InvalidTopic(text()),
            ErrorCode::TOPIC_AUTHORIZATION_FAILED => ProduceError::TopicAuthorization(text()),
            ErrorCode::CLUSTER_AUTHORIZATION_FAILED => ProduceError::ClusterAuthorization(text()),
            ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED => ProduceError::TransactionalIdAuthorization(text()),
            ErrorCode::PRODUCER_FENCED => ProduceError::ProducerFenced(text()),
            ErrorCode::INVALID_PRODUCER_EPOCH => ProduceError::InvalidProducerEpoch(text()),
            ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER => ProduceError::OutOfOrderSequence(text()),
            ErrorCode::UNKNOWN_PRODUCER_ID => ProduceError::UnknownProducerId(text()),
            ErrorCode::INVALID_TXN_STATE => ProduceError::InvalidTxnState(text()),
            ErrorCode::UNSUPPORTED_VERSION | ErrorCode::UNSUPPORTED_FOR_MESSAGE_FORMAT => {
                ProduceError::UnsupportedVersion(text())
            }
            ErrorCode::INVALID_RECORD => ProduceError::InvalidRecord(text()),
            ErrorCode::UNKNOWN_MEMBER_ID | ErrorCode::ILLEGAL_GENERATION | ErrorCode::FENCED_INSTANCE_ID => {
                ProduceError::CommitFailed(text())
            }
            _ => ProduceError::Broker { code, message },
        }
    }

    /// The Kafka error code behind this error, when a broker answered one.
    pub fn code(&self) -> Option<ErrorCode> {
        Some(match self {
            ProduceError::Broker { code, .. } => *code,
            ProduceError::UnknownTopicOrPartition(_) => ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            ProduceError::TopicAuthorization(_) => ErrorCode::TOPIC_AUTHORIZATION_FAILED,
            ProduceError::ClusterAuthorization(_) => ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
            ProduceError::TransactionalIdAuthorization(_) => ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            ProduceError::ProducerFenced(_) => ErrorCode::PRODUCER_FENCED,
            ProduceError::InvalidProducerEpoch(_) => ErrorCode::INVALID_PRODUCER_EPOCH,
            ProduceError::OutOfOrderSequence(_) => ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER,
            ProduceError::UnknownProducerId(_) => ErrorCode::UNKNOWN_PRODUCER_ID,
            ProduceError::InvalidTxnState(_) => ErrorCode::INVALID_TXN_STATE,
            ProduceError::InvalidTopic(_) => ErrorCode::INVALID_TOPIC_EXCEPTION,
            ProduceError::InvalidRecord(_) => ErrorCode::INVALID_RECORD,
            ProduceError::TransactionAbortable(inner) => return inner.code(),
            _ => return None,
        })
    }

    /// Whether the producer is unusable after this error (Java's fatal errors): close it.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            ProduceError::ProducerFenced(_)
                | ProduceError::TransactionalIdAuthorization(_)
                | ProduceError::ClusterAuthorization(_)
                | ProduceError::UnsupportedVersion(_)
        )
    }
}

impl From<kwire_connection::Error> for ProduceError {
    fn from(e: kwire_connection::Error) -> Self {
        match e {
            kwire_connection::Error::Broker { code, message, .. } => ProduceError::from_code(code, message),
            kwire_connection::Error::RetriesExhausted { last, .. } => ProduceError::from(*last),
            kwire_connection::Error::Timeout(after) => ProduceError::Timeout(format!("no response within {after:?}")),
            other => ProduceError::Connection(other),
        }
    }
}
