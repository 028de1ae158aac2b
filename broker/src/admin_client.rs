//! Sending a ModifyTopic request to a broker and reading its answer (blocking, std only), for
//! tools and tests: `i32 size | i16 type = 5 | i16 version | ModifyTopicRequest`, answered by
//! `i32 size | i16 error | i16 version | ModifyTopicResponse`.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_wire_generated::modify_topic_request::TopicProperty;
use kafka_wire_generated::{ModifyTopicRequest, ModifyTopicResponse};
use kafka_wire_runtime::legacy::{Request, VersionedRequest, VersionedResponse};
use kafka_wire_runtime::{Decode, Encode, StrBytes};

use crate::admin::VERSION;

/// Largest response accepted (a describe answer is a few hundred bytes).
const MAX_RESPONSE: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum AdminClientError {
    #[error("connecting to {addr}: {source}")]
    Connect { addr: String, source: std::io::Error },
    #[error("talking to {addr}: {source}")]
    Io { addr: String, source: std::io::Error },
    #[error("encoding the request: {0}")]
    Encode(String),
    #[error("malformed response from {addr}: {detail}")]
    Response { addr: String, detail: String },
}

/// A request from an operation, a topic and `(name, value)` pairs (`None` removes, for ALTER).
pub fn request(operation: &str, topic: &str, properties: &[(&str, Option<&str>)]) -> ModifyTopicRequest {
    ModifyTopicRequest {
        operation: StrBytes::from(operation),
        topic_name: StrBytes::from(topic),
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

/// Sends `req` to the broker at `addr` and returns its answer (which may carry an error code).
pub fn modify_topic(
    addr: &str,
    req: &ModifyTopicRequest,
    timeout: Duration,
) -> Result<ModifyTopicResponse, AdminClientError> {
    let io = |source| AdminClientError::Io { addr: addr.to_owned(), source };
    let bad = |detail: String| AdminClientError::Response { addr: addr.to_owned(), detail };
    let mut body = BytesMut::new();
    req.encode(&mut body, VERSION).map_err(|e| AdminClientError::Encode(e.to_string()))?;
    let frame = Request::ModifyTopic(VersionedRequest { version: VERSION, body: body.freeze() })
        .to_bytes()
        .map_err(|e| AdminClientError::Encode(e.to_string()))?;
    let target = addr
        .to_socket_addrs()
        .map_err(|source| AdminClientError::Connect { addr: addr.to_owned(), source })?
        .next()
        .ok_or_else(|| AdminClientError::Connect {
            addr: addr.to_owned(),
            source: std::io::Error::other("no address"),
        })?;
    let mut s = TcpStream::connect_timeout(&target, timeout)
        .map_err(|source| AdminClientError::Connect { addr: addr.to_owned(), source })?;
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_write_timeout(Some(timeout)).map_err(io)?;
    s.write_all(&frame).map_err(io)?;
    let mut size = [0u8; 4];
    s.read_exact(&mut size).map_err(io)?;
    let n = i32::from_be_bytes(size);
    let n = usize::try_from(n).ok().filter(|&n| n <= MAX_RESPONSE).ok_or_else(|| bad(format!("response size {n}")))?;
    let mut payload = vec![0u8; n];
    s.read_exact(&mut payload).map_err(io)?;
    let envelope = VersionedResponse::decode(Bytes::from(payload)).map_err(|e| bad(e.to_string()))?;
    if envelope.version != VERSION {
        return Err(bad(format!("response version {} (asked for {VERSION})", envelope.version)));
    }
    let mut b = envelope.body;
    ModifyTopicResponse::decode(&mut b, VERSION).map_err(|e| bad(e.to_string()))
}
