//! What changed between two schema folders, and whether any version valid in both encodes
//! differently: the inventory (APIs, schemas, versions, fields) and the wire check (the layout
//! of every shared version, from the IR, compared element by element).
//!
//! ```no_run
//! let report = kwire_inspect::diff::Diff::new("old/message", "new/message").run().unwrap();
//! println!("{}", report.summary());
//! std::process::exit(if report.breaking.is_empty() { 0 } else { 1 });
//! ```

pub mod layout;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use layout::{differences, layout, Differences, Element};

use kwire_codegen::diagnostics::SchemaErrors;
use kwire_codegen::ir::{versions_text, Field, Message, MessageKind, Versions};

/// Compares two schema folders; like [`kwire_codegen::Config`], set up, then [`Diff::run`].
#[derive(Debug, Clone)]
pub struct Diff {
    old: PathBuf,
    new: PathBuf,
    old_label: Option<String>,
    new_label: Option<String>,
    verbose: bool,
}

/// One side could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{side} schemas ({dir}):\n{errors}")]
pub struct DiffError {
    pub side: &'static str,
    pub dir: String,
    pub errors: SchemaErrors,
}

/// Why a change breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BreakingKind {
    /// Bytes of a shipped version differ.
    Wire,
    /// The bytes are the same, the generated API is not (a type or mapKey change), or the
    /// schema's identity changed.
    Api,
}

impl std::fmt::Display for BreakingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BreakingKind::Wire => "wire",
            BreakingKind::Api => "api",
        })
    }
}

/// A change that makes bytes of a version valid in both folders differ, or the generated API
/// break.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Breaking {
    pub kind: BreakingKind,
    pub file: String,
    /// Where in the schema file, e.g. `$.fields[3].fields[0]`.
    pub json_path: String,
    /// The field, e.g. `Topics[].Partitions[].Index` (empty for the message itself).
    pub field: String,
    /// Versions affected, in Kafka's notation (`0-12`, `3`), comma-separated.
    pub versions: String,
    pub what: String,
    pub old: String,
    pub new: String,
}

/// What changed in one schema present in both folders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SchemaChanges {
    pub file: String,
    pub name: String,
    pub versions_added: Vec<i16>,
    pub versions_removed: Vec<i16>,
    pub newly_deprecated: Vec<i16>,
    /// e.g. `latest version 12 became stable`.
    pub stability: Vec<String>,
    /// `(field path, the version that adds it)`.
    pub fields_added: Vec<(String, String)>,
    pub fields_removed: Vec<String>,
    /// `(old path, new path, versions)`: a different name, the same layout.
    pub renames: Vec<(String, String, String)>,
    /// `(field path, tag, versions)`: tagged fields added to versions that had shipped
    /// (old readers skip them, and a field at its default is not written: not breaking).
    pub tags_added: Vec<(String, u32, String)>,
    /// Versions that changed layout but had not shipped (the old schema's unstable latest).
    pub unstable_changed: Vec<i16>,
    /// `(field path, old, new)`, only with `verbose`.
    pub about_changes: Vec<(String, String, String)>,
}

impl SchemaChanges {
    fn is_empty(&self) -> bool {
        self.versions_added.is_empty()
            && self.versions_removed.is_empty()
            && self.newly_deprecated.is_empty()
            && self.stability.is_empty()
            && self.fields_added.is_empty()
            && self.fields_removed.is_empty()
            && self.renames.is_empty()
            && self.tags_added.is_empty()
            && self.unstable_changed.is_empty()
            && self.about_changes.is_empty()
    }
}

/// The whole comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub old: String,
    pub new: String,
    /// `(key, name)` of APIs (requests) only in the new folder / only in the old.
    pub apis_added: Vec<(i16, String)>,
    pub apis_removed: Vec<(i16, String)>,
    /// Schema files only in one folder.
    pub schemas_added: Vec<String>,
    pub schemas_removed: Vec<String>,
    pub changed: Vec<SchemaChanges>,
    pub breaking: Vec<Breaking>,
}

impl Diff {
    pub fn new(old: impl Into<PathBuf>, new: impl Into<PathBuf>) -> Self {
        Diff { old: old.into(), new: new.into(), old_label: None, new_label: None, verbose: false }
    }

    /// Names for the summary line (default: the folder's name, or its parent's for `message/`).
    pub fn labels(&mut self, old: impl Into<String>, new: impl Into<String>) -> &mut Self {
        self.old_label = Some(old.into());
        self.new_label = Some(new.into());
        self
    }

    /// Also report `about` text changes.
    pub fn verbose(&mut self, verbose: bool) -> &mut Self {
        self.verbose = verbose;
        self
    }

    pub fn run(&self) -> Result<Report, DiffError> {
        let load = |side: &'static str, dir: &Path| {
            kwire_codegen::lower::load_schemas(&[dir], false).map_err(|errors| DiffError {
                side,
                dir: dir.display().to_string(),
                errors,
            })
        };
        let old = load("old", &self.old)?;
        let new = load("new", &self.new)?;
        let mut report = compare(&old.messages, &new.messages, self.verbose);
        retirements(&mut report, &old.messages, &new.retired);
        report.old = self.old_label.clone().unwrap_or_else(|| label(&self.old));
        report.new = self.new_label.clone().unwrap_or_else(|| label(&self.new));
        Ok(report)
    }
}

/// Schemas the new folder keeps as `validVersions: "none"` stubs (Kafka 4.0 retired whole APIs
/// so): every version removed, the API's key reserved; not a schema that disappeared.
fn retirements(report: &mut Report, old: &[Message], retired: &[kwire_codegen::ir::Retired]) {
    for r in retired {
        let Some(o) = old.iter().find(|m| m.name == r.name) else { continue };
        report.schemas_removed.retain(|f| *f != o.file);
        report.changed.push(SchemaChanges {
            file: r.file.clone(),
            name: r.name.clone(),
            versions_removed: versions_of(o.valid_versions).into_iter().collect(),
            stability: vec!["retired: validVersions is \"none\" (every version removed, the key kept)".into()],
            ..Default::default()
        });
    }
    report.changed.sort_by(|a, b| a.file.cmp(&b.file));
}

/// A folder's name for the summary: `3.7.0` for `.../3.7.0/message`.
pub fn label(dir: &Path) -> String {
    // A jar is named by its file without `.jar` (`kafka-clients-4.4.0`).
    if kwire_codegen::source::is_archive(dir) {
        let jar = kwire_codegen::source::watched_path(dir);
        return jar.file_stem().map_or_else(|| jar.display().to_string(), |s| s.to_string_lossy().into_owned());
    }
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    match name(dir) {
        Some(n) if n == "message" => dir.parent().and_then(name).unwrap_or(n),
        Some(n) => n,
        None => kwire_codegen::display_path(dir),
    }
}

/// Schemas by name.
fn by_name(set: &[Message]) -> BTreeMap<&str, &Message> {
    set.iter().map(|m| (m.name.as_str(), m)).collect()
}

/// Compares two loaded schema sets.
pub fn compare(old: &[Message], new: &[Message], verbose: bool) -> Report {
    let (old_by, new_by) = (by_name(old), by_name(new));
    let mut report = Report::default();
    let apis = |set: &BTreeMap<&str, &Message>| -> BTreeMap<i16, String> {
        set.values()
            .filter(|m| m.kind == MessageKind::Request)
            .filter_map(|m| Some((m.api_key?, kwire_codegen::ir::api_name(&m.name).to_string())))
            .collect()
    };
    let (old_apis, new_apis) = (apis(&old_by), apis(&new_by));
    report.apis_added =
        new_apis.iter().filter(|(k, _)| !old_apis.contains_key(k)).map(|(k, n)| (*k, n.clone())).collect();
    report.apis_removed =
        old_apis.iter().filter(|(k, _)| !new_apis.contains_key(k)).map(|(k, n)| (*k, n.clone())).collect();
    // Schemas pair up by name; an API's request or response under a new name pairs up by key.
    let mut pairs: Vec<(&Message, &Message)> = Vec::new();
    for (name, o) in &old_by {
        match new_by.get(name) {
            Some(n) => pairs.push((*o, *n)),
            None => {
                let renamed = new_by.values().find(|n| {
                    o.api_key.is_some()
                        && n.api_key == o.api_key
                        && n.kind == o.kind
                        && !old_by.contains_key(n.name.as_str())
                });
                match renamed {
                    Some(n) => pairs.push((*o, *n)),
                    None => report.schemas_removed.push(o.file.clone()),
                }
            }
        }
    }
    let paired: BTreeSet<&str> = pairs.iter().map(|(_, n)| n.name.as_str()).collect();
    report.schemas_added =
        new_by.values().filter(|m| !paired.contains(m.name.as_str())).map(|m| m.file.clone()).collect();
    // An API's unstable latest version (declared on its request) had not shipped.
    let unstable: BTreeMap<i16, i16> = old_by
        .values()
        .filter(|m| m.kind == MessageKind::Request && m.latest_version_unstable)
        .filter_map(|m| Some((m.api_key?, m.valid_versions.max)))
        .collect();
    for (o, n) in pairs {
        let unshipped = o.api_key.and_then(|k| unstable.get(&k).copied());
        let (mut changes, breaking) = compare_schema(o, n, unshipped, verbose);
        if o.name != n.name {
            changes.stability.insert(0, format!("renamed from {} (same apiKey and type)", o.file));
        }
        report.breaking.extend(breaking);
        if !changes.is_empty() {
            report.changed.push(changes);
        }
    }
    report
}

fn versions_of(v: Versions) -> BTreeSet<i16> {
    (v.min..=v.max.min(v.min.saturating_add(1000))).collect()
}

fn opt_set(v: Option<Versions>, within: Versions) -> BTreeSet<i16> {
    v.and_then(|v| v.intersect(&within)).map(versions_of).unwrap_or_default()
}

/// Versions as Kafka writes ranges, comma-separated: `0-3, 5`.
pub fn ranges(versions: &[i16]) -> String {
    let mut sorted = versions.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(Versions::new(start, end).to_string());
        i += 1;
    }
    parts.join(", ")
}

/// Every field with its path (`Topics[].Name`) and JSON path, depth first.
fn all_fields(msg: &Message) -> Vec<(String, String, &Field)> {
    fn walk<'m>(
        msg: &'m Message,
        fields: &'m [Field],
        prefix: &str,
        json: &str,
        depth: usize,
        out: &mut Vec<(String, String, &'m Field)>,
    ) {
        for (i, f) in fields.iter().enumerate() {
            let path = format!("{prefix}{}", f.name);
            let at = format!("{json}.fields[{i}]");
            out.push((path.clone(), at.clone(), f));
            let Some(name) = f.ty.struct_name() else { continue };
            if depth > 32 {
                continue;
            }
            if let Some(s) = msg.structs.iter().find(|s| s.name == name) {
                let inner = if f.ty.is_array() { format!("{path}[].") } else { format!("{path}.") };
                let at = if s.is_common { format!("{at} > commonStructs.{name}") } else { at };
                walk(msg, &s.fields, &inner, &at, depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(msg, &msg.fields, "", "$", 0, &mut out);
    out
}

fn compare_schema(
    old: &Message,
    new: &Message,
    unshipped: Option<i16>,
    verbose: bool,
) -> (SchemaChanges, Vec<Breaking>) {
    let (old_fields, new_fields) = (all_fields(old), all_fields(new));
    let mut cmp = Comparison::new(old, new, &old_fields, &new_fields, unshipped, verbose);
    cmp.identity();
    cmp.versions();
    cmp.fields();
    cmp.tags_reused();
    cmp.wire();
    cmp.fold_renames();
    (cmp.changes, cmp.breaking)
}

/// One schema present in both folders, compared in phases that each fill in what they find.
struct Comparison<'m> {
    old: &'m Message,
    new: &'m Message,
    /// The old schema's unstable latest version, which had not shipped.
    unshipped: Option<i16>,
    verbose: bool,
    /// Versions valid in both.
    shared: Vec<i16>,
    old_fields: &'m [(String, String, &'m Field)],
    new_fields: &'m [(String, String, &'m Field)],
    changes: SchemaChanges,
    breaking: Vec<Breaking>,
}

/// Where a breaking change is: schema path, field path, versions.
struct At<'a> {
    json_path: &'a str,
    field: &'a str,
    versions: String,
}

impl<'a> At<'a> {
    fn message(json_path: &'a str) -> Self {
        At { json_path, field: "", versions: String::new() }
    }
}

impl<'m> Comparison<'m> {
    fn new(
        old: &'m Message,
        new: &'m Message,
        old_fields: &'m [(String, String, &'m Field)],
        new_fields: &'m [(String, String, &'m Field)],
        unshipped: Option<i16>,
        verbose: bool,
    ) -> Self {
        let shared = versions_of(old.valid_versions).intersection(&versions_of(new.valid_versions)).copied().collect();
        let changes = SchemaChanges { file: new.file.clone(), name: new.name.clone(), ..Default::default() };
        Comparison { old, new, unshipped, verbose, shared, old_fields, new_fields, changes, breaking: Vec::new() }
    }

    fn breaking(&mut self, kind: BreakingKind, at: At<'_>, what: &str, old: String, new: String) {
        self.breaking.push(Breaking {
            kind,
            file: self.new.file.clone(),
            json_path: at.json_path.into(),
            field: at.field.into(),
            versions: at.versions,
            what: what.into(),
            old,
            new,
        });
    }

    /// The schema's identity: its api key and type.
    fn identity(&mut self) {
        let (old, new) = (self.old, self.new);
        if old.api_key != new.api_key {
            let key = |k: Option<i16>| k.map_or_else(|| "none".into(), |k| k.to_string());
            self.breaking(
                BreakingKind::Api,
                At::message("$.apiKey"),
                "apiKey changed",
                key(old.api_key),
                key(new.api_key),
            );
        }
        if old.kind != new.kind {
            let (o, n) = (format!("{:?}", old.kind), format!("{:?}", new.kind));
            self.breaking(BreakingKind::Api, At::message("$.type"), "type changed", o, n);
        }
    }

    /// Valid, deprecated and flexible versions, and whether the latest is stable.
    fn versions(&mut self) {
        let (old, new) = (self.old, self.new);
        let (ov, nv) = (versions_of(old.valid_versions), versions_of(new.valid_versions));
        let c = &mut self.changes;
        c.versions_added = nv.difference(&ov).copied().collect();
        c.versions_removed = ov.difference(&nv).copied().collect();
        let (od, nd) = (
            opt_set(old.deprecated_versions, old.valid_versions),
            opt_set(new.deprecated_versions, new.valid_versions),
        );
        c.newly_deprecated = nd.difference(&od).copied().filter(|v| ov.contains(v)).collect();
        match (old.latest_version_unstable, new.latest_version_unstable) {
            (true, false) if nv.contains(&old.valid_versions.max) => {
                c.stability.push(format!("latest version {} became stable", old.valid_versions.max))
            }
            (false, true) => c.stability.push(format!("latest version {} is unstable", new.valid_versions.max)),
            (true, true) if old.valid_versions.max < new.valid_versions.max => c.stability.push(format!(
                "version {} became stable; latest version {} is unstable",
                old.valid_versions.max, new.valid_versions.max
            )),
            _ => {}
        }
        // flexibleVersions may only grow, over the versions both have.
        let (of, nf) =
            (opt_set(old.flexible_versions, old.valid_versions), opt_set(new.flexible_versions, new.valid_versions));
        let lost: Vec<i16> = of.difference(&nf).copied().filter(|v| nv.contains(v)).collect();
        let gained: Vec<i16> = nf.difference(&of).copied().filter(|v| ov.contains(v)).collect();
        if !lost.is_empty() || !gained.is_empty() {
            let versions = ranges(&[lost.clone(), gained].concat());
            let what = if lost.is_empty() {
                "flexibleVersions changed at shipped versions"
            } else {
                "flexibleVersions shrank"
            };
            let at = At { json_path: "$.flexibleVersions", field: "", versions };
            self.breaking(
                BreakingKind::Wire,
                at,
                what,
                versions_text(old.flexible_versions),
                versions_text(new.flexible_versions),
            );
        }
    }

    /// Fields by path: added, removed, mapKey and about changes.
    fn fields(&mut self) {
        let (old_paths, new_paths) = (paths(self.old_fields), paths(self.new_fields));
        for (path, (_, f)) in &new_paths {
            if !old_paths.contains_key(path) {
                let since =
                    if f.versions.min > self.old.valid_versions.max || f.versions.min > self.new.valid_versions.min {
                        format!("v{}", f.versions.min)
                    } else {
                        format!("versions {}", f.versions)
                    };
                self.changes.fields_added.push((path.to_string(), since));
            }
        }
        self.changes.fields_removed =
            old_paths.keys().filter(|p| !new_paths.contains_key(*p)).map(|p| p.to_string()).collect();
        for (path, (json, nfield)) in &new_paths {
            let Some((_, ofield)) = old_paths.get(path) else { continue };
            if ofield.map_key != nfield.map_key {
                let versions: Vec<i16> = self.shared.iter().copied().filter(|v| nfield.versions.contains(*v)).collect();
                let at = At { json_path: json, field: path, versions: ranges(&versions) };
                let what = "mapKey changed (the generated lookup changes)";
                self.breaking(BreakingKind::Api, at, what, ofield.map_key.to_string(), nfield.map_key.to_string());
            }
            if self.verbose && ofield.about != nfield.about {
                let text = |f: &Field| f.about.clone().unwrap_or_default();
                self.changes.about_changes.push((path.to_string(), text(ofield), text(nfield)));
            }
        }
    }

    /// A tag that names another field now, in a struct of the same path (a rename is left to
    /// the wire check, which decides whether the bytes differ).
    fn tags_reused(&mut self) {
        let new_paths = paths(self.new_fields);
        let (old_tags, new_tags) = (tags(self.old_fields), tags(self.new_fields));
        for ((parent, tag), (npath, json)) in &new_tags {
            let Some((opath, _)) = old_tags.get(&(parent.clone(), *tag)) else { continue };
            if opath != npath && new_paths.contains_key(opath.as_str()) {
                let at = At { json_path: json, field: npath, versions: String::new() };
                self.breaking(
                    BreakingKind::Wire,
                    at,
                    &format!("tag {tag} reused for another field"),
                    opath.clone(),
                    npath.clone(),
                );
            }
        }
    }

    /// The wire check, version by version, differences with the same text grouped.
    fn wire(&mut self) {
        let mut diffs: BTreeMap<(String, String), (String, String, Vec<i16>)> = BTreeMap::new();
        let mut renames: BTreeMap<(String, String), Vec<i16>> = BTreeMap::new();
        let mut tags_added: BTreeMap<(String, u32), Vec<i16>> = BTreeMap::new();
        let mut types: BTreeMap<(String, String, String, String), Vec<i16>> = BTreeMap::new();
        for &v in &self.shared {
            let d = differences(&layout(self.old, v), &layout(self.new, v));
            if Some(v) == self.unshipped && !d.breaking.is_empty() {
                self.changes.unstable_changed.push(v);
                continue;
            }
            for (a, b) in d.breaking {
                let at = b.as_ref().or(a.as_ref());
                let (json, field) = at.map_or(("$".into(), String::new()), |e| (e.json_path.clone(), e.path.clone()));
                let text = |e: &Option<Element>| {
                    e.as_ref()
                        .map_or_else(|| "(nothing)".into(), |e| format!("{} {}", e.path, e.wire).trim().to_string())
                };
                diffs.entry((json, field)).or_insert_with(|| (text(&a), text(&b), Vec::new())).2.push(v);
            }
            for (o, n) in d.renames {
                renames.entry((o, n)).or_default().push(v);
            }
            for (a, b) in d.type_changes {
                types.entry((b.json_path, b.path, a.shape, b.shape)).or_default().push(v);
            }
            for (tag, e) in d.tags_added {
                tags_added.entry((e.path, tag)).or_default().push(v);
            }
        }
        // Old and new as at the first version affected (the forms may differ between versions).
        for ((json, field), (o, n, versions)) in diffs {
            let at = At { json_path: &json, field: &field, versions: ranges(&versions) };
            self.breaking(BreakingKind::Wire, at, "wire layout changed", o, n);
        }
        for ((json, field, o, n), versions) in types {
            let at = At { json_path: &json, field: &field, versions: ranges(&versions) };
            self.breaking(BreakingKind::Api, at, "type changed (the bytes are the same)", o, n);
        }
        self.changes.renames = renames.into_iter().map(|((o, n), versions)| (o, n, ranges(&versions))).collect();
        self.changes.tags_added =
            tags_added.into_iter().map(|((path, tag), versions)| (path, tag, ranges(&versions))).collect();
    }

    /// A renamed field is one change, a rename: not also a field removed and one added.
    fn fold_renames(&mut self) {
        let c = &mut self.changes;
        let (from, to): (BTreeSet<&str>, BTreeSet<&str>) =
            c.renames.iter().map(|(o, n, _)| (o.as_str(), n.as_str())).unzip();
        let is_renamed = |path: &str, ends: &BTreeSet<&str>| {
            ends.iter().any(|e| path == *e || path.strip_prefix(*e).is_some_and(|rest| rest.starts_with(['.', '['])))
        };
        let removed: Vec<String> = c.fields_removed.iter().filter(|p| !is_renamed(p, &from)).cloned().collect();
        let added: Vec<(String, String)> =
            c.fields_added.iter().filter(|(p, _)| !is_renamed(p, &to)).cloned().collect();
        c.fields_removed = removed;
        c.fields_added = added;
    }
}

/// Fields by path, with their JSON paths.
fn paths<'a, 'm>(all: &'a [(String, String, &'m Field)]) -> BTreeMap<&'a str, (&'a str, &'m Field)> {
    all.iter().map(|(p, j, f)| (p.as_str(), (j.as_str(), *f))).collect()
}

/// Tagged fields by `(parent path, tag)`: their path and JSON path.
fn tags(all: &[(String, String, &Field)]) -> BTreeMap<(String, u32), (String, String)> {
    all.iter()
        .filter_map(|(p, j, f)| {
            let parent = p.rsplit_once('.').map_or(String::new(), |(a, _)| a.to_string());
            Some(((parent, f.tag?), (p.clone(), j.clone())))
        })
        .collect()
}

impl Report {
    /// `3.7.0 -> 3.8.0: 4 APIs added, 12 versions added, 0 removed, 0 breaking`. Versions are
    /// counted per schema, responses left out (they mirror their requests' versions).
    pub fn summary(&self) -> String {
        let counted = |f: fn(&SchemaChanges) -> usize| -> usize {
            self.changed.iter().filter(|c| !c.name.ends_with("Response")).map(f).sum()
        };
        format!(
            "{} -> {}: {} APIs added, {} versions added, {} removed, {} breaking",
            self.old,
            self.new,
            self.apis_added.len(),
            counted(|c| c.versions_added.len()),
            counted(|c| c.versions_removed.len()),
            self.breaking.len()
        )
    }

    /// The report as text: what changed, the breaking changes, the summary last.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for (key, name) in &self.apis_added {
            let _ = writeln!(s, "API added: {name} (key {key})");
        }
        for (key, name) in &self.apis_removed {
            let retired = self
                .changed
                .iter()
                .any(|c| c.name == format!("{name}Request") && c.stability.iter().any(|t| t.starts_with("retired")));
            let how = if retired { "retired" } else { "removed" };
            let _ = writeln!(s, "API {how}: {name} (key {key})");
        }
        for f in &self.schemas_added {
            let _ = writeln!(s, "schema added: {f}");
        }
        for f in &self.schemas_removed {
            let _ = writeln!(s, "schema removed: {f}");
        }
        for c in &self.changed {
            let f = &c.file;
            if !c.versions_added.is_empty() {
                let _ = writeln!(s, "{f}: versions added {}", ranges(&c.versions_added));
            }
            if !c.versions_removed.is_empty() {
                let _ = writeln!(s, "{f}: versions removed {}", ranges(&c.versions_removed));
            }
            if !c.newly_deprecated.is_empty() {
                let _ = writeln!(s, "{f}: newly deprecated {}", ranges(&c.newly_deprecated));
            }
            for t in &c.stability {
                let _ = writeln!(s, "{f}: {t}");
            }
            for (p, since) in &c.fields_added {
                let _ = writeln!(s, "{f}: field added {p} ({since})");
            }
            for p in &c.fields_removed {
                let _ = writeln!(s, "{f}: field removed {p}");
            }
            for (p, tag, v) in &c.tags_added {
                let _ = writeln!(s, "{f}: tagged field {p} (tag {tag}) added to shipped versions {v} (compatible)");
            }
            if !c.unstable_changed.is_empty() {
                let v = ranges(&c.unstable_changed);
                let _ = writeln!(s, "{f}: version {v} changed layout while unstable (not shipped)");
            }
            for (o, n, v) in &c.renames {
                let _ = writeln!(s, "{f}: renamed {o} -> {n} (same layout, versions {v})");
            }
            for (p, o, n) in &c.about_changes {
                let _ = writeln!(s, "{f}: about of {p}: {o:?} -> {n:?}");
            }
        }
        for b in &self.breaking {
            let versions = if b.versions.is_empty() { String::new() } else { format!(" at versions {}", b.versions) };
            let field = if b.field.is_empty() { String::new() } else { format!(" ({})", b.field) };
            let _ = writeln!(
                s,
                "BREAKING ({}) {} {}{field}{versions}: {}: {} -> {}",
                b.kind, b.file, b.json_path, b.what, b.old, b.new
            );
        }
        s.push_str(&self.summary());
        s.push('\n');
        s
    }
}
