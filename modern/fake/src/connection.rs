//! One client socket: read frames, answer each request in order, close on anything Kafka's
//! broker would close on (a frame it cannot read, one over the size limit, silence past the
//! idle timeout, a request that takes over the request timeout to arrive). A connection holds
//! at most one frame and one response at a time, and reads only into room it took from the
//! cluster's budget for requests still arriving (`request_budget`).

use std::sync::Arc;

use bytes::BytesMut;
use kwire::messages::{
    ApiKey, ApiVersionsResponse, RequestFrame, RequestKind, ResponseFrame, ResponseKind, SaslAuthenticateResponse,
    SaslHandshakeResponse,
};
use kwire::{ErrorCode, StrBytes};
use kwire_connection::frame::{Framer, Piece};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::apis;
use crate::control::{Action, Intercepted};
use crate::request_budget::Held;
use crate::sasl::{Auth, Failed};
use crate::shared::Shared;

/// The smallest request: api key, version and correlation id.
const MIN_FRAME: usize = 8;

/// The most one read adds to what a connection holds before a request's size is known
/// (`Framer::read_buf` makes no more room).
const READ_ROOM: usize = 64 * 1024;

/// The most room a connection ever asks for: a whole frame of `max_frame` bytes and its size,
/// plus one read.
pub(crate) fn most_held(max_frame: usize) -> usize {
    max_frame.saturating_add(4 + READ_ROOM)
}

/// Serves one socket until the client leaves, misbehaves or the node stops.
pub(crate) async fn serve(mut socket: TcpStream, node: i32, shared: Arc<Shared>, mut stopped: watch::Receiver<bool>) {
    let client_host = socket.peer_addr().map(|a| format!("/{}", a.ip())).unwrap_or_default();
    let mut framer = Framer::new(MIN_FRAME, shared.config.max_frame);
    let idle = shared.config.idle_timeout;
    let mut out = BytesMut::new();
    let mut held = Held::new(&shared.request_budget);
    let mut auth = Auth::default();
    // When the request being read began to arrive (or to wait for room): it must be in
    // within the request timeout.
    let mut arriving: Option<tokio::time::Instant> = None;
    loop {
        let mut answered_any = false;
        loop {
            let frame = match framer.next_piece() {
                Ok(Some(Piece::Frame(frame))) => frame,
                Ok(None) => break,
                // Larger than `socket.request.max.bytes`, or an impossible size: Kafka closes.
                Ok(Some(_)) | Err(_) => {
                    tracing::debug!(node, "an oversized or impossible frame: connection closed");
                    return;
                }
            };
            answered_any = true;
            // A fetch may wait for records; a node that stops does not wait for it.
            let answered = tokio::select! {
                _ = stopped.changed() => return,
                answered = answer(frame.slice(4..), node, &client_host, &shared, &mut auth) => answered,
            };
            let Some(response) = answered else {
                tracing::debug!(node, "connection closed");
                return;
            };
            if let Some(response) = response {
                out.clear();
                let (frame, version) = response;
                if let Err(e) = frame.encode(&mut out, version) {
                    tracing::warn!(node, version, error = %e, "a response that cannot be encoded: connection closed");
                    return;
                }
                if socket.write_all(&out).await.is_err() {
                    return;
                }
            }
        }
        // The frames answered are dropped: their room goes back.
        held.shrink_to(framer.buffered());
        let now = tokio::time::Instant::now();
        if answered_any || !framer.inside_frame() {
            arriving = None;
        }
        // Between requests the idle timeout applies; inside one, what is left of its time.
        let deadline = match arriving {
            Some(began) => began + shared.config.request_timeout,
            None => now + idle,
        };
        // Room for the whole request once its size is in (read into one allocation), else for
        // what one read may add.
        let need = framer.announced().map_or(framer.buffered() + READ_ROOM, |total| total.max(framer.buffered()));
        let room = held.grow_to(need, deadline.min(now + shared.config.request_timeout));
        tokio::select! {
            _ = stopped.changed() => return,
            got = room => if !got {
                tracing::debug!(node, buffered = framer.buffered(), "no room for the request in time: connection closed");
                return;
            },
        }
        framer.reserve_announced();
        tokio::select! {
            _ = stopped.changed() => return,
            read = tokio::time::timeout_at(deadline, socket.read_buf(framer.read_buf())) => match read {
                Ok(Ok(n)) if n > 0 => {
                    arriving.get_or_insert(now);
                }
                _ => return,
            },
        }
    }
}

/// A response and the version to encode it at.
type Answer = (ResponseFrame, i16);

/// The answer to one request frame (the bytes after its size): `None` closes the connection,
/// `Some(None)` sends nothing (a Produce with acks=0).
async fn answer(
    frame: bytes::Bytes,
    node: i32,
    client_host: &str,
    shared: &Shared,
    auth: &mut Auth,
) -> Option<Option<Answer>> {
    let Some((api, version, correlation_id)) = peek_header(&frame) else {
        tracing::debug!(node, "a request of an API key Kafka does not have: connection closed");
        return None;
    };
    // KIP-511: a client newer than the broker sends ApiVersions at a version the broker does
    // not know; it gets UNSUPPORTED_VERSION at v0 with the versions the broker does know.
    if api == ApiKey::ApiVersions && !apis::served(shared, api, version) {
        let body = ApiVersionsResponse {
            error_code: ErrorCode::UNSUPPORTED_VERSION,
            api_keys: apis::advertised(shared),
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
    // SASL: the connection's own exchange; before it completes, ApiVersions only.
    match &request.body {
        RequestKind::SaslHandshake(r) => {
            let body = handshake(shared, auth, r.mechanism.as_str());
            return Some(Some((ResponseFrame::new(body, correlation_id), version)));
        }
        RequestKind::SaslAuthenticate(r) => {
            let body = authenticate(shared, auth, &r.auth_bytes);
            return Some(Some((ResponseFrame::new(body, correlation_id), version)));
        }
        RequestKind::ApiVersions(_) => {}
        _ if !shared.config.users.is_empty() && !auth.done() => {
            tracing::debug!(node, ?api, "a request before authentication: connection closed");
            return None;
        }
        _ => {}
    }
    let seen = Intercepted { node, version, request: &request.body };
    match shared.hooks.decide(api, &seen) {
        Action::Pass => {}
        Action::Delay(wait) => tokio::time::sleep(wait).await,
        Action::Drop => return None,
        Action::Error(code) => {
            let Some(body) = apis::error_response(&request.body, version, code) else {
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

/// SaslHandshake v1: the mechanism, if the cluster has users of it.
fn handshake(shared: &Shared, auth: &mut Auth, mechanism: &str) -> SaslHandshakeResponse {
    let mut enabled: Vec<&str> = shared.config.users.iter().map(|u| u.mechanism.name()).collect();
    enabled.dedup();
    let mechanisms = enabled.iter().map(|m| StrBytes::from_static_str(m)).collect();
    let chosen = shared.config.users.iter().map(|u| u.mechanism).find(|m| m.name() == mechanism);
    let error_code = match (&auth, chosen) {
        // A plaintext listener, or a second handshake.
        _ if shared.config.users.is_empty() => ErrorCode::ILLEGAL_SASL_STATE,
        (Auth::Start, Some(m)) => {
            *auth = Auth::Chosen(m);
            ErrorCode::NONE
        }
        (Auth::Start, None) => ErrorCode::UNSUPPORTED_SASL_MECHANISM,
        _ => ErrorCode::ILLEGAL_SASL_STATE,
    };
    SaslHandshakeResponse { error_code, mechanisms }
}

/// SaslAuthenticate: one token of the chosen mechanism's exchange.
fn authenticate(shared: &Shared, auth: &mut Auth, token: &[u8]) -> SaslAuthenticateResponse {
    match auth.step(&shared.config.users, token) {
        Ok(answer) => SaslAuthenticateResponse { auth_bytes: answer.into(), ..Default::default() },
        Err(Failed(message)) => {
            tracing::debug!(%message, "SASL authentication failed");
            SaslAuthenticateResponse {
                error_code: ErrorCode::SASL_AUTHENTICATION_FAILED,
                error_message: Some(StrBytes::from(message)),
                ..Default::default()
            }
        }
    }
}
