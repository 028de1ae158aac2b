//! Running the `kwire07` CLI from tests, and small helpers for waiting on and inspecting what a
//! broker left on disk.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::broker::{sibling_binary, BrokerProcess};

/// The `kwire07` binary next to the running test (built by `cargo build -p kwire07-cli`), or
/// `$KWIRE07_BIN`.
pub fn kwire07_bin() -> PathBuf {
    sibling_binary("kwire07", "KWIRE07_BIN", "kwire07-cli")
}

/// Runs `kwire07` with `args`, feeding `stdin`; panics with its stderr if it fails.
pub fn kwire07(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = kwire07_output(args, stdin);
    assert!(out.status.success(), "kwire07 {args:?} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Runs `kwire07` and returns everything, success or not.
pub fn kwire07_output(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(kwire07_bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kwire07");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("kwire07 output");
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

/// Every file and directory below `dir`, relative, sorted.
pub fn tree(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}
