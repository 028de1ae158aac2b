//! The transaction coordinator's work that reaches past its own records: a producer id handed
//! out, markers written into partitions, and a transaction's group offsets applied or dropped.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kwire::ErrorCode;

use super::State;
use crate::transactions::{bump, marker_batch, now_ms, Producer, Txn, TxnState, MAX_TIMEOUT_MS};

impl State {
    /// InitProducerId with a transactional id (Kafka's `handleInitProducerId`): a new id starts
    /// at epoch 0; a known one gets the next epoch, which fences the producer that had it. An
    /// open transaction is aborted first and answered CONCURRENT_TRANSACTIONS, for the client to
    /// ask again. `expected` is the producer a v3+ client says it was (KIP-360).
    pub fn init_transactional(
        &mut self,
        transactional_id: &str,
        timeout_ms: i32,
        expected: Option<(i64, i16)>,
        fenced: ErrorCode,
    ) -> Result<(i64, i16), ErrorCode> {
        if transactional_id.is_empty() {
            return Err(ErrorCode::INVALID_REQUEST);
        }
        if timeout_ms <= 0 || timeout_ms > MAX_TIMEOUT_MS {
            return Err(ErrorCode::INVALID_TRANSACTION_TIMEOUT);
        }
        let Some(txn) = self.transactions.by_id.get_mut(transactional_id) else {
            let producer_id = self.next_producer_id;
            self.next_producer_id += 1;
            let txn = Txn {
                producer_id,
                epoch: 0,
                last_epoch: -1,
                timeout_ms,
                state: TxnState::Empty,
                writer: producer_id,
                started_ms: -1,
                started: Instant::now(),
                partitions: BTreeSet::new(),
                groups: BTreeSet::new(),
            };
            self.transactions.by_id.insert(transactional_id.to_string(), txn);
            return Ok((producer_id, 0));
        };
        if let Some((id, epoch)) = expected {
            if id != txn.producer_id || epoch != txn.epoch {
                return Err(fenced);
            }
        }
        if txn.state == TxnState::Ongoing {
            // The producer that had it is fenced: its transaction ends with the next epoch.
            self.abort_open(transactional_id);
            return Err(ErrorCode::CONCURRENT_TRANSACTIONS);
        }
        bump(txn, &mut self.next_producer_id);
        txn.timeout_ms = timeout_ms;
        txn.state = TxnState::Empty;
        txn.started_ms = -1;
        txn.partitions.clear();
        txn.groups.clear();
        Ok((txn.producer_id, txn.epoch))
    }

    /// EndTxn (Kafka's `endTransaction`): markers into every partition of the open
    /// transaction, its groups' offsets applied or dropped. In v2 (`v2`: EndTxn v5+) the epoch
    /// goes up at every end, a retry with the epoch before is answered as the first was, and
    /// a transaction with nothing in it may be aborted. Returns the producer id and epoch.
    pub fn end_transaction(&mut self, p: Producer<'_>, commit: bool, v2: bool) -> Result<(i64, i16), ErrorCode> {
        if p.transactional_id.is_empty() {
            return Err(ErrorCode::INVALID_REQUEST);
        }
        let txn = self.transactions.by_id.get_mut(p.transactional_id).ok_or(ErrorCode::INVALID_PRODUCER_ID_MAPPING)?;
        if txn.producer_id != p.id {
            return Err(ErrorCode::INVALID_PRODUCER_ID_MAPPING);
        }
        let done = if commit { TxnState::CompleteCommit } else { TxnState::CompleteAbort };
        if v2 && p.epoch == txn.last_epoch && p.epoch != txn.epoch {
            // A retry of the EndTxn that bumped the epoch.
            return if txn.state == done {
                Ok((txn.producer_id, txn.epoch))
            } else {
                Err(ErrorCode::INVALID_TXN_STATE)
            };
        }
        if p.epoch != txn.epoch {
            return Err(ErrorCode::PRODUCER_FENCED);
        }
        match txn.state {
            TxnState::Ongoing => {
                if v2 {
                    bump(txn, &mut self.next_producer_id);
                }
                self.end_open(p.transactional_id, commit);
            }
            // v1: the same end again is a retry.
            state if !v2 && state == done => {}
            // v2: an abort with nothing open bumps the epoch (the producer's way to start clean).
            TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort if v2 && !commit => {
                bump(txn, &mut self.next_producer_id);
                txn.state = TxnState::CompleteAbort;
            }
            _ => return Err(ErrorCode::INVALID_TXN_STATE),
        }
        let txn = &self.transactions.by_id[p.transactional_id];
        Ok((txn.producer_id, txn.epoch))
    }

    /// Ends `transactional_id`'s open transaction: a marker (with its current producer id and
    /// epoch) into each of its partitions, its offsets applied to its groups or dropped.
    pub fn end_open(&mut self, transactional_id: &str, commit: bool) {
        let Some(txn) = self.transactions.by_id.get_mut(transactional_id) else { return };
        // A marker carries the id that wrote the batches, at the epoch now current (or the last
        // one of that id, if the id was just replaced).
        let producer_id = txn.writer;
        let epoch = if producer_id == txn.producer_id { txn.epoch } else { i16::MAX };
        txn.state = if commit { TxnState::CompleteCommit } else { TxnState::CompleteAbort };
        let partitions = std::mem::take(&mut txn.partitions);
        let groups = std::mem::take(&mut txn.groups);
        for (topic, index) in partitions {
            let Some(partition) = self.topics.partition_mut(&topic, index) else { continue };
            let marker = marker_batch(producer_id, epoch, commit);
            let offset = partition.log.append(&marker, 1, now_ms(), partition.leader_epoch);
            partition.txns.ended(producer_id, commit, offset);
            partition.producers.fence(producer_id, epoch);
        }
        for group in groups {
            self.groups.offsets_mut().end_transaction(&group, producer_id, commit);
        }
    }

    /// Aborts `transactional_id`'s open transaction with the next epoch, as a timeout does;
    /// false if none is open.
    pub fn abort_open(&mut self, transactional_id: &str) -> bool {
        let Some(txn) = self.transactions.by_id.get_mut(transactional_id) else { return false };
        if txn.state != TxnState::Ongoing {
            return false;
        }
        bump(txn, &mut self.next_producer_id);
        self.end_open(transactional_id, false);
        true
    }

    /// Aborts, with the next epoch, every transaction open longer than its timeout (Kafka's
    /// `abortTimedOutTransactions`, which fences the producer the same way); true if any was.
    pub fn expire_transactions(&mut self, now: Instant) -> bool {
        let expired: Vec<String> = self
            .transactions
            .by_id
            .iter()
            .filter(|(_, t)| {
                t.state == TxnState::Ongoing
                    && now.duration_since(t.started) > Duration::from_millis(t.timeout_ms.max(0) as u64)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            tracing::debug!(transactional_id = %id, "transaction timed out: aborted");
            self.abort_open(id);
        }
        !expired.is_empty()
    }
}
