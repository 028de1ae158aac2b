//! Lowering to the IR: version ranges, struct collection order and struct versions.

use kwire_codegen::ir::{FieldType, MessageKind, Versions};
use kwire_codegen::load_str;

const OPEN: i16 = Versions::OPEN;

#[test]
fn message_properties_are_lowered() {
    let m = load_str(
        "FooRequest.json",
        r#"{ "apiKey": 7, "type": "request", "name": "FooRequest", "validVersions": "2-5",
             "flexibleVersions": "none", "deprecatedVersions": "2-3", "latestVersionUnstable": true,
             "listeners": ["controller", "broker"], "fields": [
               { "name": "a", "type": "[]string", "versions": "5", "nullableVersions": "3+",
                 "entityType": "topicName", "about": "A.", "ignorable": "true" } ] }"#,
    )
    .unwrap();
    assert_eq!(m.file, "FooRequest.json");
    assert_eq!(m.kind, MessageKind::Request);
    assert_eq!(m.api_key, Some(7));
    assert_eq!(m.valid_versions, Versions::new(2, 5));
    assert_eq!(m.flexible_versions, None);
    assert_eq!(m.deprecated_versions, Some(Versions::new(2, 3)));
    assert!(m.latest_version_unstable);
    assert_eq!(m.listeners, ["controller", "broker"]);
    let a = &m.fields[0];
    assert_eq!(a.name, "A");
    assert_eq!(a.ty, FieldType::Array(Box::new(FieldType::String)));
    assert_eq!(a.versions, Versions::new(5, 5));
    // "3+" clipped to the field's versions.
    assert_eq!(a.nullable_versions, Some(Versions::new(5, 5)));
    assert_eq!(a.entity_type.as_deref(), Some("topicName"));
    assert!(a.ignorable);
    assert!(a.tag.is_none() && a.tagged_versions.is_none() && a.flexible_versions.is_none());
}

#[test]
fn structs_are_collected_depth_first_then_common_structs() {
    let m = load_str(
        "FooData.json",
        r#"{ "type": "data", "name": "FooData", "validVersions": "0-5", "flexibleVersions": "0+",
             "fields": [
               { "name": "Outer", "type": "[]Outer", "versions": "1+", "fields": [
                   { "name": "Inner", "type": "Inner", "versions": "2-4", "fields": [
                       { "name": "Deep", "type": "[]Deep", "versions": "0+", "fields": [] } ] },
                   { "name": "Used", "type": "UsedLater", "versions": "3+" } ] },
               { "name": "First", "type": "[]UsedFirst", "versions": "1-2" },
               { "name": "Again", "type": "UsedFirst", "versions": "4+" },
               { "name": "Tagged", "type": "Sibling", "taggedVersions": "3+", "tag": 0, "fields": [] }
             ],
             "commonStructs": [
               { "name": "Unused", "versions": "2+", "fields": [
                   { "name": "InUnused", "type": "[]InUnused", "versions": "0+", "fields": [] } ] },
               { "name": "UsedLater", "versions": "0+", "fields": [
                   { "name": "Nested", "type": "[]InCommon", "versions": "0-3", "fields": [] },
                   { "name": "Chained", "type": "Chain", "versions": "4+" } ] },
               { "name": "Chain", "versions": "0+", "fields": [] },
               { "name": "UsedFirst", "versions": "0+", "fields": [] }
             ] }"#,
    )
    .unwrap();
    let order: Vec<(&str, Versions, bool)> =
        m.structs.iter().map(|s| (s.name.as_str(), s.versions, s.is_common)).collect();
    assert_eq!(
        order,
        [
            ("Outer", Versions::new(1, 5), false),
            ("Inner", Versions::new(2, 4), false),
            ("Deep", Versions::new(2, 4), false),
            ("Sibling", Versions::new(3, 5), false),
            // Used common structs in order of first use; versions are the union of their uses.
            ("UsedLater", Versions::new(3, 5), true),
            ("InCommon", Versions::new(3, 3), false),
            ("UsedFirst", Versions::new(1, 5), true),
            ("Chain", Versions::new(4, 5), true),
            // Unused ones last, at their declared versions within the message's.
            ("Unused", Versions::new(2, 5), true),
            ("InUnused", Versions::new(2, 5), false),
        ]
    );
    let tagged = m.fields.iter().find(|f| f.name == "Tagged").unwrap();
    assert_eq!(tagged.versions, Versions::new(3, OPEN));
    assert_eq!(tagged.tagged_versions, Some(Versions::new(3, OPEN)));
}

#[test]
fn a_struct_that_can_never_appear_still_lowers() {
    // The common struct is used from version 3, its nested struct exists only in 0-1.
    let m = load_str(
        "FooData.json",
        r#"{ "type": "data", "name": "FooData", "validVersions": "0-3", "flexibleVersions": "none",
             "fields": [ { "name": "C", "type": "C", "versions": "3+" } ],
             "commonStructs": [ { "name": "C", "versions": "0+", "fields": [
                 { "name": "Old", "type": "[]Old", "versions": "0-1", "fields": [] } ] } ] }"#,
    )
    .unwrap();
    assert_eq!(m.structs[0].versions, Versions::new(3, 3));
    assert_eq!(m.structs[1].name, "Old");
    assert_eq!(m.structs[1].versions, Versions::new(0, 1));
}
