//! Typed fields: `ErrorCode` for every `...ErrorCode` field, the runtime's ids for
//! `entityType` fields, `Keyed` lookup by `mapKey` on decoded arrays, and the plain-types
//! mode (`Config::plain_types`) that keeps the bare integers and strings.

use std::collections::HashMap;

use kwire::messages::metadata_response::{MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic};
use kwire::messages::{FetchRequest, MetadataResponse};
use kwire::{BrokerId, Decode, Encode, ErrorCode, KeyedSlice, ProducerId, TopicName};

fn metadata() -> MetadataResponse {
    let topic = |name: &str, error: ErrorCode| MetadataResponseTopic {
        error_code: error,
        name: Some(name.into()),
        partitions: (0..3)
            .map(|p| MetadataResponsePartition {
                partition_index: p,
                leader_id: BrokerId(p % 2),
                replica_nodes: vec![BrokerId(0), BrokerId(1)].into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    MetadataResponse {
        brokers: vec![
            MetadataResponseBroker { node_id: BrokerId(0), host: "b0".into(), port: 9092, ..Default::default() },
            MetadataResponseBroker { node_id: BrokerId(1), host: "b1".into(), port: 9093, ..Default::default() },
        ],
        controller_id: BrokerId(1),
        topics: vec![
            topic("orders", ErrorCode::NONE),
            topic("payments", ErrorCode::LEADER_NOT_AVAILABLE),
            topic("orders", ErrorCode::NONE),
        ],
        ..Default::default()
    }
}

fn decoded(version: i16) -> MetadataResponse {
    let bytes = metadata().encode_to_bytes(version).unwrap();
    MetadataResponse::decode(&mut bytes.clone(), version).unwrap()
}

#[test]
fn error_fields_are_error_codes() {
    let m = decoded(12);
    let payments = m.topics.by_key(Some("payments")).unwrap();
    assert_eq!(payments.error_code, ErrorCode::LEADER_NOT_AVAILABLE);
    assert!(payments.error_code.is_retriable());
    assert_eq!(payments.error_code.name(), Some("LEADER_NOT_AVAILABLE"));
    assert_eq!(m.topics.iter().filter(|t| t.error_code.is_err()).count(), 1);
    assert!(m.topics.iter().flat_map(|t| &t.partitions).all(|p| p.error_code.ok().is_ok()));
}

#[test]
fn an_unknown_error_code_survives_a_round_trip() {
    let mut m = metadata();
    m.topics[0].error_code = ErrorCode::from(1234);
    for version in [0, 9, 12] {
        let bytes = m.encode_to_bytes(version).unwrap();
        let back = MetadataResponse::decode(&mut bytes.clone(), version).unwrap();
        assert_eq!(back.topics[0].error_code, ErrorCode(1234));
        assert_eq!(i16::from(back.topics[0].error_code), 1234);
        assert!(!back.topics[0].error_code.is_known());
        assert_eq!(back.topics[0].error_code.to_string(), "unknown error code 1234");
    }
}

#[test]
fn lookup_by_map_key_on_a_decoded_response() {
    for version in [1, 9, 12] {
        let m = decoded(version);
        // Brokers are keyed by node id, topics by name; order and duplicates are kept.
        assert_eq!(m.brokers.by_key(BrokerId(1)).map(|b| b.port), Some(9093));
        assert!(m.brokers.by_key(BrokerId(7)).is_none());
        assert!(m.topics.contains_key(Some("orders")));
        assert!(!m.topics.contains_key(Some("absent")));
        assert_eq!(m.topics.all_by_key(Some("orders")).count(), 2, "duplicates kept");
        assert_eq!(m.topics.by_key(Some("orders")).map(|t| t.partitions.len()), Some(3));
        assert_eq!(
            m.topics.iter().map(|t| t.name.as_deref().unwrap()).collect::<Vec<_>>(),
            ["orders", "payments", "orders"]
        );
    }
    // A key looked up with a borrowed, non-static string.
    let wanted = String::from("payments");
    assert!(decoded(12).topics.contains_key(Some(wanted.as_str())));
}

#[test]
fn ids_work_as_map_keys_and_print_as_their_values() {
    let m = decoded(12);
    let mut leaders: HashMap<TopicName, Vec<BrokerId>> = HashMap::new();
    for t in &m.topics {
        let name = t.name.clone().unwrap();
        leaders.entry(name).or_default().extend(t.partitions.iter().map(|p| p.leader_id));
    }
    // Searched with a &str, as Borrow<str> promises.
    assert_eq!(leaders.get("payments").map(Vec::len), Some(3));
    assert_eq!(leaders["orders"].len(), 6);
    let id: BrokerId = 5.into();
    assert_eq!((id.to_string(), i32::from(id), *id), ("5".to_string(), 5, 5));
    let name = TopicName::from("orders");
    assert_eq!((name.as_str(), name.len(), format!("{name:?}")), ("orders", 6, "\"orders\"".to_string()));
    let producer: ProducerId = ProducerId(-1);
    assert_eq!(producer.get(), -1);
    // Zero-cost: each is the wire value's size.
    assert_eq!(size_of::<BrokerId>(), 4);
    assert_eq!(size_of::<ErrorCode>(), 2);
    assert_eq!(size_of::<TopicName>(), size_of::<kwire::StrBytes>());
}

#[test]
fn typed_and_plain_generations_write_the_same_bytes() {
    use kwire_tests::corpus::release_3_7_2 as plain;
    // The same message in both modes: plain fields are bare integers and strings.
    let typed = kwire::messages::MetadataRequest {
        topics: Some(vec![kwire::messages::metadata_request::MetadataRequestTopic {
            name: Some("orders".into()),
            ..Default::default()
        }]),
        ..Default::default()
    };
    let bare = plain::MetadataRequest {
        topics: Some(vec![plain::metadata_request::MetadataRequestTopic {
            name: Some(kwire::StrBytes::from("orders")),
            ..Default::default()
        }]),
        ..Default::default()
    };
    for version in 0..=12 {
        assert_eq!(typed.encode_to_bytes(version).unwrap(), bare.encode_to_bytes(version).unwrap(), "v{version}");
    }
    let response = plain::MetadataResponse { controller_id: 3, ..Default::default() };
    let controller: i32 = response.controller_id;
    let error: i16 = plain::ApiVersionsResponse::default().error_code;
    assert_eq!((controller, error), (3, 0));
    // A fetch's replica id is a broker id in typed mode.
    assert_eq!(FetchRequest::default().replica_id, BrokerId(-1));
}
