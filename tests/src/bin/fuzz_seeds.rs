//! Writes the seed inputs of the fuzz targets in `fuzz/` (see the README, "Fuzzing"): every
//! request and response of Kafka's corpus at every version (the smallest legal instance and a
//! random one, framed with their headers), record batches of every magic and codec, 0.7
//! requests and message sets, ZooKeeper node data of every kind, and the schema files
//! themselves. Seeds are made here from the schemas in `../shared`, never committed.
//!
//! Usage: `cargo run -p kwire-tests --bin fuzz-seeds -- fuzz/corpus`

use std::path::PathBuf;

use kwire::messages::ApiKey;
use kwire07_protocol::message::{put_compressed_set, put_message_set};
use kwire07_protocol::{Codec, FetchRequest, Magic, OffsetsRequest, ProduceRequest, Request};
use kwire_codegen::ir::MessageKind;
use kwire_records::{BatchBuilder, BatchOptions, Compression};
use kwire_tests::sample::{self, Mode, Rng};
use kwire_tests::SCHEMAS;

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fuzz/corpus".into()));
    let mut written = 0usize;
    let mut put = |target: &str, name: String, bytes: &[u8]| {
        let dir = out.join(target);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        std::fs::write(dir.join(name), bytes).unwrap_or_else(|e| panic!("writing a seed: {e}"));
        written += 1;
    };
    let mut rng = Rng::new(0x5eed);
    for entry in SCHEMAS.iter().filter(|e| e.set == "message") {
        let msg = entry.load();
        let (Some(key), kind) = (msg.api_key, msg.kind) else { continue };
        let Some(api) = ApiKey::from_key(key) else { continue };
        for v in msg.valid_versions.min..=msg.valid_versions.max {
            for (tag, mode) in [("min", Mode::Minimal), ("rnd", Mode::Random(Rng::new(rng.next_u64())))] {
                let body = sample::encode(&msg, v, mode);
                let name = format!("{}-v{v}-{tag}", entry.name);
                match kind {
                    MessageKind::Request => {
                        let frame = request_frame(api, v, &body);
                        put("explain", name.clone(), &frame);
                        put("request_frames", name, &frame);
                    }
                    MessageKind::Response => put("response_frames", name, &response_input(api, v, &body)),
                    _ => {}
                }
            }
        }
    }
    for magic in [0i8, 1, 2] {
        for codec in Compression::ALL {
            let Ok(mut b) = BatchBuilder::new(BatchOptions::new(magic, codec)) else { continue };
            for i in 0..3u8 {
                let _ = b.append(1_700_000_000_000 + i64::from(i), Some(&[b'k', i]), Some(&[b'v'; 40]), &[]);
            }
            if let Ok(batch) = b.build() {
                put("record_batches", format!("magic{magic}-{codec:?}"), &batch);
            }
        }
    }
    for (name, request) in kafka07_requests() {
        if let Ok(frame) = request.to_bytes() {
            put("kafka07_requests", name.to_owned(), &frame[4..]);
        }
    }
    for (i, (choice, data)) in ZK_NODES.iter().enumerate() {
        let mut seed = vec![*choice];
        seed.extend_from_slice(data.as_bytes());
        put("zk_nodes", format!("node-{i}"), &seed);
    }
    for dir in schema_dirs() {
        for file in kwire_codegen::source::read_schemas(&dir).into_iter().flatten() {
            put("schemas", file.name, file.text.as_bytes());
        }
    }
    println!("{written} seeds in {}", out.display());
}

/// The bytes after the size prefix: header (its version follows from the api) and body.
fn request_frame(api: ApiKey, version: i16, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&api.key().to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&7i32.to_be_bytes()); // correlation id
    let header_version = api.request_header_version(version);
    if header_version >= 1 {
        f.extend_from_slice(&4i16.to_be_bytes());
        f.extend_from_slice(b"seed");
    }
    if header_version >= 2 {
        f.push(0); // no tagged fields
    }
    f.extend_from_slice(body);
    f
}

/// The response target's input: api key and version, then the frame after its size prefix.
fn response_input(api: ApiKey, version: i16, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&api.key().to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&7i32.to_be_bytes());
    if api.response_header_version(version) >= 1 {
        f.push(0);
    }
    f.extend_from_slice(body);
    f
}

fn kafka07_requests() -> Vec<(&'static str, Request)> {
    let payloads = [b"first".as_slice(), b"second", b"third"];
    let mut plain = Vec::new();
    let _ = put_message_set(&mut plain, Magic::V1, &payloads);
    let mut out = vec![("produce-plain", produce(plain))];
    for (name, codec) in [("produce-gzip", Codec::Gzip), ("produce-snappy", Codec::Snappy)] {
        let mut set = Vec::new();
        let _ = put_compressed_set(&mut set, codec, &payloads);
        out.push((name, produce(set)));
    }
    let fetch = FetchRequest { topic: "t".into(), partition: 0, offset: 0, max_size: 1 << 20 };
    out.push(("fetch", Request::Fetch(fetch.clone())));
    out.push(("multifetch", Request::MultiFetch(vec![fetch.clone(), fetch])));
    out.push((
        "offsets",
        Request::Offsets(OffsetsRequest { topic: "t".into(), partition: 0, time: -2, max_offsets: 4 }),
    ));
    out
}

fn produce(set: Vec<u8>) -> Request {
    Request::Produce(ProduceRequest { topic: "t".into(), partition: 0, messages: set.into() })
}

/// (path choice of the zk_nodes target, node data), one or more per kind of node.
const ZK_NODES: &[(u8, &str)] = &[
    (0, "host-1700000000000:127.0.0.1:9092"),
    (
        0,
        r#"{"version":4,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1700000000000","endpoints":["PLAINTEXT://h:9092"],"rack":null,"features":{}}"#,
    ),
    (1, r#"{"version":1,"partitions":{"0":[1,2]}}"#),
    (2, "3"),
    (3, r#"{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}"#),
    (4, r#"{"version":1,"brokerid":1,"timestamp":"1700000000000"}"#),
    (5, "1"),
    (6, r#"{"t":1}"#),
    (7, "g_host-1-0"),
    (8, "42"),
    (9, r#"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}"#),
    (10, r#"{"version":1,"partitions":[{"topic":"t","partition":0}]}"#),
    (11, ""),
    (12, r#"{"version":1,"config":{"retention.ms":"1000"}}"#),
    (13, r#""t""#),
];

/// Kafka's schemas (messages, generator test schemas, internal families) where their jars are
/// found, and the project's own.
fn schema_dirs() -> Vec<PathBuf> {
    let root = kwire_tests::workspace_root();
    let Ok(message) = kwire_codegen::locate_kafka_schemas(&root) else { return Vec::new() };
    let mut dirs = vec![message, root.join("schemas")];
    dirs.extend(kwire_codegen::kafka_schema_sets(&root).into_iter().map(|(_, source)| source));
    dirs
}
