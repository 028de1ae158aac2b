//! The crates Kafka's messages are generated into, and how every build script of the root
//! package and its parts generates: the same schemas, each its own share. Two crates, so that
//! rustc's front end runs on both cores (README, "Where Kafka's schemas come from").

use kafka_wire_codegen::{Config, MessagePart};

/// Each part's package and the first letters of the schemas it holds. Requests and their
/// responses share a name, so an API's pair always lands in one part.
const PARTS: [(&str, char, char); 2] = [("kafka-wire-messages-a-e", 'a', 'e'), ("kafka-wire-messages-f-z", 'f', 'z')];

/// Every part, as the root package's index names them.
pub fn all() -> Vec<MessagePart> {
    PARTS
        .iter()
        .map(|&(package, first, last)| MessagePart::new(format!("::{}", package.replace('-', "_")), first..=last))
        .collect()
}

/// The part built as `package`.
#[allow(dead_code)] // the root package's build script needs only `all`
pub fn named(package: &str) -> MessagePart {
    let index = PARTS.iter().position(|(p, ..)| *p == package);
    all().swap_remove(index.unwrap_or_else(|| panic!("{package} is not a message part")))
}

/// Generates Apache Kafka's messages into `OUT_DIR/kafka-wire`, by default those of
/// `kafka-clients-4.4.0.jar` read in place (README: "Where Kafka's schemas come from"), with
/// `share` choosing this crate's part of them. `workspace_root` is where `target/kafka` is.
pub fn generate(workspace_root: &std::path::Path, share: impl FnOnce(&mut Config) -> &mut Config) {
    for var in ["KAFKA_SCHEMAS_DIR", "KAFKA_JARS_DIR", "HOME"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let schemas = kafka_wire_codegen::locate_kafka_schemas(workspace_root).unwrap_or_else(|e| panic!("{e}"));
    let json = std::env::var_os("CARGO_FEATURE_JSON").is_some();
    let mut config = Config::new();
    config.for_build_script().schema_dir(&schemas).json(json);
    if let Err(e) = share(&mut config).write() {
        panic!("generating Kafka's messages from {}: {e}", schemas.display());
    }
}
