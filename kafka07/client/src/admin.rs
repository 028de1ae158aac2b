//! Topic administration and ZooKeeper inspection for `kwire07 topics …` and `kwire07 zk …`.
//!
//! * [`modify_topic`]: one ModifyTopic request (kwire's request type 5 in the 0.7 framing,
//!   `i32 size | i16 5 | i16 version | ModifyTopicRequest`) to a broker, answered by
//!   `i32 size | i16 error | i16 version | ModifyTopicResponse`. Bodies are the generated
//!   `kwire07_admin_messages` messages.
//! * [`modify_topic_via_zookeeper`]: the same, sent to a live broker found in `/brokers/ids`.
//! * [`describe_table`]: a DESCRIBE answer as text, each setting marked overridden or inherited.
//! * [`walk`]: every node under Kafka's ZooKeeper roots decoded with the runtime's typed values
//!   (0.7 and 0.8 layouts), for `kwire07 zk dump`; entries whose `result` is an error are what
//!   `kwire07 zk check` reports.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kwire07_admin_messages::modify_topic_request::TopicProperty;
use kwire07_admin_messages::{ModifyTopicRequest, ModifyTopicResponse};
use kwire07_protocol::{Request, VersionedRequest, VersionedResponse};
use kwire07_zk::{BrokerNode, Container, NodeKind, TypedValue, ZkDataError};
use kwire_runtime::{Decode, Encode, StrBytes, TopicName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The ModifyTopic version this client speaks.
pub const MODIFY_TOPIC_VERSION: i16 = 0;
/// The version LIST needs (older brokers answer it with UNSUPPORTED_VERSION).
pub const MODIFY_TOPIC_LIST_VERSION: i16 = 1;

/// The version a request is sent at: the oldest that has its operation.
pub fn version_for(req: &ModifyTopicRequest) -> i16 {
    if req.operation.as_str() == "LIST" {
        MODIFY_TOPIC_LIST_VERSION
    } else {
        MODIFY_TOPIC_VERSION
    }
}

/// Largest response accepted (a DESCRIBE answer is a few hundred bytes).
const MAX_RESPONSE: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("{addr}: {source}")]
    Io { addr: String, source: std::io::Error },
    #[error("{addr}: no answer within {timeout:?}")]
    Timeout { addr: String, timeout: Duration },
    #[error("encoding the request: {0}")]
    Encode(String),
    #[error("malformed response from {addr}: {detail}")]
    Response { addr: String, detail: String },
    #[error("ZooKeeper: {0}")]
    ZooKeeper(String),
    #[error("no live broker in ZooKeeper (/brokers/ids is empty)")]
    NoBroker,
}

/// A request from an operation (`CREATE`, `ALTER`, `DELETE`, `DESCRIBE`), a topic and
/// `(name, value)` pairs; a `None` value removes the override (ALTER).
pub fn request(operation: &str, topic: &str, properties: &[(&str, Option<&str>)]) -> ModifyTopicRequest {
    ModifyTopicRequest {
        operation: StrBytes::from(operation),
        topic_name: TopicName::from(topic),
        properties: properties
            .iter()
            .map(|(k, v)| TopicProperty {
                prop_name: StrBytes::from(*k),
                prop_value: v.map(StrBytes::from),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Sends `req` to the broker at `addr` (`host:port`) and returns its answer, which carries the
/// broker's error code and message when the request was refused.
pub async fn modify_topic(
    addr: &str,
    req: &ModifyTopicRequest,
    timeout: Duration,
) -> Result<ModifyTopicResponse, AdminError> {
    match tokio::time::timeout(timeout, exchange(addr, req)).await {
        Ok(r) => r,
        Err(_) => Err(AdminError::Timeout { addr: addr.to_owned(), timeout }),
    }
}

async fn exchange(addr: &str, req: &ModifyTopicRequest) -> Result<ModifyTopicResponse, AdminError> {
    let io = |source| AdminError::Io { addr: addr.to_owned(), source };
    let bad = |detail: String| AdminError::Response { addr: addr.to_owned(), detail };
    let version = version_for(req);
    let mut body = BytesMut::new();
    req.encode(&mut body, version).map_err(|e| AdminError::Encode(e.to_string()))?;
    let frame = Request::ModifyTopic(VersionedRequest { version, body: body.freeze() })
        .to_bytes()
        .map_err(|e| AdminError::Encode(e.to_string()))?;
    let mut stream = TcpStream::connect(addr).await.map_err(io)?;
    stream.write_all(&frame).await.map_err(io)?;
    let size = stream.read_i32().await.map_err(io)?;
    let size = usize::try_from(size)
        .ok()
        .filter(|&n| n <= MAX_RESPONSE)
        .ok_or_else(|| bad(format!("response size {size} is outside 0..={MAX_RESPONSE}")))?;
    let mut payload = vec![0u8; size];
    stream.read_exact(&mut payload).await.map_err(io)?;
    let envelope = VersionedResponse::decode(Bytes::from(payload)).map_err(|e| bad(e.to_string()))?;
    // A broker that does not speak the version answers (with UNSUPPORTED_VERSION) at its own.
    if !(MODIFY_TOPIC_VERSION..=version).contains(&envelope.version) {
        return Err(bad(format!("response version {}, asked for {version}", envelope.version)));
    }
    let mut b = envelope.body;
    ModifyTopicResponse::decode(&mut b, envelope.version).map_err(|e| bad(e.to_string()))
}

/// Every live broker's `host:port` from `/brokers/ids` (0.7 `creator:host:port` or 0.8 JSON).
pub async fn broker_addresses(client: &zookeeper_client::Client) -> Result<Vec<String>, AdminError> {
    let ids_path = Container::BrokerIds.path();
    let ids = match client.list_children(&ids_path).await {
        Ok(ids) => ids,
        Err(zookeeper_client::Error::NoNode) => return Ok(Vec::new()),
        Err(e) => return Err(AdminError::ZooKeeper(format!("list {ids_path}: {e}"))),
    };
    let mut out = Vec::new();
    for id in ids {
        let Some(broker_id) = id.parse::<i32>().ok().filter(|id| *id >= 0) else { continue };
        let path = NodeKind::BrokerRegistration { broker_id }.path();
        let Ok((data, _)) = client.get_data(&path).await else { continue };
        match kwire07_zk::parse(&path, &data) {
            Ok(TypedValue::Broker(BrokerNode::Kafka07(b))) => out.push(format!("{}:{}", b.host, b.port)),
            Ok(TypedValue::Broker(BrokerNode::Registration(b))) => out.push(format!("{}:{}", b.host, b.port)),
            _ => {}
        }
    }
    Ok(out)
}

/// [`modify_topic`] through the first live broker registered in ZooKeeper that answers.
pub async fn modify_topic_via_zookeeper(
    client: &zookeeper_client::Client,
    req: &ModifyTopicRequest,
    timeout: Duration,
) -> Result<ModifyTopicResponse, AdminError> {
    let mut last = AdminError::NoBroker;
    for addr in broker_addresses(client).await? {
        match modify_topic(&addr, req, timeout).await {
            Ok(r) => return Ok(r),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// A DESCRIBE (or CREATE/ALTER) answer as an aligned table: `NAME  VALUE  overridden|inherited`.
pub fn describe_table(resp: &ModifyTopicResponse) -> String {
    let width = resp.configs.iter().map(|c| c.name.as_str().len()).max().unwrap_or(0);
    let vwidth = resp.configs.iter().map(|c| c.value.as_str().len()).max().unwrap_or(0);
    let mut out = String::new();
    for c in &resp.configs {
        let source = if c.is_override { "overridden" } else { "inherited" };
        out.push_str(&format!("{:width$}  {:>vwidth$}  {source}\n", c.name.as_str(), c.value.as_str()));
    }
    out
}

/// One node found by [`walk`].
#[derive(Debug)]
pub struct WalkedNode {
    pub path: String,
    /// The decoded value, or why it does not match Kafka's schema for that path.
    pub result: Result<TypedValue, ZkDataError>,
}

/// The roots Kafka uses (0.7 and 0.8), and `/config`.
pub fn kafka_roots() -> Vec<String> {
    vec![
        Container::Brokers.path(),
        Container::Consumers.path(),
        NodeKind::Controller.path(),
        NodeKind::ControllerEpoch.path(),
        Container::Admin.path(),
        Container::Config.path(),
    ]
}

/// Every node under Kafka's roots and `/config`, depth first, sorted, each decoded.
pub async fn walk(client: &zookeeper_client::Client) -> Result<Vec<WalkedNode>, AdminError> {
    let mut out = Vec::new();
    let config = Container::Config.path();
    let mut stack: Vec<String> = kafka_roots().into_iter().rev().collect();
    while let Some(path) = stack.pop() {
        let (data, _) = match client.get_data(&path).await {
            Ok(v) => v,
            Err(zookeeper_client::Error::NoNode) => continue,
            Err(e) => return Err(AdminError::ZooKeeper(format!("read {path}: {e}"))),
        };
        // `/config` itself is a plain parent that seed 003 does not list.
        if path != config {
            out.push(WalkedNode { result: kwire07_zk::parse(&path, &data), path: path.clone() });
        }
        let mut children = match client.list_children(&path).await {
            Ok(c) => c,
            Err(zookeeper_client::Error::NoNode) => continue,
            Err(e) => return Err(AdminError::ZooKeeper(format!("list {path}: {e}"))),
        };
        children.sort();
        for c in children.into_iter().rev() {
            match kwire07_zk::child_path(&path, &c) {
                Ok(child) => stack.push(child),
                Err(e) => out.push(WalkedNode { result: Err(e), path: format!("{path}/{c}") }),
            }
        }
    }
    Ok(out)
}
