//! What the client suites share: the `kafka-wire-fake` binary, and one Apache Kafka 4.4 per
//! test binary to compare against.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use kafka_wire_test_support::Kafka;

/// The binary, killed when dropped.
pub struct Fake {
    child: Child,
    pub bootstrap: String,
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `kafka-wire-fake` with `args` and reads its first line: `bootstrap.servers=…`.
pub fn fake(args: &[&str]) -> Fake {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-wire-fake"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("kafka-wire-fake starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let bootstrap = line.trim().strip_prefix("bootstrap.servers=").unwrap_or_else(|| panic!("first line: {line:?}"));
    Fake { bootstrap: bootstrap.to_string(), child }
}

/// One single-node Apache Kafka 4.4 for every suite of this test binary (None: skipped).
pub fn kafka() -> Option<&'static Kafka> {
    static KAFKA: OnceLock<Option<Kafka>> = OnceLock::new();
    KAFKA.get_or_init(|| Kafka::start_or_skip(1)).as_ref()
}

/// The last line of a client's stdout, parsed: its JSON summary.
pub fn summary(what: &str, run: &std::process::Output) -> serde_json::Value {
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{what} failed: {}", &log[log.len().saturating_sub(4000)..]);
    let out = String::from_utf8_lossy(&run.stdout);
    let last = out.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{what}: no JSON summary ({e}): {out}"))
}

/// Held by each suite throughout: one client round at a time on two shared cores, so that no
/// round's group timing depends on another's load.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
