//! Produce: each partition's one record batch checked as Kafka's `LogValidator` checks it
//! (magic 2, CRC, offset deltas, no control batches from clients, the size limit), idempotent
//! producers' sequences checked, transactional ones checked against their transaction, then
//! appended at the next offsets. acks=0 gets no response.

use kwire::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kwire::messages::{ProduceRequest, ProduceResponse};
use kwire::{ErrorCode, Records, TopicName};
use kwire_records::{Batch, RecordsExt};

use super::{Ctx, MaybeResponse};
use crate::producers::Verdict;
use crate::state::State;
use crate::transactions::Producer;

/// Kafka's default `max.message.bytes` (1 MiB plus a batch header).
const DEFAULT_MAX_MESSAGE_BYTES: usize = 1_048_588;

/// Produce v12 is transactions v2: a transactional batch adds its partition to the transaction.
const TXN_V2_FROM: i16 = 12;

/// Produce v13 names topics by id.
const TOPIC_IDS_FROM: i16 = 13;

pub(super) async fn handle(ctx: &Ctx<'_>, request: ProduceRequest) -> MaybeResponse<ProduceResponse> {
    let (shared, node, version) = (ctx.shared, ctx.node, ctx.version);
    let acks = request.acks;
    let mut state = shared.state();
    let mut appended = false;
    let responses = request
        .topic_data
        .into_iter()
        .map(|topic| {
            let name = if version >= TOPIC_IDS_FROM {
                state.name_of(topic.topic_id).map(str::to_string)
            } else {
                Some(topic.name.0.to_string())
            };
            let partition_responses = topic
                .partition_data
                .into_iter()
                .map(|p| {
                    let mut response = partition_response(p.index, ErrorCode::NONE);
                    let outcome = match &name {
                        None => Err(ErrorCode::UNKNOWN_TOPIC_ID.into()),
                        Some(_) if !matches!(acks, -1..=1) => Err(ErrorCode::INVALID_REQUIRED_ACKS.into()),
                        Some(name) => append(&mut state, node, version, name, p.index, p.records.as_ref()),
                    };
                    match outcome {
                        Ok((base, start, duplicate)) => {
                            appended |= duplicate.is_none();
                            response.base_offset = base;
                            response.log_start_offset = start;
                            response.log_append_time_ms = duplicate.unwrap_or(-1);
                        }
                        Err(Refused { code, with_log_start }) => {
                            response.error_code = code;
                            if with_log_start {
                                response.log_start_offset = name
                                    .as_ref()
                                    .and_then(|name| state.partition(name, p.index))
                                    .map_or(-1, |part| part.log.start_offset());
                            }
                        }
                    }
                    response
                })
                .collect();
            topic_response(version, topic.name, topic.topic_id, partition_responses)
        })
        .collect();
    drop(state);
    if appended {
        shared.appended.notify_waiters();
    }
    MaybeResponse((acks != 0).then(|| ProduceResponse { responses, ..Default::default() }))
}

/// Every partition refused with `code`.
pub(super) fn error(request: &ProduceRequest, version: i16, code: ErrorCode) -> ProduceResponse {
    let responses = request
        .topic_data
        .iter()
        .map(|t| {
            let partitions = t.partition_data.iter().map(|p| partition_response(p.index, code)).collect();
            topic_response(version, t.name.clone(), t.topic_id, partitions)
        })
        .collect();
    ProduceResponse { responses, ..Default::default() }
}

/// A partition's answer before it is appended to: no offset yet.
fn partition_response(index: i32, error_code: ErrorCode) -> PartitionProduceResponse {
    PartitionProduceResponse { index, error_code, base_offset: -1, ..Default::default() }
}

/// A topic's answer, named by name, or by id from v13.
fn topic_response(
    version: i16,
    name: TopicName,
    topic_id: kwire::Uuid,
    partition_responses: Vec<PartitionProduceResponse>,
) -> TopicProduceResponse {
    let mut response = TopicProduceResponse { partition_responses, ..Default::default() };
    if version >= TOPIC_IDS_FROM {
        response.topic_id = topic_id;
    } else {
        response.name = name;
    }
    response
}

/// A partition's refusal, and whether its answer carries the partition's log start offset:
/// Kafka's `ReplicaManager` gives it with the log's own refusals (a sequence or an epoch the
/// producer state refuses, an invalid record), not with those in [`NO_LOG_START`] nor with a
/// transaction's verification failing.
struct Refused {
    code: ErrorCode,
    with_log_start: bool,
}

impl From<ErrorCode> for Refused {
    fn from(code: ErrorCode) -> Self {
        Refused { code, with_log_start: !NO_LOG_START.contains(&code) }
    }
}

/// Refusals answered without the partition's log start offset.
const NO_LOG_START: [ErrorCode; 8] = [
    ErrorCode::INVALID_REQUIRED_ACKS,
    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode::NOT_LEADER_OR_FOLLOWER,
    ErrorCode::MESSAGE_TOO_LARGE,
    ErrorCode::RECORD_LIST_TOO_LARGE,
    ErrorCode::CORRUPT_MESSAGE,
    ErrorCode::KAFKA_STORAGE_ERROR,
    ErrorCode::UNKNOWN_TOPIC_ID,
];

/// Appends one partition's records: (base offset, log start offset, and for a retry of a batch
/// already written, which appends nothing, that batch's log append time) or the partition's
/// error.
fn append(
    state: &mut State,
    node: i32,
    version: i16,
    topic: &str,
    index: i32,
    records: Option<&Records>,
) -> Result<(i64, i64, Option<i64>), Refused> {
    let max_bytes = state
        .topic(topic)
        .and_then(|t| t.configs.get("max.message.bytes"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_MAX_MESSAGE_BYTES);
    state.led_partition(topic, index, node)?;
    let records = records.ok_or(ErrorCode::INVALID_RECORD)?;
    let mut batches = records.batches();
    // v3 and later carry exactly one batch per partition.
    let batch = match (batches.next(), batches.next()) {
        (Some(Ok(Batch::V2(batch))), None) => batch,
        (Some(Ok(Batch::Legacy(_))), _) => return Err(ErrorCode::UNSUPPORTED_FOR_MESSAGE_FORMAT.into()),
        (Some(Err(_)), _) => return Err(ErrorCode::CORRUPT_MESSAGE.into()),
        _ => return Err(ErrorCode::INVALID_RECORD.into()),
    };
    if batch.as_bytes().len() > max_bytes {
        return Err(ErrorCode::MESSAGE_TOO_LARGE.into());
    }
    batch.verify_crc().map_err(|_| ErrorCode::CORRUPT_MESSAGE)?;
    let header = *batch.header();
    if header.attributes.is_control() || header.record_count < 1 || header.last_offset_delta != header.record_count - 1
    {
        return Err(ErrorCode::INVALID_RECORD.into());
    }
    let transactional = header.attributes.is_transactional();
    if transactional {
        in_transaction(state, version, header.producer_id, header.producer_epoch, (topic.to_string(), index))
            .map_err(|code| Refused { code, with_log_start: false })?;
    }
    let partition = state.led_partition(topic, index, node)?;
    let idempotent = header.producer_id >= 0;
    // Sequences wrap from i32::MAX to 0, as Kafka's `DefaultRecordBatch.incrementSequence`.
    let last = (i64::from(header.base_sequence) + i64::from(header.last_offset_delta)) % (i64::from(i32::MAX) + 1);
    let (first, last) = (header.base_sequence, last as i32);
    if idempotent {
        match partition.producers.check(header.producer_id, header.producer_epoch, first, last) {
            Verdict::Append => {}
            // Kafka answers a retry with the batch's largest timestamp as its log append time.
            Verdict::Duplicate(w) => return Ok((w.offset, partition.log.start_offset(), Some(w.max_timestamp))),
            Verdict::Refuse(code) => return Err(Refused { code, with_log_start: true }),
        }
    }
    let epoch = partition.leader_epoch;
    let base = partition.log.append(batch.as_bytes(), i64::from(header.record_count), header.max_timestamp, epoch);
    if idempotent {
        partition.producers.record(
            header.producer_id,
            header.producer_epoch,
            (first, last),
            base,
            header.max_timestamp,
        );
    }
    if transactional {
        partition.txns.wrote(header.producer_id, base);
    }
    Ok((base, partition.log.start_offset(), None))
}

/// A transactional batch may be written where its transaction is: v12+ (transactions v2) adds
/// the partition to it, as Kafka's broker asks its coordinator to; older requests must have
/// added it with AddPartitionsToTxn (Kafka's `transaction.partition.verification.enable`).
fn in_transaction(
    state: &mut State,
    version: i16,
    producer_id: i64,
    epoch: i16,
    partition: (String, i32),
) -> Result<(), ErrorCode> {
    let Some((id, txn)) = state.transactions().of_producer(producer_id) else {
        return Err(ErrorCode::INVALID_PRODUCER_ID_MAPPING);
    };
    if epoch < txn.epoch {
        return Err(ErrorCode::INVALID_PRODUCER_EPOCH);
    }
    if version >= TXN_V2_FROM {
        let id = id.clone();
        let p = Producer { transactional_id: &id, id: producer_id, epoch };
        return state.transactions_mut().add(p, ErrorCode::INVALID_PRODUCER_EPOCH, [partition], std::iter::empty());
    }
    if state.transactions().holds(producer_id, &partition) {
        Ok(())
    } else {
        Err(ErrorCode::INVALID_TXN_STATE)
    }
}
