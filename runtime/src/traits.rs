//! The traits every generated message and struct implements.

use crate::writer::{write_contiguous, write_vectored, Writer};
use crate::{DecodeError, EncodeError, VersionRange};
use bytes::{Bytes, BytesMut};

/// Writes a value at a protocol version.
pub trait Encode {
    /// Appends the encoding of `self` at `version` to `writer`. Generated code implements
    /// this; callers usually want [`Encode::encode`] or [`Encode::encode_vectored`].
    fn encode_into(&self, writer: &mut Writer, version: i16) -> Result<(), EncodeError>;

    /// The exact number of bytes the encoding at `version` takes.
    fn encoded_size(&self, version: i16) -> Result<usize, EncodeError>;

    /// Appends the encoding of `self` at `version` to `buf`, copying every byte.
    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        write_contiguous(buf, |writer| self.encode_into(writer, version))
    }

    /// Appends the encoding of `self` at `version` to `chunks` without copying byte and record
    /// fields of [`DEFAULT_SHARE_FROM`](crate::writer::DEFAULT_SHARE_FROM) bytes or more: those chunks are clones of the message's
    /// own `Bytes`. Everything else is copied into `scratch` (left empty, its spare capacity
    /// kept for the next call) and split off as chunks. Send the result with `writev`.
    fn encode_vectored(
        &self,
        scratch: &mut BytesMut,
        chunks: &mut Vec<Bytes>,
        version: i16,
    ) -> Result<(), EncodeError> {
        write_vectored(scratch, chunks, |writer| self.encode_into(writer, version))
    }

    /// Encodes into a fresh buffer of exactly the right size.
    fn encode_to_bytes(&self, version: i16) -> Result<Bytes, EncodeError> {
        let mut buf = BytesMut::with_capacity(self.encoded_size(version)?);
        self.encode(&mut buf, version)?;
        Ok(buf.freeze())
    }
}

/// Reads a value at a protocol version. Byte and string fields share `buf`'s allocation.
pub trait Decode: Sized {
    /// Reads one value from the front of `buf`, advancing it.
    fn decode(buf: &mut Bytes, version: i16) -> Result<Self, DecodeError>;

    /// The fewest bytes a value takes on the wire at `version`: an array that claims more
    /// of them than the input holds is refused before anything is decoded. Generated code
    /// computes it from the schema; a decoder that does not know it counts one byte.
    fn min_wire_size(version: i16) -> usize {
        let _ = version;
        1
    }
}

/// A top-level schema: request, response, header, data or metadata record.
pub trait Message: Encode + Decode + Default + Clone + PartialEq + std::fmt::Debug {
    /// The schema's name, e.g. `FetchRequest`.
    const NAME: &'static str;
    /// Versions this schema defines.
    const VALID_VERSIONS: VersionRange;
    /// Versions that use the flexible encoding, if any.
    const FLEXIBLE_VERSIONS: Option<VersionRange>;
    /// Versions marked deprecated, if any.
    const DEPRECATED_VERSIONS: Option<VersionRange>;
}

/// A request body, tied to its api key and response type.
pub trait Request: Message {
    /// The numeric api key.
    const API_KEY: i16;
    /// The body type of the matching response.
    type Response: Response;
}

/// A response body.
pub trait Response: Message {
    /// The numeric api key.
    const API_KEY: i16;
}
