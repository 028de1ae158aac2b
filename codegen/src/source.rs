//! Where schemas are read from: a folder of `*.json` files, or a jar as Apache Kafka ships them
//! (`kafka-clients-X.jar` carries its schemas as `common/message/*.json`, other jars under
//! `common/metadata/` and the like). A jar is read in place, nothing unpacked on disk; name a
//! folder inside it with `JAR!/FOLDER` (`kafka-metadata-4.4.0.jar!/common/metadata`), else every
//! `*.json` entry under `common/` is read.

use std::path::{Path, PathBuf};

/// One schema file's text, and how diagnostics name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaFile {
    /// The bare file name (`FetchRequest.json`): what generated code and headers name.
    pub name: String,
    /// Where it came from, for diagnostics: the bare name for a folder's file (as before),
    /// `kafka-clients-4.4.0.jar!/common/message/FetchRequest.json` for a jar's entry.
    pub shown: String,
    pub text: String,
}

/// The most one schema entry may decompress to: Kafka's largest schema is about 20 KiB, so a
/// larger entry is not a schema (or is a decompression bomb) and is refused before it is read.
pub const MAX_SCHEMA_BYTES: u64 = 4 * 1024 * 1024;

/// The most all schemas of one jar may decompress to together.
pub const MAX_JAR_SCHEMA_BYTES: u64 = 64 * 1024 * 1024;

/// A jar (or zip) path, and the folder inside it to read, if one was named with `!/`.
fn archive_parts(source: &Path) -> Option<(PathBuf, Option<String>)> {
    let text = source.to_str()?;
    if let Some((jar, inner)) = text.split_once("!/") {
        return Some((PathBuf::from(jar), Some(inner.trim_end_matches('/').to_string())));
    }
    let ext = source.extension()?.to_str()?.to_ascii_lowercase();
    (matches!(ext.as_str(), "jar" | "zip") && !source.is_dir()).then(|| (source.to_path_buf(), None))
}

/// The file or folder to watch for changes: the jar itself for a folder inside one.
pub fn watched_path(source: &Path) -> PathBuf {
    archive_parts(source).map_or_else(|| source.to_path_buf(), |(jar, _)| jar)
}

/// Whether `source` names a jar (or a folder inside one) rather than a folder.
pub fn is_archive(source: &Path) -> bool {
    archive_parts(source).is_some()
}

/// Every schema file of a folder or jar, sorted by name. The error says what is wrong with the
/// source itself (missing, unreadable, not a jar, no schema in it), naming it as given.
pub fn read_schemas(source: &Path) -> Result<Vec<SchemaFile>, String> {
    let mut files = match archive_parts(source) {
        Some((jar, inner)) => read_jar(&jar, inner.as_deref())?,
        None => read_folder(source)?,
    };
    if files.is_empty() {
        return Err(format!("no schemas found in {}", source.display()));
    }
    files.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.shown.cmp(&b.shown)));
    Ok(files)
}

fn read_folder(dir: &Path) -> Result<Vec<SchemaFile>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("no such folder: {}", dir.display()),
        _ => format!("cannot list the schema folder {}: {e}", dir.display()),
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list the schema folder {}: {e}", dir.display()))?;
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if !name.ends_with(".json") || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{name}: cannot read: {e}"))?;
        files.push(SchemaFile { name: name.to_owned(), shown: name.to_owned(), text });
    }
    Ok(files)
}

#[cfg(feature = "jar")]
fn read_jar(jar: &Path, inner: Option<&str>) -> Result<Vec<SchemaFile>, String> {
    use std::io::Read as _;

    let shown_jar = jar.display().to_string();
    let data = std::fs::read(jar).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("no such file: {shown_jar}"),
        _ => format!("cannot open {shown_jar}: {e}"),
    })?;
    let archive =
        rawzip::ZipArchive::from_slice(&data).map_err(|e| format!("{shown_jar} is not a readable jar: {e}"))?;
    let wanted = |name: &str| match inner {
        Some(folder) => {
            name.strip_prefix(folder).and_then(|rest| rest.strip_prefix('/')).is_some_and(|f| !f.contains('/'))
        }
        None => name.starts_with("common/"),
    };
    let mut files = Vec::new();
    let mut total = 0u64;
    let mut entries = archive.entries();
    for i in 0.. {
        let entry = match entries.next_entry() {
            Ok(Some(entry)) => entry,
            Ok(None) => break,
            Err(e) => return Err(format!("{shown_jar}: entry {i}: {e}")),
        };
        let Ok(path) = std::str::from_utf8(entry.file_path().as_bytes()) else { continue };
        if entry.is_dir() || !path.ends_with(".json") || !wanted(path) {
            continue;
        }
        let shown = format!("{shown_jar}!/{path}");
        let local = archive.get_entry(entry.wayfinder()).map_err(|e| format!("{shown}: {e}"))?;
        let raw: Box<dyn std::io::Read> = match entry.compression_method() {
            rawzip::CompressionMethod::STORE => Box::new(local.data()),
            rawzip::CompressionMethod::DEFLATE => Box::new(flate2::bufread::DeflateDecoder::new(local.data())),
            other => return Err(format!("{shown}: compression method {other:?} is not one a jar uses")),
        };
        // The entry's declared size is not trusted: read at most one byte past the limit, and the
        // CRC and size are checked at the end.
        let mut bytes = Vec::new();
        local
            .verifying_reader(raw)
            .take(MAX_SCHEMA_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{shown}: cannot read: {e}"))?;
        if bytes.len() as u64 > MAX_SCHEMA_BYTES {
            return Err(format!(
                "{shown} decompresses to more than {MAX_SCHEMA_BYTES} bytes, which no schema does; refused"
            ));
        }
        total += bytes.len() as u64;
        if total > MAX_JAR_SCHEMA_BYTES {
            return Err(format!(
                "{shown_jar}: its schemas decompress to more than {MAX_JAR_SCHEMA_BYTES} bytes; refused"
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| format!("{shown}: not UTF-8 text"))?;
        let name = path.rsplit('/').next().unwrap_or(path).to_owned();
        files.push(SchemaFile { name, shown, text });
    }
    Ok(files)
}

#[cfg(not(feature = "jar"))]
fn read_jar(jar: &Path, _inner: Option<&str>) -> Result<Vec<SchemaFile>, String> {
    Err(format!(
        "{}: reading schemas from a jar needs kwire-codegen's `jar` feature (add `features = [\"jar\"]`)",
        jar.display()
    ))
}
