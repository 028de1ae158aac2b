//! A nullable struct sent as a tagged field's value carries Kafka's unsigned-varint marker
//! (1 present, 0 null), not the int8 marker (-1/1) of untagged nullable structs. Golden bytes
//! as Kafka's generated Java code writes them.

use bytes::{Bytes, BytesMut};
use kwire_runtime::{Decode, Encode, StrBytes};
use kwire_tests::corpus::group_coordinator::consumer_group_member_metadata_value::ConsumerGroupMemberMetadataValue;
use kwire_tests::corpus::test::nullable_struct_message::{MyStruct4, NullableStructMessage};

fn decode_and_reencode<T: Decode + Encode + std::fmt::Debug>(hex_bytes: &str, version: i16) -> T {
    let bytes = hex::decode(hex_bytes).unwrap();
    let mut input = Bytes::from(bytes.clone());
    let value = T::decode(&mut input, version).unwrap_or_else(|e| panic!("{hex_bytes} v{version}: {e}"));
    assert!(input.is_empty(), "{} bytes left unread", input.len());
    let mut out = BytesMut::new();
    value.encode(&mut out, version).unwrap();
    assert_eq!(hex::encode(&out), hex_bytes, "re-encoding differs for {value:?}");
    assert_eq!(value.encoded_size(version).unwrap(), bytes.len());
    value
}

/// Kafka's bytes for ConsumerGroupMemberMetadataValue v0 with ClassicMemberMetadata null:
/// the tagged field `tag 0, size 1, 00` at the end.
#[test]
fn consumer_group_member_metadata_with_null_classic_metadata() {
    let value: ConsumerGroupMemberMetadataValue = decode_and_reencode("000001010100ffffffff0001000100", 0);
    assert_eq!(value.classic_member_metadata, None);
    // The value Kafka's default holds (an empty struct, present) is the one left out.
    let present = ConsumerGroupMemberMetadataValue { classic_member_metadata: Some(Default::default()), ..value };
    let mut out = BytesMut::new();
    present.encode(&mut out, 0).unwrap();
    assert_eq!(hex::encode(&out), "000001010100ffffffff0000", "a default tagged struct was written");
}

/// Kafka's test schema NullableStructMessage at v1 and v2: NullableStruct and NullableStruct2
/// null (int8 markers `ff ff`), NullableStruct3 null (its default, so not written), and
/// NullableStruct4 (tag 1) null, then present.
#[test]
fn nullable_struct_message_tag_1_null_and_present() {
    for version in [1, 2] {
        let null: NullableStructMessage = decode_and_reencode("ffff01010100", version);
        assert_eq!((null.nullable_struct.clone(), null.nullable_struct4.clone()), (None, None));
        assert_eq!(null.nullable_struct2, None);
        // Present: tag 1, size 8 = marker 01 + compact string "a" + int32 1 + no tags.
        let present: NullableStructMessage = decode_and_reencode("ffff0101080102610000000100", version);
        let expected = MyStruct4 { my_string: StrBytes::from_static_str("a"), my_int: 1, ..Default::default() };
        assert_eq!(present.nullable_struct4, Some(expected));
    }
}

/// Kafka reads the marker with `readUnsignedVarint() <= 0` as null; a marker this decoder does
/// not know is not a crash.
#[test]
fn the_int8_marker_inside_a_tagged_field_is_not_kafkas() {
    // What this crate used to write (`ff` inside the tagged field) is a malformed varint value
    // of one byte: refused with an error, never a panic.
    let mut input = Bytes::from(hex::decode("ffff010101ff").unwrap());
    assert!(NullableStructMessage::decode(&mut input, 1).is_err());
}
