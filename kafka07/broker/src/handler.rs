//! Request semantics of the 0.7.2 broker (spec §1.9), decided without any network I/O: each
//! request becomes "no response", a response to send, or "close the connection".
//!
//! Deliberate divergences, all towards answering instead of closing: OFFSETS on a bad
//! partition answers error 3 (spec §5.4 item 9), OFFSETS on an invalid topic name answers −1.

use std::sync::Arc;

use kwire07_protocol::log::{FileSlice, FlushPoint, LogError};
use kwire07_protocol::{
    validate_new_topic, validate_topic, ErrorCode, FetchRequest, OffsetsRequest, OffsetsResponse, ProduceRequest,
    Request,
};
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
    Fetch(FetchAnswer),
    MultiFetch(Vec<FetchAnswer>),
    Offsets(OffsetsResponse),
    /// 0.7 closes the connection without an answer.
    Close(String),
}

/// Largest FETCH / MULTIFETCH response body the i32 size field can describe.
const MAX_RESPONSE: u64 = i32::MAX as u64;

/// What a run of PRODUCE / MULTIPRODUCE requests did.
#[derive(Debug, Default)]
pub struct ProduceOutcome {
    /// Flushes that `log.flush.interval` asked for, at most one per log (the furthest). 0.7
    /// fsyncs inline before it reads the next request; here the fsync runs in the background
    /// and the connection waits for these before it answers anything, so what a client can
    /// observe is the same.
    pub flushes: Vec<FlushPoint>,
    /// Set when a request failed in a way that closes the connection (later ones were skipped).
    pub close: Option<String>,
}

impl ProduceOutcome {
    /// Adds a flush point, keeping one per log.
    pub fn owe(flushes: &mut Vec<FlushPoint>, point: FlushPoint) {
        match flushes.iter_mut().find(|p| p.same_log(&point)) {
            Some(p) if p.offset() < point.offset() => *p = point,
            Some(_) => {}
            None => flushes.push(point),
        }
    }
}

/// Whether a request is a PRODUCE or MULTIPRODUCE (no response, handled by [`produce_all`]).
pub fn is_produce(request: &Request) -> bool {
    matches!(request, Request::Produce(_) | Request::MultiProduce(_))
}

/// Appends the PRODUCE and MULTIPRODUCE requests in order (other requests are skipped), stopping
/// at the first one that closes the connection.
pub fn produce_all(state: &Arc<BrokerState>, requests: impl IntoIterator<Item = Request>) -> ProduceOutcome {
    let mut out = ProduceOutcome::default();
    for request in requests {
        let entries = match request {
            Request::Produce(p) => vec![p],
            Request::MultiProduce(entries) => entries,
            _ => continue,
        };
        // One decompression budget for everything the request carries.
        let mut budget = state.request_decompression_budget();
        for p in &entries {
            match produce(state, p, &mut budget) {
                Ok(Some(point)) => ProduceOutcome::owe(&mut out.flushes, point),
                Ok(None) => {}
                Err(reason) => {
                    out.close = Some(reason.to_string());
                    return out;
                }
            }
        }
    }
    out
}

/// Handles a request that is answered (PRODUCE and MULTIPRODUCE go through [`produce_all`]).
/// `None` when a log it needs is locked and `nonblocking` is set: call again where blocking is
/// fine.
pub fn handle(state: &Arc<BrokerState>, request: &Request, nonblocking: bool) -> Option<Outcome> {
    Some(match request {
        // The connection runs these as jobs, which also owe the flushes they ask for.
        Request::Produce(_) | Request::MultiProduce(_) => Outcome::Close("PRODUCE must go through produce_all".into()),
        Request::Fetch(f) => Outcome::Fetch(fetch(state, f, MAX_RESPONSE - 2, nonblocking)?),
        Request::MultiFetch(entries) => {
            // Keep the total within i32: later entries get what is left.
            let mut budget = MAX_RESPONSE.saturating_sub(2 + 6 * entries.len() as u64);
            let mut answers = Vec::with_capacity(entries.len());
            for f in entries {
                let a = fetch(state, f, budget, nonblocking)?;
                budget -= a.len();
                answers.push(a);
            }
            Outcome::MultiFetch(answers)
        }
        Request::Offsets(o) => {
            if nonblocking {
                return None;
            }
            Outcome::Offsets(offsets(state, o))
        }
        // The connection hands MODIFY_TOPIC to `crate::admin` before it gets here.
        Request::ModifyTopic(_) => Outcome::Close("MODIFY_TOPIC must go through the admin handler".into()),
    })
}

/// Why one PRODUCE entry closes the connection.
#[derive(Debug, thiserror::Error)]
enum ProduceError {
    #[error("produce: invalid topic name: {0}")]
    Topic(kwire07_protocol::TopicError),
    #[error("produce to {topic}: partition {partition} is outside 0..{count}")]
    Partition { topic: String, partition: i32, count: i32 },
    #[error("produce to {topic}-{partition}: {source}")]
    Log { topic: String, partition: i32, source: LogError },
}

/// One PRODUCE entry: the flush it asks for, if any. `Err` means close the connection. Only
/// an error of the disk itself halts the broker ([`LogError::is_disk_failure`]); what a request
/// can cause (a name too long for the filesystem, too many partitions or open files) closes
/// that connection, as 0.7 does for other bad requests.
fn produce(
    state: &Arc<BrokerState>,
    p: &ProduceRequest,
    budget: &mut usize,
) -> Result<Option<FlushPoint>, ProduceError> {
    let count = state.partition_count(&p.topic);
    validate_new_topic(&p.topic, state.max_topic_name_length(), count).map_err(ProduceError::Topic)?;
    let partition = match p.partition {
        -1 => fastrand::i32(0..count),
        n if n < 0 || n >= count => {
            return Err(ProduceError::Partition { topic: p.topic.clone(), partition: n, count });
        }
        n => n,
    };
    let refused = |source| ProduceError::Log { topic: p.topic.clone(), partition, source };
    let result = state.logs().append_deferred_within(&p.topic, partition, &p.messages, budget);
    // A log exists from here on even if the set was refused (0.7 creates it first).
    if state.logs().get(&p.topic, partition).is_some() {
        state.note_topic(&p.topic);
    }
    match result {
        Ok(appended) => {
            let info = appended.info;
            debug!(topic = %p.topic, partition, offset = info.offset, bytes = info.bytes, "appended");
            Ok(appended.flush)
        }
        Err(LogError::MessageTooLarge { offset, size, max }) => {
            warn!(topic = %p.topic, partition, offset, size, max, "dropping produce: message larger than max.message.size");
            Ok(None)
        }
        Err(e @ LogError::InvalidMessageSet(_)) => Err(refused(e)),
        Err(e) if e.is_disk_failure() => {
            state.halt(format!("append to {}-{partition} failed: {e}", p.topic));
            Err(refused(e))
        }
        Err(e) => {
            warn!(topic = %p.topic, partition, error = %e, "refusing produce");
            Err(refused(e))
        }
    }
}

/// One FETCH entry; `None` when `nonblocking` and the log is locked.
fn fetch(state: &Arc<BrokerState>, f: &FetchRequest, budget: u64, nonblocking: bool) -> Option<FetchAnswer> {
    if let Err(e) = validate_topic(&f.topic, state.max_topic_name_length()) {
        debug!(error = %e, "fetch: invalid topic name");
        return Some(FetchAnswer::error(ErrorCode::Unknown));
    }
    let count = state.partition_count(&f.topic);
    if f.partition < 0 || f.partition >= count {
        return Some(FetchAnswer::error(ErrorCode::WrongPartition));
    }
    let max = i64::from(f.max_size).min(budget as i64);
    let read = if nonblocking {
        state.logs().try_read(&f.topic, f.partition, f.offset, max)?
    } else {
        state.logs().read(&f.topic, f.partition, f.offset, max)
    };
    Some(match read {
        Ok(data) => FetchAnswer { error: ErrorCode::NoError, data },
        Err(LogError::OffsetOutOfRange { .. }) => FetchAnswer::error(ErrorCode::OffsetOutOfRange),
        Err(e) => {
            warn!(topic = %f.topic, partition = f.partition, error = %e, "fetch failed");
            FetchAnswer::error(ErrorCode::Unknown)
        }
    })
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
