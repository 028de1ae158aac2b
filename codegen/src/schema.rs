//! The schema model: Kafka's JSON message-definition dialect, mirrored key for key.
//!
//! Every struct denies unknown keys, so a key that upstream Kafka adds later fails loudly
//! instead of being silently ignored. Values are kept close to their JSON spelling (version
//! ranges and defaults stay strings); `validate` checks them and `lower` turns them into the IR.
//!
//! A few keys accept more than one JSON spelling because Kafka's Jackson-based parser coerces
//! them and the corpus relies on it: `tag` may be a number or a numeric string, `default` may be
//! a string, number or boolean, and the boolean flags also accept `"true"`/`"false"` strings.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// The keys a message object may have (kept in step with `MessageSpec`).
pub const MESSAGE_KEYS: &[&str] = &[
    "apiKey",
    "type",
    "name",
    "validVersions",
    "flexibleVersions",
    "deprecatedVersions",
    "latestVersionUnstable",
    "listeners",
    "fields",
    "commonStructs",
];

/// The keys an entry of `commonStructs` may have (kept in step with `StructSpec`).
pub const STRUCT_KEYS: &[&str] = &["name", "versions", "fields"];

/// The keys a field may have (kept in step with `FieldSpec`).
pub const FIELD_KEYS: &[&str] = &[
    "name",
    "type",
    "versions",
    "nullableVersions",
    "taggedVersions",
    "tag",
    "default",
    "ignorable",
    "mapKey",
    "entityType",
    "zeroCopy",
    "flexibleVersions",
    "about",
    "fields",
];

/// One schema file: a request, response, header, data or metadata message.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MessageSpec {
    /// The API key (requests and responses) or record id (metadata records).
    pub api_key: Option<i16>,
    /// `request`, `response`, `header`, `data` or `metadata`; kept as text so that an unknown
    /// kind is reported by validation with its rule number.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub name: Option<String>,
    #[serde(default, deserialize_with = "de_opt_text")]
    pub valid_versions: Option<String>,
    #[serde(default, deserialize_with = "de_opt_text")]
    pub flexible_versions: Option<String>,
    #[serde(default, deserialize_with = "de_opt_text")]
    pub deprecated_versions: Option<String>,
    #[serde(default, deserialize_with = "de_opt_flag")]
    pub latest_version_unstable: Option<bool>,
    pub listeners: Option<Vec<String>>,
    #[serde(default)]
    pub fields: Vec<FieldSpec>,
    #[serde(default)]
    pub common_structs: Vec<StructSpec>,
    /// The schema's version-history comments (`// Version 3 adds ...`), one paragraph per
    /// entry: not a JSON key, read from the text by `parse::history_comments`.
    #[serde(skip)]
    pub history: Vec<String>,
}

/// An entry of `commonStructs`: a struct shared by several fields of one message.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StructSpec {
    pub name: Option<String>,
    #[serde(default, deserialize_with = "de_opt_text")]
    pub versions: Option<String>,
    #[serde(default)]
    pub fields: Vec<FieldSpec>,
}

/// One field of a message or struct.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldSpec {
    pub name: Option<String>,
    /// `int32`, `string`, `[]Foo`, `Foo`, ...
    #[serde(rename = "type")]
    pub ty: Option<String>,
    #[serde(default, deserialize_with = "de_opt_text")]
    pub versions: Option<String>,
    #[serde(default, deserialize_with = "de_opt_text")]
    pub nullable_versions: Option<String>,
    #[serde(default, deserialize_with = "de_opt_text")]
    pub tagged_versions: Option<String>,
    /// The tag number; JSON number or numeric string (both occur in Kafka's corpus).
    #[serde(default, deserialize_with = "de_opt_tag")]
    pub tag: Option<i64>,
    /// The default as Kafka's generator sees it: text. Numbers and booleans are converted to
    /// their JSON spelling; JSON `null` means "no default".
    #[serde(default, deserialize_with = "de_opt_text")]
    pub default: Option<String>,
    #[serde(default, deserialize_with = "de_opt_flag")]
    pub ignorable: Option<bool>,
    #[serde(default, deserialize_with = "de_opt_flag")]
    pub map_key: Option<bool>,
    pub entity_type: Option<String>,
    #[serde(default, deserialize_with = "de_opt_flag")]
    pub zero_copy: Option<bool>,
    /// Field-level override of the message's flexible versions (strings and bytes only).
    #[serde(default, deserialize_with = "de_opt_text")]
    pub flexible_versions: Option<String>,
    pub about: Option<String>,
    /// Nested fields of an inline struct (`[]Foo` or `Foo`); `None` when the key is absent.
    pub fields: Option<Vec<FieldSpec>>,
}

/// A JSON string, number or boolean read as text (Jackson's coercion); `null` reads as absent.
fn de_opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct TextVisitor;
    impl<'de> Visitor<'de> for TextVisitor {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string, number or boolean")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(TextVisitor)
}

/// A boolean flag: JSON `true`/`false` or the strings `"true"`/`"false"`.
fn de_opt_flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    struct FlagVisitor;
    impl<'de> Visitor<'de> for FlagVisitor {
        type Value = Option<bool>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("true or false")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            match v {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                other => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
            }
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(FlagVisitor)
}

/// A tag: a JSON integer or a string holding one.
fn de_opt_tag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct TagVisitor;
    impl<'de> Visitor<'de> for TagVisitor {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an integer tag (number or numeric string)")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            i64::try_from(v).map(Some).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            v.trim().parse::<i64>().map(Some).map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(TagVisitor)
}
