//! One small bad schema per validation rule (numbered as in the codegen reference, section
//! "Schema rules the Java generator enforces"): each must fail with that rule, naming the file
//! and the field or struct involved.

use kwire_codegen::ir::{DefaultValue, Message, Versions};
use kwire_codegen::validate::validate_set;
use kwire_codegen::{load_dir, load_schemas, load_str, Rule, SchemaError};

/// A valid request with the given fields: versions 0-3, flexible from 2.
fn request(fields: &str) -> String {
    format!(
        r#"{{ "apiKey": 90, "type": "request", "name": "FooRequest", "validVersions": "0-3",
             "flexibleVersions": "2+", "fields": [ {fields} ] }}"#
    )
}

/// The same request with `commonStructs`.
fn request_with_common(fields: &str, commons: &str) -> String {
    format!(
        r#"{{ "apiKey": 90, "type": "request", "name": "FooRequest", "validVersions": "0-3",
             "flexibleVersions": "2+", "fields": [ {fields} ], "commonStructs": [ {commons} ] }}"#
    )
}

fn errors(file: &str, text: &str) -> Vec<SchemaError> {
    match load_str(file, text) {
        Ok(m) => panic!("{file} was accepted: {m:#?}"),
        Err(e) => e.0,
    }
}

/// The schema fails with rule `rule` and no other; every error names the file, and the error's
/// text contains each of `needles` (typically the JSON path and the field name).
fn assert_rule(text: &str, rule: u8, needles: &[&str]) {
    let file = "FooRequest.json";
    let errs = errors(file, text);
    let shown: Vec<String> = errs.iter().map(ToString::to_string).collect();
    assert!(errs.iter().all(|e| e.rule == Some(rule)), "expected only rule {rule}, got:\n{}", shown.join("\n"));
    for s in &shown {
        assert!(s.starts_with("FooRequest.json: "), "{s}");
        let text = Rule::new(rule).expect("a numbered rule").text();
        assert!(s.ends_with(&format!(" (rule {rule}: {text})")), "{s}");
        for needle in needles {
            assert!(s.contains(needle), "`{needle}` missing from: {s}");
        }
    }
}

#[test]
fn the_base_schemas_are_valid() {
    let m = load_str("FooRequest.json", &request(r#"{ "name": "A", "type": "int32", "versions": "0+" }"#)).unwrap();
    assert_eq!(m.valid_versions, Versions::new(0, 3));
    load_str(
        "FooRequest.json",
        &request_with_common(
            r#"{ "name": "A", "type": "[]C", "versions": "0+" }"#,
            r#"{ "name": "C", "versions": "0+", "fields": [] }"#,
        ),
    )
    .unwrap();
}

/// Kafka 2.x's schemas omit `flexibleVersions`: a warning by default (read as `none`), an
/// error under `strict`.
#[test]
fn rule_01_flexible_versions_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let pair = |kind: &str, name: &str| {
        format!(r#"{{ "apiKey": 90, "type": "{kind}", "name": "{name}", "validVersions": "0-3", "fields": [] }}"#)
    };
    std::fs::write(dir.path().join("FooRequest.json"), pair("request", "FooRequest")).unwrap();
    std::fs::write(dir.path().join("FooResponse.json"), pair("response", "FooResponse")).unwrap();
    let lenient = load_schemas(&[dir.path()], false).unwrap();
    assert_eq!(lenient.messages[0].flexible_versions, None);
    assert_eq!(lenient.warnings.len(), 2);
    assert!(lenient.warnings[0]
        .to_string()
        .starts_with("FooRequest.json: $: message FooRequest has no `flexibleVersions`"));
    let errs = load_schemas(&[dir.path()], true).unwrap_err();
    assert_eq!(errs.len(), 2);
    assert!(errs.iter().all(|e| e.rule == Some(1)));
    assert!(errs.0[0].to_string().ends_with("(rule 1: a message needs `flexibleVersions`)"), "{}", errs.0[0]);
}

#[test]
fn rule_02_flexible_versions_is_none_or_open_ended() {
    assert_rule(
        r#"{ "apiKey": 90, "type": "request", "name": "FooRequest", "validVersions": "0-3",
             "flexibleVersions": "1-2", "fields": [] }"#,
        2,
        &["FooRequest has flexibleVersions `1-2`, which is not open-ended"],
    );
}

#[test]
fn rule_03_listeners_only_on_requests() {
    let text = r#"{ "apiKey": 90, "type": "response", "name": "FooResponse", "validVersions": "0-3",
        "flexibleVersions": "2+", "listeners": ["broker"], "fields": [] }"#;
    let errs = errors("FooResponse.json", text);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].rule, Some(3));
    assert!(errs[0].to_string().contains("FooResponse has `listeners`"));
    // Unknown listener names are rejected too (Kafka reads them as an enum).
    let text = r#"{ "apiKey": 90, "type": "request", "name": "FooRequest", "validVersions": "0-3",
        "flexibleVersions": "2+", "listeners": ["broker", "gateway"], "fields": [] }"#;
    assert_rule(text, 3, &["unknown listener `gateway`"]);
}

#[test]
fn rule_04_latest_version_unstable_only_on_requests() {
    let text = r#"{ "type": "data", "name": "FooData", "validVersions": "0-3",
        "flexibleVersions": "2+", "latestVersionUnstable": true, "fields": [] }"#;
    let errs = errors("FooData.json", text);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].rule, Some(4));
    assert!(errs[0].to_string().starts_with("FooData.json: $: message FooData sets `latestVersionUnstable`"));
}

#[test]
fn rule_05_type_is_required_and_known() {
    assert_rule(
        r#"{ "apiKey": 90, "name": "FooRequest", "validVersions": "0-3", "flexibleVersions": "2+", "fields": [] }"#,
        5,
        &["FooRequest has no `type`"],
    );
    assert_rule(
        r#"{ "apiKey": 90, "type": "event", "name": "FooRequest", "validVersions": "0-3",
             "flexibleVersions": "2+", "fields": [] }"#,
        5,
        &["unknown type `event`"],
    );
}

#[test]
fn rule_06_valid_versions_need_an_upper_bound() {
    assert_rule(
        r#"{ "apiKey": 90, "type": "request", "name": "FooRequest", "validVersions": "0+",
             "flexibleVersions": "2+", "fields": [] }"#,
        6,
        &["open-ended validVersions `0+`"],
    );
}

#[test]
fn rule_07_no_map_key_on_top_level_fields() {
    assert_rule(
        &request(r#"{ "name": "Id", "type": "int32", "versions": "0+", "mapKey": true }"#),
        7,
        &["$.fields[0] (Id)", "field Id sets `mapKey`"],
    );
    // Nested map keys are fine.
    load_str(
        "FooRequest.json",
        &request(
            r#"{ "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
                 { "name": "Id", "type": "int32", "versions": "0+", "mapKey": true } ] }"#,
        ),
    )
    .unwrap();
}

#[test]
fn rule_08_tagged_versions_inside_flexible_versions() {
    assert_rule(
        &request(r#"{ "name": "Extra", "type": "int32", "versions": "0+", "taggedVersions": "1+", "tag": 0 }"#),
        8,
        &["$.fields[0] (Extra)", "taggedVersions 1+", "flexibleVersions 2+"],
    );
}

#[test]
fn rule_09_records_cannot_be_tagged() {
    assert_rule(
        &request(
            r#"{ "name": "Recs", "type": "records", "versions": "2+", "nullableVersions": "2+", "taggedVersions": "2+", "tag": 0 }"#,
        ),
        9,
        &["$.fields[0] (Recs)", "records field Recs cannot be tagged"],
    );
}

#[test]
fn rule_10_struct_versions_overlap_the_parent() {
    assert_rule(
        &request(
            r#"{ "name": "Outer", "type": "[]Outer", "versions": "0-1", "fields": [
                 { "name": "Inner", "type": "Inner", "versions": "2+", "fields": [] } ] }"#,
        ),
        10,
        &["$.fields[0].fields[0] (Inner)", "struct Inner", "versions 2+", "parent's versions 0-1"],
    );
}

#[test]
fn rule_11_struct_name_and_versions_are_required() {
    assert_rule(
        &request_with_common("", r#"{ "name": "C", "fields": [] }"#),
        11,
        &["$.commonStructs[0] (C)", "common struct C has no `versions`"],
    );
    assert_rule(
        r#"{ "apiKey": 90, "type": "header", "validVersions": "0-3", "flexibleVersions": "2+", "fields": [] }"#,
        11,
        &["the message has no `name`"],
    );
    assert_rule(
        r#"{ "apiKey": 90, "type": "request", "name": "FooRequest", "flexibleVersions": "2+", "fields": [] }"#,
        11,
        &["FooRequest has no `validVersions`"],
    );
}

#[test]
fn rule_12_field_names_are_unique() {
    assert_rule(
        &request(
            r#"{ "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
                 { "name": "Id", "type": "int32", "versions": "0+" },
                 { "name": "Id", "type": "int64", "versions": "0+" } ] }"#,
        ),
        12,
        &["$.fields[0].fields[1] (Id)", "field name Id is used twice in struct Item"],
    );
    // Names that collide once converted to Rust identifiers collide too.
    assert_rule(
        &request(
            r#"{ "name": "topicId", "type": "int32", "versions": "0+" },
               { "name": "TopicId", "type": "int32", "versions": "0+" }"#,
        ),
        12,
        &["$.fields[1] (TopicId)", "struct FooRequest"],
    );
}

#[test]
fn rule_13_tags_are_unique() {
    assert_rule(
        &request(
            r#"{ "name": "Foo", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0 },
               { "name": "Baz", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 1 },
               { "name": "Bar", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 1 }"#,
        ),
        13,
        &["FooRequest.json: $.fields[2] (Bar): tag 1 is used twice in struct FooRequest"],
    );
}

#[test]
fn rule_14_tags_are_contiguous_from_zero() {
    assert_rule(
        &request(
            r#"{ "name": "Foo", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0 },
               { "name": "Bar", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 2 }"#,
        ),
        14,
        &["$.fields[1] (Bar)", "tag 2 is used but tag 1 is not"],
    );
}

#[test]
fn rule_15_field_names_are_identifiers() {
    assert_rule(
        &request(r#"{ "name": "my_field", "type": "int32", "versions": "0+" }"#),
        15,
        &["$.fields[0] (my_field)", "field name `my_field` is invalid"],
    );
}

#[test]
fn rule_16_versions_required_unless_tagged() {
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int32" }"#),
        16,
        &["$.fields[0] (Foo)", "field Foo has no `versions`"],
    );
}

#[test]
fn rule_17_types_must_be_valid() {
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int33", "versions": "0+" }"#),
        17,
        &["$.fields[0] (Foo)", "unknown type `int33`"],
    );
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "[][]int32", "versions": "0+" }"#),
        17,
        &["$.fields[0] (Foo)", "array of arrays"],
    );
}

#[test]
fn rule_18_only_some_types_are_nullable() {
    assert_rule(
        &request(r#"{ "name": "Count", "type": "int32", "versions": "0+", "nullableVersions": "0+" }"#),
        18,
        &["$.fields[0] (Count)", "field Count of type int32 cannot be nullable"],
    );
    assert_rule(
        &request(r#"{ "name": "Id", "type": "uuid", "versions": "0+", "nullableVersions": "1+" }"#),
        18,
        &["field Id of type uuid cannot be nullable"],
    );
}

#[test]
fn rule_19_entity_type_matches_the_field_type() {
    assert_rule(
        &request(r#"{ "name": "Topic", "type": "int32", "versions": "0+", "entityType": "topicName" }"#),
        19,
        &["$.fields[0] (Topic)", "entityType topicName, which needs type string, but its type is int32"],
    );
    assert_rule(
        &request(r#"{ "name": "Brokers", "type": "[]int64", "versions": "0+", "entityType": "brokerId" }"#),
        19,
        &["needs type int32, but its type is []int64"],
    );
    // Arrays are checked by element type.
    load_str(
        "FooRequest.json",
        &request(r#"{ "name": "Brokers", "type": "[]int32", "versions": "0+", "entityType": "brokerId" }"#),
    )
    .unwrap();
}

#[test]
fn rule_20_only_structs_have_nested_fields() {
    assert_rule(
        &request(
            r#"{ "name": "Count", "type": "int32", "versions": "0+", "fields": [
                 { "name": "X", "type": "int8", "versions": "0+" } ] }"#,
        ),
        20,
        &["$.fields[0] (Count)", "field Count of type int32 has nested `fields`"],
    );
}

#[test]
fn rule_21_flexible_versions_override_only_on_strings_and_bytes() {
    assert_rule(
        &request(r#"{ "name": "Count", "type": "int32", "versions": "0+", "flexibleVersions": "none" }"#),
        21,
        &["$.fields[0] (Count)", "`flexibleVersions` override"],
    );
    let m = load_str(
        "FooRequest.json",
        &request(r#"{ "name": "ClientId", "type": "string", "versions": "0+", "flexibleVersions": "none" }"#),
    )
    .unwrap();
    assert_eq!(m.fields[0].flexible_versions, Some(None));
}

#[test]
fn rule_22_tagged_fields_are_not_map_keys() {
    assert_rule(
        &request(
            r#"{ "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
                 { "name": "Id", "type": "int32", "versions": "0+", "mapKey": true,
                   "taggedVersions": "2+", "tag": 0 } ] }"#,
        ),
        22,
        &["$.fields[0].fields[0] (Id)", "tagged field Id cannot be a `mapKey`"],
    );
}

#[test]
fn rule_23_tags_are_not_negative() {
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": -1 }"#),
        23,
        &["$.fields[0] (Foo)", "tag -1; tags cannot be negative"],
    );
}

#[test]
fn rule_24_tag_and_tagged_versions_come_together() {
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "2+", "tag": 0 }"#),
        24,
        &["$.fields[0] (Foo)", "has tag 0 but no `taggedVersions`"],
    );
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "2+", "taggedVersions": "2+" }"#),
        24,
        &["$.fields[0] (Foo)", "has `taggedVersions` but no `tag`"],
    );
}

#[test]
fn rule_25_tagged_versions_all_nullable_or_none() {
    assert_rule(
        &request(
            r#"{ "name": "Foo", "type": "string", "versions": "0+", "nullableVersions": "3+",
                 "taggedVersions": "2+", "tag": 0 }"#,
        ),
        25,
        &["$.fields[0] (Foo)", "nullableVersions 3+ and taggedVersions 2+"],
    );
}

#[test]
fn rule_26_tagged_versions_are_open_ended() {
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "0+", "taggedVersions": "2-3", "tag": 0 }"#),
        26,
        &["$.fields[0] (Foo)", "taggedVersions 2-3, which is not open-ended"],
    );
}

#[test]
fn rule_27_tagged_versions_inside_versions() {
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "0-2", "taggedVersions": "2+", "tag": 0 }"#),
        27,
        &["$.fields[0] (Foo)", "taggedVersions 2+, which are not all inside its versions 0-2"],
    );
}

#[test]
fn rule_28_zero_copy_only_on_bytes() {
    assert_rule(
        &request(r#"{ "name": "Name", "type": "string", "versions": "0+", "zeroCopy": true }"#),
        28,
        &["$.fields[0] (Name)", "sets `zeroCopy`"],
    );
}

#[test]
fn rule_29_defaults_are_valid_for_their_type() {
    let cases = [
        (r#""type": "int8", "default": "300""#, "default `300` is not a valid int8: out of range"),
        (r#""type": "int16", "default": "0x8000""#, "default `0x8000` is not a valid int16"),
        (r#""type": "uint16", "default": "-1""#, "not a valid uint16: out of range"),
        (r#""type": "uint32", "default": "4294967296""#, "not a valid uint32: out of range"),
        (r#""type": "int32", "default": "0xzz""#, "not a valid int32"),
        (r#""type": "int64", "default": "1.5""#, "not a valid int64"),
        (r#""type": "bool", "default": "yes""#, "default `yes` is not a valid bool"),
        (r#""type": "float64", "default": "twelve""#, "not a valid float64"),
        (r#""type": "uuid", "default": "AAAA""#, "base64url decodes to 3 bytes, not 16"),
        (r#""type": "uuid", "default": "not base64!""#, "not a valid uuid"),
        (r#""type": "int32", "default": "null""#, "not a valid int32"),
    ];
    for (ty_default, needle) in cases {
        let field = format!(r#"{{ "name": "Foo", {ty_default}, "versions": "0+" }}"#);
        assert_rule(&request(&field), 29, &["$.fields[0] (Foo)", "field Foo", needle]);
    }
}

#[test]
fn rule_29_accepts_every_default_spelling_kafka_does() {
    let m = load_str(
        "FooRequest.json",
        &request(
            r#"{ "name": "A", "type": "int32", "versions": "0+", "default": -1 },
               { "name": "B", "type": "int32", "versions": "0+", "default": "0x7fffffff" },
               { "name": "C", "type": "int64", "versions": "0+", "default": "-9223372036854775808" },
               { "name": "D", "type": "bool", "versions": "0+", "default": "TRUE" },
               { "name": "E", "type": "bool", "versions": "0+", "default": false },
               { "name": "F", "type": "uint16", "versions": "0+", "default": "0xffff" },
               { "name": "G", "type": "float64", "versions": "0+", "default": "-1.5e3" },
               { "name": "H", "type": "string", "versions": "0+", "default": "abc" },
               { "name": "I", "type": "uuid", "versions": "0+", "default": "AAAAAAAAAAAAAAAAAAAAAQ==" },
               { "name": "J", "type": "int8", "versions": "0+", "default": "-128" },
               { "name": "K", "type": "int16", "versions": "0+", "default": "" }"#,
        ),
    )
    .unwrap();
    let d: Vec<&DefaultValue> = m.fields.iter().map(|f| &f.default).collect();
    let mut uuid = [0u8; 16];
    uuid[15] = 1;
    assert_eq!(
        d,
        [
            &DefaultValue::Int(-1),
            &DefaultValue::Int(i64::from(i32::MAX)),
            &DefaultValue::Int(i64::MIN),
            &DefaultValue::Bool(true),
            &DefaultValue::Bool(false),
            &DefaultValue::Int(65535),
            &DefaultValue::Float(-1500.0),
            &DefaultValue::Str("abc".into()),
            &DefaultValue::Uuid(uuid),
            &DefaultValue::Int(-128),
            &DefaultValue::Implicit,
        ]
    );
}

#[test]
fn rule_30_null_default_needs_nullable_in_every_version() {
    assert_rule(
        &request(
            r#"{ "name": "Foo", "type": "string", "versions": "0+", "nullableVersions": "1+", "default": "null" }"#,
        ),
        30,
        &["$.fields[0] (Foo)", "default `null` needs the field to be nullable in all its versions (0+)"],
    );
    let m = load_str(
        "FooRequest.json",
        &request(
            r#"{ "name": "Foo", "type": "string", "versions": "1+", "nullableVersions": "1+", "default": "null" }"#,
        ),
    )
    .unwrap();
    assert_eq!(m.fields[0].default, DefaultValue::Null);
}

#[test]
fn rule_31_bytes_structs_and_arrays_default_to_empty_or_null() {
    assert_rule(
        &request(r#"{ "name": "Data", "type": "bytes", "versions": "0+", "default": "abc" }"#),
        31,
        &["$.fields[0] (Data)", "only valid defaults are empty and `null`"],
    );
    assert_rule(
        &request(r#"{ "name": "Ids", "type": "[]int32", "versions": "0+", "default": "[]" }"#),
        31,
        &["$.fields[0] (Ids)", "for a []int32 field"],
    );
    assert_rule(
        &request(r#"{ "name": "S", "type": "S", "versions": "0+", "default": "{}", "fields": [] }"#),
        31,
        &["$.fields[0] (S)", "for a S field"],
    );
}

#[test]
fn rule_32_versions_are_not_negative() {
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "-1+" }"#),
        32,
        &["$.fields[0] (Foo)", "`versions`", "negative"],
    );
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "string", "versions": "0+", "nullableVersions": "1--2" }"#),
        32,
        &["$.fields[0] (Foo)", "`nullableVersions`", "negative"],
    );
    assert_rule(
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "3-1" }"#),
        32,
        &["$.fields[0] (Foo)", "`3-1` is empty"],
    );
}

#[test]
fn rule_33_common_struct_names_are_capitalised() {
    assert_rule(
        &request_with_common("", r#"{ "name": "common", "versions": "0+", "fields": [] }"#),
        33,
        &["$.commonStructs[0] (common)", "must start with a capital letter"],
    );
}

#[test]
fn rule_34_structs_are_defined_once() {
    assert_rule(
        &request(
            r#"{ "name": "A", "type": "[]Item", "versions": "0+", "fields": [] },
               { "name": "B", "type": "[]Item", "versions": "0+", "fields": [] }"#,
        ),
        34,
        &["$.fields[1] (B)", "struct Item is defined twice (first at $.fields[0] (A))"],
    );
    assert_rule(
        &request_with_common(
            r#"{ "name": "A", "type": "[]C", "versions": "0+", "fields": [
                 { "name": "X", "type": "int8", "versions": "0+" } ] }"#,
            r#"{ "name": "C", "versions": "0+", "fields": [] }"#,
        ),
        34,
        &["$.fields[0] (A)", "re-specifies common struct C inline"],
    );
    assert_rule(
        &request_with_common(
            "",
            r#"{ "name": "C", "versions": "0+", "fields": [] }, { "name": "C", "versions": "0+", "fields": [] }"#,
        ),
        34,
        &["$.commonStructs[1] (C)", "struct C is defined twice"],
    );
}

#[test]
fn rule_35_referenced_structs_exist() {
    assert_rule(
        &request(r#"{ "name": "A", "type": "[]Missing", "versions": "0+" }"#),
        35,
        &["$.fields[0] (A)", "uses struct Missing, which is not defined"],
    );
}

fn message(file: &str, kind: &str, name: &str, api_key: i16) -> Message {
    let text = format!(
        r#"{{ "apiKey": {api_key}, "type": "{kind}", "name": "{name}", "validVersions": "0",
             "flexibleVersions": "0+", "fields": [] }}"#
    );
    load_str(file, &text).unwrap()
}

#[test]
fn rule_36_one_request_and_one_response_per_api_key() {
    // Names must carry the suffix (per file).
    let text = r#"{ "apiKey": 90, "type": "request", "name": "FooReq", "validVersions": "0",
        "flexibleVersions": "0+", "fields": [] }"#;
    let errs = errors("FooReq.json", text);
    assert_eq!(errs[0].rule, Some(36));
    assert!(errs[0].to_string().contains("request name `FooReq` must end with `Request`"));

    let set = [
        message("ARequest.json", "request", "ARequest", 1),
        message("AResponse.json", "response", "AResponse", 1),
        message("BRequest.json", "request", "BRequest", 1),
        message("CRequest.json", "request", "CRequest", 2),
        message("DResponse.json", "response", "DResponse", 2),
        message("EResponse.json", "response", "EResponse", 3),
    ];
    let errs: Vec<String> = validate_set(&set).iter().map(ToString::to_string).collect();
    assert_eq!(
        errs,
        [
            "BRequest.json: $: request BRequest has apiKey 1, already used by request ARequest in ARequest.json (rule 36: each apiKey has one request and one response, named `XRequest` and `XResponse`)",
            "DResponse.json: $: response DResponse has apiKey 2 of request CRequest; expected it to be named CResponse (rule 36: each apiKey has one request and one response, named `XRequest` and `XResponse`)",
            "EResponse.json: $: response EResponse (apiKey 3) has no request with the same apiKey (rule 36: each apiKey has one request and one response, named `XRequest` and `XResponse`)",
        ]
    );
    let lone = [message("ARequest.json", "request", "ARequest", 1)];
    let errs = validate_set(&lone);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].to_string().contains("has no response with the same apiKey"));
}

#[test]
fn rule_37_metadata_record_ids_are_unique() {
    let set = [
        message("TopicRecord.json", "metadata", "TopicRecord", 2),
        message("OtherRecord.json", "metadata", "OtherRecord", 2),
        // Requests and records have separate key spaces.
        message("XRequest.json", "request", "XRequest", 2),
        message("XResponse.json", "response", "XResponse", 2),
    ];
    let errs: Vec<String> = validate_set(&set).iter().map(ToString::to_string).collect();
    assert_eq!(
        errs,
        ["OtherRecord.json: $: metadata record OtherRecord has apiKey 2, already used by metadata record TopicRecord in TopicRecord.json (rule 37: metadata and coordinator record types (their apiKey) are unique within each kind)"]
    );
}

/// Kafka 4.x's coordinator records: a key schema and a value schema share a record type, and
/// each kind's record types are unique.
#[test]
fn rule_37_coordinator_record_types_are_unique_per_kind() {
    let set = [
        message("GroupMetadataKey.json", "coordinator-key", "GroupMetadataKey", 2),
        message("GroupMetadataValue.json", "coordinator-value", "GroupMetadataValue", 2),
        message("OffsetCommitKey.json", "coordinator-key", "OffsetCommitKey", 1),
        message("OtherKey.json", "coordinator-key", "OtherKey", 1),
        // Metadata records have their own key space.
        message("TopicRecord.json", "metadata", "TopicRecord", 2),
    ];
    let errs: Vec<String> = validate_set(&set).iter().map(ToString::to_string).collect();
    assert_eq!(
        errs,
        ["OtherKey.json: $: coordinator record key OtherKey has apiKey 1, already used by coordinator record key OffsetCommitKey in OffsetCommitKey.json (rule 37: metadata and coordinator record types (their apiKey) are unique within each kind)"]
    );
    let keyless = r#"{ "type": "coordinator-value", "name": "NoKeyValue", "validVersions": "0",
        "flexibleVersions": "0+", "fields": [] }"#;
    let errs = errors("NoKeyValue.json", keyless);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].to_string().contains("coordinator record value NoKeyValue has no `apiKey`"), "{}", errs[0]);
}

#[test]
fn all_errors_of_a_file_are_reported_together() {
    let errs = errors(
        "FooRequest.json",
        &request(
            r#"{ "name": "Foo", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0 },
               { "name": "Bar", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0 },
               { "name": "Count", "type": "int32", "versions": "0+", "nullableVersions": "0+" },
               { "name": "Late", "type": "int32", "versions": "0-2", "taggedVersions": "3+", "tag": 1 },
               { "name": "Odd", "type": "int33", "versions": "0+" },
               { "name": "Small", "type": "int8", "versions": "0+", "default": "1000" }"#,
        ),
    );
    let rules: Vec<Option<u8>> = errs.iter().map(|e| e.rule).collect();
    assert_eq!(rules, [Some(13), Some(18), Some(27), Some(17), Some(29)], "{errs:#?}");
}

#[test]
fn load_dir_aggregates_every_file_and_applies_cross_file_rules() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    let ok = |kind: &str, name: &str, key: i16| {
        format!(
            r#"// {name}
            {{ "apiKey": {key}, "type": "{kind}", "name": "{name}", "validVersions": "0",
               "flexibleVersions": "0+", "fields": [] }}"#
        )
    };
    write("BRequest.json", &ok("request", "BRequest", 1));
    write("BResponse.json", &ok("response", "BResponse", 1));
    write("ARequest.json", &ok("request", "ARequest", 0));
    write("AResponse.json", &ok("response", "AResponse", 0));
    write("README.md", "not a schema");
    let messages = load_dir(dir.path()).unwrap();
    let files: Vec<&str> = messages.iter().map(|m| m.file.as_str()).collect();
    assert_eq!(files, ["ARequest.json", "AResponse.json", "BRequest.json", "BResponse.json"]);

    write("CRequest.json", &ok("request", "CRequest", 1));
    write("Broken.json", "{ \"name\": ");
    // An invalid request does not make its (valid) response look unpaired.
    write(
        "DRequest.json",
        &format!(
            r#"{{ "apiKey": 5, "type": "request", "name": "DRequest", "validVersions": "0",
               "flexibleVersions": "0+", "fields": [ {} ] }}"#,
            r#"{ "name": "N", "type": "int32", "versions": "0+", "nullableVersions": "0+" }"#
        ),
    );
    write("DResponse.json", &ok("response", "DResponse", 5));
    let errs: Vec<String> = load_dir(dir.path()).unwrap_err().iter().map(ToString::to_string).collect();
    assert_eq!(
        errs,
        [
            "Broken.json: line 1, column 10: invalid JSON: EOF while parsing a value",
            "DRequest.json: $.fields[0] (N): field N of type int32 cannot be nullable; only string, bytes, records, \
             struct and array fields can have `nullableVersions` (rule 18: only string, bytes, records, struct and \
             array fields can be nullable)",
            "CRequest.json: $: request CRequest has apiKey 1, already used by request BRequest in BRequest.json (rule 36: \
             each apiKey has one request and one response, named `XRequest` and `XResponse`)",
        ]
    );
}

#[test]
fn comments_inside_strings_are_kept() {
    let text = r#"// leading comment
    /* block
       comment */
    { "apiKey": 90, "type": "request", "name": "FooRequest", "validVersions": "0", // trailing
      "flexibleVersions": "0+", "fields": [
        { "name": "Url", "type": "string", "versions": "0+", /* inline */
          "about": "see http://example.com/*x*/ and \"// not a comment\"" }
      ] }"#;
    let m = load_str("FooRequest.json", text).unwrap();
    assert_eq!(m.fields[0].about.as_deref(), Some(r#"see http://example.com/*x*/ and "// not a comment""#));
}

#[test]
fn tag_may_be_a_string() {
    let m = load_str(
        "FooRequest.json",
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": "0" }"#),
    )
    .unwrap();
    assert_eq!(m.fields[0].tag, Some(0));
    let errs = errors(
        "FooRequest.json",
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": "zero" }"#),
    );
    assert!(errs[0].to_string().contains("zero"), "{errs:?}");
}

#[test]
fn unknown_keys_fail_naming_the_key() {
    let errs = errors(
        "FooRequest.json",
        &request(r#"{ "name": "Foo", "type": "int32", "versions": "0+", "sensitive": true }"#),
    );
    assert_eq!(errs.len(), 1);
    let shown = errs[0].to_string();
    assert!(shown.starts_with("FooRequest.json: $.fields[0] (Foo): unknown key `sensitive` in field"), "{shown}");
}
