//! The CLI over Apache Kafka's own jars (`scripts/kafka-release --minors`, which `.ci/run`
//! runs): every minor release from 2.2 to 4.4 generates from its kafka-clients jar, `generate`
//! reads kafka-clients-4.4.0.jar in place and writes what the same schemas give from a folder,
//! `diff` compares two releases' jars, `explain` reads a jar's schemas.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap().to_path_buf()
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kwire-codegen")).args(args).output().expect("runs the CLI")
}

/// The jar of `version`, or `None` outside CI when it has not been fetched.
fn kafka_clients(version: &str) -> Option<PathBuf> {
    let jar = workspace().join("target/kafka").join(version).join(format!("kafka-clients-{version}.jar"));
    if jar.is_file() {
        return Some(jar);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing (.ci/run fetches it with scripts/kafka-release --minors)",
        jar.display()
    );
    eprintln!("skipped: {} not fetched (scripts/kafka-release --clients {version})", jar.display());
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
    let (Some(old), Some(new)) = (kafka_clients("4.0.2"), kafka_clients("4.4.0")) else { return };
    let run = cli(&["diff", "--old", old.to_str().unwrap(), "--new", new.to_str().unwrap()]);
    let out = text(&run);
    assert!(matches!(run.status.code(), Some(0 | 1)), "{out}");
    let summary = out.lines().last().unwrap_or_default();
    assert!(summary.starts_with("kafka-clients-4.0.2 -> kafka-clients-4.4.0: "), "{out}");
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

/// The releases of `conformance/minor-releases.txt`: the newest patch of each minor, 2.2 to 4.4.
fn minor_releases() -> Vec<String> {
    let list = std::fs::read_to_string(workspace().join("conformance/minor-releases.txt")).unwrap();
    list.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).map(str::to_string).collect()
}

#[test]
fn every_minor_release_from_2_2_to_4_4_generates_from_its_jar() {
    let releases = minor_releases();
    assert_eq!(
        (releases.first().map(String::as_str), releases.last().map(String::as_str)),
        (Some("2.2.2"), Some("4.4.0"))
    );
    let dir = tempfile::tempdir().unwrap();
    let mut apis_by_release = Vec::new();
    for release in &releases {
        let Some(jar) = kafka_clients(release) else { continue };
        let out = dir.path().join(release);
        let run = cli(&["generate", "--schemas", jar.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        let said = text(&run);
        assert!(run.status.success(), "Kafka {release}: {said}");
        // "N files: M schemas, K APIs…"
        let apis: usize = said
            .split(" APIs")
            .next()
            .and_then(|head| head.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("Kafka {release}: no API count in {said}"));
        assert!(out.join("mod.rs").is_file() && out.join("fetch_request.rs").is_file(), "Kafka {release}");
        println!("Kafka {release}: {}", said.lines().next().unwrap_or_default());
        apis_by_release.push((release.clone(), apis));
    }
    // Kafka only adds APIs between minors (4.0 retired four, whose stubs stay and are counted apart).
    let counts: Vec<usize> = apis_by_release.iter().map(|(_, n)| *n).collect();
    if let (Some(first), Some(last)) = (counts.first(), counts.last()) {
        assert!(last > first, "{apis_by_release:?}");
    }
}
