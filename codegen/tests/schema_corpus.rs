//! Kafka's own schemas, read from its jars (`scripts/kafka-release`): every file of the default
//! release's messages and internal families and of the generator test schemas must read,
//! validate and lower, and the IR must agree with the raw JSON, field for field.

use kwire_codegen::ir::{DefaultValue, Field, FieldType, Message, MessageKind, Versions};
use kwire_codegen::parse::strip_comments;
use kwire_codegen::source::{read_schemas, watched_path};
use kwire_codegen::validate::{format_versions, parse_versions, type_name};
use kwire_codegen::{load_schemas, load_str, SchemaFamily};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Kafka's messages: `KAFKA_SCHEMAS_DIR` if set, else the default release's kafka-clients jar.
fn message_dir() -> PathBuf {
    kwire_codegen::locate_kafka_schemas(&workspace()).unwrap_or_else(|e| panic!("{e}"))
}

/// A folder or `JAR!/FOLDER` that must be there (`scripts/kafka-release` fetches the jars).
fn existing(source: PathBuf) -> PathBuf {
    let jar = watched_path(&source);
    assert!(jar.exists(), "{} not found: run scripts/kafka-release", jar.display());
    source
}

/// `family`'s schemas in Kafka `release`'s jar.
fn family_of(family: &SchemaFamily, release: &str) -> PathBuf {
    existing(family.source(&kwire_codegen::kafka_jars_dir(&workspace()), release))
}

/// Checks a folder or jar: loads, one message or retired stub per JSON file in file-name order,
/// each message agreeing with its JSON.
fn check_folder(source: &Path) -> Vec<Message> {
    let loaded = load_schemas(&[source], false).unwrap_or_else(|e| panic!("{} failed to load:\n{e}", source.display()));
    let files = read_schemas(source).unwrap();
    assert!(!files.is_empty(), "no schema files in {}", source.display());
    let mut loaded_names: Vec<&str> =
        loaded.messages.iter().map(|m| m.file.as_str()).chain(loaded.retired.iter().map(|r| r.file.as_str())).collect();
    loaded_names.sort();
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(loaded_names, names);
    for m in &loaded.messages {
        let file = files.iter().find(|f| f.name == m.file).unwrap();
        let json: Value = serde_json::from_str(&strip_comments(&file.text).unwrap()).unwrap();
        agrees_with_json(m, &json);
    }
    loaded.messages
}

/// The lowered message mirrors its JSON: names, kinds, versions, every field (recursively), and
/// every struct defined once.
fn agrees_with_json(m: &Message, json: &Value) {
    assert_eq!(m.name, json["name"].as_str().unwrap(), "{}", m.file);
    assert_eq!(format_versions(Some(m.valid_versions)), json["validVersions"].as_str().unwrap(), "{}", m.file);
    assert_eq!(format_versions(m.flexible_versions), json["flexibleVersions"].as_str().unwrap(), "{}", m.file);
    assert_eq!(m.api_key, json["apiKey"].as_i64().map(|k| k as i16));
    let kind = match json["type"].as_str().unwrap() {
        "request" => MessageKind::Request,
        "response" => MessageKind::Response,
        "header" => MessageKind::Header,
        "data" => MessageKind::Data,
        "metadata" => MessageKind::Metadata,
        "coordinator-key" => MessageKind::CoordinatorKey,
        "coordinator-value" => MessageKind::CoordinatorValue,
        other => panic!("{}: kind {other}", m.file),
    };
    assert_eq!(m.kind, kind);
    let mut defined = Vec::new();
    fields_agree(m, &m.fields, &json["fields"], &mut defined);
    let commons = json["commonStructs"].as_array().cloned().unwrap_or_default();
    for c in &commons {
        let name = c["name"].as_str().unwrap();
        let s = m.structs.iter().find(|s| s.name == name).unwrap();
        assert!(s.is_common);
        defined.push(name.to_owned());
        fields_agree(m, &s.fields, &c["fields"], &mut defined);
    }
    let mut in_ir: Vec<String> = m.structs.iter().map(|s| s.name.clone()).collect();
    in_ir.sort();
    defined.sort();
    assert_eq!(in_ir, defined, "{}: structs", m.file);
    for s in &m.structs {
        assert!(
            s.versions.intersect(&m.valid_versions).is_some() || s.is_common,
            "{}: struct {} versions {:?} outside the message's",
            m.file,
            s.name,
            s.versions
        );
    }
}

fn fields_agree(m: &Message, fields: &[Field], json: &Value, defined: &mut Vec<String>) {
    let json = json.as_array().unwrap();
    assert_eq!(fields.len(), json.len(), "{}", m.file);
    for (f, j) in fields.iter().zip(json) {
        let raw_name = j["name"].as_str().unwrap();
        let ctx = format!("{}: {raw_name}", m.file);
        assert!(f.name.eq_ignore_ascii_case(raw_name) && f.name.starts_with(|c: char| c.is_ascii_uppercase()), "{ctx}");
        assert_eq!(type_name(&f.ty), j["type"].as_str().unwrap(), "{ctx}");
        let versions = j["versions"].as_str().or(j["taggedVersions"].as_str()).unwrap();
        assert_eq!(format_versions(Some(f.versions)), versions, "{ctx}");
        assert_eq!(
            f.tagged_versions.map(|v| format_versions(Some(v))),
            j["taggedVersions"].as_str().map(str::to_owned),
            "{ctx}"
        );
        let tag = match &j["tag"] {
            Value::Null => None,
            Value::String(s) => Some(s.parse::<u32>().unwrap()),
            other => Some(other.as_u64().unwrap() as u32),
        };
        assert_eq!(f.tag, tag, "{ctx}");
        if let Some(n) = f.nullable_versions {
            assert!(n.intersect(&f.versions) == Some(n), "{ctx}: nullable not clipped");
        }
        let raw_nullable = j["nullableVersions"].as_str().map(|r| parse_versions(r).unwrap());
        assert_eq!(f.nullable_versions, raw_nullable.flatten().and_then(|n| n.intersect(&f.versions)), "{ctx}");
        assert_eq!(f.map_key, j["mapKey"].as_bool().unwrap_or(false), "{ctx}");
        assert_eq!(f.zero_copy, j["zeroCopy"].as_bool().unwrap_or(false), "{ctx}");
        assert_eq!(f.about.as_deref(), j["about"].as_str(), "{ctx}");
        assert_eq!(f.entity_type.as_deref(), j["entityType"].as_str(), "{ctx}");
        let ignorable = match &j["ignorable"] {
            Value::Bool(b) => *b,
            Value::String(s) => s == "true",
            _ => false,
        };
        assert_eq!(f.ignorable, ignorable, "{ctx}");
        default_agrees(&f.default, &j["default"], &f.ty, &ctx);
        if let Some(nested) = j.get("fields") {
            let name = f.ty.struct_name().unwrap();
            let s = m.structs.iter().find(|s| s.name == name).unwrap();
            assert!(!s.is_common, "{ctx}");
            defined.push(name.to_owned());
            fields_agree(m, &s.fields, nested, defined);
        }
    }
}

fn default_agrees(d: &DefaultValue, j: &Value, ty: &FieldType, ctx: &str) {
    let text = match j {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    match (d, text.as_deref()) {
        (DefaultValue::Implicit, None | Some("")) => {}
        (DefaultValue::Null, Some("null")) => {}
        (DefaultValue::Bool(b), Some(t)) => {
            assert_eq!(b.to_string(), t.to_ascii_lowercase(), "{ctx}")
        }
        (DefaultValue::Int(v), Some(t)) => match t.strip_prefix("0x") {
            Some(hex) => assert_eq!(*v, i64::from_str_radix(hex, 16).unwrap(), "{ctx}"),
            None => assert_eq!(v.to_string(), t, "{ctx}"),
        },
        (DefaultValue::Float(v), Some(t)) => assert_eq!(*v, t.parse::<f64>().unwrap(), "{ctx}"),
        (DefaultValue::Str(s), Some(t)) => assert_eq!(s, t, "{ctx}"),
        (DefaultValue::Uuid(u), Some(_)) => assert_eq!(*ty, FieldType::Uuid, "{ctx}: {u:?}"),
        (d, t) => panic!("{ctx}: default {d:?} from {t:?}"),
    }
}

#[test]
fn every_message_schema_loads() {
    let messages = check_folder(&existing(message_dir()));
    let requests = messages.iter().filter(|m| m.kind == MessageKind::Request).count();
    let responses = messages.iter().filter(|m| m.kind == MessageKind::Response).count();
    assert_eq!(requests, responses);
    assert!(requests > 0);
}

#[test]
fn every_test_schema_loads() {
    check_folder(&family_of(&kwire_codegen::TEST_SCHEMAS, kwire_codegen::TEST_SCHEMAS_RELEASE));
}

#[test]
fn every_internal_family_loads() {
    for family in &kwire_codegen::INTERNAL_FAMILIES {
        check_folder(&family_of(family, kwire_codegen::DEFAULT_KAFKA_RELEASE));
    }
}

/// One schema of a folder or jar, lowered.
fn load_file(source: &Path, name: &str) -> Message {
    let files = read_schemas(source).unwrap();
    let file = files.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name} in {}", source.display()));
    load_str(name, &file.text).unwrap_or_else(|e| panic!("{e}"))
}

/// `family`'s jar of the default release.
fn internal(name: &str) -> PathBuf {
    family_of(&kwire_codegen::schema_family(name).unwrap(), kwire_codegen::DEFAULT_KAFKA_RELEASE)
}

fn field<'a>(fields: &'a [Field], name: &str) -> &'a Field {
    fields.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no field {name}"))
}

#[test]
fn simple_example_message_lowers_every_feature() {
    let tests = family_of(&kwire_codegen::TEST_SCHEMAS, kwire_codegen::TEST_SCHEMAS_RELEASE);
    let m = load_file(&tests, "SimpleExampleMessage.json");
    assert_eq!(m.file, "SimpleExampleMessage.json");
    assert_eq!(m.valid_versions, Versions::new(0, 2));
    assert_eq!(m.flexible_versions, Some(Versions::new(1, Versions::OPEN)));
    // Tagged-only: versions are the tagged versions.
    let arr = field(&m.fields, "MyTaggedIntArray");
    assert_eq!(arr.versions, Versions::new(1, Versions::OPEN));
    assert_eq!(arr.tagged_versions, arr.versions.into());
    assert_eq!(arr.tag, Some(0));
    assert_eq!(arr.ty, FieldType::Array(Box::new(FieldType::Int32)));
    assert_eq!(field(&m.fields, "MyNullableString").default, DefaultValue::Null);
    assert_eq!(field(&m.fields, "MyInt16").default, DefaultValue::Int(123));
    assert_eq!(field(&m.fields, "MyFloat64").default, DefaultValue::Float(12.34));
    assert_eq!(field(&m.fields, "TaggedLong").default, DefaultValue::Int(0x0cafcacafcacafca));
    assert_eq!(field(&m.fields, "MyUint16").default, DefaultValue::Int(33000));
    assert_eq!(field(&m.fields, "MyUint32").default, DefaultValue::Int(1234567));
    // "H3KKO4NTRPaCWtEmm3vW7A" is base64url for 1f72 8a3b 8353 44f6 825a d126 9b7b d6ec.
    assert_eq!(
        field(&m.fields, "TaggedUuid").default,
        DefaultValue::Uuid([
            0x1f, 0x72, 0x8a, 0x3b, 0x83, 0x53, 0x44, 0xf6, 0x82, 0x5a, 0xd1, 0x26, 0x9b, 0x7b, 0xd6, 0xec
        ])
    );
    let zc = field(&m.fields, "NullableZeroCopyByteBuffer");
    assert!(zc.zero_copy);
    // nullableVersions "0+" clipped to the field's versions "1".
    assert_eq!(zc.nullable_versions, Some(Versions::new(1, 1)));
    // Structs: nested depth-first in schema order, then the common struct.
    let order: Vec<(&str, bool)> = m.structs.iter().map(|s| (s.name.as_str(), s.is_common)).collect();
    assert_eq!(
        order,
        [("MyStruct", false), ("StructArray", false), ("TaggedStruct", false), ("TestCommonStruct", true)]
    );
    let my_struct = &m.structs[0];
    assert_eq!(my_struct.versions, Versions::new(2, 2));
    assert_eq!(m.structs[3].versions, Versions::new(0, 2));
}

#[test]
fn streams_schema_with_block_comments_and_common_structs() {
    let m = load_file(&internal("streams"), "SubscriptionInfoData.json");
    assert_eq!(m.kind, MessageKind::Data);
    assert_eq!(m.flexible_versions, None);
    let order: Vec<(&str, Versions)> = m.structs.iter().map(|s| (s.name.as_str(), s.versions)).collect();
    assert_eq!(
        order,
        [
            ("TaskId", Versions::new(1, 6)),
            ("TaskOffsetSum", Versions::new(7, 11)),
            ("ClientTag", Versions::new(11, 11)),
            ("PartitionToOffsetSum", Versions::new(7, 9)),
        ]
    );
    let task_offset_sum = &m.structs[1];
    let named = field(&task_offset_sum.fields, "NamedTopology");
    assert!(!named.ignorable, "\"ignorable\": \"false\" is read as false");
}

#[test]
fn tag_given_as_a_string() {
    // Kafka 3.9's KRaft records still spell this tag "0"; 4.x writes 0.
    let metadata = family_of(&kwire_codegen::schema_family("metadata").unwrap(), "3.9.2");
    let m = load_file(&metadata, "RegisterBrokerRecord.json");
    let log_dirs = field(&m.fields, "LogDirs");
    assert_eq!(log_dirs.tag, Some(0));
    assert_eq!(log_dirs.tagged_versions, Some(Versions::new(3, Versions::OPEN)));
}

#[test]
fn json_null_default_means_no_default() {
    let m = load_file(&internal("group_coordinator"), "ConsumerGroupMemberMetadataValue.json");
    assert_eq!(field(&m.fields, "ClassicMemberMetadata").default, DefaultValue::Implicit);
}

#[test]
fn loading_is_deterministic() {
    let dir = existing(message_dir());
    let load = || load_schemas(&[&dir], false).unwrap();
    assert_eq!(load(), load());
}
