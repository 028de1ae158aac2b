//! Schema validation: every rule Kafka's Java generator enforces, numbered as in the codegen
//! reference ("Schema rules the Java generator enforces", rules 1 to 37).
//!
//! `validate_message` checks one file and returns every problem it finds, not just the first;
//! `validate_set` applies the rules that span files (36 and 37) to already-lowered messages.
//! The small parsers here (version ranges, types, defaults) are shared with `lower`, so that
//! what validation accepts is exactly what lowering understands.

use crate::checked::{Checked, CheckedField, CheckedMessage, CheckedStruct};
use crate::diagnostics::{SchemaError, SchemaWarning};
use crate::ir::{DefaultValue, Field, FieldType, Message, MessageKind, Retired, Versions};
use crate::schema::{FieldSpec, MessageSpec};
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use std::collections::{BTreeMap, HashMap};

/// Listener names a request may declare (`listeners`).
pub const KNOWN_LISTENERS: [&str; 3] = ["zkBroker", "broker", "controller"];

// ---------------------------------------------------------------------------------------------
// Shared parsers
// ---------------------------------------------------------------------------------------------

/// Parses a version range: `"3"`, `"3-7"`, `"3+"` (open-ended) or `"none"` (`Ok(None)`).
/// Errors are rule 32 problems (negative or malformed numbers).
pub fn parse_versions(text: &str) -> Result<Option<Versions>, String> {
    let s = text.trim();
    if s == "none" {
        return Ok(None);
    }
    if s.is_empty() {
        return Err("empty version range".to_owned());
    }
    if s.starts_with('-') {
        return Err(format!("version range `{s}` is negative; version numbers cannot be negative"));
    }
    if let Some(min) = s.strip_suffix('+') {
        let min = version_number(min, s)?;
        return Ok(Some(Versions::new(min, Versions::OPEN)));
    }
    match s.split_once('-') {
        Some((min, max)) => {
            let (min, max) = (version_number(min, s)?, version_number(max, s)?);
            if min > max {
                return Err(format!("version range `{s}` is empty: {min} is greater than {max}"));
            }
            Ok(Some(Versions::new(min, max)))
        }
        None => {
            let v = version_number(s, s)?;
            Ok(Some(Versions::new(v, v)))
        }
    }
}

fn version_number(part: &str, whole: &str) -> Result<i16, String> {
    let part = part.trim();
    if part.starts_with('-') {
        return Err(format!("version range `{whole}` has a negative version; version numbers cannot be negative"));
    }
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("version range `{whole}` is malformed; expected `N`, `N-M`, `N+` or `none`"));
    }
    part.parse::<i16>().map_err(|_| format!("version range `{whole}` has a version above {}", Versions::OPEN))
}

/// Formats a range the way schemas spell it.
pub fn format_versions(v: Option<Versions>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

/// Whether every version of `inner` is in `outer`.
pub fn is_subset(inner: Versions, outer: Versions) -> bool {
    outer.min <= inner.min && inner.max <= outer.max
}

/// Parses a field type: a primitive, `[]Element` or a struct name.
pub fn parse_type(text: &str) -> Result<FieldType, String> {
    let s = text.trim();
    if let Some(element) = s.strip_prefix("[]") {
        if element.trim().is_empty() {
            return Err(format!("array type `{s}` has no element type"));
        }
        return match parse_type(element)? {
            FieldType::Array(_) => Err(format!(
                "type `{s}` is an array of arrays, which is not allowed; use an array of structs \
                 that contain an array"
            )),
            FieldType::Records => Err(format!("type `{s}` is an array of records, which is not supported")),
            inner => Ok(FieldType::Array(Box::new(inner))),
        };
    }
    Ok(match s {
        "bool" => FieldType::Bool,
        "int8" => FieldType::Int8,
        "int16" => FieldType::Int16,
        "uint16" => FieldType::Uint16,
        "int32" => FieldType::Int32,
        "uint32" => FieldType::Uint32,
        "int64" => FieldType::Int64,
        "float64" => FieldType::Float64,
        "string" => FieldType::String,
        "bytes" => FieldType::Bytes,
        "uuid" => FieldType::Uuid,
        "records" => FieldType::Records,
        _ if is_struct_name(s) => FieldType::Struct(s.to_owned()),
        _ => {
            return Err(format!(
                "unknown type `{s}`; expected bool, int8, int16, uint16, int32, uint32, int64, \
                 float64, string, bytes, uuid, records, a capitalised struct name, or `[]` \
                 followed by one of these"
            ))
        }
    })
}

/// A struct name: a capital ASCII letter followed by ASCII letters and digits.
pub fn is_struct_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// A field name: `[A-Za-z][A-Za-z0-9]*` (rule 15).
pub fn is_field_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// Whether a type may carry `nullableVersions` (rule 18).
pub fn can_be_nullable(ty: &FieldType) -> bool {
    matches!(ty, FieldType::String | FieldType::Bytes | FieldType::Records | FieldType::Struct(_) | FieldType::Array(_))
}

/// The schema spelling of a type, for messages.
pub fn type_name(ty: &FieldType) -> String {
    match ty {
        FieldType::Bool => "bool".into(),
        FieldType::Int8 => "int8".into(),
        FieldType::Int16 => "int16".into(),
        FieldType::Uint16 => "uint16".into(),
        FieldType::Int32 => "int32".into(),
        FieldType::Uint32 => "uint32".into(),
        FieldType::Int64 => "int64".into(),
        FieldType::Float64 => "float64".into(),
        FieldType::String => "string".into(),
        FieldType::Bytes => "bytes".into(),
        FieldType::Uuid => "uuid".into(),
        FieldType::Records => "records".into(),
        FieldType::Struct(name) => name.clone(),
        FieldType::Array(inner) => format!("[]{}", type_name(inner)),
    }
}

/// Base64url (padding optional), as Java's `Base64.getUrlDecoder()` reads uuid defaults.
const BASE64_URL: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Parses a field's `default` against its type (rules 29, 30, 31); the error carries the rule.
///
/// `nullable` and `versions` decide whether `"null"` is allowed: only when the field is nullable
/// in every version it exists in.
pub fn parse_default(
    ty: &FieldType,
    raw: Option<&str>,
    versions: Versions,
    nullable: Option<Versions>,
) -> Result<DefaultValue, (u8, String)> {
    let raw = match raw {
        None | Some("") => return Ok(DefaultValue::Implicit),
        Some(raw) => raw,
    };
    let ty_name = type_name(ty);
    let null_allowed = || {
        if nullable.is_some_and(|n| is_subset(versions, n)) {
            Ok(DefaultValue::Null)
        } else {
            Err((
                30,
                format!(
                    "default `null` needs the field to be nullable in all its versions ({}), but \
                     nullableVersions is {}",
                    format_versions(Some(versions)),
                    format_versions(nullable)
                ),
            ))
        }
    };
    let invalid = |what: &str| Err((29, format!("default `{raw}` is not {what}")));
    match ty {
        FieldType::Bool => {
            if raw.eq_ignore_ascii_case("true") {
                Ok(DefaultValue::Bool(true))
            } else if raw.eq_ignore_ascii_case("false") {
                Ok(DefaultValue::Bool(false))
            } else {
                invalid("a valid bool (`true` or `false`)")
            }
        }
        FieldType::Int8
        | FieldType::Int16
        | FieldType::Uint16
        | FieldType::Int32
        | FieldType::Uint32
        | FieldType::Int64 => {
            let (min, max): (i128, i128) = match ty {
                FieldType::Int8 => (i8::MIN.into(), i8::MAX.into()),
                FieldType::Int16 => (i16::MIN.into(), i16::MAX.into()),
                FieldType::Uint16 => (0, u16::MAX.into()),
                FieldType::Int32 => (i32::MIN.into(), i32::MAX.into()),
                FieldType::Uint32 => (0, u32::MAX.into()),
                _ => (i64::MIN.into(), i64::MAX.into()),
            };
            let (digits, radix) = match raw.strip_prefix("0x") {
                Some(hex) => (hex, 16),
                None => (raw, 10),
            };
            match i128::from_str_radix(digits, radix) {
                Ok(v) if (min..=max).contains(&v) => match i64::try_from(v) {
                    Ok(v) => Ok(DefaultValue::Int(v)),
                    Err(_) => invalid(&format!("a valid {ty_name}")),
                },
                Ok(_) => invalid(&format!("a valid {ty_name}: out of range {min}..={max}")),
                Err(_) => invalid(&format!("a valid {ty_name}: expected a decimal or 0x-prefixed hex integer")),
            }
        }
        FieldType::Float64 => match raw.trim().parse::<f64>() {
            Ok(v) => Ok(DefaultValue::Float(v)),
            Err(_) => invalid("a valid float64"),
        },
        FieldType::Uuid => match BASE64_URL.decode(raw) {
            Ok(bytes) => match <[u8; 16]>::try_from(bytes.as_slice()) {
                Ok(uuid) => Ok(DefaultValue::Uuid(uuid)),
                Err(_) => invalid(&format!("a valid uuid: base64url decodes to {} bytes, not 16", bytes.len())),
            },
            Err(_) => invalid("a valid uuid: expected 16 bytes in base64url"),
        },
        FieldType::String => {
            if raw == "null" {
                null_allowed()
            } else {
                Ok(DefaultValue::Str(raw.to_owned()))
            }
        }
        FieldType::Bytes | FieldType::Records | FieldType::Struct(_) | FieldType::Array(_) => {
            if raw == "null" {
                null_allowed()
            } else {
                Err((
                    31,
                    format!(
                        "default `{raw}` is not allowed for a {ty_name} field: the only valid \
                         defaults are empty and `null`"
                    ),
                ))
            }
        }
    }
}

/// The message kind named by `type`.
pub fn parse_kind(text: &str) -> Option<MessageKind> {
    Some(match text {
        "request" => MessageKind::Request,
        "response" => MessageKind::Response,
        "header" => MessageKind::Header,
        "data" => MessageKind::Data,
        "metadata" => MessageKind::Metadata,
        "coordinator-key" => MessageKind::CoordinatorKey,
        "coordinator-value" => MessageKind::CoordinatorValue,
        _ => return None,
    })
}

/// How a record kind is named in diagnostics.
fn record_kind(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::CoordinatorKey => "coordinator record key",
        MessageKind::CoordinatorValue => "coordinator record value",
        _ => "metadata record",
    }
}

/// `Some(text)` unless absent or blank (Kafka treats a blank version string as absent).
pub fn non_blank(text: Option<&str>) -> Option<&str> {
    text.filter(|t| !t.trim().is_empty())
}

/// The key under which two field names collide in generated Rust (snake_case).
pub fn name_key(name: &str) -> String {
    heck::ToSnakeCase::to_snake_case(name)
}

// ---------------------------------------------------------------------------------------------
// Per-file validation
// ---------------------------------------------------------------------------------------------

/// Checks one schema file against every per-file rule and returns all problems found
/// (legacy allowances are accepted; see [`check_message`] for the warnings).
pub fn validate_message(file: &str, spec: &MessageSpec) -> Vec<SchemaError> {
    check_message(file, spec).0
}

/// Checks one schema file: every problem found, and the legacy allowances it relied on
/// (a missing `flexibleVersions`, read as `none` as Kafka's generator did before requiring it).
pub fn check_message(file: &str, spec: &MessageSpec) -> (Vec<SchemaError>, Vec<SchemaWarning>) {
    let (_, errors, warnings) = check_schema(file, spec);
    (errors, warnings)
}

/// Checks one schema file and, when it breaks no rule, returns it with every string parsed
/// ([`Checked`]); also every problem found and the warnings.
pub fn check_schema(file: &str, spec: &MessageSpec) -> (Option<Checked>, Vec<SchemaError>, Vec<SchemaWarning>) {
    let mut v = Validator {
        file,
        errors: Vec::new(),
        warnings: Vec::new(),
        flexible: Known::Unknown,
        commons: HashMap::new(),
        inline: HashMap::new(),
    };
    let checked = v.message(spec);
    let checked = if v.errors.is_empty() { checked } else { None };
    (checked, v.errors, v.warnings)
}

/// Whether a schema declares `validVersions: "none"`: an API (or record) whose support was
/// removed, kept so that its key is never reused (Kafka 4.0 retired four APIs this way).
pub fn is_retired(spec: &MessageSpec) -> bool {
    non_blank(spec.valid_versions.as_deref()).is_some_and(|t| t.trim() == "none")
}

/// A value that may not be known because it was itself invalid (then dependent checks are skipped
/// rather than reported twice).
#[derive(Clone, Copy)]
enum Known<T> {
    Unknown,
    Is(T),
}

struct Validator<'a> {
    file: &'a str,
    errors: Vec<SchemaError>,
    warnings: Vec<SchemaWarning>,
    /// The message's flexible versions (`None` = "none").
    flexible: Known<Option<Versions>>,
    /// Common struct names, with the path where each is declared.
    commons: HashMap<String, String>,
    /// Inline struct names (and the message's own name), with the path that defines each.
    inline: HashMap<String, String>,
}

impl Validator<'_> {
    fn error(&mut self, path: &str, rule: u8, message: impl Into<String>) {
        self.errors.push(SchemaError::rule(self.file, path, rule, message));
    }

    /// Parses an optional version string, reporting rule 32 problems; `Known::Unknown` when bad.
    fn versions(&mut self, path: &str, key: &str, text: Option<&str>) -> Known<Option<Versions>> {
        match non_blank(text) {
            None => Known::Is(None),
            Some(t) => match parse_versions(t) {
                Ok(v) => Known::Is(v),
                Err(e) => {
                    self.error(path, 32, format!("`{key}`: {e}"));
                    Known::Unknown
                }
            },
        }
    }

    /// The whole message: its own keys rule by rule, then its common structs and fields.
    fn message(&mut self, spec: &MessageSpec) -> Option<Checked> {
        let name = spec.name.as_deref().unwrap_or("");
        self.rule_11_message_name(spec);
        let kind = self.rule_5_kind(spec, name);
        // A retired schema (`validVersions: "none"`) has no versions to check fields against;
        // Kafka reads its flexibleVersions as none and its listeners as empty.
        if is_retired(spec) {
            if let Some(t) = non_blank(spec.flexible_versions.as_deref()) {
                self.versions("$", "flexibleVersions", Some(t));
            }
            let retired =
                Retired { file: self.file.to_owned(), name: spec.name.clone()?, kind: kind?, api_key: spec.api_key };
            return Some(Checked::Retired(retired));
        }
        let valid = self.rules_6_11_valid_versions(spec, name);
        self.flexible = self.rules_1_2_flexible_versions(spec, name);
        let deprecated = self.versions("$", "deprecatedVersions", spec.deprecated_versions.as_deref());
        self.rule_3_listeners(spec, name, kind);
        self.rule_4_latest_version_unstable(spec, name, kind);
        self.rules_36_37_keys(spec, name, kind);
        // Common structs are registered before walking the fields that use them.
        self.rules_11_33_34_common_struct_names(spec);
        let fields = self.fields(&spec.fields, "$", name, valid, true);
        let common_structs = self.common_structs(spec);
        let (Known::Is(Some(valid_versions)), Known::Is(flexible_versions), Known::Is(deprecated_versions)) =
            (valid, self.flexible, deprecated)
        else {
            return None;
        };
        let message = Message {
            file: self.file.to_owned(),
            name: spec.name.clone()?,
            kind: kind?,
            api_key: spec.api_key,
            valid_versions,
            flexible_versions,
            deprecated_versions,
            latest_version_unstable: spec.latest_version_unstable.unwrap_or(false),
            listeners: spec.listeners.clone().unwrap_or_default(),
            fields: Vec::new(),
            structs: Vec::new(),
            history: spec.history.clone(),
        };
        Some(Checked::Live(CheckedMessage { message, fields: fields?, common_structs: common_structs? }))
    }

    fn rule_11_message_name(&mut self, spec: &MessageSpec) {
        match spec.name.as_deref() {
            None => self.error("$", 11, "the message has no `name`"),
            Some(n) if !is_struct_name(n) => {
                self.error("$", 11, format!("message name `{n}` must be a capitalised name of letters and digits"))
            }
            Some(n) => {
                self.inline.insert(n.to_owned(), "$".to_owned());
            }
        }
    }

    fn rule_5_kind(&mut self, spec: &MessageSpec, name: &str) -> Option<MessageKind> {
        const EXPECTED: &str =
            "expected request, response, header, data, metadata, coordinator-key or coordinator-value";
        match spec.kind.as_deref() {
            None => {
                self.error("$", 5, format!("message {name} has no `type`; {EXPECTED}"));
                None
            }
            Some(k) => {
                let kind = parse_kind(k);
                if kind.is_none() {
                    self.error("$", 5, format!("message {name} has unknown type `{k}`; {EXPECTED}"));
                }
                kind
            }
        }
    }

    fn rules_6_11_valid_versions(&mut self, spec: &MessageSpec, name: &str) -> Known<Option<Versions>> {
        let Some(t) = non_blank(spec.valid_versions.as_deref()) else {
            self.error("$", 11, format!("message {name} has no `validVersions`"));
            return Known::Unknown;
        };
        match self.versions("$", "validVersions", Some(t)) {
            Known::Is(Some(v)) if v.is_open_ended() => {
                let text = format_versions(Some(v));
                self.error(
                    "$",
                    6,
                    format!("message {name} has open-ended validVersions `{text}`; it needs an upper bound"),
                );
                Known::Unknown
            }
            other => other,
        }
    }

    fn rules_1_2_flexible_versions(&mut self, spec: &MessageSpec, name: &str) -> Known<Option<Versions>> {
        let Some(t) = non_blank(spec.flexible_versions.as_deref()) else {
            self.warnings.push(SchemaWarning {
                file: self.file.to_owned(),
                path: "$".to_owned(),
                message: format!(
                    "message {name} has no `flexibleVersions`, which Kafka 2.x's generator read as `none` \
                     (the 2.4 and 2.8 corpora rely on this); use `0+` for new messages or `none`"
                ),
                rule: Some(1),
            });
            return Known::Is(None);
        };
        match self.versions("$", "flexibleVersions", Some(t)) {
            Known::Is(Some(v)) if !v.is_open_ended() => {
                let text = format_versions(Some(v));
                self.error(
                    "$",
                    2,
                    format!(
                        "message {name} has flexibleVersions `{text}`, which is not open-ended; use `none` or `N+`"
                    ),
                );
                Known::Unknown
            }
            other => other,
        }
    }

    fn rule_3_listeners(&mut self, spec: &MessageSpec, name: &str, kind: Option<MessageKind>) {
        let Some(listeners) = &spec.listeners else { return };
        if !listeners.is_empty() && kind.is_some_and(|k| k != MessageKind::Request) {
            self.error("$", 3, format!("message {name} has `listeners`, which only requests may have"));
        }
        for l in listeners.iter().filter(|l| !KNOWN_LISTENERS.contains(&l.as_str())) {
            self.error(
                "$",
                3,
                format!("message {name} has unknown listener `{l}`; expected zkBroker, broker or controller"),
            );
        }
    }

    fn rule_4_latest_version_unstable(&mut self, spec: &MessageSpec, name: &str, kind: Option<MessageKind>) {
        if spec.latest_version_unstable == Some(true) && kind.is_some_and(|k| k != MessageKind::Request) {
            self.error("$", 4, format!("message {name} sets `latestVersionUnstable`, which only requests may set"));
        }
    }

    /// The per-file part of rules 36 and 37: api keys and request/response names.
    fn rules_36_37_keys(&mut self, spec: &MessageSpec, name: &str, kind: Option<MessageKind>) {
        match kind {
            Some(MessageKind::Request) | Some(MessageKind::Response) => {
                let suffix = if kind == Some(MessageKind::Request) { "Request" } else { "Response" };
                if spec.api_key.is_none() {
                    self.error("$", 36, format!("{} {name} has no `apiKey`", suffix.to_lowercase()));
                }
                if spec.name.is_some() && !name.ends_with(suffix) {
                    self.error("$", 36, format!("{} name `{name}` must end with `{suffix}`", suffix.to_lowercase()));
                }
                if let Some(k) = spec.api_key.filter(|k| *k < 0) {
                    self.error("$", 36, format!("{name} has negative apiKey {k}"));
                }
            }
            Some(kind @ (MessageKind::Metadata | MessageKind::CoordinatorKey | MessageKind::CoordinatorValue)) => {
                let what = record_kind(kind);
                match spec.api_key {
                    None => self.error("$", 37, format!("{what} {name} has no `apiKey` (its record type)")),
                    Some(k) if k < 0 => self.error("$", 37, format!("{what} {name} has negative apiKey {k}")),
                    Some(_) => {}
                }
            }
            _ => {}
        }
    }

    fn rules_11_33_34_common_struct_names(&mut self, spec: &MessageSpec) {
        for (i, cs) in spec.common_structs.iter().enumerate() {
            let cpath = named_path(&format!("$.commonStructs[{i}]"), cs.name.as_deref());
            let Some(n) = cs.name.as_deref() else {
                self.error(&cpath, 11, "common struct has no `name`");
                continue;
            };
            if !is_struct_name(n) {
                self.error(
                    &cpath,
                    33,
                    format!(
                        "common struct name `{n}` must start with a capital letter and contain only letters and digits"
                    ),
                );
            }
            if let Some(first) = self.commons.get(n).or_else(|| self.inline.get(n)).cloned() {
                self.error(&cpath, 34, format!("struct {n} is defined twice (first at {first})"));
            } else {
                self.commons.insert(n.to_owned(), cpath);
            }
        }
    }

    /// Each common struct's versions (rule 11: it has them) and fields; `None` if any failed.
    fn common_structs(&mut self, spec: &MessageSpec) -> Option<Vec<CheckedStruct>> {
        let mut out = Vec::with_capacity(spec.common_structs.len());
        let mut complete = true;
        for (i, cs) in spec.common_structs.iter().enumerate() {
            let base = format!("$.commonStructs[{i}]");
            let cpath = named_path(&base, cs.name.as_deref());
            let cname = cs.name.as_deref().unwrap_or("");
            let declared = match non_blank(cs.versions.as_deref()) {
                None => {
                    self.error(&cpath, 11, format!("common struct {cname} has no `versions`"));
                    Known::Unknown
                }
                Some(t) => self.versions(&cpath, "versions", Some(t)),
            };
            match (declared, self.fields(&cs.fields, &base, cname, declared, false)) {
                (Known::Is(Some(versions)), Some(fields)) => {
                    out.push(CheckedStruct { name: cname.to_owned(), versions, fields })
                }
                _ => complete = false,
            }
        }
        complete.then_some(out)
    }

    /// Checks the fields of one struct (the message itself when `top_level`).
    /// `parent` is the versions in which the struct exists.
    fn fields(
        &mut self,
        fields: &[FieldSpec],
        base: &str,
        struct_name: &str,
        parent: Known<Option<Versions>>,
        top_level: bool,
    ) -> Option<Vec<CheckedField>> {
        // Every field is checked (each reports its own problems); the struct is valid if all are.
        let mut checked = Vec::with_capacity(fields.len());
        // (name key, field index) and (tag, field index) for rules 12 to 14.
        let mut names: HashMap<String, usize> = HashMap::new();
        let mut tags: BTreeMap<i64, usize> = BTreeMap::new();
        for (i, f) in fields.iter().enumerate() {
            let fbase = format!("{base}.fields[{i}]");
            let fpath = named_path(&fbase, f.name.as_deref());
            let fname = f.name.as_deref().unwrap_or("");
            if let Some(n) = f.name.as_deref() {
                if let Some(&first) = names.get(&name_key(n)) {
                    let first_name = fields[first].name.as_deref().unwrap_or("");
                    self.error(&fpath, 12, format!("field name {n} is used twice in struct {struct_name} (first by {first_name} at {base}.fields[{first}])"));
                } else {
                    names.insert(name_key(n), i);
                }
            }
            if let Some(tag) = f.tag {
                if let Some(&first) = tags.get(&tag) {
                    let first_name = fields[first].name.as_deref().unwrap_or("");
                    self.error(&fpath, 13, format!("tag {tag} is used twice in struct {struct_name} (first by {first_name} at {base}.fields[{first}])"));
                } else {
                    tags.insert(tag, i);
                }
            }
            checked.push(self.field(f, &fbase, &fpath, fname, parent, top_level));
        }
        // Rule 14: tags 0..n-1 all used.
        let count = tags.len() as i64;
        if let Some((&highest, &index)) = tags.iter().next_back() {
            if highest >= count && tags.keys().all(|t| *t >= 0) {
                let missing: Vec<String> =
                    (0..count).filter(|t| !tags.contains_key(t)).map(|t| t.to_string()).collect();
                let fpath = named_path(&format!("{base}.fields[{index}]"), fields[index].name.as_deref());
                self.error(&fpath, 14, format!("tags in struct {struct_name} are not contiguous from 0: tag {highest} is used but tag {} is not", missing.first().map_or("?", |s| s.as_str())));
            }
        }
        checked.into_iter().collect()
    }

    /// Checks one field against each field rule in turn; the field, resolved, when it is valid.
    fn field(
        &mut self,
        f: &FieldSpec,
        fbase: &str,
        fpath: &str,
        fname: &str,
        parent: Known<Option<Versions>>,
        top_level: bool,
    ) -> Option<CheckedField> {
        let at = FieldAt { spec: f, path: fpath, name: fname };
        self.rule_15_name(&at);
        let ty = self.rule_17_type(&at);
        let tagged = self.versions(fpath, "taggedVersions", f.tagged_versions.as_deref());
        let versions = self.rule_16_versions(&at, tagged);
        let nullable = self.versions(fpath, "nullableVersions", f.nullable_versions.as_deref());
        let mut flexible = Known::Is(None);
        let mut default = None;
        if let Some(ty) = &ty {
            self.rule_18_nullable_type(&at, ty, nullable);
            self.rule_19_entity_type(&at, ty);
            self.rule_20_nested_fields(&at, ty);
            flexible = self.rule_21_flexible_override(&at, ty);
            self.rule_28_zero_copy(&at, ty);
            self.rule_9_records_untagged(&at, ty);
            default = self.rules_29_to_31_default(&at, ty, versions, nullable);
        }
        self.rule_7_map_key(&at, top_level);
        let tag = self.rules_22_to_24_tag(&at);
        self.rules_8_25_to_27_tagged_versions(&at, tagged, versions, nullable);
        let nested = self.rules_10_34_35_struct(&at, ty.as_ref(), fbase, versions, parent);

        let (Some(ty), Known::Is(Some(versions)), Known::Is(nullable), Known::Is(tagged_versions), Known::Is(flex)) =
            (ty, versions, nullable, tagged, flexible)
        else {
            return None;
        };
        let field = Field {
            name: capitalize_first(f.name.as_deref()?),
            ty,
            versions,
            nullable_versions: nullable.and_then(|n| n.intersect(&versions)),
            tagged_versions,
            tag: tag?,
            flexible_versions: flex,
            default: default?,
            ignorable: f.ignorable.unwrap_or(false),
            map_key: f.map_key.unwrap_or(false),
            entity_type: f.entity_type.clone().filter(|e| e != "unknown"),
            zero_copy: f.zero_copy.unwrap_or(false),
            about: f.about.clone(),
        };
        Some(CheckedField { field, nested: nested? })
    }

    /// Rule 15: a field has a valid name.
    fn rule_15_name(&mut self, at: &FieldAt<'_>) {
        match at.spec.name.as_deref() {
            None => self.error(at.path, 15, "field has no `name`"),
            Some(n) if !is_field_name(n) => self.error(
                at.path,
                15,
                format!("field name `{n}` is invalid: it must be a letter followed by letters and digits"),
            ),
            Some(_) => {}
        }
    }

    /// Rule 17: a field has a valid type.
    fn rule_17_type(&mut self, at: &FieldAt<'_>) -> Option<FieldType> {
        let fname = at.name;
        match at.spec.ty.as_deref() {
            None => {
                self.error(at.path, 17, format!("field {fname} has no `type`"));
                None
            }
            Some(t) => match parse_type(t) {
                Ok(ty) => Some(ty),
                Err(e) => {
                    self.error(at.path, 17, format!("field {fname} has an invalid type: {e}"));
                    None
                }
            },
        }
    }

    /// Rules 16 and 32: a field has versions (a tagged-only field takes its tagged versions).
    fn rule_16_versions(&mut self, at: &FieldAt<'_>, tagged: Known<Option<Versions>>) -> Known<Option<Versions>> {
        let fname = at.name;
        match non_blank(at.spec.versions.as_deref()) {
            Some(t) => match self.versions(at.path, "versions", Some(t)) {
                Known::Is(None) => {
                    self.error(at.path, 16, format!("field {fname} has versions `none`, so it would never be present"));
                    Known::Unknown
                }
                other => other,
            },
            None => match tagged {
                Known::Is(Some(t)) => Known::Is(Some(t)),
                Known::Is(None) => {
                    self.error(
                        at.path,
                        16,
                        format!("field {fname} has no `versions` (required unless `taggedVersions` is given)"),
                    );
                    Known::Unknown
                }
                Known::Unknown => Known::Unknown,
            },
        }
    }

    /// Rule 18: only strings, bytes, records, structs and arrays can be nullable.
    fn rule_18_nullable_type(&mut self, at: &FieldAt<'_>, ty: &FieldType, nullable: Known<Option<Versions>>) {
        if let Known::Is(Some(_)) = nullable {
            if !can_be_nullable(ty) {
                let (fname, tn) = (at.name, type_name(ty));
                self.error(at.path, 18, format!("field {fname} of type {tn} cannot be nullable; only string, bytes, records, struct and array fields can have `nullableVersions`"));
            }
        }
    }

    /// Rule 19: an `entityType` is known and fits the field's type.
    fn rule_19_entity_type(&mut self, at: &FieldAt<'_>, ty: &FieldType) {
        let Some(entity) = at.spec.entity_type.as_deref() else { return };
        let (fname, tn) = (at.name, type_name(ty));
        let base_ty = match ty {
            FieldType::Array(inner) => inner.as_ref(),
            other => other,
        };
        let expected = match entity {
            "unknown" => None,
            "transactionalId" | "groupId" | "topicName" => Some(FieldType::String),
            "producerId" => Some(FieldType::Int64),
            "brokerId" => Some(FieldType::Int32),
            other => {
                self.error(at.path, 19, format!("field {fname} has unknown entityType `{other}`; expected topicName, groupId, transactionalId, producerId, brokerId or unknown"));
                None
            }
        };
        if let Some(expected) = expected {
            if *base_ty != expected {
                self.error(
                    at.path,
                    19,
                    format!(
                        "field {fname} has entityType {entity}, which needs type {}, but its type is {tn}",
                        type_name(&expected)
                    ),
                );
            }
        }
    }

    /// Rule 20: only struct and struct array fields have nested `fields`.
    fn rule_20_nested_fields(&mut self, at: &FieldAt<'_>, ty: &FieldType) {
        if at.spec.fields.as_ref().is_some_and(|fs| !fs.is_empty()) && ty.struct_name().is_none() {
            let (fname, tn) = (at.name, type_name(ty));
            self.error(
                at.path,
                20,
                format!("field {fname} of type {tn} has nested `fields`; only struct and struct array fields may"),
            );
        }
    }

    /// Rule 21: only string and bytes fields override `flexibleVersions`. The override, parsed
    /// (`Some(None)` is an explicit `none`).
    fn rule_21_flexible_override(&mut self, at: &FieldAt<'_>, ty: &FieldType) -> Known<Option<Option<Versions>>> {
        if non_blank(at.spec.flexible_versions.as_deref()).is_none() {
            return Known::Is(None);
        }
        let parsed = self.versions(at.path, "flexibleVersions", at.spec.flexible_versions.as_deref());
        if !matches!(ty, FieldType::String | FieldType::Bytes) {
            let (fname, tn) = (at.name, type_name(ty));
            self.error(
                at.path,
                21,
                format!(
                    "field {fname} of type {tn} has a `flexibleVersions` override; only string and bytes fields may"
                ),
            );
            return Known::Unknown;
        }
        match parsed {
            Known::Is(v) => Known::Is(Some(v)),
            Known::Unknown => Known::Unknown,
        }
    }

    /// Rule 28: only bytes fields are `zeroCopy`.
    fn rule_28_zero_copy(&mut self, at: &FieldAt<'_>, ty: &FieldType) {
        if at.spec.zero_copy == Some(true) && *ty != FieldType::Bytes {
            let (fname, tn) = (at.name, type_name(ty));
            self.error(at.path, 28, format!("field {fname} of type {tn} sets `zeroCopy`; only bytes fields may"));
        }
    }

    /// Rule 9: records fields are never tagged.
    fn rule_9_records_untagged(&mut self, at: &FieldAt<'_>, ty: &FieldType) {
        let f = at.spec;
        if *ty == FieldType::Records && (f.tag.is_some() || non_blank(f.tagged_versions.as_deref()).is_some()) {
            self.error(at.path, 9, format!("records field {} cannot be tagged", at.name));
        }
    }

    /// Rules 29 to 31: the default fits the type (and `null` the nullable versions).
    fn rules_29_to_31_default(
        &mut self,
        at: &FieldAt<'_>,
        ty: &FieldType,
        versions: Known<Option<Versions>>,
        nullable: Known<Option<Versions>>,
    ) -> Option<DefaultValue> {
        let (Known::Is(Some(v)), Known::Is(n)) = (versions, nullable) else { return None };
        match parse_default(ty, at.spec.default.as_deref(), v, n) {
            Ok(default) => Some(default),
            Err((rule, e)) => {
                self.error(at.path, rule, format!("field {} of type {}: {e}", at.name, type_name(ty)));
                None
            }
        }
    }

    /// Rule 7: top-level fields are never map keys.
    fn rule_7_map_key(&mut self, at: &FieldAt<'_>, top_level: bool) {
        if top_level && at.spec.map_key == Some(true) {
            self.error(
                at.path,
                7,
                format!("field {} sets `mapKey`, which is not allowed on top-level fields", at.name),
            );
        }
    }

    /// Rules 22 to 24: a tag is not a map key, fits 0..=i32::MAX, and comes with tagged
    /// versions. The tag, when valid (`Some(None)`: untagged).
    fn rules_22_to_24_tag(&mut self, at: &FieldAt<'_>) -> Option<Option<u32>> {
        let (f, fname) = (at.spec, at.name);
        let mut tag = Some(None);
        if let Some(t) = f.tag {
            if f.map_key == Some(true) {
                self.error(at.path, 22, format!("tagged field {fname} cannot be a `mapKey`"));
            }
            if t < 0 {
                self.error(at.path, 23, format!("field {fname} has tag {t}; tags cannot be negative"));
            } else if t > i64::from(i32::MAX) {
                self.error(at.path, 23, format!("field {fname} has tag {t}, above the largest tag {}", i32::MAX));
            }
            tag = u32::try_from(t).ok().filter(|t| *t <= i32::MAX as u32).map(Some);
        }
        match (f.tag, non_blank(f.tagged_versions.as_deref()).is_some()) {
            (Some(t), false) => self.error(
                at.path,
                24,
                format!("field {fname} has tag {t} but no `taggedVersions`; give both or neither"),
            ),
            (None, true) => self.error(
                at.path,
                24,
                format!("field {fname} has `taggedVersions` but no `tag`; give both or neither"),
            ),
            _ => {}
        }
        tag
    }

    /// Rules 8 and 25 to 27: tagged versions are open-ended, inside the field's versions and
    /// the message's flexible versions, and nullable in all or none of them.
    fn rules_8_25_to_27_tagged_versions(
        &mut self,
        at: &FieldAt<'_>,
        tagged: Known<Option<Versions>>,
        versions: Known<Option<Versions>>,
        nullable: Known<Option<Versions>>,
    ) {
        let (f, fpath, fname) = (at.spec, at.path, at.name);
        match tagged {
            Known::Is(Some(tv)) => {
                if let Known::Is(n) = nullable {
                    let overlap = n.and_then(|n| n.intersect(&tv));
                    if overlap.is_some_and(|o| o != tv) {
                        self.error(fpath, 25, format!("field {fname} has nullableVersions {} and taggedVersions {tv}; either all tagged versions must be nullable or none", format_versions(n)));
                    }
                }
                if !tv.is_open_ended() {
                    self.error(
                        fpath,
                        26,
                        format!("field {fname} has taggedVersions {tv}, which is not open-ended; use `N+`"),
                    );
                }
                if let Known::Is(Some(v)) = versions {
                    if !is_subset(tv, v) {
                        self.error(
                            fpath,
                            27,
                            format!("field {fname} has taggedVersions {tv}, which are not all inside its versions {v}"),
                        );
                    }
                }
                if let Known::Is(flex) = self.flexible {
                    if !flex.is_some_and(|fv| is_subset(tv, fv)) {
                        self.error(fpath, 8, format!("field {fname} has taggedVersions {tv}, which are not all inside the message's flexibleVersions {}", format_versions(flex)));
                    }
                }
            }
            // `taggedVersions: "none"` with a tag is rule 24 (no tagged versions).
            Known::Is(None) if non_blank(f.tagged_versions.as_deref()).is_some() => {
                if let Some(tag) = f.tag {
                    self.error(fpath, 24, format!("field {fname} has tag {tag} but taggedVersions `none`"));
                }
            }
            _ => {}
        }
    }

    /// Rules 10, 34 and 35 for a struct field: its versions overlap its parent's, a common
    /// struct is not re-specified inline, an inline struct is defined once and has `fields`.
    /// Then the nested fields (empty for a non-struct or a common struct), checked.
    fn rules_10_34_35_struct(
        &mut self,
        at: &FieldAt<'_>,
        ty: Option<&FieldType>,
        fbase: &str,
        versions: Known<Option<Versions>>,
        parent: Known<Option<Versions>>,
    ) -> Option<Vec<CheckedField>> {
        let (f, fpath, fname) = (at.spec, at.path, at.name);
        let Some(struct_name) = ty?.struct_name().map(str::to_owned) else {
            return Some(Vec::new());
        };
        let here = match (versions, parent) {
            (Known::Is(Some(v)), Known::Is(Some(p))) => match v.intersect(&p) {
                Some(overlap) => Known::Is(Some(overlap)),
                None => {
                    self.error(fpath, 10, format!("struct {struct_name} of field {fname} has versions {v}, which do not overlap its parent's versions {p}"));
                    Known::Unknown
                }
            },
            _ => Known::Unknown,
        };
        if self.commons.contains_key(&struct_name) {
            if f.fields.as_ref().is_some_and(|fs| !fs.is_empty()) {
                self.error(fpath, 34, format!("field {fname} re-specifies common struct {struct_name} inline; common structs are defined only in `commonStructs`"));
                return None;
            }
            return Some(Vec::new());
        }
        let Some(nested) = &f.fields else {
            self.error(fpath, 35, format!("field {fname} uses struct {struct_name}, which is not defined: give the field `fields` or declare {struct_name} in `commonStructs`"));
            return None;
        };
        if let Some(first) = self.inline.get(&struct_name) {
            let first = first.clone();
            self.error(fpath, 34, format!("struct {struct_name} is defined twice (first at {first})"));
        } else {
            self.inline.insert(struct_name.clone(), fpath.to_owned());
        }
        self.fields(nested, fbase, &struct_name, here, false)
    }
}

/// The field a rule looks at: its spec, JSON path and name as written.
struct FieldAt<'a> {
    spec: &'a FieldSpec,
    path: &'a str,
    name: &'a str,
}

/// `processId` → `ProcessId` (Kafka's `capitalizeFirst`; the rest is kept as written).
pub fn capitalize_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `base (name)`, or just `base` when the name is missing.
fn named_path(base: &str, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("{base} ({n})"),
        None => base.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Cross-file rules
// ---------------------------------------------------------------------------------------------

/// What the cross-file rules need to know about one schema file. Files that failed
/// validation still have one when their name, type and apiKey were readable, so that a broken
/// request does not also make its response look unpaired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaIdentity {
    pub file: String,
    pub name: String,
    pub kind: MessageKind,
    pub api_key: Option<i16>,
}

impl From<&Message> for SchemaIdentity {
    fn from(m: &Message) -> Self {
        SchemaIdentity { file: m.file.clone(), name: m.name.clone(), kind: m.kind, api_key: m.api_key }
    }
}

/// The identity of a parsed (not necessarily valid) schema, if its name and type are readable.
pub fn identity(file: &str, spec: &MessageSpec) -> Option<SchemaIdentity> {
    Some(SchemaIdentity {
        file: file.to_owned(),
        name: spec.name.clone()?,
        kind: parse_kind(spec.kind.as_deref()?)?,
        api_key: spec.api_key,
    })
}

/// Rules that span files, over a whole set of lowered messages:
/// - 36: each apiKey has exactly one request and one response, named `XRequest` and `XResponse`;
/// - 37: record types (`apiKey` of metadata, coordinator-key and coordinator-value schemas) are unique within each kind.
pub fn validate_set(messages: &[Message]) -> Vec<SchemaError> {
    let ids: Vec<SchemaIdentity> = messages.iter().map(SchemaIdentity::from).collect();
    validate_identities(&ids)
}

/// `validate_set` over identities (see `SchemaIdentity`).
pub fn validate_identities(messages: &[SchemaIdentity]) -> Vec<SchemaError> {
    let mut errors = Vec::new();
    let mut requests: BTreeMap<i16, &SchemaIdentity> = BTreeMap::new();
    let mut responses: BTreeMap<i16, &SchemaIdentity> = BTreeMap::new();
    let mut records: BTreeMap<i16, &SchemaIdentity> = BTreeMap::new();
    let mut coordinator_keys: BTreeMap<i16, &SchemaIdentity> = BTreeMap::new();
    let mut coordinator_values: BTreeMap<i16, &SchemaIdentity> = BTreeMap::new();
    for m in messages {
        let Some(key) = m.api_key else { continue };
        let (seen, what, rule) = match m.kind {
            MessageKind::Request => (&mut requests, "request", 36),
            MessageKind::Response => (&mut responses, "response", 36),
            MessageKind::Metadata => (&mut records, record_kind(m.kind), 37),
            MessageKind::CoordinatorKey => (&mut coordinator_keys, record_kind(m.kind), 37),
            MessageKind::CoordinatorValue => (&mut coordinator_values, record_kind(m.kind), 37),
            _ => continue,
        };
        match seen.get(&key) {
            Some(first) => errors.push(SchemaError::rule(
                &m.file,
                "$",
                rule,
                format!("{what} {} has apiKey {key}, already used by {what} {} in {}", m.name, first.name, first.file),
            )),
            None => {
                seen.insert(key, m);
            }
        }
    }
    for (key, req) in &requests {
        let stem = req.name.strip_suffix("Request").unwrap_or(&req.name);
        match responses.get(key) {
            None => errors.push(SchemaError::rule(
                &req.file,
                "$",
                36,
                format!("request {} (apiKey {key}) has no response with the same apiKey", req.name),
            )),
            Some(resp) => {
                let resp_stem = resp.name.strip_suffix("Response").unwrap_or(&resp.name);
                if stem != resp_stem {
                    errors.push(SchemaError::rule(
                        &resp.file,
                        "$",
                        36,
                        format!(
                            "response {} has apiKey {key} of request {}; expected it to be named {stem}Response",
                            resp.name, req.name
                        ),
                    ));
                }
            }
        }
    }
    for (key, resp) in &responses {
        if !requests.contains_key(key) {
            errors.push(SchemaError::rule(
                &resp.file,
                "$",
                36,
                format!("response {} (apiKey {key}) has no request with the same apiKey", resp.name),
            ));
        }
    }
    errors.sort();
    errors
}

/// Names used by several files, for callers that combine folders: schema names must be unique
/// because each becomes one generated type. (Not one of Kafka's numbered rules.)
pub fn duplicate_names(messages: &[SchemaIdentity]) -> Vec<SchemaError> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    let mut errors = Vec::new();
    for m in messages {
        match seen.get(m.name.as_str()) {
            Some(first) => errors.push(SchemaError::new(
                &m.file,
                "$",
                None,
                format!("message name {} is also used by {first}", m.name),
            )),
            None => {
                seen.insert(&m.name, &m.file);
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capitalize_first_keeps_the_rest() {
        assert_eq!(capitalize_first("zeroCopyByteBuffer"), "ZeroCopyByteBuffer");
        assert_eq!(capitalize_first("ABCField"), "ABCField");
    }

    #[test]
    fn blank_and_none_versions_are_absent() {
        assert_eq!(non_blank(Some("  ")), None);
        assert_eq!(parse_versions("none"), Ok(None));
        assert_eq!(parse_versions("2-4"), Ok(Some(Versions::new(2, 4))));
    }
}
