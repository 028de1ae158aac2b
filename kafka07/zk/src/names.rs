//! Validated names that become ZooKeeper path components. Holding one of these types is the
//! proof that no path built from it can climb out of its parent (`..`) or gain extra levels (`/`).

use std::fmt;

use kwire07_protocol::topic::{validate_topic, TopicError, DEFAULT_MAX_TOPIC_NAME_LENGTH};

use super::error::ZkDataError;

fn name_error(what: &'static str, name: &str, err: TopicError) -> ZkDataError {
    let reason = match err {
        TopicError::Empty => "it is empty".to_owned(),
        TopicError::TooLong { length, max } => format!("it is {length} characters long, the limit is {max}"),
        TopicError::DotName(_) => "it is a relative path component".to_owned(),
        TopicError::IllegalChar { code, .. } => format!("it contains the illegal character U+{code:04X}"),
        TopicError::DirNameTooLong { bytes, partition, max } => {
            format!("it is {bytes} bytes long, too long for partition {partition}'s directory (at most {max} bytes)")
        }
    };
    ZkDataError::InvalidName { what, name: name.to_owned(), reason }
}

/// ZooKeeper's own rules for one path component (its `PathUtils.validatePath`): not empty,
/// not `.` or `..`, no `/`, no control characters, surrogates, private use or specials.
/// These are exactly 0.7.2's topic rules without the length limit.
fn validate_component(what: &'static str, name: &str) -> Result<(), ZkDataError> {
    validate_topic(name, usize::MAX).map_err(|e| name_error(what, name, e))
}

macro_rules! validated_name {
    ($(#[$doc:meta])* $ty:ident, $what:literal, $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $ty(String);

        impl $ty {
            /// Validates `name`; the error says what is wrong with it.
            pub fn new(name: impl Into<String>) -> Result<Self, ZkDataError> {
                let name = name.into();
                let check: fn(&str) -> Result<(), ZkDataError> = $check;
                check(&name)?;
                Ok($ty(name))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $ty {
            type Error = ZkDataError;
            fn try_from(name: String) -> Result<Self, ZkDataError> {
                $ty::new(name)
            }
        }

        impl TryFrom<&str> for $ty {
            type Error = ZkDataError;
            fn try_from(name: &str) -> Result<Self, ZkDataError> {
                $ty::new(name)
            }
        }

        impl From<$ty> for String {
            fn from(name: $ty) -> String {
                name.0
            }
        }

        impl AsRef<str> for $ty {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

validated_name!(
    /// A topic name, valid by 0.7.2's rules (`kwire07_protocol::topic`, at most 255 characters).
    TopicName,
    "topic name",
    |name| validate_topic(name, DEFAULT_MAX_TOPIC_NAME_LENGTH).map_err(|e| name_error("topic name", name, e))
);

validated_name!(
    /// A consumer group id (`/consumers/<group>`). Kafka puts no rule on group ids, so this
    /// enforces ZooKeeper's path-component rules only.
    GroupId,
    "consumer group id",
    |name| validate_component("consumer group id", name)
);

validated_name!(
    /// A consumer id (`/consumers/<group>/ids/<consumerId>`), normally
    /// `<group>_<host>-<epoch ms>-<8 hex digits>`; only ZooKeeper's path-component rules apply.
    ConsumerId,
    "consumer id",
    |name| validate_component("consumer id", name)
);

/// `<parent>/<child>` for a child name as ZooKeeper listed it, checked as one path component
/// (no `/`, not `.` or `..`), so that walking a tree never builds a path outside it.
pub fn child_path(parent: &str, child: &str) -> Result<String, ZkDataError> {
    validate_component("ZooKeeper node name", child)?;
    Ok(if parent == "/" { format!("/{child}") } else { format!("{}/{child}", parent.trim_end_matches('/')) })
}
