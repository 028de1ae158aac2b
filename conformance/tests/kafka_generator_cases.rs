//! The edge cases Kafka's own generator tests check (`MessageTest`, `SimpleExampleMessageTest`,
//! `NullableStructMessageTest` over the `test/` schemas), each a named case of the
//! differential: built on our side from Kafka-style JSON, then run through Kafka 4.3.1's classes
//! from its `test` jar (byte- and JSON-exact both ways, see `kwire_conformance::case`).

use std::sync::{Mutex, OnceLock};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use kwire_conformance::generated::kafka_4_3_1_test::{
    all_type_message::AllTypeMessage, nullable_struct_message::NullableStructMessage,
    simple_arrays_message::SimpleArraysMessage, simple_example_message::SimpleExampleMessage,
    simple_records_message::SimpleRecordsMessage,
};
use kwire_conformance::oracle::{oracle_for, Answer, Oracle};
use kwire_conformance::plan::entries_of;
use kwire_conformance::run;
use kwire_inspect::sample::empty_record_batch;
use kwire_runtime::json::{Json, Value};
use kwire_runtime::{Decode, Encode, Message};
use serde_json::json;

const RELEASE: &str = "4.3.1";

/// One JVM for every case of this file.
fn oracle() -> Option<&'static Mutex<Oracle>> {
    static ORACLE: OnceLock<Option<Mutex<Oracle>>> = OnceLock::new();
    ORACLE.get_or_init(|| oracle_for(RELEASE).map(Mutex::new)).as_ref()
}

/// Builds `T` at `version` from its default's JSON with `set` laid over it, checks that every
/// key set reads back as written (or, for those in `omitted`, is left out as a default tagged
/// field is), runs the case through Kafka's classes, and returns our bytes. `None` when the
/// jars are not there (outside CI).
fn agree<T: Message + Json>(case: &str, version: i16, set: Value, omitted: &[&str]) -> Option<Vec<u8>> {
    let oracle = oracle()?;
    let schema = entries_of(RELEASE)
        .into_iter()
        .find(|(e, _)| e.family == "test" && e.name == T::NAME)
        .map(|(_, m)| m)
        .unwrap_or_else(|| panic!("{} not generated", T::NAME));
    let mut input = T::default().to_json(version).unwrap();
    for (key, value) in set.as_object().expect("an object of fields") {
        input[key] = value.clone();
    }
    let value = T::from_json(&input, version).unwrap_or_else(|e| panic!("{case}: {e}"));
    let written = value.to_json(version).unwrap();
    for (key, expected) in set.as_object().unwrap() {
        if omitted.contains(&key.as_str()) {
            assert!(written.get(key).is_none(), "{case}: {key} written at its default: {written}");
        } else {
            assert_eq!(written.get(key), Some(expected), "{case}: {key} did not read back: {written}");
        }
    }
    let mut bytes = BytesMut::new();
    value.encode(&mut bytes, version).unwrap();
    let mut oracle = oracle.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(mismatches) = run::<T>(&bytes, version, &schema, &mut oracle) {
        let text: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
        panic!("{case} ({} v{version}): Kafka disagrees:\n{}", T::NAME, text.join("\n"));
    }
    Some(bytes.to_vec())
}

/// The number of tagged fields in a flexible top-level struct whose tag section is last.
fn trailing_tag_count(bytes: &[u8], tags_start: usize) -> u8 {
    bytes[tags_start]
}

#[test]
fn tagged_fields_at_their_defaults_are_not_written() {
    // myInt16 123, myFloat64 12.34, taggedUuid and taggedLong at their schema defaults.
    let set = json!({
        "myInt16": 123, "myFloat64": 12.34, "taggedUuid": "H3KKO4NTRPaCWtEmm3vW7A",
        "taggedLong": 0x0cafcacafcacafca_i64, "myString": "", "myTaggedIntArray": []
    });
    let omitted = ["myInt16", "myFloat64", "taggedUuid", "taggedLong", "myString", "myTaggedIntArray"];
    let Some(bytes) = agree::<SimpleExampleMessage>("defaults left out", 1, set, &omitted) else { return };
    assert_eq!(trailing_tag_count(&bytes, bytes.len() - 1), 0, "no tagged field: {bytes:?}");
}

#[test]
fn every_tagged_field_off_its_default_is_written() {
    let set = json!({
        "myTaggedIntArray": [1, -1, 2147483647], "myNullableString": "set", "myInt16": -5,
        "myFloat64": -0.5, "myString": "tagged", "myBytes": "AQID", "taggedUuid": "AAECAwQFBgcICQoLDA0ODw",
        "taggedLong": -1, "myTaggedStruct": {"structId": "inner"}, "taggedLongFlexibleVersionSubset": 7
    });
    let Some(bytes) = agree::<SimpleExampleMessage>("all tagged set", 2, set, &[]) else { return };
    assert!(bytes.len() > 60, "{bytes:?}");
}

#[test]
fn tagged_nullable_string_empty_and_tagged_bytes_null_are_not_defaults() {
    // myNullableString defaults to null, so "" is written; myBytes defaults to empty, so null is.
    agree::<SimpleExampleMessage>("empty nullable string", 1, json!({"myNullableString": ""}), &[]);
    agree::<SimpleExampleMessage>("null tagged bytes", 1, json!({"myBytes": null}), &[]);
    agree::<SimpleExampleMessage>("null nullable string", 1, json!({"myNullableString": null}), &["myNullableString"]);
}

#[test]
fn zero_copy_byte_buffers() {
    let set = json!({"zeroCopyByteBuffer": "AAH/", "nullableZeroCopyByteBuffer": null});
    agree::<SimpleExampleMessage>("zero-copy, nullable null", 1, set, &[]);
    let set = json!({"zeroCopyByteBuffer": "", "nullableZeroCopyByteBuffer": "3q2+7w=="});
    agree::<SimpleExampleMessage>("zero-copy empty, nullable set", 1, set, &[]);
}

#[test]
fn unsigned_fields_at_their_limits() {
    for (u16_value, u32_value) in [(65535, 4_294_967_295_u64), (0, 0), (33000, 1_234_567)] {
        let set = json!({"myUint16": u16_value, "myUint32": u32_value});
        agree::<SimpleExampleMessage>("uint16/uint32", 1, set, &[]);
    }
}

#[test]
fn common_struct_used_by_two_fields_and_a_struct_holding_an_array() {
    let set = json!({"myCommonStruct": {"foo": 1, "bar": -1}, "myOtherCommonStruct": {"foo": 2, "bar": 3}});
    agree::<SimpleExampleMessage>("common structs, v0", 0, set, &[]);
    let set = json!({
        "processId": "AAECAwQFBgcICQoLDA0ODw",
        "myStruct": {"structId": 5, "arrayInStruct": [{"arrayFieldId": 1}, {"arrayFieldId": -2}]}
    });
    agree::<SimpleExampleMessage>("struct with an array, v2", 2, set, &[]);
}

#[test]
fn unknown_tagged_fields_survive_kafkas_decode_and_encode() {
    // Kafka keeps them (check 1 compares the bytes) and leaves them out of its JSON.
    let set = json!({"_unknownTaggedFields": [{"tag": 70, "data": "AQID"}, {"tag": 900, "data": ""}]});
    agree::<SimpleExampleMessage>("unknown tags, top level", 2, set, &[]);
    let set =
        json!({"myStruct": {"structId": 1, "arrayInStruct": [], "_unknownTaggedFields": [{"tag": 3, "data": "/w=="}]}});
    agree::<SimpleExampleMessage>("unknown tags in a struct", 2, set, &[]);
}

#[test]
fn nullable_structs_null_and_set() {
    let null =
        json!({"nullableStruct": null, "nullableStruct2": null, "nullableStruct3": null, "nullableStruct4": null});
    // NullableStruct3 defaults to null (tag left out); NullableStruct4 does not (tag written).
    agree::<NullableStructMessage>("all null", 1, null, &["nullableStruct3"]);
    let one = json!({"myString": "s", "myInt": 7});
    let set = json!({"nullableStruct": one, "nullableStruct2": one, "nullableStruct3": one, "nullableStruct4": one});
    agree::<NullableStructMessage>("all set", 2, set, &[]);
    // In version 0 NullableStruct2 is not nullable: present, and NullableStruct null.
    agree::<NullableStructMessage>("v0", 0, json!({"nullableStruct": null, "nullableStruct2": one}), &[]);
}

#[test]
fn a_struct_null_where_its_version_does_not_allow_it_is_refused_by_both() {
    // Kafka's NullableStructMessageTest: NullableStruct2 cannot be null in version 0.
    let value = NullableStructMessage { nullable_struct2: None, ..Default::default() };
    let err = value.encode(&mut BytesMut::new(), 0).expect_err("null where version 0 forbids it");
    assert!(err.to_string().contains("ullable"), "{err}");
    let Some(oracle) = oracle() else { return };
    let mut valid = BytesMut::new();
    NullableStructMessage::default().encode(&mut valid, 0).unwrap();
    let json = json!({"nullableStruct": null, "nullableStruct2": null});
    let answer = oracle.lock().unwrap().ask(NullableStructMessage::NAME, 0, &valid, &json.to_string()).unwrap();
    match answer {
        Answer::Refused { stage, message } => {
            assert!(stage == "json-read" || stage == "encode-from-json", "{stage}: {message}");
        }
        Answer::Ok { .. } => panic!("Kafka wrote a null NullableStruct2 in version 0"),
    }
}

#[test]
fn every_type_classic_and_flexible() {
    let batch = STANDARD.encode(empty_record_batch());
    let set = json!({
        "myBoolean": true, "myInt8": -128, "myInt16": -32768, "myUint16": 65535, "myInt32": -2147483648_i64,
        "myUint32": 4_294_967_295_u64, "myUint64": -9_223_372_036_854_775_808_i64, "myUuid": "AAAAAAAAAAAAAAAAAAAAAA",
        "myFloat64": 1.0e300, "myString": "ünïcødé", "myNullableString": null, "myBytes": "AA==",
        "myNullableBytes": "", "myRecords": batch, "myNullableRecords": null, "myIntArray": [0, 1],
        "myNullableIntArray": null, "myCommonStruct": {"foo": 0, "bar": 0}
    });
    agree::<AllTypeMessage>("every type, v0", 0, set, &[]);
    let set = json!({
        "myCompactString": "", "myCompactNullableString": "x", "myCompactBytes": "", "myCompactNullableBytes": null,
        "myCompactRecords": batch, "myCompactNullableRecords": batch, "myIntArray": [],
        "myNullableIntArray": [-1], "myCommonStruct": null, "myFloat64": -0.0
    });
    agree::<AllTypeMessage>("every type, v1", 1, set, &[]);
}

#[test]
fn records_null_empty_and_a_batch() {
    let batch = STANDARD.encode(empty_record_batch());
    for version in [0, 1] {
        agree::<SimpleRecordsMessage>("records null", version, json!({"topic": "t", "recordSet": null}), &[]);
        agree::<SimpleRecordsMessage>("records empty", version, json!({"topic": "t", "recordSet": ""}), &[]);
        agree::<SimpleRecordsMessage>("a batch", version, json!({"topic": "t", "recordSet": batch}), &[]);
    }
}

#[test]
fn arrays_of_structs_and_fields_new_in_later_versions() {
    agree::<SimpleArraysMessage>("v0: sheep only", 0, json!({"sheep": [1, 2, 3]}), &[]);
    agree::<SimpleArraysMessage>(
        "v1: goats, no name",
        1,
        json!({"goats": [{"color": 1}, {"color": -1}], "sheep": []}),
        &[],
    );
    let goats = json!([{"color": 3, "name": "billy"}, {"color": 0, "name": ""}]);
    agree::<SimpleArraysMessage>("v2: goats with names", 2, json!({"goats": goats, "sheep": [7]}), &[]);
}

#[test]
fn the_decoded_bytes_are_what_kafka_reads() {
    // A sanity anchor for the helper: our bytes for a small case, as Kafka's test expects them
    // (SimpleArraysMessage v0: a 4-byte count then int32 elements).
    let Some(bytes) = agree::<SimpleArraysMessage>("v0 bytes", 0, json!({"sheep": [1]}), &[]) else { return };
    assert_eq!(bytes, [0, 0, 0, 1, 0, 0, 0, 1]);
    let decoded = SimpleArraysMessage::decode(&mut Bytes::from(bytes), 0).unwrap();
    assert_eq!(decoded.sheep, [1]);
}
