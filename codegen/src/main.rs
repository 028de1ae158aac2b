//! `kafka-wire-codegen`: regenerates checked-in Rust code from Kafka message schemas.

use std::path::PathBuf;
use std::process::ExitCode;

mod cli;

use clap::{Args, Parser, Subcommand};
use kafka_wire_codegen::{config::cli_command, display_path, Config};

/// Generate Rust types, encoders and decoders from Apache Kafka's JSON message schemas.
#[derive(Parser)]
#[command(name = "kafka-wire-codegen", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate one Rust file per schema plus an index (mod.rs) into the output folder,
    /// rewriting only files whose content changed and removing generated files no schema
    /// produces any more. Files the generator did not write are never replaced or removed.
    Generate(Options),
    /// Exit non-zero, listing the differences, if the output folder is not what `generate`
    /// would write.
    Check(Options),
    /// Decode bytes with the schemas (no generated code: any schema folder works) and show
    /// what they are, as seed 001 does: every field's name, type, value, offset, size and
    /// meaning. Exit status 1 when the bytes do not parse (the tree up to the failure is
    /// printed), 2 when the input cannot be read.
    Explain(cli::explain::ExplainArgs),
    /// Write a protocol reference site: an index of every API (key, versions, flexible,
    /// deprecated and unstable versions), a page per API with what each version changed, and
    /// a page per API and version with the bytes of its smallest legal request and response.
    /// Static files that work from file://.
    Site(cli::site::SiteArgs),
    /// What changed between two schema folders (APIs, schemas, versions, fields) and whether
    /// any version valid in both now encodes differently (its wire layout, derived from the
    /// IR). Exit status 0: no breaking change; 1: breaking changes; 2: a folder could not be
    /// read.
    Diff(cli::diff::DiffArgs),
}

#[derive(Args)]
struct Options {
    /// Folder of schema files (*.json); repeat for several.
    #[arg(long = "schemas", value_name = "DIR", default_value = "schemas")]
    schemas: Vec<PathBuf>,
    /// Output folder. Only files with the generator's header are replaced or removed; a
    /// hand-written file where a generated one would go is an error, and nothing is written.
    #[arg(long, value_name = "DIR", default_value = "generated/src/messages")]
    out: PathBuf,
    /// Rust path of the runtime crate that generated code calls.
    #[arg(long, value_name = "PATH", default_value = "::kafka_wire_runtime")]
    runtime_path: String,
    /// Only these APIs (name like `Fetch`, or numeric key); repeat for several. A name no
    /// schema defines is an error.
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

impl Options {
    fn config(&self) -> Config {
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
            .json(self.json);
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
fn warn(generated: &kafka_wire_codegen::Generated) {
    for w in &generated.warnings {
        eprintln!("warning: {w}");
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Explain(args) => return args.run(),
        Command::Site(args) => return args.run(),
        Command::Diff(args) => return args.run(),
        Command::Generate(opts) => opts.config().write().map(|(generated, report)| {
            warn(&generated);
            println!(
                "{} into {} ({} written, {} unchanged, {} removed)",
                generated.summary(),
                display_path(&opts.out),
                report.written.len(),
                report.unchanged.len(),
                report.removed.len()
            );
        }),
        Command::Check(opts) => opts.config().check().map(|generated| {
            warn(&generated);
            println!("{} is up to date: {}", display_path(&opts.out), generated.summary());
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
