//! Finding Kafka's schema corpus, which is read in place and never copied into a repository.

use std::path::{Path, PathBuf};

/// The folder of Kafka's request/response/header schemas, searched in this order:
/// `$KAFKA_SCHEMAS_DIR` (a folder, or a Kafka jar such as `kafka-clients-4.4.0.jar`, read in
/// place by the engine's `jar` feature, the root package's `jar`); `<workspace>/schemas/kafka/` (a user's own copy, git-ignored);
/// `<workspace>/../shared/kafka-schemas/message`.
pub fn locate_kafka_schemas(workspace_root: &Path) -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    if let Some(dir) = std::env::var_os("KAFKA_SCHEMAS_DIR") {
        let dir = PathBuf::from(dir);
        if dir.is_dir() || (crate::source::is_archive(&dir) && dir.is_file()) {
            return Ok(dir);
        }
        return Err(format!("KAFKA_SCHEMAS_DIR={} is neither a folder nor a jar", dir.display()));
    }
    for candidate in [
        workspace_root.join("schemas").join("kafka"),
        workspace_root.join("..").join("shared").join("kafka-schemas").join("message"),
    ] {
        if candidate.is_dir() {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
    }
    Err(format!(
        "Kafka's message schemas were not found (tried {}). Set KAFKA_SCHEMAS_DIR to the folder \
         holding Kafka's clients/src/main/resources/common/message/*.json, or copy them into schemas/kafka/",
        tried.join(", ")
    ))
}
