//! The library front-end: `Config` builds files in memory, filters APIs, names the runtime
//! path, and writes only what changed.

use std::fs;

use kwire_codegen::{Config, Error, IndexLayout, MessagePart};

const PING_REQUEST: &str = r#"{ "apiKey": 500, "type": "request", "name": "PingRequest", "validVersions": "0-1",
  "flexibleVersions": "1+", "fields": [ { "name": "Nonce", "type": "int64", "versions": "0+" } ] }"#;
const PING_RESPONSE: &str = r#"{ "apiKey": 500, "type": "response", "name": "PingResponse", "validVersions": "0-1",
  "flexibleVersions": "1+", "fields": [ { "name": "Nonce", "type": "int64", "versions": "0+" } ] }"#;
const ECHO_REQUEST: &str = r#"// comments are allowed
{ "apiKey": 501, "type": "request", "name": "EchoRequest", "validVersions": "0",
  "flexibleVersions": "none", "fields": [ { "name": "Text", "type": "string", "versions": "0+" } ] }"#;
const ECHO_RESPONSE: &str = r#"{ "apiKey": 501, "type": "response", "name": "EchoResponse", "validVersions": "0",
  "flexibleVersions": "none", "fields": [ { "name": "Text", "type": "string", "versions": "0+" } ] }"#;

fn schema_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("PingRequest.json", PING_REQUEST),
        ("PingResponse.json", PING_RESPONSE),
        ("EchoRequest.json", ECHO_REQUEST),
        ("EchoResponse.json", ECHO_RESPONSE),
    ] {
        fs::write(dir.path().join(name), text).unwrap();
    }
    fs::write(dir.path().join("README.md"), "not a schema").unwrap();
    dir
}

#[test]
fn generate_returns_files_in_memory() {
    let schemas = schema_dir();
    let generated = Config::new().schema_dir(schemas.path()).generate().unwrap();
    let names: Vec<&str> = generated.files.keys().map(String::as_str).collect();
    assert_eq!(names, ["echo_request.rs", "echo_response.rs", "mod.rs", "ping_request.rs", "ping_response.rs"]);
    assert_eq!((generated.messages, generated.apis, generated.versions), (4, 2, 6));
    let index = &generated.files["mod.rs"];
    assert!(index.contains("Ping = 500") && index.contains("Echo = 501"), "{index}");
    assert!(index.contains(r#"schema_module!(" Generated from `PingRequest.json`.", ping_request);"#), "{index}");
    assert!(generated.summary().starts_with("5 files: 4 schemas, 2 APIs"));
}

#[test]
fn include_apis_and_runtime_path() {
    let schemas = schema_dir();
    let generated =
        Config::new().schema_dir(schemas.path()).include_apis(["Ping"]).runtime_path("crate::rt").generate().unwrap();
    assert!(generated.files.contains_key("ping_request.rs"));
    assert!(!generated.files.contains_key("echo_request.rs"));
    assert!(generated.files["ping_request.rs"].contains("use crate::rt::__codegen as rt;"));
    let by_key = Config::new().schema_dir(schemas.path()).include_apis(["501"]).generate().unwrap();
    assert!(by_key.files.contains_key("echo_response.rs") && !by_key.files.contains_key("ping_response.rs"));
}

#[test]
fn include_layout_points_into_out_dir() {
    let schemas = schema_dir();
    let generated = Config::new()
        .schema_dir(schemas.path())
        .layout(IndexLayout::IncludeFromOutDir { subdir: "msgs".into() })
        .generate()
        .unwrap();
    let index = &generated.files["mod.rs"];
    assert!(index.contains(r#"include!(concat!(env!("OUT_DIR"), $path))"#), "{index}");
    assert!(index.contains(r#"ping_request, "/msgs/ping_request.rs""#), "{index}");
}

/// A set split over two part crates: each part has its schemas' files and the runtime's traits
/// on its APIs' types; the index over them re-exports every module from its part and has the
/// rest. The files are the whole set's files, the same bytes, whichever part writes them.
#[test]
fn a_set_split_over_parts() {
    let schemas = schema_dir();
    let parts = [MessagePart::new("::msgs_a_o", 'a'..='o'), MessagePart::new("::msgs_p_z", 'p'..='z')];
    let whole = Config::new().schema_dir(schemas.path()).generate().unwrap();
    let mut files = std::collections::BTreeMap::new();
    for part in &parts {
        let generated = Config::new().schema_dir(schemas.path()).part(part.clone()).generate().unwrap();
        let index = &generated.files["mod.rs"];
        assert!(index.contains("impl rt::Request for") && !index.contains("pub enum ApiKey"), "{index}");
        files.extend(generated.files.into_iter().filter(|(name, _)| name != "mod.rs"));
    }
    let mut whole_files = whole.files.clone();
    whole_files.remove("mod.rs");
    assert_eq!(files, whole_files);
    let ping = &Config::new().schema_dir(schemas.path()).part(parts[1].clone()).generate().unwrap().files["mod.rs"];
    assert!(ping.contains("impl rt::Request for PingRequest") && !ping.contains("EchoRequest"), "{ping}");

    let over = Config::new().schema_dir(schemas.path()).over_parts(parts.clone()).generate().unwrap();
    assert_eq!(over.files.keys().collect::<Vec<_>>(), ["mod.rs"]);
    let index = &over.files["mod.rs"];
    assert!(
        index.contains("pub use ::msgs_a_o::echo_request;") && index.contains("pub use ::msgs_p_z::ping_response;")
    );
    assert!(index.contains("pub enum ApiKey") && index.contains("impl ApiRequest for PingRequest"), "{index}");
    assert!(!index.contains("impl rt::Request for"), "{index}");
    assert_eq!((over.messages, over.apis, over.versions), (4, 2, 6));

    // Every schema in exactly one part, or the index is refused with the schemas named.
    let gap = [MessagePart::new("::msgs_a_o", 'a'..='o')];
    let refused = Config::new().schema_dir(schemas.path()).over_parts(gap).generate().unwrap_err();
    assert!(matches!(&refused, Error::Parts(p) if p.len() == 2), "{refused}");
    assert!(refused.to_string().contains("PingRequest is in no part"), "{refused}");
    let twice = [parts[0].clone(), parts[1].clone(), MessagePart::new("::again", 'e'..='e')];
    let refused = Config::new().schema_dir(schemas.path()).over_parts(twice).generate().unwrap_err();
    assert!(refused.to_string().contains("EchoRequest is in 2 parts"), "{refused}");
}

#[test]
fn write_touches_only_changed_files() {
    let schemas = schema_dir();
    let out = tempfile::tempdir().unwrap();
    let mut config = Config::new();
    config.schema_dir(schemas.path()).out_dir(out.path());
    let (_, first) = config.write().unwrap();
    assert_eq!(first.written.len(), 5);
    let (_, second) = config.write().unwrap();
    assert!(second.written.is_empty() && second.unchanged.len() == 5);
    // A schema removed: its file goes, the rest stay untouched.
    fs::remove_file(schemas.path().join("EchoRequest.json")).unwrap();
    fs::remove_file(schemas.path().join("EchoResponse.json")).unwrap();
    let (_, third) = config.write().unwrap();
    assert_eq!(third.removed, ["echo_request.rs", "echo_response.rs"]);
    assert!(config.check().is_ok());
}

#[test]
fn missing_schemas_are_a_clear_error() {
    let empty = tempfile::tempdir().unwrap();
    let err = Config::new().schema_dir(empty.path()).generate().unwrap_err();
    assert!(err.to_string().contains("no schemas found"), "{err}");
    let err = Config::new().generate().unwrap_err();
    assert!(err.to_string().contains("no schema folder"), "{err}");
}

#[test]
fn errors_read_the_same_through_debug_as_in_the_cli() {
    let schemas = schema_dir();
    fs::write(
        schemas.path().join("BadData.json"),
        r#"{ "type": "data", "name": "BadData", "validVersions": "0", "flexibleVersions": "0+", "fields": [
             { "name": "A", "type": "int32", "versions": "0+", "nullableVersions": "0+" },
             { "name": "B", "type": "varint", "versions": "0+" } ] }"#,
    )
    .unwrap();
    let err = Config::new().schema_dir(schemas.path()).generate().unwrap_err();
    let debug = format!("{err:?}");
    assert_eq!(debug, err.to_string(), "a build script's unwrap() would print a struct dump");
    let lines: Vec<&str> = debug.lines().collect();
    assert_eq!(lines[0], "invalid schemas:");
    assert_eq!(lines.len(), 3, "{debug}");
    assert!(
        lines[1].starts_with("BadData.json: $.fields[0] (A): ") && lines[1].ends_with("can be nullable)"),
        "{debug}"
    );
    assert!(lines[2].contains("$.fields[1] (B)") && lines[2].contains("(rule 17: the type is"), "{debug}");
}

#[test]
fn unknown_apis_and_strict_mode_through_the_library() {
    let schemas = schema_dir();
    let err = Config::new().schema_dir(schemas.path()).include_apis(["Ping", "Pong", "77"]).generate().unwrap_err();
    assert_eq!(err.to_string(), "no schema defines the APIs 77, Pong (did you mean Ping?)");
    // API names match whatever their case.
    let any_case = Config::new().schema_dir(schemas.path()).include_apis(["ping", "ECHO"]).generate().unwrap();
    assert!(any_case.files.contains_key("ping_request.rs") && any_case.files.contains_key("echo_request.rs"));
    fs::write(
        schemas.path().join("OldData.json"),
        r#"{ "type": "data", "name": "OldData", "validVersions": "0", "fields": [] } }"#,
    )
    .unwrap();
    let lenient = Config::new().schema_dir(schemas.path()).generate().unwrap();
    let warnings: Vec<String> = lenient.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("OldData.json: line 1, column 75: text after the top-level object"),
        "{warnings:?}"
    );
    assert!(warnings[1].starts_with("OldData.json: $: message OldData has no `flexibleVersions`"), "{warnings:?}");
    let strict = Config::new().schema_dir(schemas.path()).strict(true).generate().unwrap_err();
    assert_eq!(strict.to_string().lines().count(), 3, "{strict}");
}
