//! insta snapshots of the emitted code, one small schema per feature. Review changes with
//! `cargo insta review` (or `INSTA_UPDATE=always cargo test -p kwire-codegen --test snapshots`).

use kwire_codegen::{load_str, render_message};

fn render(name: &str, schema: &str) -> String {
    let msg = load_str(&format!("{name}.json"), schema).unwrap_or_else(|e| panic!("{e}"));
    render_message(&msg, "::kwire_runtime", "snapshot test").unwrap()
}

#[test]
fn classic_fields() {
    insta::assert_snapshot!(render(
        "ClassicRequest",
        r#"{ "apiKey": 1000, "type": "request", "name": "ClassicRequest", "validVersions": "0-2", "flexibleVersions": "none",
             "fields": [
               { "name": "Flag", "type": "bool", "versions": "0+" },
               { "name": "Small", "type": "int8", "versions": "0+" },
               { "name": "Port", "type": "uint16", "versions": "1+" },
               { "name": "Count", "type": "uint32", "versions": "2+" },
               { "name": "Offset", "type": "int64", "versions": "0+" },
               { "name": "Ratio", "type": "float64", "versions": "0+" },
               { "name": "Name", "type": "string", "versions": "0+" },
               { "name": "Payload", "type": "bytes", "versions": "0+" },
               { "name": "Ids", "type": "[]int32", "versions": "0+" }
             ] }"#
    ));
}

#[test]
fn flexible_versions_and_compact_encodings() {
    insta::assert_snapshot!(render(
        "FlexRequest",
        r#"{ "apiKey": 1001, "type": "request", "name": "FlexRequest", "validVersions": "0-3", "flexibleVersions": "2+",
             "fields": [
               { "name": "Topic", "type": "string", "versions": "0+" },
               { "name": "Data", "type": "bytes", "versions": "0+", "zeroCopy": true }
             ] }"#
    ));
}

#[test]
fn tagged_fields() {
    insta::assert_snapshot!(render(
        "TaggedResponse",
        r#"{ "apiKey": 1002, "type": "response", "name": "TaggedResponse", "validVersions": "0-1", "flexibleVersions": "0+",
             "fields": [
               { "name": "ErrorCode", "type": "int16", "versions": "0+" },
               { "name": "Hint", "type": "string", "versions": "1+", "taggedVersions": "1+", "tag": 1,
                 "nullableVersions": "1+", "default": "null" },
               { "name": "Leader", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0, "default": "-1" }
             ] }"#
    ));
}

#[test]
fn nullable_fields_and_structs() {
    insta::assert_snapshot!(render(
        "NullableData",
        r#"{ "type": "data", "name": "NullableData", "validVersions": "0-2", "flexibleVersions": "none",
             "fields": [
               { "name": "Label", "type": "string", "versions": "0+", "nullableVersions": "1+" },
               { "name": "Items", "type": "[]Item", "versions": "0+", "nullableVersions": "2+",
                 "fields": [ { "name": "Id", "type": "int32", "versions": "0+" } ] },
               { "name": "Extra", "type": "Extra", "versions": "1+", "nullableVersions": "1+", "default": "null",
                 "fields": [ { "name": "Note", "type": "string", "versions": "1+" } ] }
             ] }"#
    ));
}

#[test]
fn defaults_of_every_kind() {
    insta::assert_snapshot!(render(
        "DefaultsData",
        r#"{ "type": "data", "name": "DefaultsData", "validVersions": "0", "flexibleVersions": "0+",
             "fields": [
               { "name": "Decimal", "type": "int32", "versions": "0+", "default": "-1" },
               { "name": "Hex", "type": "int64", "versions": "0+", "default": "0x7fffffff" },
               { "name": "Flag", "type": "bool", "versions": "0+", "default": "true" },
               { "name": "Ratio", "type": "float64", "versions": "0+", "default": "12.34" },
               { "name": "Id", "type": "uuid", "versions": "0+", "default": "H3KKO4NTRPaCWtEmm3vW7A" },
               { "name": "Group", "type": "string", "versions": "0+", "nullableVersions": "0+", "default": "null" },
               { "name": "Mode", "type": "string", "versions": "0+", "default": "fast" }
             ] }"#
    ));
}

#[test]
fn common_structs() {
    insta::assert_snapshot!(render(
        "CommonData",
        r#"{ "type": "data", "name": "CommonData", "validVersions": "0", "flexibleVersions": "0+",
             "fields": [
               { "name": "First", "type": "Point", "versions": "0+" },
               { "name": "Rest", "type": "[]Point", "versions": "0+" }
             ],
             "commonStructs": [
               { "name": "Point", "versions": "0+", "fields": [
                 { "name": "X", "type": "int32", "versions": "0+" }, { "name": "Y", "type": "int32", "versions": "0+" } ] }
             ] }"#
    ));
}

#[test]
fn field_level_flexible_override_and_ignorable() {
    insta::assert_snapshot!(render(
        "OverrideHeader",
        r#"{ "type": "header", "name": "OverrideHeader", "validVersions": "0-2", "flexibleVersions": "2+",
             "fields": [
               { "name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+", "flexibleVersions": "none" },
               { "name": "Timeout", "type": "int32", "versions": "1+", "default": "5000", "ignorable": true },
               { "name": "ValidateOnly", "type": "bool", "versions": "2+" }
             ] }"#
    ));
}

#[test]
fn records_fields() {
    insta::assert_snapshot!(render(
        "RecordsResponse",
        r#"{ "apiKey": 1003, "type": "response", "name": "RecordsResponse", "validVersions": "0-1", "flexibleVersions": "1+",
             "fields": [ { "name": "Records", "type": "records", "versions": "0+", "nullableVersions": "0+" } ] }"#
    ));
}

#[test]
fn typed_ids_and_map_keys() {
    insta::assert_snapshot!(render(
        "KeyedResponse",
        r#"{ "apiKey": 1003, "type": "response", "name": "KeyedResponse", "validVersions": "0-1", "flexibleVersions": "1+",
             "fields": [
               { "name": "ErrorCode", "type": "int16", "versions": "0+" },
               { "name": "ControllerId", "type": "int32", "versions": "0+", "entityType": "brokerId", "default": "-1" },
               { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
                 { "name": "Name", "type": "string", "versions": "0+", "mapKey": true, "entityType": "topicName" },
                 { "name": "Partition", "type": "int32", "versions": "0+", "mapKey": true },
                 { "name": "Replicas", "type": "[]int32", "versions": "0+", "entityType": "brokerId" },
                 { "name": "ProducerId", "type": "int64", "versions": "1+", "entityType": "producerId",
                   "taggedVersions": "1+", "tag": 0, "default": "-1" },
                 { "name": "Group", "type": "string", "versions": "0+", "nullableVersions": "0+", "entityType": "groupId" }
               ]}
             ] }"#
    ));
}
