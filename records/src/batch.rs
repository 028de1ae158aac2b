//! Walking a `records` field batch by batch, reading only headers until records are asked for.

use bytes::Bytes;

use super::batch_v2::{RecordBatch, RecordBatchRecords, V2_HEADER_LEN};
use super::compression::{Compression, DEFAULT_MAX_DECOMPRESSED_SIZE};
use super::error::{RecordsError, RecordsErrorKind};
use super::legacy::{LegacyBatch, LegacyRecords, LOG_OVERHEAD, MESSAGE_V0_MIN_SIZE, MESSAGE_V1_MIN_SIZE};
use super::record::{Record, TimestampType};

/// Where the magic byte sits in every format (after offset, length and epoch or CRC).
const MAGIC_AT: usize = 16;

/// How records are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Refuse to decompress a batch to more than this many bytes.
    pub max_decompressed_size: usize,
    /// Check each batch's CRC before reading its records (Kafka's `check.crcs`, default on).
    pub verify_crc: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE, verify_crc: true }
    }
}

/// One batch: a magic 2 record batch, or a legacy (magic 0/1) message entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Batch {
    /// Magic 2.
    V2(RecordBatch),
    /// Magic 0 or 1: a single message, or a compressed wrapper of many.
    Legacy(LegacyBatch),
}

impl Batch {
    /// The format version.
    pub fn magic(&self) -> i8 {
        match self {
            Batch::V2(_) => 2,
            Batch::Legacy(b) => b.header().magic,
        }
    }

    /// Position of this batch among the batches of its `records` field.
    pub fn index(&self) -> usize {
        match self {
            Batch::V2(b) => b.index,
            Batch::Legacy(b) => b.index(),
        }
    }

    /// Byte position of this batch inside its `records` field.
    pub fn position(&self) -> usize {
        match self {
            Batch::V2(b) => b.position,
            Batch::Legacy(b) => b.position(),
        }
    }

    /// The batch's encoded bytes (shared, not copied).
    pub fn as_bytes(&self) -> &Bytes {
        match self {
            Batch::V2(b) => b.as_bytes(),
            Batch::Legacy(b) => b.as_bytes(),
        }
    }

    /// The codec, or an error if the attributes name none valid for this magic.
    pub fn compression(&self) -> Result<Compression, RecordsError> {
        match self {
            Batch::V2(b) => b.compression(),
            Batch::Legacy(b) => b.compression(),
        }
    }

    /// The timestamp type from the attributes.
    pub fn timestamp_type(&self) -> TimestampType {
        match self {
            Batch::V2(b) => b.header().attributes.timestamp_type(2),
            Batch::Legacy(b) => b.header().attributes.timestamp_type(b.header().magic),
        }
    }

    /// The offset of the last record, from the header alone (a legacy wrapper carries it).
    pub fn last_offset(&self) -> i64 {
        match self {
            Batch::V2(b) => b.header().last_offset(),
            Batch::Legacy(b) => b.header().offset,
        }
    }

    /// Whether the batch is transactional (magic 2 only).
    pub fn is_transactional(&self) -> bool {
        matches!(self, Batch::V2(b) if b.header().attributes.is_transactional())
    }

    /// Whether the batch holds control records (magic 2 only).
    pub fn is_control(&self) -> bool {
        matches!(self, Batch::V2(b) if b.header().attributes.is_control())
    }

    /// Checks the batch's CRC (CRC-32C for magic 2, CRC-32 of the outer message before).
    pub fn verify_crc(&self) -> Result<(), RecordsError> {
        match self {
            Batch::V2(b) => b.verify_crc(),
            Batch::Legacy(b) => b.verify_crc(),
        }
    }

    /// The batch's records with default options (CRC checked, 64 MiB decompression limit).
    pub fn records(&self) -> Result<BatchRecords, RecordsError> {
        self.records_with(&ReadOptions::default())
    }

    /// The batch's records, decompressing (within `options.max_decompressed_size`) if needed.
    pub fn records_with(&self, options: &ReadOptions) -> Result<BatchRecords, RecordsError> {
        Ok(match self {
            Batch::V2(b) => BatchRecords::V2(b.records(options)?),
            Batch::Legacy(b) => BatchRecords::Legacy(b.records(options)?),
        })
    }
}

/// Iterator over the records of one batch.
#[derive(Debug, Clone)]
pub enum BatchRecords {
    /// Records of a magic 2 batch.
    V2(RecordBatchRecords),
    /// Records of a legacy entry.
    Legacy(LegacyRecords),
}

impl Iterator for BatchRecords {
    type Item = Result<Record, RecordsError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            BatchRecords::V2(it) => it.next(),
            BatchRecords::Legacy(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            BatchRecords::V2(it) => it.size_hint(),
            BatchRecords::Legacy(it) => it.size_hint(),
        }
    }
}

/// Lazy iterator over the batches of a `records` field.
///
/// Each step reads one header; CRCs are checked and records decompressed only when asked. A
/// partial batch at the end (fetch responses may stop mid-batch) yields one error for which
/// [`RecordsError::is_truncated`] is true; the iterator then ends.
#[derive(Debug, Clone)]
pub struct Batches {
    bytes: Bytes,
    pos: usize,
    index: usize,
    done: bool,
}

impl Batches {
    pub(crate) fn new(bytes: Bytes) -> Self {
        Batches { bytes, pos: 0, index: 0, done: false }
    }

    fn next_batch(&mut self) -> Result<Batch, RecordsError> {
        let position = self.pos;
        let index = self.index;
        let err = |kind| RecordsError::new(index, position, kind);
        let rest = self.bytes.get(position..).unwrap_or_default();
        let available = rest.len();
        let Some((_, [l0, l1, l2, l3])) =
            rest.split_first_chunk::<8>().and_then(|(o, r)| Some((o, *r.first_chunk::<4>()?)))
        else {
            return Err(err(RecordsErrorKind::Truncated { needed: LOG_OVERHEAD, available }));
        };
        let length = i32::from_be_bytes([l0, l1, l2, l3]);
        let magic = rest.get(MAGIC_AT).map(|&m| m as i8);
        let minimum = match magic {
            Some(2) => V2_HEADER_LEN - LOG_OVERHEAD,
            Some(1) => MESSAGE_V1_MIN_SIZE,
            _ => MESSAGE_V0_MIN_SIZE,
        };
        let size = usize::try_from(length)
            .ok()
            .filter(|&len| len >= minimum)
            .ok_or_else(|| err(RecordsErrorKind::LengthTooSmall { length, minimum, magic: magic.unwrap_or(-1) }))?;
        let total = size + LOG_OVERHEAD;
        if total > available {
            return Err(err(RecordsErrorKind::Truncated { needed: total, available }));
        }
        let bytes = self.bytes.slice(position..position + total);
        self.pos = position + total;
        self.index += 1;
        match magic {
            Some(2) => RecordBatch::parse(bytes, index, position).map(Batch::V2),
            Some(0 | 1) => LegacyBatch::parse(bytes, index, position).map(Batch::Legacy),
            Some(other) => Err(err(RecordsErrorKind::UnsupportedMagic(other))),
            None => Err(err(RecordsErrorKind::Truncated { needed: MAGIC_AT + 1, available })),
        }
    }
}

impl Iterator for Batches {
    type Item = Result<Batch, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.bytes.len() {
            return None;
        }
        let batch = self.next_batch();
        if batch.is_err() {
            // After a bad length or a partial tail the next boundary is unknown.
            self.done = true;
        }
        Some(batch)
    }
}

/// Iterator over every record of every batch, in order.
#[derive(Debug, Clone)]
pub struct AllRecords {
    batches: Batches,
    current: Option<BatchRecords>,
    options: ReadOptions,
    done: bool,
}

impl AllRecords {
    pub(crate) fn new(batches: Batches, options: ReadOptions) -> Self {
        AllRecords { batches, current: None, options, done: false }
    }
}

impl Iterator for AllRecords {
    type Item = Result<Record, RecordsError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            if let Some(records) = &mut self.current {
                match records.next() {
                    Some(Ok(record)) => return Some(Ok(record)),
                    Some(Err(e)) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                    None => self.current = None,
                }
            }
            match self.batches.next()? {
                Ok(batch) => match batch.records_with(&self.options) {
                    Ok(records) => self.current = Some(records),
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                },
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}
