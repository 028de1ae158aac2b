//! What of a response is an observation. Everything is kept but what the cluster is free to
//! pick, which differs between any two Kafka clusters as well:
//! - ids it assigns (producer ids, topic ids, member ids it generates): named by the script's
//!   aliases, so that they still must match where they recur;
//! - which nodes there are and which answers: broker ids (the fake runs 3 nodes, the test
//!   Kafka 1) read `"a node"`, or stay -1 for none; lists of brokers, the cluster id and node
//!   endpoints are left out;
//! - times it stamps: throttle times, and record timestamps of control batches;
//! - the order of a described group's members, a set that Kafka lists in its hash map's
//!   order: sorted by member id.
//!
//! Record data (base64 in Kafka-style JSON) is decoded: each batch's offsets, producer,
//! sequence, transactional and control flags, and its records' offsets, timestamps, keys and
//! values (or a control record's marker).

use bytes::Bytes;
use kwire::Records;
use kwire_records::{Batch, ControlRecordType, ReadOptions, RecordsExt};
use serde_json::{json, Map, Value};

/// Broker ids, by the key that holds one or a list of them.
const NODE_KEYS: [&str; 8] =
    ["nodeId", "leaderId", "brokerId", "coordinatorId", "controllerId", "replicaNodes", "isrNodes", "offlineReplicas"];

/// Left out, by key: throttle times, and what says which nodes the cluster has.
const LEFT_OUT: [&str; 4] = ["throttleTimeMs", "brokers", "clusterId", "nodeEndpoints"];

/// Ids the cluster picked, by (key, value), and their names.
#[derive(Default)]
pub struct Aliases(Vec<(&'static str, Value, String)>);

impl Aliases {
    pub fn add(&mut self, key: &'static str, value: Value, name: &str) {
        self.0.push((key, value, format!("${{{name}}}")));
    }

    fn of(&self, key: &str, value: &Value) -> Option<&str> {
        self.0.iter().find(|(k, v, _)| *k == key && v == value).map(|(_, _, name)| name.as_str())
    }
}

/// `json` (a response's Kafka-style JSON) as an observation.
pub fn observe(json: Value, aliases: &Aliases) -> Value {
    match json {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                if LEFT_OUT.contains(&key.as_str()) {
                    continue;
                }
                let value = if let Some(name) = aliases.of(&key, &value) {
                    Value::String(name.to_owned())
                } else if NODE_KEYS.contains(&key.as_str()) {
                    node(value)
                } else if key == "records" {
                    records(&value, aliases)
                } else if key == "members" {
                    let mut members = observe(value, aliases);
                    if let Some(list) = members.as_array_mut() {
                        list.sort_by(|x, y| x["memberId"].as_str().cmp(&y["memberId"].as_str()));
                    }
                    members
                } else {
                    observe(value, aliases)
                };
                out.insert(key, value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|v| observe(v, aliases)).collect()),
        other => other,
    }
}

fn node(id: Value) -> Value {
    match id {
        Value::Array(ids) => Value::Array(ids.into_iter().map(node).collect()),
        id => match id.as_i64() {
            Some(n) if n >= 0 => json!("a node"),
            _ => id,
        },
    }
}

/// A records field: its batches and their records.
fn records(value: &Value, aliases: &Aliases) -> Value {
    let Some(text) = value.as_str() else { return value.clone() };
    let raw = base64_bytes(text);
    let records = Records::from_bytes(Bytes::from(raw));
    let batches = records.batches().map(|batch| match batch {
        Ok(Batch::V2(b)) => {
            let h = b.header();
            let producer = aliases.of("producerId", &json!(h.producer_id)).map_or(json!(h.producer_id), |n| json!(n));
            let control = h.attributes.is_control();
            let items: Vec<Value> = b
                .records(&ReadOptions::default())
                .map(|rs| {
                    rs.map(|r| match r {
                        Ok(r) if control => json!({
                            "offset": r.offset,
                            "marker": r.control_marker().map_or_else(|e| json!(e.to_string()), |m| json!(marker(m.kind))),
                        }),
                        Ok(r) => json!({
                            "offset": r.offset,
                            "timestamp": r.timestamp,
                            "key": text_of(r.key),
                            "value": text_of(r.value),
                        }),
                        Err(e) => json!({"error": e.to_string()}),
                    })
                    .collect()
                })
                .unwrap_or_else(|e| vec![json!({"error": e.to_string()})]);
            json!({
                "baseOffset": h.base_offset,
                "lastOffsetDelta": h.last_offset_delta,
                "partitionLeaderEpoch": h.partition_leader_epoch,
                "producerId": producer,
                "producerEpoch": h.producer_epoch,
                "baseSequence": h.base_sequence,
                "transactional": h.attributes.is_transactional(),
                "control": control,
                "records": items,
            })
        }
        Ok(other) => json!({"magic": other.magic()}),
        Err(e) => json!({"error": e.to_string()}),
    });
    Value::Array(batches.collect())
}

fn marker(kind: ControlRecordType) -> &'static str {
    match kind {
        ControlRecordType::Commit => "commit",
        ControlRecordType::Abort => "abort",
        _ => "other",
    }
}

fn text_of(bytes: Option<Bytes>) -> Value {
    bytes.map_or(Value::Null, |b| json!(String::from_utf8_lossy(&b)))
}

/// Kafka-style JSON's bytes: standard base64.
fn base64_bytes(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).expect("records in Kafka-style JSON are base64")
}
