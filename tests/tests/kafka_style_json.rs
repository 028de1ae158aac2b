//! Kafka-style JSON on the generated messages: names, order, which fields each version
//! writes, base64 bytes and records, Kafka's uuid text, and errors that name the field.

use kwire::messages::api_versions_response::ApiVersion;
use kwire::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kwire::messages::metadata_response::MetadataResponseTopic;
use kwire::messages::{ApiVersionsResponse, FetchResponse, MetadataResponse};
use kwire::{Bytes, ErrorCode, Json, Records, Uuid};
use serde_json::json;

fn api_versions() -> ApiVersionsResponse {
    ApiVersionsResponse {
        api_keys: vec![ApiVersion { api_key: 18, min_version: 0, max_version: 4, ..Default::default() }],
        throttle_time_ms: 5,
        ..Default::default()
    }
}

#[test]
fn fields_of_the_version_in_schema_order_with_kafkas_names() {
    // v0 has no throttle time; v3 adds it and tagged fields, which at their defaults are left
    // out, as Kafka's converter leaves them out.
    let v0 = api_versions().to_json(0).unwrap();
    assert_eq!(v0.to_string(), r#"{"errorCode":0,"apiKeys":[{"apiKey":18,"minVersion":0,"maxVersion":4}]}"#);
    let mut response = api_versions();
    response.finalized_features_epoch = 7;
    let v3 = response.to_json(3).unwrap();
    assert_eq!(
        v3.to_string(),
        r#"{"errorCode":0,"apiKeys":[{"apiKey":18,"minVersion":0,"maxVersion":4}],"throttleTimeMs":5,"finalizedFeaturesEpoch":7}"#
    );
    assert_eq!(ApiVersionsResponse::from_json(&v3, 3).unwrap(), response);
}

#[test]
fn uuids_bytes_records_and_int64_as_kafka_writes_them() {
    let topic_id = Uuid::from_bytes(std::array::from_fn(|i| (i * 17) as u8));
    let metadata = MetadataResponse {
        topics: vec![MetadataResponseTopic { name: Some("orders".into()), topic_id, ..Default::default() }],
        ..Default::default()
    };
    let json = metadata.to_json(12).unwrap();
    // Kafka's Uuid.toString(): URL-safe base64 without padding.
    assert_eq!(json["topics"][0]["topicId"], "ABEiM0RVZneImaq7zN3u_w");
    assert_eq!(json["topics"][0]["name"], "orders");
    assert_eq!(json["topics"][0]["errorCode"], 0);

    let fetch = FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic: "t".into(),
            partitions: vec![PartitionData {
                high_watermark: 9_007_199_254_740_993,
                records: Some(Records::from_bytes(Bytes::from_static(b"\x00\x01\x02\xff"))),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let json = fetch.to_json(11).unwrap();
    let partition = &json["responses"][0]["partitions"][0];
    assert_eq!(partition["records"], "AAEC/w==");
    // Beyond 2^53, exact: int64 stays an integer.
    assert_eq!(partition["highWatermark"].as_i64(), Some(9_007_199_254_740_993));
    assert_eq!(FetchResponse::from_json(&json, 11).unwrap(), fetch);
}

#[test]
fn reading_follows_kafkas_rules() {
    // A field this version requires must be there; the error names where.
    let missing = json!({"errorCode": 0, "apiKeys": [{"apiKey": 18, "minVersion": 0}], "throttleTimeMs": 0});
    let err = ApiVersionsResponse::from_json(&missing, 1).unwrap_err();
    assert_eq!(err.path(), "ApiVersionsResponse.apiKeys > ApiVersion.maxVersion");
    assert!(err.to_string().contains("mandatory in version 1"), "{err}");
    // Fields of other versions and keys it does not know are ignored; missing optional ones default.
    let lenient = json!({"errorCode": 35, "apiKeys": [], "future": true, "throttleTimeMs": 9});
    let read = ApiVersionsResponse::from_json(&lenient, 0).unwrap();
    assert_eq!((read.error_code, read.throttle_time_ms), (ErrorCode::UNSUPPORTED_VERSION, 9));
    // Wrong types and ranges are errors, not panics.
    let err = ApiVersionsResponse::from_json(&json!({"errorCode": 70000, "apiKeys": []}), 0).unwrap_err();
    assert!(err.to_string().contains("out of range for i16"), "{err}");
    assert!(ApiVersionsResponse::from_json(&json!([1, 2]), 0).is_err());
    assert!(ApiVersionsResponse::from_json(&json!({"errorCode": 0, "apiKeys": "x"}), 0).is_err());
    // A version the message does not have.
    assert!(api_versions().to_json(99).unwrap_err().to_string().contains("version 99"));
}

#[test]
fn unknown_tagged_fields_are_kept() {
    let mut response = api_versions();
    response.unknown_tagged_fields.insert(9, Bytes::from_static(b"\x01\x02"));
    let json = response.to_json(3).unwrap();
    assert_eq!(json["_unknownTaggedFields"], json!([{"tag": 9, "data": "AQI="}]));
    assert_eq!(ApiVersionsResponse::from_json(&json, 3).unwrap(), response);
}
