//! Cross-tests against kafka-python (an independent implementation): batches it builds must
//! decode here to what its own reader sees, our uncompressed encodings must match its bytes,
//! and everything we build must decode in kafka-python to the same records.
//!
//! The interpreter comes from `KWIRE_PYTHON`. Without it these tests fail when `CI` is
//! set and are skipped (with a notice) otherwise.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use bytes::Bytes;
use kwire_records::{
    Batch, BatchBuilder, BatchOptions, Compression, Header, Record, Records, RecordsExt, TimestampType,
};
use serde_json::{json, Value};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/python/records_golden.py")
}

fn python() -> Option<PathBuf> {
    match std::env::var_os("KWIRE_PYTHON") {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var_os("CI").is_some() => {
            panic!("KWIRE_PYTHON is not set; CI must run the kafka-python cross-tests")
        }
        None => {
            eprintln!("NOTICE: KWIRE_PYTHON is not set; skipping kafka-python cross-tests");
            None
        }
    }
}

/// The generated cases, produced once per test binary.
fn golden() -> Option<&'static Value> {
    static GOLDEN: OnceLock<Value> = OnceLock::new();
    let python = python()?;
    Some(GOLDEN.get_or_init(|| {
        let out = Command::new(&python).arg(script()).arg("generate").output().expect("run python");
        assert!(out.status.success(), "generate failed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("generate printed JSON")
    }))
}

/// Runs `decode` over several `records` fields at once.
fn python_decode(fields: &[Bytes]) -> Vec<Value> {
    let python = python().expect("checked by caller");
    let mut child = Command::new(python)
        .arg(script())
        .arg("decode")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python");
    let mut input = String::new();
    for field in fields {
        input.push_str(&hex::encode(field));
        input.push('\n');
    }
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).expect("write stdin"));
    let out = child.wait_with_output().expect("python decode");
    writer.join().expect("writer thread");
    assert!(out.status.success(), "decode failed: {}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("decode printed JSON"))
        .collect();
    assert_eq!(lines.len(), fields.len());
    lines
}

fn hex_or_null(b: &Option<Bytes>) -> Value {
    b.as_ref().map_or(Value::Null, |b| Value::String(hex::encode(b)))
}

fn timestamp_type_json(t: TimestampType) -> Value {
    match t {
        TimestampType::NoTimestamp => Value::Null,
        TimestampType::CreateTime => json!(0),
        TimestampType::LogAppendTime => json!(1),
    }
}

/// A record in the JSON shape records_golden.py prints.
fn record_json(record: &Record, control: bool) -> Value {
    let mut out = json!({
        "offset": record.offset,
        "timestamp": if record.timestamp_type == TimestampType::NoTimestamp { Value::Null } else { json!(record.timestamp) },
        "timestamp_type": timestamp_type_json(record.timestamp_type),
        "key": hex_or_null(&record.key),
        "value": hex_or_null(&record.value),
        "headers": record.headers.iter().map(|h| json!([hex::encode(&h.key), hex_or_null(&h.value)])).collect::<Vec<_>>(),
    });
    if control {
        let marker = record.control_marker().expect("control record");
        out["control"] = json!({"version": 0, "type": marker.kind.id()});
    }
    out
}

/// A batch in the JSON shape records_golden.py prints.
fn batch_json(batch: &Batch) -> Value {
    let records: Vec<Value> =
        batch.records().expect("records").map(|r| record_json(&r.expect("record"), batch.is_control())).collect();
    let mut out = json!({
        "magic": batch.magic(),
        "compression": batch.compression().expect("codec").name(),
        "timestamp_type": timestamp_type_json(batch.timestamp_type()),
        "crc_valid": batch.verify_crc().is_ok(),
        "records": records,
    });
    match batch {
        Batch::V2(b) => {
            let h = b.header();
            out["base_offset"] = json!(h.base_offset);
            out["partition_leader_epoch"] = json!(h.partition_leader_epoch);
            out["last_offset_delta"] = json!(h.last_offset_delta);
            out["base_timestamp"] = json!(h.base_timestamp);
            out["max_timestamp"] = json!(h.max_timestamp);
            out["producer_id"] = json!(h.producer_id);
            out["producer_epoch"] = json!(h.producer_epoch);
            out["base_sequence"] = json!(h.base_sequence);
            out["transactional"] = json!(h.attributes.is_transactional());
            out["control"] = json!(h.attributes.is_control());
            out["record_count"] = json!(h.record_count);
        }
        Batch::Legacy(b) => out["base_offset"] = json!(b.header().offset),
    }
    out
}

/// What we read from a `records` field, in records_golden.py's shape.
fn read_json(records: &Records) -> Value {
    let mut batches = Vec::new();
    let mut truncated = 0;
    for batch in records.batches() {
        match batch {
            Ok(batch) => batches.push(batch_json(&batch)),
            Err(e) if e.is_truncated() => truncated = records.len() - e.batch_position(),
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    json!({"batches": batches, "truncated_bytes": truncated})
}

fn bytes_field(v: &Value) -> Option<Vec<u8>> {
    v.as_str().map(|s| hex::decode(s).expect("hex"))
}

fn codec(name: &str) -> Compression {
    Compression::ALL.into_iter().find(|c| c.name() == name).expect("codec name")
}

/// Builds a case again from its inputs and options with our builder.
fn rebuild(case: &Value) -> Option<Bytes> {
    let o = case.get("options").filter(|o| !o.is_null())?;
    let options = BatchOptions {
        magic: o["magic"].as_i64()? as i8,
        compression: codec(o["compression"].as_str()?),
        base_offset: o["base_offset"].as_i64()?,
        partition_leader_epoch: o["partition_leader_epoch"].as_i64()? as i32,
        log_append_time: o["log_append_time"].as_i64(),
        producer_id: o["producer_id"].as_i64()?,
        producer_epoch: o["producer_epoch"].as_i64()? as i16,
        base_sequence: o["base_sequence"].as_i64()? as i32,
        transactional: o["transactional"].as_bool()?,
        control: o["control"].as_bool()?,
        delete_horizon: None,
        compression_level: None,
    };
    let mut builder = BatchBuilder::new(options).expect("valid options");
    for r in case["inputs"].as_array()? {
        let headers: Vec<Header> = r["headers"]
            .as_array()?
            .iter()
            .map(|h| Header::new(bytes_field(&h[0]).expect("header key"), bytes_field(&h[1])))
            .collect();
        builder
            .append_with_offset(
                r["offset"].as_i64()?,
                r["timestamp"].as_i64()?,
                bytes_field(&r["key"]).as_deref(),
                bytes_field(&r["value"]).as_deref(),
                &headers,
            )
            .expect("append");
    }
    Some(builder.build().expect("build"))
}

fn cases() -> Option<&'static Vec<Value>> {
    let golden = golden()?;
    let cases = golden["cases"].as_array().expect("cases");
    assert!(cases.len() > 50, "expected the full case list, got {}", cases.len());
    Some(cases)
}

#[test]
fn kafka_python_batches_decode_to_what_kafka_python_reads() {
    let Some(cases) = cases() else { return };
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let bytes = Bytes::from(hex::decode(case["hex"].as_str().unwrap()).unwrap());
        let records = Records::from_bytes(bytes);
        let ours = read_json(&records);
        assert_eq!(ours, case["expected"], "case {name}");
        let verified = records.verify().unwrap_or_else(|e| panic!("case {name}: {e}"));
        assert_eq!(verified.truncated_tail.is_some(), name.starts_with("truncated"), "case {name}");
    }
}

#[test]
fn uncompressed_encodings_match_kafka_python_byte_for_byte() {
    let Some(cases) = cases() else { return };
    let mut compared = 0;
    for case in cases {
        let Some(ours) = rebuild(case) else { continue };
        let name = case["name"].as_str().unwrap();
        if case["options"]["magic"] == 0 && case["options"]["compression"] == "lz4" {
            // Magic 0 lz4 frames carry Kafka's pre-0.10 header checksum: the 7-byte frame
            // header (magic, FLG, BD, HC) inside the wrapper value must match kafka-python's.
            // The value starts after offset, size, crc, magic, attributes and the null key.
            let theirs = hex::decode(case["hex"].as_str().unwrap()).unwrap();
            assert_eq!(ours.get(26..33), theirs.get(26..33), "case {name}: lz4 frame header");
            compared += 1;
        }
        if case["options"]["compression"] != "none" {
            continue;
        }
        assert_eq!(hex::encode(&ours), case["hex"].as_str().unwrap(), "case {name}");
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} byte-for-byte comparisons");
}

#[test]
fn kafka_python_reads_our_encodings_as_the_same_records() {
    let Some(cases) = cases() else { return };
    let built: Vec<(&Value, Bytes)> = cases.iter().filter_map(|c| Some((c, rebuild(c)?))).collect();
    let fields: Vec<Bytes> = built.iter().map(|(_, b)| b.clone()).collect();
    let decoded = python_decode(&fields);
    for ((case, _), theirs) in built.iter().zip(&decoded) {
        let name = case["name"].as_str().unwrap();
        assert!(theirs.get("error").is_none(), "case {name}: kafka-python failed: {}", theirs["error"]);
        let expected = case["expected"]["batches"].as_array().unwrap();
        let got = theirs["batches"].as_array().unwrap();
        let records = |batches: &[Value]| -> Vec<Value> {
            batches.iter().flat_map(|b| b["records"].as_array().unwrap().clone()).collect()
        };
        assert_eq!(records(got), records(expected), "case {name}");
        for batch in got {
            assert_eq!(batch["crc_valid"], true, "case {name}");
            assert_eq!(batch["compression"], case["options"]["compression"], "case {name}");
        }
        if case["options"]["magic"] == 2 {
            for field in [
                "producer_id",
                "producer_epoch",
                "base_sequence",
                "transactional",
                "control",
                "partition_leader_epoch",
                "max_timestamp",
                "base_offset",
                "last_offset_delta",
            ] {
                assert_eq!(got[0][field], expected[0][field], "case {name}, field {field}");
            }
        }
    }
}
