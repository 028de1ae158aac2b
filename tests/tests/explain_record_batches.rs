//! `explain` on record data as producers write it: a Produce request carrying a gzip-compressed
//! RecordBatch v2 and a snappy-compressed magic 1 message set, built with the records crate and
//! framed by the generated code. The interpreter decompresses within the records crate's bound
//! and shows each record, with offsets into the decompressed data.

use bytes::BytesMut;
use kwire::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kwire::messages::{ProduceRequest, RequestFrame};
use kwire::Records;
use kwire_inspect::explain::{explain, Input, Schemas, Side, Style};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

fn batch(magic: i8, codec: Compression) -> bytes::Bytes {
    let mut b = BatchBuilder::new(BatchOptions::new(magic, codec)).unwrap();
    for i in 0..3u8 {
        b.append(1_700_000_000_000 + i64::from(i), Some(&[b'k', b'0' + i]), Some(b"hello, records"), &[]).unwrap();
    }
    b.build().unwrap()
}

fn produce_frame(records: bytes::Bytes, version: i16) -> Vec<u8> {
    let body = ProduceRequest {
        acks: -1,
        timeout_ms: 1000,
        topic_data: vec![TopicProduceData {
            name: "t".into(),
            partition_data: vec![PartitionProduceData {
                index: 0,
                records: Some(Records::from_bytes(records)),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut out = BytesMut::new();
    RequestFrame::new(body, version, 1, Some("test")).encode(&mut out).unwrap();
    out.to_vec()
}

fn explained(frame: &[u8]) -> String {
    let dir = kwire_codegen::locate_kafka_schemas(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap())
        .unwrap();
    let schemas = Schemas::load(&[dir]).unwrap();
    let input =
        Input { side: Side::Request, api: None, version: None, frame: true, bytes: frame, style: Style::default() };
    let e = explain(&schemas, &input).unwrap();
    assert!(!e.is_malformed(), "{}", e.text());
    if std::env::var_os("SHOW_TREE").is_some() {
        println!("{}", e.text());
    }
    assert_eq!(e.consumed, frame.len());
    e.text()
}

/// Fails naming the first of `wants` that `text` does not contain.
fn assert_shows(text: &str, wants: &[&str]) {
    for want in wants {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn a_gzip_record_batch_is_decompressed_and_each_record_shown() {
    let text = explained(&produce_frame(batch(2, Compression::Gzip), 9));
    assert_shows(
        &text,
        &[
            "RecordBatch[0] RecordBatch v2 = 3 records",
            "(valid)",
            "attributes int16 = 1 (gzip, CreateTime)",
            "compressed records bytes = ",
            "gzip compressed, ",
            "Record[2] Record = ",
            "key bytes = \"k2\" (varint len=2) [d+0x",
            "value bytes = \"hello, records\" (varint len=14)",
            "headerCount varint = 0",
        ],
    );
}

#[test]
fn a_snappy_legacy_message_set_is_decompressed() {
    // Produce v3, the oldest version Kafka 4.x knows, carries whatever record data it is given.
    let text = explained(&produce_frame(batch(1, Compression::Snappy), 3));
    assert_shows(
        &text,
        &[
            "Message[0] Message v1 = message",
            "attributes int8 = 2 (snappy)",
            "snappy compressed message set, ",
            "value bytes = \"hello, records\" (int32 len=14) [d+0x",
        ],
    );
}
