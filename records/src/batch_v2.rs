//! RecordBatch, magic 2 (Kafka 0.11+): the batch header, its CRC-32C, and its records.

use bytes::Bytes;

use super::attributes::Attributes;
use super::compression::{self, Compression};
use super::error::{Malformation, RecordsError, RecordsErrorKind};
use super::record::{Header, Record};
use super::record_v2::{
    check_count, parse_record, trailing_bytes, RecordContext, RecordRefs, MAX_RESERVED_RECORDS, MIN_RECORD_SIZE,
};
use super::ReadOptions;
use kwire_runtime::reader::SliceReader;

/// Size of the batch header, from base offset through record count.
pub const V2_HEADER_LEN: usize = 61;
/// Where the CRC-covered bytes begin (the attributes field).
pub(crate) const V2_CRC_START: usize = 21;
pub(crate) const V2_CRC_AT: usize = 17;

/// Every field of a magic 2 batch header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordBatchHeader {
    /// Offset of the first record (offset delta 0).
    pub base_offset: i64,
    /// Bytes after this field, to the end of the batch.
    pub batch_length: i32,
    /// Set by the leader; outside the CRC so brokers can set it without recomputing.
    pub partition_leader_epoch: i32,
    /// Always 2.
    pub magic: i8,
    /// CRC-32C of the bytes from `attributes` to the end of the batch.
    pub crc: u32,
    /// Codec, timestamp type, transactional, control and delete-horizon bits.
    pub attributes: Attributes,
    /// Offset delta of the last record (also the last sequence delta).
    pub last_offset_delta: i32,
    /// Timestamp the records' deltas are relative to (the delete horizon if that bit is set).
    pub base_timestamp: i64,
    /// Largest record timestamp, or the log-append time.
    pub max_timestamp: i64,
    /// Producer id, -1 if none.
    pub producer_id: i64,
    /// Producer epoch, -1 if none.
    pub producer_epoch: i16,
    /// Sequence of the first record, -1 if none.
    pub base_sequence: i32,
    /// Number of records.
    pub record_count: i32,
}

impl RecordBatchHeader {
    /// Offset of the last record.
    pub fn last_offset(&self) -> i64 {
        self.base_offset.wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The delete horizon, if compaction set one.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.attributes.has_delete_horizon().then_some(self.base_timestamp)
    }
}

/// A complete magic 2 batch, header parsed, records not yet read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBatch {
    pub(crate) header: RecordBatchHeader,
    pub(crate) bytes: Bytes,
    pub(crate) index: usize,
    pub(crate) position: usize,
}

fn header_field<E: Into<Malformation>>(field: &'static str, offset: usize) -> impl Fn(E) -> RecordsErrorKind {
    move |problem| RecordsErrorKind::Malformed { structure: "RecordBatch", field, offset, problem: problem.into() }
}

impl RecordBatch {
    /// Parses the header of a batch whose `bytes` are complete (length already checked).
    pub(crate) fn parse(bytes: Bytes, index: usize, position: usize) -> Result<Self, RecordsError> {
        let err = |kind| RecordsError::new(index, position, kind);
        let mut c = SliceReader::new(&bytes, 0);
        macro_rules! field {
            ($name:literal, $read:ident) => {{
                let at = c.position();
                c.$read().map_err(header_field($name, at)).map_err(err)?
            }};
        }
        let header = RecordBatchHeader {
            base_offset: field!("base_offset", get_i64),
            batch_length: field!("batch_length", get_i32),
            partition_leader_epoch: field!("partition_leader_epoch", get_i32),
            magic: field!("magic", get_i8),
            crc: field!("crc", get_u32),
            attributes: Attributes(field!("attributes", get_i16)),
            last_offset_delta: field!("last_offset_delta", get_i32),
            base_timestamp: field!("base_timestamp", get_i64),
            max_timestamp: field!("max_timestamp", get_i64),
            producer_id: field!("producer_id", get_i64),
            producer_epoch: field!("producer_epoch", get_i16),
            base_sequence: field!("base_sequence", get_i32),
            record_count: field!("record_count", get_i32),
        };
        Ok(RecordBatch { header, bytes, index, position })
    }

    /// The header fields.
    pub fn header(&self) -> &RecordBatchHeader {
        &self.header
    }

    /// The batch's bytes, from base offset to the end.
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The codec, or an error naming the invalid codec id.
    pub fn compression(&self) -> Result<Compression, RecordsError> {
        self.header.attributes.compression().ok_or_else(|| {
            self.error(RecordsErrorKind::InvalidCodec { codec: self.header.attributes.codec_id(), magic: 2 })
        })
    }

    fn error(&self, kind: RecordsErrorKind) -> RecordsError {
        RecordsError::new(self.index, self.position, kind)
    }

    /// Checks the CRC-32C over attributes..end.
    pub fn verify_crc(&self) -> Result<(), RecordsError> {
        let computed = super::checksum::crc32c(self.bytes.get(V2_CRC_START..).unwrap_or_default());
        if computed != self.header.crc {
            return Err(self.error(RecordsErrorKind::CrcMismatch { stored: self.header.crc, computed }));
        }
        Ok(())
    }

    /// The records, decompressing first if needed (bounded by `options`).
    pub fn records(&self, options: &ReadOptions) -> Result<RecordBatchRecords, RecordsError> {
        self.record_data(options).map(RecordBatchData::into_records)
    }

    /// The records section, CRC-checked and decompressed per `options`, for reading records as
    /// borrowed [`RecordRef`](super::RecordRef) views without reference counting.
    pub fn record_data(&self, options: &ReadOptions) -> Result<RecordBatchData, RecordsError> {
        if options.verify_crc {
            self.verify_crc()?;
        }
        let count_field = |problem| {
            self.error(RecordsErrorKind::Malformed {
                structure: "RecordBatch",
                field: "record_count",
                offset: 57,
                problem,
            })
        };
        let count = u32::try_from(self.header.record_count)
            .map_err(|_| count_field(Malformation::InvalidLength(i64::from(self.header.record_count))))?;
        // Uncompressed records are read in place, so error offsets count from the batch start;
        // for compressed batches they count from the start of the decompressed data.
        let (data, start) = match self.compression()? {
            Compression::None => (self.bytes.clone(), V2_HEADER_LEN),
            codec => {
                let compressed = self.bytes.get(V2_HEADER_LEN..).unwrap_or_default();
                let plain = compression::decompress(codec, 2, compressed, options.max_decompressed_size)
                    .map_err(|kind| self.error(kind))?;
                (Bytes::from(plain), 0)
            }
        };
        // Against the records' bytes (decompressed, if they were compressed): a count they
        // cannot hold is corruption, refused before it sizes anything.
        check_count(count as usize, MIN_RECORD_SIZE, data.len().saturating_sub(start)).map_err(count_field)?;
        let log_append = self.header.attributes.is_log_append_time();
        Ok(RecordBatchData {
            data,
            start,
            count,
            context: RecordContext {
                base_offset: self.header.base_offset,
                base_timestamp: self.header.base_timestamp,
                log_append_time: log_append.then_some(self.header.max_timestamp),
            },
            index: self.index,
            position: self.position,
        })
    }
}

/// The records section of one magic 2 batch (decompressed if it was compressed).
#[derive(Debug, Clone)]
pub struct RecordBatchData {
    data: Bytes,
    start: usize,
    count: u32,
    context: RecordContext,
    index: usize,
    position: usize,
}

impl RecordBatchData {
    /// Borrowed views of the records, in order.
    pub fn iter(&self) -> RecordRefs<'_> {
        RecordRefs::new(&self.data, self.start, self.count, self.context, self.index, self.position)
    }

    /// Owned records sharing this data.
    pub fn into_records(self) -> RecordBatchRecords {
        RecordBatchRecords {
            pos: self.start,
            remaining: self.count,
            data: self.data,
            context: self.context,
            index: self.index,
            position: self.position,
            done: false,
        }
    }
}

/// Iterator over the records of one magic 2 batch.
#[derive(Debug, Clone)]
pub struct RecordBatchRecords {
    data: Bytes,
    pos: usize,
    remaining: u32,
    context: RecordContext,
    index: usize,
    position: usize,
    done: bool,
}

impl RecordBatchRecords {
    fn fail(&mut self, kind: RecordsErrorKind) -> Option<Result<Record, RecordsError>> {
        self.done = true;
        Some(Err(RecordsError::new(self.index, self.position, kind)))
    }

    /// Reads the record at the current position into an owned [`Record`].
    #[inline(always)]
    fn read_one(&mut self) -> Result<Record, RecordsErrorKind> {
        let data = &self.data;
        let mut headers = Vec::new();
        let raw = parse_record(data, self.pos, |key, value| {
            headers.push(Header { key: data.slice(key), value: value.map(|v| data.slice(v)) });
        })?;
        self.pos = raw.end;
        self.remaining -= 1;
        let (timestamp, timestamp_type) = self.context.timestamp(raw.timestamp_delta);
        Ok(Record {
            offset: self.context.offset(raw.offset_delta),
            timestamp,
            timestamp_type,
            key: raw.key.map(|r| data.slice(r)),
            value: raw.value.map(|r| data.slice(r)),
            headers,
        })
    }

    /// Appends every remaining record to `out`: what collecting the iterator does, without
    /// wrapping each record in an `Option<Result<..>>` on the way (`to_vec`'s loop).
    pub(crate) fn append_to(mut self, out: &mut Vec<Record>) -> Result<(), RecordsError> {
        if self.done {
            return Ok(());
        }
        out.reserve(self.size_hint().1.unwrap_or(0).min(MAX_RESERVED_RECORDS));
        while self.remaining > 0 {
            match self.read_one() {
                Ok(record) => out.push(record),
                Err(kind) => return Err(RecordsError::new(self.index, self.position, kind)),
            }
        }
        match trailing_bytes(&self.data, self.pos) {
            Some(kind) => Err(RecordsError::new(self.index, self.position, kind)),
            None => Ok(()),
        }
    }
}

impl Iterator for RecordBatchRecords {
    type Item = Result<Record, RecordsError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.remaining == 0 {
            self.done = true;
            return trailing_bytes(&self.data, self.pos)
                .map(|kind| Err(RecordsError::new(self.index, self.position, kind)));
        }
        match self.read_one() {
            Ok(record) => Some(Ok(record)),
            Err(kind) => self.fail(kind),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            let bytes_left = self.data.len().saturating_sub(self.pos);
            (0, Some(super::record_v2::records_upper_bound(self.remaining as usize, bytes_left)))
        }
    }
}
