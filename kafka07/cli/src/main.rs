//! `kwire07`: the Kafka 0.7 client on the command line (produce, consume, offsets, topics, zk,
//! perf). Errors are one line on stderr and a non-zero exit status. (The tools for modern Kafka
//! are the `kwire` command, `modern/cli`.)

//!
//! This file only parses and dispatches: each subcommand owns its arguments and its run
//! function in `cmd/`; `endpoints`, `output`, `parse` and `progress` are leaf helpers they share.

#[macro_use]
mod output;
mod cmd;
mod endpoints;
mod parse;
mod progress;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

use endpoints::{CmdResult, Endpoints};

#[derive(Debug, Parser)]
#[command(name = "kwire07", version, about = "Kafka 0.7 client: produce, consume, offsets, topics, perf")]
struct Cli {
    #[command(flatten)]
    cluster: Endpoints,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Send messages, one per line of stdin (or of --file).
    Produce(cmd::produce::ProduceArgs),
    /// Print messages, one per line.
    Consume(cmd::consume::ConsumeArgs),
    /// Ask a broker for a partition's offsets (OFFSETS request).
    Offsets(cmd::offsets::OffsetsArgs),
    /// Manage topics (ModifyTopic); without a subcommand, `list`.
    Topics(cmd::topics::TopicsArgs),
    /// Inspect Kafka's nodes in ZooKeeper (needs --zookeeper).
    #[command(subcommand)]
    Zk(cmd::zk::ZkCommand),
    /// Throughput and latency tests.
    #[command(subcommand)]
    Perf(cmd::perf::PerfCommand),
}

impl Command {
    async fn run(self, cluster: &Endpoints) -> CmdResult {
        match self {
            Command::Produce(a) => cmd::produce::run(cluster, a).await,
            Command::Consume(a) => cmd::consume::run(cluster, a).await,
            Command::Offsets(a) => cmd::offsets::run(cluster, a).await,
            Command::Topics(a) => cmd::topics::run(cluster, a).await,
            Command::Zk(c) => cmd::zk::run(cluster, c).await,
            Command::Perf(p) => cmd::perf::run(cluster, p).await,
        }
    }
}

fn main() -> ExitCode {
    // One line, no backtrace, even for a bug.
    std::panic::set_hook(Box::new(|info| eprintln!("kwire07: internal error: {info}")));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => e.exit(),
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            // clap's message without its usage block: one line.
            let text = e.to_string();
            let head: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
            eprintln!("kwire07: {} (see kwire07 --help)", head.join(" ").trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("KWIRE07_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kwire07: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli.command.run(&cli.cluster)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                output::quit_on(io);
            }
            eprintln!("kwire07: {e}");
            ExitCode::FAILURE
        }
    }
}
