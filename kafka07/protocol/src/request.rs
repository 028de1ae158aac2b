//! The five 0.7 requests. A frame is `i32 size | i16 type | body`; `encode` writes the whole
//! frame, `decode` takes the `size` bytes after the size field (see [`crate::frame`]).
//! Bytes left after the body are ignored, as the 0.7 broker does.

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::ProtocolError;
use crate::reader::Reader;
use crate::versioned::VersionedRequest;

/// OFFSETS `time` meaning "the end of the log".
pub const OFFSETS_LATEST: i64 = -1;
/// OFFSETS `time` meaning "the start of the first segment".
pub const OFFSETS_EARLIEST: i64 = -2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestType {
    Produce,
    Fetch,
    MultiFetch,
    MultiProduce,
    Offsets,
    /// Type 5, added by kwire (not in 0.7): create, alter, delete or describe a topic
    /// (see [`crate::versioned`]).
    ModifyTopic,
}

impl RequestType {
    pub fn id(self) -> i16 {
        match self {
            RequestType::Produce => 0,
            RequestType::Fetch => 1,
            RequestType::MultiFetch => 2,
            RequestType::MultiProduce => 3,
            RequestType::Offsets => 4,
            RequestType::ModifyTopic => 5,
        }
    }

    pub fn from_id(id: i16) -> Result<RequestType, ProtocolError> {
        Ok(match id {
            0 => RequestType::Produce,
            1 => RequestType::Fetch,
            2 => RequestType::MultiFetch,
            3 => RequestType::MultiProduce,
            4 => RequestType::Offsets,
            5 => RequestType::ModifyTopic,
            other => return Err(ProtocolError::UnknownRequestType(other)),
        })
    }

    /// PRODUCE and MULTIPRODUCE are never answered.
    pub fn has_response(self) -> bool {
        !matches!(self, RequestType::Produce | RequestType::MultiProduce)
    }
}

/// One (topic, partition, message set) of a PRODUCE or MULTIPRODUCE.
///
/// `topic` is decoded like the Java broker does: invalid UTF-8 becomes U+FFFD, which topic
/// validation then refuses. Validation is the caller's job, because its failure has different
/// consequences per request type (spec §1.9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProduceRequest {
    pub topic: String,
    pub partition: i32,
    /// The message set bytes, exactly as sent.
    pub messages: Bytes,
}

/// One (topic, partition, offset, max size) of a FETCH or MULTIFETCH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchRequest {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub max_size: i32,
}

/// OFFSETS: up to `max_offsets` segment offsets before `time` (ms, or −1 / −2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetsRequest {
    pub topic: String,
    pub partition: i32,
    pub time: i64,
    pub max_offsets: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Produce(ProduceRequest),
    Fetch(FetchRequest),
    MultiFetch(Vec<FetchRequest>),
    MultiProduce(Vec<ProduceRequest>),
    Offsets(OffsetsRequest),
    /// MODIFY_TOPIC: a version and a body for the generated `ModifyTopicRequest`.
    ModifyTopic(VersionedRequest),
}

fn topic_len(topic: &str) -> Result<usize, ProtocolError> {
    let n = topic.len();
    if n > i16::MAX as usize {
        return Err(ProtocolError::TooLargeToEncode { what: "topic name", size: n, limit: i16::MAX as usize });
    }
    Ok(2 + n)
}

fn put_topic_partition(out: &mut BytesMut, topic: &str, partition: i32) {
    out.put_i16(topic.len() as i16);
    out.put_slice(topic.as_bytes());
    out.put_i32(partition);
}

fn get_topic(r: &mut Reader<'_>) -> Result<String, ProtocolError> {
    let n = r.get_len_i16("topic length")?;
    let bytes = r.get_bytes(n, "topic")?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

fn count_of(len: usize, what: &'static str) -> Result<i16, ProtocolError> {
    i16::try_from(len).map_err(|_| ProtocolError::TooLargeToEncode { what, size: len, limit: i16::MAX as usize })
}

impl ProduceRequest {
    fn body_len(&self) -> Result<usize, ProtocolError> {
        let n = self.messages.len();
        if n > i32::MAX as usize {
            return Err(ProtocolError::TooLargeToEncode { what: "message set", size: n, limit: i32::MAX as usize });
        }
        Ok(topic_len(&self.topic)? + 4 + 4 + n)
    }

    fn put(&self, out: &mut BytesMut) {
        put_topic_partition(out, &self.topic, self.partition);
        out.put_i32(self.messages.len() as i32);
        out.put_slice(&self.messages);
    }

    fn get(r: &mut Reader<'_>, frame: &Bytes) -> Result<Self, ProtocolError> {
        let topic = get_topic(r)?;
        let partition = r.get_i32("partition")?;
        let n = r.get_len_i32("message set size")?;
        let start = r.position();
        r.get_bytes(n, "message set")?;
        Ok(ProduceRequest { topic, partition, messages: frame.slice(start..start + n) })
    }
}

impl FetchRequest {
    fn body_len(&self) -> Result<usize, ProtocolError> {
        Ok(topic_len(&self.topic)? + 4 + 8 + 4)
    }

    fn put(&self, out: &mut BytesMut) {
        put_topic_partition(out, &self.topic, self.partition);
        out.put_i64(self.offset);
        out.put_i32(self.max_size);
    }

    fn get(r: &mut Reader<'_>) -> Result<Self, ProtocolError> {
        let topic = get_topic(r)?;
        let partition = r.get_i32("partition")?;
        let offset = r.get_i64("fetch offset")?;
        let max_size = r.get_i32("fetch max size")?;
        Ok(FetchRequest { topic, partition, offset, max_size })
    }
}

impl OffsetsRequest {
    fn body_len(&self) -> Result<usize, ProtocolError> {
        Ok(topic_len(&self.topic)? + 4 + 8 + 4)
    }

    fn put(&self, out: &mut BytesMut) {
        put_topic_partition(out, &self.topic, self.partition);
        out.put_i64(self.time);
        out.put_i32(self.max_offsets);
    }

    fn get(r: &mut Reader<'_>) -> Result<Self, ProtocolError> {
        let topic = get_topic(r)?;
        let partition = r.get_i32("partition")?;
        let time = r.get_i64("offsets time")?;
        let max_offsets = r.get_i32("max number of offsets")?;
        Ok(OffsetsRequest { topic, partition, time, max_offsets })
    }
}

/// Smallest encoded entries of the multi requests (empty topic): topic length and partition,
/// then a PRODUCE's set size, or a FETCH's offset and max size. A count is checked against
/// them, so no count can claim more entries than the bytes hold.
const MIN_PRODUCE_ENTRY: usize = 2 + 4 + 4;
const MIN_FETCH_ENTRY: usize = 2 + 4 + 8 + 4;
/// The most entries reserved ahead of decoding them: an entry decodes to several times its
/// smallest encoding, so a checked count still reserves no more than this; the vector grows
/// with the entries that do decode.
const MAX_RESERVED_ENTRIES: usize = 1024;

impl Request {
    pub fn request_type(&self) -> RequestType {
        match self {
            Request::Produce(_) => RequestType::Produce,
            Request::Fetch(_) => RequestType::Fetch,
            Request::MultiFetch(_) => RequestType::MultiFetch,
            Request::MultiProduce(_) => RequestType::MultiProduce,
            Request::Offsets(_) => RequestType::Offsets,
            Request::ModifyTopic(_) => RequestType::ModifyTopic,
        }
    }

    /// The frame's `size` field: type plus body.
    pub fn frame_size(&self) -> Result<usize, ProtocolError> {
        let body = match self {
            Request::Produce(p) => p.body_len()?,
            Request::Fetch(f) => f.body_len()?,
            Request::Offsets(o) => o.body_len()?,
            Request::ModifyTopic(m) => m.body_len(),
            Request::MultiFetch(entries) => {
                count_of(entries.len(), "multifetch count")?;
                entries.iter().try_fold(2usize, |acc, e| Ok::<_, ProtocolError>(acc.saturating_add(e.body_len()?)))?
            }
            Request::MultiProduce(entries) => {
                count_of(entries.len(), "multiproduce count")?;
                entries.iter().try_fold(2usize, |acc, e| Ok::<_, ProtocolError>(acc.saturating_add(e.body_len()?)))?
            }
        };
        let size = body.saturating_add(2);
        if size > i32::MAX as usize {
            return Err(ProtocolError::TooLargeToEncode { what: "request", size, limit: i32::MAX as usize });
        }
        Ok(size)
    }

    /// Appends the whole frame (`i32 size`, `i16 type`, body) to `out`.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), ProtocolError> {
        let size = self.frame_size()?;
        out.reserve(4 + size);
        out.put_i32(size as i32);
        out.put_i16(self.request_type().id());
        match self {
            Request::Produce(p) => p.put(out),
            Request::Fetch(f) => f.put(out),
            Request::Offsets(o) => o.put(out),
            Request::ModifyTopic(m) => m.put(out),
            Request::MultiFetch(entries) => {
                out.put_i16(entries.len() as i16);
                entries.iter().for_each(|e| e.put(out));
            }
            Request::MultiProduce(entries) => {
                out.put_i16(entries.len() as i16);
                entries.iter().for_each(|e| e.put(out));
            }
        }
        Ok(())
    }

    /// The whole frame as chunks whose concatenation is exactly what [`Request::encode`]
    /// writes. Message sets are the requests' own `Bytes` (not copied), so a writer can send a
    /// large PRODUCE with one vectored write instead of copying it into a frame buffer first.
    pub fn encode_chunks(&self) -> Result<Vec<Bytes>, ProtocolError> {
        let size = self.frame_size()?;
        let mut glue = BytesMut::with_capacity(64);
        glue.put_i32(size as i32);
        glue.put_i16(self.request_type().id());
        let mut chunks = Vec::new();
        let mut produce = |p: &ProduceRequest, glue: &mut BytesMut| {
            put_topic_partition(glue, &p.topic, p.partition);
            glue.put_i32(p.messages.len() as i32);
            if !p.messages.is_empty() {
                chunks.push(glue.split().freeze());
                chunks.push(p.messages.clone());
            }
        };
        match self {
            Request::Produce(p) => produce(p, &mut glue),
            Request::MultiProduce(entries) => {
                glue.put_i16(entries.len() as i16);
                entries.iter().for_each(|e| produce(e, &mut glue));
            }
            other => {
                let mut whole = BytesMut::new();
                other.encode(&mut whole)?;
                return Ok(vec![whole.freeze()]);
            }
        }
        if !glue.is_empty() {
            chunks.push(glue.freeze());
        }
        Ok(chunks)
    }

    /// The whole frame as bytes.
    pub fn to_bytes(&self) -> Result<Bytes, ProtocolError> {
        let mut out = BytesMut::new();
        self.encode(&mut out)?;
        Ok(out.freeze())
    }

    /// Decodes a frame's contents (the `size` bytes after the size field). Error offsets count
    /// from the start of those bytes plus 4, i.e. from the start of the frame.
    pub fn decode(frame: Bytes) -> Result<Request, ProtocolError> {
        let mut r = Reader::with_base(&frame, 4);
        let kind = RequestType::from_id(r.get_i16("request type")?)?;
        Ok(match kind {
            RequestType::Produce => Request::Produce(ProduceRequest::get(&mut r, &frame)?),
            RequestType::Fetch => Request::Fetch(FetchRequest::get(&mut r)?),
            RequestType::Offsets => Request::Offsets(OffsetsRequest::get(&mut r)?),
            RequestType::ModifyTopic => Request::ModifyTopic(VersionedRequest::get(&mut r, &frame)?),
            RequestType::MultiFetch => {
                let n = Self::get_count(&mut r, "multifetch count", MIN_FETCH_ENTRY)?;
                let mut entries = Vec::with_capacity(n.min(MAX_RESERVED_ENTRIES));
                for _ in 0..n {
                    entries.push(FetchRequest::get(&mut r)?);
                }
                Request::MultiFetch(entries)
            }
            RequestType::MultiProduce => {
                let n = Self::get_count(&mut r, "multiproduce count", MIN_PRODUCE_ENTRY)?;
                let mut entries = Vec::with_capacity(n.min(MAX_RESERVED_ENTRIES));
                for _ in 0..n {
                    entries.push(ProduceRequest::get(&mut r, &frame)?);
                }
                Request::MultiProduce(entries)
            }
        })
    }

    /// A multi-request count, refused when the bytes present cannot hold that many entries of
    /// at least `min_entry` bytes.
    fn get_count(r: &mut Reader<'_>, what: &'static str, min_entry: usize) -> Result<usize, ProtocolError> {
        let offset = r.abs_offset();
        let n = r.get_len_i16(what)?;
        let max = r.remaining() / min_entry;
        if n > max {
            return Err(ProtocolError::CountTooLarge { what, offset, value: n, max });
        }
        Ok(n)
    }
}
