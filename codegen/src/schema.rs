//! The schema model: Kafka's JSON message-definition dialect, mirrored key for key.
//!
//! Every struct denies unknown keys, so a key that upstream Kafka adds later fails loudly
//! instead of being silently ignored. Values are kept close to their JSON spelling (version
//! ranges and defaults stay strings); `validate` checks them and `lower` turns them into the IR.
//!
//! The model is read from a parsed [`crate::json::Value`] by hand rather than derived: a build
//! script's clean build would otherwise compile a proc-macro crate and syn first (the
//! package's Cargo.toml says more). Keys are checked before (`parse::check_keys`), types here,
//! each mismatch named by its JSON path.
//!
//! A few keys accept more than one JSON spelling because Kafka's Jackson-based parser coerces
//! them and the corpus relies on it: `tag` may be a number or a numeric string, `default` may be
//! a string, number or boolean, and the boolean flags also accept `"true"`/`"false"` strings.

use crate::json::{Map, Value};

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
#[derive(Debug, Clone)]
pub struct MessageSpec {
    /// The API key (requests and responses) or record id (metadata records).
    pub api_key: Option<i16>,
    /// `request`, `response`, `header`, `data` or `metadata`; kept as text so that an unknown
    /// kind is reported by validation with its rule number.
    pub kind: Option<String>,
    pub name: Option<String>,
    pub valid_versions: Option<String>,
    pub flexible_versions: Option<String>,
    pub deprecated_versions: Option<String>,
    pub latest_version_unstable: Option<bool>,
    pub listeners: Option<Vec<String>>,
    pub fields: Vec<FieldSpec>,
    pub common_structs: Vec<StructSpec>,
    /// The schema's version-history comments (`// Version 3 adds ...`), one paragraph per
    /// entry: not a JSON key, read from the text by `parse::history_comments`.
    pub history: Vec<String>,
}

/// An entry of `commonStructs`: a struct shared by several fields of one message.
#[derive(Debug, Clone)]
pub struct StructSpec {
    pub name: Option<String>,
    pub versions: Option<String>,
    pub fields: Vec<FieldSpec>,
}

/// One field of a message or struct.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    pub name: Option<String>,
    /// `int32`, `string`, `[]Foo`, `Foo`, ...
    pub ty: Option<String>,
    pub versions: Option<String>,
    pub nullable_versions: Option<String>,
    pub tagged_versions: Option<String>,
    /// The tag number; JSON number or numeric string (both occur in Kafka's corpus).
    pub tag: Option<i64>,
    /// The default as Kafka's generator sees it: text. Numbers and booleans are converted to
    /// their JSON spelling; JSON `null` means "no default".
    pub default: Option<String>,
    pub ignorable: Option<bool>,
    pub map_key: Option<bool>,
    pub entity_type: Option<String>,
    pub zero_copy: Option<bool>,
    /// Field-level override of the message's flexible versions (strings and bytes only).
    pub flexible_versions: Option<String>,
    pub about: Option<String>,
    /// Nested fields of an inline struct (`[]Foo` or `Foo`); `None` when the key is absent.
    pub fields: Option<Vec<FieldSpec>>,
}

impl MessageSpec {
    /// The typed model of one schema's JSON object (`history` is left empty).
    pub fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        let at = Object::new(value, "$".to_owned())?;
        Ok(MessageSpec {
            api_key: at.api_key("apiKey")?,
            kind: at.string("type")?,
            name: at.string("name")?,
            valid_versions: at.text("validVersions")?,
            flexible_versions: at.text("flexibleVersions")?,
            deprecated_versions: at.text("deprecatedVersions")?,
            latest_version_unstable: at.flag("latestVersionUnstable")?,
            listeners: at.strings("listeners")?,
            fields: at.fields("fields")?.unwrap_or_default(),
            common_structs: at.items("commonStructs", StructSpec::from_value)?.unwrap_or_default(),
            history: Vec::new(),
        })
    }
}

impl StructSpec {
    fn from_value(value: &Value, path: String) -> Result<Self, TypeMismatch> {
        let at = Object::new(value, path)?;
        Ok(StructSpec {
            name: at.string("name")?,
            versions: at.text("versions")?,
            fields: at.fields("fields")?.unwrap_or_default(),
        })
    }
}

impl FieldSpec {
    fn from_value(value: &Value, path: String) -> Result<Self, TypeMismatch> {
        let at = Object::new(value, path)?;
        Ok(FieldSpec {
            name: at.string("name")?,
            ty: at.string("type")?,
            versions: at.text("versions")?,
            nullable_versions: at.text("nullableVersions")?,
            tagged_versions: at.text("taggedVersions")?,
            tag: at.tag("tag")?,
            default: at.text("default")?,
            ignorable: at.flag("ignorable")?,
            map_key: at.flag("mapKey")?,
            entity_type: at.string("entityType")?,
            zero_copy: at.flag("zeroCopy")?,
            flexible_versions: at.text("flexibleVersions")?,
            about: at.string("about")?,
            fields: at.fields("fields")?,
        })
    }
}

/// A value of the wrong JSON type: where (a JSON path such as `$.fields[2] (Name).versions`)
/// and what was found instead of what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMismatch {
    pub path: String,
    pub message: String,
}

/// One JSON object of a schema and its path, read key by key. An absent key and JSON `null`
/// both read as `None`, as Kafka's generator treats them.
struct Object<'a> {
    map: &'a Map,
    /// `$.fields[2]`: where the object's own elements start their paths.
    base: String,
    /// `$.fields[2] (Name)`: the object as errors show it.
    path: String,
}

impl<'a> Object<'a> {
    fn new(value: &'a Value, base: String) -> Result<Self, TypeMismatch> {
        match value {
            Value::Object(map) => {
                let path = match map.get("name").and_then(Value::as_str) {
                    Some(name) if base != "$" => format!("{base} ({name})"),
                    _ => base.clone(),
                };
                Ok(Object { map, base, path })
            }
            other => Err(mismatch(base, other, "an object")),
        }
    }

    /// The value of `key`, unless absent or null.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn mismatch(&self, key: &str, found: &Value, expected: &str) -> TypeMismatch {
        mismatch(format!("{}.{key}", self.path), found, expected)
    }

    /// A key that must be a string (names, types, docs).
    fn string(&self, key: &str) -> Result<Option<String>, TypeMismatch> {
        self.get(key)
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| self.mismatch(key, v, "a string")))
            .transpose()
    }

    /// A string, number or boolean read as its text (Jackson's coercion).
    fn text(&self, key: &str) -> Result<Option<String>, TypeMismatch> {
        self.get(key)
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                Value::Bool(b) => Ok(b.to_string()),
                Value::Number(n) => Ok(match (n.as_i64(), n.as_u64(), n.as_f64()) {
                    (Some(i), _, _) => i.to_string(),
                    (_, Some(u), _) => u.to_string(),
                    (_, _, Some(f)) => f.to_string(),
                    _ => n.to_string(),
                }),
                other => Err(self.mismatch(key, other, "a string, number or boolean")),
            })
            .transpose()
    }

    /// A boolean flag: `true`/`false`, or the strings `"true"`/`"false"`.
    fn flag(&self, key: &str) -> Result<Option<bool>, TypeMismatch> {
        self.get(key)
            .map(|v| match v {
                Value::Bool(b) => Ok(*b),
                Value::String(s) if s == "true" => Ok(true),
                Value::String(s) if s == "false" => Ok(false),
                other => Err(self.mismatch(key, other, "true or false")),
            })
            .transpose()
    }

    /// A tag: a JSON integer or a string holding one.
    fn tag(&self, key: &str) -> Result<Option<i64>, TypeMismatch> {
        self.get(key)
            .map(|v| {
                let tag = match v {
                    Value::Number(n) => n.as_i64(),
                    Value::String(s) => s.trim().parse::<i64>().ok(),
                    _ => None,
                };
                tag.ok_or_else(|| self.mismatch(key, v, "an integer tag (number or numeric string)"))
            })
            .transpose()
    }

    /// An API key: an integer that fits an `i16`.
    fn api_key(&self, key: &str) -> Result<Option<i16>, TypeMismatch> {
        self.get(key)
            .map(|v| v.as_i64().and_then(|n| i16::try_from(n).ok()).ok_or_else(|| self.mismatch(key, v, "an i16")))
            .transpose()
    }

    /// An array of strings.
    fn strings(&self, key: &str) -> Result<Option<Vec<String>>, TypeMismatch> {
        self.items(key, |v, path| v.as_str().map(str::to_owned).ok_or_else(|| mismatch(path, v, "a string")))
    }

    /// An array of fields.
    fn fields(&self, key: &str) -> Result<Option<Vec<FieldSpec>>, TypeMismatch> {
        self.items(key, FieldSpec::from_value)
    }

    /// An array, each element read by `read` with its path.
    fn items<T>(
        &self,
        key: &str,
        read: impl Fn(&Value, String) -> Result<T, TypeMismatch>,
    ) -> Result<Option<Vec<T>>, TypeMismatch> {
        let Some(v) = self.get(key) else { return Ok(None) };
        let Value::Array(items) = v else { return Err(self.mismatch(key, v, "an array")) };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| read(item, format!("{}.{key}[{i}]", self.base)))
            .collect::<Result<_, _>>()
            .map(Some)
    }
}

/// `found` where `expected` was due, in serde's words (`invalid type: string "two", expected
/// an i16`).
fn mismatch(path: String, found: &Value, expected: &str) -> TypeMismatch {
    let found = match found {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".to_owned(),
        Value::Object(_) => "map".to_owned(),
    };
    TypeMismatch { path, message: format!("invalid type: {found}, expected {expected}") }
}
