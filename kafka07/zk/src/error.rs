//! The one error type of the `zk` module. Every variant that concerns node data names the
//! ZooKeeper path, so `kwire07 zk check` can print it as is.

/// Why a ZooKeeper path or node value is not what Kafka's layout says it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZkDataError {
    /// The path is not one of the nodes Kafka defines (0.7 or 0.8 layout).
    #[error("{path}: not a node of Kafka's ZooKeeper layout")]
    UnknownPath { path: String },
    /// A name that would become a path component is empty, `.`/`..`, holds `/` or a
    /// character ZooKeeper refuses.
    #[error("invalid {what} {name:?}: {reason}")]
    InvalidName { what: &'static str, name: String, reason: String },
    /// The node data is not UTF-8 (Kafka stores every value as a UTF-8 string).
    #[error("{path}: data is not UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 { path: String, offset: usize },
    /// The data is not well-formed JSON (syntax error, truncated, or a key given twice).
    #[error("{path}: malformed JSON: {detail}")]
    Json { path: String, detail: String },
    /// The JSON is well formed, but a field is missing, unknown or of the wrong type.
    #[error("{path}: does not match the schema: {detail}")]
    Schema { path: String, detail: String },
    /// The `version` field holds a version this reader does not know.
    #[error("{path}: unsupported version {found}, the only known version is {supported}")]
    UnsupportedVersion { path: String, found: i64, supported: i64 },
    /// The value has the right shape but breaks a rule of its node (a negative id,
    /// an empty replica list, a duplicate partition, a non-decimal text value, ...).
    #[error("{path}: {detail}")]
    Invalid { path: String, detail: String },
}

impl ZkDataError {
    pub(crate) fn invalid(path: &str, detail: impl Into<String>) -> Self {
        ZkDataError::Invalid { path: path.to_owned(), detail: detail.into() }
    }

    pub(crate) fn schema(path: &str, detail: impl Into<String>) -> Self {
        ZkDataError::Schema { path: path.to_owned(), detail: detail.into() }
    }

    /// The path this error is about, if it is about a node.
    pub fn path(&self) -> Option<&str> {
        match self {
            ZkDataError::InvalidName { .. } => None,
            ZkDataError::UnknownPath { path }
            | ZkDataError::NotUtf8 { path, .. }
            | ZkDataError::Json { path, .. }
            | ZkDataError::Schema { path, .. }
            | ZkDataError::UnsupportedVersion { path, .. }
            | ZkDataError::Invalid { path, .. } => Some(path),
        }
    }
}
