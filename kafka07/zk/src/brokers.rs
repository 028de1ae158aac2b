//! `/brokers/ids/<id>`: where a broker says how to reach it. 0.8 writes JSON (seed 003 node 3);
//! 0.7 writes `<creator>:<host>:<port>` (spec 4.1).

use serde::{Deserialize, Serialize};

use super::error::ZkDataError;
use super::json::{parse_timestamp, parse_versioned, to_json, VERSION_1};
use super::text::{parse_unsigned, utf8};

/// 0.8 broker registration: `{"version":1,"host":…,"port":…,"jmx_port":…}`; Kafka 0.8.1+
/// adds `"timestamp":"<epoch ms>"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerRegistration {
    pub host: String,
    pub port: u16,
    /// `None` is written as `-1`, Kafka's "JMX disabled".
    pub jmx_port: Option<u16>,
    /// Registration time in epoch milliseconds, if present.
    pub timestamp: Option<u64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BrokerWire {
    version: i64,
    host: String,
    port: i32,
    jmx_port: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
}

fn port(path: &str, field: &str, value: i32) -> Result<u16, ZkDataError> {
    u16::try_from(value)
        .ok()
        .filter(|&p| p != 0)
        .ok_or_else(|| ZkDataError::invalid(path, format!("field `{field}`: {value} is not a TCP port (1..=65535)")))
}

fn check_host(path: &str, host: &str) -> Result<(), ZkDataError> {
    if host.is_empty() {
        return Err(ZkDataError::invalid(path, "the broker host is empty"));
    }
    Ok(())
}

impl BrokerRegistration {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let wire: BrokerWire = parse_versioned(path, bytes)?;
        check_host(path, &wire.host)?;
        let jmx_port = match wire.jmx_port {
            -1 => None,
            other => Some(port(path, "jmx_port", other)?),
        };
        Ok(BrokerRegistration {
            port: port(path, "port", wire.port)?,
            host: wire.host,
            jmx_port,
            timestamp: wire.timestamp.as_deref().map(|t| parse_timestamp(path, t)).transpose()?,
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        to_json(&BrokerWire {
            version: VERSION_1,
            host: self.host.clone(),
            port: i32::from(self.port),
            jmx_port: self.jmx_port.map_or(-1, i32::from),
            timestamp: self.timestamp.map(|t| t.to_string()),
        })
    }
}

/// 0.7's creator id: `<host>-<epoch ms>` (the broker's local address and its start time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kafka07Creator {
    pub host: String,
    pub epoch_ms: u64,
}

/// 0.7 broker registration, `<creator host>-<epoch ms>:<host>:<port>`, for example
/// `10.0.0.5-1370000000000:10.0.0.5:9092`. Readers split on `:` and expect exactly three
/// parts, so no part may contain `:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kafka07BrokerRegistration {
    pub creator: Kafka07Creator,
    pub host: String,
    pub port: u16,
}

impl Kafka07BrokerRegistration {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let text = utf8(path, bytes)?;
        let parts: Vec<&str> = text.split(':').collect();
        let [creator, host, port_text] = parts[..] else {
            return Err(ZkDataError::invalid(
                path,
                format!(
                    "0.7 broker value {text:?} has {} `:`-separated parts, expected creator:host:port",
                    parts.len()
                ),
            ));
        };
        let (creator_host, epoch) = creator.rsplit_once('-').ok_or_else(|| {
            ZkDataError::invalid(path, format!("0.7 creator id {creator:?} is not <host>-<epoch ms>"))
        })?;
        if creator_host.is_empty() {
            return Err(ZkDataError::invalid(path, format!("0.7 creator id {creator:?} has an empty host")));
        }
        let epoch_ms = parse_unsigned(epoch, u64::MAX)
            .map_err(|detail| ZkDataError::invalid(path, format!("0.7 creator id {creator:?}: {detail}")))?;
        check_host(path, host)?;
        let port_value = parse_unsigned(port_text, i32::MAX as u64)
            .map_err(|detail| ZkDataError::invalid(path, format!("0.7 broker port: {detail}")))?;
        Ok(Kafka07BrokerRegistration {
            creator: Kafka07Creator { host: creator_host.to_owned(), epoch_ms },
            host: host.to_owned(),
            port: port(path, "port", port_value as i32)?,
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        format!("{}-{}:{}:{}", self.creator.host, self.creator.epoch_ms, self.host, self.port).into_bytes()
    }
}

/// What `/brokers/ids/<id>` holds in either layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokerNode {
    /// 0.8 JSON.
    Registration(BrokerRegistration),
    /// 0.7 `creator:host:port`.
    Kafka07(Kafka07BrokerRegistration),
}

impl BrokerNode {
    /// JSON (starting with `{`) is the 0.8 form; anything else must be the 0.7 text form.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        if bytes.trim_ascii_start().starts_with(b"{") {
            BrokerRegistration::parse(path, bytes).map(BrokerNode::Registration)
        } else {
            Kafka07BrokerRegistration::parse(path, bytes).map(BrokerNode::Kafka07)
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            BrokerNode::Registration(r) => r.to_bytes(),
            BrokerNode::Kafka07(r) => r.to_bytes(),
        }
    }
}
