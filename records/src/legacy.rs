//! Legacy message sets, magic 0 (Kafka 0.8-0.9) and magic 1 (0.10): one message per entry,
//! CRC-32 over magic..end, and compressed "wrapper" messages whose value is an inner message
//! set. Inner offsets are absolute for magic 0 and relative to the wrapper for magic 1.

use std::ops::Range;

use bytes::Bytes;

use super::attributes::Attributes;
use super::compression::{self, Compression};
use super::error::{Malformation, RecordsError, RecordsErrorKind};
use super::record::{Record, TimestampType, NO_TIMESTAMP};
use super::ReadOptions;
use kwire_runtime::reader::SliceReader;

/// Offset and size fields in front of every message.
pub const LOG_OVERHEAD: usize = 12;
/// Smallest message (crc, magic, attributes, key and value lengths) for magic 0.
pub const MESSAGE_V0_MIN_SIZE: usize = 14;
/// Smallest message for magic 1 (adds the timestamp).
pub const MESSAGE_V1_MIN_SIZE: usize = 22;
/// Where the CRC-32 coverage starts in an entry (the magic byte).
pub(crate) const LEGACY_CRC_START: usize = 16;

/// The fields of a legacy message, keys and values excluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LegacyMessageHeader {
    /// The offset; for a compressed wrapper, that of its last inner message.
    pub offset: i64,
    /// Bytes after the size field.
    pub message_size: i32,
    /// CRC-32 of magic..end.
    pub crc: u32,
    /// 0 or 1.
    pub magic: i8,
    /// Codec (bits 0-2) and, for magic 1, timestamp type (bit 3).
    pub attributes: Attributes,
    /// Magic 1 only.
    pub timestamp: Option<i64>,
}

/// A parsed message entry: header plus where its key and value lie.
#[derive(Debug, Clone)]
struct MessageView {
    header: LegacyMessageHeader,
    key: Option<Range<usize>>,
    value: Option<Range<usize>>,
    end: usize,
}

fn malformed<E: Into<Malformation>>(field: &'static str, offset: usize) -> impl Fn(E) -> RecordsErrorKind {
    move |problem| RecordsErrorKind::Malformed { structure: "Message", field, offset, problem: problem.into() }
}

/// Parses the message entry at `start`; the whole entry must lie inside `data`.
fn parse_message(data: &[u8], start: usize) -> Result<MessageView, RecordsErrorKind> {
    let mut c = SliceReader::new(data, start);
    let offset = c.get_i64().map_err(malformed("offset", start))?;
    let size_at = c.position();
    let message_size = c.get_i32().map_err(malformed("message_size", size_at))?;
    let size = usize::try_from(message_size)
        .ok()
        .filter(|&size| size >= MESSAGE_V0_MIN_SIZE)
        .ok_or_else(|| malformed("message_size", size_at)(Malformation::InvalidLength(i64::from(message_size))))?;
    let end = c.position().checked_add(size).filter(|&end| end <= data.len()).ok_or_else(|| {
        malformed("message_size", size_at)(Malformation::NotEnoughBytes { requested: size, available: c.remaining() })
    })?;
    let mut c = SliceReader::new(data.get(..end).unwrap_or_default(), c.position());
    let crc = c.get_u32().map_err(malformed("crc", start + 12))?;
    let magic = c.get_i8().map_err(malformed("magic", start + 16))?;
    if magic != 0 && magic != 1 {
        return Err(RecordsErrorKind::UnsupportedMagic(magic));
    }
    let attributes = c.get_i8().map_err(malformed("attributes", start + 17))?;
    let attributes = Attributes(i16::from(attributes as u8));
    let timestamp = if magic == 1 { Some(c.get_i64().map_err(malformed("timestamp", start + 18))?) } else { None };
    let key = read_bytes(&mut c, "key")?;
    let value = read_bytes(&mut c, "value")?;
    if c.position() != end {
        return Err(malformed("value", c.position())(Malformation::TrailingBytes(end - c.position())));
    }
    Ok(MessageView {
        header: LegacyMessageHeader { offset, message_size, crc, magic, attributes, timestamp },
        key,
        value,
        end,
    })
}

/// An i32 length then that many bytes; -1 is null.
fn read_bytes(c: &mut SliceReader<'_>, field: &'static str) -> Result<Option<Range<usize>>, RecordsErrorKind> {
    let at = c.position();
    let len = c.get_i32().map_err(malformed(field, at))?;
    if len == -1 {
        return Ok(None);
    }
    let len = usize::try_from(len).map_err(|_| malformed(field, at)(Malformation::InvalidLength(i64::from(len))))?;
    c.skip(len).map(Some).map_err(malformed(field, at))
}

fn crc_of(entry: &[u8]) -> u32 {
    crc32fast::hash(entry.get(LEGACY_CRC_START..).unwrap_or_default())
}

/// One outer legacy message: a single record, or a compressed wrapper holding many.
#[derive(Debug, Clone)]
pub struct LegacyBatch {
    view: MessageView,
    bytes: Bytes,
    index: usize,
    position: usize,
}

impl PartialEq for LegacyBatch {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes && self.index == other.index && self.position == other.position
    }
}

impl Eq for LegacyBatch {}

impl LegacyBatch {
    /// Parses a complete entry (its length already checked against the data).
    pub(crate) fn parse(bytes: Bytes, index: usize, position: usize) -> Result<Self, RecordsError> {
        let view = parse_message(&bytes, 0).map_err(|kind| RecordsError::new(index, position, kind))?;
        Ok(LegacyBatch { view, bytes, index, position })
    }

    fn error(&self, kind: RecordsErrorKind) -> RecordsError {
        RecordsError::new(self.index, self.position, kind)
    }

    /// Position of this entry among the batches of its `records` field.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Byte position of this entry inside its `records` field.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The outer message's fields.
    pub fn header(&self) -> &LegacyMessageHeader {
        &self.view.header
    }

    /// The entry's bytes, from offset to the end.
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The codec, or an error if the id names none valid for magic 0/1.
    pub fn compression(&self) -> Result<Compression, RecordsError> {
        let attributes = self.view.header.attributes;
        match attributes.compression() {
            Some(codec) if codec.allowed_for_magic(self.view.header.magic) => Ok(codec),
            _ => Err(self
                .error(RecordsErrorKind::InvalidCodec { codec: attributes.codec_id(), magic: self.view.header.magic })),
        }
    }

    /// Checks the outer message's CRC-32.
    pub fn verify_crc(&self) -> Result<(), RecordsError> {
        let computed = crc_of(&self.bytes);
        if computed != self.view.header.crc {
            return Err(self.error(RecordsErrorKind::CrcMismatch { stored: self.view.header.crc, computed }));
        }
        Ok(())
    }

    /// The records: the message itself, or the inner messages of a compressed wrapper.
    ///
    /// Inner offsets follow Kafka's `DeepRecordsIterator`: for magic 1 they are relative, and
    /// the absolute base is the wrapper offset minus the last inner offset (used only when
    /// that is not negative); for magic 0 they are absolute already. With log-append time
    /// the wrapper's timestamp applies to every inner record.
    pub fn records(&self, options: &ReadOptions) -> Result<LegacyRecords, RecordsError> {
        if options.verify_crc {
            self.verify_crc()?;
        }
        let header = self.view.header;
        let timestamp_type = header.attributes.timestamp_type(header.magic);
        let codec = self.compression()?;
        if codec == Compression::None {
            let record = Record {
                offset: header.offset,
                timestamp: header.timestamp.unwrap_or(NO_TIMESTAMP),
                timestamp_type,
                key: self.view.key.clone().map(|r| self.bytes.slice(r)),
                value: self.view.value.clone().map(|r| self.bytes.slice(r)),
                headers: Vec::new(),
            };
            return Ok(LegacyRecords { inner: Inner::Single(Some(record)) });
        }
        let value = self.view.value.clone().ok_or_else(|| {
            self.error(RecordsErrorKind::Malformed {
                structure: "Message",
                field: "value",
                offset: self.view.end,
                problem: Malformation::NullWrapperValue,
            })
        })?;
        let compressed = self.bytes.get(value).unwrap_or_default();
        let plain = compression::decompress(codec, header.magic, compressed, options.max_decompressed_size)
            .map_err(|kind| self.error(kind))?;
        let data = Bytes::from(plain);
        let last_inner_offset = scan_last_offset(&data).map_err(|kind| self.error(kind))?;
        let absolute_base = match header.magic {
            0 => None,
            _ => Some(header.offset.wrapping_sub(last_inner_offset)).filter(|&base| base >= 0),
        };
        let wrapper_timestamp = match timestamp_type {
            TimestampType::LogAppendTime => header.timestamp,
            _ => None,
        };
        Ok(LegacyRecords {
            inner: Inner::Wrapped(WrappedRecords {
                data,
                pos: 0,
                magic: header.magic,
                absolute_base,
                wrapper_timestamp,
                timestamp_type,
                verify_crc: options.verify_crc,
                index: self.index,
                position: self.position,
                done: false,
            }),
        })
    }
}

/// Walks the inner set's entries for the offset of the last one.
fn scan_last_offset(data: &[u8]) -> Result<i64, RecordsErrorKind> {
    let mut pos = 0;
    let mut last = None;
    while pos < data.len() {
        let mut c = SliceReader::new(data, pos);
        let offset = c.get_i64().map_err(malformed("offset", pos))?;
        let size_at = c.position();
        let size = c.get_i32().map_err(malformed("message_size", size_at))?;
        let size = usize::try_from(size)
            .map_err(|_| malformed("message_size", size_at)(Malformation::InvalidLength(i64::from(size))))?;
        c.skip(size).map_err(malformed("message_size", size_at))?;
        last = Some(offset);
        pos = c.position();
    }
    last.ok_or(RecordsErrorKind::Malformed {
        structure: "Message",
        field: "value",
        offset: 0,
        problem: Malformation::EmptyWrapper,
    })
}

/// Iterator over the records of one legacy entry.
#[derive(Debug, Clone)]
pub struct LegacyRecords {
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    Single(Option<Record>),
    Wrapped(WrappedRecords),
}

#[derive(Debug, Clone)]
struct WrappedRecords {
    data: Bytes,
    pos: usize,
    magic: i8,
    absolute_base: Option<i64>,
    wrapper_timestamp: Option<i64>,
    timestamp_type: TimestampType,
    verify_crc: bool,
    index: usize,
    position: usize,
    done: bool,
}

impl WrappedRecords {
    fn next_record(&mut self) -> Result<Record, RecordsErrorKind> {
        let view = parse_message(&self.data, self.pos)?;
        let header = view.header;
        if header.magic != self.magic {
            return Err(malformed("magic", self.pos + 16)(Malformation::MagicMismatch {
                wrapper: self.magic,
                inner: header.magic,
            }));
        }
        if header.attributes.codec_id() != 0 {
            return Err(malformed("attributes", self.pos + 17)(Malformation::NestedCompression));
        }
        if self.verify_crc {
            let computed = crc_of(self.data.get(self.pos..view.end).unwrap_or_default());
            if computed != header.crc {
                return Err(RecordsErrorKind::CrcMismatch { stored: header.crc, computed });
            }
        }
        let offset = match self.absolute_base {
            Some(base) => base.wrapping_add(header.offset),
            None => header.offset,
        };
        let timestamp = self.wrapper_timestamp.or(header.timestamp).unwrap_or(NO_TIMESTAMP);
        self.pos = view.end;
        Ok(Record {
            offset,
            timestamp,
            timestamp_type: self.timestamp_type,
            key: view.key.map(|r| self.data.slice(r)),
            value: view.value.map(|r| self.data.slice(r)),
            headers: Vec::new(),
        })
    }
}

impl Iterator for LegacyRecords {
    type Item = Result<Record, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Single(record) => record.take().map(Ok),
            Inner::Wrapped(w) => {
                if w.done || w.pos >= w.data.len() {
                    w.done = true;
                    return None;
                }
                match w.next_record() {
                    Ok(record) => Some(Ok(record)),
                    Err(kind) => {
                        w.done = true;
                        Some(Err(RecordsError::new(w.index, w.position, kind)))
                    }
                }
            }
        }
    }
}
