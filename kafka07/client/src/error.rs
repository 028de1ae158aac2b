//! The client's error type: every variant says what was being done and with whom.

use kwire07_protocol::{ErrorCode, ProtocolError};

pub type Result<T, E = ClientError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to broker {addr}: {source}")]
    Connect { addr: String, source: std::io::Error },

    #[error("I/O error with broker {addr}: {source}")]
    Io { addr: String, source: std::io::Error },

    #[error("broker {addr} closed the connection")]
    Closed { addr: String },

    #[error("broker {addr} did not answer within {secs} s")]
    Timeout { addr: String, secs: u64 },

    #[error("broker {addr} sent a malformed response: {source}")]
    Protocol { addr: String, source: ProtocolError },

    #[error("cannot encode request: {0}")]
    Encode(#[source] ProtocolError),

    #[error("broker {addr} answered {code:?} (error {}) for {topic}-{partition}", code.code())]
    Broker { addr: String, topic: String, partition: i32, code: ErrorCode },

    #[error("bad message in {topic}-{partition}: {source}")]
    Message { topic: String, partition: i32, source: ProtocolError },

    #[error(
        "message of {size} bytes at {topic}-{partition} offset {offset} is larger than the maximum fetch size {max}"
    )]
    MessageTooLarge { topic: String, partition: i32, offset: u64, size: usize, max: usize },

    #[error("message for {topic} is {size} bytes (compressed, if compression is on), above max.message.size {max}")]
    ProduceTooLarge { topic: String, size: usize, max: usize },

    #[error("ZooKeeper {op} {path}: {source}")]
    ZooKeeper { op: &'static str, path: String, source: zookeeper_client::Error },

    #[error("cannot connect to ZooKeeper {connect}: {source}")]
    ZooKeeperConnect { connect: String, source: zookeeper_client::Error },

    #[error("ZooKeeper node {path} holds {value:?}: {reason}")]
    ZooKeeperData { path: String, value: String, reason: String },

    #[error("{0}")]
    Config(String),

    #[error("no broker is known for {0}")]
    NoBroker(String),

    #[error("consumer rebalance failed after {tries} tries: {reason}")]
    Rebalance { tries: u32, reason: String },
}

impl ClientError {
    /// Whether retrying on a new connection may succeed (the broker went away or restarted).
    pub fn is_connection_error(&self) -> bool {
        matches!(
            self,
            ClientError::Connect { .. }
                | ClientError::Io { .. }
                | ClientError::Closed { .. }
                | ClientError::Timeout { .. }
        )
    }
}
