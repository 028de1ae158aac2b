//! One share-partition (KIP-932, after Kafka's `SharePartition`): which records of a partition
//! a share group has delivered, to whom, how often, and what came of them. Records below the
//! share-partition start offset (SPSO) are done with; from it to `end` each record is tracked
//! in flight; beyond `end` nothing was ever handed out.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kwire::ErrorCode;

use crate::log::Entry;

/// A delivered record's state (Kafka's `RecordState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordState {
    /// To be delivered (again).
    Available,
    /// Held by one member until it acknowledges or its lock runs out.
    Acquired,
    /// Accepted: processed, never delivered again.
    Acknowledged,
    /// Rejected, past the delivery limit, or a gap: never delivered again.
    Archived,
}

/// One record in flight.
#[derive(Debug, Clone)]
struct InFlight {
    state: RecordState,
    delivery_count: i16,
    /// The member holding it while acquired.
    owner: Option<String>,
    lock_until: Option<Instant>,
}

/// A run of acquired records with one delivery count (ShareFetch's `AcquiredRecords`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Acquired {
    pub first: i64,
    pub last: i64,
    pub delivery_count: i16,
}

/// Acknowledge types (ShareFetch and ShareAcknowledge `AcknowledgeTypes`).
const GAP: i8 = 0;
const ACCEPT: i8 = 1;
const RELEASE: i8 = 2;
const REJECT: i8 = 3;
const RENEW: i8 = 4;

/// What a group's acknowledgement and delivery settings are for one request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub lock: Duration,
    pub delivery_count_limit: i16,
}

/// The delivery state of one partition for one share group.
#[derive(Debug, Clone)]
pub(crate) struct SharePartition {
    /// The share-partition start offset: every record before it is done with.
    pub start: i64,
    /// The offset after the last record ever acquired.
    pub end: i64,
    /// The start offset as Kafka's share coordinator last stored it, what
    /// DescribeShareGroupOffsets reports: Kafka writes a share-partition's state (on every
    /// acknowledgement, release or lock timeout) with the start offset it had before the change,
    /// and moves its start offset only once the write is done.
    pub persisted_start: i64,
    records: BTreeMap<i64, InFlight>,
}

/// Whether a stored batch is a control batch (transaction markers), never delivered: bit 5 of
/// its attributes, at byte 21 of a magic 2 batch.
fn is_control(batch: &Bytes) -> bool {
    batch.len() > 22 && batch[22] & 0x20 != 0
}

impl SharePartition {
    /// A share-partition starting at `start` (where `share.auto.offset.reset` put it).
    pub fn new(start: i64) -> SharePartition {
        SharePartition { start, end: start, persisted_start: start, records: BTreeMap::new() }
    }

    /// Acquires for `member` what is available from the start offset on, until `max_records`
    /// (whole batches, as Kafka's batch-optimized mode, unless `strict`: its record-limit mode)
    /// or `max_bytes` (at least one batch) is reached: the batches to return and the acquired
    /// runs. Records never delivered are taken only while fewer than `max_in_flight` are in
    /// flight (`share.partition.max.record.locks`), as Kafka bounds a share-partition's state.
    #[allow(clippy::too_many_arguments)]
    pub fn acquire(
        &mut self,
        entries: &[Entry],
        log_start: i64,
        member: &str,
        max_records: usize,
        strict: bool,
        max_bytes: usize,
        max_in_flight: i64,
        lock_until: Instant,
    ) -> (Vec<Bytes>, Vec<Acquired>) {
        self.skip_to(log_start);
        let (mut batches, mut runs) = (Vec::new(), Vec::<Acquired>::new());
        let (mut count, mut bytes) = (0usize, 0usize);
        let first = entries.partition_point(|e| e.last_offset < self.start);
        for entry in &entries[first..] {
            let full = self.end - self.start >= max_in_flight && entry.base_offset.max(self.start) >= self.end;
            if full || count >= max_records || (!batches.is_empty() && bytes + entry.bytes.len() > max_bytes) {
                break;
            }
            let control = is_control(&entry.bytes);
            let mut took = 0;
            let cap = entry.base_offset.max(self.start).saturating_add(entry.bytes.len() as i64);
            for offset in entry.base_offset.max(self.start)..=entry.last_offset {
                if strict && count + took >= max_records {
                    break;
                }
                if offset >= self.end {
                    // A batch enters whole, as Kafka's do, but with no more records than its
                    // bytes could hold: its header may claim more than it has.
                    if offset >= cap {
                        break;
                    }
                    let state = if control { RecordState::Archived } else { RecordState::Available };
                    self.records.insert(offset, InFlight { state, delivery_count: 0, owner: None, lock_until: None });
                    self.end = offset + 1;
                }
                let Some(record) = self.records.get_mut(&offset).filter(|r| r.state == RecordState::Available) else {
                    continue;
                };
                record.state = RecordState::Acquired;
                record.delivery_count = record.delivery_count.saturating_add(1);
                record.owner = Some(member.to_string());
                record.lock_until = Some(lock_until);
                took += 1;
                match runs.last_mut() {
                    Some(run) if run.last + 1 == offset && run.delivery_count == record.delivery_count => {
                        run.last = offset
                    }
                    _ => runs.push(Acquired { first: offset, last: offset, delivery_count: record.delivery_count }),
                }
            }
            if took > 0 {
                count += took;
                bytes += entry.bytes.len();
                batches.push(entry.bytes.clone());
            }
        }
        self.advance();
        (batches, runs)
    }

    /// Applies `member`'s acknowledgements (first offset, last offset, types: one for the whole
    /// range or one per offset), all or none: INVALID_RECORD_STATE when a record is not
    /// acquired by it. True if a record became available again.
    pub fn acknowledge(
        &mut self,
        member: &str,
        batches: &[(i64, i64, Vec<i8>)],
        limits: Limits,
        now: Instant,
    ) -> Result<bool, ErrorCode> {
        let mut changes = Vec::new();
        for (first, last, types) in batches {
            let len = last.checked_sub(*first).and_then(|d| d.checked_add(1)).unwrap_or(0);
            if *first < 0 || len <= 0 || (types.len() != 1 && types.len() as i64 != len) {
                return Err(ErrorCode::INVALID_REQUEST);
            }
            if let [kind] = types[..] {
                // One type for a whole range, which may be far wider than the request: only
                // the records the partition holds in it are looked at.
                if !(GAP..=RENEW).contains(&kind) {
                    return Err(ErrorCode::INVALID_REQUEST);
                }
                let in_range = self.records.range(*first..=*last);
                let held: Vec<i64> = in_range
                    .filter(|(_, r)| {
                        kind == GAP || (r.state == RecordState::Acquired && r.owner.as_deref() == Some(member))
                    })
                    .map(|(offset, _)| *offset)
                    .collect();
                if kind != GAP && held.len() as i64 != len {
                    return Err(ErrorCode::INVALID_RECORD_STATE);
                }
                changes.extend(held.into_iter().map(|offset| (offset, kind)));
                continue;
            }
            for offset in *first..=*last {
                let kind = types[(offset - first) as usize];
                if !(GAP..=RENEW).contains(&kind) {
                    return Err(ErrorCode::INVALID_REQUEST);
                }
                let held = self
                    .records
                    .get(&offset)
                    .is_some_and(|r| r.state == RecordState::Acquired && r.owner.as_deref() == Some(member));
                if !held && kind != GAP {
                    return Err(ErrorCode::INVALID_RECORD_STATE);
                }
                changes.push((offset, kind));
            }
        }
        self.persisted_start = self.start;
        let mut released = false;
        for (offset, kind) in changes {
            let Some(record) = self.records.get_mut(&offset) else { continue };
            match kind {
                RENEW => record.lock_until = Some(now + limits.lock),
                ACCEPT => finish(record, RecordState::Acknowledged),
                REJECT | GAP => finish(record, RecordState::Archived),
                RELEASE => released |= release(record, limits.delivery_count_limit),
                _ => {}
            }
        }
        self.advance();
        Ok(released)
    }

    /// Releases every record `member` holds (its session closed, or it left the group): as
    /// Kafka's `releaseAcquiredRecords`, they count as never delivered (their delivery count goes
    /// back down) and are available again, whatever the limit. True if any was held.
    pub fn release_member(&mut self, member: &str) -> bool {
        let mut released = false;
        for record in self.records.values_mut() {
            if record.state == RecordState::Acquired && record.owner.as_deref() == Some(member) {
                record.delivery_count = (record.delivery_count - 1).max(0);
                finish(record, RecordState::Available);
                released = true;
            }
        }
        if released {
            self.persisted_start = self.start;
        }
        self.advance();
        released
    }

    /// Records whose acquisition lock ran out go back, as Kafka's lock timer does: available
    /// with their delivery count kept, or archived at the limit. True if any changed.
    pub fn expire_locks(&mut self, now: Instant, limit: i16) -> bool {
        let mut changed = false;
        for record in self.records.values_mut() {
            if record.state == RecordState::Acquired && record.lock_until.is_some_and(|at| at <= now) {
                release(record, limit);
                changed = true;
            }
        }
        if changed {
            self.persisted_start = self.start;
        }
        self.advance();
        changed
    }

    /// Records between the start offset and the log's end not yet done with: what
    /// DescribeShareGroupOffsets v1 reports as lag.
    pub fn lag(&self, log_end: i64) -> i64 {
        let done = self
            .records
            .values()
            .filter(|r| matches!(r.state, RecordState::Acknowledged | RecordState::Archived))
            .count() as i64;
        (log_end - self.start - done).max(0)
    }

    /// Records that DeleteRecords removed from the log are done with.
    fn skip_to(&mut self, log_start: i64) {
        if log_start > self.start {
            self.start = log_start;
            self.end = self.end.max(log_start);
            self.records = self.records.split_off(&log_start);
        }
    }

    /// The start offset moves past every leading record done with.
    fn advance(&mut self) {
        while let Some(entry) = self.records.first_entry() {
            if !matches!(entry.get().state, RecordState::Acknowledged | RecordState::Archived) {
                break;
            }
            self.start = *entry.key() + 1;
            entry.remove();
        }
        if self.records.is_empty() {
            self.start = self.start.max(self.end);
        }
    }

    /// The state and delivery count of the record at `offset`, if it is in flight.
    #[cfg(test)]
    fn state(&self, offset: i64) -> Option<(RecordState, i16)> {
        self.records.get(&offset).map(|r| (r.state, r.delivery_count))
    }
}

fn finish(record: &mut InFlight, state: RecordState) {
    record.state = state;
    record.owner = None;
    record.lock_until = None;
}

/// Back to available, or archived once delivered `limit` times; true if available.
fn release(record: &mut InFlight, limit: i16) -> bool {
    let available = record.delivery_count < limit;
    finish(record, if available { RecordState::Available } else { RecordState::Archived });
    available
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(base: i64, last: i64) -> Entry {
        let mut bytes = vec![0u8; 61];
        bytes[16] = 2;
        Entry { base_offset: base, last_offset: last, max_timestamp: 0, epoch: 0, bytes: Bytes::from(bytes) }
    }

    const LIMITS: Limits = Limits { lock: Duration::from_secs(30), delivery_count_limit: 2 };

    #[test]
    fn acquire_acknowledge_and_the_start_offset_moves() {
        let log = [entry(0, 2), entry(3, 5)];
        let now = Instant::now();
        let mut p = SharePartition::new(0);
        let (batches, runs) = p.acquire(&log, 0, "a", 2, false, usize::MAX, 2000, now + LIMITS.lock);
        assert_eq!((batches.len(), runs), (1, vec![Acquired { first: 0, last: 2, delivery_count: 1 }]));
        // Not b's to acknowledge.
        assert_eq!(p.acknowledge("b", &[(0, 0, vec![ACCEPT])], LIMITS, now), Err(ErrorCode::INVALID_RECORD_STATE));
        let acks = [(0, 2, vec![ACCEPT, RELEASE, REJECT])];
        assert_eq!(p.acknowledge("a", &acks, LIMITS, now), Ok(true));
        assert_eq!((p.start, p.state(1)), (1, Some((RecordState::Available, 1))));
        assert_eq!(p.persisted_start, 0, "stored before the start offset moved");
        // Offset 1 again (count 2), and the next batch.
        let (_, runs) = p.acquire(&log, 0, "b", 10, false, usize::MAX, 2000, now + LIMITS.lock);
        let expected =
            vec![Acquired { first: 1, last: 1, delivery_count: 2 }, Acquired { first: 3, last: 5, delivery_count: 1 }];
        assert_eq!(runs, expected);
        // Its lock runs out at the limit: archived; the others are available again.
        assert!(p.expire_locks(now + LIMITS.lock, LIMITS.delivery_count_limit));
        assert_eq!((p.start, p.state(3)), (3, Some((RecordState::Available, 1))));
    }

    #[test]
    fn no_new_records_past_the_in_flight_limit() {
        let log = [entry(0, 2), entry(3, 5)];
        let mut p = SharePartition::new(0);
        let until = Instant::now() + LIMITS.lock;
        let (_, runs) = p.acquire(&log, 0, "a", 100, false, usize::MAX, 3, until);
        assert_eq!(runs, vec![Acquired { first: 0, last: 2, delivery_count: 1 }], "the first batch only");
        assert_eq!(p.acquire(&log, 0, "b", 100, false, usize::MAX, 3, until).1, vec![]);
        p.acknowledge("a", &[(0, 0, vec![ACCEPT])], LIMITS, Instant::now()).unwrap();
        let (_, runs) = p.acquire(&log, 0, "b", 100, false, usize::MAX, 3, until);
        assert_eq!(runs, vec![Acquired { first: 3, last: 5, delivery_count: 1 }], "room again");
    }

    #[test]
    fn acknowledgement_ranges_as_wide_as_i64_cost_only_what_is_held() {
        let log = [entry(0, 2)];
        let mut p = SharePartition::new(0);
        let until = Instant::now() + LIMITS.lock;
        p.acquire(&log, 0, "a", 100, false, usize::MAX, 100, until);
        let now = Instant::now();
        // Not every offset of the range is held: refused at once, nothing changed.
        let accept = p.acknowledge("a", &[(0, i64::MAX - 1, vec![ACCEPT])], LIMITS, now);
        assert_eq!(accept, Err(ErrorCode::INVALID_RECORD_STATE));
        assert_eq!(p.state(0), Some((RecordState::Acquired, 1)));
        // Lengths that overflow, and negative offsets, are malformed.
        assert_eq!(
            p.acknowledge("a", &[(i64::MIN, i64::MAX, vec![GAP])], LIMITS, now),
            Err(ErrorCode::INVALID_REQUEST)
        );
        assert_eq!(p.acknowledge("a", &[(-1, 0, vec![ACCEPT])], LIMITS, now), Err(ErrorCode::INVALID_REQUEST));
        // A gap over the whole range archives just the records there are.
        p.acknowledge("a", &[(0, i64::MAX - 1, vec![GAP])], LIMITS, now).unwrap();
        assert_eq!(p.start, 3, "0 to 2 archived");
    }

    #[test]
    fn a_batch_claiming_billions_of_records_takes_no_more_than_its_bytes_hold() {
        let log = [entry(0, i64::from(i32::MAX) - 1)];
        let mut p = SharePartition::new(0);
        let until = Instant::now() + LIMITS.lock;
        let (_, runs) = p.acquire(&log, 0, "a", usize::MAX, false, usize::MAX, 500, until);
        assert_eq!(runs, vec![Acquired { first: 0, last: 60, delivery_count: 1 }], "61 bytes, 61 records at most");
        assert_eq!(p.records.len(), 61);
    }
}
