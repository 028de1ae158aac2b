//! Whole frames as they travel: the `i32` size prefix, the header, the body. Written once here,
//! generic over what a generated API set provides (its `ApiKey`, its `RequestKind` and
//! `ResponseKind` bodies, its header types); a generated set names them with
//! `pub type RequestFrame = rt::RequestFrame<RequestHeader, RequestKind>` and the response
//! counterpart.

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::too_long;
use crate::version::check_decode_version;
use crate::wire::get_i16;
use crate::writer::{write_contiguous, write_vectored, Writer};
use crate::{Decode, DecodeError, DecodeErrorKind, Encode, EncodeError, EncodeErrorKind};
use crate::{StrBytes, VersionRange};

/// Refuses bytes left after a whole frame (strict frame decoding).
#[inline]
pub fn refuse_trailing(rest: &Bytes) -> Result<(), DecodeError> {
    if rest.is_empty() {
        Ok(())
    } else {
        Err(DecodeError::new(DecodeErrorKind::TrailingBytes(rest.len())))
    }
}

/// Writes the `i32` size prefix of a frame.
pub fn put_frame_size(buf: &mut BytesMut, size: usize) -> Result<(), EncodeError> {
    let size = i32::try_from(size).map_err(|_| too_long(size, i32::MAX as usize))?;
    buf.put_i32(size);
    Ok(())
}

/// A generated set's `ApiKey`: which header version goes with an api key and version.
pub trait FrameApi: Copy + TryFrom<i16, Error = DecodeError> {
    /// The numeric key on the wire.
    fn key(self) -> i16;
    /// The versions the set can read, `None` for a retired API.
    fn valid_versions(self) -> Option<VersionRange>;
    fn request_header_version(self, version: i16) -> i16;
    fn response_header_version(self, version: i16) -> i16;
}

/// A generated set's `RequestKind` or `ResponseKind`: a body of any API of the set.
pub trait FrameBody: Sized {
    type Api: FrameApi;
    /// The API the body belongs to.
    fn api_key(&self) -> Self::Api;
    fn encode_into(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError>;
    fn encoded_size(&self, version: i16) -> Result<usize, EncodeError>;
    /// Reads a body of `api_key` at `version`.
    fn decode(api_key: Self::Api, buf: &mut Bytes, version: i16) -> Result<Self, DecodeError>;
}

/// A request header: the fields a frame builds it from and reads back.
pub trait RequestHeaderFields: Encode + Decode + Default {
    fn new(api_key: i16, version: i16, correlation_id: i32, client_id: Option<StrBytes>) -> Self;
    fn api_key(&self) -> i16;
    fn api_version(&self) -> i16;
}

/// A response header: a frame builds it from the correlation id it answers.
pub trait ResponseHeaderFields: Encode + Decode + Default {
    fn new(correlation_id: i32) -> Self;
}

/// A whole request: header and body.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFrame<H, B> {
    pub header: H,
    pub body: B,
}

impl<H: RequestHeaderFields, B: FrameBody> RequestFrame<H, B> {
    /// A request of `body` at `version`: the header's api key and version come from the body
    /// and `version`, so they cannot disagree with it.
    pub fn new(body: impl Into<B>, version: i16, correlation_id: i32, client_id: Option<&str>) -> Self {
        let body = body.into();
        let header = H::new(body.api_key().key(), version, correlation_id, client_id.map(StrBytes::from));
        RequestFrame { header, body }
    }

    /// The API of the body (which the header must name).
    pub fn api_key(&self) -> B::Api {
        self.body.api_key()
    }

    /// The version the body is sent at.
    pub fn version(&self) -> i16 {
        self.header.api_version()
    }

    /// Reads a request from `frame`, the bytes after the `i32` size prefix: the header version
    /// follows from the api key and version at its start. Bytes after the body are an error;
    /// see [`RequestFrame::decode_with_trailing`] to accept them.
    pub fn decode(frame: Bytes) -> Result<Self, DecodeError> {
        let (decoded, trailing) = Self::decode_with_trailing(frame)?;
        refuse_trailing(&trailing)?;
        Ok(decoded)
    }

    /// Like [`RequestFrame::decode`], but bytes after the body are accepted, as Kafka's broker
    /// ignores them (librdkafka 2.16 sends 3 after a Metadata v12 body), and returned so the
    /// caller sees how many there were.
    pub fn decode_with_trailing(mut frame: Bytes) -> Result<(Self, Bytes), DecodeError> {
        let mut peek = frame.clone();
        let key = get_i16(&mut peek)?;
        let version = get_i16(&mut peek)?;
        let api_key = B::Api::try_from(key)?;
        let valid = api_key.valid_versions().ok_or_else(|| DecodeError::new(DecodeErrorKind::RetiredApi(key)))?;
        check_decode_version(version, valid)?;
        let header = H::decode(&mut frame, api_key.request_header_version(version))?;
        let body = B::decode(api_key, &mut frame, version)?;
        Ok((RequestFrame { header, body }, frame))
    }

    /// Appends the `i32` size prefix, header and body, at the header's api version.
    pub fn encode(&self, buf: &mut BytesMut) -> Result<(), EncodeError> {
        write_contiguous(buf, |w| self.encode_into(w))
    }

    /// The same bytes as [`RequestFrame::encode`], as chunks for `writev` that share large
    /// byte and records values instead of copying them (see [`Encode::encode_vectored`]).
    pub fn encode_vectored(&self, scratch: &mut BytesMut, chunks: &mut Vec<Bytes>) -> Result<(), EncodeError> {
        write_vectored(scratch, chunks, |w| self.encode_into(w))
    }

    /// Appends the frame to a writer (contiguous or vectored). A header naming another API
    /// than the body is refused; the header version follows from api key and version.
    pub fn encode_into(&self, w: &mut Writer) -> Result<(), EncodeError> {
        let api_key = self.body.api_key();
        if self.header.api_key() != api_key.key() {
            return Err(EncodeError::new(EncodeErrorKind::ApiKeyMismatch {
                header: self.header.api_key(),
                body: api_key.key(),
            }));
        }
        let version = self.header.api_version();
        let header_version = api_key.request_header_version(version);
        let size = self.header.encoded_size(header_version)? + self.body.encoded_size(version)?;
        put_frame_size(w, size)?;
        self.header.encode_into(w, header_version)?;
        self.body.encode_into(w, version)
    }
}

/// A whole response: header and body.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFrame<H, B> {
    pub header: H,
    pub body: B,
}

impl<H: ResponseHeaderFields, B: FrameBody> ResponseFrame<H, B> {
    /// A response carrying `body`, answering the request with `correlation_id`.
    pub fn new(body: impl Into<B>, correlation_id: i32) -> Self {
        ResponseFrame { header: H::new(correlation_id), body: body.into() }
    }

    /// The API of the body.
    pub fn api_key(&self) -> B::Api {
        self.body.api_key()
    }

    /// Reads a response to a request of `api_key` at `version` from `frame`, the bytes after
    /// the `i32` size prefix (responses do not name their API). Bytes after the body are an
    /// error; see [`ResponseFrame::decode_with_trailing`] to accept them.
    pub fn decode(frame: Bytes, api_key: B::Api, version: i16) -> Result<Self, DecodeError> {
        let (decoded, trailing) = Self::decode_with_trailing(frame, api_key, version)?;
        refuse_trailing(&trailing)?;
        Ok(decoded)
    }

    /// Like [`ResponseFrame::decode`], but bytes after the body are accepted and returned.
    pub fn decode_with_trailing(mut frame: Bytes, api_key: B::Api, version: i16) -> Result<(Self, Bytes), DecodeError> {
        let header = H::decode(&mut frame, api_key.response_header_version(version))?;
        let body = B::decode(api_key, &mut frame, version)?;
        Ok((ResponseFrame { header, body }, frame))
    }

    /// Appends the `i32` size prefix, header and body at `version`.
    pub fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        write_contiguous(buf, |w| self.encode_into(w, version))
    }

    /// The same bytes as [`ResponseFrame::encode`], as chunks for `writev` that share large
    /// byte and records values (a fetch's record data) instead of copying them.
    pub fn encode_vectored(
        &self,
        scratch: &mut BytesMut,
        chunks: &mut Vec<Bytes>,
        version: i16,
    ) -> Result<(), EncodeError> {
        write_vectored(scratch, chunks, |w| self.encode_into(w, version))
    }

    /// Appends the frame to a writer (contiguous or vectored).
    pub fn encode_into(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        let header_version = self.body.api_key().response_header_version(version);
        let size = self.header.encoded_size(header_version)? + self.body.encoded_size(version)?;
        put_frame_size(w, size)?;
        self.header.encode_into(w, header_version)?;
        self.body.encode_into(w, version)
    }
}
