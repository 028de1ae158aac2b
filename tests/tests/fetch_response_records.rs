//! A FetchResponse and a ProduceRequest decoded by the generated code expose their `records`
//! fields as record batches, without copying the record data.

use bytes::BytesMut;
use kwire::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kwire::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kwire::messages::{FetchResponse, ProduceRequest};
use kwire_records::RecordsExt;
use kwire_records::{BatchBuilder, BatchOptions, Compression, Header};
use kwire_runtime::{Decode, Encode, Records};

fn batch(base_offset: i64, compression: Compression, values: &[&str]) -> bytes::Bytes {
    let mut options = BatchOptions::new(2, compression);
    options.base_offset = base_offset;
    let mut builder = BatchBuilder::new(options).unwrap();
    for (i, v) in values.iter().enumerate() {
        let headers = [Header::new(&b"h"[..], Some(&b"1"[..]))];
        builder.append(1_700_000_000_000 + i as i64, Some(b"key"), Some(v.as_bytes()), &headers).unwrap();
    }
    builder.build().unwrap()
}

#[test]
fn fetch_response_records_are_batches() {
    let mut data = BytesMut::new();
    data.extend_from_slice(&batch(0, Compression::None, &["a", "b"]));
    data.extend_from_slice(&batch(2, Compression::Zstd, &["c", "d", "e"]));
    let whole = data.freeze();
    // A fetch may end in the middle of a batch: keep a truncated tail.
    let cut = whole.slice(..whole.len() - 5);
    let response = FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic: "t".into(),
            partitions: vec![PartitionData { records: Some(Records::from_bytes(cut)), ..Default::default() }],
            ..Default::default()
        }],
        ..Default::default()
    };
    for version in [4, 11, 12, 16] {
        let bytes = response.encode_to_bytes(version).unwrap();
        let decoded = FetchResponse::decode(&mut bytes.clone(), version).unwrap();
        let records = decoded.responses[0].partitions[0].records.as_ref().expect("records present");
        assert!(bytes.as_ptr_range().contains(&records.as_bytes().as_ptr()), "records were copied");
        let batches: Vec<_> = records.batches().collect();
        assert!(batches[0].as_ref().is_ok_and(|b| b.last_offset() == 1), "v{version}: {batches:?}");
        assert!(batches[1].is_err(), "a truncated tail is reported, not silently dropped");
        let values: Vec<String> = records
            .records()
            .take_while(Result::is_ok)
            .map(|r| String::from_utf8(r.unwrap().value.unwrap().to_vec()).unwrap())
            .collect();
        assert_eq!(values, ["a", "b"], "v{version}");
    }
}

#[test]
fn produce_request_records_round_trip_compressed() {
    let request = ProduceRequest {
        acks: -1,
        timeout_ms: 1000,
        topic_data: vec![TopicProduceData {
            name: "t".into(),
            partition_data: vec![PartitionProduceData {
                index: 3,
                records: Some(Records::from_bytes(batch(0, Compression::Gzip, &["x", "y"]))),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let bytes = request.encode_to_bytes(9).unwrap();
    let decoded = ProduceRequest::decode(&mut bytes.clone(), 9).unwrap();
    let records = decoded.topic_data[0].partition_data[0].records.as_ref().unwrap();
    assert_eq!(records.verify().unwrap().batches, 1);
    let all: Vec<_> = records.records().map(Result::unwrap).collect();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].offset, 1);
    assert_eq!(all[1].headers[0].key.as_ref(), b"h");
}
