//! The sans-io core: a connection's state with no I/O. [`Connection::send`] appends whole
//! request frames to an outgoing buffer; [`Connection::receive`] takes whatever bytes arrived,
//! and [`Connection::next_response`] hands back each whole response, decoded as the type the
//! request it answers calls for (the response header version follows from that request's api
//! key and version). Sizes are checked against the configured maximum before anything waits
//! for or holds the bytes they announce.
//!
//! The requests waiting for a response are one table, by correlation id, and each can carry a
//! value of the caller's (`Connection<T>`, [`Connection::send_with`]): a client keeps who
//! waits for the response there. Matching a response to its request
//! ([`Connection::answer`]) and decoding it ([`Answered::decode`]) are separate steps, so that
//! a client whose reader and writer share the connection behind a lock decodes outside it.

use bytes::{Bytes, BytesMut};
use kwire::messages::{ApiKey, ApiRequest, RequestFrame, RequestKind, ResponseFrame, ResponseHeader, ResponseKind};
use kwire::ErrorCode;
use kwire_runtime::framing::{Framer, SIZE_PREFIX};

use crate::error::Error;
use crate::in_flight::InFlight;
use crate::outgoing::Outgoing;

/// Produce's first version with `TransactionalId` ahead of `Acks` (the schema: "versions 3+").
const TRANSACTIONAL_ID_SINCE: i16 = 3;

/// The `acks` of an encoded Produce body (what follows the request header) at `version`: after
/// the transactional id from v3 (a compact string in the flexible versions), first before that;
/// `None` when the body is too short to say. A proxy reads it before forwarding (acks = 0: no
/// response will come), as [`Connection::send_encoded`] does.
pub fn produce_acks(body: &[u8], version: i16) -> Option<i16> {
    let rest = if version < TRANSACTIONAL_ID_SINCE {
        body
    } else if ApiKey::Produce.flexible_versions().is_some_and(|f| f.contains(version)) {
        // A compact nullable string: length + 1 as an unsigned varint, 0 for null.
        let (len, used) = kwire_runtime::wire::decode_uvarint(body).ok()?;
        body.get(used + (len as usize).saturating_sub(1)..)?
    } else {
        // An int16 length, -1 for null.
        let len = i16::from_be_bytes([*body.first()?, *body.get(1)?]);
        body.get(2 + usize::try_from(len).unwrap_or(0)..)?
    };
    Some(i16::from_be_bytes([*rest.first()?, *rest.get(1)?]))
}

/// Kafka's default `socket.request.max.bytes`: the largest frame accepted unless configured.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

/// The smallest response frame: its correlation id.
const MIN_RESPONSE: usize = 4;

/// A request written and, unless it expects no answer, waiting for its response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    pub correlation_id: i32,
    pub api: ApiKey,
    pub version: i16,
    /// False for a Produce with `acks = 0`, which Kafka never answers.
    pub expects_response: bool,
    /// The frame's size on the wire, prefix included.
    pub bytes: usize,
}

/// A response, matched to its request.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub correlation_id: i32,
    pub api: ApiKey,
    /// The version the response was read at (ApiVersions may fall back to 0, see
    /// [`Connection::next_response`]).
    pub version: i16,
    pub header: ResponseHeader,
    pub body: ResponseKind,
    /// The frame's size on the wire, prefix included.
    pub bytes: usize,
}

impl Received {
    /// The typed body of the response to `R`.
    pub fn into_typed<R: ApiRequest>(self) -> Result<R::Response, Error> {
        let got = self.body.api_key();
        R::Response::try_from(self.body).map_err(|_| Error::UnexpectedResponse { expected: R::API, got })
    }

    /// How long the broker throttles this client, in ms (KIP-219: it answered at once and
    /// reads nothing more from this connection until then); `None` when the response has no
    /// `throttle_time_ms`.
    pub fn throttle_time_ms(&self) -> Option<i32> {
        self.body.throttle_time_ms(self.version)
    }
}

/// A request waiting for its response: what the response is read as, and the caller's value.
#[derive(Debug)]
struct Pending<T> {
    api: ApiKey,
    version: i16,
    context: T,
}

/// A connection's framing, correlation and decoding, with no I/O. Each request waiting for a
/// response carries a `T` of the caller's (nothing, by default).
#[derive(Debug)]
pub struct Connection<T = ()> {
    client_id: Option<String>,
    next_correlation_id: i32,
    pending: InFlight<Pending<T>>,
    /// Request frames waiting to be written: copied parts and the callers' shared values.
    outgoing: Outgoing,
    /// Where the small parts of a frame are copied to before they become chunks of
    /// `outgoing` (its spare capacity reused), and the chunks of the frame being encoded.
    scratch: BytesMut,
    staged: Vec<Bytes>,
    incoming: Framer,
}

impl Connection {
    /// A connection that names itself `client_id` in every request header and accepts
    /// response frames of at most `max_frame_size` bytes.
    pub fn new(client_id: Option<&str>, max_frame_size: usize) -> Self {
        Connection::with_contexts(client_id, max_frame_size)
    }

    /// Appends a request frame of `request` at `version` to the outgoing bytes.
    pub fn send<R: ApiRequest>(&mut self, request: R, version: i16) -> Result<Sent, Error> {
        self.send_kind(request.into(), version)
    }

    /// [`Connection::send`] for a body of any API.
    pub fn send_kind(&mut self, body: RequestKind, version: i16) -> Result<Sent, Error> {
        self.send_with(body, version, ()).map(|(sent, _)| sent).map_err(|(error, ())| error)
    }

    /// Appends a request of `api` whose body is already encoded, under header version
    /// `version`, which need not be one this code can write: how a proxy forwards, and how a
    /// broker's answer to a version it does not know is tested. The response is read at
    /// `read_as`, a version this code knows. A Produce body with `acks = 0` expects no response,
    /// as with [`Connection::send`]; one too short to hold its `acks` is refused.
    pub fn send_encoded(&mut self, api: ApiKey, version: i16, body: &[u8], read_as: i16) -> Result<Sent, Error> {
        let expects_response = match api {
            ApiKey::Produce => {
                let acks = produce_acks(body, version).ok_or_else(|| {
                    Error::Protocol(format!("a Produce v{version} body of {} bytes holds no acks", body.len()))
                })?;
                acks != 0
            }
            _ => true,
        };
        let correlation_id = self.next_correlation_id;
        let header = kwire::messages::RequestHeader {
            request_api_key: api.key(),
            request_api_version: version,
            correlation_id,
            client_id: self.client_id.as_deref().map(Into::into),
            ..Default::default()
        };
        let header_version = api.request_header_version(read_as);
        let mut header_bytes = BytesMut::new();
        kwire::Encode::encode(&header, &mut header_bytes, header_version).map_err(|source| Error::Encode {
            api,
            version,
            source,
        })?;
        self.scratch.clear();
        kwire_runtime::frame::put_frame_size(&mut self.scratch, header_bytes.len() + body.len())
            .map_err(|source| Error::Encode { api, version, source })?;
        self.scratch.extend_from_slice(&header_bytes);
        self.scratch.extend_from_slice(body);
        let bytes = self.scratch.len();
        self.outgoing.push(self.scratch.split().freeze());
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        if expects_response {
            self.pending.expect(correlation_id, Pending { api, version: read_as, context: () });
        }
        Ok(Sent { correlation_id, api, version, expects_response, bytes })
    }

    /// The same connection, its requests from now on each carrying a `U` (see
    /// [`Connection::send_with`]): how a client hands the connection it negotiated on over to
    /// its tasks. Only while no request waits for a response (a `()` cannot become a `U`).
    pub fn carrying<U>(self) -> Result<Connection<U>, Error> {
        if !self.pending.is_empty() {
            let waiting = self.pending.len();
            return Err(Error::Protocol(format!("{waiting} requests still wait for a response")));
        }
        Ok(Connection {
            client_id: self.client_id,
            next_correlation_id: self.next_correlation_id,
            pending: InFlight::new(usize::MAX),
            outgoing: self.outgoing,
            scratch: self.scratch,
            staged: self.staged,
            incoming: self.incoming,
        })
    }
}

impl<T> Connection<T> {
    /// [`Connection::new`] for requests that each carry a `T`.
    pub fn with_contexts(client_id: Option<&str>, max_frame_size: usize) -> Self {
        Connection {
            client_id: client_id.map(str::to_string),
            next_correlation_id: 0,
            // The client bounds its requests in flight itself (`ClientConfig`).
            pending: InFlight::new(usize::MAX),
            outgoing: Outgoing::new(),
            scratch: BytesMut::new(),
            staged: Vec::new(),
            incoming: Framer::new(MIN_RESPONSE, max_frame_size),
        }
    }

    /// [`Connection::send_kind`] for a request that carries `context` until its response is
    /// matched ([`Answered::context`]). The context comes back at once with a request that
    /// expects no response (Produce with `acks = 0`), and with the error if the request is
    /// refused.
    pub fn send_with(&mut self, body: RequestKind, version: i16, context: T) -> Result<(Sent, Option<T>), (Error, T)> {
        let api = body.api_key();
        if !api.valid_versions().is_some_and(|range| range.contains(version)) {
            return Err((Error::UnsupportedVersion { api, version }, context));
        }
        let expects_response = !matches!(&body, RequestKind::Produce(p) if p.acks == 0);
        let correlation_id = self.next_correlation_id;
        let frame = RequestFrame::new(body, version, correlation_id, self.client_id.as_deref());
        // Record batches and other large values are shared, not copied (see `Outgoing`).
        self.staged.clear();
        if let Err(source) = frame.encode_vectored(&mut self.scratch, &mut self.staged) {
            self.staged.clear();
            self.scratch.clear();
            return Err((Error::Encode { api, version, source }, context));
        }
        let mut bytes = 0;
        for chunk in self.staged.drain(..) {
            bytes += chunk.len();
            self.outgoing.push(chunk);
        }
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let sent = Sent { correlation_id, api, version, expects_response, bytes };
        if !expects_response {
            return Ok((sent, Some(context)));
        }
        self.pending.expect(correlation_id, Pending { api, version, context });
        Ok((sent, None))
    }

    /// The bytes waiting to be written, in one buffer (a copy when they are in several chunks).
    pub fn outgoing(&self) -> Bytes {
        self.outgoing.concat()
    }

    /// Takes the bytes waiting to be written, leaving none, in one buffer (a copy when they
    /// are in several chunks; [`Connection::take_outgoing_chunks`] copies nothing).
    pub fn take_outgoing(&mut self) -> Bytes {
        std::mem::take(&mut self.outgoing).concat()
    }

    /// Takes the bytes waiting to be written, leaving none, as the chunks they are in: large
    /// byte and records values (record batches) are the request's own `Bytes`, for a vectored
    /// write (`tokio::io::AsyncWriteExt::write_all_buf`).
    pub fn take_outgoing_chunks(&mut self) -> Outgoing {
        std::mem::take(&mut self.outgoing)
    }

    /// Takes bytes read from the socket.
    pub fn receive(&mut self, bytes: &[u8]) {
        self.incoming.extend(bytes);
    }

    /// How many bytes were received that are not yet a whole response. They grow only as
    /// bytes arrive: a frame's declared size reserves nothing.
    pub fn buffered(&self) -> usize {
        self.incoming.buffered()
    }

    /// Hands the reading of responses to a reader of its own, the bytes received so far with
    /// it: a task that reads while others write splits frames without the connection, and
    /// matches each with [`Connection::answer`]. [`Connection::receive`] starts afresh.
    pub fn take_incoming(&mut self) -> Framer {
        let fresh = Framer::new(MIN_RESPONSE, self.incoming.max());
        std::mem::replace(&mut self.incoming, fresh)
    }

    /// How many requests wait for a response.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// The requests waiting for a response, oldest first: correlation id and context.
    pub fn waiting(&self) -> impl Iterator<Item = (i32, &T)> {
        self.pending.iter().map(|(correlation_id, p)| (*correlation_id, &p.context))
    }

    /// Stops waiting for the response to `correlation_id` (a response that still comes is
    /// then one nobody asked for); its context, if it was waiting.
    pub fn forget(&mut self, correlation_id: i32) -> Option<T> {
        self.pending.take(correlation_id).map(|p| p.context)
    }

    /// Stops waiting for every response; the contexts, oldest first.
    pub fn forget_all(&mut self) -> impl Iterator<Item = (i32, T)> + '_ {
        self.pending.drain().map(|(correlation_id, p)| (correlation_id, p.context))
    }

    /// The next whole response, if its bytes have all arrived. A frame larger than the maximum
    /// or of an impossible size leaves the stream unreadable (the caller closes the
    /// connection); a response that does not decode is an error for its request only.
    ///
    /// ApiVersions is read at the version asked for and, if that fails, at version 0: a broker
    /// that does not know the version answers in version 0 with UNSUPPORTED_VERSION and its
    /// own ranges (KIP-511). Only such an answer is taken; any other body that fails at the
    /// version asked for is a decode error, not a version 0 answer read by luck.
    pub fn next_response(&mut self) -> Result<Option<Received>, Error> {
        match self.incoming.next_frame()? {
            None => Ok(None),
            Some(frame) => self.answer(frame)?.decode().map(Some),
        }
    }

    /// The request a whole response frame (size prefix included) answers, taken from those
    /// waiting; the response is decoded with [`Answered::decode`]. A frame that answers no
    /// waiting request is an error for the whole stream.
    pub fn answer(&mut self, frame: Bytes) -> Result<Answered<T>, Error> {
        let Some(id) = frame.get(SIZE_PREFIX..SIZE_PREFIX + 4) else {
            return Err(Error::BadFrameSize(frame.len().saturating_sub(SIZE_PREFIX) as i32));
        };
        let correlation_id = i32::from_be_bytes([id[0], id[1], id[2], id[3]]);
        let Some(Pending { api, version, context }) = self.pending.take(correlation_id) else {
            return Err(Error::UnknownCorrelationId(correlation_id));
        };
        Ok(Answered { correlation_id, api, version, context, frame })
    }
}

/// A response frame matched to the request it answers, not yet decoded.
#[derive(Debug)]
pub struct Answered<T> {
    pub correlation_id: i32,
    pub api: ApiKey,
    /// The version the request asked the response to be read at.
    pub version: i16,
    /// What the request carried ([`Connection::send_with`]).
    pub context: T,
    /// The frame, size prefix included.
    frame: Bytes,
}

impl<T> Answered<T> {
    /// The frame's size on the wire, prefix included.
    pub fn bytes(&self) -> usize {
        self.frame.len()
    }

    /// The response, decoded as its request calls for (see [`Connection::next_response`] for
    /// ApiVersions' fallback to version 0); an error names the request.
    pub fn decode(&self) -> Result<Received, Error> {
        let (api, version, correlation_id) = (self.api, self.version, self.correlation_id);
        let frame = self.frame.slice(SIZE_PREFIX..);
        let decoded = match ResponseFrame::decode(frame.clone(), api, version) {
            Err(error) if api == ApiKey::ApiVersions && version != 0 => match ResponseFrame::decode(frame, api, 0) {
                Ok(f) if matches!(&f.body, ResponseKind::ApiVersions(r) if r.error_code == ErrorCode::UNSUPPORTED_VERSION) => {
                    Ok((f, 0))
                }
                _ => Err(error),
            },
            other => other.map(|f| (f, version)),
        };
        let (decoded, version) = decoded.map_err(|source| Error::Decode { api, version, correlation_id, source })?;
        let (header, body, bytes) = (decoded.header, decoded.body, self.bytes());
        Ok(Received { correlation_id, api, version, header, body, bytes })
    }
}
