//! One client socket: read frames, answer each request in order, close on anything Kafka's
//! broker would close on (a frame it cannot read, one over the size limit, silence past the
//! idle timeout). A connection holds at most one frame and one response at a time.

use std::sync::Arc;

use bytes::BytesMut;
use kafka_wire::messages::{ApiKey, ApiVersionsResponse, RequestFrame, ResponseFrame, ResponseKind};
use kafka_wire::ErrorCode;
use kafka_wire_connection::frame::{Framer, Piece};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::apis;
use crate::cluster::Shared;
use crate::control::{Action, Intercepted};

/// The smallest request: api key, version and correlation id.
const MIN_FRAME: usize = 8;

/// Serves one socket until the client leaves, misbehaves or the node stops.
pub(crate) async fn serve(mut socket: TcpStream, node: i32, shared: Arc<Shared>, mut stopped: watch::Receiver<bool>) {
    let client_host = socket.peer_addr().map(|a| format!("/{}", a.ip())).unwrap_or_default();
    let mut framer = Framer::new(MIN_FRAME, shared.config.max_frame);
    let idle = shared.config.idle_timeout;
    let mut out = BytesMut::new();
    loop {
        loop {
            let frame = match framer.next_piece() {
                Ok(Some(Piece::Frame(frame))) => frame,
                Ok(None) => break,
                // Larger than `socket.request.max.bytes`, or an impossible size: Kafka closes.
                Ok(Some(_)) | Err(_) => return,
            };
            // A fetch may wait for records; a node that stops does not wait for it.
            let answered = tokio::select! {
                _ = stopped.changed() => return,
                answered = answer(frame.slice(4..), node, &client_host, &shared) => answered,
            };
            let Some(response) = answered else { return };
            if let Some(response) = response {
                out.clear();
                let (frame, version) = response;
                if frame.encode(&mut out, version).is_err() {
                    return;
                }
                if socket.write_all(&out).await.is_err() {
                    return;
                }
            }
        }
        tokio::select! {
            _ = stopped.changed() => return,
            read = tokio::time::timeout(idle, socket.read_buf(framer.read_buf())) => match read {
                Ok(Ok(n)) if n > 0 => {}
                _ => return,
            },
        }
    }
}

/// A response and the version to encode it at.
type Answer = (ResponseFrame, i16);

/// The answer to one request frame (the bytes after its size): `None` closes the connection,
/// `Some(None)` sends nothing (a Produce with acks=0).
async fn answer(frame: bytes::Bytes, node: i32, client_host: &str, shared: &Shared) -> Option<Option<Answer>> {
    let (api, version, correlation_id) = peek_header(&frame)?;
    // KIP-511: a client newer than the broker sends ApiVersions at a version the broker does
    // not know; it gets UNSUPPORTED_VERSION at v0 with the versions the broker does know.
    if api == ApiKey::ApiVersions && !apis::served(shared, api, version) {
        let body = ApiVersionsResponse {
            error_code: ErrorCode::UNSUPPORTED_VERSION,
            api_keys: apis::api_versions::advertised(shared),
            ..Default::default()
        };
        return Some(Some((ResponseFrame::new(body, correlation_id), 0)));
    }
    // Anything else the broker does not speak, or cannot read, closes the connection.
    let (request, _trailing) = match RequestFrame::decode_with_trailing(frame) {
        Ok(decoded) => decoded,
        Err(e) => {
            tracing::debug!(node, ?api, version, error = %e, "unreadable request: connection closed");
            return None;
        }
    };
    if !apis::served(shared, api, version) {
        tracing::debug!(node, ?api, version, "not served: connection closed");
        return None;
    }
    let seen = Intercepted { node, version, request: &request.body };
    match shared.hooks.decide(api, &seen) {
        Action::Pass => {}
        Action::Delay(wait) => tokio::time::sleep(wait).await,
        Action::Drop => return None,
        Action::Error(code) => {
            let Some(body) = crate::errors::error_response(&request.body, version, code) else {
                tracing::warn!(node, ?api, "a hook's error for an API whose responses carry none: connection closed");
                return None;
            };
            return Some(Some((ResponseFrame::new(body, correlation_id), version)));
        }
        Action::Respond(body) => return Some(Some((ResponseFrame::new(*body, correlation_id), version))),
    }
    // Borrowed: only JoinGroup keeps them, so no request pays for copies.
    let client_id = request.header.client_id.as_ref().map_or("", |c| c.as_str());
    let ctx = apis::Ctx { shared, node, version, client_id, client_host };
    let body: Option<ResponseKind> = apis::handle(&ctx, request.body).await;
    Some(body.map(|body| (ResponseFrame::new(body, correlation_id), version)))
}

/// The api key, version and correlation id at the start of every request header.
fn peek_header(frame: &[u8]) -> Option<(ApiKey, i16, i32)> {
    let key = i16::from_be_bytes(frame.get(0..2)?.try_into().ok()?);
    let version = i16::from_be_bytes(frame.get(2..4)?.try_into().ok()?);
    let correlation_id = i32::from_be_bytes(frame.get(4..8)?.try_into().ok()?);
    Some((ApiKey::from_key(key)?, version, correlation_id))
}
