//! `/consumers/<group>/…`: consumer registrations (seed 003 node 6, spec 4.2), owners (node 7)
//! and offsets (node 8).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ZkDataError;
use super::json::{parse_timestamp, parse_value, parse_versioned, to_json, VERSION_1};
use super::names::{ConsumerId, TopicName};
use super::text::{parse_canonical, parse_unsigned, utf8};

/// What a consumer subscribes to, and how many streams (threads) it wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscription {
    /// Named topics, each with its stream count.
    Static(BTreeMap<TopicName, u32>),
    /// Every topic matching a regular expression (Java syntax, not checked here).
    Whitelist { regex: String, streams: u32 },
    /// Every topic not matching a regular expression.
    Blacklist { regex: String, streams: u32 },
}

const MAX_STREAMS: u64 = i32::MAX as u64;

fn check_streams(path: &str, what: &str, streams: i64) -> Result<u32, ZkDataError> {
    if streams < 1 || streams > MAX_STREAMS as i64 {
        return Err(ZkDataError::invalid(path, format!("{what}: stream count {streams} is not in 1..={MAX_STREAMS}")));
    }
    Ok(streams as u32)
}

fn check_regex(path: &str, regex: &str) -> Result<(), ZkDataError> {
    if regex.is_empty() {
        return Err(ZkDataError::invalid(path, "the subscription's topic pattern is empty"));
    }
    Ok(())
}

fn static_subscription(path: &str, entries: BTreeMap<String, i64>) -> Result<Subscription, ZkDataError> {
    if entries.is_empty() {
        return Err(ZkDataError::invalid(path, "the subscription names no topic"));
    }
    let mut topics = BTreeMap::new();
    for (topic, streams) in entries {
        let streams = check_streams(path, &format!("topic {topic:?}"), streams)?;
        let topic = TopicName::new(topic).map_err(|e| ZkDataError::invalid(path, e.to_string()))?;
        topics.insert(topic, streams);
    }
    Ok(Subscription::Static(topics))
}

/// The three `pattern` values of seed 003.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum PatternWire {
    Static,
    WhiteList,
    BlackList,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConsumerWire {
    version: i64,
    pattern: PatternWire,
    subscription: BTreeMap<String, i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
}

/// 0.8 consumer registration: `{"version":1,"pattern":"static"|"white_list"|"black_list",
/// "subscription":{<topic or pattern>: <streams>}}`; Kafka 0.8.1+ adds `"timestamp":"<ms>"`.
/// A wildcard pattern has exactly one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRegistration {
    pub subscription: Subscription,
    pub timestamp: Option<u64>,
}

impl ConsumerRegistration {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let wire: ConsumerWire = parse_versioned(path, bytes)?;
        let timestamp = wire.timestamp.as_deref().map(|t| parse_timestamp(path, t)).transpose()?;
        let subscription = match wire.pattern {
            PatternWire::Static => static_subscription(path, wire.subscription)?,
            wildcard => {
                let mut entries = wire.subscription.into_iter();
                let (Some((regex, streams)), None) = (entries.next(), entries.next()) else {
                    return Err(ZkDataError::invalid(path, "a wildcard subscription must have exactly one entry"));
                };
                check_regex(path, &regex)?;
                let streams = check_streams(path, &format!("pattern {regex:?}"), streams)?;
                if wildcard == PatternWire::WhiteList {
                    Subscription::Whitelist { regex, streams }
                } else {
                    Subscription::Blacklist { regex, streams }
                }
            }
        };
        Ok(ConsumerRegistration { subscription, timestamp })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let (pattern, subscription) = match &self.subscription {
            Subscription::Static(topics) => {
                (PatternWire::Static, topics.iter().map(|(t, &n)| (t.to_string(), i64::from(n))).collect())
            }
            Subscription::Whitelist { regex, streams } => {
                (PatternWire::WhiteList, BTreeMap::from([(regex.clone(), i64::from(*streams))]))
            }
            Subscription::Blacklist { regex, streams } => {
                (PatternWire::BlackList, BTreeMap::from([(regex.clone(), i64::from(*streams))]))
            }
        };
        to_json(&ConsumerWire {
            version: VERSION_1,
            pattern,
            subscription,
            timestamp: self.timestamp.map(|t| t.to_string()),
        })
    }
}

/// 0.7 consumer registration (spec 4.2): a static subscription is the JSON object
/// `{ "topicA": 2,"topicB": 1 }`, written exactly as Kafka does (`{ `, entries joined by `,`,
/// ` }`); a whitelist is `*<n>*<regex>`, a blacklist `!<n>!<regex>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kafka07ConsumerRegistration(pub Subscription);

impl Kafka07ConsumerRegistration {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let text = utf8(path, bytes)?;
        let mut chars = text.chars();
        match chars.next() {
            Some(marker @ ('*' | '!')) => {
                let rest = chars.as_str();
                let (count, regex) = rest.split_once(marker).ok_or_else(|| {
                    ZkDataError::invalid(
                        path,
                        format!("0.7 wildcard subscription {text:?} is not {marker}<n>{marker}<regex>"),
                    )
                })?;
                let streams = parse_unsigned(count, MAX_STREAMS)
                    .map_err(|detail| ZkDataError::invalid(path, format!("0.7 wildcard stream count: {detail}")))?;
                let streams = check_streams(path, "0.7 wildcard", streams as i64)?;
                check_regex(path, regex)?;
                let regex = regex.to_owned();
                Ok(Kafka07ConsumerRegistration(if marker == '*' {
                    Subscription::Whitelist { regex, streams }
                } else {
                    Subscription::Blacklist { regex, streams }
                }))
            }
            _ => {
                let Value::Object(object) = parse_value(path, bytes)? else {
                    return Err(ZkDataError::schema(path, "a 0.7 static subscription must be a JSON object"));
                };
                let mut entries = BTreeMap::new();
                for (topic, streams) in object {
                    let streams = streams.as_i64().ok_or_else(|| {
                        ZkDataError::schema(path, format!("topic {topic:?}: stream count {streams} is not an integer"))
                    })?;
                    entries.insert(topic, streams);
                }
                static_subscription(path, entries).map(Kafka07ConsumerRegistration)
            }
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.0 {
            Subscription::Static(topics) => {
                let entries: Vec<String> =
                    topics.iter().map(|(t, n)| format!("{}: {n}", Value::String(t.to_string()))).collect();
                format!("{{ {} }}", entries.join(",")).into_bytes()
            }
            Subscription::Whitelist { regex, streams } => format!("*{streams}*{regex}").into_bytes(),
            Subscription::Blacklist { regex, streams } => format!("!{streams}!{regex}").into_bytes(),
        }
    }
}

/// What `/consumers/<group>/ids/<consumerId>` holds in either layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumerRegistrationNode {
    Registration(ConsumerRegistration),
    Kafka07(Kafka07ConsumerRegistration),
}

impl ConsumerRegistrationNode {
    /// The forms cannot be confused: 0.7 wildcards start with `*` or `!`, a 0.7 static
    /// subscription is an object whose values are all integers, while the 0.8 object has the
    /// string `pattern` and the object `subscription`.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let is_legacy = match bytes.first() {
            Some(b'*' | b'!') => true,
            _ => match parse_value(path, bytes)? {
                Value::Object(object) => object.values().all(Value::is_i64),
                _ => false,
            },
        };
        if is_legacy {
            Kafka07ConsumerRegistration::parse(path, bytes).map(ConsumerRegistrationNode::Kafka07)
        } else {
            ConsumerRegistration::parse(path, bytes).map(ConsumerRegistrationNode::Registration)
        }
    }

    pub fn subscription(&self) -> &Subscription {
        match self {
            ConsumerRegistrationNode::Registration(r) => &r.subscription,
            ConsumerRegistrationNode::Kafka07(r) => &r.0,
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            ConsumerRegistrationNode::Registration(r) => r.to_bytes(),
            ConsumerRegistrationNode::Kafka07(r) => r.to_bytes(),
        }
    }
}

/// The value of an owner node: the owning consumer thread, `<consumerId>-<i>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerThreadId {
    pub consumer_id: ConsumerId,
    pub thread: u32,
}

impl ConsumerThreadId {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let text = utf8(path, bytes)?;
        let bad = || ZkDataError::invalid(path, format!("owner {text:?} is not a consumer thread id <consumerId>-<n>"));
        let (consumer, thread) = text.rsplit_once('-').ok_or_else(bad)?;
        let thread = parse_canonical(thread, i32::MAX as u64).ok_or_else(bad)? as u32;
        let consumer_id = ConsumerId::new(consumer).map_err(|e| ZkDataError::invalid(path, e.to_string()))?;
        Ok(ConsumerThreadId { consumer_id, thread })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_string().into_bytes()
    }
}

impl fmt::Display for ConsumerThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.consumer_id, self.thread)
    }
}

/// The value of an offsets node: the next offset to consume, as decimal text (0.7 and 0.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsumerOffset(pub i64);

impl ConsumerOffset {
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Self, ZkDataError> {
        let text = utf8(path, bytes)?;
        parse_unsigned(text, i64::MAX as u64)
            .map(|v| ConsumerOffset(v as i64))
            .map_err(|detail| ZkDataError::invalid(path, format!("consumer offset: {detail}")))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.0.to_string().into_bytes()
    }
}
