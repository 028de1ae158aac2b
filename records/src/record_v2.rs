//! The magic 2 record layout, parsed once into field positions; both owned [`Record`]s and
//! borrowed [`RecordRef`]s are built from that.
//!
//! `length: varint, attributes: i8, timestamp_delta: varlong, offset_delta: varint,
//! key: varint-prefixed bytes (-1 null), value: same, headers: varint count, then
//! (key: varint-prefixed string, value: varint-prefixed bytes, -1 null) pairs`.
//!
//! [`Record`]: super::Record

use std::ops::Range;

use super::error::{Malformation, RecordsError, RecordsErrorKind};
use super::record::TimestampType;
use kwire_runtime::reader::SliceReader;

/// The smallest record: length, attributes, timestamp and offset deltas, key and value lengths
/// and header count, one byte each.
pub(crate) const MIN_RECORD_SIZE: usize = 7;
/// The smallest header: key length and value length, one byte each.
const MIN_HEADER_SIZE: usize = 2;
/// The most records reserved ahead of decoding them: a record decodes to some 16 times its
/// smallest encoding, so even a checked count reserves no more than this, and the vector
/// grows with the records that do decode.
pub(crate) const MAX_RESERVED_RECORDS: usize = 1024;

/// Checks `count` elements of at least `min_size` bytes against the `available` bytes left.
pub(crate) fn check_count(count: usize, min_size: usize, available: usize) -> Result<(), Malformation> {
    let max = available / min_size;
    if count > max {
        return Err(Malformation::CountExceedsBytes { count: count as u64, available, max });
    }
    Ok(())
}

/// Batch header fields that turn record deltas into offsets and timestamps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordContext {
    pub(crate) base_offset: i64,
    pub(crate) base_timestamp: i64,
    /// The batch's max timestamp when it uses log-append time.
    pub(crate) log_append_time: Option<i64>,
}

impl RecordContext {
    #[inline]
    pub(crate) fn offset(&self, delta: i32) -> i64 {
        self.base_offset.wrapping_add(i64::from(delta))
    }

    #[inline]
    pub(crate) fn timestamp(&self, delta: i64) -> (i64, TimestampType) {
        match self.log_append_time {
            Some(t) => (t, TimestampType::LogAppendTime),
            None => (self.base_timestamp.wrapping_add(delta), TimestampType::CreateTime),
        }
    }
}

/// Where one record's fields lie.
pub(crate) struct RawRecord {
    pub(crate) offset_delta: i32,
    pub(crate) timestamp_delta: i64,
    pub(crate) key: Option<Range<usize>>,
    pub(crate) value: Option<Range<usize>>,
    pub(crate) headers: Range<usize>,
    pub(crate) header_count: usize,
    /// Position after the record.
    pub(crate) end: usize,
}

fn bad<E: Into<Malformation>>(
    structure: &'static str,
    field: &'static str,
    offset: usize,
) -> impl Fn(E) -> RecordsErrorKind {
    move |problem| RecordsErrorKind::Malformed { structure, field, offset, problem: problem.into() }
}

/// Parses and validates the record at `start`, passing each header's key and value ranges to
/// `on_header`.
#[inline]
pub(crate) fn parse_record(
    data: &[u8],
    start: usize,
    mut on_header: impl FnMut(Range<usize>, Option<Range<usize>>),
) -> Result<RawRecord, RecordsErrorKind> {
    let mut c = SliceReader::new(data, start);
    let length = c.get_varint().map_err(bad("Record", "length", start))?;
    let body_start = c.position();
    let length = usize::try_from(length)
        .map_err(|_| bad("Record", "length", start)(Malformation::InvalidLength(length.into())))?;
    let body_end = body_start.checked_add(length).filter(|&end| end <= data.len()).ok_or_else(|| {
        bad("Record", "length", start)(Malformation::NotEnoughBytes { requested: length, available: c.remaining() })
    })?;
    let mut c = SliceReader::new(data.get(..body_end).unwrap_or_default(), body_start);

    let at = c.position();
    c.get_i8().map_err(bad("Record", "attributes", at))?;
    let at = c.position();
    let timestamp_delta = c.get_varlong().map_err(bad("Record", "timestamp_delta", at))?;
    let at = c.position();
    let offset_delta = c.get_varint().map_err(bad("Record", "offset_delta", at))?;
    let key = nullable(&mut c, "Record", "key")?;
    let value = nullable(&mut c, "Record", "value")?;
    let at = c.position();
    let header_count = c.get_varint().map_err(bad("Record", "headers", at))?;
    let header_count = usize::try_from(header_count)
        .map_err(|_| bad("Record", "headers", at)(Malformation::InvalidLength(header_count.into())))?;
    check_count(header_count, MIN_HEADER_SIZE, c.remaining()).map_err(bad("Record", "headers", at))?;
    let headers_start = c.position();
    for _ in 0..header_count {
        let at = c.position();
        let key_len = c.get_varint().map_err(bad("Header", "key", at))?;
        let key_len = usize::try_from(key_len)
            .map_err(|_| bad("Header", "key", at)(Malformation::InvalidLength(key_len.into())))?;
        let key = c.skip(key_len).map_err(bad("Header", "key", at))?;
        let value = nullable(&mut c, "Header", "value")?;
        on_header(key, value);
    }
    let used = c.position() - body_start;
    if used != length {
        return Err(bad("Record", "length", start)(Malformation::LengthMismatch { declared: length, used }));
    }
    Ok(RawRecord {
        offset_delta,
        timestamp_delta,
        key,
        value,
        headers: headers_start..body_end,
        header_count,
        end: body_end,
    })
}

/// A varint length then that many bytes; -1 is null.
#[inline]
fn nullable(
    c: &mut SliceReader<'_>,
    structure: &'static str,
    field: &'static str,
) -> Result<Option<Range<usize>>, RecordsErrorKind> {
    let at = c.position();
    let len = c.get_varint().map_err(bad(structure, field, at))?;
    if len == -1 {
        return Ok(None);
    }
    let len = usize::try_from(len).map_err(|_| bad(structure, field, at)(Malformation::InvalidLength(len.into())))?;
    c.skip(len).map(Some).map_err(bad(structure, field, at))
}

/// The error for bytes left after the last record, if any are.
pub(crate) fn trailing_bytes(data: &[u8], pos: usize) -> Option<RecordsErrorKind> {
    let left = data.len().saturating_sub(pos);
    (left != 0).then_some(RecordsErrorKind::Malformed {
        structure: "RecordBatch",
        field: "records",
        offset: pos,
        problem: Malformation::TrailingBytes(left),
    })
}

/// A record borrowed from its batch's data: no copies, no reference counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// Absolute offset.
    pub offset: i64,
    /// Milliseconds since the epoch.
    pub timestamp: i64,
    /// What `timestamp` means.
    pub timestamp_type: TimestampType,
    /// The key, `None` for null.
    pub key: Option<&'a [u8]>,
    /// The value, `None` for null.
    pub value: Option<&'a [u8]>,
    headers: &'a [u8],
    header_count: usize,
}

impl<'a> RecordRef<'a> {
    /// Number of headers.
    pub fn header_count(&self) -> usize {
        self.header_count
    }

    /// The headers as `(key, value)` pairs, in wire order (already validated).
    pub fn headers(&self) -> HeaderRefs<'a> {
        HeaderRefs { cursor: SliceReader::new(self.headers, 0), data: self.headers, remaining: self.header_count }
    }
}

/// Iterator over a [`RecordRef`]'s headers.
pub struct HeaderRefs<'a> {
    cursor: SliceReader<'a>,
    data: &'a [u8],
    remaining: usize,
}

impl<'a> Iterator for HeaderRefs<'a> {
    type Item = (&'a [u8], Option<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        // The record parser validated these bytes; stop rather than panic if that changes.
        let key_len = usize::try_from(self.cursor.get_varint().ok()?).ok()?;
        let key = self.data.get(self.cursor.skip(key_len).ok()?)?;
        let value = match self.cursor.get_varint().ok()? {
            -1 => None,
            len => Some(self.data.get(self.cursor.skip(usize::try_from(len).ok()?).ok()?)?),
        };
        Some((key, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining))
    }
}

/// Iterator over borrowed records of one magic 2 batch.
pub struct RecordRefs<'a> {
    data: &'a [u8],
    pos: usize,
    remaining: u32,
    context: RecordContext,
    index: usize,
    position: usize,
    done: bool,
}

impl<'a> RecordRefs<'a> {
    pub(crate) fn new(
        data: &'a [u8],
        pos: usize,
        remaining: u32,
        context: RecordContext,
        index: usize,
        position: usize,
    ) -> Self {
        RecordRefs { data, pos, remaining, context, index, position, done: false }
    }
}

impl<'a> Iterator for RecordRefs<'a> {
    type Item = Result<RecordRef<'a>, RecordsError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let fail = |kind| RecordsError::new(self.index, self.position, kind);
        if self.remaining == 0 {
            self.done = true;
            return trailing_bytes(self.data, self.pos).map(|kind| Err(fail(kind)));
        }
        match parse_record(self.data, self.pos, |_, _| {}) {
            Ok(raw) => {
                self.pos = raw.end;
                self.remaining -= 1;
                let (timestamp, timestamp_type) = self.context.timestamp(raw.timestamp_delta);
                let data = self.data;
                Some(Ok(RecordRef {
                    offset: self.context.offset(raw.offset_delta),
                    timestamp,
                    timestamp_type,
                    key: raw.key.and_then(|r| data.get(r)),
                    value: raw.value.and_then(|r| data.get(r)),
                    headers: data.get(raw.headers).unwrap_or_default(),
                    header_count: raw.header_count,
                }))
            }
            Err(kind) => {
                self.done = true;
                Some(Err(fail(kind)))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            (0, Some(records_upper_bound(self.remaining as usize, self.data.len().saturating_sub(self.pos))))
        }
    }
}

/// Upper bound on the items left: the records the batch claims, capped by the bytes left at
/// [`MIN_RECORD_SIZE`] each, plus one for an error (so a corrupt count cannot inflate it).
pub(crate) fn records_upper_bound(claimed: usize, bytes_left: usize) -> usize {
    claimed.min(bytes_left / MIN_RECORD_SIZE + 1)
}
