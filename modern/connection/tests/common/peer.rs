//! A scripted broker for the hostile-peer tests. It answers as a one-broker cluster would
//! (ApiVersions, Metadata naming itself the leader of partition 0 of every topic asked for,
//! Produce, FindCoordinator, SASL PLAIN) or, from the next request on, misbehaves as its
//! [`Mode`] says; the handshake's ApiVersions is always answered. It counts the connections it
//! accepted and the requests it read, per API.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kwire::messages::api_versions_response::ApiVersion;
use kwire::messages::find_coordinator_response::Coordinator;
use kwire::messages::metadata_response::{MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic};
use kwire::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kwire::messages::{
    ApiKey, ApiVersionsResponse, FindCoordinatorResponse, MetadataRequest, MetadataResponse, ProduceResponse,
    RequestFrame, RequestKind, ResponseFrame, ResponseKind, SaslAuthenticateResponse, SaslHandshakeResponse,
};
use kwire::{Bytes, BytesMut, ErrorCode, Records};
use kwire_connection::Cluster;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::time::Instant;

/// Generous: what "within the timeout" allows on a loaded machine.
pub const MARGIN: Duration = Duration::from_secs(5);

/// Waits until `done`, for at most [`MARGIN`].
pub async fn eventually(what: &str, done: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < MARGIN, "{what}: not after {MARGIN:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Once `peer` serves again, `cluster` drops the connection that failed and opens another:
/// Metadata and a produce go through.
pub async fn cluster_recovers(cluster: &Cluster, peer: &Peer) {
    peer.set(Mode::Serve);
    let client = cluster.any().await.unwrap();
    assert!(!client.is_closed(), "the cluster handed out a closed client");
    client.send(MetadataRequest::default()).await.unwrap();
    let written = cluster.produce("t", 0, Records::default(), 1, Duration::from_secs(5)).await.unwrap();
    assert_eq!(written.index, 0);
}

/// How the peer answers requests after the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// As a broker would.
    Serve,
    /// Reads every request and answers none, the socket left open.
    Silent,
    /// Writes each answer a byte a second.
    Drip,
    /// Answers with a frame header claiming this many bytes, then a few of them and nothing
    /// more, the socket left open.
    Claim(i32),
    /// Closes the connection on the next request.
    Hangup,
}

/// What the peer is, besides its mode.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// SASL PLAIN with this session lifetime (KIP-368); past it, a connection that has not
    /// authenticated again is closed, as a broker with `connections.max.reauth.ms` does.
    pub session_lifetime_ms: Option<i64>,
    /// FindCoordinator v4+ answered with an empty `coordinators` array.
    pub no_coordinators: bool,
    /// Metadata answered with this `throttle_time_ms` (KIP-219).
    pub throttle_ms: i32,
    /// SaslAuthenticate on a connection already authenticated answered with
    /// SASL_AUTHENTICATION_FAILED: credentials revoked meanwhile.
    pub refuse_reauthentication: bool,
}

struct Inner {
    port: u16,
    options: Options,
    mode: Mutex<Mode>,
    accepted: AtomicUsize,
    requests: Mutex<HashMap<ApiKey, usize>>,
    /// Each request's api and the first topic it names (Metadata), in arrival order.
    log: Mutex<Vec<(ApiKey, Option<String>)>>,
    /// How many of the next Metadata requests are answered REBOOTSTRAP_REQUIRED (KIP-1102).
    rebootstraps: AtomicUsize,
}

/// A scripted broker listening on 127.0.0.1.
#[derive(Clone)]
pub struct Peer {
    inner: Arc<Inner>,
}

impl Peer {
    pub async fn start(mode: Mode, options: Options) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let inner = Arc::new(Inner {
            port: listener.local_addr().unwrap().port(),
            options,
            mode: Mutex::new(mode),
            accepted: AtomicUsize::new(0),
            requests: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
            rebootstraps: AtomicUsize::new(0),
        });
        let shared = inner.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                shared.accepted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(socket, shared.clone()));
            }
        });
        Peer { inner }
    }

    /// `127.0.0.1:port`, as its Metadata advertises it.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.inner.port)
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.inner.port))
    }

    pub fn port(&self) -> u16 {
        self.inner.port
    }

    /// How the next requests are answered, on every connection.
    pub fn set(&self, mode: Mode) {
        *self.inner.mode.lock().unwrap() = mode;
    }

    /// Answers the next `n` Metadata requests with REBOOTSTRAP_REQUIRED, as a broker that
    /// finds the client's view of the cluster stale does (KIP-1102, Metadata v13).
    pub fn rebootstrap_next(&self, n: usize) {
        self.inner.rebootstraps.store(n, Ordering::SeqCst);
    }

    pub fn accepted(&self) -> usize {
        self.inner.accepted.load(Ordering::SeqCst)
    }

    /// How many `api` requests arrived.
    pub fn requests(&self, api: ApiKey) -> usize {
        self.inner.requests.lock().unwrap().get(&api).copied().unwrap_or(0)
    }

    /// The topics Metadata requests named, in arrival order.
    pub fn metadata_topics(&self) -> Vec<Option<String>> {
        let log = self.inner.log.lock().unwrap();
        log.iter().filter(|(api, _)| *api == ApiKey::Metadata).map(|(_, topic)| topic.clone()).collect()
    }

    /// Serves one connection already accepted elsewhere (a TLS stream, say).
    pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(&self, socket: S) {
        serve(socket, self.inner.clone()).await
    }
}

async fn read_request(socket: &mut (impl AsyncRead + Unpin)) -> Option<RequestFrame> {
    let size = socket.read_i32().await.ok()?;
    let mut body = vec![0; usize::try_from(size).ok()?];
    socket.read_exact(&mut body).await.ok()?;
    RequestFrame::decode(Bytes::from(body)).ok()
}

fn encode(request: &RequestFrame, body: ResponseKind) -> BytesMut {
    let mut out = BytesMut::new();
    ResponseFrame::new(body, request.header.correlation_id).encode(&mut out, request.version()).unwrap();
    out
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(mut socket: S, inner: Arc<Inner>) {
    // Until when the SASL session lasts, once authenticated with a lifetime.
    let mut expires: Option<Instant> = None;
    let mut authenticated = false;
    let mut wedged = false;
    loop {
        let request = match expires {
            Some(at) => tokio::select! {
                request = read_request(&mut socket) => request,
                _ = tokio::time::sleep_until(at) => return,
            },
            None => read_request(&mut socket).await,
        };
        let Some(request) = request else { return };
        let api = request.api_key();
        *inner.requests.lock().unwrap().entry(api).or_default() += 1;
        let topic = match &request.body {
            RequestKind::Metadata(m) => {
                m.topics.iter().flatten().next().and_then(|t| t.name.as_ref()).map(|n| n.to_string())
            }
            _ => None,
        };
        inner.log.lock().unwrap().push((api, topic));
        let mode = *inner.mode.lock().unwrap();
        if api != ApiKey::ApiVersions && mode == Mode::Hangup {
            return;
        }
        if api != ApiKey::ApiVersions && (wedged || mode == Mode::Silent) {
            continue;
        }
        let refused = authenticated && inner.options.refuse_reauthentication;
        if let RequestKind::SaslAuthenticate(_) = &request.body {
            let lifetime = inner.options.session_lifetime_ms.unwrap_or(0);
            expires = (lifetime > 0).then(|| Instant::now() + Duration::from_millis(lifetime as u64));
            authenticated = true;
        }
        let body = match &request.body {
            RequestKind::SaslAuthenticate(_) if refused => Some(
                SaslAuthenticateResponse { error_code: ErrorCode::SASL_AUTHENTICATION_FAILED, ..Default::default() }
                    .into(),
            ),
            _ => answer(&request, &inner),
        };
        let Some(body) = body else { continue };
        let bytes = encode(&request, body);
        let written = match mode {
            Mode::Claim(size) if api != ApiKey::ApiVersions => {
                wedged = true;
                let mut head = size.to_be_bytes().to_vec();
                head.extend_from_slice(&bytes[4..bytes.len().min(12)]);
                socket.write_all(&head).await
            }
            Mode::Drip if api != ApiKey::ApiVersions => {
                let mut written = Ok(());
                for byte in bytes.iter() {
                    written = socket.write_all(&[*byte]).await;
                    if written.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                written
            }
            _ => socket.write_all(&bytes).await,
        };
        if written.is_err() {
            return;
        }
    }
}

/// What a one-broker cluster answers; `None` for a Produce with acks = 0.
fn answer(request: &RequestFrame, inner: &Inner) -> Option<ResponseKind> {
    let port = i32::from(inner.port);
    Some(match &request.body {
        RequestKind::ApiVersions(_) => {
            let apis = [
                (ApiKey::Produce, 3, 9),
                (ApiKey::Metadata, 0, 13),
                (ApiKey::FindCoordinator, 0, 4),
                (ApiKey::SaslHandshake, 0, 1),
                (ApiKey::ApiVersions, 0, 3),
                (ApiKey::SaslAuthenticate, 0, 2),
            ];
            let api_keys = apis
                .into_iter()
                .map(|(api, min, max)| ApiVersion {
                    api_key: api.key(),
                    min_version: min,
                    max_version: max,
                    ..Default::default()
                })
                .collect();
            ApiVersionsResponse { api_keys, ..Default::default() }.into()
        }
        RequestKind::Metadata(_)
            if inner.rebootstraps.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() =>
        {
            MetadataResponse { error_code: ErrorCode::REBOOTSTRAP_REQUIRED, ..Default::default() }.into()
        }
        RequestKind::Metadata(m) => {
            let topics = m
                .topics
                .iter()
                .flatten()
                .map(|t| MetadataResponseTopic {
                    name: t.name.clone(),
                    partitions: vec![MetadataResponsePartition { partition_index: 0, ..Default::default() }],
                    ..Default::default()
                })
                .collect();
            let broker = MetadataResponseBroker { host: "127.0.0.1".into(), port, ..Default::default() };
            let throttle_time_ms = inner.options.throttle_ms;
            MetadataResponse { brokers: vec![broker], topics, throttle_time_ms, ..Default::default() }.into()
        }
        RequestKind::Produce(p) if p.acks == 0 => return None,
        RequestKind::Produce(p) => {
            let responses = p
                .topic_data
                .iter()
                .map(|t| TopicProduceResponse {
                    name: t.name.clone(),
                    partition_responses: t
                        .partition_data
                        .iter()
                        .map(|d| PartitionProduceResponse { index: d.index, ..Default::default() })
                        .collect(),
                    ..Default::default()
                })
                .collect();
            ProduceResponse { responses, ..Default::default() }.into()
        }
        RequestKind::FindCoordinator(f) => {
            let coordinators = if inner.options.no_coordinators {
                Vec::new()
            } else {
                f.coordinator_keys
                    .iter()
                    .map(|key| Coordinator { key: key.clone(), host: "127.0.0.1".into(), port, ..Default::default() })
                    .collect()
            };
            if request.version() >= 4 {
                FindCoordinatorResponse { coordinators, ..Default::default() }.into()
            } else {
                FindCoordinatorResponse { host: "127.0.0.1".into(), port, ..Default::default() }.into()
            }
        }
        RequestKind::SaslHandshake(_) => {
            SaslHandshakeResponse { mechanisms: vec!["PLAIN".into()], ..Default::default() }.into()
        }
        RequestKind::SaslAuthenticate(_) => SaslAuthenticateResponse {
            session_lifetime_ms: inner.options.session_lifetime_ms.unwrap_or(0),
            ..Default::default()
        }
        .into(),
        _ => return None,
    })
}
