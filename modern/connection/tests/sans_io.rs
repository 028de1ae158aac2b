//! The sans-io core against a broker simulated byte by byte: responses in any order and split
//! anywhere, the response header each API's version calls for, ApiVersions' fallback to
//! version 0, acks = 0, and every malformed input a typed error.

use kwire::messages::api_versions_response::ApiVersion;
use kwire::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse, ProduceRequest, ResponseFrame,
};
use kwire::{BytesMut, Encode, ErrorCode};
use kwire_connection::{Connection, Error};
use proptest::prelude::*;

fn response_bytes(body: impl Into<kwire::messages::ResponseKind>, correlation_id: i32, version: i16) -> Vec<u8> {
    let mut out = BytesMut::new();
    ResponseFrame::new(body, correlation_id).encode(&mut out, version).unwrap();
    out.to_vec()
}

fn metadata(cluster: &str) -> MetadataResponse {
    MetadataResponse { cluster_id: Some(cluster.into()), ..Default::default() }
}

#[test]
fn responses_out_of_order_and_split_byte_by_byte_reach_their_requests() {
    let mut conn = Connection::new(Some("t"), 1 << 20);
    let a = conn.send(MetadataRequest::default(), 12).unwrap();
    let b = conn.send(MetadataRequest::default(), 1).unwrap();
    let c = conn.send(ApiVersionsRequest::default(), 3).unwrap();
    assert_eq!((a.correlation_id, b.correlation_id, c.correlation_id), (0, 1, 2));
    assert_eq!(conn.in_flight(), 3);
    let mut wire = response_bytes(metadata("second"), 1, 1);
    // ApiVersions v3: body flexible, header v0 all the same (KIP-511).
    wire.extend(response_bytes(ApiVersionsResponse { throttle_time_ms: 7, ..Default::default() }, 2, 3));
    wire.extend(response_bytes(metadata("first"), 0, 12));
    let mut got = Vec::new();
    for byte in wire {
        conn.receive(&[byte]);
        while let Some(r) = conn.next_response().unwrap() {
            got.push(r);
        }
    }
    assert_eq!(
        got.iter().map(|r| (r.correlation_id, r.api, r.version)).collect::<Vec<_>>(),
        [(1, ApiKey::Metadata, 1), (2, ApiKey::ApiVersions, 3), (0, ApiKey::Metadata, 12)]
    );
    let first = got.pop().unwrap().into_typed::<MetadataRequest>().unwrap();
    assert_eq!(first.cluster_id.as_deref(), Some("first"));
    let wrong = got.pop().unwrap().into_typed::<MetadataRequest>().unwrap_err();
    assert!(
        matches!(wrong, Error::UnexpectedResponse { expected: ApiKey::Metadata, got: ApiKey::ApiVersions }),
        "{wrong}"
    );
    assert_eq!(conn.in_flight(), 0);
}

#[test]
fn each_request_carries_its_callers_value_in_the_one_table_until_its_response_is_matched() {
    let mut conn = Connection::with_contexts(None, 1 << 20);
    let (a, none) = conn.send_with(MetadataRequest::default().into(), 12, "a").unwrap();
    assert_eq!(none, None);
    let (_, back) = conn.send_with(ProduceRequest { acks: 0, ..Default::default() }.into(), 9, "quiet").unwrap();
    assert_eq!(back, Some("quiet"), "a request with no response hands its value back at once");
    let (b, _) = conn.send_with(MetadataRequest::default().into(), 12, "b").unwrap();
    let (error, refused) = conn.send_with(MetadataRequest::default().into(), 99, "refused").unwrap_err();
    assert!(matches!(error, Error::UnsupportedVersion { api: ApiKey::Metadata, version: 99 }), "{error}");
    assert_eq!(refused, "refused");
    assert_eq!(
        conn.waiting().map(|(id, v)| (id, *v)).collect::<Vec<_>>(),
        [(a.correlation_id, "a"), (b.correlation_id, "b")]
    );
    assert_eq!(conn.forget(b.correlation_id), Some("b"));

    // A reader of its own splits the frames; the connection matches them, decoding comes after.
    let mut framer = conn.take_incoming();
    framer.extend(&response_bytes(metadata("first"), a.correlation_id, 12));
    framer.extend(&response_bytes(metadata("forgotten"), b.correlation_id, 12));
    let answered = conn.answer(framer.next_frame().unwrap().unwrap()).unwrap();
    assert_eq!(
        (answered.correlation_id, answered.api, answered.version, answered.context),
        (0, ApiKey::Metadata, 12, "a")
    );
    assert_eq!(conn.in_flight(), 0);
    let received = answered.decode().unwrap();
    assert_eq!(received.bytes, answered.bytes());
    assert_eq!(received.into_typed::<MetadataRequest>().unwrap().cluster_id.as_deref(), Some("first"));
    let late = conn.answer(framer.next_frame().unwrap().unwrap()).unwrap_err();
    assert!(matches!(late, Error::UnknownCorrelationId(2)), "{late}");
}

#[test]
fn a_connection_takes_on_values_only_while_nothing_waits() {
    let mut conn = Connection::new(None, 1 << 20);
    let sent = conn.send(MetadataRequest::default(), 12).unwrap();
    let conn = conn.carrying::<u8>().unwrap_err();
    assert!(matches!(conn, Error::Protocol(_)), "{conn}");
    let mut conn = Connection::new(None, 1 << 20);
    conn.send(MetadataRequest::default(), 12).unwrap();
    conn.receive(&response_bytes(metadata("c"), sent.correlation_id, 12));
    conn.next_response().unwrap().unwrap();
    let mut carrying = conn.carrying::<u8>().unwrap();
    let (next, _) = carrying.send_with(MetadataRequest::default().into(), 12, 7).unwrap();
    assert_eq!(next.correlation_id, sent.correlation_id + 1, "the correlation ids go on");
    assert_eq!(carrying.forget_all().collect::<Vec<_>>(), [(next.correlation_id, 7)]);
}

#[test]
fn an_api_versions_answer_in_version_0_is_read_as_kip_511_says() {
    let mut conn = Connection::new(None, 1 << 20);
    conn.send(ApiVersionsRequest::default(), 3).unwrap();
    let answer = ApiVersionsResponse {
        error_code: ErrorCode::UNSUPPORTED_VERSION,
        api_keys: vec![ApiVersion { api_key: 18, min_version: 0, max_version: 2, ..Default::default() }],
        ..Default::default()
    };
    conn.receive(&response_bytes(answer.clone(), 0, 0));
    let received = conn.next_response().unwrap().unwrap();
    assert_eq!(received.version, 0);
    assert_eq!(received.into_typed::<ApiVersionsRequest>().unwrap(), answer);
}

#[test]
fn acks_zero_expects_no_response_and_keeps_the_correlation_in_step() {
    let mut conn = Connection::new(None, 1 << 20);
    let quiet = conn.send(ProduceRequest { acks: 0, ..Default::default() }, 9).unwrap();
    assert!(!quiet.expects_response);
    let next = conn.send(MetadataRequest::default(), 12).unwrap();
    assert_eq!(next.correlation_id, quiet.correlation_id + 1);
    assert_eq!(conn.in_flight(), 1);
    // A response to the acks=0 request is one nobody asked for.
    conn.receive(&response_bytes(kwire::messages::ProduceResponse::default(), quiet.correlation_id, 9));
    assert!(matches!(conn.next_response(), Err(Error::UnknownCorrelationId(0))));
}

#[test]
fn sizes_are_checked_before_bytes_are_awaited() {
    let mut conn = Connection::new(None, 1024);
    conn.send(MetadataRequest::default(), 12).unwrap();
    conn.receive(&i32::MAX.to_be_bytes());
    assert!(
        matches!(conn.next_response(), Err(Error::FrameTooLarge { size, max: 1024 }) if size == i64::from(i32::MAX))
    );
    for bad in [-1i32, 0, 3] {
        let mut conn = Connection::new(None, 1024);
        conn.receive(&bad.to_be_bytes());
        assert!(matches!(conn.next_response(), Err(Error::BadFrameSize(n)) if n == bad));
    }
}

#[test]
fn a_body_that_does_not_decode_names_its_request_and_the_next_one_still_arrives() {
    let mut conn = Connection::new(None, 1 << 20);
    conn.send(MetadataRequest::default(), 12).unwrap();
    conn.send(MetadataRequest::default(), 12).unwrap();
    // Correlation id 0, then a body cut short.
    conn.receive(&[0, 0, 0, 6, 0, 0, 0, 0, 0, 0]);
    conn.receive(&response_bytes(metadata("ok"), 1, 12));
    match conn.next_response() {
        Err(Error::Decode { api: ApiKey::Metadata, version: 12, correlation_id: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
    let next = conn.next_response().unwrap().unwrap();
    assert_eq!(next.correlation_id, 1);
}

#[test]
fn versions_this_code_cannot_write_are_refused_before_anything_is_written() {
    let mut conn = Connection::new(None, 1 << 20);
    let err = conn.send(MetadataRequest::default(), 99).unwrap_err();
    assert!(matches!(err, Error::UnsupportedVersion { api: ApiKey::Metadata, version: 99 }));
    assert!(conn.outgoing().is_empty());
    // The request frame is exactly what the frame type writes.
    let sent = conn.send(MetadataRequest::default(), 12).unwrap();
    let mut expected = BytesMut::new();
    kwire::messages::RequestFrame::new(MetadataRequest::default(), 12, 0, None).encode(&mut expected).unwrap();
    assert_eq!(conn.outgoing(), &expected[..]);
    assert_eq!(sent.bytes, expected.len());
    assert_eq!(MetadataRequest::default().encoded_size(12).unwrap() + 4 + 2 + 2 + 4 + 2 + 1, expected.len());
}

proptest! {
    /// Whatever arrives, in whatever pieces: responses or typed errors, never a panic.
    #[test]
    fn garbage_is_never_a_panic(data in proptest::collection::vec(any::<u8>(), 0..512), cut in 0usize..512) {
        let mut conn = Connection::new(None, 4096);
        conn.send(MetadataRequest::default(), 12).unwrap();
        conn.send(ApiVersionsRequest::default(), 3).unwrap();
        let cut = cut.min(data.len());
        for piece in [&data[..cut], &data[cut..]] {
            conn.receive(piece);
            while let Ok(Some(_)) | Err(Error::Decode { .. } | Error::UnknownCorrelationId(_)) = conn.next_response() {}
        }
    }
}

#[test]
fn a_produce_requests_record_batches_reach_the_writer_without_a_copy() {
    use bytes::Buf;
    use kwire::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kwire::Records;
    // Two partitions' batches, large enough to be shared (and one too small to be worth it).
    let batch = |fill: u8, len: usize| bytes::Bytes::from(vec![fill; len]);
    let (a, b, small) = (batch(1, 64 * 1024), batch(2, 4096), batch(3, 100));
    let partition = |index: i32, records: &bytes::Bytes| PartitionProduceData {
        index,
        records: Some(Records::from_bytes(records.clone())),
        ..Default::default()
    };
    let request = ProduceRequest {
        acks: -1,
        timeout_ms: 1000,
        topic_data: vec![TopicProduceData {
            name: "t".into(),
            partition_data: vec![partition(0, &a), partition(1, &b), partition(2, &small)],
            ..Default::default()
        }]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let mut conn = Connection::new(Some("t"), 1 << 20);
    let sent = conn.send(request.clone(), 9).unwrap();
    let chunks = conn.take_outgoing_chunks();
    assert!(conn.outgoing().is_empty());
    // The bytes are the frame the contiguous encoder writes...
    let mut expected = BytesMut::new();
    kwire::messages::RequestFrame::new(request, 9, 0, Some("t")).encode(&mut expected).unwrap();
    assert_eq!((chunks.remaining(), sent.bytes), (expected.len(), expected.len()));
    assert_eq!(chunks.concat(), &expected[..]);
    // ...and the large batches are the caller's own buffers, not copies of them.
    let mut slices = [std::io::IoSlice::new(&[]); 16];
    let n = chunks.chunks_vectored(&mut slices);
    assert_eq!(n, chunks.chunk_count());
    let shared = |buf: &bytes::Bytes| slices[..n].iter().any(|s| s.as_ptr() == buf.as_ptr() && s.len() == buf.len());
    assert!(shared(&a) && shared(&b), "the batches were copied");
    assert!(!shared(&small), "a 100-byte batch is copied with the frame's other small parts");
}
