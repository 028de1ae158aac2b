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
    /// The codec's level (`compression.<codec>.level`), `None` for its default.
    level: Option<i32>,
}

impl OpenBatch {
    pub fn new(
        compression: Compression,
        level: Option<i32>,
        transactional: bool,
        capacity: usize,
        now: Instant,
    ) -> OpenBatch {
        let options = BatchOptions { transactional, compression_level: level, ..BatchOptions::new(2, compression) };
        // Magic 2 with a built codec never fails (the config checked the codec).
        let builder = BatchBuilder::with_capacity(options, capacity)
            .unwrap_or_else(|_| BatchBuilder::new(BatchOptions::default()).expect("magic 2, no codec"));
        OpenBatch { builder, outcome: Outcome::new(), created: now, memory: 0, estimated: HEADER_LEN, level }
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
                level: self.level,
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
    /// The codec's level it was built at.
    pub level: Option<i32>,
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

impl ProducerBatch {
    /// Splits a batch the broker refused as too large (MESSAGE_TOO_LARGE) into batches of at
    /// most about `target` bytes of records each, as Kafka's producer does: the records in
    /// their order, each part with the whole's producer, its own base sequence (the whole's
    /// plus the records before it, so the sequences after it stay valid), its creation time
    /// (the delivery timeout runs on) and a share of its `buffer.memory`. Each part comes with
    /// the offset delta of its first record in the whole. `None` when there is nothing to split
    /// (one record) or the batch does not read back.
    pub fn split(&self, target: usize) -> Option<Vec<(i32, ProducerBatch)>> {
        use kwire_records::{Batch, RecordsExt};
        if self.records < 2 {
            return None;
        }
        let whole = kwire::Records::from_bytes(self.bytes.clone());
        // The parts are built as the whole was: its codec, transactional or not.
        let Some(Ok(Batch::V2(read))) = whole.batches().next() else { return None };
        let attributes = read.header().attributes;
        let (compression, transactional) = (attributes.compression()?, attributes.is_transactional());
        let mut opened: Vec<(i32, OpenBatch)> = Vec::new();
        for (index, record) in whole.records().enumerate() {
            let record = record.ok()?;
            let estimate = super::record::size_upper_bound(record.key.as_ref(), record.value.as_ref(), &record.headers);
            let full = opened.last().is_none_or(|(_, open)| open.records() > 0 && open.estimated + estimate > target);
            if full {
                opened.push((
                    index as i32,
                    OpenBatch::new(compression, self.level, transactional, target.min(self.uncompressed), self.created),
                ));
            }
            let (_, open) = opened.last_mut()?;
            open.append(record.timestamp, record.key.as_deref(), record.value.as_deref(), &record.headers, estimate)
                .ok()?;
        }
        let count: usize = opened.iter().map(|(_, open)| open.records()).sum();
        if count != self.records as usize || opened.len() < 2 {
            return None;
        }
        // The whole's memory, shared out by records (what is left over goes to the last part).
        let mut memory_left = self.memory;
        let parts = opened.len();
        let mut out = Vec::with_capacity(parts);
        for (i, (start, open)) in opened.into_iter().enumerate() {
            let memory =
                if i + 1 == parts { memory_left } else { self.memory * open.records() / self.records as usize };
            memory_left -= memory;
            let base_sequence = if self.base_sequence >= 0 { add_sequence(self.base_sequence, start) } else { -1 };
            let mut part = open.close(self.identity, base_sequence).ok()?;
            part.memory = memory;
            part.created = self.created;
            out.push((start, part));
        }
        Some(out)
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
        let mut open = OpenBatch::new(Compression::Lz4, None, false, 1024, Instant::now());
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

    #[test]
    fn a_split_batch_keeps_its_records_in_order_with_sequences_that_continue_the_whole() {
        let mut open = OpenBatch::new(Compression::Zstd, Some(19), true, 1 << 16, Instant::now());
        let value = vec![7u8; 300];
        for i in 0..10i64 {
            let key = i.to_string();
            let headers = [kwire_records::Header { key: "h".into(), value: Some(key.clone().into()) }];
            open.append(1_000 + i, Some(key.as_bytes()), Some(&value), &headers, 340).unwrap();
        }
        let mut whole = open.close(Identity { id: 9, epoch: 3 }, 40).map_err(|e| e.1).unwrap();
        whole.memory = 3400;
        assert!(whole.split(1 << 20).is_none(), "it fits: nothing to split");
        let parts = whole.split(1200).expect("split");
        assert_eq!(parts.iter().map(|(start, _)| *start).collect::<Vec<_>>(), [0, 3, 6, 9]);
        assert_eq!(parts.iter().map(|(_, p)| p.memory).sum::<usize>(), 3400);
        let mut next = 0i64;
        for (start, part) in &parts {
            assert_eq!((part.base_sequence, part.identity), (40 + start, whole.identity));
            let records = Records::from_bytes(part.bytes.clone());
            let Some(Ok(Batch::V2(read))) = records.batches().next() else { panic!("one v2 batch") };
            assert!(read.header().attributes.is_transactional());
            assert_eq!(read.header().attributes.compression(), Some(Compression::Zstd));
            for record in records.records() {
                let record = record.unwrap();
                assert_eq!(
                    (record.timestamp, record.key.as_deref()),
                    (1_000 + next, Some(next.to_string().as_bytes()))
                );
                assert_eq!(record.headers[0].value.as_deref(), Some(next.to_string().as_bytes()));
                next += 1;
            }
        }
        assert_eq!(next, 10);
    }
}
