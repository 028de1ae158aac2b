//! The one place Kafka's converters knowingly write less than the message holds, applied to
//! our JSON to give what Kafka's must equal exactly.
//!
//! Records: Kafka's generated `write(..., serializeRecords = true)` puts an empty binary node
//! (`new BinaryNode(new byte[]{})`, JSON `""`) for any non-null records field, whatever the
//! batch holds (KIP-673 made the bytes optional and never wrote them); `false` writes
//! `<name>SizeInBytes` instead. Its reader takes the base64 bytes, so check 3 of a case still
//! compares every record byte. `records_are_written_empty_by_kafka` in tests/kafka_java.rs
//! shows this behaviour of Kafka's code.

use kwire_codegen::ir::{json_key, Field, FieldType, Message};
use serde_json::Value;

/// `ours` (JSON of `msg`) as Kafka's converter writes it: non-null records fields as `""`.
pub fn as_kafka_writes(ours: &Value, msg: &Message) -> Value {
    let mut value = ours.clone();
    blank_records(&mut value, &msg.fields, msg);
    value
}

fn blank_records(value: &mut Value, fields: &[Field], msg: &Message) {
    let Value::Object(object) = value else { return };
    for field in fields {
        if let Some(v) = object.get_mut(&json_key(&field.name)) {
            blank_in(v, &field.ty, msg);
        }
    }
}

fn blank_in(value: &mut Value, ty: &FieldType, msg: &Message) {
    match ty {
        FieldType::Records if value.is_string() => *value = Value::String(String::new()),
        FieldType::Struct(name) => {
            if let Some(s) = msg.structs.iter().find(|s| &s.name == name) {
                blank_records(value, &s.fields, msg);
            }
        }
        FieldType::Array(inner) => {
            if let Value::Array(items) = value {
                items.iter_mut().for_each(|item| blank_in(item, inner, msg));
            }
        }
        _ => {}
    }
}
