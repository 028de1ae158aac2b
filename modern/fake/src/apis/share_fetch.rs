//! ShareFetch (KIP-932): a share group member's fetch through its share session with this node.
//! Epoch 0 opens the session with the partitions named, -1 closes it (acknowledging only, and
//! releasing what the member still holds here), any other must be the epoch the session
//! expects (INVALID_SHARE_SESSION_EPOCH; SHARE_SESSION_NOT_FOUND without one), adding the
//! partitions named and dropping the forgotten ones. Piggy-backed acknowledgements are applied
//! first; then records are acquired from every partition of the session, waiting up to
//! `max_wait_ms` for some. A full response (epoch 0) names every partition of the session, an
//! incremental one only those with records, errors or acknowledgements.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use kwire::messages::share_fetch_response::{
    AcquiredRecords, LeaderIdAndEpoch, PartitionData, ShareFetchableTopicResponse,
};
use kwire::messages::{ShareFetchRequest, ShareFetchResponse};
use kwire::{ErrorCode, Records, StrBytes, Uuid};

use super::Ctx;
use crate::groups::configs::Reset;
use crate::share_partitions::{next_epoch, Session, SharePartition, SharePartitions};
use crate::state::{State, Topics};

/// The longest a share fetch waits, whatever it asks.
const MAX_WAIT: Duration = Duration::from_secs(30);
/// ShareFetch's `ShareAcquireMode` 1: at most `MaxRecords`, splitting batches.
const RECORD_LIMIT: i8 = 1;

/// A partition's acknowledgements: (first offset, last offset, types).
pub(super) type Acks = Vec<(i64, i64, Vec<i8>)>;

/// What opening, checking or closing the session decided.
enum Opened {
    Fetch,
    Closed,
}

pub(super) async fn handle(ctx: &Ctx<'_>, request: ShareFetchRequest) -> ShareFetchResponse {
    let shared = ctx.shared;
    let group = request.group_id.as_ref().map(|g| g.to_string()).unwrap_or_default();
    let member = request.member_id.as_ref().map(|m| m.to_string()).unwrap_or_default();
    if group.is_empty() || member.is_empty() {
        return failed(ErrorCode::INVALID_REQUEST);
    }
    let epoch = request.share_session_epoch;
    let named: Vec<(Uuid, i32)> =
        request.topics.iter().flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, p.partition_index))).collect();
    let acks: BTreeMap<(Uuid, i32), Acks> = request
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| ((t.topic_id, p.partition_index), p)))
        .filter(|(_, p)| !p.acknowledgement_batches.is_empty())
        .map(|(key, p)| {
            let batches = p
                .acknowledgement_batches
                .iter()
                .map(|b| (b.first_offset, b.last_offset, b.acknowledge_types.iter().collect()))
                .collect();
            (key, batches)
        })
        .collect();
    if epoch == 0 && !acks.is_empty() {
        // A new session has nothing to acknowledge yet.
        return failed(ErrorCode::INVALID_REQUEST);
    }
    let (opened, acked, lock_ms) = {
        let mut state = shared.state();
        let settings = state.groups().configs().settings(&group, &shared.config);
        let shares = state.shares_mut();
        let key = (group.clone(), member.clone(), ctx.node);
        let opened = match epoch {
            0 => {
                let partitions = named.iter().copied().collect();
                shares.sessions.insert(key.clone(), Session { next_epoch: 1, partitions });
                Opened::Fetch
            }
            -1 => match shares.sessions.get(&key) {
                None => return failed(ErrorCode::SHARE_SESSION_NOT_FOUND),
                Some(_) => Opened::Closed,
            },
            _ => match shares.sessions.get_mut(&key) {
                None => return failed(ErrorCode::SHARE_SESSION_NOT_FOUND),
                Some(session) if session.next_epoch != epoch => return failed(ErrorCode::INVALID_SHARE_SESSION_EPOCH),
                Some(session) => {
                    session.next_epoch = next_epoch(epoch);
                    session.partitions.extend(named.iter().copied());
                    for forgotten in &request.forgotten_topics_data {
                        for p in forgotten.partitions.iter() {
                            session.partitions.remove(&(forgotten.topic_id, p));
                        }
                    }
                    Opened::Fetch
                }
            },
        };
        let acked = acknowledge(&mut state, &group, &member, ctx.node, &acks, shared);
        if let Opened::Closed = opened {
            close_session(state.shares_mut(), &key, shared);
        }
        (opened, acked, settings.lock.as_millis().min(i32::MAX as u128) as i32)
    };
    let mut response = ShareFetchResponse { acquisition_lock_timeout_ms: lock_ms, ..Default::default() };
    if let Opened::Closed = opened {
        response.responses = topics(acked.into_iter().map(|(k, code)| (k, ack_only(k.1, code))));
        return response;
    }
    // Renewing acknowledgements fetch nothing.
    let fetch = !request.is_renew_ack;
    let wait = Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0)).min(MAX_WAIT);
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let appended = shared.appended.notified();
        tokio::pin!(appended);
        appended.as_mut().enable();
        let (partitions, got) = if fetch { acquire(ctx, &group, &member, &request) } else { Default::default() };
        let done = got || !fetch || tokio::time::Instant::now() >= deadline;
        if done || partitions.values().any(|p| p.error_code != ErrorCode::NONE) {
            let full = epoch == 0;
            let mut out: BTreeMap<(Uuid, i32), PartitionData> = partitions
                .into_iter()
                .filter(|(k, p)| {
                    full || !p.acquired_records.is_empty() || p.error_code != ErrorCode::NONE || acked.contains_key(k)
                })
                .collect();
            for (k, code) in &acked {
                let p = out.entry(*k).or_insert_with(|| ack_only(k.1, ErrorCode::NONE));
                p.acknowledge_error_code = *code;
            }
            response.responses = topics(out);
            return response;
        }
        tokio::select! {
            _ = appended => {}
            _ = tokio::time::sleep_until(deadline) => {}
        }
    }
}

/// Applies acknowledgements, each partition all or none; its error code per partition.
pub(super) fn acknowledge(
    state: &mut State,
    group: &str,
    member: &str,
    node: i32,
    acks: &BTreeMap<(Uuid, i32), Acks>,
    shared: &crate::shared::Shared,
) -> BTreeMap<(Uuid, i32), ErrorCode> {
    let limits = state.groups().configs().settings(group, &shared.config).limits();
    let (shares, topics) = state.shares_and_topics();
    let now = Instant::now();
    let mut released = false;
    let codes = acks
        .iter()
        .map(|((topic, index), batches)| {
            let code = match leads(topics, *topic, *index, node) {
                Err(code) => code,
                Ok(()) => match shares.partitions.get_mut(&(group.to_string(), *topic, *index)) {
                    None => ErrorCode::INVALID_RECORD_STATE,
                    Some(p) => match p.acknowledge(member, batches, limits, now) {
                        Ok(again) => {
                            released |= again;
                            ErrorCode::NONE
                        }
                        Err(code) => code,
                    },
                },
            };
            ((*topic, *index), code)
        })
        .collect();
    if released {
        // Released records may be taken by fetches waiting for some.
        shared.appended.notify_waiters();
    }
    codes
}

/// Closes a member's session with a node: what it holds on the session's partitions goes back.
pub(super) fn close_session(shares: &mut SharePartitions, key: &(String, String, i32), shared: &crate::shared::Shared) {
    let Some(session) = shares.sessions.remove(key) else { return };
    let mut released = false;
    for (topic, index) in session.partitions {
        if let Some(p) = shares.partitions.get_mut(&(key.0.clone(), topic, index)) {
            released |= p.release_member(&key.1);
        }
    }
    if released {
        shared.appended.notify_waiters();
    }
}

/// Whether `node` leads the partition, or the error to answer.
fn leads(topics: &Topics, topic: Uuid, index: i32, node: i32) -> Result<(), ErrorCode> {
    let topic = topics.by_id(topic).ok_or(ErrorCode::UNKNOWN_TOPIC_ID)?;
    let partition = topic.partition(index).ok_or(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)?;
    if partition.leader != node {
        return Err(ErrorCode::NOT_LEADER_OR_FOLLOWER);
    }
    Ok(())
}

/// One pass over the session's partitions: each one's answer, and whether any record was acquired.
fn acquire(
    ctx: &Ctx<'_>,
    group: &str,
    member: &str,
    request: &ShareFetchRequest,
) -> (BTreeMap<(Uuid, i32), PartitionData>, bool) {
    let mut state = ctx.shared.state();
    let settings = state.groups().configs().settings(group, &ctx.shared.config);
    let (shares, topics) = state.shares_and_topics();
    let key = (group.to_string(), member.to_string(), ctx.node);
    let partitions: BTreeSet<(Uuid, i32)> = shares.sessions.get(&key).map(|s| s.partitions.clone()).unwrap_or_default();
    let mut room = usize::try_from(request.max_records).unwrap_or(0).max(1);
    let mut bytes_left = usize::try_from(request.max_bytes).unwrap_or(0);
    let lock_until = Instant::now() + settings.lock;
    let mut got = false;
    let mut out = BTreeMap::new();
    for (topic, index) in partitions {
        let mut data = PartitionData { partition_index: index, ..Default::default() };
        data.records = Some(Records::from_bytes(bytes::Bytes::new()));
        if let Err(code) = leads(topics, topic, index, ctx.node) {
            data.error_code = code;
            data.error_message = Some(StrBytes::from(code.to_string()));
            if let Some(p) = topics.partition_by_id(topic, index) {
                data.current_leader =
                    LeaderIdAndEpoch { leader_id: p.leader, leader_epoch: p.leader_epoch, ..Default::default() };
            }
            out.insert((topic, index), data);
            continue;
        }
        let part = topics.partition_by_id(topic, index).expect("checked");
        data.current_leader =
            LeaderIdAndEpoch { leader_id: part.leader, leader_epoch: part.leader_epoch, ..Default::default() };
        let log = &part.log;
        let share = shares
            .partitions
            .entry((group.to_string(), topic, index))
            .or_insert_with(|| SharePartition::new(initial_offset(log, settings.reset)));
        if room > 0 {
            let strict = request.share_acquire_mode == RECORD_LIMIT;
            let (batches, runs) = share.acquire(
                log.entries(),
                log.start_offset(),
                member,
                room,
                strict,
                bytes_left.max(1),
                settings.max_record_locks,
                lock_until,
            );
            let acquired: usize = runs.iter().map(|r| (r.last - r.first + 1) as usize).sum();
            room = room.saturating_sub(acquired);
            let mut records = BytesMut::new();
            for batch in &batches {
                records.extend_from_slice(batch);
            }
            bytes_left = bytes_left.saturating_sub(records.len());
            got |= acquired > 0;
            data.records = Some(Records::from_bytes(records.freeze()));
            data.acquired_records = runs
                .into_iter()
                .map(|r| AcquiredRecords {
                    first_offset: r.first,
                    last_offset: r.last,
                    delivery_count: r.delivery_count,
                    ..Default::default()
                })
                .collect();
        }
        out.insert((topic, index), data);
    }
    (out, got)
}

/// Where a share-partition starts (`share.auto.offset.reset`): the log's start, its end, or
/// the first record at most the duration old (the end if none is).
fn initial_offset(log: &crate::log::Log, reset: Reset) -> i64 {
    match reset {
        Reset::Earliest => log.start_offset(),
        Reset::Latest => log.end_offset(),
        Reset::ByDuration(age) => {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let since = now.saturating_sub(age).as_millis() as i64;
            log.offset_for_timestamp(since).map_or(log.end_offset(), |f| f.offset)
        }
    }
}

/// A partition answered only for its acknowledgements.
fn ack_only(index: i32, code: ErrorCode) -> PartitionData {
    PartitionData {
        partition_index: index,
        acknowledge_error_code: code,
        records: Some(Records::from_bytes(bytes::Bytes::new())),
        ..Default::default()
    }
}

/// Partitions grouped by topic.
fn topics(partitions: impl IntoIterator<Item = ((Uuid, i32), PartitionData)>) -> Vec<ShareFetchableTopicResponse> {
    let mut by_topic: BTreeMap<Uuid, Vec<PartitionData>> = BTreeMap::new();
    for ((topic, _), data) in partitions {
        by_topic.entry(topic).or_default().push(data);
    }
    by_topic
        .into_iter()
        .map(|(topic_id, partitions)| ShareFetchableTopicResponse { topic_id, partitions, ..Default::default() })
        .collect()
}

/// The request refused with `code`, at the top.
pub(super) fn error(_request: &ShareFetchRequest, _version: i16, code: ErrorCode) -> ShareFetchResponse {
    failed(code)
}

fn failed(error_code: ErrorCode) -> ShareFetchResponse {
    ShareFetchResponse { error_code, ..Default::default() }
}
