//! `/config/…` (Kafka 0.8.1, seed 003): per-topic overrides and the change notifications
//! every broker watches.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ZkDataError;
use super::json::{parse_value, parse_versioned, to_json, VERSION_1};
use super::names::TopicName;

/// `/config/topics/<topic>`: `{"version":1,"config":{"segment.bytes":"1024",…}}`. Only the
/// settings the user overrode are stored; every value is a JSON string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicConfig {
    pub config: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicConfigWire {
    version: i64,
    config: BTreeMap<String, String>,
}

impl TopicConfig {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let wire: TopicConfigWire = parse_versioned(path, bytes)?;
        if wire.config.contains_key("") {
            return Err(ZkDataError::invalid(path, "a config property has an empty name"));
        }
        Ok(TopicConfig { config: wire.config })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        to_json(&TopicConfigWire { version: VERSION_1, config: self.config.clone() })
    }
}

/// Name prefix of the sequential nodes under `/config/changes`.
pub const CONFIG_CHANGE_PREFIX: &str = "config_change_";

/// The value of `/config/changes/config_change_<seq>`: the changed topic's name as a JSON
/// string, quotes included (`"my-topic"`), as Kafka's `AdminUtils` writes it with
/// `Json.encode(topic)` and `TopicConfigManager` reads it by dropping the first and last
/// character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigChange {
    pub topic: TopicName,
}

impl ConfigChange {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let Value::String(topic) = parse_value(path, bytes)? else {
            return Err(ZkDataError::schema(path, "a config change must be the topic name as a JSON string"));
        };
        let topic = TopicName::new(topic).map_err(|e| ZkDataError::invalid(path, e.to_string()))?;
        Ok(ConfigChange { topic })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        Value::String(self.topic.to_string()).to_string().into_bytes()
    }
}

/// The path to create `/config/changes/config_change_` with ZooKeeper's sequential flag at,
/// which appends the 10-digit sequence number of a [`NodeKind::ConfigChange`](crate::NodeKind).
pub fn config_change_create_path() -> String {
    format!("{}/{CONFIG_CHANGE_PREFIX}", crate::Container::ConfigChanges.path())
}
