//! The differential checked against itself and against Kafka's one known omission:
//! - a codec that round-trips its own bytes but puts two fields in each other's place (the bug
//!   no round-trip test can see) is caught by Kafka's classes;
//! - bytes Kafka cannot read are reported as refused, with Kafka's exception;
//! - Kafka's converter writes records as `""` whatever they hold, and reads them back from
//!   base64 (why `kafka_json::as_kafka_writes` blanks them before comparing).

use bytes::{Bytes, BytesMut};
use kwire_codegen::ir::Message as Schema;
use kwire_conformance::generated::kafka_4_4_0_message::api_versions_request::ApiVersionsRequest;
use kwire_conformance::generated::kafka_4_4_0_message::fetch_response::FetchResponse;
use kwire_conformance::oracle::{oracle_for, Answer};
use kwire_conformance::plan::entries_of;
use kwire_conformance::{run, MismatchKind};
use kwire_inspect::sample::{self, Mode};
use kwire_runtime::json::{Json, JsonError, Style, Value};
use kwire_runtime::writer::Writer;
use kwire_runtime::{Decode, DecodeError, Encode, EncodeError, Message, VersionRange};

/// ApiVersionsRequest with a codec bug: the client software name and version trade places on
/// the wire. Its own decode and encode agree, so it round-trips every byte it writes.
#[derive(Debug, Default, Clone, PartialEq)]
struct SwappedNames(ApiVersionsRequest);

impl SwappedNames {
    fn swapped(&self) -> ApiVersionsRequest {
        let mut inner = self.0.clone();
        std::mem::swap(&mut inner.client_software_name, &mut inner.client_software_version);
        inner
    }
}

impl Encode for SwappedNames {
    fn encode_into(&self, writer: &mut Writer, version: i16) -> Result<(), EncodeError> {
        self.swapped().encode_into(writer, version)
    }

    fn encoded_size(&self, version: i16) -> Result<usize, EncodeError> {
        self.swapped().encoded_size(version)
    }
}

impl Decode for SwappedNames {
    fn decode(buf: &mut Bytes, version: i16) -> Result<Self, DecodeError> {
        Ok(SwappedNames(SwappedNames(ApiVersionsRequest::decode(buf, version)?).swapped()))
    }
}

impl Message for SwappedNames {
    const NAME: &'static str = ApiVersionsRequest::NAME;
    const VALID_VERSIONS: VersionRange = ApiVersionsRequest::VALID_VERSIONS;
    const FLEXIBLE_VERSIONS: Option<VersionRange> = ApiVersionsRequest::FLEXIBLE_VERSIONS;
    const DEPRECATED_VERSIONS: Option<VersionRange> = ApiVersionsRequest::DEPRECATED_VERSIONS;
}

impl Json for SwappedNames {
    fn write_json<S: Style>(&self, version: i16) -> Result<Value, JsonError> {
        self.0.write_json::<S>(version)
    }

    fn read_json<S: Style>(value: &Value, version: i16) -> Result<Self, JsonError> {
        ApiVersionsRequest::read_json::<S>(value, version).map(SwappedNames)
    }
}

fn schema(name: &str) -> Schema {
    entries_of("4.4.0").into_iter().find(|(e, _)| e.name == name).map(|(_, m)| m).expect("schema generated")
}

#[test]
fn a_codec_that_round_trips_but_swaps_two_fields_is_caught() {
    let Some(mut oracle) = oracle_for("4.4.0") else { return };
    let schema = schema("ApiVersionsRequest");
    let request = ApiVersionsRequest {
        client_software_name: "kwire".into(),
        client_software_version: "0.1.0".into(),
        ..Default::default()
    };
    let mut bytes = BytesMut::new();
    SwappedNames(request.clone()).encode(&mut bytes, 3).unwrap();
    // The broken codec agrees with itself...
    assert_eq!(SwappedNames::decode(&mut bytes.clone().freeze(), 3).unwrap(), SwappedNames(request.clone()));
    // ...and the correct one passes, so what fails below is the swap.
    let mut good = BytesMut::new();
    request.encode(&mut good, 3).unwrap();
    run::<ApiVersionsRequest>(&good, 3, &schema, &mut oracle).expect("the correct codec agrees with Kafka");

    let mismatches = run::<SwappedNames>(&bytes, 3, &schema, &mut oracle).expect_err("Kafka must catch the swap");
    let text: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
    let json = mismatches.iter().find(|m| m.kind == MismatchKind::Json).unwrap_or_else(|| panic!("{text:?}"));
    assert!(json.detail.starts_with("$.clientSoftwareName: ours \"kwire\", Kafka's \"0.1.0\""), "{json}");
    let bytes_mismatch =
        mismatches.iter().find(|m| m.kind == MismatchKind::Bytes).unwrap_or_else(|| panic!("{text:?}"));
    assert!(bytes_mismatch.detail.contains("first difference at offset"), "{bytes_mismatch}");
}

#[test]
fn bytes_kafka_cannot_read_are_reported_with_kafkas_exception() {
    let Some(mut oracle) = oracle_for("4.4.0") else { return };
    // A compact string claiming 100 bytes where 2 follow.
    let answer = oracle.ask("ApiVersionsRequest", 3, &[101, b'a', b'b'], "{}").unwrap();
    match answer {
        Answer::Refused { stage, message } => {
            assert_eq!(stage, "decode");
            assert!(!message.is_empty());
        }
        other => panic!("Kafka read a truncated string: {other:?}"),
    }
    let answer = oracle.ask("NoSuchSchema", 0, &[], "{}").unwrap();
    assert!(matches!(answer, Answer::Refused { ref stage, .. } if stage == "class"), "{answer:?}");
}

#[test]
fn records_are_written_empty_by_kafka_and_read_back_from_base64() {
    let Some(mut oracle) = oracle_for("4.4.0") else { return };
    let schema = schema("FetchResponse");
    // One partition with the 61-byte empty batch of the minimal instance.
    let bytes = sample::encode(&schema, 17, Mode::Minimal);
    let ours = FetchResponse::decode(&mut Bytes::from(bytes.clone()), 17).unwrap();
    let json = ours.to_json(17).unwrap();
    let records = &json["responses"][0]["partitions"][0]["records"];
    assert_eq!(records.as_str().map(str::len), Some(84), "61 bytes in base64: {records}");

    let Answer::Ok { reencoded, json: kafka_json, from_json } =
        oracle.ask("FetchResponse", 17, &bytes, &json.to_string()).unwrap()
    else {
        panic!("Kafka refused the minimal FetchResponse");
    };
    let kafka_json: Value = serde_json::from_str(&kafka_json).unwrap();
    // Kafka's converter: an empty binary node for non-empty records.
    assert_eq!(kafka_json["responses"][0]["partitions"][0]["records"], "");
    // Its reader takes our base64, so the records survive JSON on Kafka's side too.
    assert_eq!(reencoded, bytes);
    assert_eq!(from_json, bytes);
    run::<FetchResponse>(&bytes, 17, &schema, &mut oracle).expect("with records blanked, everything else is exact");
}
