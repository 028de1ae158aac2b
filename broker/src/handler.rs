//! Request semantics of the 0.7.2 broker (spec §1.9), decided without any network I/O: each
//! request becomes "no response", a response to send, or "close the connection".
//!
//! Deliberate divergences, all towards answering instead of closing: OFFSETS on a bad
//! partition answers error 3 (spec §5.4 item 9), OFFSETS on an invalid topic name answers −1.

use std::sync::Arc;

use kafka_wire_runtime::legacy::{
    validate_topic, ErrorCode, FetchRequest, OffsetsRequest, OffsetsResponse, ProduceRequest, Request,
};
use kafka_wire_runtime::log::{FileSlice, LogError};
use tracing::{debug, warn};

use crate::state::BrokerState;

/// One FETCH answer (also one MULTIFETCH entry): bytes to send straight from a segment file.
#[derive(Debug)]
pub struct FetchAnswer {
    pub error: ErrorCode,
    pub data: Option<FileSlice>,
}

impl FetchAnswer {
    fn error(error: ErrorCode) -> FetchAnswer {
        FetchAnswer { error, data: None }
    }

    pub fn len(&self) -> u64 {
        self.data.as_ref().map_or(0, FileSlice::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Debug)]
pub enum Outcome {
    /// PRODUCE and MULTIPRODUCE: nothing is sent back.
    NoResponse,
    Fetch(FetchAnswer),
    MultiFetch(Vec<FetchAnswer>),
    Offsets(OffsetsResponse),
    /// 0.7 closes the connection without an answer.
    Close(String),
}

/// Largest FETCH / MULTIFETCH response body the i32 size field can describe.
const MAX_RESPONSE: u64 = i32::MAX as u64;

pub fn handle(state: &Arc<BrokerState>, request: Request) -> Outcome {
    match request {
        Request::Produce(p) => match produce(state, &p) {
            Ok(()) => Outcome::NoResponse,
            Err(reason) => Outcome::Close(reason),
        },
        Request::MultiProduce(entries) => {
            for p in &entries {
                if let Err(reason) = produce(state, p) {
                    return Outcome::Close(reason);
                }
            }
            Outcome::NoResponse
        }
        Request::Fetch(f) => Outcome::Fetch(fetch(state, &f, MAX_RESPONSE - 2)),
        Request::MultiFetch(entries) => {
            // Keep the total within i32: later entries get what is left.
            let mut budget = MAX_RESPONSE.saturating_sub(2 + 6 * entries.len() as u64);
            let answers = entries
                .iter()
                .map(|f| {
                    let a = fetch(state, f, budget);
                    budget -= a.len();
                    a
                })
                .collect();
            Outcome::MultiFetch(answers)
        }
        Request::Offsets(o) => Outcome::Offsets(offsets(state, &o)),
        // The connection hands MODIFY_TOPIC to `crate::admin` before it gets here.
        Request::ModifyTopic(_) => Outcome::Close("MODIFY_TOPIC must go through the admin handler".into()),
    }
}

/// One PRODUCE entry. `Err` means close the connection.
fn produce(state: &Arc<BrokerState>, p: &ProduceRequest) -> Result<(), String> {
    validate_topic(&p.topic, state.max_topic_name_length()).map_err(|e| format!("produce: invalid topic name: {e}"))?;
    let count = state.partition_count(&p.topic);
    let partition = match p.partition {
        -1 => fastrand::i32(0..count),
        n if n < 0 || n >= count => {
            return Err(format!("produce to {}: partition {n} is outside 0..{count}", p.topic));
        }
        n => n,
    };
    let result = state.logs().append(&p.topic, partition, &p.messages);
    // A log exists from here on even if the set was refused (0.7 creates it first).
    if state.logs().get(&p.topic, partition).is_some() {
        state.note_topic(&p.topic);
    }
    match result {
        Ok(info) => {
            debug!(topic = %p.topic, partition, offset = info.offset, bytes = info.bytes, "appended");
            Ok(())
        }
        Err(LogError::MessageTooLarge { offset, size, max }) => {
            warn!(topic = %p.topic, partition, offset, size, max, "dropping produce: message larger than max.message.size");
            Ok(())
        }
        Err(LogError::InvalidMessageSet(e)) => Err(format!("produce to {}-{partition}: {e}", p.topic)),
        Err(e) => {
            warn!(topic = %p.topic, partition, error = %e, "append failed");
            Err(format!("produce to {}-{partition}: {e}", p.topic))
        }
    }
}

fn fetch(state: &Arc<BrokerState>, f: &FetchRequest, budget: u64) -> FetchAnswer {
    if let Err(e) = validate_topic(&f.topic, state.max_topic_name_length()) {
        debug!(error = %e, "fetch: invalid topic name");
        return FetchAnswer::error(ErrorCode::Unknown);
    }
    let count = state.partition_count(&f.topic);
    if f.partition < 0 || f.partition >= count {
        return FetchAnswer::error(ErrorCode::WrongPartition);
    }
    let max = i64::from(f.max_size).min(budget as i64);
    match state.logs().read(&f.topic, f.partition, f.offset, max) {
        Ok(data) => FetchAnswer { error: ErrorCode::NoError, data },
        Err(LogError::OffsetOutOfRange { .. }) => FetchAnswer::error(ErrorCode::OffsetOutOfRange),
        Err(e) => {
            warn!(topic = %f.topic, partition = f.partition, error = %e, "fetch failed");
            FetchAnswer::error(ErrorCode::Unknown)
        }
    }
}

fn offsets(state: &Arc<BrokerState>, o: &OffsetsRequest) -> OffsetsResponse {
    let fail = |error| OffsetsResponse { error, offsets: Vec::new() };
    if validate_topic(&o.topic, state.max_topic_name_length()).is_err() {
        return fail(ErrorCode::Unknown);
    }
    let count = state.partition_count(&o.topic);
    if o.partition < 0 || o.partition >= count {
        return fail(ErrorCode::WrongPartition);
    }
    match state.logs().offsets_before(&o.topic, o.partition, o.time, o.max_offsets) {
        Ok(offsets) => OffsetsResponse { error: ErrorCode::NoError, offsets },
        Err(e) => {
            warn!(topic = %o.topic, partition = o.partition, error = %e, "offsets failed");
            fail(ErrorCode::Unknown)
        }
    }
}
