//! What a consumer call can fail with, one variant per exception Kafka's Java consumer throws
//! (`CommitFailedException`, `OffsetOutOfRangeException`, ...), so that code moving off the Java
//! or librdkafka consumers finds the cases it handles.

use std::collections::BTreeMap;

use kwire::ErrorCode;

use super::record::TopicPartition;
use crate::config::ConfigError;

/// An error of a consumer call.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConsumerError {
    /// A config Kafka's consumer would refuse (`ConfigException`).
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The consumer was closed (Java's `IllegalStateException: This consumer has already been
    /// closed`).
    #[error("this consumer has already been closed")]
    Closed,
    /// A call that does not fit the consumer's state: a seek on a partition not assigned, a
    /// commit without a group, a poll with no subscription or assignment
    /// (`IllegalStateException`).
    #[error("{0}")]
    IllegalState(String),
    /// An argument Kafka's consumer refuses: a negative offset, an empty topic name
    /// (`IllegalArgumentException`).
    #[error("{0}")]
    InvalidArgument(String),
    /// A subscription pattern that is not a regular expression (`InvalidRegularExpression`).
    #[error("invalid regular expression {pattern:?}: {reason}")]
    InvalidRegularExpression { pattern: String, reason: String },
    /// A call that did not finish within its timeout (`TimeoutException`).
    #[error("timed out: {0}")]
    Timeout(String),
    /// The fetch position of these partitions is out of the log's range and
    /// `auto.offset.reset` is `none` (`OffsetOutOfRangeException`).
    #[error("fetch position out of range with no reset policy for {}", positions(.0))]
    OffsetOutOfRange(BTreeMap<TopicPartition, i64>),
    /// These partitions have no committed offset and `auto.offset.reset` is `none`
    /// (`NoOffsetForPartitionException`).
    #[error("undefined offset with no reset policy for partitions: {}", list(.0))]
    NoOffsetForPartition(Vec<TopicPartition>),
    /// The log was truncated below the consumer's position after a leader change (KIP-320),
    /// and `auto.offset.reset` is `none`: the first offset known to diverge, when known
    /// (`LogTruncationException`).
    #[error("truncation detected for {partition} at offset {offset}{}", .divergent_offset.map(|d| format!(", the log diverges from offset {d}")).unwrap_or_default())]
    LogTruncation { partition: TopicPartition, offset: i64, divergent_offset: Option<i64> },
    /// A batch failed its CRC or did not decode: the position stays before it, so polling
    /// again meets it again until the application seeks past it (Kafka's `KafkaException`
    /// caused by `CorruptRecordException`).
    #[error("corrupt record batch in {partition} at offset {offset}: {reason}; seek past it to continue")]
    CorruptRecord { partition: TopicPartition, offset: i64, reason: String },
    /// The commit cannot complete: the member was removed from the group or a rebalance has
    /// assigned its partitions elsewhere (`CommitFailedException`).
    #[error("commit cannot be completed since the group has already rebalanced: {0}")]
    CommitFailed(String),
    /// The group is rebalancing: commit again once it finished (`RebalanceInProgressException`).
    #[error("offset commit cannot be completed since the consumer is undergoing a rebalance")]
    RebalanceInProgress,
    /// Another member took this `group.instance.id` (`FencedInstanceIdException`).
    #[error("the group.instance.id {0} was fenced by another member")]
    FencedInstanceId(String),
    /// A KIP-848 static member joined while its previous instance had not left
    /// (`UnreleasedInstanceIdException`).
    #[error("the group.instance.id {0} is still in use by a member that has not left")]
    UnreleasedInstanceId(String),
    /// The topic or partition does not exist (`UnknownTopicOrPartitionException`).
    #[error("this server does not host {0}")]
    UnknownTopicOrPartition(String),
    /// A topic name Kafka refuses (`InvalidTopicException`).
    #[error("invalid topic: {0}")]
    InvalidTopic(String),
    /// Not authorized to read these topics (`TopicAuthorizationException`).
    #[error("not authorized to access topics: {0:?}")]
    TopicAuthorization(Vec<String>),
    /// Not authorized to use the group (`GroupAuthorizationException`).
    #[error("not authorized to access group: {0}")]
    GroupAuthorization(String),
    /// The broker refused the group membership (INVALID_GROUP_ID, GROUP_MAX_SIZE_REACHED,
    /// INCONSISTENT_GROUP_PROTOCOL, UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION, ...): the
    /// member stops, as Kafka's does.
    #[error("the group refused this member: {code}{}", .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Group { code: ErrorCode, message: Option<String> },
    /// The broker answered an error this consumer does not recover from.
    #[error("{context} failed with {code}")]
    Broker { context: &'static str, code: ErrorCode },
    /// The connection failed, or retries ran out (`KafkaException`).
    #[error("{0}")]
    Connection(#[from] kwire_connection::Error),
}

impl ConsumerError {
    /// The error a Kafka error code means, for a call described by `context`.
    pub(crate) fn from_code(context: &'static str, code: ErrorCode, subject: &str) -> ConsumerError {
        match code {
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION | ErrorCode::UNKNOWN_TOPIC_ID => {
                ConsumerError::UnknownTopicOrPartition(subject.to_owned())
            }
            ErrorCode::INVALID_TOPIC_EXCEPTION => ConsumerError::InvalidTopic(subject.to_owned()),
            ErrorCode::TOPIC_AUTHORIZATION_FAILED => ConsumerError::TopicAuthorization(vec![subject.to_owned()]),
            ErrorCode::GROUP_AUTHORIZATION_FAILED => ConsumerError::GroupAuthorization(subject.to_owned()),
            ErrorCode::REBALANCE_IN_PROGRESS => ConsumerError::RebalanceInProgress,
            ErrorCode::FENCED_INSTANCE_ID => ConsumerError::FencedInstanceId(subject.to_owned()),
            ErrorCode::UNRELEASED_INSTANCE_ID => ConsumerError::UnreleasedInstanceId(subject.to_owned()),
            _ => ConsumerError::Broker { context, code },
        }
    }

    /// Whether this error ends the consumer's group membership for good (the member stops
    /// heartbeating and every later call gets it), as Kafka's fatal errors do.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            ConsumerError::FencedInstanceId(_)
                | ConsumerError::UnreleasedInstanceId(_)
                | ConsumerError::GroupAuthorization(_)
                | ConsumerError::Group { .. }
                | ConsumerError::Closed
        )
    }
}

fn positions(map: &BTreeMap<TopicPartition, i64>) -> String {
    map.iter().map(|(tp, offset)| format!("{tp}={offset}")).collect::<Vec<_>>().join(", ")
}

fn list(partitions: &[TopicPartition]) -> String {
    partitions.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
