//! Shared support for the client's end-to-end tests: the workspace's process harness (real
//! ZooKeeper, the `kwire-broker` binary) and a runner for the `kwire` CLI.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

#[path = "../../../tests/src/zookeeper.rs"]
pub mod harness;

pub use harness::broker::kwire_broker_bin;
#[allow(unused_imports)]
pub use harness::{BrokerOptions, BrokerProcess, TempDir, ZooKeeper};

/// Starts `kwire-broker` (built by `cargo test --workspace`, or `cargo build -p kafka-wire-broker`).
pub fn broker(opts: BrokerOptions) -> BrokerProcess {
    BrokerProcess::start(kwire_broker_bin(), opts).expect("kwire-broker starts")
}

/// Runs `kwire` with `args`, feeding `stdin`; panics with its stderr if it fails.
pub fn kwire(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = kwire_output(args, stdin);
    assert!(out.status.success(), "kwire {args:?} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Runs `kwire` and returns everything, success or not.
pub fn kwire_output(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kwire");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("kwire output");
    writer.join().expect("stdin writer");
    out
}

/// Lines of a command's stdout.
pub fn lines(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out).lines().map(str::to_owned).collect()
}

/// Retries `f` until it returns `Some` or `timeout` passes.
pub fn wait_for<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Segment files (`*.kafka`) of `topic`-`partition`, sorted by start offset.
pub fn segments(b: &BrokerProcess, topic: &str, partition: i32) -> Vec<u64> {
    let dir = b.log_dir().join(format!("{topic}-{partition}"));
    let mut v: Vec<u64> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name().to_str().and_then(|n| n.strip_suffix(".kafka")).and_then(|n| n.parse().ok())
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}
