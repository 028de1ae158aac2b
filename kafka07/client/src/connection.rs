//! One TCP connection to a 0.7 broker. Requests are handled strictly in order by the broker
//! (spec §1.1), so a PRODUCE followed by a FETCH on the same connection sees its own data.
//! PRODUCE and MULTIPRODUCE get no answer; the others are answered with one frame each.

use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kwire07_protocol::{
    ErrorCode, FetchRequest, FetchResponse, FrameDecoder, MultiFetchResponse, OffsetsRequest, OffsetsResponse,
    ProduceRequest, ProtocolError, RecvBuffer, Request,
};
use kwire_runtime::reader::SliceReader;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::{ClientError, Result};

/// Default time a request may take before the connection is considered dead.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default cap on a response frame (0.7 responses are unbounded; this protects memory).
pub const DEFAULT_MAX_RESPONSE_SIZE: usize = 1 << 30;
/// How far ahead of received bytes the read buffer may grow.
const READ_STEP: usize = 1 << 20;
/// Bytes a FETCH answer or MULTIFETCH entry may hold besides its message set (error code and
/// size fields, with room to spare).
const FETCH_ANSWER_OVERHEAD: usize = 64;

/// The smallest socket receive buffer a fetching connection asks for (see [`ReceiveBuffer::Auto`]).
pub const MIN_FETCH_RECEIVE_BUFFER: usize = 4 << 20;
/// The largest one [`ReceiveBuffer::Auto`] asks for, whatever the fetch sizes.
const MAX_FETCH_RECEIVE_BUFFER: usize = 64 << 20;

/// The socket receive buffer (`SO_RCVBUF`) of a connection; 0.7's consumers set one too
/// (`socket.buffersize`). The kernel caps what is asked at `net.core.rmem_max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReceiveBuffer {
    /// Set once fetches are sent: room for two answers (the one being read and the one to the
    /// fetch sent ahead), at least [`MIN_FETCH_RECEIVE_BUFFER`], growing with the fetch sizes.
    /// Linux's automatic sizing keeps the window of a fast loopback or LAN reader small, so a
    /// broker stalls on it whenever the consumer pauses to check CRCs and decode; on loopback a
    /// fixed buffer moved 1.1–1.9× the bytes per second (`scripts/perf-07.sh`).
    #[default]
    Auto,
    /// Leave the kernel's automatic sizing (better for long, fast links).
    System,
    /// This many bytes, set at once.
    Bytes(usize),
}

impl ReceiveBuffer {
    /// The `SO_RCVBUF` this policy asks for on a connection fetching `fetch_size` bytes from
    /// one partition at a time (`None`: the kernel's automatic sizing).
    pub fn bytes_for_fetch_size(&self, fetch_size: usize) -> Option<usize> {
        self.bytes_for_answers(fetch_size.saturating_add(FETCH_ANSWER_OVERHEAD))
    }

    /// The same for answers of up to `answer_bound` bytes, frame fields included.
    fn bytes_for_answers(&self, answer_bound: usize) -> Option<usize> {
        match *self {
            ReceiveBuffer::Auto => Some(auto_receive_buffer(answer_bound)),
            ReceiveBuffer::System => None,
            ReceiveBuffer::Bytes(n) => Some(n),
        }
    }
}

/// [`ReceiveBuffer::Auto`]'s size for answers of up to `answer_bound` bytes.
fn auto_receive_buffer(answer_bound: usize) -> usize {
    answer_bound.saturating_mul(2).clamp(MIN_FETCH_RECEIVE_BUFFER, MAX_FETCH_RECEIVE_BUFFER)
}

/// The start of a FETCH answer read on its own (see `BrokerConnection::receive_fetch_head`):
/// the broker's error code and how many message-set bytes follow on the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchHead {
    pub error: ErrorCode,
    pub len: usize,
}

#[derive(Debug)]
pub struct BrokerConnection {
    addr: String,
    stream: TcpStream,
    write_buf: BytesMut,
    /// Received bytes; answers are split off it without copying (see [`RecvBuffer`]).
    read_buf: RecvBuffer,
    timeout: Duration,
    /// Splits answers off `read_buf`, up to the largest accepted.
    answers: FrameDecoder,
    /// The largest answer the fetches sent on this connection allow. A frame within it gets
    /// room for all its bytes as soon as its size is known (the size comes from our own
    /// request, not from the peer's claim); a larger claim grows as its bytes arrive.
    fetch_room: usize,
    receive_buffer: ReceiveBuffer,
    /// What `SO_RCVBUF` was last set to by [`ReceiveBuffer::Auto`] (0: not yet).
    receive_buffer_set: usize,
}

impl BrokerConnection {
    /// Connects to `addr` (`host:port`).
    pub async fn connect(addr: &str) -> Result<BrokerConnection> {
        Self::connect_with(addr, DEFAULT_REQUEST_TIMEOUT).await
    }

    pub async fn connect_with(addr: &str, timeout: Duration) -> Result<BrokerConnection> {
        let connect = TcpStream::connect(addr);
        let stream = match tokio::time::timeout(timeout, connect).await {
            Err(_) => return Err(ClientError::Timeout { addr: addr.to_owned(), secs: timeout.as_secs() }),
            Ok(Err(source)) => return Err(ClientError::Connect { addr: addr.to_owned(), source }),
            Ok(Ok(s)) => s,
        };
        // Small requests (FETCH, OFFSETS) must not wait for Nagle.
        let _ = stream.set_nodelay(true);
        Ok(BrokerConnection {
            addr: addr.to_owned(),
            stream,
            write_buf: BytesMut::new(),
            read_buf: RecvBuffer::default(),
            timeout,
            answers: FrameDecoder::answers(DEFAULT_MAX_RESPONSE_SIZE),
            fetch_room: 0,
            receive_buffer: ReceiveBuffer::Auto,
            receive_buffer_set: 0,
        })
    }

    /// Chooses the socket receive buffer. `System` only takes effect before the first fetch
    /// (a buffer once set cannot be handed back to the kernel's automatic sizing).
    pub fn set_receive_buffer(&mut self, policy: ReceiveBuffer) -> Result<()> {
        self.receive_buffer = policy;
        if let ReceiveBuffer::Bytes(n) = policy {
            self.apply_receive_buffer(n)?;
        }
        Ok(())
    }

    /// The socket's receive buffer as the kernel reports it (Linux reports twice what was
    /// asked, its bookkeeping included).
    pub fn receive_buffer_size(&self) -> Result<usize> {
        socket2::SockRef::from(&self.stream).recv_buffer_size().map_err(|e| self.io_err(e))
    }

    fn apply_receive_buffer(&mut self, bytes: usize) -> Result<()> {
        socket2::SockRef::from(&self.stream).set_recv_buffer_size(bytes).map_err(|e| self.io_err(e))?;
        self.receive_buffer_set = bytes;
        Ok(())
    }

    /// Whether the broker has closed the connection (or sent something unasked). Checked
    /// before writing a PRODUCE, which would otherwise vanish into a dead socket. A real
    /// non-blocking `recv(MSG_PEEK)`, not the reactor's possibly stale readiness.
    pub fn peer_closed(&self) -> bool {
        if !self.read_buf.is_empty() {
            return true;
        }
        let mut probe = [std::mem::MaybeUninit::<u8>::uninit(); 1];
        match socket2::SockRef::from(&self.stream).peek(&mut probe) {
            Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
            Ok(_) => true,
        }
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Largest response frame accepted before the connection is treated as broken.
    pub fn set_max_response_size(&mut self, max: usize) {
        self.answers = FrameDecoder::answers(max);
    }

    fn io_err(&self, source: std::io::Error) -> ClientError {
        if matches!(
            source.kind(),
            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
        ) {
            return ClientError::Closed { addr: self.addr.clone() };
        }
        ClientError::Io { addr: self.addr.clone(), source }
    }

    fn timed_out(&self) -> ClientError {
        ClientError::Timeout { addr: self.addr.clone(), secs: self.timeout.as_secs() }
    }

    /// The outcome of one I/O step run under the request timeout, as a client error.
    fn timed<T>(&self, r: std::result::Result<std::io::Result<T>, tokio::time::error::Elapsed>) -> Result<T> {
        match r {
            Err(_) => Err(self.timed_out()),
            Ok(r) => r.map_err(|e| self.io_err(e)),
        }
    }

    async fn send(&mut self, request: &Request) -> Result<()> {
        let written = if matches!(request, Request::Produce(_) | Request::MultiProduce(_)) {
            // Message sets go out from their own buffers, without a copy into `write_buf`.
            let chunks = request.encode_chunks().map_err(ClientError::Encode)?;
            tokio::time::timeout(self.timeout, write_all_chunks(&mut self.stream, &chunks)).await
        } else {
            self.write_buf.clear();
            request.encode(&mut self.write_buf).map_err(ClientError::Encode)?;
            tokio::time::timeout(self.timeout, self.stream.write_all(&self.write_buf)).await
        };
        self.timed(written)
    }

    /// Sends already-encoded request frames as they are (used by `kwire07 perf` to reuse one
    /// encoded batch).
    pub async fn send_raw(&mut self, frame: &[u8]) -> Result<()> {
        let written = tokio::time::timeout(self.timeout, self.stream.write_all(frame)).await;
        self.timed(written)
    }

    /// Reads one response frame and returns its contents (after the size field). The buffer
    /// grows with the bytes actually received, never straight to the announced size.
    async fn read_frame(&mut self) -> Result<Bytes> {
        tokio::time::timeout(self.timeout, self.read_frame_inner()).await.unwrap_or_else(|_| Err(self.timed_out()))
    }

    async fn read_frame_inner(&mut self) -> Result<Bytes> {
        loop {
            if let Some(frame) = self.answers.decode(self.read_buf.bytes()).map_err(|e| self.protocol(e))? {
                return Ok(frame);
            }
            let missing = self.answers.bytes_needed(self.read_buf.bytes()).map_err(|e| self.protocol(e))?;
            self.fill(self.read_buf.len() + missing).await?;
        }
    }

    /// Reads a frame's size field (left in the buffer) and checks it: at least the 2 bytes of
    /// an error code, at most the largest response accepted.
    async fn read_frame_size(&mut self) -> Result<usize> {
        loop {
            if let Some(size) = self.answers.frame_size(self.read_buf.bytes()).map_err(|e| self.protocol(e))? {
                return Ok(size);
            }
            self.fill(4).await?;
        }
    }

    /// Reads only the head of the answer to the oldest FETCH sent (size and error code). Its
    /// `len` message-set bytes are then read with [`BrokerConnection::receive_more`] and taken
    /// with [`BrokerConnection::take_received`], so that a consumer can check each run of
    /// messages while it is still in the CPU cache instead of after the whole answer arrived.
    /// All `len` bytes must be read before the next answer (or [`BrokerConnection::discard`]ed).
    pub(crate) async fn receive_fetch_head(&mut self) -> Result<FetchHead> {
        let timeout = self.timeout;
        let head = async {
            let size = self.read_frame_size().await?;
            self.fill(6).await?;
            let buf = self.read_buf.bytes();
            let code = SliceReader::new(buf, 4).get_i16().unwrap_or(-1);
            buf.advance(6);
            Ok::<_, ClientError>((code, size - 2))
        };
        let (code, len) = tokio::time::timeout(timeout, head).await.unwrap_or_else(|_| Err(self.timed_out()))?;
        // Room for the whole message set at once when our fetch allows that much.
        if len <= self.fetch_room {
            self.read_buf.reserve(len);
        }
        match ErrorCode::from_code(code) {
            Ok(error) => Ok(FetchHead { error, len }),
            Err(e) => {
                self.discard(len).await?;
                Err(self.protocol(e))
            }
        }
    }

    /// One read of at most `max` (> 0) further bytes of the answer being received; returns how
    /// many arrived. They join [`BrokerConnection::received`].
    pub(crate) async fn receive_more(&mut self, max: usize) -> Result<usize> {
        self.read_buf.reserve(max.min(READ_STEP));
        let mut room = self.read_buf.bytes().limit(max);
        let read = tokio::time::timeout(self.timeout, self.stream.read_buf(&mut room)).await;
        match self.timed(read)? {
            0 => Err(ClientError::Closed { addr: self.addr.clone() }),
            n => Ok(n),
        }
    }

    /// The bytes received by [`BrokerConnection::receive_more`] and not yet taken.
    pub(crate) fn received(&mut self) -> &[u8] {
        self.read_buf.bytes()
    }

    /// Takes the first `n` received bytes, without copying them.
    pub(crate) fn take_received(&mut self, n: usize) -> Bytes {
        self.read_buf.bytes().split_to(n).freeze()
    }

    /// Reads and drops `n` bytes: the rest of an answer nobody wants, so that the connection
    /// stays in step with the broker's frames.
    pub(crate) async fn discard(&mut self, mut n: usize) -> Result<()> {
        let buffered = self.read_buf.len().min(n);
        self.read_buf.bytes().advance(buffered);
        n -= buffered;
        while n > 0 {
            let got = self.receive_more(n.min(READ_STEP)).await?;
            self.read_buf.bytes().advance(got);
            n -= got;
        }
        Ok(())
    }

    /// Reads until `want` bytes are buffered, and never more: reading on into the next frame
    /// would leave its start at the end of a block, to be moved (copied) into a larger one once
    /// its size is known. Stopping at the frame's end, the next frame starts in room of its own.
    async fn fill(&mut self, want: usize) -> Result<()> {
        while self.read_buf.len() < want {
            let missing = want - self.read_buf.len();
            // Room for the whole frame at once when a fetch of ours allows that much, so that it
            // arrives in one block; anything larger grows with the bytes that actually arrive.
            self.read_buf.reserve(if missing <= self.fetch_room { missing } else { missing.min(READ_STEP) });
            let mut room = self.read_buf.bytes().limit(missing);
            match self.stream.read_buf(&mut room).await {
                Ok(0) => return Err(ClientError::Closed { addr: self.addr.clone() }),
                Ok(_) => {}
                Err(e) => return Err(self.io_err(e)),
            }
        }
        Ok(())
    }

    /// Called before a FETCH or MULTIFETCH goes out with the largest answer it allows.
    fn allow_answer(&mut self, bound: usize) -> Result<()> {
        self.fetch_room = self.fetch_room.max(bound.min(self.answers.max_size()));
        if self.receive_buffer == ReceiveBuffer::Auto {
            let wanted = auto_receive_buffer(bound);
            if wanted > self.receive_buffer_set {
                self.apply_receive_buffer(wanted)?;
            }
        }
        Ok(())
    }

    fn protocol(&self, source: ProtocolError) -> ClientError {
        ClientError::Protocol { addr: self.addr.clone(), source }
    }

    /// PRODUCE: no answer comes back, even on failure (spec §1.4).
    pub async fn produce(&mut self, topic: &str, partition: i32, messages: Bytes) -> Result<()> {
        self.send(&Request::Produce(ProduceRequest { topic: topic.to_owned(), partition, messages })).await
    }

    /// MULTIPRODUCE: entries are appended in order, no answer (spec §1.5).
    pub async fn multiproduce(&mut self, entries: Vec<ProduceRequest>) -> Result<()> {
        self.send(&Request::MultiProduce(entries)).await
    }

    /// FETCH: raw message-set bytes from `offset`; the last message may be cut off.
    pub async fn fetch(&mut self, request: FetchRequest) -> Result<FetchResponse> {
        self.send_fetch(request).await?;
        self.receive_fetch().await
    }

    /// Sends a FETCH without waiting for its answer (see [`BrokerConnection::receive_fetch`]).
    /// The broker answers requests in order, so a caller may send the next fetch before it
    /// has decoded the previous answer.
    pub async fn send_fetch(&mut self, request: FetchRequest) -> Result<()> {
        self.allow_answer(fetch_answer_bound(&request))?;
        self.send(&Request::Fetch(request)).await
    }

    /// Reads the answer to the oldest FETCH sent and not yet answered.
    pub async fn receive_fetch(&mut self) -> Result<FetchResponse> {
        let frame = self.read_frame().await?;
        FetchResponse::decode(frame).map_err(|e| self.protocol(e))
    }

    /// MULTIFETCH: one entry per request entry, in request order, each with its own error.
    pub async fn multifetch(&mut self, requests: Vec<FetchRequest>) -> Result<Vec<FetchResponse>> {
        let count = requests.len();
        self.send_multifetch(requests).await?;
        self.receive_multifetch(count).await
    }

    /// Sends a MULTIFETCH without waiting for its answer.
    pub async fn send_multifetch(&mut self, requests: Vec<FetchRequest>) -> Result<()> {
        let bound = requests.iter().fold(FETCH_ANSWER_OVERHEAD, |sum, r| sum.saturating_add(fetch_answer_bound(r)));
        self.allow_answer(bound)?;
        self.send(&Request::MultiFetch(requests)).await
    }

    /// Reads the answer to the oldest MULTIFETCH sent, which asked for `count` entries.
    pub async fn receive_multifetch(&mut self, count: usize) -> Result<Vec<FetchResponse>> {
        let frame = self.read_frame().await?;
        let response = MultiFetchResponse::decode(frame).map_err(|e| self.protocol(e))?;
        if response.entries.len() != count {
            return Err(self.protocol(ProtocolError::CountTooLarge {
                what: "multifetch response entries (differs from the request)",
                offset: 6,
                value: response.entries.len(),
                max: count,
            }));
        }
        Ok(response.entries)
    }

    /// OFFSETS: up to `max` segment start offsets before `time` (ms since the epoch, or
    /// −1 latest / −2 earliest), in descending order.
    pub async fn offsets(&mut self, topic: &str, partition: i32, time: i64, max: i32) -> Result<Vec<i64>> {
        let request = OffsetsRequest { topic: topic.to_owned(), partition, time, max_offsets: max };
        self.send(&Request::Offsets(request)).await?;
        let frame = self.read_frame().await?;
        let response = OffsetsResponse::decode(frame).map_err(|e| self.protocol(e))?;
        if !response.error.is_ok() {
            return Err(ClientError::Broker {
                addr: self.addr.clone(),
                topic: topic.to_owned(),
                partition,
                code: response.error,
            });
        }
        Ok(response.offsets)
    }

    /// OFFSETS −1 or −2 with max 1: the single log end or log start offset.
    pub async fn offset_at(&mut self, topic: &str, partition: i32, time: i64) -> Result<u64> {
        let offsets = self.offsets(topic, partition, time, 1).await?;
        let first = offsets.first().copied().unwrap_or(0);
        u64::try_from(first).map_err(|_| {
            self.protocol(ProtocolError::NegativeLength {
                what: "offset in OFFSETS response",
                offset: 10,
                value: first,
            })
        })
    }
}

/// The most bytes an answer to `request` may hold: its message set and the fields around it.
fn fetch_answer_bound(request: &FetchRequest) -> usize {
    usize::try_from(request.max_size).unwrap_or(0).saturating_add(FETCH_ANSWER_OVERHEAD)
}

/// Most slices handed to one vectored write (well under any platform's IOV_MAX).
const MAX_IOV: usize = 64;

/// Writes every chunk in order with vectored writes, resuming after partial writes.
async fn write_all_chunks(stream: &mut TcpStream, chunks: &[Bytes]) -> std::io::Result<()> {
    let (mut index, mut offset) = (0, 0);
    while index < chunks.len() {
        let slices: Vec<std::io::IoSlice<'_>> = chunks[index..]
            .iter()
            .take(MAX_IOV)
            .enumerate()
            .map(|(i, c)| std::io::IoSlice::new(if i == 0 { &c[offset..] } else { &c[..] }))
            .collect();
        let mut n = stream.write_vectored(&slices).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        while n > 0 && index < chunks.len() {
            let left = chunks[index].len() - offset;
            if n < left {
                offset += n;
                n = 0;
            } else {
                n -= left;
                index += 1;
                offset = 0;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    fn fetch_frame(body: &[u8]) -> Vec<u8> {
        let size = i32::try_from(body.len() + 2).unwrap();
        let mut frame = size.to_be_bytes().to_vec();
        frame.extend_from_slice(&0i16.to_be_bytes());
        frame.extend_from_slice(body);
        frame
    }

    /// Answers that arrive back to back, in pieces that cut across frame boundaries, come
    /// out whole and in order: a read stops at its frame's end, and a frame too large for the
    /// fetch asked for still arrives (grown as its bytes come).
    #[tokio::test]
    async fn pipelined_answers_split_at_frame_boundaries() {
        let bodies: Vec<Vec<u8>> = [10usize, 3 << 20, 0, 70_000, 5 << 20]
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|j| (j * 7 + i) as u8).collect())
            .collect();
        let stream: Vec<u8> = bodies.iter().flat_map(|b| fetch_frame(b)).collect();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            // Pieces of odd sizes, so frames and reads never line up.
            for piece in stream.chunks(123_457) {
                s.write_all(piece).await.unwrap();
                tokio::task::yield_now().await;
            }
            s
        });
        let mut conn = BrokerConnection::connect(&addr).await.unwrap();
        // Asks for 4 MiB: the 5 MiB answer is more than that and is received in steps.
        for _ in &bodies {
            let request = FetchRequest { topic: "t".into(), partition: 0, offset: 0, max_size: 4 << 20 };
            conn.send_fetch(request).await.unwrap();
        }
        for body in &bodies {
            let answer = conn.receive_fetch().await.unwrap();
            assert_eq!(answer.error, ErrorCode::NoError);
            assert_eq!(answer.messages.len(), body.len());
            assert!(answer.messages[..] == body[..]);
        }
        // Nothing was read beyond the last frame.
        assert!(conn.read_buf.is_empty());
        drop(server.await.unwrap());
    }

    /// What Linux reports for a buffer of `asked` bytes: capped at `net.core.rmem_max`, doubled.
    #[cfg(target_os = "linux")]
    fn kernel_reports(asked: usize) -> usize {
        let max: usize = std::fs::read_to_string("/proc/sys/net/core/rmem_max").unwrap().trim().parse().unwrap();
        2 * asked.min(max)
    }

    /// `Auto` sets the receive buffer at the first fetch (two answers, at least the minimum) and
    /// grows it with larger fetches; `System` never touches it; `Bytes` sets it at once.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn receive_buffer_policies() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accept = tokio::spawn(async move {
            let mut peers = Vec::new();
            for _ in 0..3 {
                peers.push(listener.accept().await.unwrap().0);
            }
            peers
        });
        let fetch = |max_size: i32| FetchRequest { topic: "t".into(), partition: 0, offset: 0, max_size };

        let mut auto = BrokerConnection::connect(&addr).await.unwrap();
        let initial = auto.receive_buffer_size().unwrap();
        auto.produce("t", 0, Bytes::new()).await.unwrap();
        assert_eq!(auto.receive_buffer_size().unwrap(), initial, "a producer keeps the kernel's sizing");
        auto.send_fetch(fetch(1 << 20)).await.unwrap();
        assert_eq!(auto.receive_buffer_size().unwrap(), kernel_reports(MIN_FETCH_RECEIVE_BUFFER));
        let big = 6 << 20;
        auto.send_fetch(fetch(big)).await.unwrap();
        let wanted = 2 * (big as usize + FETCH_ANSWER_OVERHEAD);
        assert_eq!(auto.receive_buffer_size().unwrap(), kernel_reports(wanted.max(MIN_FETCH_RECEIVE_BUFFER)));

        let mut system = BrokerConnection::connect(&addr).await.unwrap();
        let initial = system.receive_buffer_size().unwrap();
        system.set_receive_buffer(ReceiveBuffer::System).unwrap();
        system.send_fetch(fetch(1 << 20)).await.unwrap();
        assert_eq!(system.receive_buffer_size().unwrap(), initial);

        let mut fixed = BrokerConnection::connect(&addr).await.unwrap();
        fixed.set_receive_buffer(ReceiveBuffer::Bytes(256 << 10)).unwrap();
        assert_eq!(fixed.receive_buffer_size().unwrap(), kernel_reports(256 << 10));
        fixed.send_fetch(fetch(8 << 20)).await.unwrap();
        assert_eq!(fixed.receive_buffer_size().unwrap(), kernel_reports(256 << 10), "a fixed size stays");
        drop(accept.await.unwrap());
    }
}
