//! The tokio client: one TCP connection to one broker, over the sans-io [`Connection`].
//!
//! A writer task encodes requests and writes them; a reader task reads responses and hands each
//! to the caller waiting for it (`tasks.rs`). Reading never waits on writing, so a
//! broker answering a large fetch while a large produce is being written cannot stall both
//! sides. At most `max_in_flight` requests are written before their responses arrive. A caller
//! whose future is dropped before its request is written has it skipped; after, its response is
//! read and dropped. A request that times out once written closes the connection, as Kafka's
//! clients do: the broker may never answer it. When the connection closes, every waiting caller
//! gets the error, and so does every later one.

use std::fmt::Display;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kwire::messages::{ApiKey, ApiRequest, ApiVersionsResponse, NegotiatedVersions, RequestKind};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio::sync::{mpsc, oneshot, watch, Notify, Semaphore};
use tracing::Instrument;

use crate::config::ClientConfig;
use crate::connection::{Connection, Received};
use crate::error::Error;
use crate::handshake;
use crate::tasks::{self, lock, Command, Reauth, State, Writer};

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
    /// Names each request, so that a caller that times out can tell whether it was written.
    tickets: AtomicU64,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("peer", &self.shared.peer).finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to `addr` (`"host:port"` or a socket address), negotiates versions with
    /// ApiVersions and, when configured, authenticates with SASL; all within
    /// `config.connect_timeout`. With TLS, the broker's certificate must name the host
    /// dialled (or the IP, for a socket address) unless `TlsConfig::server_name` says
    /// otherwise.
    pub async fn connect(addr: impl ToSocketAddrs + Display, config: ClientConfig) -> Result<Client, Error> {
        let config = config.for_address(&addr.to_string());
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
        let lifetime = handshake::authenticate(&mut stream, &mut conn, &config, &negotiated.versions).await?;
        tracing::debug!(%peer, apis = negotiated.response.api_keys.len(), ?lifetime, "connected");

        let mut conn = conn.carrying()?;
        let framer = conn.take_incoming();
        let (reader, writer) = split(stream);
        let permits = Arc::new(Semaphore::new(config.max_in_flight.max(1)));
        let (shutdown, closed) = watch::channel(false);
        let state = Arc::new(Mutex::new(State::new(conn, permits.clone(), shutdown)));
        let idle = Arc::new(Notify::new());
        let (commands, receiver) = mpsc::unbounded_channel();
        let writer = Writer {
            writer,
            state: state.clone(),
            shutdown: closed.clone(),
            idle: idle.clone(),
            honour_throttle: config.honour_throttle,
            reauth: lifetime.map(|lifetime| Reauth::after(config.clone(), negotiated.versions.clone(), lifetime)),
        };
        tokio::spawn(writer.run(receiver));
        tokio::spawn(tasks::read_loop(reader, framer, state.clone(), config.request_timeout, closed, idle));
        let tickets = AtomicU64::new(0);
        Ok(Client { shared: Arc::new(Shared { commands, permits, state, negotiated, config, peer, tickets }) })
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
        lock(&self.shared.state).throttled_until().filter(|until| *until > Instant::now())
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
        let ticket = self.shared.tickets.fetch_add(1, Ordering::Relaxed);
        let work = async {
            let permit = self.shared.permits.clone().acquire_owned().await.map_err(|_| self.closed_error())?;
            if let Some(error) = self.closed() {
                return Err(error);
            }
            let (reply, response) = oneshot::channel();
            let span = tracing::Span::current();
            self.shared
                .commands
                .send(Command { body, version, reply, permit, ticket, span })
                .map_err(|_| self.closed_error())?;
            response.await.map_err(|_| self.closed_error())?
        };
        // The work, and with it the caller's end of the reply, is dropped before `abandon`
        // looks: a request still queued is then skipped by the writer.
        let outcome = tokio::time::timeout(timeout, work.instrument(span)).await;
        outcome.unwrap_or_else(|_| {
            lock(&self.shared.state).abandon(ticket, timeout);
            Err(Error::Timeout(timeout))
        })
    }

    /// Whether the connection is closed: by the broker, a failure, or a request that timed
    /// out. A closed client fails every request; open another.
    pub fn is_closed(&self) -> bool {
        self.closed().is_some()
    }

    /// Why the connection closed, if it did.
    pub fn closed(&self) -> Option<Error> {
        lock(&self.shared.state).closed()
    }

    fn closed_error(&self) -> Error {
        self.closed().unwrap_or(Error::Closed(None))
    }
}
