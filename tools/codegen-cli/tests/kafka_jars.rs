//! The CLI over Apache Kafka's own jars (`scripts/kafka-jars 4.0.0 4.4.0`, which `.ci/run`
//! runs): `generate` reads kafka-clients-4.4.0.jar in place and writes what the same schemas
//! give from a folder, `diff` compares two releases' jars, `explain` reads a jar's schemas.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap().to_path_buf()
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kafka-wire-codegen")).args(args).output().expect("runs the CLI")
}

/// The jar of `version`, or `None` outside CI when it has not been fetched.
fn kafka_clients(version: &str) -> Option<PathBuf> {
    let jar = workspace().join("target").join("kafka").join(format!("kafka-clients-{version}.jar"));
    if jar.is_file() {
        return Some(jar);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing (.ci/run fetches it with scripts/kafka-jars)",
        jar.display()
    );
    eprintln!("skipped: {} not fetched (scripts/kafka-jars {version})", jar.display());
    None
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn generate_reads_kafka_clients_4_4_0_in_place() {
    let Some(jar) = kafka_clients("4.4.0") else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = cli(&["generate", "--schemas", jar.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run));
    // Kafka 4.4.0's message folder: 195 live schemas, 8 retired (validVersions "none").
    assert!(text(&run).starts_with("196 files: 195 schemas, 91 APIs"), "{}", text(&run));
    let fetch = std::fs::read_to_string(out.join("fetch_request.rs")).unwrap();
    assert!(fetch.contains("from FetchRequest.json"), "headers name the schema, not the jar entry");

    // The same schemas unpacked into a folder give the same files.
    let unpacked = dir.path().join("message");
    std::fs::create_dir_all(&unpacked).unwrap();
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&jar).unwrap()).unwrap();
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let name = entry.name().unwrap().into_owned();
        if let Some(file) = name.strip_prefix("common/message/").filter(|f| f.ends_with(".json")) {
            let mut target = std::fs::File::create(unpacked.join(file)).unwrap();
            std::io::copy(&mut entry, &mut target).unwrap();
        }
    }
    let check = cli(&["check", "--schemas", unpacked.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check));
}

#[test]
fn diff_compares_two_releases_jars() {
    let (Some(old), Some(new)) = (kafka_clients("4.0.0"), kafka_clients("4.4.0")) else { return };
    let run = cli(&["diff", "--old", old.to_str().unwrap(), "--new", new.to_str().unwrap()]);
    let out = text(&run);
    assert!(matches!(run.status.code(), Some(0 | 1)), "{out}");
    let summary = out.lines().last().unwrap_or_default();
    assert!(summary.starts_with("kafka-clients-4.0.0 -> kafka-clients-4.4.0: "), "{out}");
    assert!(!summary.contains(": 0 APIs added, 0 versions added"), "4.4 adds to 4.0: {summary}");
}

#[test]
fn explain_reads_the_schemas_of_a_jar() {
    let Some(jar) = kafka_clients("4.4.0") else { return };
    let run = cli(&[
        "explain",
        "--schemas",
        jar.to_str().unwrap(),
        "--request",
        "--api",
        "ApiVersions",
        "--version",
        "4",
        "--sample",
    ]);
    assert!(run.status.success(), "{}", text(&run));
    assert!(text(&run).starts_with("ApiVersionsRequest message v4"), "{}", text(&run));
}
