//! Generates, into `OUT_DIR`, Kafka's generator test schemas, its internal record schemas and
//! earlier releases' messages, all read in place from Kafka's jars in `target/kafka/`
//! (`scripts/kafka-release`), plus a table of every schema for the round-trip tests.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use kwire_codegen::{emit::names, load_schemas, source, Config, IndexLayout};

/// The set generated with `Config::plain_types(true)`.
const PLAIN_TYPES_SET: &str = "release_3_7_2";

/// Earlier releases whose kafka-clients jars are generated, compiled and round-tripped too:
/// before flexible versions were common (2.4), the last ZooKeeper-era 2.x (2.8), KRaft's
/// first production release (3.3), and 3.7.
const EARLIER_RELEASES: [&str; 4] = ["2.4.1", "2.8.2", "3.3.2", "3.7.2"];

fn main() {
    println!("cargo:rerun-if-env-changed=KAFKA_SCHEMAS_DIR");
    println!("cargo:rerun-if-env-changed=KAFKA_JARS_DIR");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("tests/ lives in the workspace").to_path_buf();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let message_dir = kwire_codegen::locate_kafka_schemas(&workspace).unwrap_or_else(|e| panic!("{e}"));
    let jars = kwire_codegen::kafka_jars_dir(&workspace);

    // (module name, schema source, Rust path of the generated messages)
    let mut sets: Vec<(String, PathBuf, String)> =
        vec![("message".into(), message_dir.clone(), "::kwire::messages".into())];
    let mut generated = String::new();
    // The project's own schemas are generated here again, with JSON converters, which the
    // checked-in `kwire07-admin-messages` (kept lean) does not carry; `generated_is_fresh`
    // checks that crate against the same emitter.
    let mut dirs: Vec<(String, PathBuf)> = vec![("project".to_string(), workspace.join("schemas"))];
    for (family, source) in kwire_codegen::kafka_schema_sets(&workspace) {
        dirs.extend(present(source).map(|source| (family.to_string(), source)));
    }
    for earlier in EARLIER_RELEASES {
        let source = kwire_codegen::MESSAGES.source(&jars, earlier);
        dirs.extend(present(source).map(|source| (format!("release_{}", earlier.replace('.', "_")), source)));
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

/// `source` (a folder inside a jar of `scripts/kafka-release`), if its jar is there. A missing
/// jar fails the build under CI and leaves its set out, with a warning, elsewhere.
fn present(source: PathBuf) -> Option<PathBuf> {
    let jar = source::watched_path(&source);
    println!("cargo:rerun-if-changed={}", jar.display());
    if jar.is_file() {
        return Some(source);
    }
    let message = format!("{} is missing: run scripts/kafka-release and scripts/kafka-release --minors", jar.display());
    assert!(std::env::var_os("CI").is_none(), "{message}");
    println!("cargo:warning={message}; its schemas are left out of the round-trips");
    None
}

/// The APIs Kafka 4.0 retired, as its schema folder keeps them: stubs with `validVersions: "none"`.
const RETIRED_IN_4_0: [(i16, &str); 4] =
    [(4, "LeaderAndIsr"), (5, "StopReplica"), (6, "UpdateMetadata"), (7, "ControlledShutdown")];

/// A small schema set shaped like Kafka 4.x's: the headers and ApiVersions from the corpus, plus
/// a stub request and response for each API that 4.0 retired (written here, in OUT_DIR).
fn retired_stub_set(message_dir: &Path, out: &Path) -> PathBuf {
    let dir = out.join("retired-4x-schemas");
    std::fs::create_dir_all(&dir).unwrap();
    let kept = ["RequestHeader.json", "ResponseHeader.json", "ApiVersionsRequest.json", "ApiVersionsResponse.json"];
    let files = source::read_schemas(message_dir).unwrap_or_else(|e| panic!("{e}"));
    for file in files.iter().filter(|f| kept.contains(&f.name.as_str())) {
        std::fs::write(dir.join(&file.name), &file.text).unwrap();
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
        let loaded = load_schemas(&[dir], false).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for m in loaded.messages {
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
