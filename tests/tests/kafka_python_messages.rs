//! Golden bytes from an independent implementation: kafka-python 3.x.
//!
//! `tests/python/messages_golden.py` fills every request and response of kafka-python's two
//! codecs (`kafka.protocol`, driven by its own copy of Kafka's JSON schemas, and
//! `kafka.protocol.old`, its hand-written per-version Structs), at every version they encode
//! that this build also supports, with non-trivial values (non-ASCII strings, nulls, several
//! array elements, extreme numbers, known and unknown tagged fields, real record batches)
//! and prints the bytes kafka-python writes: bodies, and whole request and response frames.
//! Our generated code must decode each one completely, re-encode it byte for byte, and
//! report the encoded size exactly.
//!
//! In the other direction, our encoding of seed 001's smallest legal instance of every
//! message and version must equal kafka-python's, and decode in kafka-python to exactly that
//! instance.
//!
//! The interpreter comes from `KWIRE_PYTHON` (a python3 with kafka-python installed,
//! as `.ci/run` sets up). Without it the tests fail under `CI` and are skipped elsewhere.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use bytes::{Bytes, BytesMut};
use kwire::messages::{ApiKey, RequestFrame, RequestKind, ResponseFrame, ResponseKind};
use kwire_codegen::ir::Message;
use kwire_tests::sample::{self, Mode};
use serde_json::Value;

/// Floors on what the golden run covers, so a broken script or a shrinking kafka-python
/// cannot silently turn the test into a no-op. Against Kafka 4.4.0's schemas, which dropped
/// the versions older than Kafka 2.1 (KIP-896: Produce v0-v2, Fetch v0-v3, ...), kafka-python
/// 3.0.12 gives 52 APIs at 239 api versions: from `kafka.protocol`, two value sets each (956
/// bodies) and 244 frames; from `kafka.protocol.old`, 229 bodies (273 against Kafka 3.9's,
/// whose extra ones are the dropped versions).
const MIN_BODY_CASES: usize = 900;
const MIN_APIS: usize = 45;
const MIN_FRAMES: usize = 200;
const MIN_LEGACY_CASES: usize = 210;
const MIN_MINIMAL_CASES: usize = 450;

/// kafka-python's JSON-schema-driven codec.
const SOURCE_JSON: &str = "kafka.protocol";
/// kafka-python's hand-written per-version Structs (its 2.x protocol definitions).
const SOURCE_OLD: &str = "kafka.protocol.old";

/// The python interpreter to use, or `None` (after a notice) when the test should be skipped.
fn python() -> Option<PathBuf> {
    match std::env::var_os("KWIRE_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            if std::env::var_os("CI").is_some() {
                panic!("KWIRE_PYTHON must name a python3 with kafka-python installed when CI is set");
            }
            eprintln!("notice: KWIRE_PYTHON is not set; skipping the kafka-python golden tests");
            None
        }
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("python").join("messages_golden.py")
}

/// `{"<api key>": [min, max], ...}` for every API this build knows: the script emits only
/// those versions.
fn supported_versions() -> String {
    let map: serde_json::Map<String, Value> = ApiKey::ALL
        .iter()
        .filter_map(|api| {
            let range = api.valid_versions()?;
            Some((api.key().to_string(), Value::from(vec![range.min, range.max])))
        })
        .collect();
    Value::Object(map).to_string()
}

/// Runs the script with `stdin` and returns its stdout. Panics if it cannot run, prints
/// nothing, or (unless `allow_failure`, for modes whose output says what failed) exits non-zero.
fn run_script(python: &Path, args: &[&str], stdin: &str, allow_failure: bool) -> String {
    let mut child = Command::new(python)
        .arg(script())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {} {}: {e}", python.display(), script().display()));
    {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        pipe.write_all(stdin.as_bytes()).expect("write to the script's stdin");
    }
    let out = child.wait_with_output().expect("wait for the script");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8(out.stdout).expect("the script prints UTF-8");
    if stdout.trim().is_empty() || !(out.status.success() || allow_failure) {
        panic!("{} {args:?} failed ({}):\n{stderr}\n{}", script().display(), out.status, tail(&stdout, 40));
    }
    eprint!("{stderr}");
    stdout
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Request,
    Response,
    RequestFrame,
    ResponseFrame,
}

impl Kind {
    fn parse(s: &str) -> Kind {
        match s {
            "request" => Kind::Request,
            "response" => Kind::Response,
            "request_frame" => Kind::RequestFrame,
            "response_frame" => Kind::ResponseFrame,
            other => panic!("unknown case kind {other:?}"),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Response => "response",
            Kind::RequestFrame => "request_frame",
            Kind::ResponseFrame => "response_frame",
        }
    }

    fn is_frame(self) -> bool {
        matches!(self, Kind::RequestFrame | Kind::ResponseFrame)
    }
}

/// One golden case: bytes kafka-python wrote for a message at a version.
struct Case {
    kind: Kind,
    api_key: i16,
    version: i16,
    /// Which kafka-python implementation wrote it: `kafka.protocol` (its JSON-schema-driven
    /// codec) or `kafka.protocol.old` (its hand-written per-version Structs).
    source: String,
    /// Which of the script's value sets (0 or 1) for this API version.
    variant: i64,
    name: String,
    bytes: Vec<u8>,
}

impl Case {
    fn label(&self) -> String {
        format!(
            "{} v{} ({}, api key {}, {} value set {})",
            self.name,
            self.version,
            self.kind.as_str(),
            self.api_key,
            self.source,
            self.variant
        )
    }
}

/// The script's output: golden cases, and kafka-python definitions it left out (with why).
struct Listing {
    cases: Vec<Case>,
    excluded: Vec<String>,
}

fn parse_cases(stdout: &str) -> Listing {
    let mut listing = Listing { cases: Vec::new(), excluded: Vec::new() };
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("bad JSON line from the script ({e}): {line}"));
        let field = |k: &str| v.get(k).unwrap_or_else(|| panic!("case without {k:?}: {line}"));
        let int = |k: &str| {
            let n = field(k).as_i64().unwrap_or_else(|| panic!("{k:?} is not an integer: {line}"));
            i16::try_from(n).unwrap_or_else(|_| panic!("{k:?} out of range: {line}"))
        };
        let text = |k: &str| field(k).as_str().unwrap_or_else(|| panic!("{k:?} is not a string: {line}")).to_string();
        if text("kind") == "excluded" {
            listing.excluded.push(format!("{} ({}): {}", text("name"), text("source"), text("reason")));
            continue;
        }
        listing.cases.push(Case {
            kind: Kind::parse(&text("kind")),
            api_key: int("api_key"),
            version: int("version"),
            source: text("source"),
            variant: v.get("variant").and_then(Value::as_i64).unwrap_or(0),
            name: text("name"),
            bytes: hex::decode(text("hex")).unwrap_or_else(|e| panic!("bad hex ({e}): {line}")),
        });
    }
    listing
}

/// Where two byte strings first differ, with both in hex around that point.
fn hex_diff(expected: &[u8], actual: &[u8]) -> String {
    let first = expected.iter().zip(actual).position(|(a, b)| a != b).unwrap_or(expected.len().min(actual.len()));
    let from = first.saturating_sub(16);
    let window = |b: &[u8]| hex::encode(&b[from.min(b.len())..(first + 32).min(b.len())]);
    format!(
        "lengths: expected {} bytes, got {}; first difference at byte {first}\n    expected[{from}..]: {}\n    actual  [{from}..]: {}\n    expected (full): {}\n    actual   (full): {}",
        expected.len(),
        actual.len(),
        window(expected),
        window(actual),
        hex::encode(expected),
        hex::encode(actual),
    )
}

fn api(key: i16) -> Result<ApiKey, String> {
    ApiKey::from_key(key).ok_or_else(|| format!("api key {key} is not in this build"))
}

/// Decodes `bytes` completely as the body of `api` at `version`, then encodes it again.
/// Returns our encoding and the encoded size we report.
fn body_roundtrip(kind: Kind, api: ApiKey, version: i16, bytes: &[u8]) -> Result<(Vec<u8>, usize), String> {
    let mut input = Bytes::copy_from_slice(bytes);
    let mut out = BytesMut::new();
    let size = match kind {
        Kind::Request => {
            let body = RequestKind::decode(api, &mut input, version).map_err(|e| format!("decode failed: {e}"))?;
            check_consumed(&input, bytes)?;
            body.encode(&mut out, version).map_err(|e| format!("encode failed: {e}"))?;
            body.encoded_size(version).map_err(|e| format!("encoded_size failed: {e}"))?
        }
        Kind::Response => {
            let body = ResponseKind::decode(api, &mut input, version).map_err(|e| format!("decode failed: {e}"))?;
            check_consumed(&input, bytes)?;
            body.encode(&mut out, version).map_err(|e| format!("encode failed: {e}"))?;
            body.encoded_size(version).map_err(|e| format!("encoded_size failed: {e}"))?
        }
        _ => unreachable!("frames go through frame_roundtrip"),
    };
    Ok((out.to_vec(), size))
}

fn check_consumed(rest: &Bytes, all: &[u8]) -> Result<(), String> {
    if rest.is_empty() {
        Ok(())
    } else {
        Err(format!("decode left {} of {} bytes unread: {}", rest.len(), all.len(), hex::encode(rest)))
    }
}

/// Decodes a whole frame (bytes after the size prefix) and encodes it again; returns the
/// re-encoded frame without its size prefix, after checking that prefix.
fn frame_roundtrip(case: &Case, api: ApiKey) -> Result<Vec<u8>, String> {
    let frame = Bytes::copy_from_slice(&case.bytes);
    let mut out = BytesMut::new();
    match case.kind {
        Kind::RequestFrame => {
            let decoded = RequestFrame::decode(frame).map_err(|e| format!("frame decode failed: {e}"))?;
            if decoded.header.request_api_key != case.api_key || decoded.header.request_api_version != case.version {
                return Err(format!(
                    "header names api key {} v{}",
                    decoded.header.request_api_key, decoded.header.request_api_version
                ));
            }
            if decoded.body.api_key() != api {
                return Err(format!("body decoded as {:?}", decoded.body.api_key()));
            }
            decoded.encode(&mut out).map_err(|e| format!("frame encode failed: {e}"))?;
        }
        Kind::ResponseFrame => {
            let decoded =
                ResponseFrame::decode(frame, api, case.version).map_err(|e| format!("frame decode failed: {e}"))?;
            decoded.encode(&mut out, case.version).map_err(|e| format!("frame encode failed: {e}"))?;
        }
        _ => unreachable!("bodies go through body_roundtrip"),
    }
    if out.len() < 4 {
        return Err(format!("encoded frame is only {} bytes", out.len()));
    }
    let size = i32::from_be_bytes([out[0], out[1], out[2], out[3]]);
    if usize::try_from(size).ok() != Some(out.len() - 4) {
        return Err(format!("size prefix {size} but {} bytes follow", out.len() - 4));
    }
    Ok(out[4..].to_vec())
}

/// Checks one case; `Err` carries a message naming the case.
fn check_case(case: &Case) -> Result<(), String> {
    let label = case.label();
    let api = api(case.api_key).map_err(|e| format!("{label}: {e}"))?;
    if !case.kind.is_frame() {
        let (ours, size) =
            body_roundtrip(case.kind, api, case.version, &case.bytes).map_err(|e| format!("{label}: {e}"))?;
        if ours != case.bytes {
            return Err(format!(
                "{label}: re-encoding differs from kafka-python's bytes\n  {}",
                hex_diff(&case.bytes, &ours)
            ));
        }
        if size != ours.len() {
            return Err(format!("{label}: encoded_size says {size} but encode wrote {}", ours.len()));
        }
    } else {
        let ours = frame_roundtrip(case, api).map_err(|e| format!("{label}: {e}"))?;
        if ours != case.bytes {
            return Err(format!(
                "{label}: re-encoded frame differs from kafka-python's\n  {}",
                hex_diff(&case.bytes, &ours)
            ));
        }
    }
    Ok(())
}

#[test]
fn kafka_python_bytes_decode_and_reencode_exactly() {
    let Some(python) = python() else { return };
    let stdout = run_script(&python, &["encode", "--supported", &supported_versions()], "", false);
    let Listing { cases, excluded } = parse_cases(&stdout);
    // kafka-python definitions that contradict Kafka's schema are reported, not checked.
    for reason in &excluded {
        println!("excluded (kafka-python disagrees with Kafka's schema): {reason}");
    }

    let mut failures = Vec::new();
    let mut apis = BTreeSet::new();
    let mut api_versions = BTreeSet::new();
    let mut counts: BTreeMap<(&str, Kind), usize> = BTreeMap::new();
    for case in &cases {
        *counts.entry((case.source.as_str(), case.kind)).or_default() += 1;
        apis.insert(case.api_key);
        api_versions.insert((case.api_key, case.version));
        if let Err(e) = check_case(case) {
            failures.push(e);
        }
    }
    let count = |source: &str, kinds: &[Kind]| -> usize {
        kinds.iter().map(|k| counts.get(&(source, *k)).copied().unwrap_or(0)).sum()
    };
    let per_source: Vec<String> = [SOURCE_JSON, SOURCE_OLD]
        .iter()
        .map(|src| {
            format!(
                "{src}: {} requests, {} responses, {} request frames, {} response frames",
                count(src, &[Kind::Request]),
                count(src, &[Kind::Response]),
                count(src, &[Kind::RequestFrame]),
                count(src, &[Kind::ResponseFrame]),
            )
        })
        .collect();
    println!(
        "kafka-python golden bytes: {} cases over {} APIs and {} api versions, {} failed, {} excluded ({})",
        cases.len(),
        apis.len(),
        api_versions.len(),
        failures.len(),
        excluded.len(),
        per_source.join("; "),
    );
    assert!(
        failures.is_empty(),
        "{} of {} kafka-python cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
    let bodies = count(SOURCE_JSON, &[Kind::Request, Kind::Response]);
    let frames = count(SOURCE_JSON, &[Kind::RequestFrame, Kind::ResponseFrame]);
    let legacy = count(SOURCE_OLD, &[Kind::Request, Kind::Response]);
    assert!(bodies >= MIN_BODY_CASES, "only {bodies} {SOURCE_JSON} body cases (expected at least {MIN_BODY_CASES})");
    assert!(frames >= MIN_FRAMES, "only {frames} frames (expected at least {MIN_FRAMES})");
    assert!(legacy >= MIN_LEGACY_CASES, "only {legacy} {SOURCE_OLD} cases (expected at least {MIN_LEGACY_CASES})");
    assert!(apis.len() >= MIN_APIS, "only {} APIs covered (expected at least {MIN_APIS})", apis.len());
    // Every API version of the JSON-driven codec has both directions.
    for case in cases.iter().filter(|c| c.source == SOURCE_JSON) {
        for kind in [Kind::Request, Kind::Response] {
            assert!(
                cases.iter().any(|c| c.source == SOURCE_JSON
                    && c.kind == kind
                    && c.api_key == case.api_key
                    && c.version == case.version),
                "{}: no {} case at this version",
                case.label(),
                kind.as_str()
            );
        }
    }
}

/// Our encoding of a message decoded from the IR-driven sample encoder's minimal instance.
/// The schema is found by our API name (kafka-python may name an API differently, e.g. its
/// ListConfigResources is our corpus's ListClientMetricsResources, same bytes at v0).
fn our_minimal_encoding(
    schemas: &mut HashMap<String, Message>,
    kind: Kind,
    api: ApiKey,
    version: i16,
) -> Result<Vec<u8>, String> {
    let name = format!("{}{}", api.name(), if kind == Kind::Request { "Request" } else { "Response" });
    if !schemas.contains_key(&name) {
        let entry = kwire_tests::SCHEMAS
            .iter()
            .find(|e| e.set == "message" && e.name == name)
            .ok_or_else(|| format!("no schema named {name} in the corpus table"))?;
        schemas.insert(name.clone(), entry.load());
    }
    let minimal = sample::encode(&schemas[&name], version, Mode::Minimal);
    let (ours, size) = body_roundtrip(kind, api, version, &minimal)?;
    if size != ours.len() {
        return Err(format!("encoded_size says {size} but encode wrote {}", ours.len()));
    }
    Ok(ours)
}

#[test]
fn kafka_python_decodes_our_encoding_of_minimal_instances() {
    let Some(python) = python() else { return };
    // kafka-python lists the cases (same APIs and versions as the golden run) with its own
    // encoding of the minimal instance; we build ours from the IR-driven sample encoder's
    // minimal bytes through our decoder and encoder, compare, and send ours back.
    let listing =
        run_script(&python, &["encode", "--values", "minimal", "--supported", &supported_versions()], "", false);
    let mut input = String::new();
    let mut failures = Vec::new();
    let mut sent = 0usize;
    let mut schemas = HashMap::new();
    for case in parse_cases(&listing).cases.iter().filter(|c| !c.kind.is_frame()) {
        let label = case.label();
        let result = api(case.api_key).and_then(|api| our_minimal_encoding(&mut schemas, case.kind, api, case.version));
        match result {
            Ok(ours) => {
                // kafka-python's own encoding of the same instance must be the same bytes.
                if ours != case.bytes {
                    failures.push(format!(
                        "{label}: our minimal encoding differs from kafka-python's\n  {}",
                        hex_diff(&case.bytes, &ours)
                    ));
                }
                let line = serde_json::json!({
                    "kind": case.kind.as_str(),
                    "api_key": case.api_key,
                    "version": case.version,
                    "variant": case.variant,
                    "name": case.name,
                    "hex": hex::encode(&ours),
                });
                input.push_str(&line.to_string());
                input.push('\n');
                sent += 1;
            }
            Err(e) => failures.push(format!("{label}: {e}")),
        }
    }
    // The script exits non-zero when any case fails; read its per-case verdicts either way.
    let verdicts = run_script(&python, &["decode", "--values", "minimal"], &input, true);
    let mut checked = 0usize;
    for line in verdicts.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("bad verdict line ({e}): {line}"));
        if v.get("summary").is_some() {
            continue;
        }
        checked += 1;
        if v.get("ok") != Some(&Value::Bool(true)) {
            failures.push(format!(
                "{} v{} ({}): kafka-python: {}",
                v["name"].as_str().unwrap_or("?"),
                v["version"],
                v["kind"].as_str().unwrap_or("?"),
                v["detail"].as_str().unwrap_or("?")
            ));
        }
    }
    println!(
        "kafka-python decoded our encoding of {checked} minimal instances ({sent} sent), {} problems",
        failures.len()
    );
    assert!(failures.is_empty(), "{} failures:\n\n{}", failures.len(), failures.join("\n\n"));
    assert_eq!(checked, sent, "the script answered {checked} of {sent} cases");
    assert!(checked >= MIN_MINIMAL_CASES, "only {checked} minimal cases (expected at least {MIN_MINIMAL_CASES})");
}
