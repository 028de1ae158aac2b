//! One TCP connection to a 0.7 broker. Requests are handled strictly in order by the broker
//! (spec §1.1), so a PRODUCE followed by a FETCH on the same connection sees its own data.
//! PRODUCE and MULTIPRODUCE get no answer; the others are answered with one frame each.

use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use kafka_wire_runtime::legacy::{
    FetchRequest, FetchResponse, LegacyError, MultiFetchResponse, OffsetsRequest, OffsetsResponse, ProduceRequest,
    Request,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::{ClientError, Result};

/// Default time a request may take before the connection is considered dead.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default cap on a response frame (0.7 responses are unbounded; this protects memory).
pub const DEFAULT_MAX_RESPONSE_SIZE: usize = 1 << 30;
/// How far ahead of received bytes the read buffer may grow.
const READ_STEP: usize = 1 << 20;

#[derive(Debug)]
pub struct BrokerConnection {
    addr: String,
    stream: TcpStream,
    write_buf: BytesMut,
    read_buf: BytesMut,
    timeout: Duration,
    max_response: usize,
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
            read_buf: BytesMut::new(),
            timeout,
            max_response: DEFAULT_MAX_RESPONSE_SIZE,
        })
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
        self.max_response = max;
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

    async fn send(&mut self, request: &Request) -> Result<()> {
        self.write_buf.clear();
        request.encode(&mut self.write_buf).map_err(ClientError::Encode)?;
        let write = self.stream.write_all(&self.write_buf);
        match tokio::time::timeout(self.timeout, write).await {
            Err(_) => Err(ClientError::Timeout { addr: self.addr.clone(), secs: self.timeout.as_secs() }),
            Ok(Err(e)) => Err(self.io_err(e)),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// Sends already-encoded request frames as they are (used by `kwire perf` to reuse one
    /// encoded batch).
    pub async fn send_raw(&mut self, frame: &[u8]) -> Result<()> {
        let write = self.stream.write_all(frame);
        match tokio::time::timeout(self.timeout, write).await {
            Err(_) => Err(ClientError::Timeout { addr: self.addr.clone(), secs: self.timeout.as_secs() }),
            Ok(Err(e)) => Err(self.io_err(e)),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// Reads one response frame and returns its contents (after the size field). The buffer
    /// grows with the bytes actually received, never straight to the announced size.
    async fn read_frame(&mut self) -> Result<Bytes> {
        let timeout = self.timeout;
        match tokio::time::timeout(timeout, self.read_frame_inner()).await {
            Err(_) => Err(ClientError::Timeout { addr: self.addr.clone(), secs: timeout.as_secs() }),
            Ok(r) => r,
        }
    }

    async fn read_frame_inner(&mut self) -> Result<Bytes> {
        self.fill(4).await?;
        let size = i32::from_be_bytes([self.read_buf[0], self.read_buf[1], self.read_buf[2], self.read_buf[3]]);
        let size = match usize::try_from(size) {
            Ok(n) if (2..=self.max_response).contains(&n) => n,
            _ => {
                return Err(ClientError::Protocol {
                    addr: self.addr.clone(),
                    source: LegacyError::FrameSize { size, max: self.max_response },
                })
            }
        };
        self.fill(4 + size).await?;
        self.read_buf.advance(4);
        Ok(self.read_buf.split_to(size).freeze())
    }

    async fn fill(&mut self, want: usize) -> Result<()> {
        while self.read_buf.len() < want {
            self.read_buf.reserve((want - self.read_buf.len()).min(READ_STEP));
            match self.stream.read_buf(&mut self.read_buf).await {
                Ok(0) => return Err(ClientError::Closed { addr: self.addr.clone() }),
                Ok(_) => {}
                Err(e) => return Err(self.io_err(e)),
            }
        }
        Ok(())
    }

    fn protocol(&self, source: LegacyError) -> ClientError {
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
        self.send(&Request::Fetch(request)).await?;
        let frame = self.read_frame().await?;
        FetchResponse::decode(frame).map_err(|e| self.protocol(e))
    }

    /// MULTIFETCH: one entry per request entry, in request order, each with its own error.
    pub async fn multifetch(&mut self, requests: Vec<FetchRequest>) -> Result<Vec<FetchResponse>> {
        let count = requests.len();
        self.send(&Request::MultiFetch(requests)).await?;
        let frame = self.read_frame().await?;
        let response = MultiFetchResponse::decode(frame).map_err(|e| self.protocol(e))?;
        if response.entries.len() != count {
            return Err(self.protocol(LegacyError::CountTooLarge {
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
            self.protocol(LegacyError::NegativeLength { what: "offset in OFFSETS response", offset: 10, value: first })
        })
    }
}
