//! The error table (`runtime/src/error_code/table.rs`) is rendered from Kafka's own `Errors`
//! enum, as Apache Kafka 4.4.0's kafka-clients jar defines it (printed by `ErrorList` of
//! `conformance/kafka-java`, which `scripts/kafka-release` builds); this test renders it again
//! and fails when the committed file differs, naming the command that rewrites it. It also
//! checks the type against the list.

use std::path::Path;
use std::process::Command;

use kwire_codegen::{kafka_jars_dir, DEFAULT_KAFKA_RELEASE as RELEASE};
use kwire_runtime::ErrorCode;
const TABLE: &str = "src/error_code/table.rs";
const REGENERATE: &str = "UPDATE_ERROR_CODES=1 cargo test -p kwire-runtime --test error_code_table";

/// `ErrorList`'s output: Kafka's codes as tab-separated lines under a header. `None` (the test
/// skips, except under CI) when `scripts/kafka-release` has not fetched the jars.
fn kafka_list() -> Option<String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let classes = workspace.join("target/kafka-java/classes");
    let jars = kafka_jars_dir(&workspace);
    let clients = jars.join(RELEASE).join(format!("kafka-clients-{RELEASE}.jar"));
    if !classes.join("dev/kwire/oracle/ErrorList.class").is_file() || !clients.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} or {} missing: run scripts/kafka-release",
            classes.display(),
            clients.display()
        );
        eprintln!("Kafka's jars are not fetched (scripts/kafka-release): skipped");
        return None;
    }
    let class_path = format!("{}:{}/*", classes.display(), jars.join(RELEASE).display());
    let run =
        Command::new("java").args(["-cp", &class_path, "dev.kwire.oracle.ErrorList"]).output().expect("java runs");
    assert!(run.status.success(), "ErrorList: {}", String::from_utf8_lossy(&run.stderr));
    Some(String::from_utf8(run.stdout).expect("UTF-8"))
}

struct Row {
    code: i16,
    name: String,
    retriable: bool,
    message: String,
}

fn rows(text: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert!(cols.len() >= 3, "Kafka's list: bad line {line:?}");
            Row {
                code: cols[0].parse().unwrap_or_else(|e| panic!("Kafka's list: code in {line:?}: {e}")),
                name: cols[1].to_string(),
                retriable: match cols[2] {
                    "true" => true,
                    "false" => false,
                    other => panic!("Kafka's list: retriable {other:?} in {line:?}"),
                },
                message: cols.get(3).copied().unwrap_or("").to_string(),
            }
        })
        .collect();
    rows.sort_by_key(|r| r.code);
    rows
}

fn doc_text(s: &str) -> String {
    s.chars().flat_map(|c| if matches!(c, '[' | ']' | '<' | '>' | '\\') { vec!['\\', c] } else { vec![c] }).collect()
}

fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str(&format!("// @generated from Apache Kafka {RELEASE}'s `Errors` (kafka-clients); do not edit.\n"));
    out.push_str(&format!("// Regenerate: {REGENERATE}\n\n"));
    out.push_str("use super::{ErrorCode, ErrorInfo};\n\n");
    out.push_str("impl ErrorCode {\n");
    for r in rows {
        if r.message.is_empty() {
            out.push_str(&format!("    /// `{}`.\n", r.name));
        } else {
            out.push_str(&format!("    /// {}\n", doc_text(&r.message)));
        }
        out.push_str(&format!("    pub const {}: ErrorCode = ErrorCode({});\n", r.name, r.code));
    }
    out.push_str("}\n\n");
    out.push_str("/// Every code, sorted by code (looked up by binary search).\n");
    out.push_str("pub(super) const ALL: &[ErrorInfo] = &[\n");
    for r in rows {
        out.push_str(&format!(
            "    ErrorInfo {{ code: {}, name: {:?}, retriable: {}, message: {:?} }},\n",
            r.code, r.name, r.retriable, r.message
        ));
    }
    out.push_str("];\n");
    out
}

#[test]
fn the_committed_table_is_rendered_from_kafkas_list() {
    let Some(list) = kafka_list() else { return };
    let rendered = render(&rows(&list));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TABLE);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != rendered {
        if std::env::var_os("UPDATE_ERROR_CODES").is_some() {
            std::fs::write(&path, rendered).unwrap();
        } else {
            panic!("{TABLE} is out of date with Kafka's list: run `{REGENERATE}`");
        }
    }
}

#[test]
fn every_listed_code_has_its_name_message_and_flag() {
    let Some(list) = kafka_list() else { return };
    let rows = rows(&list);
    assert!(rows.len() > 100, "Kafka defines over a hundred codes");
    assert_eq!(ErrorCode::all().len(), rows.len());
    for r in &rows {
        let e = ErrorCode::from(r.code);
        assert_eq!(e.name(), Some(r.name.as_str()));
        assert_eq!(e.message(), Some(r.message.as_str()));
        assert_eq!(e.is_retriable(), r.retriable, "{}", r.name);
        assert_eq!(i16::from(e), r.code);
    }
}

#[test]
fn known_codes_read_as_kafka_names_them() {
    assert!(ErrorCode::NONE.is_ok());
    assert_eq!(ErrorCode::NONE.ok(), Ok(()));
    assert_eq!(ErrorCode::from(6), ErrorCode::NOT_LEADER_OR_FOLLOWER);
    assert!(ErrorCode::NOT_LEADER_OR_FOLLOWER.is_retriable());
    assert!(!ErrorCode::TOPIC_AUTHORIZATION_FAILED.is_retriable());
    assert_eq!(ErrorCode::UNKNOWN_SERVER_ERROR.code(), -1);
    assert_eq!(format!("{:?}", ErrorCode(3)), "ErrorCode(3, UNKNOWN_TOPIC_OR_PARTITION)");
    assert_eq!(
        ErrorCode(3).to_string(),
        "UNKNOWN_TOPIC_OR_PARTITION (3): This server does not host this topic-partition."
    );
    assert_eq!(ErrorCode::NONE.to_string(), "NONE (0)");
    assert_eq!(ErrorCode(3).ok(), Err(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION));
}

#[test]
fn unknown_codes_survive_and_say_so() {
    let newer = ErrorCode::from(1234);
    assert!(!newer.is_known() && newer.is_err() && !newer.is_retriable());
    assert_eq!(newer.name(), None);
    assert_eq!(i16::from(newer), 1234);
    assert_eq!(newer.to_string(), "unknown error code 1234");
    assert_eq!(ErrorCode::from(i16::MIN).code(), i16::MIN);
}
