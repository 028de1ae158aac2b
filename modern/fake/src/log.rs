//! One partition's log: record batches as clients sent them, each rewritten with the offset
//! it was given (the base offset sits outside the CRC, as Kafka's broker relies on).

use bytes::{Bytes, BytesMut};

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

    /// Batches from the one holding `offset` on, as many as fit `max_bytes` but at least one
    /// (as Kafka answers, so that a batch larger than the limit is never stuck).
    pub fn read(&self, offset: i64, max_bytes: usize) -> Vec<Bytes> {
        let first = self.entries.partition_point(|e| e.last_offset < offset);
        let mut out = Vec::new();
        let mut size = 0;
        for entry in &self.entries[first..] {
            if !out.is_empty() && size + entry.bytes.len() > max_bytes {
                break;
            }
            size += entry.bytes.len();
            out.push(entry.bytes.clone());
        }
        out
    }

    /// The first batch whose records reach `timestamp`: its base offset and largest timestamp.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Option<(i64, i64)> {
        self.entries
            .iter()
            .filter(|e| e.last_offset >= self.start)
            .find(|e| e.max_timestamp >= timestamp)
            .map(|e| (e.base_offset.max(self.start), e.max_timestamp))
    }

    /// The batch with the largest timestamp (the first of equals): its base offset and time.
    pub fn max_timestamp(&self) -> Option<(i64, i64)> {
        self.entries
            .iter()
            .filter(|e| e.last_offset >= self.start)
            .fold(None, |best: Option<&Entry>, e| match best {
                Some(b) if b.max_timestamp >= e.max_timestamp => Some(b),
                _ => Some(e),
            })
            .map(|e| (e.base_offset.max(self.start), e.max_timestamp))
    }

    /// Every batch still in the log.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
}
