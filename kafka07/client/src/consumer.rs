//! The simple consumer: a fetch loop over one or more partitions of one broker, from offsets
//! the caller chooses. One partition goes out as FETCH, several as one MULTIFETCH.

use std::sync::Arc;

use bytes::Bytes;
use kwire07_protocol::{
    complete_bytes, valid_bytes, ErrorCode, FetchRequest, FetchResponse, ProtocolError, OFFSETS_EARLIEST,
    OFFSETS_LATEST,
};

use crate::connection::BrokerConnection;
use crate::error::{ClientError, Result};
use crate::fetch::{decode_each, FetchSize, SetEnd, DEFAULT_FETCH_SIZE, DEFAULT_MAX_FETCH_SIZE};

/// How much of a FETCH answer is read at a time before the complete messages in it are checked
/// and decoded: well inside a core's L2 cache, so the CRC pass reads what the copy just wrote.
const DECODE_PIECE: usize = 256 * 1024;
/// How much of a FETCH answer is left to check and decode when its last byte arrives and the
/// fetch ahead goes out.
const DECODE_HOLD: usize = 1024 * 1024;

/// A message with where it came from and where to resume after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumedMessage {
    pub topic: Arc<str>,
    pub broker_id: i32,
    pub partition: i32,
    /// Log offset of the outer entry holding the message.
    pub offset: u64,
    /// Offset to resume from after this message (0.7 rules, see [`crate::fetch::Fetched`]).
    pub next_offset: u64,
    pub payload: Bytes,
}

/// Where a consumer starts reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartOffset {
    /// OFFSETS −2: the first segment's start.
    Earliest,
    /// OFFSETS −1: the end of the log, i.e. only new messages.
    Latest,
    /// An exact byte offset (must be a message boundary).
    At(u64),
}

impl StartOffset {
    /// Resolves to a byte offset by asking the broker if needed.
    pub async fn resolve(self, conn: &mut BrokerConnection, topic: &str, partition: i32) -> Result<u64> {
        match self {
            StartOffset::Earliest => conn.offset_at(topic, partition, OFFSETS_EARLIEST).await,
            StartOffset::Latest => conn.offset_at(topic, partition, OFFSETS_LATEST).await,
            StartOffset::At(o) => Ok(o),
        }
    }
}

/// Fetch position and size of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionCursor {
    pub topic: Arc<str>,
    pub broker_id: i32,
    pub partition: i32,
    /// Next offset to fetch.
    pub offset: u64,
    pub size: FetchSize,
}

impl PartitionCursor {
    pub fn new(topic: &str, broker_id: i32, partition: i32, offset: u64) -> PartitionCursor {
        PartitionCursor {
            topic: Arc::from(topic),
            broker_id,
            partition,
            offset,
            size: FetchSize::new(DEFAULT_FETCH_SIZE, DEFAULT_MAX_FETCH_SIZE),
        }
    }

    fn request(&self) -> FetchRequest {
        FetchRequest {
            topic: self.topic.to_string(),
            partition: self.partition,
            offset: i64::try_from(self.offset).unwrap_or(i64::MAX),
            max_size: self.size.as_i32(),
        }
    }
}

/// What one partition's part of a fetch round gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionOutcome {
    /// Messages (possibly none); the cursor has moved past them.
    Messages(Vec<ConsumedMessage>),
    /// The first message was larger than the fetch size; the size has grown, fetch again.
    Grew,
    /// Error 1: the offset is before the log start or after its end.
    OutOfRange,
    /// Any other error code from the broker.
    Failed(ErrorCode),
}

/// One fetch round for `cursors` (all on the broker behind `conn`): FETCH for one, MULTIFETCH
/// for several. Each cursor advances past the complete messages it got.
pub async fn fetch_round(
    conn: &mut BrokerConnection,
    cursors: &mut [PartitionCursor],
) -> Result<Vec<PartitionOutcome>> {
    let requests: Vec<FetchRequest> = cursors.iter().map(PartitionCursor::request).collect();
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let count = requests.len();
    send_requests(conn, requests).await?;
    let responses = receive_responses(conn, count).await?;
    apply_all(cursors, responses)
}

/// FETCH for one request, MULTIFETCH for several (never called with none).
async fn send_requests(conn: &mut BrokerConnection, mut requests: Vec<FetchRequest>) -> Result<()> {
    match (requests.len(), requests.pop()) {
        (1, Some(r)) => conn.send_fetch(r).await,
        (_, Some(last)) => {
            requests.push(last);
            conn.send_multifetch(requests).await
        }
        (_, None) => Ok(()),
    }
}

async fn receive_responses(conn: &mut BrokerConnection, count: usize) -> Result<Vec<FetchResponse>> {
    match count {
        1 => Ok(vec![conn.receive_fetch().await?]),
        n => conn.receive_multifetch(n).await,
    }
}

fn apply_all(cursors: &mut [PartitionCursor], responses: Vec<FetchResponse>) -> Result<Vec<PartitionOutcome>> {
    let mut outcomes = Vec::with_capacity(cursors.len());
    for (cursor, response) in cursors.iter_mut().zip(responses) {
        let mut messages = Vec::new();
        outcomes.push(match apply_into(cursor, response, &mut messages)? {
            Applied::Messages => PartitionOutcome::Messages(messages),
            Applied::Grew => PartitionOutcome::Grew,
            Applied::OutOfRange => PartitionOutcome::OutOfRange,
            Applied::Failed(code) => PartitionOutcome::Failed(code),
        });
    }
    Ok(outcomes)
}

/// [`PartitionOutcome`] with the messages appended to a caller's vector instead.
enum Applied {
    Messages,
    Grew,
    OutOfRange,
    Failed(ErrorCode),
}

/// Decodes one partition's answer onto the end of `out` and moves its cursor.
fn apply_into(
    cursor: &mut PartitionCursor,
    response: FetchResponse,
    out: &mut Vec<ConsumedMessage>,
) -> Result<Applied> {
    match response.error {
        ErrorCode::NoError => {}
        ErrorCode::OffsetOutOfRange => return Ok(Applied::OutOfRange),
        code => return Ok(Applied::Failed(code)),
    }
    let end = decode_onto(cursor, response.messages, cursor.offset, out)?;
    settle(cursor, end)
}

/// Decodes `set`, taken from log offset `base` of `cursor`'s partition, onto the end of `out`.
/// On an error nothing is left appended.
fn decode_onto(cursor: &PartitionCursor, set: Bytes, base: u64, out: &mut Vec<ConsumedMessage>) -> Result<SetEnd> {
    let start = out.len();
    let decoded = decode_each(set, base, |m| {
        out.push(ConsumedMessage {
            topic: cursor.topic.clone(),
            broker_id: cursor.broker_id,
            partition: cursor.partition,
            offset: m.offset,
            next_offset: m.next_offset,
            payload: m.payload,
        })
    });
    decoded.map_err(|source| {
        out.truncate(start);
        ClientError::Message { topic: cursor.topic.to_string(), partition: cursor.partition, source }
    })
}

/// Moves `cursor` past a decoded answer, or grows its fetch size when the answer's first
/// message did not fit.
fn settle(cursor: &mut PartitionCursor, end: SetEnd) -> Result<Applied> {
    match end {
        SetEnd::TooSmall { needed } => {
            if !cursor.size.grow_for(needed) {
                return Err(ClientError::MessageTooLarge {
                    topic: cursor.topic.to_string(),
                    partition: cursor.partition,
                    offset: cursor.offset,
                    size: needed,
                    max: cursor.size.max(),
                });
            }
            Ok(Applied::Grew)
        }
        SetEnd::Next { next_offset } => {
            cursor.offset = next_offset;
            Ok(Applied::Messages)
        }
    }
}

/// The requests that will follow `responses` if they decode as they frame: every cursor moved
/// past the complete entries it got. `None` when any entry failed, or was empty, or its first
/// message did not fit (the caller then decides what comes next). Only the framing is walked,
/// which is cheap next to checking CRCs and decompressing.
fn next_requests(cursors: &[PartitionCursor], responses: &[FetchResponse]) -> Option<Vec<FetchRequest>> {
    cursors
        .iter()
        .zip(responses)
        .map(|(cursor, response)| {
            if response.error != ErrorCode::NoError {
                return None;
            }
            let advance = valid_bytes(&response.messages).ok().filter(|&n| n > 0)?;
            let mut next = cursor.clone();
            next.offset = cursor.offset.checked_add(advance as u64)?;
            Some(next.request())
        })
        .collect()
}

/// Reads one or more partitions of one broker from caller-chosen offsets.
///
/// Like 0.7's Scala consumer (whose fetcher thread queues chunks ahead of the iterator), it
/// fetches ahead: as soon as an answer has arrived and its framing says where the next fetch
/// starts, that fetch is sent, and only then are the answer's messages checked and decoded.
/// The broker works on the next answer meanwhile. A fetch sent ahead that no longer matches
/// the cursors (an error, a grown fetch size, cursors changed by the caller) is read and
/// dropped.
#[derive(Debug)]
pub struct SimpleConsumer {
    conn: BrokerConnection,
    cursors: Vec<PartitionCursor>,
    /// The fetch sent ahead and not yet read, if any.
    ahead: Option<Vec<FetchRequest>>,
    fetch_ahead: bool,
}

impl SimpleConsumer {
    /// A consumer of `topic`-`partition` on the broker at `addr`, starting at `start`.
    pub async fn connect(addr: &str, topic: &str, partition: i32, start: StartOffset) -> Result<SimpleConsumer> {
        let mut conn = BrokerConnection::connect(addr).await?;
        let offset = start.resolve(&mut conn, topic, partition).await?;
        Ok(Self::with_cursors(conn, vec![PartitionCursor::new(topic, -1, partition, offset)]))
    }

    /// A consumer of several partitions on one connection (fetched with MULTIFETCH).
    pub fn with_cursors(conn: BrokerConnection, cursors: Vec<PartitionCursor>) -> SimpleConsumer {
        SimpleConsumer { conn, cursors, ahead: None, fetch_ahead: true }
    }

    /// Turns fetching ahead on (the default) or off. Off, every fetch is one round trip and
    /// nothing is requested beyond what [`SimpleConsumer::fetch`] returns.
    pub fn set_fetch_ahead(&mut self, on: bool) {
        self.fetch_ahead = on;
    }

    pub fn cursors(&self) -> &[PartitionCursor] {
        &self.cursors
    }

    pub fn cursors_mut(&mut self) -> &mut [PartitionCursor] {
        &mut self.cursors
    }

    /// The next offset to fetch of the first partition.
    pub fn offset(&self) -> u64 {
        self.cursors.first().map_or(0, |c| c.offset)
    }

    /// The connection, for other requests: a fetch sent ahead is read and dropped first so that
    /// the next answer on it belongs to the caller.
    pub async fn connection(&mut self) -> Result<&mut BrokerConnection> {
        self.drop_ahead().await?;
        Ok(&mut self.conn)
    }

    /// Opens a new connection to the same broker (after it restarted, say). Positions are kept.
    pub async fn reconnect(&mut self) -> Result<()> {
        self.conn = BrokerConnection::connect(self.conn.addr()).await?;
        self.ahead = None;
        Ok(())
    }

    async fn drop_ahead(&mut self) -> Result<()> {
        if let Some(sent) = self.ahead.take() {
            receive_responses(&mut self.conn, sent.len()).await?;
        }
        Ok(())
    }

    /// Sends `requests` unless the fetch sent ahead asked for exactly them; a stale one is
    /// read and dropped first.
    async fn request(&mut self, requests: Vec<FetchRequest>) -> Result<()> {
        match self.ahead.take() {
            Some(sent) if sent == requests => Ok(()),
            stale => {
                if let Some(sent) = stale {
                    receive_responses(&mut self.conn, sent.len()).await?;
                }
                send_requests(&mut self.conn, requests).await
            }
        }
    }

    /// One fetch round: the answer to the fetch sent ahead if it asked for what the cursors
    /// want now, else a new request. Messages go onto the end of `out`; returns whether a
    /// fetch size grew (that partition gets nothing this round).
    async fn round(&mut self, out: &mut Vec<ConsumedMessage>) -> Result<bool> {
        if self.cursors.len() == 1 {
            return self.round_streamed(out).await;
        }
        let requests: Vec<FetchRequest> = self.cursors.iter().map(PartitionCursor::request).collect();
        if requests.is_empty() {
            return Ok(false);
        }
        let count = requests.len();
        self.request(requests).await?;
        let responses = receive_responses(&mut self.conn, count).await?;
        if self.fetch_ahead {
            if let Some(next) = next_requests(&self.cursors, &responses) {
                send_requests(&mut self.conn, next.clone()).await?;
                self.ahead = Some(next);
            }
        }
        let mut grew = false;
        for (i, response) in responses.into_iter().enumerate() {
            let Some(cursor) = self.cursors.get_mut(i) else { break };
            match apply_into(cursor, response, out)? {
                Applied::Messages => {}
                Applied::Grew => grew = true,
                Applied::OutOfRange => return Err(self.broker_error(i, ErrorCode::OffsetOutOfRange)),
                Applied::Failed(code) => return Err(self.broker_error(i, code)),
            }
        }
        Ok(grew)
    }

    /// [`SimpleConsumer::round`] for a single partition (FETCH), checking and decoding the
    /// answer piece by piece as it arrives: each read's message boundaries are found right
    /// after the kernel copied the bytes (while they are in the CPU cache), and while much of
    /// the answer is still to come each run of complete messages is CRC-checked and decoded at
    /// once. The last [`DECODE_HOLD`] bytes are read in one go and decoded after the fetch ahead
    /// went out, which keeps this side busy while the broker turns around.
    async fn round_streamed(&mut self, out: &mut Vec<ConsumedMessage>) -> Result<bool> {
        let request = self.cursors[0].request();
        self.request(vec![request]).await?;
        let head = self.conn.receive_fetch_head().await?;
        if head.error != ErrorCode::NoError {
            self.conn.discard(head.len).await?;
            return Err(self.broker_error(0, head.error));
        }
        let from = self.cursors[0].offset;
        // `scanned`: received bytes known to be whole messages (log offsets `base..`).
        let (mut base, mut left, mut scanned) = (from, head.len, 0usize);
        loop {
            if left > 0 {
                let want = if left <= DECODE_HOLD { left } else { DECODE_PIECE };
                left -= self.conn.receive_more(want).await?;
            }
            let received = self.conn.received();
            match complete_bytes(&received[scanned..], base + scanned as u64) {
                Ok(more) => scanned += more,
                Err(source) => return self.abandon_answer(left, self.message_error(source)).await,
            }
            if left > 0 && left <= DECODE_HOLD {
                continue;
            }
            let next_offset = base + scanned as u64;
            if left == 0 && self.fetch_ahead && next_offset > from {
                let mut next = self.cursors[0].clone();
                next.offset = next_offset;
                let next = vec![next.request()];
                send_requests(&mut self.conn, next.clone()).await?;
                self.ahead = Some(next);
            }
            if scanned > 0 {
                let piece = self.conn.take_received(scanned);
                if let Err(e) = decode_onto(&self.cursors[0], piece, base, out) {
                    return self.abandon_answer(left, e).await;
                }
                base = next_offset;
                scanned = 0;
            }
            if left == 0 {
                break;
            }
        }
        let unread = self.conn.received().len();
        let tail = self.conn.take_received(unread);
        if base > from {
            // The tail is the cut-off start of the next message, fetched next time.
            self.cursors[0].offset = base;
            return Ok(false);
        }
        // Nothing complete: an empty answer, or a first message larger than the fetch size.
        let end = decode_onto(&self.cursors[0], tail, base, out)?;
        Ok(matches!(settle(&mut self.cursors[0], end)?, Applied::Grew))
    }

    /// Reads and drops the rest of an answer that failed to decode (`left` bytes still on the
    /// connection), so the connection stays in step, and returns `error`. The caller
    /// ([`SimpleConsumer::fetch_into`]) takes back what this round appended.
    async fn abandon_answer(&mut self, left: usize, error: ClientError) -> Result<bool> {
        let unread = left + self.conn.received().len();
        self.conn.discard(unread).await?;
        Err(error)
    }

    fn message_error(&self, source: ProtocolError) -> ClientError {
        let cursor = &self.cursors[0];
        ClientError::Message { topic: cursor.topic.to_string(), partition: cursor.partition, source }
    }

    /// One fetch round over every partition, growing fetch sizes (and fetching again) as
    /// needed. Returns the messages in partition order; empty when there is nothing new.
    /// Offset out of range or another broker error is an error naming the partition.
    pub async fn fetch(&mut self) -> Result<Vec<ConsumedMessage>> {
        let mut out = Vec::new();
        self.fetch_into(&mut out).await?;
        Ok(out)
    }

    /// [`SimpleConsumer::fetch`] appending to `out`, so that a loop can reuse one vector.
    /// Returns how many messages were appended. On an error nothing is appended and no
    /// position moves.
    pub async fn fetch_into(&mut self, out: &mut Vec<ConsumedMessage>) -> Result<usize> {
        let start = out.len();
        loop {
            // On an error the positions go back too, so no message is skipped.
            let saved = self.cursors.clone();
            let grew = match self.round(out).await {
                Ok(grew) => grew,
                Err(e) => {
                    out.truncate(start);
                    self.cursors = saved;
                    return Err(e);
                }
            };
            if !grew || out.len() > start {
                return Ok(out.len() - start);
            }
        }
    }

    fn broker_error(&self, index: usize, code: ErrorCode) -> ClientError {
        let (topic, partition) = match self.cursors.get(index) {
            Some(c) => (c.topic.to_string(), c.partition),
            None => (String::new(), -1),
        };
        ClientError::Broker { addr: self.conn.addr().to_owned(), topic, partition, code }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use kwire07_protocol::message::put_message_set;
    use kwire07_protocol::{Magic, Request};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio::sync::mpsc;

    /// `count` v1 messages whose payloads are `tag-i` padded to `size` bytes.
    fn message_set(tag: &str, count: usize, size: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
        let payloads: Vec<Vec<u8>> = (0..count)
            .map(|i| {
                let mut p = format!("{tag}-{i}-").into_bytes();
                p.resize(size, b'x');
                p
            })
            .collect();
        let mut set = BytesMut::new();
        put_message_set(&mut set, Magic::V1, &payloads).unwrap();
        (set.to_vec(), payloads)
    }

    fn answer(error: i16, body: &[u8]) -> Vec<u8> {
        let mut frame = i32::try_from(body.len() + 2).unwrap().to_be_bytes().to_vec();
        frame.extend_from_slice(&error.to_be_bytes());
        frame.extend_from_slice(body);
        frame
    }

    /// A scripted broker: for each answer, reads one request (reported on the channel) and
    /// writes the answer in odd-sized pieces, so that answers arrive the way big ones do.
    async fn scripted_broker(answers: Vec<Vec<u8>>) -> (String, mpsc::UnboundedReceiver<Request>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            for a in answers {
                let size = s.read_i32().await.unwrap();
                let mut frame = vec![0u8; size as usize];
                s.read_exact(&mut frame).await.unwrap();
                let _ = tx.send(Request::decode(frame.into()).unwrap());
                for piece in a.chunks(77_777) {
                    s.write_all(piece).await.unwrap();
                    tokio::task::yield_now().await;
                }
            }
            // Keep the connection open until the client is done.
            let _ = s.read_u8().await;
        });
        (addr, rx)
    }

    fn fetch_of(r: Request) -> FetchRequest {
        match r {
            Request::Fetch(f) => f,
            other => panic!("expected a FETCH, got {other:?}"),
        }
    }

    async fn consumer_at(addr: &str, offset: u64, fetch_size: usize) -> SimpleConsumer {
        let conn = BrokerConnection::connect(addr).await.unwrap();
        let mut cursor = PartitionCursor::new("t", 0, 0, offset);
        cursor.size = FetchSize::new(fetch_size, 16 << 20);
        SimpleConsumer::with_cursors(conn, vec![cursor])
    }

    /// An answer several times the decode hold, cut off mid-message, is decoded whole with
    /// 0.7's offsets; the fetch sent ahead starts at the end of its last complete message.
    #[tokio::test]
    async fn a_streamed_answer_decodes_whole_and_fetches_ahead_from_its_last_complete_message() {
        let (set, payloads) = message_set("a", 4000, 1000);
        let cut = 3 * DECODE_HOLD + 500; // ends inside a message
        let (addr, mut requests) = scripted_broker(vec![answer(0, &set[..cut]), answer(0, &[])]).await;
        let mut consumer = consumer_at(&addr, 100, cut).await;
        let got = consumer.fetch().await.unwrap();
        let entry = set.len() / payloads.len();
        let complete = cut / entry;
        assert_eq!(got.len(), complete);
        for (i, m) in got.iter().enumerate() {
            assert_eq!(m.payload[..], payloads[i][..]);
            assert_eq!((m.offset, m.next_offset), (100 + (i * entry) as u64, 100 + ((i + 1) * entry) as u64));
        }
        assert_eq!(consumer.offset(), 100 + (complete * entry) as u64);
        let first = fetch_of(requests.recv().await.unwrap());
        assert_eq!((first.offset, first.max_size), (100, cut as i32));
        let ahead = fetch_of(requests.recv().await.unwrap());
        assert_eq!(ahead.offset, 100 + (complete * entry) as i64);
        // The answer to the fetch sent ahead is the next round's.
        assert!(consumer.fetch().await.unwrap().is_empty());
    }

    /// A corrupt message in the middle of a streamed answer is an error naming its offset;
    /// nothing is returned, the position stays, and the rest of the answer is read and dropped
    /// so that the next fetch on the same connection gets its own answer.
    #[tokio::test]
    async fn corruption_mid_answer_fails_the_round_and_keeps_the_connection_in_step() {
        let (set, payloads) = message_set("b", 2000, 1000);
        let entry = set.len() / payloads.len();
        let mut bad = set.clone();
        let victim = 700 * entry + 30; // inside message 700's payload
        bad[victim] ^= 0xff;
        let (addr, mut requests) = scripted_broker(vec![answer(0, &bad), answer(0, &set[..10 * entry])]).await;
        let mut consumer = consumer_at(&addr, 0, set.len()).await;
        let err = consumer.fetch().await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Message { source: ProtocolError::CrcMismatch { offset, .. }, .. } if *offset == (700 * entry) as u64),
            "{err:?}"
        );
        assert_eq!(consumer.offset(), 0);
        let got = consumer.fetch().await.unwrap();
        assert_eq!(got.len(), 10);
        assert_eq!(got[9].payload[..], payloads[9][..]);
        assert_eq!(fetch_of(requests.recv().await.unwrap()).offset, 0);
        assert_eq!(fetch_of(requests.recv().await.unwrap()).offset, 0);
    }

    /// A negative length in the middle of an answer is found while it is still arriving: the
    /// rest of the answer is read and dropped and nothing is fetched ahead.
    #[tokio::test]
    async fn a_broken_length_mid_answer_drops_the_rest_of_it() {
        let (set, payloads) = message_set("d", 3000, 1000);
        let entry = set.len() / payloads.len();
        let mut bad = set.clone();
        bad[300 * entry..300 * entry + 4].copy_from_slice(&(-5i32).to_be_bytes());
        let (addr, mut requests) = scripted_broker(vec![answer(0, &bad), answer(0, &set[..3 * entry])]).await;
        let mut consumer = consumer_at(&addr, 0, set.len()).await;
        let err = consumer.fetch().await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Message { source: ProtocolError::InvalidMessageSize { offset, length: -5 }, .. } if *offset == (300 * entry) as u64),
            "{err:?}"
        );
        assert_eq!(consumer.fetch().await.unwrap().len(), 3);
        let offsets: Vec<i64> = (0..2).map(|_| fetch_of(requests.try_recv().unwrap()).offset).collect();
        assert_eq!(offsets, [0, 0]);
        assert!(requests.try_recv().is_err(), "nothing was fetched ahead");
    }

    /// A first message larger than the fetch size grows the fetch size and is fetched again;
    /// a broker error code is an error and its answer's body is skipped.
    #[tokio::test]
    async fn growth_and_broker_errors_on_the_streamed_path() {
        let (set, payloads) = message_set("c", 2, 5000);
        let (addr, mut requests) = scripted_broker(vec![
            answer(0, &set[..1024]),
            answer(0, &set),
            answer(1, &[]),
            answer(2, b"whatever the broker put here"),
            answer(0, &[]),
        ])
        .await;
        let mut consumer = consumer_at(&addr, 0, 1024).await;
        let got = consumer.fetch().await.unwrap();
        assert_eq!(got.iter().map(|m| m.payload.to_vec()).collect::<Vec<_>>(), payloads);
        assert_eq!(fetch_of(requests.recv().await.unwrap()).max_size, 1024);
        let grown = fetch_of(requests.recv().await.unwrap());
        assert!(grown.max_size >= (set.len() / 2) as i32, "{grown:?}");
        consumer.set_fetch_ahead(false);
        let out_of_range = consumer.fetch().await.unwrap_err();
        assert!(matches!(out_of_range, ClientError::Broker { code: ErrorCode::OffsetOutOfRange, .. }));
        let invalid = consumer.fetch().await.unwrap_err();
        assert!(matches!(invalid, ClientError::Broker { code: ErrorCode::InvalidMessage, .. }), "{invalid:?}");
        assert!(consumer.fetch().await.unwrap().is_empty());
    }
}
