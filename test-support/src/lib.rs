//! What the end-to-end tests of every crate share: real peers started as processes (Apache
//! Kafka from its jars, with TLS and SASL listeners, [`kafka::Kafka`]; Kafka's own Java
//! clients and the other programs of the Java oracle module on those jars,
//! [`kafka::java_program`]; tansu, [`tansu::Tansu`]), a counting allocator that measures what a
//! decode allocates ([`alloc`]), and small helpers (a temporary folder, a free port, a log's
//! tail, a peer that CI must have). Kafka 0.7's processes (ZooKeeper, the 0.7 broker and
//! command) are `kwire07-test-support`'s.

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;

pub mod alloc;
pub mod kafka;
pub mod tansu;

pub use kafka::Kafka;
pub use tansu::Tansu;
pub use tempfile::TempDir;

/// The last 20 lines of a server's log file (empty if unreadable), for failure messages.
pub fn tail_of(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// A port that was free a moment ago (bound to 127.0.0.1:0 and released).
pub fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// The value of `var`, which names a peer a test needs (a client's interpreter, its modules):
/// `None`, and the test skipped, when it is unset on a developer's machine; under CI
/// (`CI` set) an unset one fails the test, since `scripts/test` sets every one.
pub fn env_or_skip(var: &str) -> Option<std::ffi::OsString> {
    let value = std::env::var_os(var);
    if value.is_none() {
        assert!(std::env::var_os("CI").is_none(), "{var} must be set under CI (scripts/test sets it)");
        eprintln!("{var} not set: skipped");
    }
    value
}
