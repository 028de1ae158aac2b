//! The Java side: one JVM running `dev.kwire.oracle.Oracle` over a release's jars, asked
//! one case at a time over its standard input and output.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

/// What Kafka's classes made of one case.
#[derive(Debug)]
pub enum Answer {
    /// Kafka decoded our bytes and read our JSON.
    Ok {
        /// Our bytes decoded by Kafka's class and written again.
        reencoded: Vec<u8>,
        /// Kafka's converter's JSON of our bytes.
        json: String,
        /// The instance Kafka's converter read from our JSON, written by Kafka's class.
        from_json: Vec<u8>,
    },
    /// A stage failed on Kafka's side: `decode`, `encode`, `json-write`, `json-read`,
    /// `encode-from-json`, `class` or `input`, with Kafka's exception.
    Refused { stage: String, message: String },
}

/// A running oracle JVM.
pub struct Oracle {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    /// How many generated converters the class path holds.
    pub converters: usize,
}

/// Where the oracle's classes and a release's jars are, as `scripts/kafka-release` leaves them.
pub fn class_path(workspace: &Path, release: &str) -> Result<String, String> {
    let classes = workspace.join("target/kafka-java/classes");
    let jars = jars_dir(workspace).join(release);
    if !classes.join("dev/kwire/oracle/Oracle.class").is_file() {
        return Err(format!("{} has no Oracle.class: run scripts/kafka-release", classes.display()));
    }
    if !jars.is_dir() {
        return Err(format!("{} is missing: run scripts/kafka-release", jars.display()));
    }
    Ok(format!("{}:{}/*", classes.display(), jars.display()))
}

/// The workspace root (the parent of `conformance/`).
pub fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("conformance/ is in the workspace")
}

/// An oracle over `release`'s jars, or `None` (said on standard error) when the jars or the
/// oracle's classes have not been fetched; under CI that is a failure.
pub fn oracle_for(release: &str) -> Option<Oracle> {
    match class_path(workspace(), release) {
        Ok(path) => Some(Oracle::start(&path).unwrap_or_else(|e| panic!("{e}"))),
        Err(why) => {
            assert!(std::env::var_os("CI").is_none(), "{why}");
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// `target/kafka`, or `$KAFKA_JARS_DIR`.
pub fn jars_dir(workspace: &Path) -> PathBuf {
    std::env::var_os("KAFKA_JARS_DIR").map_or_else(|| workspace.join("target/kafka"), PathBuf::from)
}

impl Oracle {
    /// Starts the JVM with `class_path` and waits until it has indexed the converters.
    pub fn start(class_path: &str) -> Result<Oracle, String> {
        let java = std::env::var_os("JAVA_HOME")
            .map(|home| PathBuf::from(home).join("bin/java"))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("java"));
        // A small heap: the cases are small, and CI's machines have two cores shared by tests.
        let mut child = Command::new(&java)
            .args(["-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", class_path])
            .arg("dev.kwire.oracle.Oracle")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", java.display()))?;
        let input = BufWriter::new(child.stdin.take().expect("stdin piped"));
        let output = BufReader::new(child.stdout.take().expect("stdout piped"));
        let mut oracle = Oracle { child, input, output, converters: 0 };
        let ready = oracle.read_line()?;
        oracle.converters = ready
            .strip_prefix("ready\t")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("the oracle did not start: {ready:?}"))?;
        Ok(oracle)
    }

    /// Runs one case: our bytes and our JSON text of schema `name` at `version`.
    pub fn ask(&mut self, name: &str, version: i16, bytes: &[u8], json: &str) -> Result<Answer, String> {
        debug_assert!(!json.contains('\n'), "compact JSON has no newline");
        writeln!(self.input, "{name}\t{version}\t{}\t{json}", STANDARD.encode(bytes))
            .and_then(|()| self.input.flush())
            .map_err(|e| format!("writing to the oracle: {e}"))?;
        let line = self.read_line()?;
        let mut parts = line.splitn(4, '\t');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("ok"), Some(reencoded), Some(json), Some(from_json)) => Ok(Answer::Ok {
                reencoded: decode64(reencoded)?,
                json: json.to_string(),
                from_json: decode64(from_json)?,
            }),
            (Some("error"), Some(stage), message, _) => {
                Ok(Answer::Refused { stage: stage.to_string(), message: message.unwrap_or_default().to_string() })
            }
            _ => Err(format!("the oracle answered {line:?}")),
        }
    }

    fn read_line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(0) => Err("the oracle exited (its standard error is above)".to_string()),
            Ok(_) => Ok(line.trim_end_matches('\n').to_string()),
            Err(e) => Err(format!("reading from the oracle: {e}")),
        }
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn decode64(text: &str) -> Result<Vec<u8>, String> {
    STANDARD.decode(text).map_err(|e| format!("the oracle sent bad base64: {e}"))
}
