// @generated from Apache Kafka 4.4.0's `Errors` (kafka-clients); do not edit.
// Regenerate: UPDATE_ERROR_CODES=1 cargo test -p kwire-runtime --test error_code_table

use super::{ErrorCode, ErrorInfo};

impl ErrorCode {
    /// The server experienced an unexpected error when processing the request.
    pub const UNKNOWN_SERVER_ERROR: ErrorCode = ErrorCode(-1);
    /// `NONE`.
    pub const NONE: ErrorCode = ErrorCode(0);
    /// The requested offset is not within the range of offsets maintained by the server.
    pub const OFFSET_OUT_OF_RANGE: ErrorCode = ErrorCode(1);
    /// This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.
    pub const CORRUPT_MESSAGE: ErrorCode = ErrorCode(2);
    /// This server does not host this topic-partition.
    pub const UNKNOWN_TOPIC_OR_PARTITION: ErrorCode = ErrorCode(3);
    /// The requested fetch size is invalid.
    pub const INVALID_FETCH_SIZE: ErrorCode = ErrorCode(4);
    /// There is no leader for this topic-partition as we are in the middle of a leadership election.
    pub const LEADER_NOT_AVAILABLE: ErrorCode = ErrorCode(5);
    /// For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.
    pub const NOT_LEADER_OR_FOLLOWER: ErrorCode = ErrorCode(6);
    /// The request timed out.
    pub const REQUEST_TIMED_OUT: ErrorCode = ErrorCode(7);
    /// The broker is not available.
    pub const BROKER_NOT_AVAILABLE: ErrorCode = ErrorCode(8);
    /// The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.
    pub const REPLICA_NOT_AVAILABLE: ErrorCode = ErrorCode(9);
    /// The request included a message larger than the max message size the server will accept.
    pub const MESSAGE_TOO_LARGE: ErrorCode = ErrorCode(10);
    /// The controller moved to another broker.
    pub const STALE_CONTROLLER_EPOCH: ErrorCode = ErrorCode(11);
    /// The metadata field of the offset request was too large.
    pub const OFFSET_METADATA_TOO_LARGE: ErrorCode = ErrorCode(12);
    /// The server disconnected before a response was received.
    pub const NETWORK_EXCEPTION: ErrorCode = ErrorCode(13);
    /// The coordinator is loading and hence can't process requests.
    pub const COORDINATOR_LOAD_IN_PROGRESS: ErrorCode = ErrorCode(14);
    /// The coordinator is not available.
    pub const COORDINATOR_NOT_AVAILABLE: ErrorCode = ErrorCode(15);
    /// This is not the correct coordinator.
    pub const NOT_COORDINATOR: ErrorCode = ErrorCode(16);
    /// The request attempted to perform an operation on an invalid topic.
    pub const INVALID_TOPIC_EXCEPTION: ErrorCode = ErrorCode(17);
    /// The request included message batch larger than the configured segment size on the server.
    pub const RECORD_LIST_TOO_LARGE: ErrorCode = ErrorCode(18);
    /// Messages are rejected since there are fewer in-sync replicas than required.
    pub const NOT_ENOUGH_REPLICAS: ErrorCode = ErrorCode(19);
    /// Messages are written to the log, but to fewer in-sync replicas than required.
    pub const NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode = ErrorCode(20);
    /// Produce request specified an invalid value for required acks.
    pub const INVALID_REQUIRED_ACKS: ErrorCode = ErrorCode(21);
    /// Specified group generation id is not valid.
    pub const ILLEGAL_GENERATION: ErrorCode = ErrorCode(22);
    /// The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.
    pub const INCONSISTENT_GROUP_PROTOCOL: ErrorCode = ErrorCode(23);
    /// The group id is invalid.
    pub const INVALID_GROUP_ID: ErrorCode = ErrorCode(24);
    /// The coordinator is not aware of this member.
    pub const UNKNOWN_MEMBER_ID: ErrorCode = ErrorCode(25);
    /// The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms).
    pub const INVALID_SESSION_TIMEOUT: ErrorCode = ErrorCode(26);
    /// The group is rebalancing, so a rejoin is needed.
    pub const REBALANCE_IN_PROGRESS: ErrorCode = ErrorCode(27);
    /// The committing offset data size is not valid.
    pub const INVALID_COMMIT_OFFSET_SIZE: ErrorCode = ErrorCode(28);
    /// Topic authorization failed.
    pub const TOPIC_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(29);
    /// Group authorization failed.
    pub const GROUP_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(30);
    /// Cluster authorization failed.
    pub const CLUSTER_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(31);
    /// The timestamp of the message is out of acceptable range.
    pub const INVALID_TIMESTAMP: ErrorCode = ErrorCode(32);
    /// The broker does not support the requested SASL mechanism.
    pub const UNSUPPORTED_SASL_MECHANISM: ErrorCode = ErrorCode(33);
    /// Request is not valid given the current SASL state.
    pub const ILLEGAL_SASL_STATE: ErrorCode = ErrorCode(34);
    /// The version of API is not supported.
    pub const UNSUPPORTED_VERSION: ErrorCode = ErrorCode(35);
    /// Topic with this name already exists.
    pub const TOPIC_ALREADY_EXISTS: ErrorCode = ErrorCode(36);
    /// Number of partitions is below 1.
    pub const INVALID_PARTITIONS: ErrorCode = ErrorCode(37);
    /// Replication factor is below 1 or larger than the number of available brokers.
    pub const INVALID_REPLICATION_FACTOR: ErrorCode = ErrorCode(38);
    /// Replica assignment is invalid.
    pub const INVALID_REPLICA_ASSIGNMENT: ErrorCode = ErrorCode(39);
    /// Configuration is invalid.
    pub const INVALID_CONFIG: ErrorCode = ErrorCode(40);
    /// This is not the correct controller for this cluster.
    pub const NOT_CONTROLLER: ErrorCode = ErrorCode(41);
    /// This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(42);
    /// The message format version on the broker does not support the request.
    pub const UNSUPPORTED_FOR_MESSAGE_FORMAT: ErrorCode = ErrorCode(43);
    /// Request parameters do not satisfy the configured policy.
    pub const POLICY_VIOLATION: ErrorCode = ErrorCode(44);
    /// The broker received an out of order sequence number.
    pub const OUT_OF_ORDER_SEQUENCE_NUMBER: ErrorCode = ErrorCode(45);
    /// The broker received a duplicate sequence number.
    pub const DUPLICATE_SEQUENCE_NUMBER: ErrorCode = ErrorCode(46);
    /// Producer attempted to produce with an old epoch.
    pub const INVALID_PRODUCER_EPOCH: ErrorCode = ErrorCode(47);
    /// The producer attempted a transactional operation in an invalid state.
    pub const INVALID_TXN_STATE: ErrorCode = ErrorCode(48);
    /// The producer attempted to use a producer id which is not currently assigned to its transactional id.
    pub const INVALID_PRODUCER_ID_MAPPING: ErrorCode = ErrorCode(49);
    /// The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms).
    pub const INVALID_TRANSACTION_TIMEOUT: ErrorCode = ErrorCode(50);
    /// The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing.
    pub const CONCURRENT_TRANSACTIONS: ErrorCode = ErrorCode(51);
    /// Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer.
    pub const TRANSACTION_COORDINATOR_FENCED: ErrorCode = ErrorCode(52);
    /// Transactional Id authorization failed.
    pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(53);
    /// Security features are disabled.
    pub const SECURITY_DISABLED: ErrorCode = ErrorCode(54);
    /// The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest.
    pub const OPERATION_NOT_ATTEMPTED: ErrorCode = ErrorCode(55);
    /// Disk error when trying to access log file on the disk.
    pub const KAFKA_STORAGE_ERROR: ErrorCode = ErrorCode(56);
    /// The user-specified log directory is not found in the broker config.
    pub const LOG_DIR_NOT_FOUND: ErrorCode = ErrorCode(57);
    /// SASL Authentication failed.
    pub const SASL_AUTHENTICATION_FAILED: ErrorCode = ErrorCode(58);
    /// This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception.
    pub const UNKNOWN_PRODUCER_ID: ErrorCode = ErrorCode(59);
    /// A partition reassignment is in progress.
    pub const REASSIGNMENT_IN_PROGRESS: ErrorCode = ErrorCode(60);
    /// Delegation Token feature is not enabled.
    pub const DELEGATION_TOKEN_AUTH_DISABLED: ErrorCode = ErrorCode(61);
    /// Delegation Token is not found on server.
    pub const DELEGATION_TOKEN_NOT_FOUND: ErrorCode = ErrorCode(62);
    /// Specified Principal is not valid Owner/Renewer.
    pub const DELEGATION_TOKEN_OWNER_MISMATCH: ErrorCode = ErrorCode(63);
    /// Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.
    pub const DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: ErrorCode = ErrorCode(64);
    /// Delegation Token authorization failed.
    pub const DELEGATION_TOKEN_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(65);
    /// Delegation Token is expired.
    pub const DELEGATION_TOKEN_EXPIRED: ErrorCode = ErrorCode(66);
    /// Supplied principalType is not supported.
    pub const INVALID_PRINCIPAL_TYPE: ErrorCode = ErrorCode(67);
    /// The group is not empty.
    pub const NON_EMPTY_GROUP: ErrorCode = ErrorCode(68);
    /// The group id does not exist.
    pub const GROUP_ID_NOT_FOUND: ErrorCode = ErrorCode(69);
    /// The fetch session ID was not found.
    pub const FETCH_SESSION_ID_NOT_FOUND: ErrorCode = ErrorCode(70);
    /// The fetch session epoch is invalid.
    pub const INVALID_FETCH_SESSION_EPOCH: ErrorCode = ErrorCode(71);
    /// There is no listener on the leader broker that matches the listener on which metadata request was processed.
    pub const LISTENER_NOT_FOUND: ErrorCode = ErrorCode(72);
    /// Topic deletion is disabled.
    pub const TOPIC_DELETION_DISABLED: ErrorCode = ErrorCode(73);
    /// The leader epoch in the request is older than the epoch on the broker.
    pub const FENCED_LEADER_EPOCH: ErrorCode = ErrorCode(74);
    /// The leader epoch in the request is newer than the epoch on the broker.
    pub const UNKNOWN_LEADER_EPOCH: ErrorCode = ErrorCode(75);
    /// The requesting client does not support the compression type of given partition.
    pub const UNSUPPORTED_COMPRESSION_TYPE: ErrorCode = ErrorCode(76);
    /// Broker epoch has changed.
    pub const STALE_BROKER_EPOCH: ErrorCode = ErrorCode(77);
    /// The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing.
    pub const OFFSET_NOT_AVAILABLE: ErrorCode = ErrorCode(78);
    /// The group member needs to have a valid member id before actually entering a consumer group.
    pub const MEMBER_ID_REQUIRED: ErrorCode = ErrorCode(79);
    /// The preferred leader was not available.
    pub const PREFERRED_LEADER_NOT_AVAILABLE: ErrorCode = ErrorCode(80);
    /// The group has reached its maximum size.
    pub const GROUP_MAX_SIZE_REACHED: ErrorCode = ErrorCode(81);
    /// The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.
    pub const FENCED_INSTANCE_ID: ErrorCode = ErrorCode(82);
    /// Eligible topic partition leaders are not available.
    pub const ELIGIBLE_LEADERS_NOT_AVAILABLE: ErrorCode = ErrorCode(83);
    /// Leader election not needed for topic partition.
    pub const ELECTION_NOT_NEEDED: ErrorCode = ErrorCode(84);
    /// No partition reassignment is in progress.
    pub const NO_REASSIGNMENT_IN_PROGRESS: ErrorCode = ErrorCode(85);
    /// Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.
    pub const GROUP_SUBSCRIBED_TO_TOPIC: ErrorCode = ErrorCode(86);
    /// This record has failed the validation on broker and hence will be rejected.
    pub const INVALID_RECORD: ErrorCode = ErrorCode(87);
    /// There are unstable offsets that need to be cleared.
    pub const UNSTABLE_OFFSET_COMMIT: ErrorCode = ErrorCode(88);
    /// The throttling quota has been exceeded.
    pub const THROTTLING_QUOTA_EXCEEDED: ErrorCode = ErrorCode(89);
    /// There is a newer producer with the same transactionalId which fences the current one.
    pub const PRODUCER_FENCED: ErrorCode = ErrorCode(90);
    /// A request illegally referred to a resource that does not exist.
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(91);
    /// A request illegally referred to the same resource twice.
    pub const DUPLICATE_RESOURCE: ErrorCode = ErrorCode(92);
    /// Requested credential would not meet criteria for acceptability.
    pub const UNACCEPTABLE_CREDENTIAL: ErrorCode = ErrorCode(93);
    /// Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters.
    pub const INCONSISTENT_VOTER_SET: ErrorCode = ErrorCode(94);
    /// The given update version was invalid.
    pub const INVALID_UPDATE_VERSION: ErrorCode = ErrorCode(95);
    /// Unable to update finalized features due to an unexpected server error.
    pub const FEATURE_UPDATE_FAILED: ErrorCode = ErrorCode(96);
    /// Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup.
    pub const PRINCIPAL_DESERIALIZATION_FAILURE: ErrorCode = ErrorCode(97);
    /// Requested snapshot was not found.
    pub const SNAPSHOT_NOT_FOUND: ErrorCode = ErrorCode(98);
    /// Requested position is not greater than or equal to zero, and less than the size of the snapshot.
    pub const POSITION_OUT_OF_RANGE: ErrorCode = ErrorCode(99);
    /// This server does not host this topic ID.
    pub const UNKNOWN_TOPIC_ID: ErrorCode = ErrorCode(100);
    /// This broker ID is already in use.
    pub const DUPLICATE_BROKER_REGISTRATION: ErrorCode = ErrorCode(101);
    /// The given broker ID was not registered.
    pub const BROKER_ID_NOT_REGISTERED: ErrorCode = ErrorCode(102);
    /// The log's topic ID did not match the topic ID in the request.
    pub const INCONSISTENT_TOPIC_ID: ErrorCode = ErrorCode(103);
    /// The clusterId in the request does not match that found on the server.
    pub const INCONSISTENT_CLUSTER_ID: ErrorCode = ErrorCode(104);
    /// The transactionalId could not be found.
    pub const TRANSACTIONAL_ID_NOT_FOUND: ErrorCode = ErrorCode(105);
    /// The fetch session encountered inconsistent topic ID usage.
    pub const FETCH_SESSION_TOPIC_ID_ERROR: ErrorCode = ErrorCode(106);
    /// The new ISR contains at least one ineligible replica.
    pub const INELIGIBLE_REPLICA: ErrorCode = ErrorCode(107);
    /// The AlterPartition request successfully updated the partition state but the leader has changed.
    pub const NEW_LEADER_ELECTED: ErrorCode = ErrorCode(108);
    /// The requested offset is moved to tiered storage.
    pub const OFFSET_MOVED_TO_TIERED_STORAGE: ErrorCode = ErrorCode(109);
    /// The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin.
    pub const FENCED_MEMBER_EPOCH: ErrorCode = ErrorCode(110);
    /// The instance ID is still used by another member in the consumer group. That member must leave first.
    pub const UNRELEASED_INSTANCE_ID: ErrorCode = ErrorCode(111);
    /// The assignor or its version range is not supported by the consumer group.
    pub const UNSUPPORTED_ASSIGNOR: ErrorCode = ErrorCode(112);
    /// The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API.
    pub const STALE_MEMBER_EPOCH: ErrorCode = ErrorCode(113);
    /// The request was sent to an endpoint of the wrong type.
    pub const MISMATCHED_ENDPOINT_TYPE: ErrorCode = ErrorCode(114);
    /// This endpoint type is not supported yet.
    pub const UNSUPPORTED_ENDPOINT_TYPE: ErrorCode = ErrorCode(115);
    /// This controller ID is not known.
    pub const UNKNOWN_CONTROLLER_ID: ErrorCode = ErrorCode(116);
    /// Client sent a push telemetry request with an invalid or outdated subscription ID.
    pub const UNKNOWN_SUBSCRIPTION_ID: ErrorCode = ErrorCode(117);
    /// Client sent a push telemetry request larger than the maximum size the broker will accept.
    pub const TELEMETRY_TOO_LARGE: ErrorCode = ErrorCode(118);
    /// The controller has considered the broker registration to be invalid.
    pub const INVALID_REGISTRATION: ErrorCode = ErrorCode(119);
    /// The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID.
    pub const TRANSACTION_ABORTABLE: ErrorCode = ErrorCode(120);
    /// The record state is invalid. The acknowledgement of delivery could not be completed.
    pub const INVALID_RECORD_STATE: ErrorCode = ErrorCode(121);
    /// The share session was not found.
    pub const SHARE_SESSION_NOT_FOUND: ErrorCode = ErrorCode(122);
    /// The share session epoch is invalid.
    pub const INVALID_SHARE_SESSION_EPOCH: ErrorCode = ErrorCode(123);
    /// The coordinator rejected the request because the state epoch did not match.
    pub const FENCED_STATE_EPOCH: ErrorCode = ErrorCode(124);
    /// The voter key doesn't match the receiving replica's key.
    pub const INVALID_VOTER_KEY: ErrorCode = ErrorCode(125);
    /// The voter is already part of the set of voters.
    pub const DUPLICATE_VOTER: ErrorCode = ErrorCode(126);
    /// The voter is not part of the set of voters.
    pub const VOTER_NOT_FOUND: ErrorCode = ErrorCode(127);
    /// The regular expression is not valid.
    pub const INVALID_REGULAR_EXPRESSION: ErrorCode = ErrorCode(128);
    /// Client metadata is stale. The client should rebootstrap to obtain new metadata.
    pub const REBOOTSTRAP_REQUIRED: ErrorCode = ErrorCode(129);
    /// The supplied topology is invalid.
    pub const STREAMS_INVALID_TOPOLOGY: ErrorCode = ErrorCode(130);
    /// The supplied topology epoch is invalid.
    pub const STREAMS_INVALID_TOPOLOGY_EPOCH: ErrorCode = ErrorCode(131);
    /// The supplied topology epoch is outdated.
    pub const STREAMS_TOPOLOGY_FENCED: ErrorCode = ErrorCode(132);
    /// The limit of share sessions has been reached.
    pub const SHARE_SESSION_LIMIT_REACHED: ErrorCode = ErrorCode(133);
    /// DeleteGroups could not complete; see the error message on the per-group result for details.
    pub const GROUP_DELETION_FAILED: ErrorCode = ErrorCode(134);
    /// The broker could not process the topology description update; see the error message for details.
    pub const STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED: ErrorCode = ErrorCode(135);
    /// The given controller ID was not registered.
    pub const CONTROLLER_ID_NOT_REGISTERED: ErrorCode = ErrorCode(136);
}

/// Every code, sorted by code (looked up by binary search).
pub(super) const ALL: &[ErrorInfo] = &[
    ErrorInfo { code: -1, name: "UNKNOWN_SERVER_ERROR", retriable: false, message: "The server experienced an unexpected error when processing the request." },
    ErrorInfo { code: 0, name: "NONE", retriable: false, message: "" },
    ErrorInfo { code: 1, name: "OFFSET_OUT_OF_RANGE", retriable: false, message: "The requested offset is not within the range of offsets maintained by the server." },
    ErrorInfo { code: 2, name: "CORRUPT_MESSAGE", retriable: true, message: "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt." },
    ErrorInfo { code: 3, name: "UNKNOWN_TOPIC_OR_PARTITION", retriable: true, message: "This server does not host this topic-partition." },
    ErrorInfo { code: 4, name: "INVALID_FETCH_SIZE", retriable: false, message: "The requested fetch size is invalid." },
    ErrorInfo { code: 5, name: "LEADER_NOT_AVAILABLE", retriable: true, message: "There is no leader for this topic-partition as we are in the middle of a leadership election." },
    ErrorInfo { code: 6, name: "NOT_LEADER_OR_FOLLOWER", retriable: true, message: "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition." },
    ErrorInfo { code: 7, name: "REQUEST_TIMED_OUT", retriable: true, message: "The request timed out." },
    ErrorInfo { code: 8, name: "BROKER_NOT_AVAILABLE", retriable: false, message: "The broker is not available." },
    ErrorInfo { code: 9, name: "REPLICA_NOT_AVAILABLE", retriable: true, message: "The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition." },
    ErrorInfo { code: 10, name: "MESSAGE_TOO_LARGE", retriable: false, message: "The request included a message larger than the max message size the server will accept." },
    ErrorInfo { code: 11, name: "STALE_CONTROLLER_EPOCH", retriable: false, message: "The controller moved to another broker." },
    ErrorInfo { code: 12, name: "OFFSET_METADATA_TOO_LARGE", retriable: false, message: "The metadata field of the offset request was too large." },
    ErrorInfo { code: 13, name: "NETWORK_EXCEPTION", retriable: true, message: "The server disconnected before a response was received." },
    ErrorInfo { code: 14, name: "COORDINATOR_LOAD_IN_PROGRESS", retriable: true, message: "The coordinator is loading and hence can't process requests." },
    ErrorInfo { code: 15, name: "COORDINATOR_NOT_AVAILABLE", retriable: true, message: "The coordinator is not available." },
    ErrorInfo { code: 16, name: "NOT_COORDINATOR", retriable: true, message: "This is not the correct coordinator." },
    ErrorInfo { code: 17, name: "INVALID_TOPIC_EXCEPTION", retriable: false, message: "The request attempted to perform an operation on an invalid topic." },
    ErrorInfo { code: 18, name: "RECORD_LIST_TOO_LARGE", retriable: false, message: "The request included message batch larger than the configured segment size on the server." },
    ErrorInfo { code: 19, name: "NOT_ENOUGH_REPLICAS", retriable: true, message: "Messages are rejected since there are fewer in-sync replicas than required." },
    ErrorInfo { code: 20, name: "NOT_ENOUGH_REPLICAS_AFTER_APPEND", retriable: true, message: "Messages are written to the log, but to fewer in-sync replicas than required." },
    ErrorInfo { code: 21, name: "INVALID_REQUIRED_ACKS", retriable: false, message: "Produce request specified an invalid value for required acks." },
    ErrorInfo { code: 22, name: "ILLEGAL_GENERATION", retriable: false, message: "Specified group generation id is not valid." },
    ErrorInfo { code: 23, name: "INCONSISTENT_GROUP_PROTOCOL", retriable: false, message: "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list." },
    ErrorInfo { code: 24, name: "INVALID_GROUP_ID", retriable: false, message: "The group id is invalid." },
    ErrorInfo { code: 25, name: "UNKNOWN_MEMBER_ID", retriable: false, message: "The coordinator is not aware of this member." },
    ErrorInfo { code: 26, name: "INVALID_SESSION_TIMEOUT", retriable: false, message: "The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms)." },
    ErrorInfo { code: 27, name: "REBALANCE_IN_PROGRESS", retriable: false, message: "The group is rebalancing, so a rejoin is needed." },
    ErrorInfo { code: 28, name: "INVALID_COMMIT_OFFSET_SIZE", retriable: false, message: "The committing offset data size is not valid." },
    ErrorInfo { code: 29, name: "TOPIC_AUTHORIZATION_FAILED", retriable: false, message: "Topic authorization failed." },
    ErrorInfo { code: 30, name: "GROUP_AUTHORIZATION_FAILED", retriable: false, message: "Group authorization failed." },
    ErrorInfo { code: 31, name: "CLUSTER_AUTHORIZATION_FAILED", retriable: false, message: "Cluster authorization failed." },
    ErrorInfo { code: 32, name: "INVALID_TIMESTAMP", retriable: false, message: "The timestamp of the message is out of acceptable range." },
    ErrorInfo { code: 33, name: "UNSUPPORTED_SASL_MECHANISM", retriable: false, message: "The broker does not support the requested SASL mechanism." },
    ErrorInfo { code: 34, name: "ILLEGAL_SASL_STATE", retriable: false, message: "Request is not valid given the current SASL state." },
    ErrorInfo { code: 35, name: "UNSUPPORTED_VERSION", retriable: false, message: "The version of API is not supported." },
    ErrorInfo { code: 36, name: "TOPIC_ALREADY_EXISTS", retriable: false, message: "Topic with this name already exists." },
    ErrorInfo { code: 37, name: "INVALID_PARTITIONS", retriable: false, message: "Number of partitions is below 1." },
    ErrorInfo { code: 38, name: "INVALID_REPLICATION_FACTOR", retriable: false, message: "Replication factor is below 1 or larger than the number of available brokers." },
    ErrorInfo { code: 39, name: "INVALID_REPLICA_ASSIGNMENT", retriable: false, message: "Replica assignment is invalid." },
    ErrorInfo { code: 40, name: "INVALID_CONFIG", retriable: false, message: "Configuration is invalid." },
    ErrorInfo { code: 41, name: "NOT_CONTROLLER", retriable: true, message: "This is not the correct controller for this cluster." },
    ErrorInfo { code: 42, name: "INVALID_REQUEST", retriable: false, message: "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details." },
    ErrorInfo { code: 43, name: "UNSUPPORTED_FOR_MESSAGE_FORMAT", retriable: false, message: "The message format version on the broker does not support the request." },
    ErrorInfo { code: 44, name: "POLICY_VIOLATION", retriable: false, message: "Request parameters do not satisfy the configured policy." },
    ErrorInfo { code: 45, name: "OUT_OF_ORDER_SEQUENCE_NUMBER", retriable: false, message: "The broker received an out of order sequence number." },
    ErrorInfo { code: 46, name: "DUPLICATE_SEQUENCE_NUMBER", retriable: false, message: "The broker received a duplicate sequence number." },
    ErrorInfo { code: 47, name: "INVALID_PRODUCER_EPOCH", retriable: false, message: "Producer attempted to produce with an old epoch." },
    ErrorInfo { code: 48, name: "INVALID_TXN_STATE", retriable: false, message: "The producer attempted a transactional operation in an invalid state." },
    ErrorInfo { code: 49, name: "INVALID_PRODUCER_ID_MAPPING", retriable: false, message: "The producer attempted to use a producer id which is not currently assigned to its transactional id." },
    ErrorInfo { code: 50, name: "INVALID_TRANSACTION_TIMEOUT", retriable: false, message: "The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms)." },
    ErrorInfo { code: 51, name: "CONCURRENT_TRANSACTIONS", retriable: true, message: "The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing." },
    ErrorInfo { code: 52, name: "TRANSACTION_COORDINATOR_FENCED", retriable: false, message: "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer." },
    ErrorInfo { code: 53, name: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", retriable: false, message: "Transactional Id authorization failed." },
    ErrorInfo { code: 54, name: "SECURITY_DISABLED", retriable: false, message: "Security features are disabled." },
    ErrorInfo { code: 55, name: "OPERATION_NOT_ATTEMPTED", retriable: false, message: "The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest." },
    ErrorInfo { code: 56, name: "KAFKA_STORAGE_ERROR", retriable: true, message: "Disk error when trying to access log file on the disk." },
    ErrorInfo { code: 57, name: "LOG_DIR_NOT_FOUND", retriable: false, message: "The user-specified log directory is not found in the broker config." },
    ErrorInfo { code: 58, name: "SASL_AUTHENTICATION_FAILED", retriable: false, message: "SASL Authentication failed." },
    ErrorInfo { code: 59, name: "UNKNOWN_PRODUCER_ID", retriable: false, message: "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception." },
    ErrorInfo { code: 60, name: "REASSIGNMENT_IN_PROGRESS", retriable: false, message: "A partition reassignment is in progress." },
    ErrorInfo { code: 61, name: "DELEGATION_TOKEN_AUTH_DISABLED", retriable: false, message: "Delegation Token feature is not enabled." },
    ErrorInfo { code: 62, name: "DELEGATION_TOKEN_NOT_FOUND", retriable: false, message: "Delegation Token is not found on server." },
    ErrorInfo { code: 63, name: "DELEGATION_TOKEN_OWNER_MISMATCH", retriable: false, message: "Specified Principal is not valid Owner/Renewer." },
    ErrorInfo { code: 64, name: "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", retriable: false, message: "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels." },
    ErrorInfo { code: 65, name: "DELEGATION_TOKEN_AUTHORIZATION_FAILED", retriable: false, message: "Delegation Token authorization failed." },
    ErrorInfo { code: 66, name: "DELEGATION_TOKEN_EXPIRED", retriable: false, message: "Delegation Token is expired." },
    ErrorInfo { code: 67, name: "INVALID_PRINCIPAL_TYPE", retriable: false, message: "Supplied principalType is not supported." },
    ErrorInfo { code: 68, name: "NON_EMPTY_GROUP", retriable: false, message: "The group is not empty." },
    ErrorInfo { code: 69, name: "GROUP_ID_NOT_FOUND", retriable: false, message: "The group id does not exist." },
    ErrorInfo { code: 70, name: "FETCH_SESSION_ID_NOT_FOUND", retriable: true, message: "The fetch session ID was not found." },
    ErrorInfo { code: 71, name: "INVALID_FETCH_SESSION_EPOCH", retriable: true, message: "The fetch session epoch is invalid." },
    ErrorInfo { code: 72, name: "LISTENER_NOT_FOUND", retriable: true, message: "There is no listener on the leader broker that matches the listener on which metadata request was processed." },
    ErrorInfo { code: 73, name: "TOPIC_DELETION_DISABLED", retriable: false, message: "Topic deletion is disabled." },
    ErrorInfo { code: 74, name: "FENCED_LEADER_EPOCH", retriable: true, message: "The leader epoch in the request is older than the epoch on the broker." },
    ErrorInfo { code: 75, name: "UNKNOWN_LEADER_EPOCH", retriable: true, message: "The leader epoch in the request is newer than the epoch on the broker." },
    ErrorInfo { code: 76, name: "UNSUPPORTED_COMPRESSION_TYPE", retriable: false, message: "The requesting client does not support the compression type of given partition." },
    ErrorInfo { code: 77, name: "STALE_BROKER_EPOCH", retriable: false, message: "Broker epoch has changed." },
    ErrorInfo { code: 78, name: "OFFSET_NOT_AVAILABLE", retriable: true, message: "The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing." },
    ErrorInfo { code: 79, name: "MEMBER_ID_REQUIRED", retriable: false, message: "The group member needs to have a valid member id before actually entering a consumer group." },
    ErrorInfo { code: 80, name: "PREFERRED_LEADER_NOT_AVAILABLE", retriable: true, message: "The preferred leader was not available." },
    ErrorInfo { code: 81, name: "GROUP_MAX_SIZE_REACHED", retriable: false, message: "The group has reached its maximum size." },
    ErrorInfo { code: 82, name: "FENCED_INSTANCE_ID", retriable: false, message: "The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id." },
    ErrorInfo { code: 83, name: "ELIGIBLE_LEADERS_NOT_AVAILABLE", retriable: true, message: "Eligible topic partition leaders are not available." },
    ErrorInfo { code: 84, name: "ELECTION_NOT_NEEDED", retriable: true, message: "Leader election not needed for topic partition." },
    ErrorInfo { code: 85, name: "NO_REASSIGNMENT_IN_PROGRESS", retriable: false, message: "No partition reassignment is in progress." },
    ErrorInfo { code: 86, name: "GROUP_SUBSCRIBED_TO_TOPIC", retriable: false, message: "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it." },
    ErrorInfo { code: 87, name: "INVALID_RECORD", retriable: false, message: "This record has failed the validation on broker and hence will be rejected." },
    ErrorInfo { code: 88, name: "UNSTABLE_OFFSET_COMMIT", retriable: true, message: "There are unstable offsets that need to be cleared." },
    ErrorInfo { code: 89, name: "THROTTLING_QUOTA_EXCEEDED", retriable: true, message: "The throttling quota has been exceeded." },
    ErrorInfo { code: 90, name: "PRODUCER_FENCED", retriable: false, message: "There is a newer producer with the same transactionalId which fences the current one." },
    ErrorInfo { code: 91, name: "RESOURCE_NOT_FOUND", retriable: false, message: "A request illegally referred to a resource that does not exist." },
    ErrorInfo { code: 92, name: "DUPLICATE_RESOURCE", retriable: false, message: "A request illegally referred to the same resource twice." },
    ErrorInfo { code: 93, name: "UNACCEPTABLE_CREDENTIAL", retriable: false, message: "Requested credential would not meet criteria for acceptability." },
    ErrorInfo { code: 94, name: "INCONSISTENT_VOTER_SET", retriable: false, message: "Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters." },
    ErrorInfo { code: 95, name: "INVALID_UPDATE_VERSION", retriable: false, message: "The given update version was invalid." },
    ErrorInfo { code: 96, name: "FEATURE_UPDATE_FAILED", retriable: false, message: "Unable to update finalized features due to an unexpected server error." },
    ErrorInfo { code: 97, name: "PRINCIPAL_DESERIALIZATION_FAILURE", retriable: false, message: "Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup." },
    ErrorInfo { code: 98, name: "SNAPSHOT_NOT_FOUND", retriable: false, message: "Requested snapshot was not found." },
    ErrorInfo { code: 99, name: "POSITION_OUT_OF_RANGE", retriable: false, message: "Requested position is not greater than or equal to zero, and less than the size of the snapshot." },
    ErrorInfo { code: 100, name: "UNKNOWN_TOPIC_ID", retriable: true, message: "This server does not host this topic ID." },
    ErrorInfo { code: 101, name: "DUPLICATE_BROKER_REGISTRATION", retriable: false, message: "This broker ID is already in use." },
    ErrorInfo { code: 102, name: "BROKER_ID_NOT_REGISTERED", retriable: false, message: "The given broker ID was not registered." },
    ErrorInfo { code: 103, name: "INCONSISTENT_TOPIC_ID", retriable: true, message: "The log's topic ID did not match the topic ID in the request." },
    ErrorInfo { code: 104, name: "INCONSISTENT_CLUSTER_ID", retriable: false, message: "The clusterId in the request does not match that found on the server." },
    ErrorInfo { code: 105, name: "TRANSACTIONAL_ID_NOT_FOUND", retriable: false, message: "The transactionalId could not be found." },
    ErrorInfo { code: 106, name: "FETCH_SESSION_TOPIC_ID_ERROR", retriable: true, message: "The fetch session encountered inconsistent topic ID usage." },
    ErrorInfo { code: 107, name: "INELIGIBLE_REPLICA", retriable: false, message: "The new ISR contains at least one ineligible replica." },
    ErrorInfo { code: 108, name: "NEW_LEADER_ELECTED", retriable: false, message: "The AlterPartition request successfully updated the partition state but the leader has changed." },
    ErrorInfo { code: 109, name: "OFFSET_MOVED_TO_TIERED_STORAGE", retriable: false, message: "The requested offset is moved to tiered storage." },
    ErrorInfo { code: 110, name: "FENCED_MEMBER_EPOCH", retriable: false, message: "The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin." },
    ErrorInfo { code: 111, name: "UNRELEASED_INSTANCE_ID", retriable: false, message: "The instance ID is still used by another member in the consumer group. That member must leave first." },
    ErrorInfo { code: 112, name: "UNSUPPORTED_ASSIGNOR", retriable: false, message: "The assignor or its version range is not supported by the consumer group." },
    ErrorInfo { code: 113, name: "STALE_MEMBER_EPOCH", retriable: false, message: "The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API." },
    ErrorInfo { code: 114, name: "MISMATCHED_ENDPOINT_TYPE", retriable: false, message: "The request was sent to an endpoint of the wrong type." },
    ErrorInfo { code: 115, name: "UNSUPPORTED_ENDPOINT_TYPE", retriable: false, message: "This endpoint type is not supported yet." },
    ErrorInfo { code: 116, name: "UNKNOWN_CONTROLLER_ID", retriable: false, message: "This controller ID is not known." },
    ErrorInfo { code: 117, name: "UNKNOWN_SUBSCRIPTION_ID", retriable: false, message: "Client sent a push telemetry request with an invalid or outdated subscription ID." },
    ErrorInfo { code: 118, name: "TELEMETRY_TOO_LARGE", retriable: false, message: "Client sent a push telemetry request larger than the maximum size the broker will accept." },
    ErrorInfo { code: 119, name: "INVALID_REGISTRATION", retriable: false, message: "The controller has considered the broker registration to be invalid." },
    ErrorInfo { code: 120, name: "TRANSACTION_ABORTABLE", retriable: false, message: "The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID." },
    ErrorInfo { code: 121, name: "INVALID_RECORD_STATE", retriable: false, message: "The record state is invalid. The acknowledgement of delivery could not be completed." },
    ErrorInfo { code: 122, name: "SHARE_SESSION_NOT_FOUND", retriable: true, message: "The share session was not found." },
    ErrorInfo { code: 123, name: "INVALID_SHARE_SESSION_EPOCH", retriable: true, message: "The share session epoch is invalid." },
    ErrorInfo { code: 124, name: "FENCED_STATE_EPOCH", retriable: false, message: "The coordinator rejected the request because the state epoch did not match." },
    ErrorInfo { code: 125, name: "INVALID_VOTER_KEY", retriable: false, message: "The voter key doesn't match the receiving replica's key." },
    ErrorInfo { code: 126, name: "DUPLICATE_VOTER", retriable: false, message: "The voter is already part of the set of voters." },
    ErrorInfo { code: 127, name: "VOTER_NOT_FOUND", retriable: false, message: "The voter is not part of the set of voters." },
    ErrorInfo { code: 128, name: "INVALID_REGULAR_EXPRESSION", retriable: false, message: "The regular expression is not valid." },
    ErrorInfo { code: 129, name: "REBOOTSTRAP_REQUIRED", retriable: false, message: "Client metadata is stale. The client should rebootstrap to obtain new metadata." },
    ErrorInfo { code: 130, name: "STREAMS_INVALID_TOPOLOGY", retriable: false, message: "The supplied topology is invalid." },
    ErrorInfo { code: 131, name: "STREAMS_INVALID_TOPOLOGY_EPOCH", retriable: false, message: "The supplied topology epoch is invalid." },
    ErrorInfo { code: 132, name: "STREAMS_TOPOLOGY_FENCED", retriable: false, message: "The supplied topology epoch is outdated." },
    ErrorInfo { code: 133, name: "SHARE_SESSION_LIMIT_REACHED", retriable: true, message: "The limit of share sessions has been reached." },
    ErrorInfo { code: 134, name: "GROUP_DELETION_FAILED", retriable: false, message: "DeleteGroups could not complete; see the error message on the per-group result for details." },
    ErrorInfo { code: 135, name: "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED", retriable: false, message: "The broker could not process the topology description update; see the error message for details." },
    ErrorInfo { code: 136, name: "CONTROLLER_ID_NOT_REGISTERED", retriable: false, message: "The given controller ID was not registered." },
];
