//! Decoded records, their headers, and transaction control markers.

use bytes::Bytes;

use super::error::Malformation;

/// What a record's timestamp means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// Magic 0 messages carry no timestamp.
    NoTimestamp,
    /// Set by the producer when the record was created.
    #[default]
    CreateTime,
    /// Set by the broker when the record was appended to the log.
    LogAppendTime,
}

/// `-1`, the timestamp of magic 0 records and of empty batches.
pub const NO_TIMESTAMP: i64 = -1;

/// One record header. Keys may repeat; order is kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header {
    /// The header key, a string on the wire kept as its raw bytes (Kafka does not check UTF-8).
    pub key: Bytes,
    /// The header value, `None` for null.
    pub value: Option<Bytes>,
}

impl Header {
    /// A header from anything convertible to `Bytes`.
    pub fn new(key: impl Into<Bytes>, value: Option<impl Into<Bytes>>) -> Self {
        Header { key: key.into(), value: value.map(Into::into) }
    }

    /// The key as text, if it is UTF-8.
    pub fn key_str(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.key)
    }
}

/// A record read from a batch of any magic. Keys, values and headers share the batch's buffer
/// (or the decompressed buffer) rather than copying it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Record {
    /// Absolute offset in the partition (see [`Batch::records`](super::Batch::records) for how
    /// legacy compressed sets map relative offsets).
    pub offset: i64,
    /// Milliseconds since the epoch; [`NO_TIMESTAMP`] for magic 0.
    pub timestamp: i64,
    /// What `timestamp` means.
    pub timestamp_type: TimestampType,
    /// The key, `None` for null.
    pub key: Option<Bytes>,
    /// The value, `None` for null (a tombstone).
    pub value: Option<Bytes>,
    /// Headers in wire order (magic 2 only; empty before).
    pub headers: Vec<Header>,
}

impl Record {
    /// Reads this record as a transaction marker, for records of a control batch.
    pub fn control_marker(&self) -> Result<EndTransactionMarker, Malformation> {
        EndTransactionMarker::parse(self.key.as_deref(), self.value.as_deref())
    }
}

/// The kind of a control record (the `type` in its key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// The transaction was aborted (type 0).
    Abort,
    /// The transaction was committed (type 1).
    Commit,
    /// Another control type this crate does not interpret (for example KRaft's).
    Other(i16),
}

impl ControlRecordType {
    /// The wire id.
    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::Other(id) => id,
        }
    }

    /// The type for a wire id.
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            other => ControlRecordType::Other(other),
        }
    }
}

/// A commit or abort marker: the single record of a control batch that ends a transaction.
///
/// Key: `version: i16 (0), type: i16`; value: `version: i16 (0), coordinator_epoch: i32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndTransactionMarker {
    /// Commit, abort, or another control type.
    pub kind: ControlRecordType,
    /// The transaction coordinator's epoch.
    pub coordinator_epoch: i32,
}

impl EndTransactionMarker {
    /// The version written in both key and value.
    pub const VERSION: i16 = 0;

    fn parse(key: Option<&[u8]>, value: Option<&[u8]>) -> Result<Self, Malformation> {
        let key = key.ok_or(Malformation::InvalidControlRecord("null key"))?;
        let Some([v0, v1, t0, t1]) = key.first_chunk::<4>().copied() else {
            return Err(Malformation::InvalidControlRecord("key shorter than 4 bytes"));
        };
        if i16::from_be_bytes([v0, v1]) < 0 {
            return Err(Malformation::InvalidControlRecord("negative key version"));
        }
        let kind = ControlRecordType::from_id(i16::from_be_bytes([t0, t1]));
        let value = value.ok_or(Malformation::InvalidControlRecord("null value"))?;
        // Later value versions append fields; version and epoch stay first.
        let Some([_, _, e0, e1, e2, e3]) = value.first_chunk::<6>().copied() else {
            return Err(Malformation::InvalidControlRecord("value shorter than 6 bytes"));
        };
        Ok(EndTransactionMarker { kind, coordinator_epoch: i32::from_be_bytes([e0, e1, e2, e3]) })
    }

    /// The control record key.
    pub fn key_bytes(&self) -> [u8; 4] {
        let [v0, v1] = Self::VERSION.to_be_bytes();
        let [t0, t1] = self.kind.id().to_be_bytes();
        [v0, v1, t0, t1]
    }

    /// The control record value.
    pub fn value_bytes(&self) -> [u8; 6] {
        let [v0, v1] = Self::VERSION.to_be_bytes();
        let [e0, e1, e2, e3] = self.coordinator_epoch.to_be_bytes();
        [v0, v1, e0, e1, e2, e3]
    }
}
