//! Generates every message of Apache Kafka's schemas into `OUT_DIR`, by default those of
//! `kafka-clients-4.4.0.jar` read in place (see README: "Where Kafka's schemas come from"), and
//! the README's code samples for this package's doc tests.

/// The README sections whose samples the crates depending on this package compile:
/// `kafka-wire-connection` and `kafka-wire-fake` (see `modern/readme_section.rs`).
const OTHER_CRATES_SECTIONS: [&str; 2] = ["## Talking to a broker", "## Testing against an in-process Kafka"];

fn main() {
    readme_without_other_crates_sections();
    for var in ["KAFKA_SCHEMAS_DIR", "KAFKA_JARS_DIR", "HOME"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let schemas = kafka_wire_codegen::locate_kafka_schemas(&root).unwrap_or_else(|e| panic!("{e}"));
    let json = std::env::var_os("CARGO_FEATURE_JSON").is_some();
    if let Err(e) = kafka_wire_codegen::Config::new().for_build_script().schema_dir(&schemas).json(json).write() {
        panic!("generating Kafka's messages from {}: {e}", schemas.display());
    }
}

/// `OUT_DIR/README.md`: the README without the sections other crates compile.
fn readme_without_other_crates_sections() {
    println!("cargo:rerun-if-changed=README.md");
    let readme = std::fs::read_to_string("README.md").expect("README.md readable");
    let mut out = String::new();
    let mut skipping = false;
    for line in readme.lines() {
        if line.starts_with("## ") {
            skipping = OTHER_CRATES_SECTIONS.contains(&line);
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    let dir = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(dir.join("README.md"), out).expect("OUT_DIR writable");
}
