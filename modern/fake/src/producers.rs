//! Idempotent producers' sequence state per partition, as Kafka's `ProducerStateManager`
//! keeps it: the producer's epoch and its last five batches, so that a retried batch is
//! answered with the offset it got the first time and a gap or an old epoch is refused.

use std::collections::{HashMap, VecDeque};

use kwire::ErrorCode;

/// How many batches per producer a retry is recognised against (Kafka's
/// `max.in.flight.requests.per.connection` for idempotence).
const REMEMBERED: usize = 5;

#[derive(Debug)]
struct Producer {
    epoch: i16,
    /// The latest batches.
    recent: VecDeque<Written>,
}

/// A batch as a retry of it is recognised and answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Written {
    first: i32,
    last: i32,
    /// Its base offset.
    pub offset: i64,
    /// Its largest timestamp, which Kafka answers a retry with as its log append time.
    pub max_timestamp: i64,
}

/// What a batch of an idempotent producer is to the log.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Append it.
    Append,
    /// Already appended: answer as it was, append nothing.
    Duplicate(Written),
    /// Refuse it with this code.
    Refuse(ErrorCode),
}

/// The producers of one partition.
#[derive(Debug, Default)]
pub(crate) struct Producers {
    by_id: HashMap<i64, Producer>,
}

fn next_sequence(last: i32) -> i32 {
    if last == i32::MAX {
        0
    } else {
        last + 1
    }
}

impl Producers {
    /// Checks a batch of producer `id`, `epoch`, sequences `first..=last`.
    pub fn check(&self, id: i64, epoch: i16, first: i32, last: i32) -> Verdict {
        let Some(producer) = self.by_id.get(&id) else {
            // A producer this partition has not seen starts at sequence 0.
            return if first == 0 { Verdict::Append } else { Verdict::Refuse(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER) };
        };
        if epoch < producer.epoch {
            return Verdict::Refuse(ErrorCode::INVALID_PRODUCER_EPOCH);
        }
        if epoch > producer.epoch {
            return if first == 0 { Verdict::Append } else { Verdict::Refuse(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER) };
        }
        if let Some(&written) = producer.recent.iter().find(|w| w.first == first && w.last == last) {
            return Verdict::Duplicate(written);
        }
        match producer.recent.back() {
            Some(prev) if next_sequence(prev.last) == first => Verdict::Append,
            // Fenced at this epoch by a transaction marker, nothing written since.
            None if first == 0 => Verdict::Append,
            _ => Verdict::Refuse(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER),
        }
    }

    /// A transaction marker of producer `id` at `epoch` was written: older epochs are fenced,
    /// and a newer one starts its sequences again.
    pub fn fence(&mut self, id: i64, epoch: i16) {
        let producer = self.by_id.entry(id).or_insert(Producer { epoch, recent: VecDeque::new() });
        if epoch > producer.epoch {
            producer.epoch = epoch;
            producer.recent.clear();
        }
    }

    /// Records a batch that was appended at `offset`.
    pub fn record(&mut self, id: i64, epoch: i16, (first, last): (i32, i32), offset: i64, max_timestamp: i64) {
        let producer = self.by_id.entry(id).or_insert(Producer { epoch, recent: VecDeque::new() });
        if epoch != producer.epoch {
            producer.epoch = epoch;
            producer.recent.clear();
        }
        if producer.recent.len() == REMEMBERED {
            producer.recent.pop_front();
        }
        producer.recent.push_back(Written { first, last, offset, max_timestamp });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_gaps_and_old_epochs() {
        let mut p = Producers::default();
        assert_eq!(p.check(7, 0, 3, 4), Verdict::Refuse(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER));
        assert_eq!(p.check(7, 0, 0, 2), Verdict::Append);
        p.record(7, 0, (0, 2), 100, 1_000);
        let first = Written { first: 0, last: 2, offset: 100, max_timestamp: 1_000 };
        assert_eq!(p.check(7, 0, 0, 2), Verdict::Duplicate(first), "a retry gets its first offset and time");
        assert_eq!(p.check(7, 0, 4, 5), Verdict::Refuse(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER), "a gap");
        assert_eq!(p.check(7, 0, 3, 5), Verdict::Append);
        p.record(7, 1, (0, 0), 200, 1_000);
        assert_eq!(p.check(7, 0, 1, 1), Verdict::Refuse(ErrorCode::INVALID_PRODUCER_EPOCH), "fenced");
        p.record(7, 1, (1, i32::MAX), 201, 1_000);
        assert_eq!(p.check(7, 1, 0, 3), Verdict::Append, "sequences wrap at i32::MAX");
        p.fence(7, 2);
        assert_eq!(p.check(7, 1, 0, 0), Verdict::Refuse(ErrorCode::INVALID_PRODUCER_EPOCH), "a marker fences");
        assert_eq!(p.check(7, 2, 1, 1), Verdict::Refuse(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER));
        assert_eq!(p.check(7, 2, 0, 0), Verdict::Append, "the new epoch starts at 0");
    }
}
