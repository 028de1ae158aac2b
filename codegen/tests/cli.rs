//! The `kafka-wire-codegen` CLI as a user runs it: generate, check, and schema errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kafka-wire-codegen")).args(args).output().expect("runs the CLI")
}

fn kafka_messages() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    kafka_wire_codegen::locate_kafka_schemas(&root).expect("Kafka's schemas")
}

fn read_all(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn generate_then_check_the_whole_corpus_deterministically() {
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().join("corpus-out");
    let schemas = kafka_messages();
    let args = ["generate", "--schemas", schemas.to_str().unwrap(), "--out", out_dir.to_str().unwrap()];
    let first = cli(&args);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let summary = String::from_utf8_lossy(&first.stdout);
    assert!(summary.contains("186 schemas"), "{summary}");
    let before = read_all(&out_dir);
    assert_eq!(before.len(), 187);

    let second = cli(&args);
    assert!(second.status.success());
    assert!(String::from_utf8_lossy(&second.stdout).contains("0 written, 187 unchanged"));
    assert_eq!(read_all(&out_dir), before, "a second run changed bytes");

    let mut check_args = args;
    check_args[0] = "check";
    assert!(cli(&check_args).status.success());

    // A stale folder fails `check`, naming the file.
    std::fs::write(out_dir.join("fetch_request.rs"), "// edited\n").unwrap();
    let stale = cli(&check_args);
    assert!(!stale.status.success());
    assert!(String::from_utf8_lossy(&stale.stderr).contains("changed: fetch_request.rs"));
}

/// Each broken schema: the CLI exits non-zero naming the file, the field and the rule.
#[test]
fn schema_rule_violations_fail_naming_file_field_and_rule() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "duplicate tag",
            r#"{ "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0 },
               { "name": "Dup", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0 }"#,
            "Dup",
        ),
        (
            "nullable int32",
            r#"{ "name": "Count", "type": "int32", "versions": "0+", "nullableVersions": "0+" }"#,
            "Count",
        ),
        (
            "tagged versions outside versions",
            r#"{ "name": "Late", "type": "int32", "versions": "2+", "taggedVersions": "0+", "tag": 0 }"#,
            "Late",
        ),
        ("unknown type", r#"{ "name": "Odd", "type": "varint", "versions": "0+" }"#, "Odd"),
        ("bad default", r#"{ "name": "Small", "type": "int8", "versions": "0+", "default": "300" }"#, "Small"),
    ];
    for (what, fields, field) in cases {
        let dir = tempfile::tempdir().unwrap();
        let schema = format!(
            r#"{{ "type": "data", "name": "BrokenData", "validVersions": "0-2", "flexibleVersions": "0+", "fields": [ {fields} ] }}"#
        );
        std::fs::write(dir.path().join("BrokenData.json"), schema).unwrap();
        let out = dir.path().join("out");
        let result = cli(&["generate", "--schemas", dir.path().to_str().unwrap(), "--out", out.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(!result.status.success(), "{what}: generate succeeded");
        assert!(stderr.contains("BrokenData.json"), "{what}: no file name in {stderr}");
        assert!(stderr.contains(field), "{what}: field {field} not named in {stderr}");
        assert!(stderr.contains("(rule "), "{what}: no rule in {stderr}");
        assert!(!out.exists(), "{what}: output written despite errors");
    }
}

#[test]
fn help_describes_the_commands() {
    let help = cli(&["--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(help.status.success());
    assert!(text.contains("generate") && text.contains("check"), "{text}");
    let sub = String::from_utf8_lossy(&cli(&["generate", "--help"]).stdout).into_owned();
    assert!(sub.contains("--schemas") && sub.contains("--out") && sub.contains("--runtime-path"), "{sub}");
}
