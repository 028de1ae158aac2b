//! Request types added after 0.7 (so far only MODIFY_TOPIC, type 5) carry an `i16` version
//! after the type and a body in the modern Kafka encoding, produced by generated code:
//!
//! * request:  `i32 size | i16 type | i16 version | body`
//! * response: `i32 size | i16 error (0.7 code) | i16 version | body`
//!
//! This module only splits and joins that framing; the body stays raw bytes for the generated
//! `Decode`/`Encode` of the matching message (e.g. `kwire07_admin_messages::ModifyTopicRequest`).

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::ProtocolError;
use crate::error_code::ErrorCode;
use crate::reader::Reader;

/// The version and raw body of a versioned request (the bytes after the request type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedRequest {
    pub version: i16,
    pub body: Bytes,
}

impl VersionedRequest {
    pub(crate) fn body_len(&self) -> usize {
        2usize.saturating_add(self.body.len())
    }

    pub(crate) fn put(&self, out: &mut BytesMut) {
        out.put_i16(self.version);
        out.put_slice(&self.body);
    }

    /// Reads the version; everything after it in the frame is the body.
    pub(crate) fn get(r: &mut Reader<'_>, frame: &Bytes) -> Result<Self, ProtocolError> {
        let version = r.get_i16("request version")?;
        let start = r.position();
        let rest = r.remaining();
        r.get_bytes(rest, "request body")?;
        Ok(VersionedRequest { version, body: frame.slice(start..start + rest) })
    }
}

/// The answer to a versioned request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedResponse {
    /// 0 when the body says the request succeeded, −1 otherwise: clients that only know 0.7
    /// framing still see success or failure.
    pub error: ErrorCode,
    pub version: i16,
    pub body: Bytes,
}

impl VersionedResponse {
    /// Appends the whole frame.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), ProtocolError> {
        let size = self.body.len().saturating_add(4);
        let size = i32::try_from(size).map_err(|_| ProtocolError::TooLargeToEncode {
            what: "versioned response",
            size,
            limit: i32::MAX as usize,
        })?;
        out.reserve(4 + size as usize);
        out.put_i32(size);
        out.put_i16(self.error.code());
        out.put_i16(self.version);
        out.put_slice(&self.body);
        Ok(())
    }

    /// Decodes a frame's contents (the `size` bytes after the size field).
    pub fn decode(frame: Bytes) -> Result<VersionedResponse, ProtocolError> {
        let mut r = Reader::with_base(&frame, 4);
        let error = ErrorCode::from_code(r.get_i16("response error")?)?;
        let version = r.get_i16("response version")?;
        Ok(VersionedResponse { error, version, body: frame.slice(4..) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Request, RequestType};

    #[test]
    fn request_frame_layout() {
        let req = Request::ModifyTopic(VersionedRequest { version: 0, body: Bytes::from_static(b"\x01\x02\x03") });
        let bytes = req.to_bytes().unwrap();
        // size 7 = type 2 + version 2 + body 3.
        assert_eq!(&bytes[..], &[0, 0, 0, 7, 0, 5, 0, 0, 1, 2, 3]);
        assert_eq!(Request::decode(bytes.slice(4..)).unwrap(), req);
        assert_eq!(RequestType::from_id(5).unwrap(), RequestType::ModifyTopic);
        assert!(RequestType::ModifyTopic.has_response());
    }

    #[test]
    fn request_without_version_is_truncated() {
        let e = Request::decode(Bytes::from_static(&[0, 5, 0])).unwrap_err();
        assert_eq!(e, ProtocolError::Truncated { what: "request version", offset: 6, needed: 2, available: 1 });
    }

    #[test]
    fn response_frame_layout_and_errors() {
        let resp = VersionedResponse { error: ErrorCode::Unknown, version: 0, body: Bytes::from_static(b"\x09") };
        let mut out = BytesMut::new();
        resp.encode(&mut out).unwrap();
        assert_eq!(&out[..], &[0, 0, 0, 5, 0xff, 0xff, 0, 0, 9]);
        assert_eq!(VersionedResponse::decode(out.freeze().slice(4..)).unwrap(), resp);
        let e = VersionedResponse::decode(Bytes::from_static(&[0, 0, 0])).unwrap_err();
        assert_eq!(e, ProtocolError::Truncated { what: "response version", offset: 6, needed: 2, available: 1 });
        assert_eq!(
            VersionedResponse::decode(Bytes::from_static(&[0, 7, 0, 0])).unwrap_err(),
            ProtocolError::UnknownErrorCode(7)
        );
    }
}
