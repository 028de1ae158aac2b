//! One partition's batch: open while records are appended (a [`BatchBuilder`] filling its
//! buffer: the one copy of each key and value), then closed: built once, with its producer
//! id, epoch and sequence, compressed and checksummed, into the [`Bytes`] the Produce request
//! carries as they are.

use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

use super::delivery::Outcome;
use super::error::ProduceError;
use super::idempotence::Identity;

/// Where the producer's fields and the CRC sit in a v2 batch header (Kafka's
/// `DefaultRecordBatch`): CRC at 17, covering 21 to the end; producer id at 43, epoch at 51,
/// base sequence at 53.
const CRC_AT: usize = 17;
const CRC_FROM: usize = 21;
const PRODUCER_ID_AT: usize = 43;
const PRODUCER_EPOCH_AT: usize = 51;
const BASE_SEQUENCE_AT: usize = 53;
const HEADER_LEN: usize = 61;

/// A batch taking records.
pub(crate) struct OpenBatch {
    builder: BatchBuilder,
    pub outcome: Arc<Outcome>,
    pub created: Instant,
    /// `buffer.memory` bytes its records hold.
    pub memory: usize,
    /// What the batch will take once its records are in: their upper-bound sizes.
    pub estimated: usize,
}

impl OpenBatch {
    pub fn new(compression: Compression, transactional: bool, capacity: usize, now: Instant) -> OpenBatch {
        let options = BatchOptions { transactional, ..BatchOptions::new(2, compression) };
        // Magic 2 with a built codec never fails (the config checked the codec).
        let builder = BatchBuilder::with_capacity(options, capacity)
            .unwrap_or_else(|_| BatchBuilder::new(BatchOptions::default()).expect("magic 2, no codec"));
        OpenBatch { builder, outcome: Outcome::new(), created: now, memory: 0, estimated: HEADER_LEN }
    }

    pub fn records(&self) -> usize {
        self.builder.len()
    }

    /// Appends a record; its offset delta.
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[kwire_records::Header],
        estimate: usize,
    ) -> Result<i32, ProduceError> {
        let delta = self
            .builder
            .append(timestamp, key, value, headers)
            .map_err(|e| ProduceError::InvalidRecord(e.to_string()))?;
        self.estimated += estimate;
        self.memory += estimate;
        Ok(delta as i32)
    }

    /// Builds the batch with `identity` and `base_sequence` (-1s for a producer that is not
    /// idempotent).
    pub fn close(
        mut self,
        identity: Identity,
        base_sequence: i32,
    ) -> Result<ProducerBatch, (Arc<Outcome>, ProduceError)> {
        let records = self.builder.len() as i32;
        let uncompressed = self.builder.size();
        self.builder.set_producer(identity.id, identity.epoch, base_sequence);
        match self.builder.build() {
            Ok(bytes) => Ok(ProducerBatch {
                bytes,
                records,
                uncompressed,
                outcome: self.outcome,
                created: self.created,
                memory: self.memory,
                attempts: 0,
                base_sequence,
                identity,
            }),
            Err(e) => Err((self.outcome, ProduceError::InvalidRecord(e.to_string()))),
        }
    }
}

/// A closed batch, waiting to be sent or in flight.
pub(crate) struct ProducerBatch {
    pub bytes: Bytes,
    pub records: i32,
    /// Its records' bytes before compression.
    pub uncompressed: usize,
    pub outcome: Arc<Outcome>,
    pub created: Instant,
    pub memory: usize,
    /// Times sent so far.
    pub attempts: u32,
    /// -1 unless idempotent.
    pub base_sequence: i32,
    pub identity: Identity,
}

impl ProducerBatch {
    /// The sequence of its last record.
    pub fn last_sequence(&self) -> i32 {
        add_sequence(self.base_sequence, self.records - 1)
    }

    /// Rewrites the producer's fields and the CRC for a new epoch or producer id and a new
    /// base sequence (after an epoch bump, KIP-360); the records are not touched.
    pub fn restamp(&mut self, identity: Identity, base_sequence: i32) {
        let mut bytes =
            std::mem::take(&mut self.bytes).try_into_mut().unwrap_or_else(|shared| BytesMut::from(&shared[..]));
        if bytes.len() >= HEADER_LEN {
            bytes[PRODUCER_ID_AT..PRODUCER_ID_AT + 8].copy_from_slice(&identity.id.to_be_bytes());
            bytes[PRODUCER_EPOCH_AT..PRODUCER_EPOCH_AT + 2].copy_from_slice(&identity.epoch.to_be_bytes());
            bytes[BASE_SEQUENCE_AT..BASE_SEQUENCE_AT + 4].copy_from_slice(&base_sequence.to_be_bytes());
            let crc = kwire_records::crc32c(&bytes[CRC_FROM..]);
            bytes[CRC_AT..CRC_FROM].copy_from_slice(&crc.to_be_bytes());
        }
        self.bytes = bytes.freeze();
        self.identity = identity;
        self.base_sequence = base_sequence;
    }
}

/// Sequence numbers wrap from `i32::MAX` to 0, as Kafka's do.
pub(crate) fn add_sequence(sequence: i32, n: i32) -> i32 {
    let sum = i64::from(sequence) + i64::from(n);
    (sum % (i64::from(i32::MAX) + 1)) as i32
}

/// Whether sequence `a` comes at or before `b`, in Kafka's sequence space that wraps at
/// `i32::MAX` (within half of it).
pub(crate) fn sequence_at_or_before(a: i32, b: i32) -> bool {
    if a < 0 || b < 0 {
        return false;
    }
    let distance = (i64::from(b) - i64::from(a)).rem_euclid(i64::from(i32::MAX) + 1);
    distance < (1 << 30)
}

#[cfg(test)]
mod tests {
    use kwire::Records;
    use kwire_records::{Batch, RecordsExt};

    use super::*;

    #[test]
    fn a_restamped_batch_reads_back_with_its_new_producer_fields_and_a_good_crc() {
        let mut open = OpenBatch::new(Compression::Lz4, false, 1024, Instant::now());
        for i in 0..3 {
            open.append(1_000 + i, Some(b"k"), Some(b"v"), &[], 20).unwrap();
        }
        let mut batch = open.close(Identity { id: 7, epoch: 1 }, 10).map_err(|e| e.1).unwrap();
        assert_eq!(batch.last_sequence(), 12);
        batch.restamp(Identity { id: 7, epoch: 2 }, 0);
        let records = Records::from_bytes(batch.bytes.clone());
        records.verify().unwrap();
        let Some(Ok(Batch::V2(read))) = records.batches().next() else { panic!("one v2 batch") };
        let header = read.header();
        assert_eq!((header.producer_id, header.producer_epoch, header.base_sequence), (7, 2, 0));
        assert_eq!(records.records().count(), 3);
        assert_eq!(add_sequence(i32::MAX, 1), 0, "sequences wrap as Kafka's do");
        assert!(sequence_at_or_before(3, 3) && sequence_at_or_before(3, 9) && !sequence_at_or_before(9, 3));
        assert!(sequence_at_or_before(i32::MAX - 1, 2), "across the wrap");
        assert!(!sequence_at_or_before(-1, 2));
    }
}
