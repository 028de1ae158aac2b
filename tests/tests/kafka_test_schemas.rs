//! Kafka's generator test schemas (`test/`): tagged fields, unknown tags, zero-copy bytes,
//! nullable structs, common structs, defaults and Kafka's version rules, on typed values.

use bytes::{Bytes, BytesMut};
use kwire::messages::{BrokerRegistrationRequest, FetchResponse};
use kwire_runtime::{Decode, DecodeErrorKind, Encode, EncodeErrorKind, StrBytes, Uuid};
use kwire_tests::corpus::test::nullable_struct_message::{MyStruct, MyStruct2, MyStruct3, NullableStructMessage};
use kwire_tests::corpus::test::simple_example_message::{SimpleExampleMessage, TaggedStruct};
use kwire_tests::corpus::test::simple_records_message::SimpleRecordsMessage;

fn encode<T: Encode>(value: &T, version: i16) -> Bytes {
    let mut buf = BytesMut::new();
    value.encode(&mut buf, version).unwrap();
    assert_eq!(buf.len(), value.encoded_size(version).unwrap());
    buf.freeze()
}

#[test]
fn schema_defaults_fill_default_impl() {
    let m = SimpleExampleMessage::default();
    assert_eq!(m.my_int16, 123);
    assert_eq!(m.my_float64, 12.34);
    assert_eq!(m.my_nullable_string, None);
    assert_eq!(m.tagged_long, 0x0cafcacafcacafca);
    assert_eq!(m.my_uint16, 33000);
    assert_eq!(m.my_uint32, 1234567);
    assert_eq!(m.my_common_struct.foo, 123);
    assert_eq!(m.my_other_common_struct.bar, 123);
    // "H3KKO4NTRPaCWtEmm3vW7A" is base64url for these 16 bytes.
    assert_eq!(m.tagged_uuid, Uuid::parse_str("1f728a3b-8353-44f6-825a-d1269b7bd6ec").unwrap());
}

#[test]
fn default_tagged_fields_are_not_written() {
    let m = SimpleExampleMessage::default();
    let bytes = encode(&m, 1);
    // v1: processId (16) + zeroCopyByteBuffer (1) + nullableZeroCopyByteBuffer (1, empty) +
    // common structs (4+4+tags 1, twice) + uint16 + uint32 + the message's tag count (0).
    assert_eq!(bytes.len(), 16 + 1 + 1 + 9 + 9 + 2 + 4 + 1);
    assert_eq!(*bytes.last().unwrap(), 0, "no tagged fields at their defaults");
    assert_eq!(SimpleExampleMessage::decode(&mut bytes.clone(), 1).unwrap(), m);
}

#[test]
fn tagged_fields_are_written_in_tag_order_and_read_back() {
    let m = SimpleExampleMessage {
        my_tagged_int_array: vec![1, 2].into(),
        my_int16: 7,
        my_string: StrBytes::from_static_str("hi"),
        my_tagged_struct: TaggedStruct { struct_id: "s".into(), ..Default::default() },
        ..Default::default()
    };
    let bytes = encode(&m, 2);
    let decoded = SimpleExampleMessage::decode(&mut bytes.clone(), 2).unwrap();
    assert_eq!(decoded, m);
    // The tagged section at the end: 4 fields, tags 0, 2, 4, 8 in that order.
    let tail: &[u8] = &[
        4, // count
        0, 9, 3, 0, 0, 0, 1, 0, 0, 0, 2, // tag 0: compact array of two int32
        2, 2, 0, 7, // tag 2: int16 7
        4, 3, 3, b'h', b'i', // tag 4: compact string "hi"
        8, 3, 2, b's', 0, // tag 8: TaggedStruct { "s", no tags }
    ];
    assert!(bytes.ends_with(tail), "{}", hex::encode(&bytes));
}

#[test]
fn unknown_tags_survive_a_round_trip_and_are_refused_where_not_flexible() {
    let mut bytes = BytesMut::from(&encode(&SimpleExampleMessage::default(), 1)[..]);
    // Replace the empty tag section with one holding unknown tag 70 = [0xab, 0xcd].
    bytes.truncate(bytes.len() - 1);
    bytes.extend_from_slice(&[1, 70, 2, 0xab, 0xcd]);
    let bytes = bytes.freeze();
    let decoded = SimpleExampleMessage::decode(&mut bytes.clone(), 1).unwrap();
    assert_eq!(decoded.unknown_tagged_fields.get(&70).map(|b| &b[..]), Some(&[0xab, 0xcd][..]));
    assert_eq!(encode(&decoded, 1), bytes);
    let err = decoded.encode(&mut BytesMut::new(), 0).unwrap_err();
    assert!(matches!(err.kind(), EncodeErrorKind::TaggedFieldsNotFlexible { version: 0 }), "{err}");
}

#[test]
fn a_known_tag_at_a_version_where_it_is_not_tagged_is_an_error() {
    // taggedLongFlexibleVersionSubset is tag 9 only from v2.
    let mut bytes = BytesMut::from(&encode(&SimpleExampleMessage::default(), 1)[..]);
    bytes.truncate(bytes.len() - 1);
    bytes.extend_from_slice(&[1, 9, 8, 0, 0, 0, 0, 0, 0, 0, 5]);
    let err = SimpleExampleMessage::decode(&mut bytes.freeze(), 1).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::TagNotValidForVersion { tag: 9, version: 1 });
    assert!(err.to_string().contains("tagged_long_flexible_version_subset"), "{err}");
}

#[test]
fn version_rules_for_fields_missing_from_a_version() {
    // Not ignorable: an error names the field.
    let m = SimpleExampleMessage { my_tagged_int_array: vec![1].into(), ..Default::default() };
    let err = m.encode(&mut BytesMut::new(), 0).unwrap_err();
    assert!(matches!(err.kind(), EncodeErrorKind::FieldNotInVersion { version: 0 }));
    assert!(err.to_string().contains("SimpleExampleMessage.my_tagged_int_array"), "{err}");
    assert!(m.encoded_size(0).is_err());
    // Ignorable: silently dropped, and decoding gives the default back.
    let m = SimpleExampleMessage { tagged_long_flexible_version_subset: 5, ..Default::default() };
    let back = SimpleExampleMessage::decode(&mut encode(&m, 1), 1).unwrap();
    assert_eq!(back.tagged_long_flexible_version_subset, 0);
    // The reference's BrokerRegistration cases.
    let zk = BrokerRegistrationRequest { is_migrating_zk_broker: true, ..Default::default() };
    assert!(zk.encode(&mut BytesMut::new(), 0).is_err());
    let ignorable = BrokerRegistrationRequest {
        previous_broker_epoch: 5,
        log_dirs: vec![Uuid::nil()].into(),
        ..Default::default()
    };
    assert!(ignorable.encode(&mut BytesMut::new(), 1).is_ok());
}

#[test]
fn versions_outside_the_valid_range_are_refused() {
    let err = SimpleExampleMessage::default().encode(&mut BytesMut::new(), 3).unwrap_err();
    assert_eq!(err.kind(), &EncodeErrorKind::UnsupportedVersion { version: 3, min: 0, max: 2 });
    let err = SimpleExampleMessage::decode(&mut Bytes::new(), -1).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::UnsupportedVersion { version: -1, min: 0, max: 2 });
}

#[test]
fn zero_copy_bytes_share_the_input_buffer() {
    let m = SimpleExampleMessage { zero_copy_byte_buffer: Bytes::from_static(b"payload"), ..Default::default() };
    let input = encode(&m, 1);
    let decoded = SimpleExampleMessage::decode(&mut input.clone(), 1).unwrap();
    let range = input.as_ptr_range();
    assert!(range.contains(&decoded.zero_copy_byte_buffer.as_ptr()), "bytes were copied");
    assert_eq!(&decoded.zero_copy_byte_buffer[..], b"payload");
}

#[test]
fn nullable_structs() {
    // v0: NullableStruct is nullable (marker -1), NullableStruct2 is not yet.
    let m = NullableStructMessage {
        nullable_struct: None,
        nullable_struct2: Some(MyStruct2 { my_string: "a".into(), my_int: 1, ..Default::default() }),
        ..Default::default()
    };
    let bytes = encode(&m, 0);
    assert_eq!(&bytes[..], &[0xff, 0, 1, b'a', 0, 0, 0, 1]);
    assert_eq!(NullableStructMessage::decode(&mut bytes.clone(), 0).unwrap(), m);
    let null2 = NullableStructMessage { nullable_struct2: None, ..Default::default() };
    let err = null2.encode(&mut BytesMut::new(), 0).unwrap_err();
    assert!(matches!(err.kind(), EncodeErrorKind::NullNotAllowed { version: 0 }), "{err}");
    assert!(err.to_string().contains("nullable_struct2"));
    // v1: both nullable; a present tagged nullable struct carries its marker inside the tag.
    let m = NullableStructMessage {
        nullable_struct: Some(MyStruct { my_string: "x".into(), my_int: 2, ..Default::default() }),
        nullable_struct2: None,
        nullable_struct3: Some(MyStruct3 { my_string: "".into(), my_int: 3, ..Default::default() }),
        ..Default::default()
    };
    let bytes = encode(&m, 1);
    assert_eq!(NullableStructMessage::decode(&mut bytes.clone(), 1).unwrap(), m);
    assert!(bytes.ends_with(&[1, 0, 7, 1, 1, 0, 0, 0, 3, 0]), "{}", hex::encode(&bytes));
}

#[test]
fn records_fields_are_zero_copy_records() {
    let batch = Bytes::from(kwire_tests::sample::empty_record_batch());
    assert_eq!(batch.len(), 61, "seed 001's empty RecordBatch v2 is 61 bytes");
    let m = SimpleRecordsMessage {
        topic: "t".into(),
        record_set: Some(kwire_runtime::Records::from_bytes(batch.clone())),
        ..Default::default()
    };
    for v in 0..=1 {
        let back = SimpleRecordsMessage::decode(&mut encode(&m, v), v).unwrap();
        assert_eq!(back.record_set.as_ref().map(|r| r.as_bytes().clone()), Some(batch.clone()));
    }
    let null = SimpleRecordsMessage { record_set: None, ..Default::default() };
    assert_eq!(SimpleRecordsMessage::decode(&mut encode(&null, 0), 0).unwrap().record_set, None);
}

#[test]
fn decode_errors_name_the_struct_path_and_offset() {
    let response = FetchResponse { responses: vec![Default::default()], ..Default::default() };
    let bytes = encode(&response, 16);
    let cut = bytes.slice(..bytes.len() - 3);
    let err = FetchResponse::decode(&mut cut.clone(), 16).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("failed to decode FetchResponse.responses"), "{text}");
    assert!(err.offset().is_some_and(|o| o <= cut.len()), "{text}");
    // An array length larger than the input is refused before allocating.
    let mut huge = BytesMut::new();
    huge.extend_from_slice(&[0, 0, 0, 0, 0, 0]); // throttle, error code
    huge.extend_from_slice(&[0, 0, 0, 0]); // session id
    huge.extend_from_slice(&[0xff, 0xff, 0xff, 0x0f]); // compact array length ~2^28
    let err = FetchResponse::decode(&mut huge.freeze(), 16).unwrap_err();
    assert!(matches!(err.kind(), DecodeErrorKind::CountExceedsInput { .. }), "{err}");
}
