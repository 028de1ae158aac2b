//! Lowering a validated schema to the IR, and the public entry points that read, validate and
//! lower schema files (`load_str`, `load_dir`, `load_dirs`).

use crate::diagnostics::{SchemaError, SchemaErrors, SchemaWarning};
use crate::ir::{Field, Message, Retired, Struct, Versions};
use crate::parse::parse_schema;
use crate::schema::{FieldSpec, MessageSpec, StructSpec};
use crate::validate::{
    check_message, duplicate_names, identity, is_retired, non_blank, parse_default, parse_kind, parse_type,
    parse_versions, validate_identities, SchemaIdentity,
};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;

/// Reads, validates and lowers one schema file's text. `file_name` is the bare file name that
/// errors and `Message::file` carry. Legacy allowances are accepted (their warnings dropped); a
/// retired schema (`validVersions: "none"`) is an error, as it has nothing to lower. Cross-file
/// rules (36, 37) need a set: see `load_dir`.
pub fn load_str(file_name: &str, text: &str) -> Result<Message, SchemaErrors> {
    match load_one(file_name, text, false).1? {
        (Lowered::Live(m), _) => Ok(m),
        (Lowered::Retired(r), _) => Err(SchemaError::new(
            file_name,
            "$",
            None,
            format!("{} has validVersions `none` (retired): it has no versions to generate", r.name),
        )
        .into()),
    }
}

/// One file, lowered.
enum Lowered {
    Live(Message),
    Retired(Retired),
}

/// What loading a set of schema folders found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// Schemas with versions, sorted by file name within each folder.
    pub messages: Vec<Message>,
    /// Schemas with `validVersions: "none"`: no codec, their keys reserved.
    pub retired: Vec<Retired>,
    /// Legacy allowances the schemas relied on (empty under `strict`).
    pub warnings: Vec<SchemaWarning>,
    /// How many schema files each folder held, in the order given.
    pub files_per_dir: Vec<usize>,
}

/// Loads one file, also returning its identity for the cross-file rules when it is readable.
/// Under `strict` the legacy allowances are errors.
#[allow(clippy::type_complexity)]
fn load_one(
    file_name: &str,
    text: &str,
    strict: bool,
) -> (Option<SchemaIdentity>, Result<(Lowered, Vec<SchemaWarning>), SchemaErrors>) {
    let (spec, mut warnings) = match parse_schema(file_name, text) {
        Ok(parsed) => parsed,
        Err(e) => return (None, Err(e)),
    };
    let id = identity(file_name, &spec);
    let (mut errors, more) = check_message(file_name, &spec);
    warnings.extend(more);
    if strict {
        errors.extend(warnings.drain(..).map(SchemaWarning::into_error));
    }
    if !errors.is_empty() {
        return (id, Err(SchemaErrors(errors)));
    }
    if is_retired(&spec) {
        let retired = id.clone().map(|id| Retired { file: id.file, name: id.name, kind: id.kind, api_key: id.api_key });
        return match retired {
            Some(r) => (id, Ok((Lowered::Retired(r), warnings))),
            None => (id, Err(SchemaError::new(file_name, "$", None, "cannot lower schema: no name or type").into())),
        };
    }
    (id, lower_message(file_name, &spec).map(|m| (Lowered::Live(m), warnings)).map_err(SchemaErrors::from))
}

/// Loads every `*.json` file directly in `dir`, sorted by file name, with the errors of all files
/// reported together and the cross-file rules applied. Retired schemas and warnings are left
/// out: see [`load_schemas`].
pub fn load_dir(dir: &Path) -> Result<Vec<Message>, SchemaErrors> {
    load_dirs(&[dir])
}

/// Like `load_dir` over several folders (in the order given); the cross-file rules and the
/// uniqueness of message names apply to the union.
pub fn load_dirs<P: AsRef<Path>>(dirs: &[P]) -> Result<Vec<Message>, SchemaErrors> {
    load_schemas(dirs, false).map(|loaded| loaded.messages)
}

/// Loads every `*.json` file directly in each folder (in the order given): the live schemas,
/// the retired ones and the warnings. Under `strict`, what would be a warning is an error.
pub fn load_schemas<P: AsRef<Path>>(dirs: &[P], strict: bool) -> Result<Loaded, SchemaErrors> {
    let mut loaded = Loaded::default();
    let mut ids = Vec::new();
    let mut errors = Vec::new();
    for dir in dirs {
        let dir = dir.as_ref();
        let files = match schema_files(dir) {
            Ok(files) => {
                loaded.files_per_dir.push(files.len());
                files
            }
            Err(e) => {
                loaded.files_per_dir.push(0);
                errors.push(SchemaError::new(
                    dir.display().to_string(),
                    "$",
                    None,
                    format!("cannot list schema folder: {e}"),
                ));
                continue;
            }
        };
        for (name, path) in files {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    errors.push(SchemaError::new(name, "$", None, format!("cannot read: {e}")));
                    continue;
                }
            };
            let (id, result) = load_one(&name, &text, strict);
            ids.extend(id);
            match result {
                Ok((Lowered::Live(m), warnings)) => {
                    loaded.messages.push(m);
                    loaded.warnings.extend(warnings);
                }
                Ok((Lowered::Retired(r), warnings)) => {
                    loaded.retired.push(r);
                    loaded.warnings.extend(warnings);
                }
                Err(e) => errors.extend(e),
            }
        }
    }
    errors.extend(validate_identities(&ids));
    errors.extend(duplicate_names(&ids));
    SchemaErrors(errors).into_result(loaded)
}

/// `(file name, path)` of the `*.json` files directly in `dir`, sorted by file name.
fn schema_files(dir: &Path) -> std::io::Result<Vec<(String, std::path::PathBuf)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.ends_with(".json") && entry.file_type()?.is_file() {
            files.push((name.to_owned(), path.clone()));
        }
    }
    files.sort();
    Ok(files)
}

/// Lowers a schema that `validate_message` accepted. A failure here means validation missed
/// something; it is reported as an error, never a panic.
pub fn lower_message(file: &str, spec: &MessageSpec) -> Result<Message, SchemaError> {
    let internal = |what: &str| SchemaError::new(file, "$", None, format!("cannot lower schema: {what}"));
    let name = spec.name.clone().ok_or_else(|| internal("no name"))?;
    let kind = spec.kind.as_deref().and_then(parse_kind).ok_or_else(|| internal("no valid type"))?;
    let valid_versions =
        required_versions(spec.valid_versions.as_deref()).ok_or_else(|| internal("invalid validVersions"))?;
    let flexible_versions = optional_versions(spec.flexible_versions.as_deref()).map_err(|e| internal(&e))?;
    let deprecated_versions = optional_versions(spec.deprecated_versions.as_deref()).map_err(|e| internal(&e))?;

    let commons: HashMap<&str, &StructSpec> =
        spec.common_structs.iter().filter_map(|c| c.name.as_deref().map(|n| (n, c))).collect();
    let mut lowerer = Lowerer {
        file,
        commons_used: common_versions(spec, &commons, valid_versions),
        commons,
        structs: Vec::new(),
        pending_commons: VecDeque::new(),
    };
    let fields = lowerer.fields(&spec.fields, valid_versions)?;

    // Common structs: first those in use (in order of first use), then the unused ones in
    // declaration order; each is followed by the inline structs defined inside it.
    let mut emitted: HashSet<String> = HashSet::new();
    let mut declared = spec.common_structs.iter().filter_map(|c| c.name.clone());
    loop {
        while let Some(name) = lowerer.pending_commons.pop_front() {
            if emitted.insert(name.clone()) {
                lowerer.common(&name, valid_versions)?;
            }
        }
        match declared.by_ref().find(|n| !emitted.contains(n)) {
            Some(next) => lowerer.pending_commons.push_back(next),
            None => break,
        }
    }

    Ok(Message {
        file: file.to_owned(),
        name,
        kind,
        api_key: spec.api_key,
        valid_versions,
        flexible_versions,
        deprecated_versions,
        latest_version_unstable: spec.latest_version_unstable.unwrap_or(false),
        listeners: spec.listeners.clone().unwrap_or_default(),
        fields,
        structs: lowerer.structs,
    })
}

/// A version string that must be a range (not absent, not "none").
fn required_versions(text: Option<&str>) -> Option<Versions> {
    non_blank(text).and_then(|t| parse_versions(t).ok().flatten())
}

/// An optional version string: absent and "none" both give `None`.
fn optional_versions(text: Option<&str>) -> Result<Option<Versions>, String> {
    match non_blank(text) {
        None => Ok(None),
        Some(t) => parse_versions(t),
    }
}

/// The versions a field exists in: `versions`, or `taggedVersions` for tagged-only fields.
fn field_versions(f: &FieldSpec) -> Option<Versions> {
    required_versions(f.versions.as_deref()).or_else(|| required_versions(f.tagged_versions.as_deref()))
}

fn hull(a: Option<Versions>, b: Versions) -> Versions {
    match a {
        None => b,
        Some(a) => Versions::new(a.min.min(b.min), a.max.max(b.max)),
    }
}

/// For each common struct in use, the union (hull) of the versions in which fields using it
/// are present, nested through inline and common structs until nothing changes.
fn common_versions(
    spec: &MessageSpec,
    commons: &HashMap<&str, &StructSpec>,
    valid: Versions,
) -> HashMap<String, Versions> {
    fn visit(
        fields: &[FieldSpec],
        parent: Versions,
        commons: &HashMap<&str, &StructSpec>,
        acc: &mut HashMap<String, Versions>,
    ) {
        for f in fields {
            let Some(name) =
                f.ty.as_deref().and_then(|t| parse_type(t).ok()).and_then(|t| t.struct_name().map(str::to_owned))
            else {
                continue;
            };
            let Some(here) = field_versions(f).and_then(|v| v.intersect(&parent)) else {
                continue;
            };
            if commons.contains_key(name.as_str()) {
                let merged = hull(acc.get(&name).copied(), here);
                acc.insert(name, merged);
            } else if let Some(nested) = &f.fields {
                visit(nested, here, commons, acc);
            }
        }
    }
    let mut acc = HashMap::new();
    // Each round propagates uses one level deeper through common structs.
    for _ in 0..=commons.len() {
        let before = acc.clone();
        visit(&spec.fields, valid, commons, &mut acc);
        for (name, c) in commons {
            if let Some(v) = before.get(*name).copied() {
                visit(&c.fields, v, commons, &mut acc);
            }
        }
        if acc == before {
            break;
        }
    }
    acc
}

struct Lowerer<'a> {
    file: &'a str,
    commons: HashMap<&'a str, &'a StructSpec>,
    /// Versions of the common structs that are used.
    commons_used: HashMap<String, Versions>,
    structs: Vec<Struct>,
    /// Common structs referenced but not yet emitted, in order of first use.
    pending_commons: VecDeque<String>,
}

impl Lowerer<'_> {
    fn error(&self, path: &str, what: String) -> SchemaError {
        SchemaError::new(self.file, path, None, format!("cannot lower schema: {what}"))
    }

    /// Emits common struct `name`, then the inline structs inside it.
    fn common(&mut self, name: &str, valid: Versions) -> Result<(), SchemaError> {
        let Some(spec) = self.commons.get(name).copied() else {
            return Err(self.error("$", format!("common struct {name} is not declared")));
        };
        let versions = match self.commons_used.get(name) {
            Some(v) => *v,
            // Unused: where it is declared to exist, within the message's versions if possible.
            None => {
                let declared = required_versions(spec.versions.as_deref())
                    .ok_or_else(|| self.error("$", format!("common struct {name} has no versions")))?;
                declared.intersect(&valid).unwrap_or(declared)
            }
        };
        let index = self.structs.len();
        self.structs.push(Struct { name: name.to_owned(), versions, fields: Vec::new(), is_common: true });
        let fields = self.fields(&spec.fields, versions)?;
        if let Some(s) = self.structs.get_mut(index) {
            s.fields = fields;
        }
        Ok(())
    }

    /// Lowers the fields of one struct present in `parent` versions, emitting nested inline
    /// structs depth-first (each before the structs nested inside it).
    fn fields(&mut self, fields: &[FieldSpec], parent: Versions) -> Result<Vec<Field>, SchemaError> {
        let mut out = Vec::with_capacity(fields.len());
        for f in fields {
            let field = self.field(f)?;
            if let Some(struct_name) = field.ty.struct_name() {
                if self.commons.contains_key(struct_name) {
                    if !self.pending_commons.iter().any(|n| n == struct_name) {
                        self.pending_commons.push_back(struct_name.to_owned());
                    }
                } else {
                    // Validation (rule 10) ensures an overlap with the declared parent; inside a
                    // common struct the parent here is narrower (where it is used), so fall back
                    // to the field's own versions for a struct that can never appear.
                    let here = field.versions.intersect(&parent).unwrap_or(field.versions);
                    let index = self.structs.len();
                    self.structs.push(Struct {
                        name: struct_name.to_owned(),
                        versions: here,
                        fields: Vec::new(),
                        is_common: false,
                    });
                    let nested = self.fields(f.fields.as_deref().unwrap_or(&[]), here)?;
                    if let Some(s) = self.structs.get_mut(index) {
                        s.fields = nested;
                    }
                }
            }
            out.push(field);
        }
        Ok(out)
    }

    fn field(&self, f: &FieldSpec) -> Result<Field, SchemaError> {
        let raw_name = f.name.as_deref().unwrap_or("");
        let err = |what: &str| self.error("$", format!("field {raw_name}: {what}"));
        let ty = parse_type(f.ty.as_deref().unwrap_or("")).map_err(|e| err(&e))?;
        let versions = field_versions(f).ok_or_else(|| err("no versions"))?;
        let nullable_versions = optional_versions(f.nullable_versions.as_deref())
            .map_err(|e| err(&e))?
            .and_then(|n| n.intersect(&versions));
        let tagged_versions = optional_versions(f.tagged_versions.as_deref()).map_err(|e| err(&e))?;
        let tag = match f.tag {
            None => None,
            Some(t) => Some(u32::try_from(t).map_err(|_| err("tag out of range"))?),
        };
        let flexible_versions = match non_blank(f.flexible_versions.as_deref()) {
            None => None,
            Some(t) => Some(parse_versions(t).map_err(|e| err(&e))?),
        };
        let raw_nullable = optional_versions(f.nullable_versions.as_deref()).map_err(|e| err(&e))?;
        let default = parse_default(&ty, f.default.as_deref(), versions, raw_nullable).map_err(|(_, e)| err(&e))?;
        Ok(Field {
            name: capitalize_first(raw_name),
            ty,
            versions,
            nullable_versions,
            tagged_versions,
            tag,
            flexible_versions,
            default,
            ignorable: f.ignorable.unwrap_or(false),
            map_key: f.map_key.unwrap_or(false),
            entity_type: f.entity_type.clone().filter(|e| e != "unknown"),
            zero_copy: f.zero_copy.unwrap_or(false),
            about: f.about.clone(),
        })
    }
}

/// `processId` → `ProcessId` (Kafka's `capitalizeFirst`; the rest is kept as written).
fn capitalize_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
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
    fn optional_versions_treats_none_and_blank_as_absent() {
        assert_eq!(optional_versions(None), Ok(None));
        assert_eq!(optional_versions(Some("  ")), Ok(None));
        assert_eq!(optional_versions(Some("none")), Ok(None));
        assert_eq!(optional_versions(Some("2-4")), Ok(Some(Versions::new(2, 4))));
    }
}
