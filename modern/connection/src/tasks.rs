//! The two tasks under a [`crate::Client`] and the state they share. The writer encodes and
//! writes requests, skips those whose caller is gone, and re-authenticates before a SASL
//! session's lifetime ends (KIP-368). The reader splits responses off the socket, matches each
//! to its request under the shared lock, and decodes it and hands it to its caller outside
//! that lock, so that the writer is not held up by a large response being decoded. It closes
//! the connection once a written request has waited `request_timeout`, as Kafka's
//! NetworkClient does: a broker that went silent with the socket open would otherwise keep
//! every permit, and every later request would wait behind them. Closing wakes both tasks,
//! which drop their halves of the socket.
//!
//! Who waits for which response is kept in the sans-io [`Connection`]'s one table of requests
//! in flight: each request carries its caller's [`Waiting`] there.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kwire::messages::{ApiRequest, NegotiatedVersions, RequestKind};
use kwire_runtime::framing::Framer;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch, Notify, OwnedSemaphorePermit, Semaphore};

use crate::config::ClientConfig;
use crate::connection::{Answered, Connection, Received};
use crate::error::Error;
use crate::handshake::{self, Exchange};

pub(crate) type Reply = oneshot::Sender<Result<Option<Received>, Error>>;

/// A request on its way to the writer task.
pub(crate) struct Command {
    pub body: RequestKind,
    pub version: i16,
    pub reply: Reply,
    pub permit: OwnedSemaphorePermit,
    /// Names the caller's request, for [`State::abandon`].
    pub ticket: u64,
    /// The caller's `kafka_request` span, which the writer and reader fill in.
    pub span: tracing::Span,
}

/// Who waits for a written request's response; re-authentication's own requests have no
/// caller's ticket and take no permit.
pub(crate) struct Waiting {
    reply: Reply,
    _permit: Option<OwnedSemaphorePermit>,
    ticket: Option<u64>,
    sent_at: Instant,
    span: tracing::Span,
}

/// What the two tasks and the client's handles share: the sans-io state (with who waits for
/// what), and why it closed.
pub(crate) struct State {
    conn: Connection<Waiting>,
    closed: Option<Error>,
    /// Until when the broker throttles this connection (the latest `throttle_time_ms`).
    throttled_until: Option<Instant>,
    permits: Arc<Semaphore>,
    shutdown: watch::Sender<bool>,
}

pub(crate) fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    pub(crate) fn new(conn: Connection<Waiting>, permits: Arc<Semaphore>, shutdown: watch::Sender<bool>) -> Self {
        State { conn, closed: None, throttled_until: None, permits, shutdown }
    }

    /// Why the connection closed, if it did.
    pub(crate) fn closed(&self) -> Option<Error> {
        self.closed.clone()
    }

    pub(crate) fn throttled_until(&self) -> Option<Instant> {
        self.throttled_until
    }

    /// Closes with `error`: every waiting caller gets it, later ones too; callers waiting for
    /// a permit are woken, and both tasks stop.
    pub(crate) fn fail(&mut self, error: Error) {
        for (_, w) in self.conn.forget_all() {
            let _ = w.reply.send(Err(error.clone()));
        }
        self.closed.get_or_insert(error);
        self.permits.close();
        self.shutdown.send_replace(true);
    }

    /// The caller of `ticket` gave up after `timeout`. If its request was written, nothing
    /// says the broker will ever answer: the connection closes. If not, the writer skips it.
    pub(crate) fn abandon(&mut self, ticket: u64, timeout: Duration) {
        let written = self.conn.waiting().find(|(_, w)| w.ticket == Some(ticket)).map(|(id, _)| id);
        if let Some(correlation_id) = written {
            self.conn.forget(correlation_id);
            self.timed_out(correlation_id, timeout);
        }
    }

    fn timed_out(&mut self, correlation_id: i32, timeout: Duration) {
        tracing::warn!(correlation_id, ?timeout, "no response in time: closing the connection");
        let why = format!("request {correlation_id} had no response within {timeout:?}");
        self.fail(Error::Closed(Some(why.into())));
    }

    /// Closes the connection if a written request has waited `timeout`, whether or not its
    /// caller is still there; those overdue get [`Error::Timeout`], the others
    /// [`Error::Closed`].
    fn expire(&mut self, timeout: Duration) {
        let now = Instant::now();
        let overdue: Vec<i32> =
            self.conn.waiting().filter(|(_, w)| w.sent_at + timeout <= now).map(|(id, _)| id).collect();
        let Some(first) = overdue.first().copied() else { return };
        for id in overdue {
            if let Some(w) = self.conn.forget(id) {
                let _ = w.reply.send(Err(Error::Timeout(timeout)));
            }
        }
        self.timed_out(first, timeout);
    }

    /// When the oldest written request times out; with none, a full timeout from now (a
    /// request written later times out later still).
    fn next_deadline(&self, timeout: Duration) -> Instant {
        self.conn.waiting().map(|(_, w)| w.sent_at).min().unwrap_or_else(Instant::now) + timeout
    }

    /// Notes a response's `throttle_time_ms` (KIP-219): the latest end of any throttle counts.
    fn throttle(&mut self, ms: i32) {
        let until = Instant::now() + Duration::from_millis(ms as u64);
        self.throttled_until = Some(self.throttled_until.map_or(until, |t| t.max(until)));
    }
}

/// Resolves once the connection is closed (or everything that could close it is gone).
async fn closing(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|closed| *closed).await;
}

async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

/// When to authenticate again: at 85% of the session's lifetime, the low end of the window
/// Kafka's clients pick in (85% to 95%), so that the broker never sees the session end.
pub(crate) struct Reauth {
    pub config: ClientConfig,
    pub versions: NegotiatedVersions,
    pub at: Instant,
}

impl Reauth {
    pub(crate) fn after(config: ClientConfig, versions: NegotiatedVersions, lifetime: Duration) -> Reauth {
        Reauth { config, versions, at: Instant::now() + lifetime * 17 / 20 }
    }
}

/// The writer task's half of the socket and what it needs.
pub(crate) struct Writer<W> {
    pub writer: W,
    pub state: Arc<Mutex<State>>,
    pub shutdown: watch::Receiver<bool>,
    /// Woken by the reader when no written request waits any more.
    pub idle: Arc<Notify>,
    pub honour_throttle: bool,
    pub reauth: Option<Reauth>,
}

/// What woke the writer. Held for one turn of its loop, so the command is not boxed.
#[allow(clippy::large_enum_variant)]
enum Next {
    Closed,
    Reauthenticate,
    Command(Option<Command>),
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// Writes requests until the connection closes or every client handle is gone, then
    /// closes the socket.
    pub(crate) async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        loop {
            let reauth_at = self.reauth.as_ref().map(|r| r.at);
            let next = tokio::select! {
                biased;
                _ = closing(&mut self.shutdown) => Next::Closed,
                _ = until(reauth_at) => Next::Reauthenticate,
                command = commands.recv() => Next::Command(command),
            };
            match next {
                Next::Closed => break,
                Next::Reauthenticate => {
                    if let Err(error) = self.reauthenticate().await {
                        tracing::warn!(%error, "re-authentication failed: closing the connection");
                        lock(&self.state).fail(error);
                        break;
                    }
                }
                Next::Command(Some(command)) => {
                    if !self.write(command).await {
                        break;
                    }
                }
                Next::Command(None) => {
                    lock(&self.state).fail(Error::Closed(Some("every handle on the client was dropped".into())));
                    break;
                }
            }
        }
        let _ = self.writer.shutdown().await;
    }

    /// Encodes `command` under the lock (so its correlation id is registered before any
    /// response can arrive) and writes it outside it; while the broker throttles the
    /// connection, waits first when told to honour that. False once the connection closed.
    async fn write(&mut self, command: Command) -> bool {
        let throttled = self.honour_throttle.then(|| lock(&self.state).throttled_until).flatten();
        if let Some(until) = throttled.filter(|until| *until > Instant::now()) {
            tokio::select! {
                _ = tokio::time::sleep_until(until.into()) => {}
                _ = closing(&mut self.shutdown) => {}
            }
        }
        let Command { body, version, reply, permit, ticket, span } = command;
        let (mut bytes, no_response) = {
            let mut state = lock(&self.state);
            if let Some(error) = state.closed.clone() {
                let _ = reply.send(Err(error));
                return false;
            }
            if reply.is_closed() {
                tracing::debug!(parent: &span, "the caller gave up before the request was written");
                return true;
            }
            let waiting = Waiting {
                reply,
                _permit: Some(permit),
                ticket: Some(ticket),
                sent_at: Instant::now(),
                span: span.clone(),
            };
            match state.conn.send_with(body, version, waiting) {
                Err((error, waiting)) => {
                    let _ = waiting.reply.send(Err(error));
                    return true;
                }
                Ok((sent, no_response)) => {
                    span.record("correlation_id", sent.correlation_id).record("bytes_out", sent.bytes);
                    (state.conn.take_outgoing_chunks(), no_response)
                }
            }
        };
        let written = tokio::select! {
            // One vectored write of the frame's chunks where the stream takes them.
            written = self.writer.write_all_buf(&mut bytes) => written,
            _ = closing(&mut self.shutdown) => return false,
        };
        if let Err(e) = written {
            let error = Error::from(e);
            if let Some(w) = no_response {
                let _ = w.reply.send(Err(error.clone()));
            }
            lock(&self.state).fail(error);
            return false;
        }
        if let Some(w) = no_response {
            let _ = w.reply.send(Ok(None));
        }
        true
    }

    /// SASL once more on this connection (KIP-368): after the responses in flight, since the
    /// client sends nothing else meanwhile; requests queue until it is done.
    async fn reauthenticate(&mut self) -> Result<(), Error> {
        let Some(reauth) = self.reauth.take() else { return Ok(()) };
        loop {
            let idle = self.idle.notified();
            if lock(&self.state).conn.in_flight() == 0 {
                break;
            }
            tokio::select! {
                _ = idle => {}
                _ = closing(&mut self.shutdown) => return Err(closed_error(&self.state)),
            }
        }
        tracing::debug!("re-authenticating before the SASL session ends");
        let mut exchange = Internal { writer: &mut self.writer, state: &self.state };
        let lifetime = handshake::authenticate_over(&mut exchange, &reauth.config, &reauth.versions).await?;
        self.reauth = lifetime.map(|lifetime| Reauth::after(reauth.config, reauth.versions, lifetime));
        Ok(())
    }
}

fn closed_error(state: &Mutex<State>) -> Error {
    lock(state).closed.clone().unwrap_or(Error::Closed(None))
}

/// Requests of the writer's own (re-authentication), answered through the reader task.
struct Internal<'a, W> {
    writer: &'a mut W,
    state: &'a Mutex<State>,
}

impl<W: AsyncWrite + Unpin> Exchange for Internal<'_, W> {
    async fn request<R: ApiRequest + Send>(&mut self, request: R, version: i16) -> Result<R::Response, Error> {
        let (reply, response) = oneshot::channel();
        let bytes = {
            let mut state = lock(self.state);
            if let Some(error) = state.closed.clone() {
                return Err(error);
            }
            let waiting =
                Waiting { reply, _permit: None, ticket: None, sent_at: Instant::now(), span: tracing::Span::current() };
            state.conn.send_with(request.into(), version, waiting).map_err(|(error, _)| error)?;
            state.conn.take_outgoing()
        };
        self.writer.write_all(&bytes).await?;
        let received = response.await.map_err(|_| closed_error(self.state))??;
        received.ok_or_else(|| closed_error(self.state))?.into_typed::<R>()
    }
}

/// Reads responses and wakes their callers; a framing error, the end of the stream or a
/// written request older than `timeout` closes the connection for everyone waiting. Bytes are
/// read straight into `framer` (the connection's, taken over) and frames split off it without
/// the shared lock; matching them to their requests takes it, decoding them does not.
pub(crate) async fn read_loop(
    mut reader: impl AsyncRead + Unpin,
    mut framer: Framer,
    state: Arc<Mutex<State>>,
    timeout: Duration,
    mut shutdown: watch::Receiver<bool>,
    idle: Arc<Notify>,
) {
    let mut frames: Vec<Bytes> = Vec::new();
    let mut answered: Vec<Answered<Waiting>> = Vec::new();
    loop {
        let deadline = lock(&state).next_deadline(timeout);
        // Cancel-safe: a read that loses the race has taken no bytes.
        let read = tokio::select! {
            read = reader.read_buf(framer.read_buf()) => read,
            _ = tokio::time::sleep_until(deadline.into()) => {
                lock(&state).expire(timeout);
                continue;
            }
            _ = closing(&mut shutdown) => return,
        };
        match read {
            Ok(0) => return lock(&state).fail(Error::Closed(Some("the broker closed the connection".into()))),
            Err(e) => return lock(&state).fail(Error::from(e)),
            Ok(_) => {}
        }
        // Every whole frame read so far, then the connection's end if one is broken.
        let mut failure = None;
        while failure.is_none() {
            match framer.next_frame() {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(error) => failure = Some(error.into()),
            }
        }
        if !frames.is_empty() {
            let mut state = lock(&state);
            for frame in frames.drain(..) {
                match state.conn.answer(frame) {
                    Ok(a) => answered.push(a),
                    Err(error) => {
                        failure.get_or_insert(error);
                        break;
                    }
                }
            }
            if state.conn.in_flight() == 0 {
                idle.notify_one();
            }
        }
        for a in answered.drain(..) {
            deliver(a, &state);
        }
        if let Some(error) = failure {
            tracing::warn!(%error, "closing the connection");
            return lock(&state).fail(error);
        }
    }
}

/// Decodes a response and hands it to its caller (a body that does not decode fails that
/// request only), noting the broker's throttle.
fn deliver(answered: Answered<Waiting>, state: &Mutex<State>) {
    let decoded = answered.decode();
    let w = answered.context;
    match decoded {
        Ok(received) => {
            let throttle_ms = received.throttle_time_ms().unwrap_or(0);
            if throttle_ms > 0 {
                lock(state).throttle(throttle_ms);
                tracing::info!(api = received.api.name(), throttle_ms, "the broker throttles this client");
            }
            w.span
                .record("bytes_in", received.bytes)
                .record("latency_us", w.sent_at.elapsed().as_micros() as u64)
                .record("throttle_ms", throttle_ms);
            let _ = w.reply.send(Ok(Some(received)));
        }
        Err(error) => {
            tracing::warn!(%error, "a response did not decode");
            let _ = w.reply.send(Err(error));
        }
    }
}
