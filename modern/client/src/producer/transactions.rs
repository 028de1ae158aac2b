//! Transactions (Kafka's `TransactionManager`): InitProducerId with the `transactional.id`,
//! then begin, send, send offsets, commit or abort; KIP-890's v2 (no AddPartitionsToTxn:
//! Produce v12+ and TxnOffsetCommit v5+ add to the transaction, EndTxn v5 bumps the epoch) where
//! the cluster finalizes `transaction.version` 2, v1 otherwise (AddPartitionsToTxn v3,
//! AddOffsetsToTxn, Produce up to v11, EndTxn up to v4, and an epoch bump after an abort,
//! KIP-360). Errors leave the producer in Java's states: an abortable one until
//! `abort_transaction`, a fatal one (fenced) for good.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use kwire::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kwire::messages::txn_offset_commit_request::{TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic};
use kwire::messages::{
    AddOffsetsToTxnRequest, AddPartitionsToTxnRequest, ApiKey, ApiRequest, EndTxnRequest, InitProducerIdRequest,
    TxnOffsetCommitRequest,
};
use kwire::{ErrorCode, ProducerId, TransactionalId};
use kwire_connection::{CoordinatorType, Error};

use super::config::TransactionProtocol;
use super::error::ProduceError;
use super::idempotence::Identity;
use super::Inner;

/// A consumer group's position, for [`Producer::send_offsets_to_transaction`]
/// (Java's `ConsumerGroupMetadata`): the generation (or KIP-848 member epoch) and member id
/// let the coordinator refuse a zombie's commit.
///
/// [`Producer::send_offsets_to_transaction`]: super::Producer::send_offsets_to_transaction
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupMetadata {
    pub group_id: String,
    /// The classic group's generation, or the consumer group's member epoch; -1 for none.
    pub generation_id: i32,
    pub member_id: String,
    pub group_instance_id: Option<String>,
}

impl ConsumerGroupMetadata {
    /// A group by id only (no generation checks): what a standalone consumer has.
    pub fn new(group_id: impl Into<String>) -> ConsumerGroupMetadata {
        ConsumerGroupMetadata {
            group_id: group_id.into(),
            generation_id: -1,
            member_id: String::new(),
            group_instance_id: None,
        }
    }
}

/// Where a transactional producer stands.
#[derive(Debug, Clone)]
pub(crate) enum TxnState {
    Uninitialized,
    Ready,
    InTransaction,
    Committing,
    Aborting,
    /// The transaction must be aborted.
    Abortable(ProduceError),
    /// The producer is done (fenced, not authorized).
    Fatal(ProduceError),
}

/// The transactional half of a producer.
pub(crate) struct Transactions {
    pub id: String,
    timeout: Duration,
    protocol: TransactionProtocol,
    state: Mutex<TxnState>,
    v2: AtomicBool,
    /// v1: the partitions added to the current transaction.
    added: tokio::sync::Mutex<HashSet<(Arc<str>, i32)>>,
    /// Records or offsets went into the current transaction (else ending it asks nothing).
    started: AtomicBool,
}

impl Transactions {
    pub fn new(id: String, timeout: Duration, protocol: TransactionProtocol) -> Transactions {
        Transactions {
            id,
            timeout,
            protocol,
            state: Mutex::new(TxnState::Uninitialized),
            v2: AtomicBool::new(false),
            added: tokio::sync::Mutex::new(HashSet::new()),
            started: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TxnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn state(&self) -> TxnState {
        self.lock().clone()
    }

    fn set(&self, state: TxnState) {
        *self.lock() = state;
    }

    pub fn is_v2(&self) -> bool {
        self.v2.load(Ordering::Relaxed)
    }

    /// Whether sinks may send this producer's batches: not while the transaction must be
    /// aborted (its batches are failed by the abort).
    pub fn may_send(&self) -> bool {
        matches!(*self.lock(), TxnState::InTransaction | TxnState::Committing)
    }

    /// What a send meets: fine in a transaction, else the error Java's producer throws.
    pub fn check_send(&self) -> Result<(), ProduceError> {
        match &*self.lock() {
            TxnState::InTransaction => Ok(()),
            TxnState::Abortable(e) => Err(ProduceError::TransactionAbortable(Arc::new(e.clone()))),
            TxnState::Fatal(e) => Err(e.clone()),
            TxnState::Uninitialized => Err(ProduceError::IllegalState(
                "Cannot perform a 'send' before completing a call to init_transactions".into(),
            )),
            other => Err(ProduceError::IllegalState(format!(
                "Cannot call send in state {} (call begin_transaction first)",
                state_name(other)
            ))),
        }
    }

    /// A batch of the transaction failed: the transaction must be aborted (unless already fatal).
    pub fn abortable(&self, error: ProduceError) {
        let mut state = self.lock();
        if error.is_fatal() || matches!(error, ProduceError::ProducerFenced(_)) {
            *state = TxnState::Fatal(error);
        } else if !matches!(*state, TxnState::Fatal(_) | TxnState::Abortable(_)) {
            *state = TxnState::Abortable(error);
        }
    }
}

fn state_name(state: &TxnState) -> &'static str {
    match state {
        TxnState::Uninitialized => "UNINITIALIZED",
        TxnState::Ready => "READY",
        TxnState::InTransaction => "IN_TRANSACTION",
        TxnState::Committing => "COMMITTING_TRANSACTION",
        TxnState::Aborting => "ABORTING_TRANSACTION",
        TxnState::Abortable(_) => "ABORTABLE_ERROR",
        TxnState::Fatal(_) => "FATAL_ERROR",
    }
}

/// Answers that say "try again": the coordinator loading, moving, or finishing the previous
/// transaction.
fn retry_code(code: ErrorCode) -> bool {
    code == ErrorCode::CONCURRENT_TRANSACTIONS || code.is_retriable()
}

/// An error of a coordinator call that ends the producer (fenced), or the transaction.
fn classify(code: ErrorCode) -> ProduceError {
    match code {
        ErrorCode::INVALID_PRODUCER_EPOCH | ErrorCode::PRODUCER_FENCED => ProduceError::ProducerFenced(
            "there is a newer producer with the same transactional.id, or the transaction timed out".into(),
        ),
        ErrorCode::TRANSACTION_ABORTABLE => {
            ProduceError::TransactionAbortable(Arc::new(ProduceError::from_code(code, None)))
        }
        other => ProduceError::from_code(other, None),
    }
}

impl Inner {
    fn txn(&self) -> Result<&Transactions, ProduceError> {
        self.txn.as_ref().ok_or_else(|| ProduceError::IllegalState("the producer has no transactional.id".into()))
    }

    /// A request to the transaction coordinator of `key` (or a group's), retried while the
    /// answer says so, until `deadline`; the answer's error code is the caller's to read.
    async fn to_coordinator<R, F>(
        &self,
        kind: CoordinatorType,
        key: &str,
        request: R,
        cap: i16,
        code: F,
        deadline: Instant,
    ) -> Result<R::Response, ProduceError>
    where
        R: ApiRequest + Clone + Send,
        F: Fn(&R::Response) -> ErrorCode,
    {
        let backoff = self.config.retry_backoff;
        loop {
            let attempt = self.cluster.with_coordinator(kind, key, |client| {
                let request = request.clone();
                let code = &code;
                async move {
                    let version = client.version_of(R::API).ok_or(Error::NoCommonVersion(R::API))?.min(cap);
                    let response = client.send_at(request, version).await?;
                    let c = code(&response);
                    if c == ErrorCode::NOT_COORDINATOR || c == ErrorCode::COORDINATOR_NOT_AVAILABLE {
                        // Finds the coordinator again.
                        return Err(Error::Broker { api: R::API, code: c, message: None });
                    }
                    Ok(response)
                }
            });
            let last = match tokio::time::timeout_at(deadline.into(), attempt).await {
                Err(_) => None,
                Ok(Ok(response)) if retry_code(code(&response)) => Some(ProduceError::from_code(code(&response), None)),
                Ok(Ok(response)) => return Ok(response),
                Ok(Err(e)) if e.is_retriable() => Some(ProduceError::from(e)),
                Ok(Err(e)) => return Err(ProduceError::from(e)),
            };
            if Instant::now() + backoff >= deadline {
                let why = last.map(|e| format!(": {e}")).unwrap_or_default();
                return Err(ProduceError::Timeout(format!(
                    "{} not completed within max.block.ms {:?}{why}",
                    R::API.name(),
                    self.config.max_block
                )));
            }
            tokio::time::sleep(backoff).await;
        }
    }

    /// InitProducerId for the transactional id (`current`: bump that epoch, KIP-360).
    async fn init_producer_id(&self, current: Identity, deadline: Instant) -> Result<Identity, ProduceError> {
        let txn = self.txn()?;
        let request = InitProducerIdRequest {
            transactional_id: Some(TransactionalId::from(txn.id.as_str())),
            transaction_timeout_ms: txn.timeout.as_millis().min(i32::MAX as u128) as i32,
            producer_id: ProducerId(current.id),
            producer_epoch: current.epoch,
            ..Default::default()
        };
        let answer = self
            .to_coordinator(CoordinatorType::Transaction, &txn.id, request, i16::MAX, |r| r.error_code, deadline)
            .await?;
        if answer.error_code != ErrorCode::NONE {
            return Err(classify(answer.error_code));
        }
        let identity = Identity { id: answer.producer_id.0, epoch: answer.producer_epoch };
        self.identity.set(identity);
        Ok(identity)
    }

    pub(crate) async fn init_transactions(&self) -> Result<(), ProduceError> {
        let txn = self.txn()?;
        match txn.state() {
            TxnState::Uninitialized => {}
            TxnState::Fatal(e) => return Err(e),
            other => {
                return Err(ProduceError::IllegalState(format!(
                    "init_transactions in state {}: it is called once",
                    state_name(&other)
                )))
            }
        }
        let deadline = Instant::now() + self.config.max_block;
        let result = self.init_producer_id(Identity::NONE, deadline).await;
        match result {
            Ok(identity) => {
                let v2 = txn.protocol == TransactionProtocol::Auto && self.cluster_offers_v2(&txn.id).await;
                txn.v2.store(v2, Ordering::Relaxed);
                tracing::info!(transactional_id = %txn.id, producer_id = identity.id, epoch = identity.epoch, v2, "transactions initialized");
                txn.set(TxnState::Ready);
                Ok(())
            }
            Err(e) if e.is_fatal() => {
                txn.set(TxnState::Fatal(e.clone()));
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the coordinator finalizes `transaction.version` 2 and speaks what v2 needs
    /// (EndTxn v5, Produce v12).
    async fn cluster_offers_v2(&self, id: &str) -> bool {
        let Ok(client) = self.cluster.coordinator(CoordinatorType::Transaction, id).await else { return false };
        let finalized = client
            .api_versions()
            .finalized_features
            .iter()
            .any(|f| f.name.as_str() == "transaction.version" && f.max_version_level >= 2);
        finalized
            && client.version_of(ApiKey::EndTxn).is_some_and(|v| v >= 5)
            && client.version_of(ApiKey::Produce).is_some_and(|v| v >= 12)
    }

    pub(crate) fn begin_transaction(&self) -> Result<(), ProduceError> {
        let txn = self.txn()?;
        let mut state = txn.lock();
        match &*state {
            TxnState::Ready => {
                *state = TxnState::InTransaction;
                txn.started.store(false, Ordering::Relaxed);
                Ok(())
            }
            TxnState::Fatal(e) => Err(e.clone()),
            TxnState::Abortable(e) => Err(ProduceError::TransactionAbortable(Arc::new(e.clone()))),
            other => {
                Err(ProduceError::IllegalState(format!("Cannot begin a transaction in state {}", state_name(other))))
            }
        }
    }

    /// v1: adds `topic`'s `partition` to the transaction before its first record (once).
    pub(crate) async fn add_partition(&self, topic: &Arc<str>, partition: i32) -> Result<(), ProduceError> {
        let txn = self.txn()?;
        txn.started.store(true, Ordering::Relaxed);
        if txn.is_v2() {
            return Ok(());
        }
        let mut added = txn.added.lock().await;
        if added.contains(&(topic.clone(), partition)) {
            return Ok(());
        }
        let identity = self.identity.current();
        let request = AddPartitionsToTxnRequest {
            v3_and_below_transactional_id: TransactionalId::from(txn.id.as_str()),
            v3_and_below_producer_id: ProducerId(identity.id),
            v3_and_below_producer_epoch: identity.epoch,
            v3_and_below_topics: vec![AddPartitionsToTxnTopic {
                name: topic.as_ref().into(),
                partitions: [partition].into_iter().collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let deadline = Instant::now() + self.config.max_block;
        let first_code = |r: &kwire::messages::AddPartitionsToTxnResponse| {
            if r.error_code != ErrorCode::NONE {
                return r.error_code;
            }
            let codes = r.results_by_topic_v3_and_below.iter().flat_map(|t| t.results_by_partition.iter());
            codes.map(|p| p.partition_error_code).find(|c| *c != ErrorCode::NONE).unwrap_or(ErrorCode::NONE)
        };
        let answer =
            self.to_coordinator(CoordinatorType::Transaction, &txn.id, request, 3, first_code, deadline).await?;
        match first_code(&answer) {
            ErrorCode::NONE => {
                added.insert((topic.clone(), partition));
                Ok(())
            }
            code => {
                let error = classify(code);
                txn.abortable(error.clone());
                Err(error)
            }
        }
    }

    pub(crate) async fn send_offsets_to_transaction(
        &self,
        offsets: &[(&str, i32, i64)],
        group: &ConsumerGroupMetadata,
    ) -> Result<(), ProduceError> {
        let txn = self.txn()?;
        txn.check_send()?;
        txn.started.store(true, Ordering::Relaxed);
        let identity = self.identity.current();
        let deadline = Instant::now() + self.config.max_block;
        let v2 = txn.is_v2();
        if !v2 {
            let request = AddOffsetsToTxnRequest {
                transactional_id: TransactionalId::from(txn.id.as_str()),
                producer_id: ProducerId(identity.id),
                producer_epoch: identity.epoch,
                group_id: group.group_id.as_str().into(),
                ..Default::default()
            };
            let answer = self
                .to_coordinator(CoordinatorType::Transaction, &txn.id, request, i16::MAX, |r| r.error_code, deadline)
                .await?;
            if answer.error_code != ErrorCode::NONE {
                let error = classify(answer.error_code);
                txn.abortable(error.clone());
                return Err(error);
            }
        }
        let mut topics: Vec<TxnOffsetCommitRequestTopic> = Vec::new();
        for (topic, partition, offset) in offsets {
            let entry = TxnOffsetCommitRequestPartition {
                partition_index: *partition,
                committed_offset: *offset,
                committed_leader_epoch: -1,
                committed_metadata: Some("".into()),
                ..Default::default()
            };
            match topics.iter_mut().find(|t| t.name.as_str() == *topic) {
                Some(t) => t.partitions.push(entry),
                None => topics.push(TxnOffsetCommitRequestTopic {
                    name: (*topic).into(),
                    partitions: vec![entry],
                    ..Default::default()
                }),
            }
        }
        let request = TxnOffsetCommitRequest {
            transactional_id: TransactionalId::from(txn.id.as_str()),
            group_id: group.group_id.as_str().into(),
            producer_id: ProducerId(identity.id),
            producer_epoch: identity.epoch,
            generation_id_or_member_epoch: group.generation_id,
            member_id: group.member_id.as_str().into(),
            group_instance_id: group.group_instance_id.as_deref().map(Into::into),
            topics,
            ..Default::default()
        };
        let first_code = |r: &kwire::messages::TxnOffsetCommitResponse| {
            let codes = r.topics.iter().flat_map(|t| t.partitions.iter()).map(|p| p.error_code);
            codes.clone().find(|c| *c != ErrorCode::NONE).unwrap_or(ErrorCode::NONE)
        };
        // v6 names topics by id; v5 by name, and adds the group to a v2 transaction.
        let cap = if v2 { 5 } else { 4 };
        let answer =
            self.to_coordinator(CoordinatorType::Group, &group.group_id, request, cap, first_code, deadline).await?;
        match first_code(&answer) {
            ErrorCode::NONE => Ok(()),
            code => {
                let error = classify(code);
                txn.abortable(error.clone());
                Err(error)
            }
        }
    }

    pub(crate) async fn commit_transaction(&self) -> Result<(), ProduceError> {
        let txn = self.txn()?;
        match txn.state() {
            TxnState::InTransaction | TxnState::Committing => txn.set(TxnState::Committing),
            TxnState::Abortable(e) => return Err(ProduceError::TransactionAbortable(Arc::new(e))),
            TxnState::Fatal(e) => return Err(e),
            other => {
                return Err(ProduceError::IllegalState(format!(
                    "Cannot commit a transaction in state {}",
                    state_name(&other)
                )))
            }
        }
        // Every record of the transaction must be written before it ends; one that failed
        // makes it abortable.
        self.flush().await;
        if let TxnState::Abortable(e) | TxnState::Fatal(e) = txn.state() {
            return Err(ProduceError::TransactionAbortable(Arc::new(e)));
        }
        self.end_transaction(txn, true).await?;
        txn.set(TxnState::Ready);
        Ok(())
    }

    pub(crate) async fn abort_transaction(&self) -> Result<(), ProduceError> {
        let txn = self.txn()?;
        match txn.state() {
            TxnState::InTransaction | TxnState::Aborting | TxnState::Abortable(_) | TxnState::Committing => {
                txn.set(TxnState::Aborting)
            }
            TxnState::Fatal(e) => return Err(e),
            other => {
                return Err(ProduceError::IllegalState(format!(
                    "Cannot abort a transaction in state {}",
                    state_name(&other)
                )))
            }
        }
        // Batches not yet sent are failed; those in flight are waited for.
        let mut in_flight = Vec::new();
        for queue in self.accumulator.all() {
            let failed = {
                let mut st = queue.lock();
                in_flight.extend(st.in_flight.iter().cloned());
                st.take_unsent()
            };
            for (outcome, memory, records) in failed {
                queue.queued.fetch_sub(1, Ordering::Relaxed);
                self.settle_failed(&queue, &outcome, memory, records, ProduceError::TransactionAborted);
            }
        }
        for outcome in in_flight {
            let _ = outcome.settled().await;
        }
        self.end_transaction(txn, false).await?;
        if !txn.is_v2() {
            // v1 keeps the epoch across EndTxn: bump it (KIP-360), so that partitions whose
            // batches were dropped start their sequences again.
            let deadline = Instant::now() + self.config.max_block;
            self.init_producer_id(self.identity.current(), deadline).await.inspect_err(|e| {
                if e.is_fatal() {
                    txn.set(TxnState::Fatal(e.clone()));
                }
            })?;
        }
        for queue in self.accumulator.all() {
            let mut st = queue.lock();
            st.blocked = false;
            st.needs_reset = false;
            st.retry_at = None;
        }
        txn.set(TxnState::Ready);
        Ok(())
    }

    /// EndTxn, when anything went into the transaction; v2 takes the epoch it answers.
    async fn end_transaction(&self, txn: &Transactions, commit: bool) -> Result<(), ProduceError> {
        if txn.started.load(Ordering::Relaxed) {
            let identity = self.identity.current();
            let request = EndTxnRequest {
                transactional_id: TransactionalId::from(txn.id.as_str()),
                producer_id: ProducerId(identity.id),
                producer_epoch: identity.epoch,
                committed: commit,
                ..Default::default()
            };
            let deadline = Instant::now() + self.config.max_block;
            let cap = if txn.is_v2() { 5 } else { 4 };
            let answer = self
                .to_coordinator(CoordinatorType::Transaction, &txn.id, request, cap, |r| r.error_code, deadline)
                .await?;
            if answer.error_code != ErrorCode::NONE {
                let error = classify(answer.error_code);
                match &error {
                    ProduceError::ProducerFenced(_) => txn.set(TxnState::Fatal(error.clone())),
                    _ if commit => txn.set(TxnState::Abortable(error.clone())),
                    _ => {}
                }
                return Err(error);
            }
            if txn.is_v2() && answer.producer_epoch >= 0 {
                self.identity.set(Identity { id: answer.producer_id.0, epoch: answer.producer_epoch });
            }
        }
        txn.added.lock().await.clear();
        txn.started.store(false, Ordering::Relaxed);
        Ok(())
    }
}
