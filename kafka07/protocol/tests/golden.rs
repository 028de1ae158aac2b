//! Byte-exact examples: the spec's hex (shared/spec/kafka07.md §1.4, §2.1), and compressed
//! wrappers produced independently (Python's gzip/zlib, and a snappy block written by hand).

use bytes::{Bytes, BytesMut};
use kwire07_protocol::message::{put_compressed_set, put_message};
use kwire07_protocol::{
    Codec, DeepIter, ErrorCode, FetchRequest, FetchResponse, Magic, MultiFetchResponse, OffsetsResponse,
    ProduceRequest, Request, ShallowIter,
};

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s.replace([' ', '|'], "")).unwrap()
}

#[test]
fn hello_v0_and_v1_are_byte_exact() {
    let mut v0 = Vec::new();
    put_message(&mut v0, Magic::V0, Codec::None, b"hello").unwrap();
    assert_eq!(v0, unhex("0000000A 00 3610A686 68656C6C6F"));
    let mut v1 = Vec::new();
    put_message(&mut v1, Magic::V1, Codec::None, b"hello").unwrap();
    assert_eq!(v1, unhex("0000000B 01 00 3610A686 68656C6C6F"));

    // And they parse back, CRC and all.
    for (bytes, magic) in [(&v0, Magic::V0), (&v1, Magic::V1)] {
        let entries: Vec<_> = ShallowIter::new(bytes, 100).collect::<Result<_, _>>().unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].message.magic, magic);
        assert_eq!(entries[0].message.crc, 0x3610_A686);
        assert_eq!(entries[0].message.payload, b"hello");
        assert_eq!(entries[0].offset, 100);
        assert_eq!(entries[0].next_offset, 100 + bytes.len() as u64);
        entries[0].message.verify_crc(100).unwrap();
    }
}

#[test]
fn produce_frame_is_byte_exact() {
    let golden = unhex("0000001c 0000 0002 7431 00000000 0000000e | 0000000a 00 3610a686 68656c6c6f");
    let req = Request::Produce(ProduceRequest {
        topic: "t1".into(),
        partition: 0,
        messages: Bytes::from(unhex("0000000a 00 3610a686 68656c6c6f")),
    });
    assert_eq!(req.to_bytes().unwrap().as_ref(), golden.as_slice());
    assert_eq!(Request::decode(Bytes::copy_from_slice(&golden[4..])).unwrap(), req);
}

#[test]
fn fetch_request_for_t1_has_size_22() {
    let req = Request::Fetch(FetchRequest { topic: "t1".into(), partition: 3, offset: 0x0102, max_size: 1024 });
    let bytes = req.to_bytes().unwrap();
    assert_eq!(bytes.as_ref(), unhex("00000016 0001 0002 7431 00000003 0000000000000102 00000400").as_slice());
}

#[test]
fn multifetch_response_layout() {
    // Two entries: 3 bytes with error 0, then none with error 3 (WrongPartition).
    let resp = MultiFetchResponse {
        error: ErrorCode::NoError,
        entries: vec![
            FetchResponse { error: ErrorCode::NoError, messages: Bytes::from_static(b"abc") },
            FetchResponse { error: ErrorCode::WrongPartition, messages: Bytes::new() },
        ],
    };
    let mut out = BytesMut::new();
    resp.encode(&mut out).unwrap();
    // total = 2 + (6+3) + (6+0) = 17
    let golden = unhex("00000011 0000 | 00000005 0000 616263 | 00000002 0003");
    assert_eq!(out.as_ref(), golden.as_slice());
    assert_eq!(MultiFetchResponse::header(2, 3).unwrap(), golden[..6]);
    assert_eq!(MultiFetchResponse::decode(Bytes::copy_from_slice(&golden[4..])).unwrap(), resp);
}

#[test]
fn offsets_response_layout() {
    let resp = OffsetsResponse { error: ErrorCode::NoError, offsets: vec![240, 216, 108, 0] };
    let mut out = BytesMut::new();
    resp.encode(&mut out).unwrap();
    let golden = unhex("00000026 0000 00000004 00000000000000f0 00000000000000d8 000000000000006c 0000000000000000");
    assert_eq!(out.as_ref(), golden.as_slice());
}

#[test]
fn error_codes_are_exactly_minus1_to_4() {
    let codes: Vec<i16> = ErrorCode::ALL.iter().map(|c| c.code()).collect();
    assert_eq!(codes, vec![-1, 0, 1, 2, 3, 4]);
    for c in i16::MIN..=i16::MAX {
        let parsed = ErrorCode::from_code(c);
        assert_eq!(parsed.is_ok(), (-1..=4).contains(&c), "code {c}");
        if let Ok(p) = parsed {
            assert_eq!(p.code(), c);
        }
    }
    // −1 is 0xFFFF on the wire.
    assert_eq!(FetchResponse::header(ErrorCode::Unknown, 0).unwrap(), [0, 0, 0, 2, 0xff, 0xff]);
}

/// A gzip wrapper made by Python 3 (`gzip.compress(inner, mtime=0)`, `zlib.crc32`), holding the
/// v1 messages "first" and "second".
const PYTHON_GZIP_WRAPPER: &str = "000000390101182049561f8b0800000000000203636060e066649854f82e3c2db3a8b8848181818791619bbc6066716a727e5e0a006d4bab8e1f000000";

#[test]
fn python_gzip_wrapper_deep_iterates_with_wrapper_offsets() {
    let set = unhex(PYTHON_GZIP_WRAPPER);
    let msgs: Vec<_> = DeepIter::new(Bytes::from(set.clone()), 1000).collect::<Result<_, _>>().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0].payload.as_ref(), b"first");
    assert_eq!(msgs[1].payload.as_ref(), b"second");
    // Spec §2.5: all but the last report the wrapper's start, the last its end.
    assert_eq!(msgs[0].next_offset, 1000);
    assert_eq!(msgs[1].next_offset, 1000 + set.len() as u64);
    assert!(msgs.iter().all(|m| m.outer_offset == 1000 && m.magic == Magic::V1 && m.attributes == 0));
}

/// Independent v1 message writer (the spec's layout, CRC from crc32fast).
fn v1(payload: &[u8], attributes: u8) -> Vec<u8> {
    let mut out = ((payload.len() + 6) as i32).to_be_bytes().to_vec();
    out.extend([1, attributes]);
    out.extend(crc32fast::hash(payload).to_be_bytes());
    out.extend(payload);
    out
}

/// A raw snappy block made only of one literal (≤ 60 bytes): varint length, tag (len−1)<<2.
fn snappy_literal_block(data: &[u8]) -> Vec<u8> {
    assert!(data.len() <= 60 && data.len() < 128);
    let mut out = vec![data.len() as u8, ((data.len() - 1) << 2) as u8];
    out.extend(data);
    out
}

#[test]
fn hand_made_xerial_snappy_wrapper_and_bare_block() {
    let mut inner = v1(b"first", 0);
    inner.extend(v1(b"second", 0));
    let block = snappy_literal_block(&inner);

    let mut xerial = unhex("82 534E415050 5900 00000001 00000001");
    xerial.extend((block.len() as i32).to_be_bytes());
    xerial.extend(&block);

    for payload in [xerial, block] {
        let wrapper = v1(&payload, 2);
        let msgs: Vec<_> = DeepIter::new(Bytes::from(wrapper.clone()), 0).collect::<Result<_, _>>().unwrap();
        let payloads: Vec<&[u8]> = msgs.iter().map(|m| m.payload.as_ref()).collect();
        assert_eq!(payloads, vec![&b"first"[..], b"second"]);
        assert_eq!(msgs[1].next_offset, wrapper.len() as u64);
    }
}

#[test]
fn our_snappy_wrapper_uses_xerial_framing() {
    let mut out = Vec::new();
    put_compressed_set(&mut out, Codec::Snappy, &[b"first".as_ref(), b"second"]).unwrap();
    // Outer: length, magic 1, attributes 2, crc, then the xerial header.
    assert_eq!(&out[4..6], &[1, 2]);
    assert_eq!(&out[10..26], unhex("82534E41505059000000000100000001").as_slice());
    let crc = u32::from_be_bytes(out[6..10].try_into().unwrap());
    assert_eq!(crc, crc32fast::hash(&out[10..]), "CRC covers the payload only");
}
