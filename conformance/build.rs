//! Generates, into `OUT_DIR`, the code for every schema family of `releases.tsv` straight from
//! the release's jars in `target/kafka/<release>/` (`scripts/kafka-release`), with JSON
//! converters, and a table of every schema for the differential against Kafka's classes.
//!
//! Jars that are missing are an error under CI; elsewhere their families are left out with a
//! warning, and the differential reports what it skipped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use kwire_codegen::{emit::names, load_schemas, source, Config, IndexLayout};

fn main() {
    println!("cargo:rerun-if-env-changed=KAFKA_JARS_DIR");
    println!("cargo:rerun-if-changed=releases.tsv");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let jars = kwire_codegen::kafka_jars_dir(manifest.parent().expect("conformance/ is in the workspace"));
    let releases = std::fs::read_to_string(manifest.join("releases.tsv")).expect("releases.tsv readable");

    let (mut modules, mut table) = (String::new(), String::from("pub const SCHEMAS: &[crate::Entry] = &[\n"));
    for row in releases.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let cols: Vec<&str> = row.split('\t').collect();
        let [release, _profiles, family] = cols[..] else { panic!("releases.tsv: bad row {row:?}") };
        let schemas = kwire_codegen::schema_family(family)
            .unwrap_or_else(|| panic!("releases.tsv: unknown schema family {family:?}"));
        let source_path = schemas.source(&jars, release);
        let jar = source::watched_path(&source_path);
        println!("cargo:rerun-if-changed={}", jar.display());
        if !jar.is_file() {
            let message = format!(
                "{} is missing: run scripts/kafka-release (Kafka {release} {family} left out of the differential)",
                jar.display()
            );
            assert!(std::env::var_os("CI").is_none(), "{message}");
            println!("cargo:warning={message}");
            continue;
        }
        let module = format!("kafka_{}_{family}", release.replace('.', "_"));
        let subdir = format!("gen-{module}");
        Config::new()
            .schema_dir(&source_path)
            .out_dir(out.join(&subdir))
            .layout(IndexLayout::IncludeFromOutDir { subdir: subdir.clone() })
            .regenerate_command("conformance/build.rs at build time")
            .json(true)
            .write()
            .unwrap_or_else(|e| panic!("generating {}: {e}", source_path.display()));
        writeln!(
            modules,
            "#[allow(missing_docs)] pub mod {module} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{subdir}/mod.rs\")); }}"
        )
        .unwrap();
        write_entries(&mut table, release, family, &source_path, &module);
    }
    table.push_str("];\n");
    std::fs::write(out.join("generated.rs"), modules).unwrap();
    std::fs::write(out.join("table.rs"), table).unwrap();
}

/// One table row per live schema of the family, with its monomorphised case runner.
fn write_entries(table: &mut String, release: &str, family: &str, source_path: &Path, module: &str) {
    let loaded = load_schemas(&[source_path], false).unwrap_or_else(|e| panic!("{}: {e}", source_path.display()));
    for m in loaded.messages {
        writeln!(
            table,
            "    crate::Entry {{ release: {release:?}, family: {family:?}, source: {source:?}, name: {name:?}, run: crate::run::<crate::generated::{module}::{file}::{ty}> }},",
            source = source_path.display().to_string(),
            name = m.name,
            file = names::module_name(&m.name),
            ty = names::type_ident(&m.name),
        )
        .unwrap();
    }
}
