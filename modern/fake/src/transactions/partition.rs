//! What one partition knows of transactions: the first offset of each producer's open one
//! (the last stable offset is the least of them) and the ranges of aborted ones, which
//! read_committed fetches name so that readers drop their records.

use std::collections::BTreeMap;

use kwire::messages::fetch_response::AbortedTransaction;
use kwire::ProducerId;

/// An aborted transaction's records: from `first` to its abort marker at `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Aborted {
    producer_id: i64,
    first: i64,
    last: i64,
}

/// A partition's open and aborted transactions.
#[derive(Debug, Default)]
pub(crate) struct PartitionTxns {
    /// Producer id → the offset of its open transaction's first batch here.
    open: BTreeMap<i64, i64>,
    aborted: Vec<Aborted>,
}

impl PartitionTxns {
    /// A transactional batch of `producer_id` was appended at `offset`.
    pub fn wrote(&mut self, producer_id: i64, offset: i64) {
        self.open.entry(producer_id).or_insert(offset);
    }

    /// `producer_id`'s marker was appended at `offset`: its transaction here is over.
    pub fn ended(&mut self, producer_id: i64, committed: bool, offset: i64) {
        if let Some(first) = self.open.remove(&producer_id) {
            if !committed {
                self.aborted.push(Aborted { producer_id, first, last: offset });
            }
        }
    }

    /// The last stable offset: the first offset of the oldest open transaction, or `end`.
    pub fn last_stable_offset(&self, end: i64) -> i64 {
        self.open.values().copied().min().unwrap_or(end).min(end)
    }

    /// The aborted transactions a read_committed fetch of offsets `from..to` must name: those
    /// whose records reach into it (Kafka's `collectAbortedTransactions`).
    pub fn aborted_between(&self, from: i64, to: i64) -> Vec<AbortedTransaction> {
        self.aborted
            .iter()
            .filter(|a| a.last >= from && a.first < to)
            .map(|a| AbortedTransaction {
                producer_id: ProducerId(a.producer_id),
                first_offset: a.first,
                ..Default::default()
            })
            .collect()
    }

    /// DeleteRecords: aborted ranges wholly before the new log start are forgotten.
    pub fn delete_before(&mut self, start: i64) {
        self.aborted.retain(|a| a.last >= start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stable_offset_waits_for_the_oldest_open_transaction() {
        let mut t = PartitionTxns::default();
        assert_eq!(t.last_stable_offset(10), 10);
        t.wrote(7, 3);
        t.wrote(8, 5);
        t.wrote(7, 6);
        assert_eq!(t.last_stable_offset(10), 3);
        t.ended(7, false, 10);
        assert_eq!(t.last_stable_offset(11), 5);
        t.ended(8, true, 11);
        assert_eq!(t.last_stable_offset(12), 12);
        let aborted = t.aborted_between(0, 12);
        assert_eq!(aborted.len(), 1);
        assert_eq!((aborted[0].producer_id.0, aborted[0].first_offset), (7, 3));
        assert!(t.aborted_between(11, 12).is_empty(), "a fetch after the abort marker names nothing");
        assert!(t.aborted_between(0, 3).is_empty(), "nor one ending before the transaction began");
    }
}
