//! The tokio client: one TCP connection to one broker, over the sans-io [`Connection`].
//!
//! A writer task encodes requests and writes them; a reader task reads responses and hands each
//! to the caller waiting for it. Reading never waits on writing, so a broker answering a large
//! fetch while a large produce is being written cannot stall both sides. At most
//! `max_in_flight` requests are written before their responses arrive; a caller that gives up
//! (timeout, or its future dropped) leaves the connection usable, its response read and
//! dropped. When the connection fails, every waiting caller gets the error.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kafka_wire::messages::{ApiKey, ApiRequest, ApiVersionsResponse, NegotiatedVersions, RequestKind};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};
use tracing::Instrument;

use crate::config::ClientConfig;
use crate::connection::{Connection, Received};
use crate::error::Error;
use crate::handshake;

type Reply = oneshot::Sender<Result<Option<Received>, Error>>;

/// A request on its way to the writer task.
struct Command {
    body: RequestKind,
    version: i16,
    reply: Reply,
    permit: OwnedSemaphorePermit,
    /// The caller's `kafka_request` span, which the writer and reader fill in.
    span: tracing::Span,
}

/// A caller waiting for a response.
struct Waiting {
    reply: Reply,
    _permit: OwnedSemaphorePermit,
    sent_at: Instant,
    span: tracing::Span,
}

/// What the two tasks share: the sans-io state, who waits for what, and why it closed.
struct State {
    conn: Connection,
    waiting: HashMap<i32, Waiting>,
    closed: Option<Error>,
    /// Until when the broker throttles this connection (the latest `throttle_time_ms`).
    throttled_until: Option<Instant>,
}

impl State {
    /// Closes with `error`: every waiting caller gets it, later ones too.
    fn fail(&mut self, error: Error) {
        for (_, w) in self.waiting.drain() {
            let _ = w.reply.send(Err(error.clone()));
        }
        self.closed.get_or_insert(error);
    }
}

/// A connection to one broker: negotiated, authenticated, pipelined. Cheap to clone; the
/// connection closes when the last clone is dropped.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

struct Shared {
    commands: mpsc::UnboundedSender<Command>,
    permits: Arc<Semaphore>,
    state: Arc<Mutex<State>>,
    negotiated: handshake::Negotiated,
    config: ClientConfig,
    peer: SocketAddr,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("peer", &self.shared.peer).finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to `addr`, negotiates versions with ApiVersions and, when configured,
    /// authenticates with SASL; all within `config.connect_timeout`.
    pub async fn connect(addr: impl ToSocketAddrs, config: ClientConfig) -> Result<Client, Error> {
        let timeout = config.connect_timeout;
        tokio::time::timeout(timeout, Self::connect_now(addr, config)).await.map_err(|_| Error::Timeout(timeout))?
    }

    async fn connect_now(addr: impl ToSocketAddrs, config: ClientConfig) -> Result<Client, Error> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let peer = stream.peer_addr()?;
        #[cfg(feature = "tls")]
        if let Some(tls) = &config.tls {
            let stream = tls.connect(stream, peer).await?;
            return Self::start(stream, tokio::io::split, peer, config).await;
        }
        // A TCP stream splits without the lock `tokio::io::split` takes on every read and write.
        Self::start(stream, TcpStream::into_split, peer, config).await
    }

    /// Negotiates and authenticates over `stream`, then hands its halves to the reader and
    /// writer tasks.
    async fn start<S, R, W>(
        mut stream: S,
        split: impl FnOnce(S) -> (R, W),
        peer: SocketAddr,
        config: ClientConfig,
    ) -> Result<Client, Error>
    where
        S: AsyncRead + AsyncWrite + Unpin,
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut conn = Connection::new(config.client_id.as_deref(), config.max_frame_size);
        let negotiated = handshake::negotiate(&mut stream, &mut conn, &config).await?;
        handshake::authenticate(&mut stream, &mut conn, &config, &negotiated.versions).await?;
        tracing::debug!(%peer, apis = negotiated.response.api_keys.len(), "connected");

        let (reader, writer) = split(stream);
        let state = Arc::new(Mutex::new(State { conn, waiting: HashMap::new(), closed: None, throttled_until: None }));
        let (commands, receiver) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(writer, receiver, state.clone(), config.honour_throttle));
        tokio::spawn(read_loop(reader, state.clone()));
        let permits = Arc::new(Semaphore::new(config.max_in_flight.max(1)));
        Ok(Client { shared: Arc::new(Shared { commands, permits, state, negotiated, config, peer }) })
    }

    /// The broker's ApiVersions answer.
    pub fn api_versions(&self) -> &ApiVersionsResponse {
        &self.shared.negotiated.response
    }

    /// The highest version of each API both sides know.
    pub fn negotiated(&self) -> &NegotiatedVersions {
        &self.shared.negotiated.versions
    }

    /// The ApiVersions version the broker's answer was read at.
    pub fn api_versions_version(&self) -> i16 {
        self.shared.negotiated.api_versions_version
    }

    /// The version `send` uses for `api`, if both sides know one.
    pub fn version_of(&self, api: ApiKey) -> Option<i16> {
        self.shared.negotiated.versions.version(api)
    }

    /// Until when the broker throttles this connection, from the last response that said
    /// so (`throttle_time_ms` > 0); `None` once that time has passed. With
    /// [`ClientConfig::honour_throttle`] (the default) requests wait until then to be written.
    pub fn throttled_until(&self) -> Option<Instant> {
        let state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        state.throttled_until.filter(|until| *until > Instant::now())
    }

    /// The broker's address.
    pub fn peer(&self) -> SocketAddr {
        self.shared.peer
    }

    /// Sends `request` at the highest version both sides know and returns its response. A
    /// Produce with `acks = 0` has none: once written, its response is the empty default.
    pub async fn send<R: ApiRequest>(&self, request: R) -> Result<R::Response, Error> {
        let version = self.version_of(R::API).ok_or(Error::NoCommonVersion(R::API))?;
        self.send_at(request, version).await
    }

    /// [`Client::send`] at a chosen version.
    pub async fn send_at<R: ApiRequest>(&self, request: R, version: i16) -> Result<R::Response, Error> {
        match self.send_kind(request.into(), version).await? {
            Some(received) => received.into_typed::<R>(),
            None => Ok(R::Response::default()),
        }
    }

    /// Sends a body of any API at `version`: the response, or `None` for a request Kafka does
    /// not answer (Produce with `acks = 0`).
    pub async fn send_kind(&self, body: RequestKind, version: i16) -> Result<Option<Received>, Error> {
        let api = body.api_key();
        let span = tracing::debug_span!(
            "kafka_request",
            api = api.name(),
            version,
            correlation_id = tracing::field::Empty,
            bytes_out = tracing::field::Empty,
            bytes_in = tracing::field::Empty,
            latency_us = tracing::field::Empty,
            throttle_ms = tracing::field::Empty
        );
        let timeout = self.shared.config.request_timeout;
        let work = async {
            let permit = self.shared.permits.clone().acquire_owned().await.map_err(|_| Error::Closed(None))?;
            let (reply, response) = oneshot::channel();
            if let Some(error) = self.closed() {
                return Err(error);
            }
            let span = tracing::Span::current();
            self.shared
                .commands
                .send(Command { body, version, reply, permit, span })
                .map_err(|_| self.closed().unwrap_or(Error::Closed(None)))?;
            response.await.map_err(|_| self.closed().unwrap_or(Error::Closed(None)))?
        };
        tokio::time::timeout(timeout, work.instrument(span)).await.map_err(|_| Error::Timeout(timeout))?
    }

    fn closed(&self) -> Option<Error> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).closed.clone()
    }
}

/// Encodes each request under the lock (so its correlation id is registered before any
/// response can arrive) and writes it outside it; while the broker throttles the connection,
/// waits first when told to honour that.
async fn write_loop(
    mut writer: impl AsyncWrite + Unpin,
    mut commands: mpsc::UnboundedReceiver<Command>,
    state: Arc<Mutex<State>>,
    honour_throttle: bool,
) {
    while let Some(command) = commands.recv().await {
        if honour_throttle {
            let until = state.lock().unwrap_or_else(|e| e.into_inner()).throttled_until;
            if let Some(until) = until.filter(|until| *until > Instant::now()) {
                tokio::time::sleep_until(until.into()).await;
            }
        }
        let span = command.span;
        let (bytes, no_response) = {
            let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(error) = state.closed.clone() {
                let _ = command.reply.send(Err(error));
                continue;
            }
            match state.conn.send_kind(command.body, command.version) {
                Err(error) => {
                    let _ = command.reply.send(Err(error));
                    continue;
                }
                Ok(sent) => {
                    span.record("correlation_id", sent.correlation_id).record("bytes_out", sent.bytes);
                    let bytes = state.conn.take_outgoing();
                    if sent.expects_response {
                        let waiting =
                            Waiting { reply: command.reply, _permit: command.permit, sent_at: Instant::now(), span };
                        state.waiting.insert(sent.correlation_id, waiting);
                        (bytes, None)
                    } else {
                        (bytes, Some(command.reply))
                    }
                }
            }
        };
        if let Err(e) = writer.write_all(&bytes).await {
            let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
            let error = Error::from(e);
            if let Some(reply) = no_response {
                let _ = reply.send(Err(error.clone()));
            }
            state.fail(error);
            return;
        }
        if let Some(reply) = no_response {
            let _ = reply.send(Ok(None));
        }
    }
    // Every client handle is gone: close the socket.
    let _ = writer.shutdown().await;
}

/// Reads responses and wakes their callers; any framing error or end of stream closes the
/// connection for everyone waiting.
async fn read_loop(mut reader: impl AsyncRead + Unpin, state: Arc<Mutex<State>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let read = reader.read(&mut buf).await;
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        match read {
            Ok(0) => return state.fail(Error::Closed(Some("the broker closed the connection".into()))),
            Err(e) => return state.fail(Error::from(e)),
            Ok(n) => state.conn.receive(&buf[..n]),
        }
        loop {
            match state.conn.next_response() {
                Ok(None) => break,
                Ok(Some(received)) => {
                    let throttle_ms = received.throttle_time_ms().unwrap_or(0);
                    if throttle_ms > 0 {
                        let until = Instant::now() + std::time::Duration::from_millis(throttle_ms as u64);
                        state.throttled_until = Some(state.throttled_until.map_or(until, |t| t.max(until)));
                        tracing::info!(api = received.api.name(), throttle_ms, "the broker throttles this client");
                    }
                    if let Some(w) = state.waiting.remove(&received.correlation_id) {
                        w.span
                            .record("bytes_in", received.bytes)
                            .record("latency_us", w.sent_at.elapsed().as_micros() as u64)
                            .record("throttle_ms", throttle_ms);
                        let _ = w.reply.send(Ok(Some(received)));
                    }
                }
                Err(Error::Decode { api, version, correlation_id, source }) => {
                    let error = Error::Decode { api, version, correlation_id, source };
                    tracing::warn!(%error, "a response did not decode");
                    if let Some(w) = state.waiting.remove(&correlation_id) {
                        let _ = w.reply.send(Err(error));
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "closing the connection");
                    return state.fail(error);
                }
            }
        }
    }
}
