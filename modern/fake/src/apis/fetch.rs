//! Fetch: by topic name (v0–12) or id (v13+), from the batch holding the offset asked for,
//! within the partition's, the request's and the broker's byte limits (at least one batch, as
//! Kafka), and
//! waiting up to `max_wait_ms` for `min_bytes`. Every response is a full one: the session id
//! is always 0, which clients take as "no fetch session" and answer with full requests.

use std::time::Duration;

use bytes::BytesMut;
use kwire::messages::fetch_response::{FetchableTopicResponse, LeaderIdAndEpoch, PartitionData};
use kwire::messages::{FetchRequest, FetchResponse};
use kwire::{BrokerId, ErrorCode, Records, TopicName};

use super::Ctx;
use crate::shared::Shared;

/// Fetch v13 names topics by id.
const TOPIC_IDS_FROM: i16 = 13;

/// The most record bytes one response carries, whatever the request allows (Kafka's broker
/// `fetch.max.bytes`, 55 MiB): what a consumer can make a node hold for one connection.
const FETCH_MAX_BYTES: usize = 57_671_680;

/// The longest a fetch waits, whatever it asks (a test cluster should not hold a socket for
/// minutes on a client's say-so).
const MAX_WAIT: Duration = Duration::from_secs(30);

pub(super) async fn handle(ctx: &Ctx<'_>, request: FetchRequest) -> FetchResponse {
    let (shared, node, version) = (ctx.shared, ctx.node, ctx.version);
    if request.session_id != 0 || request.session_epoch > 0 {
        // A session this cluster never handed out.
        return FetchResponse { error_code: ErrorCode::FETCH_SESSION_ID_NOT_FOUND, ..Default::default() };
    }
    let wait = Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0)).min(MAX_WAIT);
    let deadline = tokio::time::Instant::now() + wait;
    let min_bytes = usize::try_from(request.min_bytes).unwrap_or(0);
    loop {
        // Registered before reading the logs, so an append in between still wakes us.
        let appended = shared.appended.notified();
        tokio::pin!(appended);
        appended.as_mut().enable();
        let (response, bytes, failed) = read(shared, node, &request, version);
        if bytes >= min_bytes.max(1) || failed || tokio::time::Instant::now() >= deadline {
            return response;
        }
        tokio::select! {
            _ = appended => {}
            _ = tokio::time::sleep_until(deadline) => return read(shared, node, &request, version).0,
        }
    }
}

/// The response as the logs stand, the record bytes in it, and whether a partition failed
/// (which Kafka answers at once).
fn read(shared: &Shared, node: i32, request: &FetchRequest, version: i16) -> (FetchResponse, usize, bool) {
    let mut state = shared.state();
    // v3+ bounds the whole response; the first partition with data gets at least one batch.
    let mut room = if version >= 3 {
        usize::try_from(request.max_bytes).unwrap_or(0).min(FETCH_MAX_BYTES)
    } else {
        FETCH_MAX_BYTES
    };
    let mut total = 0;
    let mut failed = false;
    // v4+: read_committed stops at the last stable offset and names aborted transactions.
    let read_committed = version >= 4 && request.isolation_level == 1;
    let responses = request
        .topics
        .iter()
        .map(|topic| {
            let name =
                if version >= TOPIC_IDS_FROM { state.name_of(topic.topic_id).map(str::to_string) } else { Some(topic.topic.0.to_string()) };
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let mut data = refused(p.partition, ErrorCode::NONE);
                    let Some(name) = &name else {
                        data.error_code = ErrorCode::UNKNOWN_TOPIC_ID;
                        failed = true;
                        return data;
                    };
                    let partition = match state.led_partition(name, p.partition, node) {
                        Ok(partition) => partition,
                        Err(code) => {
                            tracing::debug!(topic = %name, partition = p.partition, node, %code, "Fetch refused");
                            data.error_code = code;
                            failed = true;
                            if code == ErrorCode::NOT_LEADER_OR_FOLLOWER && version >= 12 {
                                // KIP-951: say who leads now.
                                if let Some(part) = state.partition(name, p.partition) {
                                    data.current_leader = LeaderIdAndEpoch {
                                        leader_id: BrokerId(part.leader),
                                        leader_epoch: part.leader_epoch,
                                        ..Default::default()
                                    };
                                }
                            }
                            return data;
                        }
                    };
                    if let Err(code) = super::check_leader_epoch(p.current_leader_epoch, partition.leader_epoch) {
                        tracing::debug!(topic = %name, partition = p.partition, claimed = p.current_leader_epoch, %code, "Fetch epoch");
                        data.error_code = code;
                        failed = true;
                        return data;
                    }
                    let log = &partition.log;
                    let stable = partition.txns.last_stable_offset(log.end_offset());
                    data.high_watermark = log.end_offset();
                    data.last_stable_offset = stable;
                    data.log_start_offset = log.start_offset();
                    if p.fetch_offset < log.start_offset() || p.fetch_offset > log.end_offset() {
                        tracing::debug!(topic = %name, partition = p.partition, offset = p.fetch_offset, end = log.end_offset(), "Fetch out of range");
                        // As every refused partition: no offsets, no records.
                        failed = true;
                        return refused(p.partition, ErrorCode::OFFSET_OUT_OF_RANGE);
                    }
                    let limit = usize::try_from(p.partition_max_bytes).unwrap_or(0).min(room);
                    // At least one batch for the first partition with data, so no batch is too big to ever read.
                    let below = if read_committed { stable } else { log.end_offset() };
                    let (batches, next) = if total == 0 || limit > 0 {
                        log.read(p.fetch_offset, limit.max(1), below)
                    } else {
                        (Vec::new(), p.fetch_offset)
                    };
                    if read_committed {
                        // The aborted transactions whose records the reader gets, for it to drop.
                        data.aborted_transactions = Some(partition.txns.aborted_between(p.fetch_offset, next));
                    }
                    let mut records = BytesMut::new();
                    for batch in &batches {
                        records.extend_from_slice(batch);
                    }
                    total += records.len();
                    room = room.saturating_sub(records.len());
                    data.records = Some(Records::from_bytes(records.freeze()));
                    data
                })
                .collect();
            topic_response(version, topic.topic.clone(), topic.topic_id, partitions)
        })
        .collect();
    (FetchResponse { responses, ..Default::default() }, total, failed)
}

/// Every partition refused with `code` (from v7 the whole response too).
pub(super) fn error(request: &FetchRequest, version: i16, code: ErrorCode) -> FetchResponse {
    let responses = request
        .topics
        .iter()
        .map(|t| {
            let partitions = t.partitions.iter().map(|p| refused(p.partition, code)).collect();
            topic_response(version, t.topic.clone(), t.topic_id, partitions)
        })
        .collect();
    FetchResponse { error_code: if version >= 7 { code } else { ErrorCode::NONE }, responses, ..Default::default() }
}

/// A refused partition's answer: no offsets, no records (Kafka's
/// `FetchResponse.partitionResponse(error)`).
fn refused(partition_index: i32, error_code: ErrorCode) -> PartitionData {
    PartitionData {
        partition_index,
        error_code,
        high_watermark: -1,
        last_stable_offset: -1,
        log_start_offset: -1,
        aborted_transactions: None,
        records: Some(Default::default()),
        ..Default::default()
    }
}

/// A topic's answer, named by name, or by id from v13.
fn topic_response(
    version: i16,
    name: TopicName,
    topic_id: kwire::Uuid,
    partitions: Vec<PartitionData>,
) -> FetchableTopicResponse {
    let mut response = FetchableTopicResponse { partitions, ..Default::default() };
    if version >= TOPIC_IDS_FROM {
        response.topic_id = topic_id;
    } else {
        response.topic = name;
    }
    response
}
