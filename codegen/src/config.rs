//! The generator's builder, in the spirit of `prost_build::Config`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;

use crate::emit::{emit_index, emit_message, names::module_name, IndexLayout};
use crate::format::format_file;
use crate::ir::{Message, MessageKind};
use crate::{load_dir, Error};

/// Name of the index file in the output folder.
pub const INDEX_FILE: &str = "mod.rs";

/// What to generate and where. Build with [`Config::new`] and the chained setters.
#[derive(Debug, Clone)]
pub struct Config {
    schema_dirs: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    runtime_path: String,
    apis: Option<BTreeSet<String>>,
    layout: IndexLayout,
    regenerate: String,
    build_script: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            schema_dirs: Vec::new(),
            out_dir: None,
            runtime_path: "::kafka_wire_runtime".to_string(),
            apis: None,
            layout: IndexLayout::Modules,
            regenerate: "cargo run -p kafka-wire-codegen -- generate".to_string(),
            build_script: false,
        }
    }
}

/// The generated files, in memory: relative path → content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub files: BTreeMap<String, String>,
    /// Schemas generated.
    pub messages: usize,
    /// Request/response pairs with an api key.
    pub apis: usize,
    /// Versions covered, summed over schemas.
    pub versions: usize,
}

impl Generated {
    /// One line: how many files, schemas, APIs and versions.
    pub fn summary(&self) -> String {
        format!(
            "{} files: {} schemas, {} APIs, {} schema versions",
            self.files.len(),
            self.messages,
            self.apis,
            self.versions
        )
    }
}

/// What writing changed on disk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteReport {
    pub written: Vec<String>,
    pub unchanged: Vec<String>,
    pub removed: Vec<String>,
}

impl Config {
    /// A configuration with no schema folders, runtime path `::kafka_wire_runtime`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a folder of schema files (`*.json`, read non-recursively).
    pub fn schema_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.schema_dirs.push(dir.into());
        self
    }

    /// Where `write` puts the files (default: `$OUT_DIR/kafka-wire`).
    pub fn out_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The path generated code uses for the runtime crate (default `::kafka_wire_runtime`).
    pub fn runtime_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.runtime_path = path.into();
        self
    }

    /// Generate only these APIs (by name, e.g. `Fetch`, or numeric key); headers and
    /// schemas without an api key are always kept.
    pub fn include_apis<I, S>(&mut self, apis: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.apis.get_or_insert_with(BTreeSet::new).extend(apis.into_iter().map(Into::into));
        self
    }

    /// How the index mounts the per-schema files.
    pub fn layout(&mut self, layout: IndexLayout) -> &mut Self {
        self.layout = layout;
        self
    }

    /// The command named in each file's header as the way to regenerate it.
    pub fn regenerate_command(&mut self, command: impl Into<String>) -> &mut Self {
        self.regenerate = command.into();
        self
    }

    /// Configures for a build script: output in `$OUT_DIR/kafka-wire`, mounted with `include!`,
    /// and `cargo:rerun-if-changed` printed for every schema folder.
    pub fn for_build_script(&mut self) -> &mut Self {
        self.build_script = true;
        self.layout = IndexLayout::IncludeFromOutDir { subdir: "kafka-wire".to_string() };
        self.regenerate = "build.rs at build time".to_string();
        self
    }

    fn runtime_tokens(&self) -> Result<TokenStream, Error> {
        let path = format!("{}::__codegen", self.runtime_path.trim_end_matches("::"));
        path.parse::<TokenStream>().map_err(|e| Error::Format {
            file: "runtime path".to_string(),
            message: format!("`{}` is not a Rust path: {e}", self.runtime_path),
        })
    }

    fn wanted(&self, m: &Message) -> bool {
        let Some(apis) = &self.apis else { return true };
        if !matches!(m.kind, MessageKind::Request | MessageKind::Response) {
            return true;
        }
        let base = m.name.strip_suffix("Request").or_else(|| m.name.strip_suffix("Response")).unwrap_or(&m.name);
        apis.contains(base) || m.api_key.is_some_and(|k| apis.contains(&k.to_string()))
    }

    /// Loads every schema folder.
    pub fn load(&self) -> Result<Vec<Message>, Error> {
        if self.schema_dirs.is_empty() {
            return Err(Error::NoSchemas("(no schema folder configured)".to_string()));
        }
        let mut all = Vec::new();
        let mut errors = Vec::new();
        for dir in &self.schema_dirs {
            match load_dir(dir) {
                Ok(msgs) if msgs.is_empty() => return Err(Error::NoSchemas(dir.display().to_string())),
                Ok(msgs) => all.extend(msgs),
                Err(e) => errors.push(e),
            }
        }
        if let Some(first) = errors.into_iter().reduce(|mut a, b| {
            a.0.extend(b.0);
            a
        }) {
            return Err(Error::Schema(first));
        }
        all.retain(|m| self.wanted(m));
        all.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(all)
    }

    /// Generates every file in memory.
    pub fn generate(&self) -> Result<Generated, Error> {
        let messages = self.load()?;
        generate_messages(&messages, &self.runtime_tokens()?, &self.layout, &self.regenerate)
    }

    fn resolved_out_dir(&self) -> Result<PathBuf, Error> {
        match &self.out_dir {
            Some(dir) => Ok(dir.clone()),
            None => std::env::var_os("OUT_DIR").map(|d| PathBuf::from(d).join("kafka-wire")).ok_or(Error::NoOutDir),
        }
    }

    /// Generates and writes the files, touching only those whose content changed and removing
    /// `.rs` files the output no longer has (the folder holds only generated files).
    pub fn write(&self) -> Result<(Generated, WriteReport), Error> {
        if self.build_script {
            for dir in &self.schema_dirs {
                println!("cargo:rerun-if-changed={}", dir.display());
            }
        }
        let generated = self.generate()?;
        let out = self.resolved_out_dir()?;
        let report = write_files(&out, &generated.files)?;
        Ok((generated, report))
    }

    /// Compares the output folder with what would be generated; the error lists the differences.
    pub fn check(&self) -> Result<Generated, Error> {
        let generated = self.generate()?;
        let out = self.resolved_out_dir()?;
        let diffs = diff_dir(&out, &generated.files)?;
        if diffs.is_empty() {
            Ok(generated)
        } else {
            Err(Error::Stale(format!(
                "{} is out of date ({} differences):\n{}\nrun `{}` to regenerate",
                out.display(),
                diffs.len(),
                diffs.join("\n"),
                self.regenerate
            )))
        }
    }
}

/// The CLI's `generate` command line that reproduces an output, named in file headers.
pub fn cli_command(schemas: &[PathBuf], out: &Path, runtime_path: &str, apis: &[String]) -> String {
    let mut cmd = String::from("cargo run -p kafka-wire-codegen -- generate");
    for dir in schemas {
        cmd.push_str(&format!(" --schemas {}", dir.display()));
    }
    cmd.push_str(&format!(" --out {}", out.display()));
    if runtime_path != "::kafka_wire_runtime" {
        cmd.push_str(&format!(" --runtime-path {runtime_path}"));
    }
    for api in apis {
        cmd.push_str(&format!(" --api {api}"));
    }
    cmd
}

/// Generates `$OUT_DIR/kafka-wire` from one schema folder: the one-line helper for `build.rs`.
/// Mount the result with `include!(concat!(env!("OUT_DIR"), "/kafka-wire/mod.rs"));`.
pub fn compile_schemas(dir: impl AsRef<Path>) -> Result<Generated, Error> {
    Config::new().for_build_script().schema_dir(dir.as_ref()).write().map(|(g, _)| g)
}

/// Renders one lowered schema as a formatted Rust file (what `generate` writes for it), with
/// the runtime at `runtime_path`. Used for snapshot tests of the emitted code.
pub fn render_message(msg: &Message, runtime_path: &str, regenerate: &str) -> Result<String, Error> {
    let config = Config { runtime_path: runtime_path.to_string(), ..Config::default() };
    let header = message_header(&msg.file, regenerate);
    format_file(&msg.file, &header, emit_message(msg, &config.runtime_tokens()?))
}

fn message_header(file: &str, regenerate: &str) -> String {
    format!("@generated by kafka-wire-codegen from {file}; do not edit.\nRegenerate: {regenerate}")
}

fn generate_messages(
    messages: &[Message],
    rt: &TokenStream,
    layout: &IndexLayout,
    regenerate: &str,
) -> Result<Generated, Error> {
    let mut files = BTreeMap::new();
    let mut versions = 0usize;
    for m in messages {
        let header =
            format!("@generated by kafka-wire-codegen from {}; do not edit.\nRegenerate: {regenerate}", m.file);
        let text = format_file(&m.file, &header, emit_message(m, rt))?;
        if files.insert(format!("{}.rs", module_name(&m.name)), text).is_some() {
            return Err(Error::NoSchemas(format!("two schemas generate {}.rs", module_name(&m.name))));
        }
        versions += (m.valid_versions.max - m.valid_versions.min) as usize + 1;
    }
    let header = format!("@generated by kafka-wire-codegen; do not edit.\nRegenerate: {regenerate}");
    files.insert(INDEX_FILE.to_string(), format_file(INDEX_FILE, &header, emit_index(messages, layout, rt))?);
    let requests: BTreeSet<i16> =
        messages.iter().filter(|m| m.kind == MessageKind::Request).filter_map(|m| m.api_key).collect();
    let apis = messages
        .iter()
        .filter(|m| m.kind == MessageKind::Response)
        .filter_map(|m| m.api_key)
        .filter(|k| requests.contains(k))
        .count();
    Ok(Generated { files, messages: messages.len(), apis, versions })
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

fn existing_rs_files(out: &Path) -> Result<BTreeSet<String>, Error> {
    let mut found = BTreeSet::new();
    if !out.exists() {
        return Ok(found);
    }
    for entry in fs::read_dir(out).map_err(io_err(out))? {
        let entry = entry.map_err(io_err(out))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") {
            found.insert(name);
        }
    }
    Ok(found)
}

fn write_files(out: &Path, files: &BTreeMap<String, String>) -> Result<WriteReport, Error> {
    fs::create_dir_all(out).map_err(io_err(out))?;
    let mut report = WriteReport::default();
    for (name, text) in files {
        let path = out.join(name);
        if fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            report.unchanged.push(name.clone());
        } else {
            fs::write(&path, text).map_err(io_err(&path))?;
            report.written.push(name.clone());
        }
    }
    for name in existing_rs_files(out)? {
        if !files.contains_key(&name) {
            let path = out.join(&name);
            fs::remove_file(&path).map_err(io_err(&path))?;
            report.removed.push(name);
        }
    }
    Ok(report)
}

/// Lines describing how `out` differs from `files`.
fn diff_dir(out: &Path, files: &BTreeMap<String, String>) -> Result<Vec<String>, Error> {
    let mut diffs = Vec::new();
    for (name, text) in files {
        match fs::read_to_string(out.join(name)) {
            Ok(existing) if existing == *text => {}
            Ok(existing) => {
                let line = existing
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .map_or_else(|| existing.lines().count().min(text.lines().count()) + 1, |i| i + 1);
                diffs.push(format!("  changed: {name} (first difference at line {line})"));
            }
            Err(_) => diffs.push(format!("  missing: {name}")),
        }
    }
    for name in existing_rs_files(out)? {
        if !files.contains_key(&name) {
            diffs.push(format!("  orphaned: {name}"));
        }
    }
    Ok(diffs)
}
