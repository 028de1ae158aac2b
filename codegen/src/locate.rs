//! Finding Kafka's message schemas: by default Apache Kafka's own `kafka-clients` jar of the
//! release this project speaks, as Maven delivers it, read in place and never copied into a
//! repository.

use std::path::{Path, PathBuf};

/// The release, once, for the constants below.
macro_rules! default_release {
    () => {
        "4.4.0"
    };
}

/// The Apache Kafka release whose schemas the root package generates unless told otherwise.
pub const DEFAULT_KAFKA_RELEASE: &str = default_release!();

/// The one command that puts [`DEFAULT_KAFKA_RELEASE`]'s `kafka-clients` jar where
/// [`locate_kafka_schemas`] looks (the local Maven repository), from anywhere.
pub const FETCH_COMMAND: &str = concat!(
    "mvn -q dependency:get -Dartifact=org.apache.kafka:kafka-clients:",
    default_release!(),
    " -Dtransitive=false"
);

/// A family of Apache Kafka's schemas and the jar that carries it: `kafka-metadata-X.jar` keeps
/// the KRaft records under `common/metadata/`, and so on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaFamily {
    /// The family's name as this project's tables and modules use it (`group_coordinator`).
    pub name: &'static str,
    /// The Maven artifact (`org.apache.kafka:ARTIFACT`).
    pub artifact: &'static str,
    /// The Maven classifier, if the schemas are in a classified jar (`test`).
    pub classifier: Option<&'static str>,
    /// The folder inside the jar.
    pub folder: &'static str,
}

impl SchemaFamily {
    /// `JARS/<release>/<artifact>-<release>[-classifier].jar!/<folder>`: where
    /// `scripts/kafka-release` puts the family's jar of `release` under the jars folder `jars`.
    pub fn source(&self, jars: &Path, release: &str) -> PathBuf {
        let classifier = self.classifier.map(|c| format!("-{c}")).unwrap_or_default();
        let jar = jars.join(release).join(format!("{}-{release}{classifier}.jar", self.artifact));
        PathBuf::from(format!("{}!/{}", jar.display(), self.folder))
    }
}

/// Kafka's request, response and header schemas.
pub const MESSAGES: SchemaFamily =
    SchemaFamily { name: "message", artifact: "kafka-clients", classifier: None, folder: "common/message" };

/// Kafka's generator test schemas, in the `test` classifier of kafka-clients.
pub const TEST_SCHEMAS: SchemaFamily =
    SchemaFamily { name: "test", artifact: "kafka-clients", classifier: Some("test"), folder: "common/message" };

/// The newest release whose `test` jar Maven Central serves.
pub const TEST_SCHEMAS_RELEASE: &str = "4.3.1";

/// Kafka's internal record schemas (KRaft, the coordinators, storage, Streams), one jar each.
pub const INTERNAL_FAMILIES: [SchemaFamily; 7] = [
    family("group_coordinator", "kafka-group-coordinator", "common/message"),
    family("metadata", "kafka-metadata", "common/metadata"),
    family("raft", "kafka-raft", "common/message"),
    family("share_coordinator", "kafka-share-coordinator", "common/message"),
    family("storage", "kafka-storage", "message"),
    family("streams", "kafka-streams", "common/message"),
    family("transaction_coordinator", "kafka-transaction-coordinator", "common/message"),
];

const fn family(name: &'static str, artifact: &'static str, folder: &'static str) -> SchemaFamily {
    SchemaFamily { name, artifact, classifier: None, folder }
}

/// Every family by its name: [`MESSAGES`], [`TEST_SCHEMAS`] and the [`INTERNAL_FAMILIES`].
pub fn schema_family(name: &str) -> Option<SchemaFamily> {
    [MESSAGES, TEST_SCHEMAS].into_iter().chain(INTERNAL_FAMILIES).find(|f| f.name == name)
}

/// The folder `scripts/kafka-release` fills with Kafka's jars, one subfolder per release:
/// `$KAFKA_JARS_DIR`, else `<workspace>/target/kafka`.
pub fn kafka_jars_dir(workspace_root: &Path) -> PathBuf {
    std::env::var_os("KAFKA_JARS_DIR").map_or_else(|| workspace_root.join("target").join("kafka"), PathBuf::from)
}

/// Every schema set of Kafka this workspace generates beside the messages: the generator test
/// schemas ([`TEST_SCHEMAS_RELEASE`]) and the default release's internal families, as
/// `(family name, JAR!/FOLDER)`. The jars may be missing: the caller says what that means.
pub fn kafka_schema_sets(workspace_root: &Path) -> Vec<(&'static str, PathBuf)> {
    let jars = kafka_jars_dir(workspace_root);
    let mut sets = vec![(TEST_SCHEMAS.name, TEST_SCHEMAS.source(&jars, TEST_SCHEMAS_RELEASE))];
    sets.extend(INTERNAL_FAMILIES.iter().map(|f| (f.name, f.source(&jars, DEFAULT_KAFKA_RELEASE))));
    sets
}

/// Kafka's request/response/header schemas for this workspace's tests and tools, searched in
/// this order: `$KAFKA_SCHEMAS_DIR` (a folder, or any release's jar such as
/// `kafka-clients-3.9.2.jar`); `<jars>/4.4.0/kafka-clients-4.4.0.jar` ([`kafka_jars_dir`],
/// filled by `scripts/kafka-release`); the same jar in the local Maven repository
/// (`$HOME/.m2/repository`, where [`FETCH_COMMAND`] and every Maven or Gradle-with-Maven build of
/// a Kafka application put it). A jar is returned as `JAR!/common/message`, which
/// [`crate::source`] reads in place. (The `kwire` packages' build scripts read their own copy
/// first: [`crate::bundle::bundled_schemas`].)
pub fn locate_kafka_schemas(workspace_root: &Path) -> Result<PathBuf, String> {
    if let Some(chosen) = schemas_from_env()? {
        return Ok(chosen);
    }
    let mut tried = Vec::new();
    let sources = std::iter::once(MESSAGES.source(&kafka_jars_dir(workspace_root), DEFAULT_KAFKA_RELEASE));
    for source in sources.chain(maven_message_sources()) {
        let jar = crate::source::watched_path(&source);
        if jar.is_file() {
            return Ok(source);
        }
        tried.push(jar.display().to_string());
    }
    Err(format!(
        "Apache Kafka {DEFAULT_KAFKA_RELEASE}'s message schemas were not found (tried {}). Fetch them with \
         `{FETCH_COMMAND}`, or set KAFKA_SCHEMAS_DIR to another release's kafka-clients jar or schema folder",
        tried.join(", ")
    ))
}

/// `$KAFKA_SCHEMAS_DIR`, when set: a schema folder, or a jar read as `JAR!/common/message`.
pub(crate) fn schemas_from_env() -> Result<Option<PathBuf>, String> {
    let Some(dir) = std::env::var_os("KAFKA_SCHEMAS_DIR") else { return Ok(None) };
    let dir = PathBuf::from(dir);
    let jar = crate::source::watched_path(&dir);
    if dir.is_dir() {
        return Ok(Some(dir));
    }
    if crate::source::is_archive(&dir) && jar.is_file() {
        return Ok(Some(if dir == jar {
            PathBuf::from(format!("{}!/{}", jar.display(), MESSAGES.folder))
        } else {
            dir
        }));
    }
    Err(format!("KAFKA_SCHEMAS_DIR={} is neither a folder nor a jar", dir.display()))
}

/// The default release's kafka-clients jar in the local Maven repository:
/// `~/.m2/repository/org/apache/kafka/kafka-clients/<release>/kafka-clients-<release>.jar`.
pub(crate) fn maven_message_sources() -> Vec<PathBuf> {
    let Some(home) = std::env::var_os("HOME") else { return Vec::new() };
    let maven = PathBuf::from(home).join(".m2/repository/org/apache/kafka").join(MESSAGES.artifact);
    vec![MESSAGES.source(&maven, DEFAULT_KAFKA_RELEASE)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fetch_command_fetches_the_default_release() {
        assert!(FETCH_COMMAND.contains(&format!("kafka-clients:{DEFAULT_KAFKA_RELEASE} ")));
    }

    #[test]
    fn a_family_names_its_jar_and_folder() {
        let found = MESSAGES.source(Path::new("/m2"), "4.4.0");
        assert_eq!(found, PathBuf::from("/m2/4.4.0/kafka-clients-4.4.0.jar!/common/message"));
        assert!(crate::source::is_archive(&found));
        assert_eq!(crate::source::watched_path(&found), PathBuf::from("/m2/4.4.0/kafka-clients-4.4.0.jar"));
        let test = TEST_SCHEMAS.source(Path::new("jars"), "4.3.1");
        assert_eq!(test, PathBuf::from("jars/4.3.1/kafka-clients-4.3.1-test.jar!/common/message"));
        assert_eq!(schema_family("storage").map(|f| f.folder), Some("message"));
    }
}
