//! The transaction coordinator, after Kafka's `TransactionCoordinator`: transactional ids with
//! their producer id and epoch (an older producer fenced by a newer one), the partitions and
//! groups a transaction touched, and its end, which writes a commit or abort marker into each
//! partition and applies or drops its groups' offsets. Markers are written at once, so a
//! transaction is never seen half-ended. Transactions v1 (partitions added by
//! AddPartitionsToTxn) and v2 (KIP-890: added by Produce v12+ and TxnOffsetCommit v5+, the
//! epoch bumped at every EndTxn) are both served.

pub(crate) mod partition;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kwire::ErrorCode;
use kwire_records::{BatchBuilder, BatchOptions, Compression, ControlRecordType, EndTransactionMarker};

use crate::state::State;

/// Kafka's `transaction.max.timeout.ms`: the longest timeout a producer may ask for.
pub(crate) const MAX_TIMEOUT_MS: i32 = 900_000;

/// The highest epoch before a producer id is replaced (Kafka keeps `Short.MAX_VALUE` free).
const LAST_EPOCH: i16 = i16::MAX - 1;

/// A transaction's state, as Kafka names them in DescribeTransactions and ListTransactions.
/// The prepare states last only inside one request here, since markers are written at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxnState {
    Empty,
    Ongoing,
    CompleteCommit,
    CompleteAbort,
}

impl TxnState {
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
        }
    }

    /// Every state name Kafka knows, for ListTransactions' filter.
    pub const KAFKA_NAMES: [&'static str; 8] = [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "CompleteCommit",
        "CompleteAbort",
        "Dead",
        "PrepareEpochFence",
    ];
}

/// One transactional id.
#[derive(Debug)]
pub(crate) struct Txn {
    pub producer_id: i64,
    pub epoch: i16,
    /// The epoch before the last bump by an EndTxn v5+ (a retry of it carries this one).
    pub last_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    /// The producer id the open transaction's batches carry (the id changes when an EndTxn v5+
    /// spends the last epoch; its markers still close what that id wrote).
    writer: i64,
    /// When the open transaction began: wall clock (DescribeTransactions) and monotonic.
    pub started_ms: i64,
    started: Instant,
    pub partitions: BTreeSet<(String, i32)>,
    pub groups: BTreeSet<String>,
}

/// Every transactional id the cluster knows.
#[derive(Debug, Default)]
pub(crate) struct Transactions {
    pub by_id: BTreeMap<String, Txn>,
}

/// Which producer a request speaks for, as AddPartitionsToTxn, AddOffsetsToTxn, EndTxn and
/// TxnOffsetCommit v5+ name it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Producer<'a> {
    pub transactional_id: &'a str,
    pub id: i64,
    pub epoch: i16,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl Transactions {
    /// The transactional id whose current producer id is `producer_id`.
    pub fn of_producer(&self, producer_id: i64) -> Option<(&String, &Txn)> {
        self.by_id.iter().find(|(_, t)| t.producer_id == producer_id)
    }

    /// The transaction `p` may change: Kafka's checks of the id, producer id and epoch, then
    /// that it is not ending (`fenced` is what an old epoch gets at this request's version).
    fn writable(&mut self, p: Producer<'_>, fenced: ErrorCode) -> Result<&mut Txn, ErrorCode> {
        if p.transactional_id.is_empty() {
            return Err(ErrorCode::INVALID_REQUEST);
        }
        let txn = self.by_id.get_mut(p.transactional_id).ok_or(ErrorCode::INVALID_PRODUCER_ID_MAPPING)?;
        if txn.producer_id != p.id {
            return Err(ErrorCode::INVALID_PRODUCER_ID_MAPPING);
        }
        if txn.epoch != p.epoch {
            return Err(fenced);
        }
        Ok(txn)
    }

    /// Adds partitions and groups to `p`'s transaction, opening it if none is.
    pub fn add(
        &mut self,
        p: Producer<'_>,
        fenced: ErrorCode,
        partitions: impl IntoIterator<Item = (String, i32)>,
        groups: impl IntoIterator<Item = String>,
    ) -> Result<(), ErrorCode> {
        let txn = self.writable(p, fenced)?;
        if txn.state != TxnState::Ongoing {
            txn.state = TxnState::Ongoing;
            txn.writer = txn.producer_id;
            txn.started_ms = now_ms();
            txn.started = Instant::now();
            txn.partitions.clear();
            txn.groups.clear();
        }
        txn.partitions.extend(partitions);
        txn.groups.extend(groups);
        Ok(())
    }

    /// Whether `p`'s open transaction holds `partition` (transactions v1 write only there).
    pub fn holds(&self, producer_id: i64, partition: &(String, i32)) -> bool {
        self.of_producer(producer_id)
            .is_some_and(|(_, t)| t.state == TxnState::Ongoing && t.partitions.contains(partition))
    }
}

/// The next epoch of a transactional id, or a new producer id at epoch 0 once the epoch is
/// spent, as Kafka does.
fn bump(txn: &mut Txn, next_producer_id: &mut i64) {
    txn.last_epoch = txn.epoch;
    if txn.epoch >= LAST_EPOCH {
        txn.producer_id = *next_producer_id;
        *next_producer_id += 1;
        txn.epoch = 0;
    } else {
        txn.epoch += 1;
    }
}

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
            let Some(partition) = self.topics.get_mut(&topic).and_then(|t| t.partitions.get_mut(index as usize)) else {
                continue;
            };
            let marker = marker_batch(producer_id, epoch, commit);
            let offset = partition.log.append(&marker, 1, now_ms(), partition.leader_epoch);
            partition.txns.ended(producer_id, commit, offset);
            partition.producers.fence(producer_id, epoch);
        }
        for group in groups {
            if let Some(group) = self.groups.get_mut(&group) {
                group.end_transaction(producer_id, commit);
            }
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

/// A control batch holding one commit or abort marker of producer `id` at `epoch`.
fn marker_batch(id: i64, epoch: i16, commit: bool) -> bytes::Bytes {
    let options = BatchOptions {
        producer_id: id,
        producer_epoch: epoch,
        transactional: true,
        control: true,
        ..BatchOptions::new(2, Compression::None)
    };
    let kind = if commit { ControlRecordType::Commit } else { ControlRecordType::Abort };
    let mut builder = BatchBuilder::new(options).expect("magic 2 control batches are valid");
    builder
        .append_end_transaction_marker(now_ms(), EndTransactionMarker { kind, coordinator_epoch: 0 })
        .expect("one marker fits a batch");
    builder.build().expect("a one-record batch builds")
}
