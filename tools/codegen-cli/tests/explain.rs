//! `kwire-codegen explain` as a user runs it: seed 001's two trees line for line, frames
//! read from hex and files, record batches inside, JSON and HTML output, and bytes that do not
//! parse (the tree up to the failure, exit status 1).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap().to_path_buf()
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kwire-codegen")).current_dir(workspace()).args(args).output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn kafka_messages() -> String {
    kwire_codegen::locate_kafka_schemas(&workspace()).expect("Kafka's schemas").display().to_string()
}

/// Seed 001's page as text (`../shared/seeds/001_*`); the tree of each message is one line.
fn seed_001() -> String {
    let seeds = workspace().join("../shared/seeds");
    let entry = std::fs::read_dir(&seeds)
        .unwrap_or_else(|e| panic!("{}: {e}", seeds.display()))
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("001_"))
        .expect("seed 001");
    std::fs::read_to_string(entry).unwrap()
}

/// Checks our tree against the seed's, line by line. The seed's page text has the tree's
/// lines run together with their white space collapsed; each of our lines, its white space
/// collapsed the same way, must be the next part of it, and nothing may be left over.
fn assert_tree_matches_seed(ours: &str, seed_line: &str) {
    let mut rest = seed_line.trim();
    for (n, line) in ours.lines().enumerate() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            rest.starts_with(&line),
            "line {} differs\n  ours: {line}\n  seed: {}",
            n + 1,
            &rest[..rest.len().min(line.len() + 40)]
        );
        rest = rest[line.len()..].trim_start();
    }
    assert!(rest.is_empty(), "the seed's tree goes on: {}", &rest[..rest.len().min(120)]);
}

fn seed_tree(name: &str) -> String {
    let seed = seed_001();
    let start = format!("{name} message v4");
    seed.lines().find(|l| l.starts_with(&start)).unwrap_or_else(|| panic!("seed 001 has no {start} tree")).to_string()
}

/// `explain --sample --frame` of seed 001's message (BrokerRegistration v4) in `schemas/`.
fn seed_sample(side: &str, extra: &[&str]) -> Output {
    let args = [
        "explain",
        "--schemas",
        "schemas",
        side,
        "--api",
        "BrokerRegistration",
        "--version",
        "4",
        "--sample",
        "--frame",
    ];
    cli(&[&args[..], extra].concat())
}

#[test]
fn sample_request_frame_is_seed_001s_tree() {
    let out = seed_sample("--request", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = stdout(&out);
    assert!(text.starts_with("BrokerRegistrationRequest message v4 [0x0000, 79B]\n"), "{text}");
    assert!(text.contains("size int32 = 75 [0x0000, 4B]"), "{text}");
    let seed = seed_tree("BrokerRegistrationRequest");
    assert_eq!(text.lines().count(), seed.matches("+--").count() + 1, "one line per node of the seed");
    assert_tree_matches_seed(&text, &seed);
}

#[test]
fn sample_response_frame_is_seed_001s_tree() {
    let out = seed_sample("--response", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = stdout(&out);
    assert!(text.starts_with("BrokerRegistrationResponse message v4 [0x0000, 24B]\n"), "{text}");
    assert_tree_matches_seed(&text, &seed_tree("BrokerRegistrationResponse"));
}

/// The seed's 79 request bytes given as hex: the header names API and version.
const SEED_REQUEST_HEX: &str = "0000004b003e00040000000000000000\
    00000001000000000000000000000000\
    00000000020101000000000002010000\
    00000001000200000000000000000000\
    0000000000000000000000000000\
    00";

#[test]
fn a_request_frame_from_hex_needs_no_api_or_version() {
    let out = cli(&["explain", "--schemas", "schemas", "--request", "--frame", "--hex", SEED_REQUEST_HEX]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = stdout(&out);
    // Not a sample: the element count is worded plainly.
    assert!(text.contains("length uvarint = 2 (compact, n+1) [0x0024, 1B] one element follows"), "{text}");
    assert!(text.contains("PreviousBrokerEpoch int64 = 0 [0x0046, 8B]"), "{text}");
}

/// `explain` of BrokerRegistration (key 62) v4 request bytes given as hex.
fn explain_62_v4(frame: bool, hex: &str) -> Output {
    let args = ["explain", "--schemas", "schemas", "--request", "--api", "62", "--version", "4", "--hex", hex];
    cli(&[&args[..], if frame { &["--frame"][..] } else { &[] }].concat())
}

#[test]
fn truncated_bytes_show_the_tree_up_to_the_failure_and_exit_1() {
    // Cut inside the IncarnationId uuid (which starts at 0x14).
    let cut = &SEED_REQUEST_HEX[..(0x18 * 2)];
    let out = explain_62_v4(true, cut);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("ClusterId string = \"\" (compact, len+1=1) [0x0013, 1B]"), "{text}");
    assert!(text.contains("!! malformed"), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("frame declares 75 bytes, 20 follow"), "{stderr}");

    // Inside the frame's size, the body runs short: the failure names the field and offset.
    let body_cut = &SEED_REQUEST_HEX[8..(0x18 * 2)];
    let out = cli(&[
        "explain",
        "--schemas",
        "schemas",
        "--request",
        "--api",
        "62",
        "--version",
        "4",
        "--hex",
        &body_cut[22..],
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("IncarnationId"), "{text}");
    assert!(text.contains("!! malformed [0x0005]"), "{text}");
}

#[test]
fn unknown_apis_and_unreadable_input_exit_2() {
    let out = cli(&["explain", "--schemas", "schemas", "--request", "--api", "Nope", "--version", "0", "--hex", "00"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no request schema for API Nope"));
    let out = explain_62_v4(false, "0g");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn produce_records_are_explained_batch_by_batch() {
    let messages = kafka_messages();
    let out = cli(&[
        "explain",
        "--schemas",
        &messages,
        "--request",
        "--api",
        "Produce",
        "--version",
        "9",
        "--sample",
        "--frame",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = stdout(&out);
    for want in [
        "Records records = 1 batch",
        "RecordBatch[0] RecordBatch v2 = 0 records",
        "batchLength int32 = 49",
        "magic int8 = 2",
        "(valid)",
        "attributes int16 = 0 (none, CreateTime)",
        "recordCount int32 = 0",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn json_and_html_formats() {
    let json = seed_sample("--request", &["--format", "json"]);
    assert!(json.status.success());
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["size"], 79);
    assert_eq!(value["header"]["requestApiKey"], 62);
    assert_eq!(value["message"]["listeners"][0]["port"], 0);
    assert_eq!(value["message"]["rack"], "");
    assert_eq!(value["tree"]["children"][2]["children"][0]["label"], "BrokerId");
    assert_eq!(value["tree"]["children"][2]["children"][0]["offset"], 15);

    let html = seed_sample("--request", &["--format", "html"]);
    assert!(html.status.success());
    let page = stdout(&html);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<td class=").count(), 79, "one cell per byte");
    assert!(page.contains("79 bytes on the wire"));
    assert!(page.contains("&quot;apiKey&quot;: 62"), "the schema's text is on the page");
    assert!(!page.contains("http://") && !page.contains("https://"), "no external resources");
}

#[test]
fn raw_bytes_from_stdin_and_from_a_file() {
    use std::io::Write as _;
    let raw: Vec<u8> = (0..SEED_REQUEST_HEX.len() / 2)
        .map(|i| u8::from_str_radix(&SEED_REQUEST_HEX[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire-codegen"))
        .current_dir(workspace())
        .args(["explain", "--schemas", "schemas", "--request", "--frame"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&raw).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let from_stdin = stdout(&out);
    assert!(from_stdin.starts_with("BrokerRegistrationRequest message v4 [0x0000, 79B]"), "{from_stdin}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("request.bin");
    std::fs::write(&file, [&raw[..], &raw[..]].concat()).unwrap();
    let out = cli(&["explain", "--schemas", "schemas", "--request", "--frame", "--file", file.to_str().unwrap()]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert_eq!(text.matches("BrokerRegistrationRequest message v4 [0x0000, 79B]").count(), 2, "two frames in a row");
    // Each frame says which it is and where it starts; its tree is the same as alone.
    assert!(text.starts_with("frame 1 of 2, at byte 0 (0x0000) of the input:\n"), "{text}");
    assert!(text.contains("\nframe 2 of 2, at byte 79 (0x004f) of the input:\n"), "{text}");
    let first = text.lines().skip(1).take(from_stdin.lines().count()).collect::<Vec<_>>().join("\n");
    assert_eq!(first, from_stdin.trim_end(), "the same tree from a file");
}
