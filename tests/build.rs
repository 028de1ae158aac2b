//! Generates Kafka's generator test schemas (`test/`) and internal record schemas
//! (`extra/<component>/`) into `OUT_DIR`, plus a table of every schema for the round-trip tests.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use kafka_wire_codegen::{emit::names, load_dir, Config, IndexLayout};

/// The set generated with `Config::plain_types(true)`.
const PLAIN_TYPES_SET: &str = "release_3_7_0";

fn main() {
    println!("cargo:rerun-if-env-changed=KAFKA_SCHEMAS_DIR");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("tests/ lives in the workspace").to_path_buf();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let message_dir = kafka_wire_codegen::locate_kafka_schemas(&workspace).unwrap_or_else(|e| panic!("{e}"));
    let corpus = message_dir.parent().expect("message/ has a parent").to_path_buf();

    // (module name, schema folder, Rust path of the generated messages)
    let mut sets: Vec<(String, PathBuf, String)> =
        vec![("message".into(), message_dir.clone(), "::kafka_wire::messages".into())];
    let mut generated = String::new();
    let mut extra_dirs: Vec<PathBuf> = Vec::new();
    if corpus.join("test").is_dir() {
        extra_dirs.push(corpus.join("test"));
    }
    if let Ok(entries) = std::fs::read_dir(corpus.join("extra")) {
        let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect();
        dirs.sort();
        extra_dirs.extend(dirs);
    }
    // The project's own schemas are generated here again, with JSON converters, which the
    // checked-in `kafka-wire-generated` (kept lean) does not carry; `generated_is_fresh`
    // checks that crate against the same emitter.
    let mut dirs: Vec<(String, PathBuf)> = vec![("project".to_string(), workspace.join("schemas"))];
    dirs.extend(
        extra_dirs
            .into_iter()
            .map(|dir| (names::module_name(&dir.file_name().unwrap().to_string_lossy().replace('-', "_")), dir)),
    );
    // Earlier Kafka releases' message folders, each generated, compiled and round-tripped.
    for (release, dir) in history_dirs(&corpus) {
        dirs.push((format!("release_{}", release.replace('.', "_")), dir));
    }
    dirs.push(("retired_4x".to_string(), retired_stub_set(&message_dir, &out)));
    for (module, dir) in dirs {
        let subdir = format!("corpus-{module}");
        Config::new()
            .schema_dir(&dir)
            .out_dir(out.join(&subdir))
            .layout(IndexLayout::IncludeFromOutDir { subdir: subdir.clone() })
            .regenerate_command("tests/build.rs at build time")
            // One release is generated with plain types, so that mode compiles and round-trips.
            .plain_types(module == PLAIN_TYPES_SET)
            .json(true)
            .write()
            .unwrap_or_else(|e| panic!("generating {}: {e}", dir.display()));
        println!("cargo:rerun-if-changed={}", dir.display());
        writeln!(
            generated,
            "#[allow(missing_docs)] pub mod {module} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{subdir}/mod.rs\")); }}"
        )
        .unwrap();
        sets.push((module.clone(), dir, format!("crate::corpus::{module}")));
    }
    std::fs::write(out.join("corpus.rs"), generated).unwrap();
    std::fs::write(out.join("table.rs"), table(&sets)).unwrap();
}

/// `(release, message folder)` of each Kafka release under `kafka-schemas-history/` beside the
/// corpus (or `$KAFKA_SCHEMAS_HISTORY_DIR`). Missing, it fails under CI and is skipped, with a
/// warning, elsewhere.
fn history_dirs(corpus: &Path) -> Vec<(String, PathBuf)> {
    println!("cargo:rerun-if-env-changed=KAFKA_SCHEMAS_HISTORY_DIR");
    let root = match std::env::var_os("KAFKA_SCHEMAS_HISTORY_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => corpus.parent().map(|p| p.join("kafka-schemas-history")).unwrap_or_default(),
    };
    let Ok(entries) = std::fs::read_dir(&root) else {
        if std::env::var_os("CI").is_some() {
            panic!("Kafka's release schemas are missing: {} (set KAFKA_SCHEMAS_HISTORY_DIR)", root.display());
        }
        println!("cargo:warning=Kafka's release schemas not found at {}; release round-trips skipped", root.display());
        return Vec::new();
    };
    let mut releases: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("message").is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path().join("message")))
        .collect();
    releases.sort();
    println!("cargo:rerun-if-changed={}", root.display());
    releases
}

/// The APIs Kafka 4.0 retired, as its schema folder keeps them: stubs with `validVersions: "none"`.
const RETIRED_IN_4_0: [(i16, &str); 4] =
    [(4, "LeaderAndIsr"), (5, "StopReplica"), (6, "UpdateMetadata"), (7, "ControlledShutdown")];

/// A small schema set shaped like Kafka 4.x's: the headers and ApiVersions from the corpus, plus
/// a stub request and response for each API that 4.0 retired (written here, in OUT_DIR).
fn retired_stub_set(message_dir: &Path, out: &Path) -> PathBuf {
    let dir = out.join("retired-4x-schemas");
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["RequestHeader.json", "ResponseHeader.json", "ApiVersionsRequest.json", "ApiVersionsResponse.json"] {
        std::fs::copy(message_dir.join(file), dir.join(file)).unwrap();
    }
    for (key, api) in RETIRED_IN_4_0 {
        for kind in ["request", "response"] {
            let name = format!("{api}{}", if kind == "request" { "Request" } else { "Response" });
            let text = format!(
                "{{\n  \"apiKey\": {key},\n  \"type\": \"{kind}\",\n  \"name\": \"{name}\",\n  // Removed in Apache Kafka 4.0.\n  \"validVersions\": \"none\"\n}}\n"
            );
            std::fs::write(dir.join(format!("{name}.json")), text).unwrap();
        }
    }
    dir
}

/// `pub const SCHEMAS: &[Entry]` with a monomorphised round-trip function per schema.
fn table(sets: &[(String, PathBuf, String)]) -> String {
    let mut s = String::from("pub const SCHEMAS: &[crate::Entry] = &[\n");
    for (set, dir, path) in sets {
        let messages = load_dir(Path::new(dir)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for m in messages {
            let module = names::module_name(&m.name);
            let ty = names::type_ident(&m.name);
            writeln!(
                s,
                "    crate::Entry {{ set: {set:?}, dir: {dir:?}, file: {file:?}, name: {name:?}, ops: crate::ops::<{path}::{module}::{ty}>() }},",
                dir = dir.display().to_string(),
                file = m.file,
                name = m.name,
            )
            .unwrap();
        }
    }
    s.push_str("];\n");
    s
}
