//! The transaction coordinator, after Kafka's `TransactionCoordinator`: transactional ids with
//! their producer id and epoch (an older producer fenced by a newer one), the partitions and
//! groups a transaction touched, and its end, which writes a commit or abort marker into each
//! partition and applies or drops its groups' offsets. Markers are written at once, so a
//! transaction is never seen half-ended. Transactions v1 (partitions added by
//! AddPartitionsToTxn) and v2 (KIP-890: added by Produce v12+ and TxnOffsetCommit v5+, the
//! epoch bumped at every EndTxn) are both served.

pub(crate) mod partition;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use kwire::ErrorCode;
use kwire_records::{BatchBuilder, BatchOptions, Compression, ControlRecordType, EndTransactionMarker};

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
    pub writer: i64,
    /// When the open transaction began: wall clock (DescribeTransactions) and monotonic.
    pub started_ms: i64,
    pub started: Instant,
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

pub(crate) fn now_ms() -> i64 {
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
pub(crate) fn bump(txn: &mut Txn, next_producer_id: &mut i64) {
    txn.last_epoch = txn.epoch;
    if txn.epoch >= LAST_EPOCH {
        txn.producer_id = *next_producer_id;
        *next_producer_id += 1;
        txn.epoch = 0;
    } else {
        txn.epoch += 1;
    }
}

/// A control batch holding one commit or abort marker of producer `id` at `epoch`.
pub(crate) fn marker_batch(id: i64, epoch: i16, commit: bool) -> bytes::Bytes {
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
