//! Kafka record data: the contents of `records` fields (RecordBatch v2 and legacy message sets).
//!
//! [`Records`] wraps the raw bytes without copying. [`Records::batches`] walks them lazily,
//! reading only batch headers; [`Batch::records`] checks the CRC, decompresses within a limit
//! and yields [`Record`]s that share the buffer. [`BatchBuilder`] encodes batches of every
//! magic and codec, and [`Records::verify`] names the first bad batch.

mod attributes;
mod batch;
mod batch_v2;
mod builder;
pub mod compression;
mod cursor;
mod error;
mod legacy;
mod record;
mod record_v2;

use bytes::Bytes;

pub use attributes::Attributes;
pub use batch::{AllRecords, Batch, BatchRecords, Batches, ReadOptions};
pub use batch_v2::{RecordBatch, RecordBatchData, RecordBatchHeader, RecordBatchRecords, V2_HEADER_LEN};
pub use builder::{BatchBuilder, BatchOptions};
pub use compression::{Compression, DEFAULT_MAX_DECOMPRESSED_SIZE};
pub use error::{BuildError, Malformation, RecordsError, RecordsErrorKind};
pub use legacy::{LegacyBatch, LegacyMessageHeader, LegacyRecords, LOG_OVERHEAD};
pub use record::{ControlRecordType, EndTransactionMarker, Header, Record, TimestampType, NO_TIMESTAMP};
pub use record_v2::{HeaderRefs, RecordRef, RecordRefs};

/// The raw bytes of a `records` field, shared with the buffer they were decoded from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Records {
    bytes: Bytes,
}

impl Records {
    /// Wraps encoded record data without copying it.
    pub fn from_bytes(bytes: Bytes) -> Self {
        Records { bytes }
    }

    /// The encoded record data.
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// Unwraps the encoded record data.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// Size of the encoded record data in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether there is no record data at all.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The batches, lazily: headers only, no CRC check or decompression until asked.
    pub fn batches(&self) -> Batches {
        Batches::new(self.bytes.clone())
    }

    /// Every record of every batch with default [`ReadOptions`] (CRCs checked).
    pub fn records(&self) -> AllRecords {
        self.records_with(ReadOptions::default())
    }

    /// Every record of every batch.
    pub fn records_with(&self, options: ReadOptions) -> AllRecords {
        AllRecords::new(self.batches(), options)
    }

    /// Decodes every record of every batch into one vector, sized from the batch headers
    /// (never beyond what the bytes present could hold). Stops at the first error, including
    /// a partial trailing batch.
    ///
    /// Every record shares the buffer its batch decompressed into, and the vector holds every
    /// batch at once: memory is the sum of all batches' decompressed sizes, each bounded by
    /// [`ReadOptions::max_decompressed_size`]. For data from untrusted peers, stream instead,
    /// one batch at a time ([`Records::batches`], then [`Batch::records_with`] or, without
    /// reference counting, `RecordBatch::record_data(..)?.iter()`): memory is then bounded by
    /// one batch, whatever the number of batches.
    pub fn to_vec(&self, options: ReadOptions) -> Result<Vec<Record>, RecordsError> {
        let mut out = Vec::new();
        for batch in self.batches() {
            let records = batch?.records_with(&options)?;
            out.reserve(records.size_hint().1.unwrap_or(0));
            for record in records {
                out.push(record?);
            }
        }
        Ok(out)
    }

    /// Checks every batch's structure and CRC without decompressing. Returns the first bad
    /// batch as an error; a partial trailing batch is not an error but is reported in the
    /// summary.
    pub fn verify(&self) -> Result<Verified, RecordsError> {
        let mut summary = Verified { batches: 0, truncated_tail: None };
        for batch in self.batches() {
            match batch {
                Ok(batch) => {
                    batch.verify_crc()?;
                    summary.batches += 1;
                }
                Err(e) if e.is_truncated() => summary.truncated_tail = Some(e),
                Err(e) => return Err(e),
            }
        }
        Ok(summary)
    }
}

impl From<Bytes> for Records {
    fn from(bytes: Bytes) -> Self {
        Records::from_bytes(bytes)
    }
}

/// What [`Records::verify`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Complete batches whose CRC matched.
    pub batches: usize,
    /// The partial batch at the end, if the data stops inside one.
    pub truncated_tail: Option<RecordsError>,
}
