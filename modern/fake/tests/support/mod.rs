//! What the client suites share: the `kwire-fake-cluster` binary, one Apache Kafka 4.4 per test
//! binary to compare against, the clients that need a build or a JVM (Kafka's Java clients,
//! franz-go), and waiting for a new topic's leaders.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kwire::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kwire::messages::ListOffsetsRequest;
use kwire::{ErrorCode, StrBytes, TopicName};
use kwire_connection::Cluster;
use kwire_test_support::Kafka;

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

impl Fake {
    /// The binary's process id (for its memory figures in /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Starts `kwire-fake-cluster` with `args` and reads its first line: `bootstrap.servers=…`.
pub fn fake(args: &[&str]) -> Fake {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire-fake-cluster"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("kwire-fake-cluster starts");
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
pub fn summary(what: &str, run: &Output) -> serde_json::Value {
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{what} failed: {}", tail(&log, 4000));
    let out = String::from_utf8_lossy(&run.stdout);
    let last = out.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{what}: no JSON summary ({e}): {out}"))
}

/// The last `bytes` of `text` at most, from a character's start.
pub fn tail(text: &str, bytes: usize) -> &str {
    let start = (text.len().saturating_sub(bytes)..text.len()).find(|&i| text.is_char_boundary(i));
    &text[start.unwrap_or(text.len())..]
}

/// ListOffsets of `topic`'s `partition`'s latest offset at `isolation` (1: read_committed).
pub fn latest_offset(topic: &str, partition: i32, isolation: i8) -> ListOffsetsRequest {
    ListOffsetsRequest {
        replica_id: kwire::BrokerId(-1),
        isolation_level: isolation,
        topics: vec![ListOffsetsTopic {
            name: TopicName(StrBytes::from(topic.to_owned())),
            partitions: vec![ListOffsetsPartition {
                partition_index: partition,
                current_leader_epoch: -1,
                timestamp: -1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Waits until each of `topic`'s first `partitions` has a leader that answers for it: Kafka
/// answers CreateTopics once its controller has committed the topic, before the brokers lead
/// it. A produce in between is refused, and a KIP-848 group joined in between is given no
/// partitions, then moves to a new epoch when the topic arrives. Nothing of it is observed.
pub async fn wait_for_leaders(cluster: &Cluster, topic: &str, partitions: i32) {
    for partition in 0..partitions {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let _ = cluster.refresh(&[topic]).await;
            let answered = match cluster.leader(topic, partition).await {
                Ok(leader) => match leader.send(latest_offset(topic, partition, 0)).await {
                    Ok(r) => r.topics.iter().flat_map(|t| &t.partitions).all(|p| p.error_code == ErrorCode::NONE),
                    Err(_) => false,
                },
                Err(_) => false,
            };
            if answered {
                break;
            }
            assert!(Instant::now() < deadline, "{topic}-{partition} has no leader after 30 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Held by each suite throughout: one client round at a time on two shared cores, so that no
/// round's group timing depends on another's load.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `ClientRound` (Kafka's Java clients, `conformance/kafka-java`) with `args`; `None` when
/// its classes were not built (outside CI: skipped; under CI that fails).
pub fn java_client(args: &[&str]) -> Option<Output> {
    match kwire_test_support::kafka::java_client(args) {
        Ok(out) => Some(out),
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "Kafka's Java clients: {e}");
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// The franz-go round's folder (a Go module).
const FRANZ_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/franz");

/// The franz-go round, built (offline once `go mod download` ran) with `go` from `PATH` or Go's
/// default install folder. `None` (skipped) without `go`; under CI that is a failure.
pub fn franz_round() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let go = std::env::split_paths(&path)
        .map(|dir| dir.join("go"))
        .chain([PathBuf::from("/usr/local/go/bin/go")])
        .find(|go| go.is_file());
    let Some(go) = go else {
        assert!(std::env::var_os("CI").is_none(), "go is not installed: the franz-go suites need it under CI");
        eprintln!("go not found (PATH, /usr/local/go/bin): skipped");
        return None;
    };
    // One program per test binary: another binary's build may replace its own meanwhile.
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("franz-round-{}", env!("CARGO_CRATE_NAME")));
    let build = Command::new(go)
        .args(["build", "-buildvcs=false", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(FRANZ_DIR)
        .output()
        .unwrap();
    assert!(build.status.success(), "go build in {FRANZ_DIR} failed:\n{}", String::from_utf8_lossy(&build.stderr));
    Some(out)
}
