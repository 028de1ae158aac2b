//! The simple consumer: a fetch loop over one or more partitions of one broker, from offsets
//! the caller chooses. One partition goes out as FETCH, several as one MULTIFETCH.

use std::sync::Arc;

use bytes::Bytes;
use kafka_wire_runtime::legacy::{
    valid_bytes, ErrorCode, FetchRequest, FetchResponse, OFFSETS_EARLIEST, OFFSETS_LATEST,
};

use crate::connection::BrokerConnection;
use crate::error::{ClientError, Result};
use crate::fetch::{decode_each, FetchSize, SetEnd, DEFAULT_FETCH_SIZE, DEFAULT_MAX_FETCH_SIZE};

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
    let start = out.len();
    let decoded = decode_each(response.messages, cursor.offset, |m| {
        out.push(ConsumedMessage {
            topic: cursor.topic.clone(),
            broker_id: cursor.broker_id,
            partition: cursor.partition,
            offset: m.offset,
            next_offset: m.next_offset,
            payload: m.payload,
        })
    });
    let decoded = match decoded {
        Ok(d) => d,
        Err(source) => {
            out.truncate(start);
            return Err(ClientError::Message { topic: cursor.topic.to_string(), partition: cursor.partition, source });
        }
    };
    match decoded {
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

    /// One fetch round: the answer to the fetch sent ahead if it asked for what the cursors
    /// want now, else a new request. Messages go onto the end of `out`; returns whether a
    /// fetch size grew (that partition gets nothing this round).
    async fn round(&mut self, out: &mut Vec<ConsumedMessage>) -> Result<bool> {
        let requests: Vec<FetchRequest> = self.cursors.iter().map(PartitionCursor::request).collect();
        if requests.is_empty() {
            return Ok(false);
        }
        let count = requests.len();
        match self.ahead.take() {
            Some(sent) if sent == requests => {}
            stale => {
                if let Some(sent) = stale {
                    receive_responses(&mut self.conn, sent.len()).await?;
                }
                send_requests(&mut self.conn, requests).await?;
            }
        }
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
