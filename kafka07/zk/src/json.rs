//! Reading and writing Kafka 0.8's versioned JSON node values.
//!
//! Reading goes in three steps so each failure gets the right name: syntax (and keys given
//! twice, which serde would otherwise let the last one win), then the `version` field, then
//! the typed shape.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ZkDataError;
use super::text::utf8;

/// The only JSON version seed 003 defines for every node.
pub const VERSION_1: i64 = 1;

/// Walks a JSON document and fails on the first object that repeats a key.
struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NoDuplicateKeysVisitor)
    }
}

struct NoDuplicateKeysVisitor;

impl<'de> Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = NoDuplicateKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoDuplicateKeys, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoDuplicateKeys, A::Error> {
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

/// Parses well-formed JSON without repeated keys into a `Value`.
pub(crate) fn parse_value(path: &str, bytes: &[u8]) -> Result<Value, ZkDataError> {
    let text = utf8(path, bytes)?;
    let malformed = |e: serde_json::Error| ZkDataError::Json { path: path.to_owned(), detail: e.to_string() };
    serde_json::from_str::<NoDuplicateKeys>(text).map_err(malformed)?;
    serde_json::from_str::<Value>(text).map_err(malformed)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks that `value` is an object whose `version` is [`VERSION_1`].
pub(crate) fn check_version(path: &str, value: &Value) -> Result<(), ZkDataError> {
    let Value::Object(object) = value else {
        return Err(ZkDataError::schema(path, format!("expected a JSON object, found {}", kind_of(value))));
    };
    let version = object.get("version").ok_or_else(|| ZkDataError::schema(path, "missing field `version`"))?;
    let found = version
        .as_i64()
        .ok_or_else(|| ZkDataError::schema(path, format!("field `version` must be an integer, found {version}")))?;
    if found != VERSION_1 {
        return Err(ZkDataError::UnsupportedVersion { path: path.to_owned(), found, supported: VERSION_1 });
    }
    Ok(())
}

/// Reads a versioned JSON node into its serde wire struct `W`.
pub(crate) fn parse_versioned<W: DeserializeOwned>(path: &str, bytes: &[u8]) -> Result<W, ZkDataError> {
    let value = parse_value(path, bytes)?;
    check_version(path, &value)?;
    W::deserialize(value).map_err(|e| ZkDataError::schema(path, e.to_string()))
}

/// Compact JSON, as Kafka's `Json.encode` writes it.
pub(crate) fn to_json<W: Serialize>(wire: &W) -> Vec<u8> {
    // Only called with derived structs of integers, strings, vectors and string-keyed maps,
    // which serde_json always serialises.
    serde_json::to_vec(wire).expect("JSON serialisation of a plain struct cannot fail")
}

/// A millisecond timestamp that Kafka 0.8 writes as a JSON *string* of decimal digits
/// (`SystemTime.milliseconds.toString`).
pub(crate) fn parse_timestamp(path: &str, text: &str) -> Result<u64, ZkDataError> {
    super::text::parse_unsigned(text, u64::MAX)
        .map_err(|detail| ZkDataError::invalid(path, format!("field `timestamp`: {detail}")))
}
