//! `kwire07-broker`: parse flags and properties, start the broker, run until SIGINT/SIGTERM,
//! shut down cleanly. Errors are one line on stderr and exit status 1 (2 for usage errors).

use std::process::ExitCode;

use clap::Parser;
use kwire07_broker::cli::Args;
use kwire07_broker::Broker;
use tokio::signal::unix::{signal, SignalKind};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let args = Args::parse();
    let config = match args.broker_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("kwire07-broker: error: {e}");
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // Accepting, ZooKeeper and the flush and retention schedules; connections run on their
    // own threads (`num.threads`, see `kwire07_broker::processors`).
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kwire07-broker: error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kwire07-broker: error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: kwire07_broker::BrokerConfig) -> Result<(), String> {
    // Install the handlers before starting, so a signal during start-up is not lost.
    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("SIGTERM handler: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("SIGINT handler: {e}"))?;
    let broker = Broker::start(config).await.map_err(|e| e.to_string())?;
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        _ = int.recv() => tracing::info!("SIGINT received"),
        reason = broker.halted() => {
            // As 0.7 does: stop now, without the clean-shutdown marker; the next start recovers.
            eprintln!("kwire07-broker: halting: {reason}");
            std::process::exit(1);
        }
    }
    broker.shutdown().await.map_err(|e| format!("shutdown: {e}"))
}
