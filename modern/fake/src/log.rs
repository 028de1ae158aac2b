//! One partition's log: record batches as clients sent them, each rewritten with the offset
//! it was given (the base offset sits outside the CRC, as Kafka's broker relies on).

use bytes::{Bytes, BytesMut};
use kwire::Records;
use kwire_records::RecordsExt;

/// A record ListOffsets found: its offset, its timestamp and the leader epoch of its batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub offset: i64,
    pub timestamp: i64,
    pub epoch: i32,
}

/// A batch in the log.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub base_offset: i64,
    pub last_offset: i64,
    pub max_timestamp: i64,
    /// The leader epoch it was appended in (also written into the batch, as Kafka does).
    pub epoch: i32,
    pub bytes: Bytes,
}

/// The batches of one partition, in offset order.
#[derive(Debug, Default)]
pub(crate) struct Log {
    entries: Vec<Entry>,
    /// The first offset still readable (DeleteRecords moves it).
    start: i64,
    /// The offset the next record gets.
    end: i64,
}

impl Log {
    pub fn start_offset(&self) -> i64 {
        self.start
    }

    pub fn end_offset(&self) -> i64 {
        self.end
    }

    /// Appends a checked magic 2 batch of `records` records in leader epoch `epoch`, giving it
    /// the next offsets. Both fields sit outside the CRC.
    pub fn append(&mut self, batch: &Bytes, records: i64, max_timestamp: i64, epoch: i32) -> i64 {
        let base = self.end;
        let mut stored = BytesMut::from(&batch[..]);
        stored[..8].copy_from_slice(&base.to_be_bytes());
        stored[12..16].copy_from_slice(&epoch.to_be_bytes());
        self.end = base + records;
        self.entries.push(Entry {
            base_offset: base,
            last_offset: self.end - 1,
            max_timestamp,
            epoch,
            bytes: stored.freeze(),
        });
        base
    }

    /// DeleteRecords: the log starts at `offset` (at most its end); batches wholly before it go.
    pub fn delete_before(&mut self, offset: i64) {
        self.start = self.start.max(offset.min(self.end));
        let start = self.start;
        self.entries.retain(|e| e.last_offset >= start);
    }

    /// OffsetForLeaderEpoch: the largest epoch up to `epoch` that has records, and the offset
    /// where the epoch after it starts (the log end for the current one); `None` when the log
    /// holds nothing that early.
    pub fn end_of_epoch(&self, epoch: i32, current: i32) -> Option<(i32, i64)> {
        if epoch == current {
            return Some((current, self.end));
        }
        let last = self.entries.iter().rev().find(|e| e.epoch <= epoch)?;
        let next = self.entries.iter().find(|e| e.epoch > last.epoch).map_or(self.end, |e| e.base_offset);
        Some((last.epoch, next))
    }

    /// Batches from the one holding `offset` on and starting below `below` (the log end, or the
    /// last stable offset for read_committed), as many as fit `max_bytes` but at least one (as
    /// Kafka answers, so that a batch larger than the limit is never stuck); and the offset
    /// after the last one.
    pub fn read(&self, offset: i64, max_bytes: usize, below: i64) -> (Vec<Bytes>, i64) {
        let first = self.entries.partition_point(|e| e.last_offset < offset);
        let mut out = Vec::new();
        let mut size = 0;
        let mut next = offset;
        for entry in self.entries[first..].iter().take_while(|e| e.base_offset < below) {
            if !out.is_empty() && size + entry.bytes.len() > max_bytes {
                break;
            }
            size += entry.bytes.len();
            next = entry.last_offset + 1;
            out.push(entry.bytes.clone());
        }
        (out, next)
    }

    /// ListOffsets by time: the first record from the log start whose timestamp reaches
    /// `timestamp`, as Kafka finds it (the first batch whose largest timestamp does, then the
    /// record in it).
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Option<Found> {
        let entry = self.live().find(|e| e.max_timestamp >= timestamp)?;
        self.record_in(entry, |t| t >= timestamp)
    }

    /// ListOffsets for the largest timestamp (KIP-734): the first record carrying it, in the
    /// first batch that holds it.
    pub fn max_timestamp(&self) -> Option<Found> {
        let entry = self.live().fold(None, |best: Option<&Entry>, e| match best {
            Some(b) if b.max_timestamp >= e.max_timestamp => Some(b),
            _ => Some(e),
        })?;
        self.record_in(entry, |t| t == entry.max_timestamp)
    }

    /// The leader epoch of the batch holding `offset`, if the log holds it.
    pub fn epoch_at(&self, offset: i64) -> Option<i32> {
        self.live().find(|e| e.last_offset >= offset && e.base_offset <= offset).map(|e| e.epoch)
    }

    /// Batches with records from the log start on.
    fn live(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.last_offset >= self.start)
    }

    /// The first record of `entry`, from the log start on, whose timestamp passes `wanted`
    /// (a batch with log-append time gives every record its largest timestamp).
    fn record_in(&self, entry: &Entry, wanted: impl Fn(i64) -> bool) -> Option<Found> {
        let records = Records::from_bytes(entry.bytes.clone());
        let record =
            records.records().filter_map(Result::ok).find(|r| r.offset >= self.start && wanted(r.timestamp))?;
        Some(Found { offset: record.offset, timestamp: record.timestamp, epoch: entry.epoch })
    }

    /// Every batch still in the log.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
}
