//! Apache Kafka's messages as the `kwire` crates ship them. The package of `kwire` and of each
//! of its parts carries, in [`BUNDLED_FOLDER`], the schemas of [`DEFAULT_KAFKA_RELEASE`] it
//! generates from, with Kafka's LICENSE and NOTICE: `scripts/kafka-release` takes them from
//! Kafka's kafka-clients jar (nothing taken from a jar is committed), and `cargo package` packs
//! them. A program depending on `kwire` from a registry so builds with cargo alone: no JVM, no
//! Maven, no network beyond the registry.
//!
//! The messages are two crates, split by the first letter of each schema's name, so that rustc
//! compiles them side by side ([`MESSAGE_PARTS`]); `kwire` re-exports them beside what spans them.

use std::path::{Path, PathBuf};

use crate::{locate, Config, MessagePart, DEFAULT_KAFKA_RELEASE};

/// The folder of a `kwire` package that holds the schemas it generates from.
pub const BUNDLED_FOLDER: &str = "kafka-schemas";

/// The crates the messages are generated into. Each name ends in the first and last letter of
/// the schemas it holds (`kwire-messages-a-e`: `AddOffsetsToTxnRequest` to `EndTxnResponse`), which
/// is all [`message_part`] and `scripts/kafka-release` read: requests and their responses share a
/// name, so an API's pair always lands in one part.
pub const MESSAGE_PARTS: [&str; 2] = ["kwire-messages-a-e", "kwire-messages-f-z"];

/// The part built as `package` (one of [`MESSAGE_PARTS`]), named as the crate over the parts
/// names it (`::kwire_messages_a_e`).
pub fn message_part(package: &str) -> Option<MessagePart> {
    if !MESSAGE_PARTS.contains(&package) {
        return None;
    }
    let letters = package.strip_prefix("kwire-messages-")?.as_bytes();
    match letters {
        [first, b'-', last] if first <= last => {
            Some(MessagePart::new(format!("::{}", package.replace('-', "_")), char::from(*first)..=char::from(*last)))
        }
        _ => None,
    }
}

/// Every part, as `kwire`'s index names them.
pub fn message_parts() -> Vec<MessagePart> {
    MESSAGE_PARTS.iter().filter_map(|package| message_part(package)).collect()
}

/// Where the build script of the package in `manifest_dir` reads Kafka's schemas: the
/// `KAFKA_SCHEMAS_DIR` environment variable (another release's kafka-clients jar or schema
/// folder), else the package's own [`BUNDLED_FOLDER`], else [`DEFAULT_KAFKA_RELEASE`]'s
/// kafka-clients jar in the local Maven repository.
pub fn bundled_schemas(manifest_dir: &Path) -> Result<PathBuf, String> {
    if let Some(chosen) = locate::schemas_from_env()? {
        return Ok(chosen);
    }
    let bundled = manifest_dir.join(BUNDLED_FOLDER);
    if bundled.is_dir() {
        return Ok(bundled);
    }
    let mut tried = vec![bundled.display().to_string()];
    for jar in locate::maven_message_sources() {
        if crate::source::watched_path(&jar).is_file() {
            return Ok(jar);
        }
        tried.push(crate::source::watched_path(&jar).display().to_string());
    }
    Err(format!(
        "Apache Kafka {DEFAULT_KAFKA_RELEASE}'s message schemas were not found (tried {}). A package of this crate \
         carries them; a clone of the kwire repository gets them with `scripts/kafka-release`. Or set \
         KAFKA_SCHEMAS_DIR to a kafka-clients jar or schema folder",
        tried.join(", ")
    ))
}

/// The build script of `kwire` and of its parts: generates the package's share of Kafka's
/// messages (`CARGO_PKG_NAME` says which) into `OUT_DIR/kwire`, from [`bundled_schemas`], with
/// JSON converters when the package's `json` feature is on.
pub fn build_bundled_messages() -> Result<(), String> {
    for var in ["KAFKA_SCHEMAS_DIR", "HOME"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR is not set")?;
    let package = std::env::var("CARGO_PKG_NAME").map_err(|_| "CARGO_PKG_NAME is not set")?;
    let schemas = bundled_schemas(Path::new(&manifest))?;
    let mut config = Config::new();
    config.for_build_script().schema_dir(&schemas).json(std::env::var_os("CARGO_FEATURE_JSON").is_some());
    match message_part(&package) {
        Some(part) => config.part(part),
        None => config.over_parts(message_parts()),
    };
    config.write().map_err(|e| format!("generating Kafka's messages from {}: {e}", schemas.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_holds_the_letters_its_name_ends_in() {
        let part = message_part("kwire-messages-a-e").unwrap();
        assert_eq!((part.crate_path.as_str(), part.letters.clone()), ("::kwire_messages_a_e", 'a'..='e'));
        assert!(part.holds("EndTxnRequest") && !part.holds("FetchRequest"));
        assert_eq!(message_parts().len(), MESSAGE_PARTS.len());
        assert!(message_part("kwire").is_none());
    }

    #[test]
    fn the_parts_cover_every_letter_once() {
        for letter in 'a'..='z' {
            let holders = message_parts().iter().filter(|p| p.letters.contains(&letter)).count();
            assert_eq!(holders, 1, "{letter}");
        }
    }
}
