//! One case: an instance of a schema at a version, run through our code and Kafka's.
//!
//! What must agree (unknown tagged fields are kept on the wire by both, and dropped from JSON
//! by Kafka's converter, so the JSON side compares the instance without them):
//! 1. Kafka decodes our bytes and writes them again: **the same bytes**.
//! 2. Kafka's converter writes JSON for them: **the same JSON values** as ours (with records
//!    as Kafka's converter writes them: see [`crate::kafka_json`]).
//! 3. Kafka's converter reads our JSON and Kafka writes that instance: **the same bytes** as ours
//!    for it.
//! 4. We decode those bytes of Kafka's: **the same value** as ours.

use std::fmt;

use bytes::{Bytes, BytesMut};
use kwire_codegen::ir;
use kwire_runtime::json::Json;
use kwire_runtime::Message;
use serde_json::Value;

use crate::json_diff::{first_difference, without_unknown_tags};
use crate::kafka_json::as_kafka_writes;
use crate::oracle::{Answer, Oracle};

/// Which check a mismatch failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MismatchKind {
    /// Our own code disagreed with the sample encoder or with itself: not Kafka's verdict.
    Ours,
    /// Kafka refused the case at some stage.
    Refused,
    /// Bytes differ (check 1 or 3).
    Bytes,
    /// JSON values differ (check 2).
    Json,
    /// We decode Kafka's bytes to a different value (check 4).
    Value,
    /// The oracle process failed.
    Oracle,
}

/// A failed check, with what differs.
#[derive(Debug, Clone)]
pub struct Mismatch {
    pub kind: MismatchKind,
    pub detail: String,
}

impl Mismatch {
    fn new(kind: MismatchKind, detail: impl Into<String>) -> Self {
        Mismatch { kind, detail: detail.into() }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.detail)
    }
}

/// Our side of a case: the value, its bytes and JSON, and the same without unknown tags.
struct Ours<T> {
    bytes: Vec<u8>,
    json: Value,
    stripped: T,
    stripped_json: Value,
    stripped_bytes: Vec<u8>,
}

fn encode<T: Message>(value: &T, version: i16) -> Result<Vec<u8>, String> {
    let mut out = BytesMut::new();
    value.encode(&mut out, version).map_err(|e| format!("encode: {e}"))?;
    Ok(out.to_vec())
}

fn decode<T: Message>(bytes: &[u8], version: i16) -> Result<T, String> {
    let mut input = Bytes::copy_from_slice(bytes);
    let value = T::decode(&mut input, version).map_err(|e| format!("decode: {e}"))?;
    if !input.is_empty() {
        return Err(format!("decode left {} of {} bytes", input.len(), bytes.len()));
    }
    Ok(value)
}

impl<T: Message + Json> Ours<T> {
    fn new(sample: &[u8], version: i16) -> Result<Self, String> {
        let value: T = decode(sample, version)?;
        let bytes = encode(&value, version)?;
        if bytes != sample {
            return Err(format!(
                "re-encoding the sample differs: {}",
                where_bytes_differ::<T>(sample, &bytes, version)
            ));
        }
        let json = value.to_json(version).map_err(|e| format!("to_json: {e}"))?;
        let stripped_json = without_unknown_tags(&json);
        let stripped = T::from_json(&stripped_json, version).map_err(|e| format!("from_json: {e}"))?;
        let stripped_bytes = encode(&stripped, version)?;
        Ok(Ours { bytes, json, stripped, stripped_json, stripped_bytes })
    }
}

/// Runs one case of `T` (`sample` written by the sample encoder) through our code and Kafka's.
pub fn run<T: Message + Json>(
    sample: &[u8],
    version: i16,
    schema: &ir::Message,
    oracle: &mut Oracle,
) -> Result<(), Vec<Mismatch>> {
    let ours = Ours::<T>::new(sample, version).map_err(|e| vec![Mismatch::new(MismatchKind::Ours, e)])?;
    let answer = oracle
        .ask(T::NAME, version, &ours.bytes, &ours.json.to_string())
        .map_err(|e| vec![Mismatch::new(MismatchKind::Oracle, e)])?;
    let (reencoded, json, from_json) = match answer {
        Answer::Ok { reencoded, json, from_json } => (reencoded, json, from_json),
        Answer::Refused { stage, message } => {
            return Err(vec![Mismatch::new(MismatchKind::Refused, format!("Kafka's {stage} failed: {message}"))]);
        }
    };
    let mut mismatches = Vec::new();
    if reencoded != ours.bytes {
        let at = where_bytes_differ::<T>(&ours.bytes, &reencoded, version);
        mismatches.push(Mismatch::new(MismatchKind::Bytes, format!("Kafka re-encodes our bytes differently: {at}")));
    }
    match serde_json::from_str::<Value>(&json) {
        Ok(theirs) => {
            if let Some(d) = first_difference(&as_kafka_writes(&ours.stripped_json, schema), &theirs) {
                mismatches.push(Mismatch::new(MismatchKind::Json, d));
            }
        }
        Err(e) => {
            mismatches.push(Mismatch::new(MismatchKind::Json, format!("Kafka's JSON does not parse: {e}: {json}")))
        }
    }
    if from_json != ours.stripped_bytes {
        let at = where_bytes_differ::<T>(&ours.stripped_bytes, &from_json, version);
        mismatches.push(Mismatch::new(
            MismatchKind::Bytes,
            format!("Kafka encodes what it reads from our JSON differently: {at}"),
        ));
    } else {
        match decode::<T>(&from_json, version) {
            Ok(theirs) if theirs == ours.stripped => {}
            Ok(theirs) => mismatches.push(Mismatch::new(
                MismatchKind::Value,
                format!("Kafka's bytes decode to {theirs:?}, ours is {:?}", ours.stripped),
            )),
            Err(e) => mismatches.push(Mismatch::new(MismatchKind::Value, format!("Kafka's bytes: {e}"))),
        }
    }
    if mismatches.is_empty() {
        Ok(())
    } else {
        Err(mismatches)
    }
}

/// Where two encodings differ: the first offset, both bytes around it, and the field, found
/// by decoding both and comparing their JSON (the same path `explain` shows).
fn where_bytes_differ<T: Message + Json>(ours: &[u8], theirs: &[u8], version: i16) -> String {
    let at = ours.iter().zip(theirs).position(|(a, b)| a != b).unwrap_or(ours.len().min(theirs.len()));
    let window = |b: &[u8]| hex::encode(&b[at.saturating_sub(8)..(at + 16).min(b.len())]);
    let field = match decode::<T>(theirs, version) {
        Ok(value) => {
            let json = |v: &T| v.to_json(version).unwrap_or_else(|e| Value::String(e.to_string()));
            let ours_value: Result<T, _> = decode(ours, version);
            match ours_value {
                Ok(mine) => first_difference(&json(&mine), &json(&value))
                    .unwrap_or_else(|| "equal values, different bytes".to_string()),
                Err(e) => format!("ours does not decode: {e}"),
            }
        }
        Err(e) => format!("Kafka's bytes do not decode with our code: {e}"),
    };
    format!(
        "{} vs {} bytes, first difference at offset {at} (ours …{}…, Kafka's …{}…); {field}",
        ours.len(),
        theirs.len(),
        window(ours),
        window(theirs)
    )
}
