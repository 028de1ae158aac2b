//! `kwire-codegen`: regenerates checked-in Rust code from Kafka message schemas, and
//! looks at schemas and bytes through the generator's IR. This file only dispatches; each
//! subcommand owns its arguments and its run function in `cmd/`.

mod cmd;
mod output;
mod schema_options;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Generate Rust types, encoders and decoders from Apache Kafka's JSON message schemas.
#[derive(Parser)]
#[command(name = "kwire-codegen", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate one Rust file per schema plus an index (mod.rs) into the output folder,
    /// rewriting only files whose content changed and removing generated files no schema
    /// produces any more. Files the generator did not write are never replaced or removed.
    Generate(cmd::generate::GenerateArgs),
    /// Exit non-zero, listing the differences, if the output folder is not what `generate`
    /// would write.
    Check(cmd::check::CheckArgs),
    /// Decode bytes with the schemas (no generated code: any schema folder works) and show
    /// what they are, as seed 001 does: every field's name, type, value, offset, size and
    /// meaning. Exit status 1 when the bytes do not parse (the tree up to the failure is
    /// printed), 2 when the input cannot be read.
    Explain(cmd::explain::ExplainArgs),
    /// Write a protocol reference site: an index of every API (key, versions, flexible,
    /// deprecated and unstable versions), a page per API with what each version changed, and
    /// a page per API and version with the bytes of its smallest legal request and response.
    /// Static files that work from file://.
    Site(cmd::site::SiteArgs),
    /// What changed between two schema folders (APIs, schemas, versions, fields) and whether
    /// any version valid in both now encodes differently (its wire layout, derived from the
    /// IR). Exit status 0: no breaking change; 1: breaking changes; 2: a folder could not be
    /// read.
    Diff(cmd::diff::DiffArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Generate(args) => args.run(),
        Command::Check(args) => args.run(),
        Command::Explain(args) => args.run(),
        Command::Site(args) => args.run(),
        Command::Diff(args) => args.run(),
    }
}
