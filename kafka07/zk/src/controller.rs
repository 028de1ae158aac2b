//! `/controller` and `/controller_epoch` (seed 003 nodes 4 and 5).

use serde::{Deserialize, Serialize};

use super::error::ZkDataError;
use super::json::{parse_timestamp, parse_versioned, to_json, VERSION_1};
use super::text::{parse_int_value, utf8};

/// `/controller`: which broker is the controller. Seed 003 prints it as a plain int (the
/// broker id, Kafka 0.8.0); Kafka 0.8.1+ writes `{"version":1,"brokerid":…,"timestamp":"…"}`
/// and still reads the plain form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControllerNode {
    /// The seed's form: the controller's broker id as decimal text.
    BrokerId(i32),
    /// The JSON form.
    Registration { broker_id: i32, timestamp: Option<u64> },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ControllerWire {
    version: i64,
    brokerid: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
}

impl ControllerNode {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        if bytes.trim_ascii_start().starts_with(b"{") {
            let wire: ControllerWire = parse_versioned(path, bytes)?;
            super::ids::check_non_negative(path, "brokerid", wire.brokerid)?;
            let timestamp = wire.timestamp.as_deref().map(|t| parse_timestamp(path, t)).transpose()?;
            Ok(ControllerNode::Registration { broker_id: wire.brokerid, timestamp })
        } else {
            parse_int_value(path, utf8(path, bytes)?, "controller broker id").map(ControllerNode::BrokerId)
        }
    }

    /// The controller's broker id, whichever form was stored.
    pub fn broker_id(&self) -> i32 {
        match *self {
            ControllerNode::BrokerId(id) | ControllerNode::Registration { broker_id: id, .. } => id,
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            ControllerNode::BrokerId(id) => id.to_string().into_bytes(),
            ControllerNode::Registration { broker_id, timestamp } => to_json(&ControllerWire {
                version: VERSION_1,
                brokerid: *broker_id,
                timestamp: timestamp.map(|t| t.to_string()),
            }),
        }
    }
}

/// `/controller_epoch`: the controller epoch as decimal text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerEpoch(pub i32);

impl ControllerEpoch {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        parse_int_value(path, utf8(path, bytes)?, "controller epoch").map(ControllerEpoch)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.0.to_string().into_bytes()
    }
}
