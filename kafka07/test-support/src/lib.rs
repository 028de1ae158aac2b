//! Kafka 0.7's processes for end-to-end tests: a ZooKeeper server from Debian's
//! `libzookeeper-java` ([`ZooKeeper`]), the `kwire07-broker` binary ([`broker::BrokerProcess`]),
//! the `kwire07` command ([`cli`]), a 0.7 client encoded by hand from the spec ([`client07`]),
//! and a file system that loses power on cue ([`power_loss`]).
//!
//! ZooKeeper needs `apt-get install -y --no-install-recommends libzookeeper-java` and a `java` on
//! `PATH`. When they are missing, [`ZooKeeper::start_or_skip`] fails the test if the env var `CI`
//! is set and otherwise prints a notice and returns `None`.

use std::fmt;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub mod broker;
pub mod cli;
pub mod client07;
pub mod power_loss;

pub use broker::{broker, kwire07_broker_bin, BrokerOptions, BrokerProcess};
pub use cli::{kwire07, kwire07_bin, kwire07_output, lines, segments, tree, wait_for};
pub use client07::*;
pub use tempfile::TempDir;

/// The server jar; its manifest's `Class-Path` names the rest (jute, netty, slf4j-api, …).
pub const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// The logging backend, which the manifest does not name.
pub const SLF4J_SIMPLE_JAR: &str = "/usr/share/java/slf4j-simple.jar";

/// How long a JVM on a loaded machine may take to answer `ruok`.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a ZooKeeper server could not be started.
#[derive(Debug)]
pub enum ZkError {
    /// The jars or `java` are not installed.
    Unavailable(String),
    /// It was installed but did not come up.
    Failed(String),
}

impl fmt::Display for ZkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZkError::Unavailable(m) => write!(f, "ZooKeeper unavailable: {m}"),
            ZkError::Failed(m) => write!(f, "ZooKeeper failed to start: {m}"),
        }
    }
}

impl std::error::Error for ZkError {}

/// A running standalone ZooKeeper server on 127.0.0.1, killed (by pid) on drop.
pub struct ZooKeeper {
    child: Child,
    port: u16,
    dir: TempDir,
}

impl fmt::Debug for ZooKeeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZooKeeper").field("pid", &self.child.id()).field("port", &self.port).finish()
    }
}

impl ZooKeeper {
    /// Starts a server with a fresh data dir on a free port and waits until `ruok` → `imok`.
    pub fn start() -> Result<ZooKeeper, ZkError> {
        for jar in [ZOOKEEPER_JAR, SLF4J_SIMPLE_JAR] {
            if !Path::new(jar).exists() {
                return Err(ZkError::Unavailable(format!(
                    "{jar} is missing (apt-get install -y --no-install-recommends libzookeeper-java)"
                )));
            }
        }
        let dir = TempDir::with_prefix("kwire-zk").map_err(|e| ZkError::Failed(format!("temp dir: {e}")))?;
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).map_err(|e| ZkError::Failed(format!("data dir: {e}")))?;
        let port = free_port().map_err(|e| ZkError::Failed(format!("free port: {e}")))?;
        let cfg = dir.path().join("zoo.cfg");
        let text = format!(
            "tickTime=2000\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\n\
             admin.enableServer=false\n4lw.commands.whitelist=*\n",
            data.display()
        );
        std::fs::write(&cfg, text).map_err(|e| ZkError::Failed(format!("write {}: {e}", cfg.display())))?;
        let log_path = dir.path().join("zookeeper.log");
        let log = std::fs::File::create(&log_path).map_err(|e| ZkError::Failed(format!("log file: {e}")))?;
        let log_err = log.try_clone().map_err(|e| ZkError::Failed(format!("log file: {e}")))?;
        let child = Command::new("java")
            .arg("-cp")
            .arg(format!("{ZOOKEEPER_JAR}:{SLF4J_SIMPLE_JAR}"))
            .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|e| ZkError::Unavailable(format!("cannot run java: {e}")))?;
        let mut zk = ZooKeeper { child, port, dir };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if zk.four_letter("ruok").is_ok_and(|r| r == "imok") {
                return Ok(zk);
            }
            if let Ok(Some(status)) = zk.child.try_wait() {
                return Err(ZkError::Failed(format!("exited with {status}: {}", zk.log_tail())));
            }
            if Instant::now() > deadline {
                return Err(ZkError::Failed(format!("no `imok` within {START_TIMEOUT:?}: {}", zk.log_tail())));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// [`ZooKeeper::start`], but when ZooKeeper is not installed: panics if `CI` is set,
    /// otherwise prints a notice and returns `None` so the test can return early.
    pub fn start_or_skip() -> Option<ZooKeeper> {
        match ZooKeeper::start() {
            Ok(zk) => Some(zk),
            Err(ZkError::Unavailable(m)) if std::env::var_os("CI").is_none() => {
                eprintln!("SKIPPED: ZooKeeper test needs libzookeeper-java and java: {m}");
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `127.0.0.1:<port>`, for `zk.connect` / `--zookeeper`.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Sends a four-letter command (`ruok`, `stat`, `dump`, `cons`, …) and returns the answer.
    pub fn four_letter(&self, cmd: &str) -> std::io::Result<String> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        s.write_all(cmd.as_bytes())?;
        let mut out = String::new();
        s.read_to_string(&mut out)?;
        Ok(out)
    }

    /// The last lines of the server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        tail_of(&self.dir.path().join("zookeeper.log"))
    }
}

impl Drop for ZooKeeper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port that was free a moment ago (bound to 127.0.0.1:0 and released).
pub fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// The last 20 lines of a server's log file (empty if unreadable), for failure messages.
fn tail_of(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
