//! Kafka-style JSON for generated messages (cargo feature `json`), as Kafka's generated
//! `*JsonConverter` classes write and read it: field names as in the schema with a lower-case
//! first letter (`errorCode`), only the fields of the given version (tagged ones only when not
//! at their default), bytes and records as base64, uuids in Kafka's own base64 form
//! (`Uuid.toString()`: URL-safe, unpadded), 64-bit integers as JSON numbers. Reading, a field
//! the version requires must be there, others default when missing, and keys it does not know
//! are ignored, as Kafka's reader does. Unlike Kafka, tagged fields this code does not know are
//! kept, under `"_unknownTaggedFields": [{"tag": 7, "data": "<base64>"}]`.

use std::fmt;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use bytes::Bytes;
pub use serde_json::{Map, Value};
use uuid::Uuid;

use crate::entity::{BrokerId, GroupId, ProducerId, TopicName, TransactionalId};
use crate::error_code::ErrorCode;
use crate::fixed_array::{Fixed, FixedArray};
use crate::records::Records;
use crate::str_bytes::StrBytes;
use crate::tagged::UnknownTags;
use crate::version::VersionRange;

/// The key under which tagged fields this code does not know are kept.
pub const UNKNOWN_TAGS_KEY: &str = "_unknownTaggedFields";

/// A value that converts to and from Kafka-style JSON at a given version. Generated for every
/// message and struct; implemented here for the field types.
///
/// Implementations write `write_json` and `read_json`, generic over a [`Style`] that has one
/// value ([`Kafka`]): generic code is compiled only where it is used, so a crate that defines
/// every message of Kafka's corpus does not compile their converters until something calls
/// `to_json` or `from_json`, and then only for the messages it reaches.
pub trait Json: Sized {
    /// The JSON of `self` at `version`.
    fn to_json(&self, version: i16) -> Result<Value, JsonError> {
        self.write_json::<Kafka>(version)
    }
    /// Reads a value of `version` from `value`.
    fn from_json(value: &Value, version: i16) -> Result<Self, JsonError> {
        Self::read_json::<Kafka>(value, version)
    }
    /// `to_json`, as implementations provide it.
    fn write_json<S: Style>(&self, version: i16) -> Result<Value, JsonError>;
    /// `from_json`, as implementations provide it.
    fn read_json<S: Style>(value: &Value, version: i16) -> Result<Self, JsonError>;
}

mod sealed {
    pub trait Sealed {}
}

/// How JSON is written; only Kafka's way exists (see [`Json`] for why this is a type).
pub trait Style: sealed::Sealed {}

/// Kafka's generated converters' JSON.
#[derive(Debug)]
pub enum Kafka {}

impl sealed::Sealed for Kafka {}
impl Style for Kafka {}

/// Why JSON could not be read (or a message written): what, and in which struct and field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    message: String,
    /// (struct, JSON field name), innermost first.
    path: Vec<(&'static str, &'static str)>,
}

impl JsonError {
    pub fn new(message: impl Into<String>) -> Self {
        JsonError { message: message.into(), path: Vec::new() }
    }

    /// What went wrong, without the path.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `Struct.field` steps from the outermost struct in.
    pub fn path(&self) -> String {
        let steps: Vec<String> = self.path.iter().rev().map(|(s, f)| format!("{s}.{f}")).collect();
        steps.join(" > ")
    }

    /// Adds the struct and field the error happened in.
    pub fn within(mut self, name: &'static str, field: &'static str) -> Self {
        self.path.push((name, field));
        self
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path(), self.message)
        }
    }
}

impl std::error::Error for JsonError {}

/// `.within(struct, field)` on results, as generated code calls it.
pub trait JsonWithin<T> {
    fn within_json(self, name: &'static str, field: &'static str) -> Result<T, JsonError>;
}

impl<T> JsonWithin<T> for Result<T, JsonError> {
    #[inline]
    fn within_json(self, name: &'static str, field: &'static str) -> Result<T, JsonError> {
        self.map_err(|e| e.within(name, field))
    }
}

/// The object a struct is read from.
pub fn object(value: &Value) -> Result<&Map<String, Value>, JsonError> {
    value.as_object().map_or_else(|| expected("a JSON object", value), Ok)
}

/// Adds `value` under `key`: what generated `to_json` calls for each field it writes. Not
/// generic and not inlined, so each field costs one call in the generated code.
#[inline(never)]
pub fn put(object: &mut Map<String, Value>, key: &'static str, value: Value) {
    object.insert(key.to_owned(), value);
}

/// The value under `key`, if any: what generated `from_json` looks each field up with. Not
/// inlined, so the map lookup is compiled once.
#[inline(never)]
pub fn field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    object.get(key)
}

/// A field the version requires is missing.
pub fn missing(version: i16) -> JsonError {
    JsonError::new(format!("missing, and mandatory in version {version}"))
}

/// The version must be one the message has.
pub fn check_version(version: i16, valid: VersionRange) -> Result<(), JsonError> {
    if valid.contains(version) {
        Ok(())
    } else {
        Err(JsonError::new(format!("version {version} is not supported (valid {valid})")))
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn expected<T>(what: &str, value: &Value) -> Result<T, JsonError> {
    Err(JsonError::new(format!("expected {what}, found {}", kind(value))))
}

impl Json for bool {
    fn write_json<S: Style>(&self, _: i16) -> Result<Value, JsonError> {
        Ok(Value::Bool(*self))
    }
    fn read_json<S: Style>(value: &Value, _: i16) -> Result<Self, JsonError> {
        value.as_bool().map_or_else(|| expected("a boolean", value), Ok)
    }
}

/// An integer from a JSON number (or, as Kafka's `MessageUtil` accepts, a string of digits),
/// checked against the type's range.
fn integer<T: TryFrom<i64>>(value: &Value, type_name: &str) -> Result<T, JsonError> {
    let n = match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    let n = n.ok_or_else(|| JsonError::new(format!("expected an integer ({type_name}), found {}", kind(value))))?;
    T::try_from(n).map_err(|_| JsonError::new(format!("{n} is out of range for {type_name}")))
}

macro_rules! json_int {
    ($($ty:ty),*) => {$(
        impl Json for $ty {
            fn write_json<S: Style>(&self, _: i16) -> Result<Value, JsonError> {
                Ok(Value::from(*self))
            }
            fn read_json<S: Style>(value: &Value, _: i16) -> Result<Self, JsonError> {
                integer(value, stringify!($ty))
            }
        }
    )*};
}

json_int!(i8, i16, u16, i32, u32, i64);

/// Finite numbers as JSON numbers; NaN and the infinities, which JSON has no number for, as the
/// tokens Jackson writes for them, quoted.
impl Json for f64 {
    fn write_json<S: Style>(&self, _: i16) -> Result<Value, JsonError> {
        Ok(match serde_json::Number::from_f64(*self) {
            Some(n) => Value::Number(n),
            None if self.is_nan() => Value::from("NaN"),
            None if *self > 0.0 => Value::from("Infinity"),
            None => Value::from("-Infinity"),
        })
    }
    fn read_json<S: Style>(value: &Value, _: i16) -> Result<Self, JsonError> {
        match value {
            Value::Number(n) => n.as_f64().map_or_else(|| expected("a float64", value), Ok),
            Value::String(s) => match s.as_str() {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                other => other.parse().map_err(|_| JsonError::new(format!("{other:?} is not a float64"))),
            },
            _ => expected("a float64", value),
        }
    }
}

impl Json for StrBytes {
    fn write_json<S: Style>(&self, _: i16) -> Result<Value, JsonError> {
        Ok(Value::from(self.as_str()))
    }
    fn read_json<S: Style>(value: &Value, _: i16) -> Result<Self, JsonError> {
        value.as_str().map_or_else(|| expected("a string", value), |s| Ok(StrBytes::from(s)))
    }
}

/// Bytes as standard, padded base64, as Jackson writes a `BinaryNode`.
impl Json for Bytes {
    fn write_json<S: Style>(&self, _: i16) -> Result<Value, JsonError> {
        Ok(Value::from(STANDARD.encode(self)))
    }
    fn read_json<S: Style>(value: &Value, _: i16) -> Result<Self, JsonError> {
        let Some(text) = value.as_str() else { return expected("a base64 string", value) };
        STANDARD.decode(text).map(Bytes::from).map_err(|e| JsonError::new(format!("bad base64: {e}")))
    }
}

/// Records as Kafka's converters write them (with records serialized): base64 of their bytes.
impl Json for Records {
    fn write_json<S: Style>(&self, version: i16) -> Result<Value, JsonError> {
        self.as_bytes().write_json::<S>(version)
    }
    fn read_json<S: Style>(value: &Value, version: i16) -> Result<Self, JsonError> {
        Bytes::read_json::<S>(value, version).map(Records::from_bytes)
    }
}

/// Kafka's `Uuid.toString()`: the 16 bytes as URL-safe base64 without padding (22 characters).
impl Json for Uuid {
    fn write_json<S: Style>(&self, _: i16) -> Result<Value, JsonError> {
        Ok(Value::from(URL_SAFE_NO_PAD.encode(self.as_bytes())))
    }
    fn read_json<S: Style>(value: &Value, _: i16) -> Result<Self, JsonError> {
        let Some(text) = value.as_str() else { return expected("a uuid string", value) };
        let raw = URL_SAFE_NO_PAD.decode(text).map_err(|e| JsonError::new(format!("bad uuid {text:?}: {e}")))?;
        let raw: [u8; 16] = raw.try_into().map_err(|_| JsonError::new(format!("uuid {text:?} is not 16 bytes")))?;
        Ok(Uuid::from_bytes(raw))
    }
}

impl<T: Json> Json for Option<T> {
    #[inline(never)]
    fn write_json<S: Style>(&self, version: i16) -> Result<Value, JsonError> {
        match self {
            Some(v) => v.write_json::<S>(version),
            None => Ok(Value::Null),
        }
    }
    #[inline(never)]
    fn read_json<S: Style>(value: &Value, version: i16) -> Result<Self, JsonError> {
        match value {
            Value::Null => Ok(None),
            v => T::read_json::<S>(v, version).map(Some),
        }
    }
}

fn elements(value: &Value) -> Result<&Vec<Value>, JsonError> {
    value.as_array().map_or_else(|| expected("a JSON array", value), Ok)
}

// Plain loops rather than iterator chains, and never inlined: these are instantiated for
// every element type of every schema, and JSON is not a hot path.
impl<T: Json> Json for Vec<T> {
    #[inline(never)]
    fn write_json<S: Style>(&self, version: i16) -> Result<Value, JsonError> {
        let mut out = Vec::with_capacity(self.len());
        for v in self {
            out.push(v.write_json::<S>(version)?);
        }
        Ok(Value::Array(out))
    }
    #[inline(never)]
    fn read_json<S: Style>(value: &Value, version: i16) -> Result<Self, JsonError> {
        let items = elements(value)?;
        let mut out = Vec::with_capacity(items.len());
        for v in items {
            out.push(T::read_json::<S>(v, version)?);
        }
        Ok(out)
    }
}

/// As a `Vec` of its values (a copy: JSON is not a hot path, and one loop serves both).
impl<T: Fixed + Json> Json for FixedArray<T> {
    #[inline(never)]
    fn write_json<S: Style>(&self, version: i16) -> Result<Value, JsonError> {
        self.to_vec().write_json::<S>(version)
    }
    #[inline(never)]
    fn read_json<S: Style>(value: &Value, version: i16) -> Result<Self, JsonError> {
        Vec::<T>::read_json::<S>(value, version).map(FixedArray::from)
    }
}

macro_rules! json_newtype {
    ($($ty:ident($inner:ty)),*) => {$(
        impl Json for $ty {
            fn write_json<S: Style>(&self, version: i16) -> Result<Value, JsonError> {
                self.0.write_json::<S>(version)
            }
            fn read_json<S: Style>(value: &Value, version: i16) -> Result<Self, JsonError> {
                <$inner>::read_json::<S>(value, version).map($ty)
            }
        }
    )*};
}

json_newtype!(
    ErrorCode(i16),
    BrokerId(i32),
    ProducerId(i64),
    TopicName(StrBytes),
    GroupId(StrBytes),
    TransactionalId(StrBytes)
);

/// Adds the tagged fields this code does not know, if any, under [`UNKNOWN_TAGS_KEY`].
pub fn put_unknown_tags(object: &mut Map<String, Value>, tags: &UnknownTags) {
    if tags.is_empty() {
        return;
    }
    let list = tags
        .iter()
        .map(|(tag, data)| {
            let mut entry = Map::new();
            entry.insert("tag".to_owned(), Value::from(*tag));
            entry.insert("data".to_owned(), Value::from(STANDARD.encode(data)));
            Value::Object(entry)
        })
        .collect();
    object.insert(UNKNOWN_TAGS_KEY.to_owned(), Value::Array(list));
}

/// Reads what [`put_unknown_tags`] wrote (nothing when the key is absent).
pub fn get_unknown_tags(object: &Map<String, Value>) -> Result<UnknownTags, JsonError> {
    let Some(list) = object.get(UNKNOWN_TAGS_KEY) else { return Ok(UnknownTags::new()) };
    let mut tags = UnknownTags::new();
    for entry in elements(list)? {
        let entry = self::object(entry)?;
        let tag: u32 = integer(entry.get("tag").unwrap_or(&Value::Null), "tag (u32)")?;
        let data = Bytes::from_json(entry.get("data").unwrap_or(&Value::Null), 0)?;
        if tags.insert(tag, data).is_some() {
            return Err(JsonError::new(format!("tag {tag} is listed twice")));
        }
    }
    Ok(tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_kafkas_base64() {
        // Kafka's Uuid.toString() of the uuid with bytes 0..16.
        let uuid = Uuid::from_bytes(std::array::from_fn(|i| i as u8));
        assert_eq!(uuid.to_json(0).unwrap(), Value::from("AAECAwQFBgcICQoLDA0ODw"));
        assert_eq!(Uuid::from_json(&Value::from("AAECAwQFBgcICQoLDA0ODw"), 0).unwrap(), uuid);
        assert!(Uuid::from_json(&Value::from("AAEC"), 0).is_err());
    }

    #[test]
    fn integers_are_range_checked_and_bytes_are_base64() {
        assert_eq!(i16::from_json(&Value::from(-2), 0).unwrap(), -2);
        assert!(i8::from_json(&Value::from(200), 0).unwrap_err().to_string().contains("out of range for i8"));
        assert_eq!(i64::from_json(&Value::from("9007199254740993"), 0).unwrap(), 9_007_199_254_740_993);
        assert_eq!(Bytes::from_static(b"hi!").to_json(0).unwrap(), Value::from("aGkh"));
        assert_eq!(f64::NAN.to_json(0).unwrap(), "NaN");
    }
}
