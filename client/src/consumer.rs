//! The simple consumer: a fetch loop over one or more partitions of one broker, from offsets
//! the caller chooses. One partition goes out as FETCH, several as one MULTIFETCH.

use std::sync::Arc;

use bytes::Bytes;
use kafka_wire_runtime::legacy::{ErrorCode, FetchRequest, OFFSETS_EARLIEST, OFFSETS_LATEST};

use crate::connection::BrokerConnection;
use crate::error::{ClientError, Result};
use crate::fetch::{decode_set, Decoded, FetchSize, DEFAULT_FETCH_SIZE, DEFAULT_MAX_FETCH_SIZE};

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
    let responses = match requests.len() {
        0 => return Ok(Vec::new()),
        1 => vec![conn.fetch(requests.into_iter().next().expect("one request")).await?],
        _ => conn.multifetch(requests).await?,
    };
    let mut outcomes = Vec::with_capacity(cursors.len());
    for (cursor, response) in cursors.iter_mut().zip(responses) {
        outcomes.push(match response.error {
            ErrorCode::NoError => apply(cursor, response.messages)?,
            ErrorCode::OffsetOutOfRange => PartitionOutcome::OutOfRange,
            code => PartitionOutcome::Failed(code),
        });
    }
    Ok(outcomes)
}

fn apply(cursor: &mut PartitionCursor, set: Bytes) -> Result<PartitionOutcome> {
    let decoded = decode_set(set, cursor.offset).map_err(|source| ClientError::Message {
        topic: cursor.topic.to_string(),
        partition: cursor.partition,
        source,
    })?;
    match decoded {
        Decoded::TooSmall { needed } => {
            if !cursor.size.grow_for(needed) {
                return Err(ClientError::MessageTooLarge {
                    topic: cursor.topic.to_string(),
                    partition: cursor.partition,
                    offset: cursor.offset,
                    size: needed,
                    max: cursor.size.max(),
                });
            }
            Ok(PartitionOutcome::Grew)
        }
        Decoded::Messages { messages, next_offset } => {
            cursor.offset = next_offset;
            Ok(PartitionOutcome::Messages(
                messages
                    .into_iter()
                    .map(|m| ConsumedMessage {
                        topic: cursor.topic.clone(),
                        broker_id: cursor.broker_id,
                        partition: cursor.partition,
                        offset: m.offset,
                        next_offset: m.next_offset,
                        payload: m.payload,
                    })
                    .collect(),
            ))
        }
    }
}

/// Reads one or more partitions of one broker from caller-chosen offsets.
#[derive(Debug)]
pub struct SimpleConsumer {
    conn: BrokerConnection,
    cursors: Vec<PartitionCursor>,
}

impl SimpleConsumer {
    /// A consumer of `topic`-`partition` on the broker at `addr`, starting at `start`.
    pub async fn connect(addr: &str, topic: &str, partition: i32, start: StartOffset) -> Result<SimpleConsumer> {
        let mut conn = BrokerConnection::connect(addr).await?;
        let offset = start.resolve(&mut conn, topic, partition).await?;
        Ok(SimpleConsumer { conn, cursors: vec![PartitionCursor::new(topic, -1, partition, offset)] })
    }

    /// A consumer of several partitions on one connection (fetched with MULTIFETCH).
    pub fn with_cursors(conn: BrokerConnection, cursors: Vec<PartitionCursor>) -> SimpleConsumer {
        SimpleConsumer { conn, cursors }
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

    pub fn connection(&mut self) -> &mut BrokerConnection {
        &mut self.conn
    }

    /// Opens a new connection to the same broker (after it restarted, say). Positions are kept.
    pub async fn reconnect(&mut self) -> Result<()> {
        self.conn = BrokerConnection::connect(self.conn.addr()).await?;
        Ok(())
    }

    /// One fetch round over every partition, growing fetch sizes (and fetching again) as
    /// needed. Returns the messages in partition order; empty when there is nothing new.
    /// Offset out of range or another broker error is an error naming the partition.
    pub async fn fetch(&mut self) -> Result<Vec<ConsumedMessage>> {
        loop {
            let outcomes = fetch_round(&mut self.conn, &mut self.cursors).await?;
            let mut grew = false;
            let mut out = Vec::new();
            for (cursor, outcome) in self.cursors.iter().zip(outcomes) {
                match outcome {
                    PartitionOutcome::Messages(m) => out.extend(m),
                    PartitionOutcome::Grew => grew = true,
                    PartitionOutcome::OutOfRange => return Err(self.broker_error(cursor, ErrorCode::OffsetOutOfRange)),
                    PartitionOutcome::Failed(code) => return Err(self.broker_error(cursor, code)),
                }
            }
            if !grew || !out.is_empty() {
                return Ok(out);
            }
        }
    }

    fn broker_error(&self, cursor: &PartitionCursor, code: ErrorCode) -> ClientError {
        ClientError::Broker {
            addr: self.conn.addr().to_owned(),
            topic: cursor.topic.to_string(),
            partition: cursor.partition,
            code,
        }
    }
}
