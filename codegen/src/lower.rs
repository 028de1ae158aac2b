//! Lowering a validated schema to the IR, and the public entry points that read, validate and
//! lower schema files (`load_str`, `load_dir`, `load_dirs`).

use crate::checked::{Checked, CheckedField, CheckedMessage, CheckedStruct};
use crate::diagnostics::{SchemaError, SchemaErrors, SchemaWarning};
use crate::ir::{Field, Message, Retired, Struct, Versions};
use crate::parse::parse_schema;
use crate::source::{read_schemas, SchemaFile};
use crate::validate::{check_schema, duplicate_names, identity, validate_identities, SchemaIdentity};
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
    let (checked, mut errors, more) = check_schema(file_name, &spec);
    warnings.extend(more);
    if strict {
        errors.extend(warnings.drain(..).map(SchemaWarning::into_error));
    }
    if !errors.is_empty() {
        return (id, Err(SchemaErrors(errors)));
    }
    match checked {
        Some(Checked::Live(checked)) => (id, Ok((Lowered::Live(lower_message(&checked)), warnings))),
        Some(Checked::Retired(retired)) => (id, Ok((Lowered::Retired(retired), warnings))),
        // A schema that breaks no rule is always checked; this would be a validator bug.
        None => (
            id,
            Err(SchemaError::new(file_name, "$", None, "validation accepted the schema without resolving it").into()),
        ),
    }
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

/// Loads every `*.json` file directly in each folder, or the schemas of each jar (see
/// [`crate::source`]), in the order given: the live schemas,
/// the retired ones and the warnings. Under `strict`, what would be a warning is an error.
pub fn load_schemas<P: AsRef<Path>>(dirs: &[P], strict: bool) -> Result<Loaded, SchemaErrors> {
    let sources: Vec<_> = dirs.iter().map(|d| read_schemas(d.as_ref())).collect();
    load_files(&sources, strict)
}

/// Like [`load_schemas`] over sources already read with [`read_schemas`], for a caller that
/// also keeps their texts (so nothing is read twice). A source that could not be read (missing,
/// unreadable or holding no schema) is refused by every command alike, named as given.
pub fn load_files(sources: &[Result<Vec<SchemaFile>, String>], strict: bool) -> Result<Loaded, SchemaErrors> {
    let mut loaded = Loaded::default();
    let mut ids = Vec::new();
    let mut errors = Vec::new();
    for source in sources {
        let files = match source {
            Ok(files) => files,
            Err(message) => {
                errors.push(SchemaError::folder(message.clone()));
                continue;
            }
        };
        for file in files {
            // Diagnostics name a jar's entry in full; the IR keeps the bare file name.
            let (id, result) = load_one(&file.shown, &file.text, strict);
            ids.extend(id);
            match result {
                Ok((Lowered::Live(mut m), warnings)) => {
                    m.file = file.name.clone();
                    loaded.messages.push(m);
                    loaded.warnings.extend(warnings);
                }
                Ok((Lowered::Retired(mut r), warnings)) => {
                    r.file = file.name.clone();
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

/// Arranges a checked schema into the IR: the structs each once, in the order of first
/// definition, each with the versions in which it can appear. Everything was parsed and checked
/// by validation ([`check_schema`]); nothing here can fail.
pub fn lower_message(checked: &CheckedMessage) -> Message {
    let valid_versions = checked.message.valid_versions;
    let commons: HashMap<&str, &CheckedStruct> = checked.common_structs.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut lowerer = Lowerer {
        commons_used: common_versions(checked, &commons),
        commons,
        structs: Vec::new(),
        pending_commons: VecDeque::new(),
    };
    let fields = lowerer.fields(&checked.fields, valid_versions);

    // Common structs: first those in use (in order of first use), then the unused ones in
    // declaration order; each is followed by the inline structs defined inside it.
    let mut emitted: HashSet<String> = HashSet::new();
    let mut declared = checked.common_structs.iter().map(|c| c.name.clone());
    loop {
        while let Some(name) = lowerer.pending_commons.pop_front() {
            if emitted.insert(name.clone()) {
                lowerer.common(&name, valid_versions);
            }
        }
        match declared.by_ref().find(|n| !emitted.contains(n)) {
            Some(next) => lowerer.pending_commons.push_back(next),
            None => break,
        }
    }

    Message { fields, structs: lowerer.structs, ..checked.message.clone() }
}

fn hull(a: Option<Versions>, b: Versions) -> Versions {
    match a {
        None => b,
        Some(a) => Versions::new(a.min.min(b.min), a.max.max(b.max)),
    }
}

/// For each common struct in use, the union (hull) of the versions in which fields using it
/// are present, nested through inline and common structs until nothing changes.
fn common_versions(checked: &CheckedMessage, commons: &HashMap<&str, &CheckedStruct>) -> HashMap<String, Versions> {
    fn visit(
        fields: &[CheckedField],
        parent: Versions,
        commons: &HashMap<&str, &CheckedStruct>,
        acc: &mut HashMap<String, Versions>,
    ) {
        for f in fields {
            let Some(name) = f.field.ty.struct_name() else { continue };
            let Some(here) = f.field.versions.intersect(&parent) else { continue };
            if commons.contains_key(name) {
                let merged = hull(acc.get(name).copied(), here);
                acc.insert(name.to_owned(), merged);
            } else {
                visit(&f.nested, here, commons, acc);
            }
        }
    }
    let mut acc = HashMap::new();
    // Each round propagates uses one level deeper through common structs.
    for _ in 0..=commons.len() {
        let before = acc.clone();
        visit(&checked.fields, checked.message.valid_versions, commons, &mut acc);
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
    commons: HashMap<&'a str, &'a CheckedStruct>,
    /// Versions of the common structs that are used.
    commons_used: HashMap<String, Versions>,
    structs: Vec<Struct>,
    /// Common structs referenced but not yet emitted, in order of first use.
    pending_commons: VecDeque<String>,
}

impl Lowerer<'_> {
    /// Emits common struct `name`, then the inline structs inside it.
    fn common(&mut self, name: &str, valid: Versions) {
        let Some(spec) = self.commons.get(name).copied() else { return };
        let versions = match self.commons_used.get(name) {
            Some(v) => *v,
            // Unused: where it is declared to exist, within the message's versions if possible.
            None => spec.versions.intersect(&valid).unwrap_or(spec.versions),
        };
        let index = self.structs.len();
        self.structs.push(Struct { name: name.to_owned(), versions, fields: Vec::new(), is_common: true });
        let fields = self.fields(&spec.fields, versions);
        if let Some(s) = self.structs.get_mut(index) {
            s.fields = fields;
        }
    }

    /// Lowers the fields of one struct present in `parent` versions, emitting nested inline
    /// structs depth-first (each before the structs nested inside it).
    fn fields(&mut self, fields: &[CheckedField], parent: Versions) -> Vec<Field> {
        let mut out = Vec::with_capacity(fields.len());
        for f in fields {
            let field = f.field.clone();
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
                    let nested = self.fields(&f.nested, here);
                    if let Some(s) = self.structs.get_mut(index) {
                        s.fields = nested;
                    }
                }
            }
            out.push(field);
        }
        out
    }
}
