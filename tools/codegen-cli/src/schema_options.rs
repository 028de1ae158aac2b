//! What `generate` and `check` share: where the schemas are, where the code goes, and what
//! it looks like, turned into the engine's `Config`.

use std::path::PathBuf;

use clap::Args;
use kwire_codegen::{config::cli_command, Config, Generated};

#[derive(Args)]
pub struct SchemaOptions {
    /// Folder of schema files (*.json), or a Kafka jar (kafka-clients-X.jar, or JAR!/FOLDER for
    /// a folder inside one), read in place; repeat for several.
    #[arg(long = "schemas", value_name = "DIR", default_value = "schemas")]
    pub schemas: Vec<PathBuf>,
    /// Output folder. Only files with the generator's header are replaced or removed; a
    /// hand-written file where a generated one would go is an error, and nothing is written.
    #[arg(long, value_name = "DIR", default_value = "generated/src/messages")]
    pub out: PathBuf,
    /// Rust path of the runtime crate that generated code calls.
    #[arg(long, value_name = "PATH", default_value = "::kwire_runtime")]
    runtime_path: String,
    /// Only these APIs (name like `Fetch`, any case, or numeric key); repeat for several. A
    /// name no schema defines is an error.
    #[arg(long = "api", value_name = "NAME")]
    apis: Vec<String>,
    /// Refuse, instead of warning about, what only older Kafka releases' schemas do (a missing
    /// `flexibleVersions`, text after the top-level object): for people writing new schemas.
    #[arg(long)]
    strict: bool,
    /// Offer a schema's unstable latest version (`latestVersionUnstable`) in version
    /// negotiation (`ApiKey::supported_versions`); left out by default.
    #[arg(long)]
    unstable_versions: bool,
    /// Plain `i16`/`i32`/`i64`/string fields instead of `ErrorCode` and the typed ids
    /// (`TopicName`, `BrokerId`, ...) for `entityType` fields; the bytes are the same.
    #[arg(long)]
    plain_types: bool,
    /// Kafka-style JSON converters (`Json::to_json`/`from_json`) on every struct; the runtime
    /// must be built with its `json` feature.
    #[arg(long)]
    json: bool,
}

impl SchemaOptions {
    pub fn config(&self) -> Config {
        let mut config = Config::new();
        for dir in &self.schemas {
            config.schema_dir(dir);
        }
        config
            .out_dir(&self.out)
            .runtime_path(&self.runtime_path)
            .regenerate_command(self.command_line())
            .strict(self.strict)
            .unstable_versions(self.unstable_versions)
            .plain_types(self.plain_types)
            .json(self.json)
            .pretty(true);
        if !self.apis.is_empty() {
            config.include_apis(self.apis.iter().cloned());
        }
        config
    }

    /// The `generate` command that reproduces this output, for file headers.
    fn command_line(&self) -> String {
        let mut command = cli_command(&self.schemas, &self.out, &self.runtime_path, &self.apis);
        let flags = [
            (self.unstable_versions, "--unstable-versions"),
            (self.plain_types, "--plain-types"),
            (self.json, "--json"),
        ];
        for (_, flag) in flags.iter().filter(|(on, _)| *on) {
            command.push(' ');
            command.push_str(flag);
        }
        command
    }
}

/// Warnings go to stderr, one line each; they never change the exit status.
pub fn warn(generated: &Generated) {
    for w in &generated.warnings {
        eprintln!("warning: {w}");
    }
}
