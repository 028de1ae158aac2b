//! A source: the fetch loop of one broker. One Fetch in flight at a time, for the partitions
//! routed to it whose prefetch bound has room; the answer is decoded here, off the
//! application's task, and buffered for `poll`. Memory stays within the bounds: a partition is
//! not fetched while it holds two `max.partition.fetch.bytes` unpolled (one answer being
//! polled, the next one waiting, so that fetching never waits for `poll`), nor any partition
//! of a broker while the broker's unpolled data reaches `fetch.max.bytes`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kwire::messages::fetch_response::PartitionData;
use kwire::messages::{ApiKey, FetchRequest, FetchResponse};
use kwire::{ErrorCode, StrBytes};
use kwire_records::ReadOptions;
use tokio::sync::watch;

use super::decode::{decode, Decoded};
use super::session::{FetchSession, PartitionFetch, Plan, TOPIC_ID_VERSION};
use super::{follow_leader, route};
use crate::consumer::config::IsolationLevel;
use crate::consumer::error::ConsumerError;
use crate::consumer::record::TopicPartition;
use crate::consumer::state::{stopping, Chunk, Counters, Position, Shared, Stop};

/// A partition asked for, as it was when asked.
struct Asked {
    from: Position,
    generation: u64,
}

/// What the answer said of one partition.
enum Outcome {
    Records(Decoded),
    /// Fetch from this replica instead (KIP-392).
    Redirect(i32),
    /// Pause, read metadata, try again (NOT_LEADER_OR_FOLLOWER and the like).
    Retry(ErrorCode),
    Stop(Stop),
}

struct Answer {
    partition: TopicPartition,
    outcome: Outcome,
    high_watermark: i64,
    last_stable_offset: i64,
    log_start_offset: i64,
}

pub(crate) async fn run(shared: Arc<Shared>, node: i32, mut shutdown: watch::Receiver<bool>) {
    let mut session = FetchSession::default();
    let mut failures = 0u32;
    loop {
        let notified = shared.wake.fetch.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if stopping(&shutdown) {
            close_session(&shared, node, &mut session).await;
            return;
        }
        let (wanted, wake_at) = pick(&shared, node);
        if wanted.is_empty() {
            let sleep = wake_at.map(|at| tokio::time::sleep_until(at.into()));
            tokio::select! {
                _ = notified => {}
                _ = shutdown.changed() => {}
                _ = async { if let Some(s) = sleep { s.await } else { std::future::pending().await } } => {}
            }
            continue;
        }
        let asked: HashMap<TopicPartition, Asked> =
            wanted.iter().map(|(tp, _, asked)| (tp.clone(), asked.clone())).collect();
        let result = tokio::select! {
            result = fetch(&shared, node, &mut session, wanted) => result,
            _ = shutdown.changed() => {
                close_session(&shared, node, &mut session).await;
                return;
            }
        };
        match result {
            Ok(answers) => {
                failures = 0;
                apply(&shared, node, &asked, answers);
            }
            Err(e) => {
                release(&shared, node, &asked);
                session.reset();
                failures += 1;
                let pause = backoff(&shared, failures);
                tracing::debug!(node, error = %e, ?pause, "fetch failed");
                if !matches!(e, FetchError::Session(_)) {
                    shared.want_metadata();
                }
                if !matches!(
                    e,
                    FetchError::Session(ErrorCode::FETCH_SESSION_ID_NOT_FOUND | ErrorCode::INVALID_FETCH_SESSION_EPOCH)
                ) {
                    tokio::select! {
                        _ = tokio::time::sleep(pause) => {}
                        _ = shutdown.changed() => {}
                    }
                }
            }
        }
    }
}

impl Clone for Asked {
    fn clone(&self) -> Self {
        Asked { from: self.from, generation: self.generation }
    }
}

/// The exponential pause after `failures` failures in a row.
fn backoff(shared: &Shared, failures: u32) -> Duration {
    let base = shared.config.retry_backoff.max(Duration::from_millis(1));
    base.saturating_mul(1 << failures.min(10).saturating_sub(1)).min(shared.config.retry_backoff_max.max(base))
}

/// The partitions to fetch from `node` now, marked in flight; or when to look again (a
/// partition backing off).
fn pick(shared: &Shared, node: i32) -> (Vec<(TopicPartition, PartitionFetch, Asked)>, Option<Instant>) {
    let metadata = shared.cluster.metadata();
    let now = Instant::now();
    let partition_bound = 2 * shared.config.max_partition_fetch_bytes.max(1) as usize;
    let node_bound = shared.config.fetch_max_bytes.max(1) as usize;
    let mut state = shared.state();
    if state.buffered_by_node.get(&node).copied().unwrap_or(0) >= node_bound {
        return (Vec::new(), None);
    }
    let mut wanted = Vec::new();
    let mut wake_at: Option<Instant> = None;
    let mut validate = false;
    let partitions: Vec<TopicPartition> = state.assignment.keys().cloned().collect();
    for tp in partitions {
        let Some(p) = state.assignment.get(&tp) else { continue };
        if let Some(until) = p.backoff_until.filter(|until| *until > now) {
            wake_at = Some(wake_at.map_or(until, |at| at.min(until)));
        }
        if !p.fetchable(now) || p.buffered >= partition_bound {
            continue;
        }
        let Some(route) = route(&metadata, &tp, p, now) else { continue };
        if !follow_leader(&mut state, &tp, &route) {
            validate = true;
            continue;
        }
        let Some(p) = state.assignment.get_mut(&tp) else { continue };
        if route.node != node {
            continue;
        }
        let Some(from) = p.fetch else { continue };
        p.in_flight = Some(node);
        let fetch = PartitionFetch {
            topic_id: route.topic_id,
            fetch_offset: from.offset,
            last_fetched_epoch: from.epoch.unwrap_or(-1),
            current_leader_epoch: route.leader_epoch,
            max_bytes: shared.config.max_partition_fetch_bytes,
        };
        wanted.push((tp, fetch, Asked { from, generation: p.generation }));
    }
    drop(state);
    if validate {
        shared.wake.positions.notify_waiters();
    }
    (wanted, wake_at)
}

#[derive(Debug)]
enum FetchError {
    Connection(kwire_connection::Error),
    /// The answer's top-level error (a fetch session's).
    Session(ErrorCode),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Connection(e) => e.fmt(f),
            FetchError::Session(code) => write!(f, "fetch session error {code}"),
        }
    }
}

/// Sends one Fetch and decodes its answer.
async fn fetch(
    shared: &Shared,
    node: i32,
    session: &mut FetchSession,
    wanted: Vec<(TopicPartition, PartitionFetch, Asked)>,
) -> Result<Vec<Answer>, FetchError> {
    let client = shared.cluster.broker(node).await.map_err(FetchError::Connection)?;
    let mut version = client
        .version_of(ApiKey::Fetch)
        .ok_or(FetchError::Connection(kwire_connection::Error::NoCommonVersion(ApiKey::Fetch)))?;
    if version >= TOPIC_ID_VERSION && wanted.iter().any(|(_, f, _)| f.topic_id.is_nil()) {
        // A topic without an id in the metadata: ask by name.
        version = TOPIC_ID_VERSION - 1;
    }
    let asked: HashMap<TopicPartition, Position> = wanted.iter().map(|(tp, _, a)| (tp.clone(), a.from)).collect();
    let names: HashMap<kwire::Uuid, Arc<str>> =
        wanted.iter().map(|(tp, f, _)| (f.topic_id, tp.topic.clone())).collect();
    let plan = session.plan(wanted.into_iter().map(|(tp, fetch, _)| (tp, fetch)).collect(), version);
    let request = request(shared, &plan);
    let counters = &shared.counters;
    Counters::add(if plan.session_epoch > 0 { &counters.fetches_incremental } else { &counters.fetches_full }, 1);
    *counters.by_node.lock().unwrap_or_else(std::sync::PoisonError::into_inner).entry(node).or_default() += 1;
    let response = client.send_at(request, version).await.map_err(|e| {
        Counters::add(&counters.fetch_errors, 1);
        FetchError::Connection(e)
    })?;
    session.answered(&plan, response.error_code, response.session_id).map_err(FetchError::Session)?;
    Ok(read_answer(shared, response, version, &names, &asked, node))
}

fn request(shared: &Shared, plan: &Plan) -> FetchRequest {
    let config = &shared.config;
    let (topics, forgotten_topics_data) = plan.topics();
    FetchRequest {
        max_wait_ms: config.fetch_max_wait.as_millis().min(i32::MAX as u128) as i32,
        min_bytes: config.fetch_min_bytes,
        max_bytes: config.fetch_max_bytes,
        isolation_level: config.isolation_level.as_i8(),
        session_id: plan.session_id,
        session_epoch: plan.session_epoch,
        topics,
        forgotten_topics_data,
        rack_id: StrBytes::from(config.client_rack.clone().unwrap_or_default()),
        ..Default::default()
    }
}

/// Every partition of the answer, decoded (outside the state's lock).
fn read_answer(
    shared: &Shared,
    response: FetchResponse,
    version: i16,
    names: &HashMap<kwire::Uuid, Arc<str>>,
    asked: &HashMap<TopicPartition, Position>,
    node: i32,
) -> Vec<Answer> {
    let options = ReadOptions {
        max_decompressed_size: shared.config.max_decompressed_batch_bytes,
        verify_crc: shared.config.check_crcs,
    };
    let read_committed = shared.config.isolation_level == IsolationLevel::ReadCommitted;
    let mut answers = Vec::new();
    for topic in response.responses {
        let name: Arc<str> = if version >= TOPIC_ID_VERSION {
            match names.get(&topic.topic_id) {
                Some(name) => name.clone(),
                None => continue,
            }
        } else {
            topic.topic.as_str().into()
        };
        for p in topic.partitions {
            let tp = TopicPartition { topic: name.clone(), partition: p.partition_index };
            // A partition not asked for (a broker's mistake, or one the session still held).
            let Some(from) = asked.get(&tp).copied() else { continue };
            let outcome = outcome(&tp, &p, from, node, read_committed, &options);
            if let Outcome::Records(decoded) = &outcome {
                Counters::add(&shared.counters.fetched_bytes, decoded.bytes as u64);
                Counters::add(&shared.counters.fetched_records, decoded.records.len() as u64);
            }
            answers.push(Answer {
                partition: tp,
                outcome,
                high_watermark: p.high_watermark,
                last_stable_offset: p.last_stable_offset,
                log_start_offset: p.log_start_offset,
            });
        }
    }
    answers
}

/// What one partition's answer means, as Kafka's `FetchCollector` reads it.
fn outcome(
    tp: &TopicPartition,
    p: &PartitionData,
    from: Position,
    node: i32,
    read_committed: bool,
    options: &ReadOptions,
) -> Outcome {
    match p.error_code {
        ErrorCode::NONE => {}
        ErrorCode::NOT_LEADER_OR_FOLLOWER
        | ErrorCode::REPLICA_NOT_AVAILABLE
        | ErrorCode::KAFKA_STORAGE_ERROR
        | ErrorCode::FENCED_LEADER_EPOCH
        | ErrorCode::OFFSET_NOT_AVAILABLE
        | ErrorCode::UNKNOWN_LEADER_EPOCH
        | ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
        | ErrorCode::UNKNOWN_TOPIC_ID
        | ErrorCode::INCONSISTENT_TOPIC_ID => return Outcome::Retry(p.error_code),
        ErrorCode::OFFSET_OUT_OF_RANGE => return Outcome::Stop(Stop::OutOfRange),
        ErrorCode::TOPIC_AUTHORIZATION_FAILED => {
            return Outcome::Stop(Stop::Raise(ConsumerError::TopicAuthorization(vec![tp.topic.to_string()])))
        }
        code => return Outcome::Stop(Stop::Raise(ConsumerError::Broker { context: "Fetch", code })),
    }
    if p.diverging_epoch.epoch >= 0 {
        return Outcome::Stop(Stop::Diverged {
            epoch: p.diverging_epoch.epoch,
            end_offset: p.diverging_epoch.end_offset,
        });
    }
    let replica = p.preferred_read_replica.get();
    if replica >= 0 && replica != node {
        return Outcome::Redirect(replica);
    }
    let decoded = match &p.records {
        Some(records) => {
            decode(&tp.topic, tp.partition, records, p.aborted_transactions.as_deref(), from, read_committed, options)
        }
        None => Decoded { records: Default::default(), end: from, corrupt: None, bytes: 0 },
    };
    Outcome::Records(decoded)
}

/// Clears the in-flight marks of a Fetch that failed.
fn release(shared: &Shared, node: i32, asked: &HashMap<TopicPartition, Asked>) {
    let mut state = shared.state();
    for tp in asked.keys() {
        if let Some(p) = state.assignment.get_mut(tp) {
            if p.in_flight == Some(node) {
                p.in_flight = None;
            }
        }
    }
}

/// Buffers what the answer brought, for partitions still as they were when asked.
fn apply(shared: &Shared, node: i32, asked: &HashMap<TopicPartition, Asked>, answers: Vec<Answer>) {
    let now = Instant::now();
    let mut buffered = false;
    let mut want_metadata = false;
    {
        let mut state = shared.state();
        for answer in answers {
            let Some(ask) = asked.get(&answer.partition) else { continue };
            let Some(p) = state.assignment.get_mut(&answer.partition) else { continue };
            if p.generation != ask.generation || p.fetch != Some(ask.from) || p.revoking {
                continue;
            }
            p.high_watermark = answer.high_watermark;
            p.last_stable_offset = answer.last_stable_offset;
            p.log_start_offset = answer.log_start_offset;
            let generation = p.generation;
            let chunk = match answer.outcome {
                Outcome::Records(decoded) => {
                    if let Some((offset, reason)) = decoded.corrupt {
                        p.stalled = true;
                        let error =
                            ConsumerError::CorruptRecord { partition: answer.partition.clone(), offset, reason };
                        Some((decoded.records, decoded.end, decoded.bytes, Some(Stop::Raise(error))))
                    } else if decoded.records.is_empty() && decoded.end == ask.from {
                        None
                    } else {
                        Some((decoded.records, decoded.end, decoded.bytes, None))
                    }
                }
                Outcome::Redirect(replica) => {
                    tracing::debug!(partition = %answer.partition, replica, "the leader names a preferred read replica");
                    p.preferred_replica = Some((replica, now + shared.config.metadata_max_age));
                    None
                }
                Outcome::Retry(code) => {
                    tracing::debug!(partition = %answer.partition, %code, "fetch will be retried after a metadata refresh");
                    p.preferred_replica = None;
                    p.backoff_until = Some(now + shared.config.retry_backoff);
                    want_metadata = true;
                    None
                }
                Outcome::Stop(Stop::OutOfRange) if p.preferred_replica.take().is_some() => {
                    // A follower may lag: ask the leader before resetting.
                    None
                }
                Outcome::Stop(stop) => {
                    tracing::debug!(partition = %answer.partition, from = ?ask.from, ?stop, node, "fetching stopped");
                    p.preferred_replica = None;
                    p.stalled = true;
                    Some((Default::default(), ask.from, 0, Some(stop)))
                }
            };
            if let Some((records, end, bytes, stop)) = chunk {
                p.fetch = Some(end);
                p.buffered += bytes;
                *state.buffered_by_node.entry(node).or_default() += bytes;
                state.buffer.push_back(Chunk {
                    partition: answer.partition,
                    node,
                    generation,
                    records,
                    end,
                    bytes,
                    stop,
                });
                buffered = true;
            }
        }
        for tp in asked.keys() {
            if let Some(p) = state.assignment.get_mut(tp) {
                if p.in_flight == Some(node) {
                    p.in_flight = None;
                }
            }
        }
    }
    if want_metadata {
        shared.want_metadata();
    }
    if buffered {
        shared.wake.poll.notify_waiters();
    }
    // In-flight marks cleared, a replica named: other sources (or a new one) may fetch now.
    shared.wake.fetch.notify_waiters();
}

/// Closes the source's fetch session (a Fetch with epoch -1), as Kafka's consumer does on
/// close, so that the broker frees the slot at once rather than at its eviction time. Best
/// effort, within a second.
async fn close_session(shared: &Shared, node: i32, session: &mut FetchSession) {
    let Some((session_id, session_epoch)) = session.close() else { return };
    let close = async {
        let client = shared.cluster.broker(node).await?;
        let request = FetchRequest {
            max_wait_ms: 0,
            min_bytes: 0,
            max_bytes: 0,
            isolation_level: shared.config.isolation_level.as_i8(),
            session_id,
            session_epoch,
            ..Default::default()
        };
        client.send(request).await
    };
    match tokio::time::timeout(Duration::from_secs(1), close).await {
        Ok(Ok(_)) => tracing::debug!(node, session_id, "fetch session closed"),
        Ok(Err(e)) => tracing::debug!(node, session_id, error = %e, "closing the fetch session failed"),
        Err(_) => tracing::debug!(node, session_id, "closing the fetch session timed out"),
    }
}
