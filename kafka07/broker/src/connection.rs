//! One client connection. Requests are handled strictly in order (0.7's per-connection order,
//! spec §1.1), but reading is pipelined: while a run of PRODUCE requests is being appended on a
//! blocking thread, the next requests are read and decoded, and consecutive PRODUCEs already
//! received go to one blocking job together. A request that is answered waits until every
//! request before it is handled, including the fsyncs their appends asked for (see
//! [`crate::handler::ProduceOutcome`]). Anything wrong with the bytes a client sends closes that
//! connection and nothing else.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use kwire07_protocol::log::FlushPoint;
use kwire07_protocol::{FrameDecoder, RecvBuffer, Request};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{debug, info};

use crate::connection_table::{Admission, Room};
use crate::handler::{is_produce, produce_all, ProduceOutcome};
use crate::respond::respond;
use crate::state::BrokerState;

/// Limits of one connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub max_request_size: usize,
    /// No bytes at all for this long between requests: close (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// How long a request may take to arrive, from its first byte to its last; also how long
    /// a response being written may make no progress.
    pub request_timeout: Duration,
}

/// How long a read waits for another connection, shed for holding the most unhandled request
/// bytes, to release them; after this many waits the read gives up and the connection closes.
const ROOM_WAIT: Duration = Duration::from_millis(20);
const ROOM_WAITS: usize = 100;

/// Smallest and largest room made for a read; a frame's body may be up to `max_request_size`
/// but is read in steps. Large reads pick up several pipelined PRODUCE requests per call.
const MIN_READ: usize = 64 * 1024;
const READ_STEP: usize = 1024 * 1024;
/// Received requests not yet handled, in bytes, beyond which reading pauses (backpressure when
/// the disk is slower than the client).
const MAX_QUEUED_BYTES: usize = 8 * 1024 * 1024;
/// Most PRODUCE bytes handed to one blocking job.
const MAX_JOB_BYTES: usize = 4 * 1024 * 1024;

pub async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    state: Arc<BrokerState>,
    limits: ConnectionLimits,
    admission: Admission,
    mut shutdown: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let mut conn = Connection::new(&stream, &state, limits, &admission);
    match conn.run(&mut shutdown).await {
        Ok(()) => debug!(%peer, "connection closed"),
        // A client that leaves without reading its last answers (a consumer's fetch sent
        // ahead) is ordinary, not news.
        Err(e) if matches!(e.kind(), io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset) => {
            debug!(%peer, "connection closed by the peer: {e}")
        }
        Err(e) => info!(%peer, "closing connection: {e}"),
    }
    // A job still running finishes on its own; its outcome no longer matters.
}

fn invalid(e: impl std::error::Error + Send + Sync + 'static) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// What woke the connection up.
enum Event {
    Stop,
    /// The connection table shed this connection to let another in or to free memory.
    Shed,
    Job(Result<ProduceOutcome, tokio::task::JoinError>),
    Read(io::Result<usize>),
}

/// A decoded request waiting its turn, with its frame size (for the queue budget).
struct Queued {
    request: Request,
    bytes: usize,
}

/// A blocking job appending a run of PRODUCE requests.
struct ProduceJob {
    handle: JoinHandle<ProduceOutcome>,
    bytes: usize,
}

struct Connection<'a> {
    stream: &'a TcpStream,
    state: &'a Arc<BrokerState>,
    limits: ConnectionLimits,
    decoder: FrameDecoder,
    buf: RecvBuffer,
    queue: VecDeque<Queued>,
    queued_bytes: usize,
    job: Option<ProduceJob>,
    /// Flushes owed to this connection's appends, waited for before any answer.
    flushes: Vec<FlushPoint>,
    admission: &'a Admission,
    /// When the first byte of the request being received arrived (`None`: between requests).
    request_started: Option<Instant>,
}

impl<'a> Connection<'a> {
    fn new(
        stream: &'a TcpStream,
        state: &'a Arc<BrokerState>,
        limits: ConnectionLimits,
        admission: &'a Admission,
    ) -> Self {
        Connection {
            stream,
            state,
            limits,
            decoder: FrameDecoder::new(limits.max_request_size),
            buf: RecvBuffer::default(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            job: None,
            flushes: Vec::new(),
            admission,
            request_started: None,
        }
    }

    /// Tells the table what this connection holds, and when a request started arriving.
    fn account(&mut self) {
        self.admission.set_buffered(self.buf.held() + self.queued_bytes);
        if self.buf.is_empty() {
            self.request_started = None;
        } else if self.request_started.is_none() {
            self.request_started = Some(Instant::now());
        }
    }

    /// Waits until the table has room for `more` received bytes.
    async fn make_room(&mut self, more: usize) -> io::Result<()> {
        for _ in 0..ROOM_WAITS {
            match self.admission.make_room(more) {
                Room::Granted => return Ok(()),
                Room::Wait => tokio::time::sleep(ROOM_WAIT).await,
                Room::Refused => break,
            }
        }
        Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!(
                "the broker's memory for requests not yet handled is used up (kwire.max.buffered.request.bytes) \
                 and this connection holds the most ({} bytes)",
                self.buf.held() + self.queued_bytes
            ),
        ))
    }

    async fn run(&mut self, shutdown: &mut watch::Receiver<bool>) -> io::Result<()> {
        loop {
            self.decode_frames()?;
            if self.job.is_none() && self.start_next().await? {
                continue;
            }
            // Nothing can start: wait for the job, for bytes, or for shutdown.
            self.account();
            let can_read = self.queued_bytes < MAX_QUEUED_BYTES;
            if can_read {
                let needed = self.decoder.bytes_needed(self.buf.bytes()).map_err(invalid)?;
                let step = needed.clamp(MIN_READ, READ_STEP);
                let frame_len = self.buf.len().saturating_add(needed);
                let cost = self.buf.reserve_cost(step, frame_len);
                if cost > 0 {
                    self.make_room(cost).await?;
                }
                self.buf.reserve_for(step, frame_len);
            }
            let idle = self.buf.is_empty() && self.queue.is_empty() && self.job.is_none();
            // A request must arrive in full within the request timeout of its first byte,
            // however slowly its bytes trickle in.
            let timeout = match self.request_started {
                _ if idle => self.limits.idle_timeout,
                Some(started) => Some(self.limits.request_timeout.saturating_sub(started.elapsed())),
                None => Some(self.limits.request_timeout),
            };
            let busy = self.job.is_some();
            let event = {
                let job = async {
                    match &mut self.job {
                        Some(j) => Event::Job((&mut j.handle).await),
                        None => std::future::pending().await,
                    }
                };
                let read = async {
                    if !can_read {
                        return std::future::pending().await;
                    }
                    Event::Read(with_timeout(timeout, read_some(self.stream, self.buf.bytes())).await)
                };
                tokio::select! {
                    biased;
                    _ = crate::shutdown::stopped(shutdown), if !busy => Event::Stop,
                    _ = self.admission.shed() => Event::Shed,
                    e = job => e,
                    e = read => e,
                }
            };
            match event {
                Event::Stop => return Ok(()),
                Event::Shed => {
                    return Err(io::Error::new(io::ErrorKind::ConnectionAborted, "shed by the connection table"))
                }
                Event::Job(outcome) => self.finish_job(outcome.map_err(io::Error::other)?)?,
                Event::Read(n) => {
                    if n? == 0 {
                        if !self.buf.is_empty() {
                            debug!(bytes = self.buf.len(), "peer closed in the middle of a request");
                        }
                        // Handle what was received in full before the peer closed.
                        return self.drain().await;
                    }
                }
            }
        }
    }

    /// Splits every complete frame off the read buffer into the queue (up to the budget).
    fn decode_frames(&mut self) -> io::Result<()> {
        while self.queued_bytes < MAX_QUEUED_BYTES {
            // `decode` grows nothing: the buffer's room is made in `run`, recycling its blocks.
            let Some(frame) = self.decoder.decode(self.buf.bytes()).map_err(invalid)? else { break };
            let bytes = frame.len() + 4;
            let request = Request::decode(frame).map_err(invalid)?;
            self.queued_bytes += bytes;
            self.queue.push_back(Queued { request, bytes });
            self.admission.progress();
            // What follows in the buffer is the next request, started now.
            self.request_started = None;
        }
        self.account();
        Ok(())
    }

    /// Starts the next queued request (no job may be running): a run of PRODUCEs becomes a
    /// blocking job; anything else is answered here. Returns whether something was started.
    async fn start_next(&mut self) -> io::Result<bool> {
        let Some(front) = self.queue.front() else { return Ok(false) };
        if is_produce(&front.request) {
            let mut run = Vec::new();
            let mut bytes = 0;
            while let Some(q) = self.queue.front() {
                if !is_produce(&q.request) || (bytes > 0 && bytes + q.bytes > MAX_JOB_BYTES) {
                    break;
                }
                let Some(q) = self.queue.pop_front() else { break };
                bytes += q.bytes;
                run.push(q.request);
            }
            let state = self.state.clone();
            let handle = tokio::task::spawn_blocking(move || produce_all(&state, run));
            self.job = Some(ProduceJob { handle, bytes });
            return Ok(true);
        }
        let Some(q) = self.queue.pop_front() else { return Ok(false) };
        self.queued_bytes -= q.bytes;
        self.wait_for_flushes().await?;
        respond(self.stream, self.state, q.request, self.limits.request_timeout).await?;
        Ok(true)
    }

    fn finish_job(&mut self, outcome: ProduceOutcome) -> io::Result<()> {
        if let Some(job) = self.job.take() {
            self.queued_bytes -= job.bytes;
        }
        for point in outcome.flushes {
            ProduceOutcome::owe(&mut self.flushes, point);
        }
        match outcome.close {
            Some(reason) => Err(io::Error::new(io::ErrorKind::InvalidData, reason)),
            None => Ok(()),
        }
    }

    /// Waits until the fsyncs owed to earlier appends on this connection are done.
    async fn wait_for_flushes(&mut self) -> io::Result<()> {
        if self.flushes.is_empty() {
            return Ok(());
        }
        let points = std::mem::take(&mut self.flushes);
        let logs = self.state.logs().clone();
        let flushed = tokio::task::spawn_blocking(move || points.iter().try_for_each(|p| logs.flush_to(p)));
        flushed.await.map_err(io::Error::other)?.map_err(|e| {
            let reason = format!("flush failed: {e}");
            self.state.halt(reason.clone());
            io::Error::other(reason)
        })
    }

    /// After the peer closed its side: finish the job and the requests received in full.
    async fn drain(&mut self) -> io::Result<()> {
        loop {
            self.decode_frames()?;
            if let Some(job) = &mut self.job {
                let outcome = (&mut job.handle).await.map_err(io::Error::other)?;
                self.finish_job(outcome)?;
            }
            if !self.start_next().await? && self.job.is_none() {
                return Ok(());
            }
        }
    }
}

/// One read of whatever the socket has (at least one byte, or 0 at end of stream).
async fn read_some(stream: &TcpStream, buf: &mut BytesMut) -> io::Result<usize> {
    loop {
        stream.readable().await?;
        match stream.try_read_buf(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
}

async fn with_timeout<T>(
    timeout: Option<Duration>,
    fut: impl std::future::Future<Output = io::Result<T>>,
) -> io::Result<T> {
    match timeout {
        None => fut.await,
        Some(t) => match tokio::time::timeout(t, fut).await {
            Ok(r) => r,
            Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, format!("timed out after {t:?}"))),
        },
    }
}
