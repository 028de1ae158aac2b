//! `kwire-fake-cluster`: an in-process Kafka cluster as a process, for tests in other languages.
//! Prints `bootstrap.servers=HOST:PORT,…` as its first line on stdout, then serves until
//! killed (SIGINT or SIGTERM stop it cleanly). `KWIRE_FAKE_LOG=debug` logs to stderr.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use kwire_connection::{Credentials, Mechanism};
use kwire_fake::{FakeCluster, FakeConfig};

#[derive(Debug, Parser)]
#[command(name = "kwire-fake-cluster", version, about = "An in-memory Kafka cluster for tests")]
struct Args {
    /// Number of nodes.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Where the nodes listen, HOST:PORT[,HOST:PORT…] in node order (port 0: a free port).
    #[arg(long, value_delimiter = ',', default_value = "127.0.0.1:0")]
    listen: Vec<String>,
    /// What Metadata tells clients each node is, HOST:PORT[,…] (for a proxy in front).
    #[arg(long, value_delimiter = ',')]
    advertise: Vec<String>,
    /// Partitions of a topic created on first use (Kafka's num.partitions).
    #[arg(long, default_value_t = 1)]
    default_partitions: i32,
    /// Behave as the Kafka release of this kafka-clients jar (or schema folder): its APIs and
    /// versions, within what kwire reads.
    #[arg(long, value_name = "JAR")]
    behave_as: Option<std::path::PathBuf>,
    /// The largest request a node reads, in bytes (Kafka's socket.request.max.bytes).
    #[arg(long, default_value_t = 100 << 20)]
    max_frame: usize,
    /// Bytes of requests still arriving that all connections together may hold.
    #[arg(long, default_value_t = 256 << 20)]
    max_buffered_request_bytes: usize,
    /// Milliseconds a request may take to arrive, from its first byte to its last.
    #[arg(long, default_value_t = 30_000)]
    request_timeout_ms: u64,
    /// A SASL user, MECHANISM:USER:PASSWORD (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), repeatable:
    /// with any, clients must authenticate.
    #[arg(long = "sasl", value_name = "MECHANISM:USER:PASSWORD", value_parser = sasl_user)]
    sasl: Vec<Credentials>,
}

/// `MECHANISM:USER:PASSWORD` (the password may hold colons).
fn sasl_user(text: &str) -> Result<Credentials, String> {
    let mut parts = text.splitn(3, ':');
    let (Some(mechanism), Some(user), Some(password)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("expected MECHANISM:USER:PASSWORD".to_string());
    };
    let mechanism = [Mechanism::Plain, Mechanism::ScramSha256, Mechanism::ScramSha512]
        .into_iter()
        .find(|m| m.name() == mechanism)
        .ok_or_else(|| format!("unknown mechanism {mechanism} (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"))?;
    Ok(Credentials::new(mechanism, user, password))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    // KWIRE_FAKE_LOG=debug (or any tracing filter) logs what the cluster does to stderr.
    if let Ok(filter) = std::env::var("KWIRE_FAKE_LOG") {
        tracing_subscriber::fmt().with_env_filter(format!("kwire_fake={filter}")).with_writer(std::io::stderr).init();
    }
    if !args.advertise.is_empty() && args.advertise.len() != args.nodes {
        eprintln!("kwire-fake-cluster: --advertise names {} addresses for {} nodes", args.advertise.len(), args.nodes);
        return ExitCode::from(2);
    }
    // One address for several nodes is a host to put every node on, each on a port of its own.
    let listen = if args.listen.len() == 1 && args.nodes > 1 {
        let (host, port) = args.listen[0].rsplit_once(':').unwrap_or(("127.0.0.1", "0"));
        if port != "0" {
            eprintln!("kwire-fake-cluster: {} nodes cannot share port {port}", args.nodes);
            return ExitCode::from(2);
        }
        vec![format!("{host}:0"); args.nodes]
    } else {
        args.listen
    };
    let mut config = FakeConfig::default()
        .nodes(args.nodes)
        .listen(listen)
        .advertise(args.advertise)
        .default_partitions(args.default_partitions)
        .max_frame(args.max_frame)
        .max_buffered_request_bytes(args.max_buffered_request_bytes)
        .request_timeout(std::time::Duration::from_millis(args.request_timeout_ms));
    for user in args.sasl {
        config = config.sasl_user(user);
    }
    if let Some(jar) = &args.behave_as {
        config = match config.behave_as(jar) {
            Ok(config) => config,
            Err(e) => {
                eprintln!("kwire-fake-cluster: --behave-as {}: {e}", jar.display());
                return ExitCode::from(2);
            }
        };
    }
    let cluster = match FakeCluster::start(config).await {
        Ok(cluster) => cluster,
        Err(e) => {
            eprintln!("kwire-fake-cluster: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "bootstrap.servers={}", cluster.bootstrap_servers()).and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            eprintln!("kwire-fake-cluster: {e}");
            return ExitCode::FAILURE;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    cluster.shutdown().await;
    ExitCode::SUCCESS
}
