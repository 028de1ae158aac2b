//! `kwire`: a command-line Kafka 0.7 client (produce, consume, offsets, topics, zk, perf).
//! Errors are one line on stderr and a non-zero exit status.

mod admin;
mod ceiling;
mod cli;
mod commands;
mod perf;
mod progress;
mod request_latency;
mod tap;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

fn main() -> ExitCode {
    // One line, no backtrace, even for a bug.
    std::panic::set_hook(Box::new(|info| eprintln!("kwire: internal error: {info}")));
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => e.exit(),
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
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
    let mut builder = if matches!(cli.command, cli::Command::Tap(_)) {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kwire: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kwire: {e}");
            ExitCode::FAILURE
        }
    }
}
