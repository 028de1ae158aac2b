//! Round-trips of every request and response, and incremental frame decoding.

use bytes::{Bytes, BytesMut};
use kwire07_protocol::{
    ErrorCode, FetchRequest, FetchResponse, FrameDecoder, MultiFetchResponse, OffsetsRequest, OffsetsResponse,
    ProduceRequest, ProtocolError, Request, VersionedRequest,
};
use proptest::prelude::*;

fn topic() -> impl Strategy<Value = String> {
    // Any UTF-8 text: the codec carries names; validation is a separate step.
    "\\PC{0,40}"
}

fn produce() -> impl Strategy<Value = ProduceRequest> {
    (topic(), any::<i32>(), proptest::collection::vec(any::<u8>(), 0..300))
        .prop_map(|(topic, partition, m)| ProduceRequest { topic, partition, messages: Bytes::from(m) })
}

fn fetch() -> impl Strategy<Value = FetchRequest> {
    (topic(), any::<i32>(), any::<i64>(), any::<i32>()).prop_map(|(topic, partition, offset, max_size)| FetchRequest {
        topic,
        partition,
        offset,
        max_size,
    })
}

fn offsets() -> impl Strategy<Value = OffsetsRequest> {
    (topic(), any::<i32>(), any::<i64>(), any::<i32>())
        .prop_map(|(topic, partition, time, max_offsets)| OffsetsRequest { topic, partition, time, max_offsets })
}

fn request() -> impl Strategy<Value = Request> {
    prop_oneof![
        produce().prop_map(Request::Produce),
        fetch().prop_map(Request::Fetch),
        proptest::collection::vec(fetch(), 0..8).prop_map(Request::MultiFetch),
        proptest::collection::vec(produce(), 0..8).prop_map(Request::MultiProduce),
        offsets().prop_map(Request::Offsets),
        (any::<i16>(), proptest::collection::vec(any::<u8>(), 0..300))
            .prop_map(|(version, b)| Request::ModifyTopic(VersionedRequest { version, body: Bytes::from(b) })),
    ]
}

fn error_code() -> impl Strategy<Value = ErrorCode> {
    proptest::sample::select(ErrorCode::ALL.to_vec())
}

fn fetch_response() -> impl Strategy<Value = FetchResponse> {
    (error_code(), proptest::collection::vec(any::<u8>(), 0..200))
        .prop_map(|(error, m)| FetchResponse { error, messages: Bytes::from(m) })
}

/// Splits the whole frame at the 4-byte size and returns what follows it.
fn body(frame: &[u8]) -> Bytes {
    let size = i32::from_be_bytes(frame[..4].try_into().unwrap());
    assert_eq!(size as usize, frame.len() - 4, "size counts everything after itself");
    Bytes::copy_from_slice(&frame[4..])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn requests_round_trip(req in request()) {
        let frame = req.to_bytes().unwrap();
        prop_assert_eq!(frame.len(), 4 + req.frame_size().unwrap());
        prop_assert_eq!(i16::from_be_bytes([frame[4], frame[5]]), req.request_type().id());
        prop_assert_eq!(Request::decode(body(&frame)).unwrap(), req);
    }

    /// The chunked encoding is the same frame, and message sets are passed through uncopied.
    #[test]
    fn chunked_encoding_is_the_same_frame(req in request()) {
        let chunks = req.encode_chunks().unwrap();
        prop_assert_eq!(chunks.concat(), req.to_bytes().unwrap().to_vec());
        let sets: Vec<&Bytes> = match &req {
            Request::Produce(p) => vec![&p.messages],
            Request::MultiProduce(entries) => entries.iter().map(|e| &e.messages).collect(),
            _ => vec![],
        };
        for set in sets.into_iter().filter(|s| !s.is_empty()) {
            prop_assert!(chunks.iter().any(|c| c.as_ptr() == set.as_ptr() && c.len() == set.len()), "set not copied");
        }
    }

    /// Not for MODIFY_TOPIC, whose body is the rest of the frame (its own decoder decides).
    #[test]
    fn trailing_bytes_are_ignored(req in request(), extra in proptest::collection::vec(any::<u8>(), 1..20)) {
        prop_assume!(!matches!(req, Request::ModifyTopic(_)));
        let frame = req.to_bytes().unwrap();
        let mut b = frame[4..].to_vec();
        b.extend(extra);
        prop_assert_eq!(Request::decode(Bytes::from(b)).unwrap(), req);
    }

    #[test]
    fn fetch_responses_round_trip(resp in fetch_response()) {
        let mut out = BytesMut::new();
        resp.encode(&mut out).unwrap();
        prop_assert_eq!(&out[..6], &FetchResponse::header(resp.error, resp.messages.len()).unwrap()[..]);
        prop_assert_eq!(FetchResponse::decode(body(&out)).unwrap(), resp);
    }

    #[test]
    fn multifetch_responses_round_trip(entries in proptest::collection::vec(fetch_response(), 0..6)) {
        let resp = MultiFetchResponse { error: ErrorCode::NoError, entries };
        let mut out = BytesMut::new();
        resp.encode(&mut out).unwrap();
        let payload: usize = resp.entries.iter().map(|e| e.messages.len()).sum();
        prop_assert_eq!(&out[..6], &MultiFetchResponse::header(resp.entries.len(), payload).unwrap()[..]);
        prop_assert_eq!(MultiFetchResponse::decode(body(&out)).unwrap(), resp);
    }

    #[test]
    fn offsets_responses_round_trip(error in error_code(), offsets in proptest::collection::vec(any::<i64>(), 0..20)) {
        let resp = OffsetsResponse { error, offsets };
        let mut out = BytesMut::new();
        resp.encode(&mut out).unwrap();
        prop_assert_eq!(out.len(), 4 + 2 + 4 + 8 * resp.offsets.len());
        prop_assert_eq!(OffsetsResponse::decode(body(&out)).unwrap(), resp);
    }

    /// Several frames delivered in arbitrary pieces come out whole and in order.
    #[test]
    fn frames_reassemble_from_any_split(
        reqs in proptest::collection::vec(request(), 1..5),
        cuts in proptest::collection::vec(1usize..64, 1..200),
    ) {
        let mut stream = Vec::new();
        for r in &reqs {
            stream.extend_from_slice(&r.to_bytes().unwrap());
        }
        let mut decoder = FrameDecoder::default();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        let mut pos = 0;
        let mut cut = cuts.iter().cycle();
        while pos < stream.len() {
            let n = (*cut.next().unwrap()).min(stream.len() - pos);
            buf.extend_from_slice(&stream[pos..pos + n]);
            pos += n;
            while let Some(r) = decoder.decode_request(&mut buf).unwrap() {
                got.push(r);
            }
        }
        prop_assert!(buf.is_empty());
        prop_assert_eq!(got, reqs);
    }
}

#[test]
fn frame_byte_by_byte() {
    let req = Request::Offsets(OffsetsRequest { topic: "t".into(), partition: 0, time: -1, max_offsets: 1 });
    let frame = req.to_bytes().unwrap();
    let mut d = FrameDecoder::new(1000);
    let mut buf = BytesMut::new();
    for (i, b) in frame.iter().enumerate() {
        // Until the size field is complete only its missing bytes are known to be needed.
        let expected = if i < 4 { 4 - i } else { frame.len() - i };
        assert_eq!(d.bytes_needed(&buf).unwrap(), expected);
        buf.extend_from_slice(&[*b]);
        let out = d.decode_request(&mut buf).unwrap();
        assert_eq!(out.is_some(), i + 1 == frame.len());
        if let Some(r) = out {
            assert_eq!(r, req);
        }
    }
}

#[test]
fn frame_size_is_checked_before_the_body_arrives() {
    for (size, max) in [(0i32, 100usize), (-1, 100), (i32::MIN, 100), (101, 100), (i32::MAX, 104_857_600)] {
        let mut d = FrameDecoder::new(max);
        let mut buf = BytesMut::from(&size.to_be_bytes()[..]);
        let cap_before = buf.capacity();
        assert_eq!(d.decode(&mut buf), Err(ProtocolError::FrameSize { size, max }));
        assert_eq!(buf.capacity(), cap_before, "nothing was reserved for a refused frame");
    }
    // The limit itself is accepted.
    let mut d = FrameDecoder::new(3);
    let mut buf = BytesMut::from(&[0, 0, 0, 3, 0, 1, 2][..]);
    assert_eq!(d.decode(&mut buf).unwrap().unwrap().as_ref(), &[0, 1, 2]);
}

#[test]
fn bad_requests_name_the_field() {
    // Unknown type.
    assert_eq!(Request::decode(Bytes::from_static(&[0, 9])), Err(ProtocolError::UnknownRequestType(9)));
    // FETCH cut inside the offset field: type(2) + topic len(2) + "t"(1) + partition(4) = 9 bytes.
    let mut b = vec![0, 1, 0, 1, b't', 0, 0, 0, 0, 0, 0];
    assert_eq!(
        Request::decode(Bytes::from(b.clone())),
        Err(ProtocolError::Truncated { what: "fetch offset", offset: 13, needed: 8, available: 2 })
    );
    // Negative topic length.
    b = vec![0, 4, 0xff, 0xff];
    assert_eq!(
        Request::decode(Bytes::from(b)),
        Err(ProtocolError::NegativeLength { what: "topic length", offset: 6, value: -1 })
    );
    // Negative multi count.
    assert!(matches!(
        Request::decode(Bytes::from_static(&[0, 2, 0x80, 0])),
        Err(ProtocolError::NegativeLength { what: "multifetch count", .. })
    ));
    // A count the bytes cannot hold is refused before allocating.
    assert!(matches!(
        Request::decode(Bytes::from_static(&[0, 3, 0x7f, 0xff, 0, 0])),
        Err(ProtocolError::CountTooLarge { what: "multiproduce count", value: 32767, .. })
    ));
    // PRODUCE whose message set size runs past the frame.
    let b = [0, 0, 0, 1, b't', 0, 0, 0, 0, 0, 0, 0, 9, 1, 2];
    assert!(matches!(
        Request::decode(Bytes::copy_from_slice(&b)),
        Err(ProtocolError::Truncated { what: "message set", needed: 9, available: 2, .. })
    ));
    // Negative message set size.
    let b = [0, 0, 0, 1, b't', 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe];
    assert!(matches!(
        Request::decode(Bytes::copy_from_slice(&b)),
        Err(ProtocolError::NegativeLength { what: "message set size", value: -2, .. })
    ));
}

#[test]
fn invalid_utf8_topic_becomes_replacement_char() {
    let b = [0, 1, 0, 2, 0xff, b'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let Request::Fetch(f) = Request::decode(Bytes::copy_from_slice(&b)).unwrap() else { panic!() };
    assert_eq!(f.topic, "\u{FFFD}x");
    assert!(kwire07_protocol::validate_topic(&f.topic, 255).is_err());
}

#[test]
fn responses_refuse_unknown_codes_and_oversized_counts() {
    assert_eq!(FetchResponse::decode(Bytes::from_static(&[0, 5])), Err(ProtocolError::UnknownErrorCode(5)));
    assert_eq!(FetchResponse::decode(Bytes::from_static(&[0xff, 0xfe])), Err(ProtocolError::UnknownErrorCode(-2)));
    assert!(matches!(
        OffsetsResponse::decode(Bytes::from_static(&[0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0])),
        Err(ProtocolError::CountTooLarge { what: "offsets count", value: 2147483647, max: 1, .. })
    ));
    // A MULTIFETCH entry whose length runs past the end.
    assert!(matches!(
        MultiFetchResponse::decode(Bytes::from_static(&[0, 0, 0, 0, 0, 9, 0, 0, 1])),
        Err(ProtocolError::Truncated { what: "multifetch entry messages", .. })
    ));
    // Entry length below 2 cannot hold its error code.
    assert!(matches!(
        MultiFetchResponse::decode(Bytes::from_static(&[0, 0, 0, 0, 0, 1, 0])),
        Err(ProtocolError::Truncated { what: "multifetch entry error", .. })
    ));
}

#[test]
fn encode_refuses_what_the_wire_cannot_carry() {
    let long = "x".repeat(40_000);
    let r = Request::Fetch(FetchRequest { topic: long, partition: 0, offset: 0, max_size: 0 });
    assert!(matches!(r.to_bytes(), Err(ProtocolError::TooLargeToEncode { what: "topic name", .. })));
    let many = vec![FetchRequest { topic: "t".into(), partition: 0, offset: 0, max_size: 0 }; 40_000];
    assert!(matches!(
        Request::MultiFetch(many).to_bytes(),
        Err(ProtocolError::TooLargeToEncode { what: "multifetch count", .. })
    ));
}

#[test]
fn announced_size_does_not_reserve_the_whole_frame() {
    let mut d = FrameDecoder::default();
    let mut buf = BytesMut::from(&100_000_000i32.to_be_bytes()[..]);
    assert_eq!(d.decode(&mut buf).unwrap(), None);
    assert!(buf.capacity() <= (1 << 20) + 64, "capacity {}", buf.capacity());
}
