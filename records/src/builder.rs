//! Building batches: records in, encoded batch out, with offsets, timestamps, compression and
//! CRCs computed as Kafka's `MemoryRecordsBuilder` does.

use bytes::Bytes;

use super::attributes::Attributes;
use super::batch_v2::{V2_CRC_AT, V2_CRC_START, V2_HEADER_LEN};
use super::compression::{self, Compression};
use super::error::BuildError;
use super::legacy::LOG_OVERHEAD;
use super::record::{EndTransactionMarker, Header, Record, NO_TIMESTAMP};
use kwire_runtime::wire::{put_uvarlong_into, varint_size, varlong_size, zigzag_encode_i32, zigzag_encode_i64};

/// Appends a zig-zag varint (the runtime's encoder, into a `Vec`).
fn put_varint(out: &mut Vec<u8>, value: i32) {
    put_uvarlong_into(out, u64::from(zigzag_encode_i32(value)));
}

/// Appends a zig-zag varlong.
fn put_varlong(out: &mut Vec<u8>, value: i64) {
    put_uvarlong_into(out, zigzag_encode_i64(value));
}

/// How a batch is built. The defaults are those of a plain (non-idempotent) Java producer
/// writing magic 2 without compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// 0, 1 or 2.
    pub magic: i8,
    /// The codec (zstd needs magic 2).
    pub compression: Compression,
    /// Offset of the first record.
    pub base_offset: i64,
    /// Magic 2: the leader epoch (-1 when a producer writes it).
    pub partition_leader_epoch: i32,
    /// `Some(t)`: log-append time `t` (magic 1 and 2); `None`: create time.
    pub log_append_time: Option<i64>,
    /// Magic 2: producer id, -1 for none.
    pub producer_id: i64,
    /// Magic 2: producer epoch, -1 for none.
    pub producer_epoch: i16,
    /// Magic 2: sequence of the first record, -1 for none.
    pub base_sequence: i32,
    /// Magic 2: part of a transaction.
    pub transactional: bool,
    /// Magic 2: a control batch (transaction markers).
    pub control: bool,
    /// Magic 2: a delete horizon, stored as the base timestamp.
    pub delete_horizon: Option<i64>,
    /// The codec's level (Kafka's `compression.<codec>.level`), `None` for its default; see
    /// [`compress_at`](crate::compression::compress_at) for what each codec honours.
    pub compression_level: Option<i32>,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            magic: 2,
            compression: Compression::None,
            base_offset: 0,
            partition_leader_epoch: -1,
            log_append_time: None,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            control: false,
            delete_horizon: None,
            compression_level: None,
        }
    }
}

impl BatchOptions {
    /// Options for `magic` and `compression`, other fields at their defaults.
    pub fn new(magic: i8, compression: Compression) -> Self {
        BatchOptions { magic, compression, ..BatchOptions::default() }
    }
}

/// Accumulates records and encodes them as one batch (magic 2) or one message set (magic 0/1,
/// a single compressed wrapper when a codec is chosen).
#[derive(Debug, Clone)]
pub struct BatchBuilder {
    options: BatchOptions,
    /// Magic 2: header space followed by encoded records; legacy: the message set.
    buf: Vec<u8>,
    count: i32,
    last_offset: Option<i64>,
    base_timestamp: Option<i64>,
    max_timestamp: Option<i64>,
}

fn len_i32(what: &'static str, len: usize) -> Result<i32, BuildError> {
    i32::try_from(len).map_err(|_| BuildError::TooLarge { what, len })
}

fn nullable_len(what: &'static str, bytes: Option<&[u8]>) -> Result<usize, BuildError> {
    Ok(match bytes {
        None => 1,
        Some(b) => varint_size(len_i32(what, b.len())?) + b.len(),
    })
}

fn put_nullable(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => put_varint(out, -1),
        Some(b) => {
            // Lengths were checked against i32 when the record was sized.
            put_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
    }
}

impl BatchBuilder {
    /// A builder for `options`; refuses combinations Kafka cannot represent.
    pub fn new(options: BatchOptions) -> Result<Self, BuildError> {
        let magic = options.magic;
        if !(0..=2).contains(&magic) || !options.compression.allowed_for_magic(magic) {
            return Err(BuildError::CodecNotAllowed { codec: options.compression, magic });
        }
        if options.control && magic != 2 {
            return Err(BuildError::ControlNeedsMagic2);
        }
        let buf = if magic == 2 { vec![0; V2_HEADER_LEN] } else { Vec::new() };
        Ok(BatchBuilder { options, buf, count: 0, last_offset: None, base_timestamp: None, max_timestamp: None })
    }

    /// Like [`new`](Self::new), reserving room for `bytes` of records.
    pub fn with_capacity(options: BatchOptions, bytes: usize) -> Result<Self, BuildError> {
        let mut builder = Self::new(options)?;
        builder.buf.reserve(bytes);
        Ok(builder)
    }

    /// The options the batch is built with.
    pub fn options(&self) -> &BatchOptions {
        &self.options
    }

    /// Sets the producer's fields of a magic 2 batch: its id, epoch and the sequence of the
    /// first record. An idempotent producer knows the sequence only when it closes a batch,
    /// after the records were appended; the header and CRC are written by [`build`](Self::build).
    pub fn set_producer(&mut self, producer_id: i64, producer_epoch: i16, base_sequence: i32) {
        self.options.producer_id = producer_id;
        self.options.producer_epoch = producer_epoch;
        self.options.base_sequence = base_sequence;
    }

    /// The bytes held so far (magic 2: the header's room included): the batch's size once
    /// built without compression.
    pub fn size(&self) -> usize {
        self.buf.len()
    }

    /// Records appended so far.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether no record was appended.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The offset the next [`append`](Self::append) will use.
    pub fn next_offset(&self) -> i64 {
        self.last_offset.map_or(self.options.base_offset, |o| o.wrapping_add(1))
    }

    /// Appends a record at the next offset and returns that offset.
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header],
    ) -> Result<i64, BuildError> {
        let offset = self.next_offset();
        self.append_with_offset(offset, timestamp, key, value, headers)?;
        Ok(offset)
    }

    /// Appends a decoded record, keeping its offset (gaps allowed, as after compaction).
    pub fn append_record(&mut self, record: &Record) -> Result<(), BuildError> {
        self.append_with_offset(
            record.offset,
            record.timestamp,
            record.key.as_deref(),
            record.value.as_deref(),
            &record.headers,
        )
    }

    /// Appends a commit or abort marker (for a control batch) at the next offset.
    pub fn append_end_transaction_marker(
        &mut self,
        timestamp: i64,
        marker: EndTransactionMarker,
    ) -> Result<i64, BuildError> {
        self.append(timestamp, Some(&marker.key_bytes()), Some(&marker.value_bytes()), &[])
    }

    /// Appends a record at `offset`, which must exceed the previous one and not precede the
    /// base offset by more than i32 allows.
    pub fn append_with_offset(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header],
    ) -> Result<(), BuildError> {
        let base = self.options.base_offset;
        let invalid = || BuildError::InvalidOffset { offset, previous: self.last_offset, base };
        if self.last_offset.is_some_and(|last| offset <= last) {
            return Err(invalid());
        }
        let delta = offset.checked_sub(base).filter(|d| (0..=i64::from(i32::MAX)).contains(d)).ok_or_else(invalid)?;
        if self.count == i32::MAX {
            return Err(BuildError::TooLarge { what: "record count", len: self.len() });
        }
        if self.options.magic == 2 {
            self.append_v2(delta as i32, timestamp, key, value, headers)?;
        } else {
            if !headers.is_empty() {
                return Err(BuildError::HeadersNeedMagic2 { magic: self.options.magic });
            }
            self.append_legacy(offset, delta, timestamp, key, value)?;
        }
        self.count += 1;
        self.last_offset = Some(offset);
        self.max_timestamp = Some(self.max_timestamp.map_or(timestamp, |max| max.max(timestamp)));
        Ok(())
    }

    fn append_v2(
        &mut self,
        offset_delta: i32,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header],
    ) -> Result<(), BuildError> {
        let base_timestamp = *self.base_timestamp.get_or_insert(self.options.delete_horizon.unwrap_or(timestamp));
        let timestamp_delta = timestamp
            .checked_sub(base_timestamp)
            .ok_or(BuildError::TimestampOutOfRange { timestamp, base: base_timestamp })?;
        let mut size = 1 + varlong_size(timestamp_delta) + varint_size(offset_delta);
        size += nullable_len("key", key)? + nullable_len("value", value)?;
        size += varint_size(len_i32("header count", headers.len())?);
        for header in headers {
            size += varint_size(len_i32("header key", header.key.len())?) + header.key.len();
            size += nullable_len("header value", header.value.as_deref())?;
        }
        let size_i32 = len_i32("record", size)?;
        let out = &mut self.buf;
        out.reserve(size + 5);
        put_varint(out, size_i32);
        out.push(0); // record attributes: unused
        put_varlong(out, timestamp_delta);
        put_varint(out, offset_delta);
        put_nullable(out, key);
        put_nullable(out, value);
        put_varint(out, headers.len() as i32);
        for header in headers {
            put_varint(out, header.key.len() as i32);
            out.extend_from_slice(&header.key);
            put_nullable(out, header.value.as_deref());
        }
        Ok(())
    }

    fn append_legacy(
        &mut self,
        offset: i64,
        delta: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Result<(), BuildError> {
        let magic = self.options.magic;
        let compressed = self.options.compression != Compression::None;
        // Inside a compressed magic 1 wrapper offsets are relative to the base offset.
        let stored_offset = if compressed && magic == 1 { delta } else { offset };
        let log_append = self.options.log_append_time;
        let timestamp = log_append.unwrap_or(timestamp);
        let attributes = Attributes::build(Compression::None, log_append.is_some() && magic == 1, false, false, false);
        write_message(&mut self.buf, stored_offset, magic, attributes, timestamp, key, value)
    }

    /// Encodes the batch. A legacy builder with no records produces no bytes.
    pub fn build(self) -> Result<Bytes, BuildError> {
        if self.options.magic == 2 {
            self.build_v2()
        } else {
            self.build_legacy()
        }
    }

    fn build_v2(self) -> Result<Bytes, BuildError> {
        let o = self.options;
        let mut out = match o.compression {
            Compression::None => self.buf,
            codec => {
                let records = self.buf.get(V2_HEADER_LEN..).unwrap_or_default();
                let compressed = compression::compress_at(codec, 2, records, o.compression_level)?;
                let mut out = Vec::with_capacity(V2_HEADER_LEN + compressed.len());
                out.resize(V2_HEADER_LEN, 0);
                out.extend_from_slice(&compressed);
                out
            }
        };
        let batch_length = len_i32("batch", out.len() - LOG_OVERHEAD)?;
        let base_timestamp = self.base_timestamp.or(o.delete_horizon).unwrap_or(NO_TIMESTAMP);
        let max_timestamp = o.log_append_time.or(self.max_timestamp).unwrap_or(NO_TIMESTAMP);
        let last_offset_delta = self.last_offset.map_or(0, |last| last.wrapping_sub(o.base_offset) as i32);
        let attributes = Attributes::build(
            o.compression,
            o.log_append_time.is_some(),
            o.transactional,
            o.control,
            o.delete_horizon.is_some(),
        );
        let mut header = Vec::with_capacity(V2_HEADER_LEN);
        header.extend_from_slice(&o.base_offset.to_be_bytes());
        header.extend_from_slice(&batch_length.to_be_bytes());
        header.extend_from_slice(&o.partition_leader_epoch.to_be_bytes());
        header.push(2);
        header.extend_from_slice(&[0; 4]); // CRC, below
        header.extend_from_slice(&attributes.0.to_be_bytes());
        header.extend_from_slice(&last_offset_delta.to_be_bytes());
        header.extend_from_slice(&base_timestamp.to_be_bytes());
        header.extend_from_slice(&max_timestamp.to_be_bytes());
        header.extend_from_slice(&o.producer_id.to_be_bytes());
        header.extend_from_slice(&o.producer_epoch.to_be_bytes());
        header.extend_from_slice(&o.base_sequence.to_be_bytes());
        header.extend_from_slice(&self.count.to_be_bytes());
        if let Some(slot) = out.get_mut(..V2_HEADER_LEN) {
            slot.copy_from_slice(&header);
        }
        let crc = super::checksum::crc32c(out.get(V2_CRC_START..).unwrap_or_default());
        if let Some(slot) = out.get_mut(V2_CRC_AT..V2_CRC_START) {
            slot.copy_from_slice(&crc.to_be_bytes());
        }
        Ok(Bytes::from(out))
    }

    fn build_legacy(self) -> Result<Bytes, BuildError> {
        let o = self.options;
        let (Some(last_offset), codec) = (self.last_offset, o.compression) else {
            return Ok(Bytes::new());
        };
        if codec == Compression::None {
            return Ok(Bytes::from(self.buf));
        }
        let compressed = compression::compress_at(codec, o.magic, &self.buf, o.compression_level)?;
        let log_append = o.log_append_time.is_some() && o.magic == 1;
        let timestamp = o.log_append_time.or(self.max_timestamp).unwrap_or(NO_TIMESTAMP);
        let attributes = Attributes::build(codec, log_append, false, false, false);
        let mut out = Vec::with_capacity(compressed.len() + 40);
        write_message(&mut out, last_offset, o.magic, attributes, timestamp, None, Some(&compressed))?;
        Ok(Bytes::from(out))
    }
}

/// Appends one legacy message entry (offset, size, CRC-32, magic, attributes, [timestamp],
/// key, value).
fn write_message(
    out: &mut Vec<u8>,
    offset: i64,
    magic: i8,
    attributes: Attributes,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<(), BuildError> {
    let key_len = key.map(|k| len_i32("key", k.len())).transpose()?;
    let value_len = value.map(|v| len_i32("value", v.len())).transpose()?;
    let payload = key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len);
    let size = 4 + 1 + 1 + if magic == 1 { 8 } else { 0 } + 4 + 4 + payload;
    let size_i32 = len_i32("message", size)?;
    let start = out.len();
    out.reserve(LOG_OVERHEAD + size);
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&size_i32.to_be_bytes());
    out.extend_from_slice(&[0; 4]); // CRC, below
    out.push(magic as u8);
    out.push(attributes.0 as u8);
    if magic == 1 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    out.extend_from_slice(&key_len.unwrap_or(-1).to_be_bytes());
    out.extend_from_slice(key.unwrap_or_default());
    out.extend_from_slice(&value_len.unwrap_or(-1).to_be_bytes());
    out.extend_from_slice(value.unwrap_or_default());
    let crc = crc32fast::hash(out.get(start + 16..).unwrap_or_default());
    if let Some(slot) = out.get_mut(start + 12..start + 16) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{put_varlong, varlong_size};

    #[test]
    fn varlong_size_matches_encoding() {
        for v in [0, 1, -1, 63, -64, 64, 8191, 8192, i64::MAX, i64::MIN, 1 << 40, -(1 << 40)] {
            let mut out = Vec::new();
            put_varlong(&mut out, v);
            assert_eq!(varlong_size(v), out.len(), "{v}");
        }
    }
}
