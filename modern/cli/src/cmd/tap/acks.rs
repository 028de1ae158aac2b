//! A Produce request's `acks`, read from its first bytes before the frame goes on: the tap must
//! know before forwarding whether a response will come (acks=0: none), and full decoding
//! happens only after the bytes are on their way. The body's rule is the connection's
//! ([`kwire_connection::produce_acks`]), written once.

use kwire::messages::{ApiKey, RequestHeader};
use kwire::{Bytes, Decode};

/// `acks` of a Produce request frame (size prefix included); `None` for other APIs and for
/// frames too short or malformed to say.
pub fn produce_acks(frame: &Bytes) -> Option<i16> {
    let (api_key, version, _) = super::header_fields(frame);
    if api_key != ApiKey::Produce.key() {
        return None;
    }
    let mut buf = frame.get(4..).map(|_| frame.slice(4..))?;
    RequestHeader::decode(&mut buf, ApiKey::Produce.request_header_version(version)).ok()?;
    kwire_connection::produce_acks(&buf, version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kwire::messages::{ApiVersionsRequest, ProduceRequest, RequestFrame};
    use kwire::BytesMut;

    /// Produce's first version with `TransactionalId` ahead of `Acks` (the schema: "versions 3+").
    const TRANSACTIONAL_ID_SINCE: i16 = 3;

    fn produce(version: i16, acks: i16, transactional_id: Option<&str>, client_id: Option<&str>) -> Bytes {
        let body = ProduceRequest { acks, transactional_id: transactional_id.map(Into::into), ..Default::default() };
        let mut frame = RequestFrame::new(body, version, 7, client_id);
        if version >= 9 {
            frame.header.unknown_tagged_fields.insert(9, Bytes::from_static(b"tag"));
        }
        let mut out = BytesMut::new();
        frame.encode(&mut out).unwrap();
        out.freeze()
    }

    #[test]
    fn acks_are_read_at_every_produce_version() {
        let ours = ApiKey::Produce.supported_versions().unwrap();
        for v in ours.min..=ours.max {
            let ids: &[Option<&str>] =
                if v >= TRANSACTIONAL_ID_SINCE { &[None, Some(""), Some("tx-1")] } else { &[None] };
            for (&id, acks) in ids.iter().flat_map(|id| [-1, 0, 1].map(|a| (id, a))) {
                for client in [None, Some("kwire-test")] {
                    let frame = produce(v, acks, id, client);
                    assert_eq!(produce_acks(&frame), Some(acks), "v{v} {id:?} {client:?}");
                    let decoded = RequestFrame::decode_with_trailing(frame.slice(4..)).unwrap().0;
                    assert!(matches!(decoded.body, kwire::messages::RequestKind::Produce(p) if p.acks == acks));
                }
            }
        }
    }

    #[test]
    fn short_frames_and_other_apis_have_no_acks() {
        let frame = produce(9, 0, Some("tx-1"), Some("kwire-test"));
        // Size, key, version, correlation id; client id; one tagged field; transactional id; acks.
        let whole = 4 + 8 + (2 + "kwire-test".len()) + (3 + 3) + (1 + "tx-1".len()) + 2;
        for end in 0..frame.len() {
            let acks = produce_acks(&frame.slice(..end));
            assert_eq!(acks, (end >= whole).then_some(0), "{end} bytes");
        }
        let mut other = BytesMut::new();
        RequestFrame::new(ApiVersionsRequest::default(), 3, 1, None).encode(&mut other).unwrap();
        assert_eq!(produce_acks(&other.freeze()), None);
    }
}
