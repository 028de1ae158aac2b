//! Offsets from the partitions' leaders: ListOffsets (resets by `auto.offset.reset`, the
//! beginning and end, offsets for times) and OffsetForLeaderEpoch (validating a position after
//! a leader change, KIP-320), and the task that gives every partition a position: its
//! committed offset, else a reset, then validated (Kafka's `OffsetFetcher` and
//! `updateFetchPositions`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::join_all;
use kwire::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kwire::messages::offset_for_leader_epoch_request::{OffsetForLeaderPartition, OffsetForLeaderTopic};
use kwire::messages::{ListOffsetsRequest, OffsetForLeaderEpochRequest};
use kwire::{BrokerId, ErrorCode, TopicName};
use tokio::sync::watch;

use super::commit;
use super::config::OffsetReset;
use super::error::ConsumerError;
use super::record::TopicPartition;
use super::state::{stopping, Chunk, Pending, Position, Shared, Stop};

/// ListOffsets' special timestamps.
pub(crate) const EARLIEST: i64 = -2;
pub(crate) const LATEST: i64 = -1;

/// What ListOffsets answered for one partition: `None` when no record has a timestamp at or
/// after the one asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetAndTimestamp {
    pub offset: i64,
    pub timestamp: i64,
    pub leader_epoch: Option<i32>,
}

/// A partition's answer: found, not found, or an error (retriable or not).
type Answer<T> = Result<T, ErrorCode>;

/// Per leader, its partitions with what to ask of each and the leader epoch known.
type ByLeader<T> = HashMap<i32, Vec<(TopicPartition, T, i32)>>;

/// Partitions grouped by their leader, with what to ask of each. Partitions without a known
/// leader come back in the second list.
fn by_leader<T: Copy>(shared: &Shared, asks: &BTreeMap<TopicPartition, T>) -> (ByLeader<T>, Vec<TopicPartition>) {
    let metadata = shared.cluster.metadata();
    let mut grouped: ByLeader<T> = HashMap::new();
    let mut leaderless = Vec::new();
    for (tp, ask) in asks {
        let leader = metadata.topics.get(&*tp.topic).and_then(|t| t.partition(tp.partition)).filter(|p| p.leader >= 0);
        match leader {
            Some(p) => grouped.entry(p.leader).or_default().push((tp.clone(), *ask, p.leader_epoch)),
            None => leaderless.push(tp.clone()),
        }
    }
    (grouped, leaderless)
}

/// ListOffsets for `timestamps` (or [`EARLIEST`], [`LATEST`]) at each leader, in the
/// consumer's isolation level. Partitions whose leader is unknown or failed are answered with
/// their error code.
pub(crate) async fn list_offsets(
    shared: &Shared,
    timestamps: &BTreeMap<TopicPartition, i64>,
) -> BTreeMap<TopicPartition, Answer<Option<OffsetAndTimestamp>>> {
    let (grouped, leaderless) = by_leader(shared, timestamps);
    let mut out: BTreeMap<TopicPartition, Answer<Option<OffsetAndTimestamp>>> =
        leaderless.into_iter().map(|tp| (tp, Err(ErrorCode::LEADER_NOT_AVAILABLE))).collect();
    let asks = grouped.into_iter().map(|(leader, partitions)| async move {
        let mut topics: BTreeMap<Arc<str>, Vec<ListOffsetsPartition>> = BTreeMap::new();
        for (tp, timestamp, epoch) in &partitions {
            topics.entry(tp.topic.clone()).or_default().push(ListOffsetsPartition {
                partition_index: tp.partition,
                current_leader_epoch: *epoch,
                timestamp: *timestamp,
                ..Default::default()
            });
        }
        let request = ListOffsetsRequest {
            replica_id: BrokerId(-1),
            isolation_level: shared.config.isolation_level.as_i8(),
            timeout_ms: shared.config.request_timeout.as_millis().min(i32::MAX as u128) as i32,
            topics: topics
                .into_iter()
                .map(|(name, partitions)| ListOffsetsTopic {
                    name: TopicName::from(&*name),
                    partitions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let answer = match shared.cluster.broker(leader).await {
            Ok(client) => client.send(request).await,
            Err(e) => Err(e),
        };
        (partitions, answer)
    });
    for (partitions, answer) in join_all(asks).await {
        match answer {
            Ok(response) => {
                let mut seen = BTreeMap::new();
                for topic in &response.topics {
                    for p in &topic.partitions {
                        let answer = if p.error_code != ErrorCode::NONE {
                            Err(p.error_code)
                        } else if p.offset < 0 {
                            Ok(None)
                        } else {
                            Ok(Some(OffsetAndTimestamp {
                                offset: p.offset,
                                timestamp: p.timestamp,
                                leader_epoch: (p.leader_epoch >= 0).then_some(p.leader_epoch),
                            }))
                        };
                        seen.insert((topic.name.as_str().to_owned(), p.partition_index), answer);
                    }
                }
                for (tp, _, _) in partitions {
                    let answer = seen
                        .remove(&(tp.topic.to_string(), tp.partition))
                        .unwrap_or(Err(ErrorCode::UNKNOWN_SERVER_ERROR));
                    out.insert(tp, answer);
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "ListOffsets failed");
                for (tp, _, _) in partitions {
                    out.insert(tp, Err(ErrorCode::NETWORK_EXCEPTION));
                }
            }
        }
    }
    if out.values().any(|a| a.as_ref().is_err_and(|code| code.is_retriable())) {
        shared.want_metadata();
    }
    out
}

/// What OffsetForLeaderEpoch answered: the end offset of the epoch asked for, and that epoch
/// (both -1 when the leader knows no such epoch).
#[derive(Debug, Clone, Copy)]
struct EpochEnd {
    epoch: i32,
    end_offset: i64,
}

/// OffsetForLeaderEpoch for each partition's `epoch` at its leader.
async fn epoch_ends(
    shared: &Shared,
    epochs: &BTreeMap<TopicPartition, i32>,
) -> BTreeMap<TopicPartition, Answer<EpochEnd>> {
    let (grouped, leaderless) = by_leader(shared, epochs);
    let mut out: BTreeMap<TopicPartition, Answer<EpochEnd>> =
        leaderless.into_iter().map(|tp| (tp, Err(ErrorCode::LEADER_NOT_AVAILABLE))).collect();
    let asks = grouped.into_iter().map(|(leader, partitions)| async move {
        let mut topics: BTreeMap<Arc<str>, Vec<OffsetForLeaderPartition>> = BTreeMap::new();
        for (tp, epoch, current) in &partitions {
            topics.entry(tp.topic.clone()).or_default().push(OffsetForLeaderPartition {
                partition: tp.partition,
                current_leader_epoch: *current,
                leader_epoch: *epoch,
                ..Default::default()
            });
        }
        let request = OffsetForLeaderEpochRequest {
            replica_id: BrokerId(-1),
            topics: topics
                .into_iter()
                .map(|(name, partitions)| OffsetForLeaderTopic {
                    topic: TopicName::from(&*name),
                    partitions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let answer = match shared.cluster.broker(leader).await {
            Ok(client) => client.send(request).await,
            Err(e) => Err(e),
        };
        (partitions, answer)
    });
    for (partitions, answer) in join_all(asks).await {
        let mut seen = BTreeMap::new();
        if let Ok(response) = &answer {
            for topic in &response.topics {
                for p in &topic.partitions {
                    let answer = if p.error_code == ErrorCode::NONE {
                        Ok(EpochEnd { epoch: p.leader_epoch, end_offset: p.end_offset })
                    } else {
                        Err(p.error_code)
                    };
                    seen.insert((topic.topic.as_str().to_owned(), p.partition), answer);
                }
            }
        }
        for (tp, _, _) in partitions {
            let answer =
                seen.remove(&(tp.topic.to_string(), tp.partition)).unwrap_or(Err(ErrorCode::NETWORK_EXCEPTION));
            out.insert(tp, answer);
        }
    }
    out
}

/// The timestamp ListOffsets is asked for a reset by `policy` (`None` for no reset).
pub(crate) fn reset_timestamp(policy: OffsetReset) -> Option<i64> {
    match policy {
        OffsetReset::Earliest => Some(EARLIEST),
        OffsetReset::Latest => Some(LATEST),
        OffsetReset::None => None,
        OffsetReset::ByDuration(ago) => {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
            Some(now.saturating_sub(ago).as_millis().min(i64::MAX as u128) as i64)
        }
    }
}

/// Raises `error` for `tp` from `poll` (a chunk with no records that stops the partition).
fn stall(state: &mut super::state::State, tp: &TopicPartition, error: ConsumerError) {
    let Some(p) = state.assignment.get_mut(tp) else { return };
    p.stalled = true;
    p.pending = Pending::Nothing;
    let end = p.position.unwrap_or(Position { offset: -1, epoch: None });
    let generation = p.generation;
    state.buffer.push_back(Chunk {
        partition: tp.clone(),
        node: -1,
        generation,
        records: Default::default(),
        end,
        bytes: 0,
        stop: Some(Stop::Raise(error)),
    });
}

/// The positions task: committed offsets of newly assigned partitions, resets and
/// validations, retried with a pause while they fail.
pub(crate) async fn run(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>) {
    let mut failures = 0u32;
    loop {
        let notified = shared.wake.positions.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if stopping(&shutdown) {
            return;
        }
        let work = tokio::select! {
            work = update_positions(&shared) => work,
            _ = shutdown.changed() => continue,
        };
        let pause = match work {
            Work::Idle => None,
            Work::Done => {
                failures = 0;
                shared.wake.fetch.notify_waiters();
                shared.wake.poll.notify_waiters();
                continue;
            }
            Work::Retry => {
                failures += 1;
                shared.wake.fetch.notify_waiters();
                shared.wake.poll.notify_waiters();
                let base = shared.config.retry_backoff.max(Duration::from_millis(10));
                Some(base.saturating_mul(1 << failures.min(6)).min(shared.config.retry_backoff_max.max(base)))
            }
        };
        let sleep = async {
            match pause {
                Some(pause) => tokio::time::sleep(pause).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = notified => {}
            _ = sleep => {}
            _ = shutdown.changed() => {}
        }
    }
}

enum Work {
    Idle,
    Done,
    Retry,
}

/// One round: every partition waiting for a committed offset, a reset or a validation.
async fn update_positions(shared: &Shared) -> Work {
    let (committed, resets, validations) = {
        let state = shared.state();
        let mut committed = BTreeMap::new();
        let mut resets = BTreeMap::new();
        let mut validations = BTreeMap::new();
        for (tp, p) in &state.assignment {
            if p.revoking {
                continue;
            }
            match p.pending {
                Pending::Committed => {
                    committed.insert(tp.clone(), p.generation);
                }
                Pending::Reset(policy) => {
                    resets.insert(tp.clone(), (p.generation, policy));
                }
                Pending::Validate => {
                    if let Some(position) = p.position {
                        validations.insert(tp.clone(), (p.generation, position));
                    }
                }
                Pending::Nothing => {}
            }
        }
        (committed, resets, validations)
    };
    if committed.is_empty() && resets.is_empty() && validations.is_empty() {
        return Work::Idle;
    }
    let mut retry = false;
    if !committed.is_empty() {
        retry |= apply_committed(shared, committed).await;
    }
    if !resets.is_empty() {
        retry |= apply_resets(shared, resets).await;
    }
    if !validations.is_empty() {
        retry |= apply_validations(shared, validations).await;
    }
    if retry {
        Work::Retry
    } else {
        Work::Done
    }
}

/// Committed offsets become positions (validated when they carry a leader epoch); partitions
/// without one are reset. Returns whether to retry.
async fn apply_committed(shared: &Shared, asked: BTreeMap<TopicPartition, u64>) -> bool {
    let partitions: Vec<TopicPartition> = asked.keys().cloned().collect();
    let committed = match commit::fetch_committed(shared, &partitions, true).await {
        Ok(committed) => committed,
        Err(e) => {
            tracing::debug!(error = %e, "fetching committed offsets failed; retrying");
            if e.is_fatal() {
                shared.state().fatal.get_or_insert(e);
            }
            return true;
        }
    };
    let policy = shared.config.auto_offset_reset;
    let mut state = shared.state();
    let mut missing = Vec::new();
    for (tp, generation) in asked {
        let Some(p) = state.assignment.get_mut(&tp) else { continue };
        if p.generation != generation || p.pending != Pending::Committed {
            continue;
        }
        match committed.get(&tp).cloned().flatten() {
            Some(offset) => {
                tracing::debug!(partition = %tp, offset = offset.offset, epoch = ?offset.leader_epoch, "starting from the committed offset");
                p.seek(Position { offset: offset.offset, epoch: offset.leader_epoch });
                if offset.leader_epoch.is_some() {
                    p.pending = Pending::Validate;
                }
                state.committed.insert(tp, offset.offset);
            }
            None if policy == OffsetReset::None => missing.push(tp),
            None => p.pending = Pending::Reset(policy),
        }
    }
    for tp in missing {
        stall(&mut state, &tp, ConsumerError::NoOffsetForPartition(vec![tp.clone()]));
    }
    false
}

/// ListOffsets for every partition waiting for a reset. Returns whether to retry.
async fn apply_resets(shared: &Shared, asked: BTreeMap<TopicPartition, (u64, OffsetReset)>) -> bool {
    let timestamps: BTreeMap<TopicPartition, i64> =
        asked.iter().filter_map(|(tp, (_, policy))| Some((tp.clone(), reset_timestamp(*policy)?))).collect();
    let answers = list_offsets(shared, &timestamps).await;
    let mut retry = false;
    {
        let mut state = shared.state();
        for (tp, (generation, policy)) in &asked {
            let Some(p) = state.assignment.get_mut(tp) else { continue };
            if p.generation != *generation || p.pending != Pending::Reset(*policy) {
                continue;
            }
            if *policy == OffsetReset::None {
                stall(&mut state, tp, ConsumerError::NoOffsetForPartition(vec![tp.clone()]));
                continue;
            }
            match answers.get(tp) {
                Some(Ok(Some(found))) => {
                    tracing::info!(partition = %tp, offset = found.offset, ?policy, "resetting the offset");
                    p.seek(Position { offset: found.offset, epoch: found.leader_epoch });
                }
                // Nothing at or after the time: KIP-1106 resets to the end.
                Some(Ok(None)) => {
                    tracing::debug!(partition = %tp, ?policy, "no offset for the reset's time: resetting to the end");
                    p.pending = Pending::Reset(OffsetReset::Latest);
                    retry = true;
                }
                Some(Err(code)) if code.is_retriable() => retry = true,
                Some(Err(code)) => {
                    let error = ConsumerError::from_code("ListOffsets", *code, &tp.to_string());
                    stall(&mut state, tp, error);
                }
                None => retry = true,
            }
        }
    }
    retry
}

/// OffsetForLeaderEpoch for every partition waiting for validation: a log truncated below
/// the position resets it to where the log diverges, or raises LogTruncation without a reset
/// policy (Kafka's `maybeCompleteValidation`). Returns whether to retry.
async fn apply_validations(shared: &Shared, asked: BTreeMap<TopicPartition, (u64, Position)>) -> bool {
    let epochs: BTreeMap<TopicPartition, i32> =
        asked.iter().filter_map(|(tp, (_, position))| Some((tp.clone(), position.epoch?))).collect();
    let answers = epoch_ends(shared, &epochs).await;
    let policy = shared.config.auto_offset_reset;
    let metadata = shared.cluster.metadata();
    let mut retry = false;
    let mut state = shared.state();
    for (tp, (generation, position)) in asked {
        let Some(p) = state.assignment.get_mut(&tp) else { continue };
        if p.generation != generation || p.pending != Pending::Validate || p.position != Some(position) {
            continue;
        }
        let leader = metadata
            .topics
            .get(&*tp.topic)
            .and_then(|t| t.partition(tp.partition))
            .map(|pm| (pm.leader, pm.leader_epoch));
        if position.epoch.is_none() {
            p.pending = Pending::Nothing;
            p.leader = leader;
            continue;
        }
        match answers.get(&tp) {
            Some(Ok(end)) if end.end_offset < 0 || end.epoch < 0 => {
                if policy == OffsetReset::None {
                    let error = ConsumerError::LogTruncation {
                        partition: tp.clone(),
                        offset: position.offset,
                        divergent_offset: None,
                    };
                    stall(&mut state, &tp, error);
                } else {
                    tracing::warn!(partition = %tp, offset = position.offset, "truncation detected (the leader knows no such epoch): resetting");
                    p.await_position(Pending::Reset(policy));
                    retry = true;
                }
            }
            Some(Ok(end)) if end.end_offset < position.offset => {
                if policy == OffsetReset::None {
                    let error = ConsumerError::LogTruncation {
                        partition: tp.clone(),
                        offset: position.offset,
                        divergent_offset: Some(end.end_offset),
                    };
                    stall(&mut state, &tp, error);
                } else {
                    tracing::warn!(
                        partition = %tp,
                        offset = position.offset,
                        diverges_at = end.end_offset,
                        "truncation detected: resetting to the first offset known to diverge"
                    );
                    p.seek(Position { offset: end.end_offset, epoch: Some(end.epoch) });
                    p.leader = leader;
                }
            }
            Some(Ok(_)) => {
                p.pending = Pending::Nothing;
                p.leader = leader;
            }
            Some(Err(code)) if code.is_retriable() => retry = true,
            Some(Err(code)) => {
                let error = ConsumerError::from_code("OffsetForLeaderEpoch", *code, &tp.to_string());
                stall(&mut state, &tp, error);
            }
            None => retry = true,
        }
    }
    if retry {
        drop(state);
        shared.want_metadata();
    }
    retry
}
