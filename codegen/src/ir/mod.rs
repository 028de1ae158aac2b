//! The validated intermediate representation that emission works from.
//!
//! Produced by `lower` from the schema model after validation: versions are parsed into
//! ranges, struct references resolved, and everything the emitter needs is explicit. The
//! wire layout of a struct at a version ([`Layout`]) is derived here, once, for every reader.

mod layout;

pub use layout::{min_value_size, Layout, Presence, Slot};

/// An inclusive version range; `max == i16::MAX` means open-ended (`"N+"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Versions {
    pub min: i16,
    pub max: i16,
}

impl Versions {
    /// Open-ended upper bound marker.
    pub const OPEN: i16 = i16::MAX;

    pub const fn new(min: i16, max: i16) -> Self {
        Versions { min, max }
    }

    pub const fn contains(&self, v: i16) -> bool {
        self.min <= v && v <= self.max
    }

    /// The overlap of two ranges, if any.
    pub fn intersect(&self, other: &Versions) -> Option<Versions> {
        let min = self.min.max(other.min);
        let max = self.max.min(other.max);
        (min <= max).then_some(Versions { min, max })
    }

    pub const fn is_open_ended(&self) -> bool {
        self.max == Self::OPEN
    }
}

/// Whether an optional range (`nullableVersions`, `taggedVersions`, ...) holds `version`.
pub fn in_versions(v: Option<Versions>, version: i16) -> bool {
    v.is_some_and(|v| v.contains(version))
}

/// An optional range as Kafka writes it, `none` when absent.
pub fn versions_text(v: Option<Versions>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// The API a request or response schema belongs to: its name without the suffix.
pub fn api_name(schema: &str) -> &str {
    schema.strip_suffix("Request").or_else(|| schema.strip_suffix("Response")).unwrap_or(schema)
}

/// The JSON key of a field: its schema name with a lower-case first letter (`errorCode`), as
/// Kafka's converters name it.
pub fn json_key(schema_name: &str) -> String {
    let mut chars = schema_name.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// ControlledShutdown: its v0 request is the one request with header v0.
pub const CONTROLLED_SHUTDOWN_KEY: i16 = 7;
/// ApiVersions: its responses always use header v0 (KIP-511), so old clients can read them.
pub const API_VERSIONS_KEY: i16 = 18;

/// Kafka's own notation, the one formatter for versions in docs and messages: `3`, `0-5`, `2+`.
impl std::fmt::Display for Versions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.min)
        } else if self.is_open_ended() {
            write!(f, "{}+", self.min)
        } else {
            write!(f, "{}-{}", self.min, self.max)
        }
    }
}

/// What kind of top-level schema a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MessageKind {
    Request,
    Response,
    Header,
    Data,
    Metadata,
    /// `coordinator-key` (Kafka 4.x): the key of a group, share or transaction coordinator
    /// record; `apiKey` is the record type.
    CoordinatorKey,
    /// `coordinator-value`: the value of the coordinator record of the same `apiKey`.
    CoordinatorValue,
}

/// One schema file, lowered.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// File name the schema came from, e.g. `FetchRequest.json` (no directory).
    pub file: String,
    /// Schema name, e.g. `FetchRequest`.
    pub name: String,
    pub kind: MessageKind,
    /// `apiKey` (for requests/responses and metadata records), if given.
    pub api_key: Option<i16>,
    pub valid_versions: Versions,
    /// `None` when `flexibleVersions` is `"none"`.
    pub flexible_versions: Option<Versions>,
    pub deprecated_versions: Option<Versions>,
    pub latest_version_unstable: bool,
    /// `listeners` (requests only), in schema order.
    pub listeners: Vec<String>,
    /// The top-level fields (the message struct itself), in wire order.
    pub fields: Vec<Field>,
    /// Every nested and common struct used by this message, each once, in the order they
    /// are first defined (depth-first, schema order; common structs after nested ones).
    pub structs: Vec<Struct>,
    /// The schema's version-history comments, one paragraph each (see `parse::history_comments`).
    pub history: Vec<String>,
}

impl Message {
    /// The header version a request or response uses at `version` (`None` for other kinds),
    /// by the rule the generated `ApiKey::request_header_version` / `response_header_version`
    /// follow: flexible versions use the flexible header (request v2, response v1).
    pub fn header_version(&self, version: i16) -> Option<i16> {
        let flexible = in_versions(self.flexible_versions, version);
        let key = self.api_key?;
        match self.kind {
            MessageKind::Request if key == CONTROLLED_SHUTDOWN_KEY && version == 0 => Some(0),
            MessageKind::Request => Some(if flexible { 2 } else { 1 }),
            MessageKind::Response if key == API_VERSIONS_KEY => Some(0),
            MessageKind::Response => Some(i16::from(flexible)),
            _ => None,
        }
    }
}

/// A schema with `validVersions: "none"`: support for it was removed (Kafka 4.0 retired four
/// APIs so), but its key stays reserved. It gets no codec; the index still names its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retired {
    /// File name the schema came from (no directory).
    pub file: String,
    pub name: String,
    pub kind: MessageKind,
    pub api_key: Option<i16>,
}

/// A named struct: an element type of a `[]Name` array, a `Name` struct field, or a common struct.
#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    pub name: String,
    /// Versions in which the struct can appear (the union of the versions of the fields that use it,
    /// intersected with the message's valid versions).
    pub versions: Versions,
    pub fields: Vec<Field>,
    /// Whether it came from `commonStructs`.
    pub is_common: bool,
}

/// A field, with every version property resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Schema name in PascalCase, e.g. `ClusterId`.
    pub name: String,
    pub ty: FieldType,
    /// Versions in which the field exists (for tagged-only fields: the tagged versions).
    pub versions: Versions,
    /// Versions in which it may be null (always inside `versions`), if any.
    pub nullable_versions: Option<Versions>,
    /// Versions in which it is sent as a tagged field, if any.
    pub tagged_versions: Option<Versions>,
    pub tag: Option<u32>,
    /// A field-level `flexibleVersions` override (strings and bytes only): `Some(None)` means "none".
    pub flexible_versions: Option<Option<Versions>>,
    pub default: DefaultValue,
    pub ignorable: bool,
    pub map_key: bool,
    pub entity_type: Option<String>,
    pub zero_copy: bool,
    pub about: Option<String>,
}

/// A field's type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldType {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    String,
    Bytes,
    Uuid,
    Records,
    /// A struct, by name (nested or common).
    Struct(String),
    /// An array of a primitive or a struct (never of an array).
    Array(Box<FieldType>),
}

impl FieldType {
    pub fn is_array(&self) -> bool {
        matches!(self, FieldType::Array(_))
    }

    /// The struct this type names, directly or as an array element.
    pub fn struct_name(&self) -> Option<&str> {
        match self {
            FieldType::Struct(name) => Some(name),
            FieldType::Array(inner) => inner.struct_name(),
            _ => None,
        }
    }
}

/// A field's default, already checked against the field's type.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// No `default` given: zero, false, empty string/bytes/array, nil uuid, null records.
    Implicit,
    /// `"null"`: only for fields nullable in every version.
    Null,
    Bool(bool),
    /// Integers of any width (already range-checked for the field's type).
    Int(i64),
    Float(f64),
    /// A string default (for string fields).
    Str(String),
    /// A uuid default, 16 raw bytes.
    Uuid([u8; 16]),
}
