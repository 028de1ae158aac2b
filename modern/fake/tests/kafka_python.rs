//! The `kafka-wire-fake` binary's contract, and kafka-python (a client written without our
//! code) against it: admin, an idempotent producer in every codec, a consumer reading back.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use kafka_wire_test_support::env_or_skip;

/// The binary, killed when dropped.
struct Fake(Child);

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `kafka-wire-fake` with `args` and reads its first line: `bootstrap.servers=…`.
fn start(args: &[&str]) -> (Fake, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-wire-fake"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("kafka-wire-fake starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let bootstrap = line.trim().strip_prefix("bootstrap.servers=").unwrap_or_else(|| panic!("first line: {line:?}"));
    (Fake(child), bootstrap.to_string())
}

#[test]
fn the_first_line_names_every_node_and_advertise_is_what_metadata_says() {
    let (_fake, bootstrap) = start(&["--nodes", "3"]);
    let servers: Vec<&str> = bootstrap.split(',').collect();
    assert_eq!(servers.len(), 3, "{bootstrap}");
    assert!(servers.iter().all(|s| s.starts_with("127.0.0.1:") && !s.ends_with(":0")), "{bootstrap}");
    let (_fake, advertised) = start(&["--nodes", "2", "--advertise", "proxy.example:9092,proxy.example:9093"]);
    assert_eq!(advertised, "proxy.example:9092,proxy.example:9093");
}

#[test]
fn kafka_python_produces_and_consumes_in_every_codec() {
    let Some(python) = env_or_skip("KAFKA_WIRE_PYTHON") else { return };
    let (_fake, bootstrap) = start(&["--nodes", "3"]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/kafka_python_round.py");
    let run = Command::new(python).arg(script).arg(&bootstrap).output().unwrap();
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "kafka-python failed: {}", &log[log.len().saturating_sub(4000)..]);
    let out = String::from_utf8_lossy(&run.stdout);
    let summary = out.lines().last().unwrap_or_default();
    // 5 codecs × 10 records, each read back once; offsets per partition never reused.
    assert!(summary.contains(r#""consumed": 50"#) && summary.contains(r#""distinct": 50"#), "{summary}");
    assert!(summary.contains(r#""offsets_unique": true"#), "{summary}");
    assert!(summary.contains(r#""duplicate_create": "TopicAlreadyExistsError""#), "{summary}");
}
