//! Compares two JSON values as values (Kafka's Jackson and serde_json spell numbers their own
//! way) and names the first place they differ.

use serde_json::Value;

use kwire_runtime::json::UNKNOWN_TAGS_KEY;

/// The first difference between `ours` and `theirs`, as `$.path: ours vs theirs`.
pub fn first_difference(ours: &Value, theirs: &Value) -> Option<String> {
    diff_at("$", ours, theirs)
}

fn diff_at(path: &str, ours: &Value, theirs: &Value) -> Option<String> {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                match b.get(key) {
                    Some(other) => {
                        if let Some(d) = diff_at(&format!("{path}.{key}"), value, other) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{path}.{key}: ours {value}, Kafka's missing")),
                }
            }
            b.iter()
                .find(|(key, _)| !a.contains_key(*key))
                .map(|(key, value)| format!("{path}.{key}: ours missing, Kafka's {value}"))
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!("{path}: ours has {} elements, Kafka's {}", a.len(), b.len()));
            }
            a.iter().zip(b).enumerate().find_map(|(i, (x, y))| diff_at(&format!("{path}[{i}]"), x, y))
        }
        (Value::Number(a), Value::Number(b)) if numbers_equal(a, b) => None,
        (a, b) if a == b => None,
        (a, b) => Some(format!("{path}: ours {a}, Kafka's {b}")),
    }
}

/// Integers compare exactly; a float compares by value (Jackson writes `1.0E10` where
/// serde_json writes `10000000000.0`).
fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ if a.is_f64() || b.is_f64() => a.as_f64() == b.as_f64(),
        _ => false,
    }
}

/// `value` without the unknown tagged fields that our JSON keeps and Kafka's drops.
pub fn without_unknown_tags(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| key.as_str() != UNKNOWN_TAGS_KEY)
                .map(|(key, v)| (key.clone(), without_unknown_tags(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_unknown_tags).collect()),
        other => other.clone(),
    }
}
