//! One client connection: read a whole request, handle it, write its response (if any), and
//! only then read the next one (0.7's strict per-connection order, spec §1.1). Anything wrong
//! with the bytes a client sends closes that connection and nothing else.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use kafka_wire_runtime::legacy::{FetchResponse, FrameDecoder, MultiFetchResponse, Request};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tracing::{debug, info};

use crate::handler::{handle, FetchAnswer, Outcome};
use crate::state::BrokerState;
use crate::transport::{send_slice, write_all, Cork};

/// Limits of one connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub max_request_size: usize,
    /// No bytes at all for this long between requests: close (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// A started request, or a response being written, that makes no progress for this long.
    pub request_timeout: Duration,
}

/// Largest single read; a frame's body may be up to `max_request_size` but is read in steps.
const READ_STEP: usize = 256 * 1024;

pub async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    state: Arc<BrokerState>,
    limits: ConnectionLimits,
    mut shutdown: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    match run(&stream, &state, limits, &mut shutdown).await {
        Ok(()) => debug!(%peer, "connection closed"),
        Err(e) => info!(%peer, "closing connection: {e}"),
    }
}

async fn run(
    stream: &TcpStream,
    state: &Arc<BrokerState>,
    limits: ConnectionLimits,
    shutdown: &mut watch::Receiver<bool>,
) -> io::Result<()> {
    let mut decoder = FrameDecoder::new(limits.max_request_size);
    let mut buf = BytesMut::with_capacity(8 * 1024);
    loop {
        let frame = decoder.decode(&mut buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if let Some(frame) = frame {
            let request = Request::decode(frame).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            respond(stream, state, request, limits.request_timeout).await?;
            continue;
        }
        // Need more bytes.
        let needed = decoder.bytes_needed(&buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        buf.reserve(needed.clamp(4 * 1024, READ_STEP));
        let timeout = if buf.is_empty() { limits.idle_timeout } else { Some(limits.request_timeout) };
        let read = async {
            loop {
                stream.readable().await?;
                match stream.try_read_buf(&mut buf) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
            }
        };
        let n = tokio::select! {
            biased;
            _ = crate::zk::stopped(shutdown) => return Ok(()),
            r = with_timeout(timeout, read) => r?,
        };
        if n == 0 {
            if !buf.is_empty() {
                debug!(bytes = buf.len(), "peer closed in the middle of a request");
            }
            return Ok(());
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
            Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, format!("no data for {t:?}"))),
        },
    }
}

async fn respond(stream: &TcpStream, state: &Arc<BrokerState>, request: Request, timeout: Duration) -> io::Result<()> {
    // Appends fsync under the partition lock, and a fetch of the same partition waits for that
    // lock: keep all of it off the async workers.
    let encode_err = |e| io::Error::new(io::ErrorKind::InvalidData, e);
    if let Request::ModifyTopic(m) = request {
        // Talks to ZooKeeper: handled on the async side, its file I/O on blocking threads.
        let mut out = BytesMut::new();
        crate::admin::handle(state, m).await.encode(&mut out).map_err(encode_err)?;
        return write_all(stream, &out, timeout).await;
    }
    let outcome = {
        let state = state.clone();
        tokio::task::spawn_blocking(move || handle(&state, request)).await.map_err(io::Error::other)?
    };
    match outcome {
        Outcome::NoResponse => Ok(()),
        Outcome::Close(reason) => Err(io::Error::new(io::ErrorKind::InvalidData, reason)),
        Outcome::Offsets(o) => {
            let mut out = BytesMut::new();
            o.encode(&mut out).map_err(encode_err)?;
            write_all(stream, &out, timeout).await
        }
        Outcome::Fetch(answer) => {
            let header = FetchResponse::header(answer.error, answer.len() as usize).map_err(encode_err)?;
            let _cork = Cork::new(stream);
            write_all(stream, &header, timeout).await?;
            send_data(stream, &answer, timeout).await
        }
        Outcome::MultiFetch(answers) => {
            let total = answers.iter().map(|a| a.len() as usize).sum();
            let header = MultiFetchResponse::header(answers.len(), total).map_err(encode_err)?;
            let _cork = Cork::new(stream);
            write_all(stream, &header, timeout).await?;
            for a in &answers {
                let h = FetchResponse::header(a.error, a.len() as usize).map_err(encode_err)?;
                write_all(stream, &h, timeout).await?;
                send_data(stream, a, timeout).await?;
            }
            Ok(())
        }
    }
}

async fn send_data(stream: &TcpStream, answer: &FetchAnswer, timeout: Duration) -> io::Result<()> {
    match &answer.data {
        Some(slice) if !slice.is_empty() => send_slice(stream, slice, timeout).await,
        _ => Ok(()),
    }
}
