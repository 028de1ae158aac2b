//! `kwire`: command-line tools for modern Kafka, on the generated messages and
//! `kwire-connection`: `tap`, a live decoding (and re-encoding) proxy, and `perf`, request
//! round trips. Errors are one line on stderr and a non-zero exit status.
//!
//! This file only parses and dispatches: each subcommand owns its arguments and its run
//! function in `cmd/`.

mod cmd;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "kwire", version, about = "Modern Kafka on the wire: a decoding proxy and request timing")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// A live decoding proxy for Kafka traffic: forwards bytes both ways and prints every
    /// request and response, decoded.
    Tap(cmd::tap::TapArgs),
    /// Round trips of Kafka requests (ApiVersions or Metadata), one at a time: p50/p99.
    Perf(cmd::perf::PerfArgs),
    Consume(cmd::consume::ConsumeArgs),
    Metadata(cmd::metadata::MetadataArgs),
    Groups(cmd::groups::GroupsArgs),
    Produce(cmd::produce::ProduceArgs),
}

fn main() -> ExitCode {
    // One line, no backtrace, even for a bug.
    std::panic::set_hook(Box::new(|info| eprintln!("kwire: internal error: {info}")));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            e.exit()
        }
        Err(e) => {
            // clap's message without its usage block: one line.
            let text = e.to_string();
            let head: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
            eprintln!("kwire: {} (see kwire --help)", head.join(" ").trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("KWIRE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
    // The tap decodes and prints beside forwarding: on worker threads, so neither waits.
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kwire: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Tap(a) => cmd::tap::run(a).await,
            Command::Perf(a) => cmd::perf::run(a).await,
            Command::Consume(a) => cmd::consume::run(a).await,
            Command::Metadata(a) => cmd::metadata::run(a).await,
            Command::Groups(a) => cmd::groups::run(a).await,
            Command::Produce(a) => cmd::produce::run(a).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kwire: {e}");
            ExitCode::FAILURE
        }
    }
}
