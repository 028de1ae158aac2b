//! `encode_vectored` gives exactly the bytes of `encode`, and the large byte and records values
//! in it are the message's own buffers, not copies; frames too.

use bytes::{Bytes, BytesMut};
use kwire::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kwire::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kwire::messages::{
    ApiKey, FetchResponse, ProduceRequest, RequestFrame, RequestHeader, ResponseFrame, ResponseHeader,
};
use kwire_runtime::writer::DEFAULT_SHARE_FROM;
use kwire_runtime::{Encode, Records};

/// Record-like data of `len` bytes, distinct per seed.
fn data(len: usize, seed: u8) -> Bytes {
    (0..len).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect::<Vec<u8>>().into()
}

/// Partition payloads on both sides of the sharing threshold, and a null one.
fn payloads() -> Vec<Option<Bytes>> {
    vec![
        Some(data(DEFAULT_SHARE_FROM, 1)),
        Some(data(10, 2)),
        None,
        Some(data(64 * 1024, 3)),
        Some(data(DEFAULT_SHARE_FROM - 1, 4)),
    ]
}

fn fetch_response(payloads: &[Option<Bytes>]) -> FetchResponse {
    FetchResponse {
        session_id: 9,
        responses: vec![FetchableTopicResponse {
            topic: "t".into(),
            partitions: payloads
                .iter()
                .enumerate()
                .map(|(i, p)| PartitionData {
                    partition_index: i as i32,
                    high_watermark: 100,
                    records: p.clone().map(Records::from_bytes),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Asserts that exactly the payloads of at least `DEFAULT_SHARE_FROM` bytes appear as chunks
/// pointing into their own buffers, in order.
fn assert_shared(chunks: &[Bytes], payloads: &[Option<Bytes>]) {
    let is_payload = |c: &&Bytes| payloads.iter().flatten().any(|p| p.as_ptr() == c.as_ptr() && p.len() == c.len());
    let shared: Vec<*const u8> = chunks.iter().filter(is_payload).map(|c| c.as_ptr()).collect();
    let expected: Vec<*const u8> =
        payloads.iter().flatten().filter(|p| p.len() >= DEFAULT_SHARE_FROM).map(|p| p.as_ptr()).collect();
    assert_eq!(shared, expected, "large values are shared, in order; small ones are copied");
}

#[test]
fn vectored_fetch_response_shares_large_records_at_every_version() {
    let payloads = payloads();
    let response = fetch_response(&payloads);
    // Session ids exist from v7; the topic name is dropped (ignorable) where topic ids replace it.
    for version in 7..=17 {
        let contiguous = response.encode_to_bytes(version).unwrap();
        let (mut scratch, mut chunks) = (BytesMut::new(), Vec::new());
        response.encode_vectored(&mut scratch, &mut chunks, version).unwrap();
        assert_eq!(chunks.concat(), &contiguous[..], "v{version}");
        assert_shared(&chunks, &payloads);
        assert!(scratch.is_empty());
    }
}

#[test]
fn vectored_encode_reuses_its_scratch_and_appends() {
    let payloads = payloads();
    let response = fetch_response(&payloads);
    let contiguous = response.encode_to_bytes(17).unwrap();
    let (mut scratch, mut chunks) = (BytesMut::with_capacity(4096), vec![Bytes::from_static(b"prefix")]);
    for _ in 0..3 {
        chunks.truncate(1);
        response.encode_vectored(&mut scratch, &mut chunks, 17).unwrap();
        assert_eq!(&chunks[0][..], b"prefix");
        assert_eq!(chunks[1..].concat(), &contiguous[..]);
    }
}

#[test]
fn vectored_frames_match_contiguous_frames() {
    let payloads = payloads();
    let request = ProduceRequest {
        acks: -1,
        timeout_ms: 1000,
        topic_data: vec![TopicProduceData {
            name: "t".into(),
            partition_data: payloads
                .iter()
                .enumerate()
                .map(|(i, p)| PartitionProduceData {
                    index: i as i32,
                    records: p.clone().map(Records::from_bytes),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let frame = RequestFrame {
        header: RequestHeader {
            request_api_key: ApiKey::Produce.key(),
            request_api_version: 9,
            correlation_id: 7,
            client_id: Some("c".into()),
            ..Default::default()
        },
        body: request.into(),
    };
    let mut contiguous = BytesMut::new();
    frame.encode(&mut contiguous).unwrap();
    let (mut scratch, mut chunks) = (BytesMut::new(), Vec::new());
    frame.encode_vectored(&mut scratch, &mut chunks).unwrap();
    assert_eq!(chunks.concat(), &contiguous[..]);
    assert_shared(&chunks, &payloads);

    let response = ResponseFrame {
        header: ResponseHeader { correlation_id: 7, ..Default::default() },
        body: fetch_response(&payloads).into(),
    };
    let mut contiguous = BytesMut::new();
    response.encode(&mut contiguous, 16).unwrap();
    let mut chunks = Vec::new();
    response.encode_vectored(&mut scratch, &mut chunks, 16).unwrap();
    assert_eq!(chunks.concat(), &contiguous[..]);
    assert_shared(&chunks, &payloads);
}
