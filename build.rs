//! Generates every message of Kafka's schema corpus into `OUT_DIR` (see README: "Where Kafka's schemas come from").

fn main() {
    println!("cargo:rerun-if-env-changed=KAFKA_SCHEMAS_DIR");
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let schemas = kafka_wire_codegen::locate_kafka_schemas(&root).unwrap_or_else(|e| panic!("{e}"));
    let json = std::env::var_os("CARGO_FEATURE_JSON").is_some();
    if let Err(e) = kafka_wire_codegen::Config::new().for_build_script().schema_dir(&schemas).json(json).write() {
        panic!("generating Kafka's messages from {}: {e}", schemas.display());
    }
}
