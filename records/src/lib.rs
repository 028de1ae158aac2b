//! Kafka record data: the contents of `records` fields (RecordBatch v2 and legacy message sets).
//!
//! [`Records`] wraps the raw bytes without copying. [`RecordsExt::batches`] walks them lazily,
//! reading only batch headers; [`Batch::records`] checks the CRC, decompresses within a limit
//! and yields [`Record`]s that share the buffer. [`BatchBuilder`] encodes batches of every
//! magic and codec, and [`RecordsExt::verify`] names the first bad batch.

mod attributes;
mod batch;
mod batch_v2;
mod builder;
mod checksum;
pub mod compression;
mod error;
mod legacy;
mod record;
mod record_v2;

pub use kwire_runtime::Records;

pub use attributes::Attributes;
pub use batch::{AllRecords, Batch, BatchRecords, Batches, ReadOptions};
pub use batch_v2::{RecordBatch, RecordBatchData, RecordBatchHeader, RecordBatchRecords, V2_HEADER_LEN};
pub use builder::{BatchBuilder, BatchOptions};
pub use checksum::crc32c;
pub use compression::{Compression, DEFAULT_MAX_DECOMPRESSED_SIZE};
pub use error::{BuildError, Malformation, RecordsError, RecordsErrorKind};
pub use legacy::{LegacyBatch, LegacyMessageHeader, LegacyRecords, LOG_OVERHEAD};
pub use record::{ControlRecordType, EndTransactionMarker, Header, Record, TimestampType, NO_TIMESTAMP};
pub use record_v2::{HeaderRefs, RecordRef, RecordRefs};

use record_v2::MAX_RESERVED_RECORDS;

/// Reading record data held in a [`Records`] field of a generated message.
///
/// [`Records`] itself lives in `kwire-runtime` as raw bytes, so generated messages need
/// no codec; this trait adds the reading this crate knows how to do.
pub trait RecordsExt {
    /// The batches, lazily: headers only, no CRC check or decompression until asked.
    fn batches(&self) -> Batches;

    /// Every record of every batch with default [`ReadOptions`] (CRCs checked).
    fn records(&self) -> AllRecords {
        self.records_with(ReadOptions::default())
    }

    /// Every record of every batch.
    fn records_with(&self, options: ReadOptions) -> AllRecords {
        AllRecords::new(self.batches(), options)
    }

    /// Decodes every record of every batch into one vector, growing with the records decoded
    /// (record counts beyond what the bytes could hold are refused; see
    /// [`Malformation::CountExceedsBytes`]). Stops at the first error, including a partial
    /// trailing batch.
    ///
    /// Every record shares the buffer its batch decompressed into, and the vector holds every
    /// batch at once: memory is the sum of all batches' decompressed sizes, each bounded by
    /// [`ReadOptions::max_decompressed_size`]. For data from untrusted peers, stream instead,
    /// one batch at a time ([`RecordsExt::batches`], then [`Batch::records_with`] or, without
    /// reference counting, `RecordBatch::record_data(..)?.iter()`): memory is then bounded by
    /// one batch, whatever the number of batches.
    fn to_vec(&self, options: ReadOptions) -> Result<Vec<Record>, RecordsError> {
        let mut out = Vec::new();
        for batch in self.batches() {
            match batch?.records_with(&options)? {
                BatchRecords::V2(records) => records.append_to(&mut out)?,
                records => {
                    out.reserve(records.size_hint().1.unwrap_or(0).min(MAX_RESERVED_RECORDS));
                    for record in records {
                        out.push(record?);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Checks every batch's structure and CRC without decompressing. Returns the first bad
    /// batch as an error; a partial trailing batch is not an error but is reported in the
    /// summary.
    fn verify(&self) -> Result<Verified, RecordsError> {
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

impl RecordsExt for Records {
    fn batches(&self) -> Batches {
        Batches::new(self.as_bytes().clone())
    }
}

/// What [`RecordsExt::verify`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Complete batches whose CRC matched.
    pub batches: usize,
    /// The partial batch at the end, if the data stops inside one.
    pub truncated_tail: Option<RecordsError>,
}

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
