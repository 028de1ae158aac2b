//! `kwire-codegen diff` on Kafka's own history (the kafka-clients jars of 2.4.1, 2.8.2, 3.3.2,
//! 3.7.2 and the default release, 4.4.0), checked against facts read from the files independently of the tool; and synthetic
//! edits of one schema, each breaking change found with its path and versions, a rename not.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kwire_inspect::diff::{BreakingKind, Diff, Report};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap().to_path_buf()
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kwire-codegen")).args(args).output().unwrap()
}

fn current() -> PathBuf {
    kwire_codegen::locate_kafka_schemas(&workspace()).expect("Kafka's schemas")
}

/// A release's kafka-clients messages (`scripts/kafka-release --minors` fetches the jars).
fn release(name: &str) -> PathBuf {
    let source = kwire_codegen::MESSAGES.source(&kwire_codegen::kafka_jars_dir(&workspace()), name);
    let jar = kwire_codegen::source::watched_path(&source);
    assert!(jar.is_file(), "{} is missing: run scripts/kafka-release --minors", jar.display());
    source
}

fn diff(old: &Path, new: &Path, labels: (&str, &str)) -> Report {
    Diff::new(old, new).labels(labels.0, labels.1).run().unwrap_or_else(|e| panic!("{e}"))
}

/// A top-level string value of a schema file, read with a plain text search (not the tool).
fn top_level(text: &str, key: &str) -> Option<String> {
    let at = text.find(&format!("\"{key}\""))?;
    let rest = &text[at + key.len() + 2..];
    let rest = rest[rest.find(':')? + 1..].trim_start();
    if let Some(quoted) = rest.strip_prefix('"') {
        return Some(quoted[..quoted.find('"')?].to_string());
    }
    Some(rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect())
}

/// `(api key, versions)` of every request schema of a folder or jar, read as text.
fn requests(dir: &Path) -> Vec<(i16, String, BTreeSet<i16>)> {
    let mut out = Vec::new();
    for file in kwire_codegen::source::read_schemas(dir).unwrap() {
        let Some(api) = file.name.strip_suffix("Request.json") else { continue };
        let text = file.text;
        let key: i16 = top_level(&text, "apiKey").unwrap().parse().unwrap();
        let valid = top_level(&text, "validVersions").unwrap();
        let versions: BTreeSet<i16> = match valid.split_once('-') {
            _ if valid == "none" => BTreeSet::new(),
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect(),
            None => [valid.parse().unwrap()].into(),
        };
        out.push((key, api.to_string(), versions));
    }
    out.sort();
    out
}

/// The APIs added and the request versions added, from the files, against the report.
fn check_inventory(old: &Path, new: &Path, report: &Report) {
    let (before, after) = (requests(old), requests(new));
    let old_keys: BTreeSet<i16> = before.iter().map(|(k, _, _)| *k).collect();
    let added: Vec<(i16, String)> =
        after.iter().filter(|(k, _, _)| !old_keys.contains(k)).map(|(k, n, _)| (*k, n.clone())).collect();
    assert_eq!(report.apis_added, added, "{}", report.summary());
    for (key, name, versions) in &after {
        let Some((_, _, was)) = before.iter().find(|(k, _, _)| k == key) else { continue };
        let expected: Vec<i16> = versions.difference(was).copied().collect();
        let file = format!("{name}Request.json");
        let reported =
            report.changed.iter().find(|c| c.file == file).map(|c| c.versions_added.clone()).unwrap_or_default();
        assert_eq!(reported, expected, "{file}: versions added");
    }
}

#[test]
fn consecutive_releases_and_old_to_current() {
    let pairs =
        [("2.4.1", "2.8.2"), ("2.8.2", "3.3.2"), ("3.3.2", "3.7.2"), ("3.7.2", "current"), ("2.4.1", "current")];
    for (a, b) in pairs {
        let old = release(a);
        let new = if b == "current" { current() } else { release(b) };
        let report = diff(&old, &new, (a, b));
        println!("{}", report.summary());
        check_inventory(&old, &new, &report);
        let wire: Vec<_> = report.breaking.iter().filter(|x| x.kind == BreakingKind::Wire).collect();
        match (a, b) {
            // The one released layout Kafka changed here: LeaderChangeMessage v0 (a KRaft control
            // record, 2.8's KRaft was early access) gained a leading int16 Version field.
            ("2.8.2", "3.3.2") => {
                assert_eq!(wire.len(), 1, "{wire:#?}");
                assert_eq!(wire[0].file, "LeaderChangeMessage.json");
                assert_eq!(wire[0].json_path, "$.fields[0]");
                assert_eq!(wire[0].versions, "0");
                assert_eq!(wire[0].new, "Version int16");
            }
            _ => assert!(wire.is_empty(), "{a} -> {b}: {wire:#?}"),
        }
        if (a, b) == ("2.4.1", "2.8.2") {
            // Produce and Fetch's record data went from `bytes` to `records`: same bytes.
            let produce =
                report.breaking.iter().find(|x| x.file == "ProduceRequest.json" && x.what.starts_with("type"));
            let produce = produce.expect("Produce's records type change");
            assert_eq!(
                (produce.old.as_str(), produce.new.as_str(), produce.versions.as_str()),
                ("bytes", "records", "0-8")
            );
        }
        if (a, b) == ("3.3.2", "3.7.2") {
            let api_versions = report.changed.iter().find(|c| c.file == "ApiVersionsResponse.json").unwrap();
            assert_eq!(api_versions.tags_added, [("ZkMigrationReady".to_string(), 3, "3".to_string())]);
            assert!(report.breaking.is_empty(), "{:#?}", report.breaking);
        }
        if (a, b) == ("3.7.2", "current") {
            let produce = report.changed.iter().find(|c| c.file == "ProduceRequest.json").unwrap();
            assert_eq!(produce.versions_added, [11, 12, 13]);
            // Kafka 4.0 dropped Produce v0-v2 (KIP-896).
            assert_eq!(produce.versions_removed, [0, 1, 2]);
            // ConsumerGroupDescribe v0 changed while unstable in 3.7: not a breaking change.
            let cgd = report.changed.iter().find(|c| c.file == "ConsumerGroupDescribeResponse.json").unwrap();
            assert_eq!(cgd.unstable_changed, [0]);
            // The one change of the generated API: DescribeProducers' topic name became a map key.
            let breaking: Vec<_> =
                report.breaking.iter().map(|x| (x.kind, x.file.as_str(), x.field.as_str())).collect();
            assert_eq!(breaking, [(BreakingKind::Api, "DescribeProducersRequest.json", "Topics[].Name")]);
        }
    }
}

#[test]
fn exit_status_and_summary_line() {
    let (a, b) = (release("3.3.2"), release("3.7.2"));
    let run = cli(&["diff", "--old", a.to_str().unwrap(), "--new", b.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0));
    let out = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        out.lines().last(),
        Some("kafka-clients-3.3.2 -> kafka-clients-3.7.2: 7 APIs added, 21 versions added, 0 removed, 0 breaking")
    );

    let (a, b) = (release("2.8.2"), release("3.3.2"));
    let run = cli(&["diff", "--old", a.to_str().unwrap(), "--new", b.to_str().unwrap(), "--format", "json"]);
    assert_eq!(run.status.code(), Some(1), "breaking changes exit 1");
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(json["breaking"].as_array().unwrap().iter().any(|b| b["file"] == "LeaderChangeMessage.json"));
    assert!(
        json["summary"].as_str().unwrap().starts_with("kafka-clients-2.8.2 -> kafka-clients-3.3.2: "),
        "{}",
        json["summary"]
    );

    let bad = tempfile::tempdir().unwrap();
    std::fs::write(bad.path().join("Broken.json"), "{ \"name\": ").unwrap();
    let run = cli(&["diff", "--old", a.to_str().unwrap(), "--new", bad.path().to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2), "unreadable schemas exit 2");
    assert!(String::from_utf8_lossy(&run.stderr).contains("Broken.json"));
}

/// A schema of our own, edited by each synthetic test.
const REQUEST: &str = r#"{
  "apiKey": 90, "type": "request", "name": "SyntheticRequest",
  "validVersions": "0-3", "flexibleVersions": "2+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+", "about": "An id." },
    { "name": "Label", "type": "string", "versions": "0+", "nullableVersions": "1+", "about": "A label." },
    { "name": "Items", "type": "[]Item", "versions": "0+", "about": "Items.", "fields": [
      { "name": "Key", "type": "string", "versions": "0+", "mapKey": true, "about": "The key." },
      { "name": "Count", "type": "int64", "versions": "1+", "about": "How many." }
    ]},
    { "name": "Hint", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0, "default": "-1",
      "about": "A hint." },
    { "name": "Note", "type": "string", "versions": "3+", "taggedVersions": "3+", "tag": 1, "about": "A note." }
  ]
}"#;
const RESPONSE: &str = r#"{
  "apiKey": 90, "type": "response", "name": "SyntheticResponse",
  "validVersions": "0-3", "flexibleVersions": "2+",
  "fields": [ { "name": "ErrorCode", "type": "int16", "versions": "0+", "about": "The error." } ]
}"#;

fn folder(request: &str, with_response: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("SyntheticRequest.json"), request).unwrap();
    if with_response {
        std::fs::write(dir.path().join("SyntheticResponse.json"), RESPONSE).unwrap();
    }
    dir
}

/// The report of editing the request schema: `from` replaced by `to`.
fn edit(from: &str, to: &str) -> Report {
    assert!(REQUEST.contains(from), "{from}");
    let (old, new) = (folder(REQUEST, true), folder(&REQUEST.replace(from, to), true));
    diff(old.path(), new.path(), ("old", "new"))
}

fn only_breaking(report: &Report) -> &kwire_inspect::diff::Breaking {
    assert_eq!(report.breaking.len(), 1, "{:#?}", report.breaking);
    &report.breaking[0]
}

#[test]
fn a_type_changed_at_a_shipped_version() {
    let r = edit(r#""name": "Count", "type": "int64""#, r#""name": "Count", "type": "int32""#);
    let b = only_breaking(&r);
    assert_eq!(
        (b.kind, b.json_path.as_str(), b.field.as_str(), b.versions.as_str()),
        (BreakingKind::Wire, "$.fields[2].fields[1]", "Items[].Count", "1-3")
    );
    assert_eq!((b.old.as_str(), b.new.as_str()), ("Items[].Count int64", "Items[].Count int32"));
}

#[test]
fn a_tag_renumbered() {
    // Hint and Note swap tags 0 and 1.
    let swapped = REQUEST
        .replace(r#""tag": 0"#, r#""tag": 9"#)
        .replace(r#""tag": 1"#, r#""tag": 0"#)
        .replace(r#""tag": 9"#, r#""tag": 1"#);
    let (old, new) = (folder(REQUEST, true), folder(&swapped, true));
    let r = diff(old.path(), new.path(), ("old", "new"));
    let hint = r.breaking.iter().find(|b| b.field == "Hint" && b.what == "wire layout changed").expect("Hint's tag");
    assert_eq!((hint.json_path.as_str(), hint.versions.as_str()), ("$.fields[3]", "2-3"));
    assert!(hint.old.starts_with("Hint tag 0") && hint.new == "(nothing)", "{hint:?}");
    assert!(
        r.breaking.iter().any(|b| b.what == "tag 0 reused for another field" && b.field == "Note"),
        "{:#?}",
        r.breaking
    );
}

#[test]
fn a_nullable_range_narrowed() {
    let r = edit(r#""nullableVersions": "1+""#, r#""nullableVersions": "2+""#);
    let b = only_breaking(&r);
    assert_eq!((b.json_path.as_str(), b.field.as_str(), b.versions.as_str()), ("$.fields[1]", "Label", "1"));
    assert_eq!((b.old.as_str(), b.new.as_str()), ("Label nullable classic string", "Label classic string"));
}

#[test]
fn a_tagged_default_changed() {
    let r = edit(r#""default": "-1""#, r#""default": "0""#);
    let b = only_breaking(&r);
    assert_eq!((b.json_path.as_str(), b.versions.as_str()), ("$.fields[3]", "2-3"));
    assert!(b.old.ends_with("default -1") && b.new.ends_with("default 0"), "{b:?}");
}

#[test]
fn a_field_inserted_before_another() {
    let r = edit(
        r#"{ "name": "Label""#,
        r#"{ "name": "Extra", "type": "int8", "versions": "0+", "about": "New." },
    { "name": "Label""#,
    );
    let b = only_breaking(&r);
    assert_eq!((b.json_path.as_str(), b.field.as_str(), b.versions.as_str()), ("$.fields[1]", "Extra", "0-3"));
    assert_eq!(b.old, "Label classic string");
    assert!(r.changed[0].fields_added.contains(&("Extra".to_string(), "versions 0+".to_string())));
}

#[test]
fn a_pure_rename_is_not_breaking() {
    let r = edit(r#""name": "Id""#, r#""name": "Identifier""#);
    assert!(r.breaking.is_empty(), "{:#?}", r.breaking);
    assert_eq!(r.changed[0].renames, [("Id".to_string(), "Identifier".to_string(), "0-3".to_string())]);
    // Reported once, as a rename: not also as a field removed and a field added.
    assert!(r.changed[0].fields_added.is_empty() && r.changed[0].fields_removed.is_empty(), "{:#?}", r.changed[0]);
    let (old, new) =
        (folder(REQUEST, true), folder(&REQUEST.replace(r#""name": "Id""#, r#""name": "Identifier""#), true));
    let run = cli(&["diff", "--old", old.path().to_str().unwrap(), "--new", new.path().to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0));
}

#[test]
fn a_new_version_with_a_new_field_is_not_breaking() {
    let r = edit(
        r#""validVersions": "0-3", "flexibleVersions": "2+",
  "fields": ["#,
        r#""validVersions": "0-4", "flexibleVersions": "2+",
  "fields": [
    { "name": "Since4", "type": "int32", "versions": "4+", "about": "New in 4." },"#,
    );
    assert!(r.breaking.is_empty(), "{:#?}", r.breaking);
    assert_eq!(r.changed[0].versions_added, [4]);
    assert_eq!(r.changed[0].fields_added, [("Since4".to_string(), "v4".to_string())]);
    assert!(r.summary().ends_with("0 APIs added, 1 versions added, 0 removed, 0 breaking"), "{}", r.summary());
}

#[test]
fn mapkey_and_lost_response_and_retirement() {
    let r = edit(r#", "mapKey": true"#, "");
    let b = only_breaking(&r);
    assert_eq!((b.kind, b.field.as_str(), b.versions.as_str()), (BreakingKind::Api, "Items[].Key", "0-3"));

    // A request that loses its response partner: the folder breaks Kafka's rule 36, and the
    // diff says so and exits 2.
    let (old, new) = (folder(REQUEST, true), folder(REQUEST, false));
    let run = cli(&["diff", "--old", old.path().to_str().unwrap(), "--new", new.path().to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("rule 36"), "{}", String::from_utf8_lossy(&run.stderr));

    // Kafka 4.0's way of retiring an API: `validVersions: "none"` stubs. All versions removed.
    let stub = r#"{ "apiKey": 90, "type": "request", "name": "SyntheticRequest", "validVersions": "none" }"#;
    let stub_response = r#"{ "apiKey": 90, "type": "response", "name": "SyntheticResponse", "validVersions": "none" }"#;
    let new = tempfile::tempdir().unwrap();
    std::fs::write(new.path().join("SyntheticRequest.json"), stub).unwrap();
    std::fs::write(new.path().join("SyntheticResponse.json"), stub_response).unwrap();
    let r = diff(old.path(), new.path(), ("old", "new"));
    assert!(r.breaking.is_empty(), "{:#?}", r.breaking);
    assert_eq!(r.apis_removed, [(90, "Synthetic".to_string())]);
    assert!(r.schemas_removed.is_empty());
    let request = r.changed.iter().find(|c| c.file == "SyntheticRequest.json").unwrap();
    assert_eq!(request.versions_removed, [0, 1, 2, 3]);
    assert!(r.text().contains("API retired: Synthetic (key 90)"), "{}", r.text());
    assert!(r.summary().ends_with("0 APIs added, 0 versions added, 4 removed, 0 breaking"), "{}", r.summary());
}
