//! Command-line flags. Precedence: `--config` file, then `--set KEY=VALUE` in order, then the
//! dedicated flags (`--port`, `--log-dir`, …), each replacing what came before.

use std::path::PathBuf;

use clap::Parser;

use crate::config::{BrokerConfig, ConfigError};
use crate::properties::{Properties, Source};

#[derive(Debug, Parser)]
#[command(
    name = "kwire07-broker",
    version,
    about = "A Kafka 0.7 broker (PRODUCE, FETCH, MULTIFETCH, MULTIPRODUCE, OFFSETS)"
)]
pub struct Args {
    /// A Kafka 0.7 server.properties file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory of the partition logs (log.dir).
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Port to listen on (port, default 9092).
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Address to listen on (kwire.bind, default 127.0.0.1).
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
    /// Broker id (brokerid, default 0).
    #[arg(long, value_name = "N")]
    pub broker_id: Option<i64>,
    /// Partitions per topic (num.partitions, default 1).
    #[arg(long, value_name = "N")]
    pub num_partitions: Option<i64>,
    // As `help` rather than a doc comment: the brackets are the connect string's syntax.
    #[arg(
        long,
        value_name = "CONNECT",
        help = "ZooKeeper hosts, host:port[,host:port][/chroot] (zk.connect); standalone without it."
    )]
    pub zookeeper: Option<String>,
    /// Any property, e.g. --set log.flush.interval=1 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error(transparent)]
    Syntax(#[from] crate::properties::SyntaxError),
    #[error("--set {0:?}: expected KEY=VALUE")]
    BadSet(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl Args {
    /// Merges file, `--set` and flags into properties.
    pub fn properties(&self) -> Result<Properties, CliError> {
        let mut props = Properties::default();
        if let Some(path) = &self.config {
            let shown = path.display().to_string();
            let text =
                std::fs::read_to_string(path).map_err(|source| CliError::Read { path: shown.clone(), source })?;
            props.load(&shown, &text)?;
        }
        for kv in &self.set {
            let (k, v) =
                kv.split_once('=').filter(|(k, _)| !k.trim().is_empty()).ok_or_else(|| CliError::BadSet(kv.clone()))?;
            props.insert(k.trim(), v, Source::Set);
        }
        let flags: [(&str, &'static str, Option<String>); 6] = [
            ("log.dir", "--log-dir", self.log_dir.as_ref().map(|d| d.display().to_string())),
            ("port", "--port", self.port.map(|p| p.to_string())),
            ("kwire.bind", "--bind", self.bind.clone()),
            ("brokerid", "--broker-id", self.broker_id.map(|n| n.to_string())),
            ("num.partitions", "--num-partitions", self.num_partitions.map(|n| n.to_string())),
            ("zk.connect", "--zookeeper", self.zookeeper.clone()),
        ];
        for (key, flag, value) in flags {
            if let Some(v) = value {
                props.insert(key, v, Source::Flag(flag));
            }
        }
        if self.zookeeper.is_some() {
            props.insert("enable.zookeeper", "true", Source::Flag("--zookeeper"));
        }
        Ok(props)
    }

    pub fn broker_config(&self) -> Result<BrokerConfig, CliError> {
        Ok(BrokerConfig::from_properties(&self.properties()?)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("kwire07-broker").chain(list.iter().copied())).unwrap()
    }

    #[test]
    fn flags_override_set_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("server.properties");
        std::fs::write(&file, "brokerid=7\nport=1111\nlog.dir=/from/file\nnum.partitions=3\n").unwrap();
        let f = file.to_str().unwrap();
        let c = args(&["--config", f, "--set", "port=2222", "--set", "num.partitions=4", "--port", "3333"])
            .broker_config()
            .unwrap();
        assert_eq!((c.broker_id, c.port, c.num_partitions), (7, 3333, 4));
        assert_eq!(c.log_dir, PathBuf::from("/from/file"));
    }

    #[test]
    fn flag_errors_name_the_flag() {
        let e = args(&["--log-dir", "/x", "--broker-id=-3"]).broker_config().unwrap_err();
        assert_eq!(e.to_string(), "property brokerid=\"-3\" (from --broker-id): must be in 0..=2147483647");
        let e = args(&["--log-dir", "/x", "--set", "nonsense"]).broker_config().unwrap_err();
        assert!(e.to_string().contains("expected KEY=VALUE"), "{e}");
        let e = args(&["--log-dir", "/x", "--zookeeper", "nohost"]).broker_config().unwrap_err();
        assert!(e.to_string().contains("(from --zookeeper)"), "{e}");
    }
}
