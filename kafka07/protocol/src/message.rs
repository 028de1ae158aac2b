//! One 0.7 message: `i8 magic`, (magic 1: `i8 attributes`), `u32 crc32(payload)`, payload.
//! The `i32 length` prefix belongs to the message set.

use bytes::BufMut;
use kwire_runtime::reader::SliceReader;

use crate::compression::{compress, Codec};
use crate::error::ProtocolError;

/// Message format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Magic {
    /// 0.6 format: no attributes byte, never compressed. brod and samsa write it.
    V0,
    /// 0.7 format: attributes byte carrying the codec. The Scala producer always writes it.
    V1,
}

impl Magic {
    pub fn byte(self) -> u8 {
        match self {
            Magic::V0 => 0,
            Magic::V1 => 1,
        }
    }

    /// Header bytes after the length prefix: magic, attributes (v1), crc.
    pub fn header_len(self) -> usize {
        match self {
            Magic::V0 => 5,
            Magic::V1 => 6,
        }
    }
}

/// The smallest legal length prefix (a v0 message with an empty payload).
pub const MIN_MESSAGE_LENGTH: usize = 5;

/// A parsed message borrowing its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageRef<'a> {
    pub magic: Magic,
    /// Always 0 for magic 0.
    pub attributes: u8,
    /// The stored CRC-32 of the payload.
    pub crc: u32,
    pub payload: &'a [u8],
}

impl<'a> MessageRef<'a> {
    /// Parses the bytes that follow a length prefix. `offset` (the message's log offset) is only
    /// used in errors. The CRC is not checked here; see [`MessageRef::verify_crc`].
    pub fn parse(body: &'a [u8], offset: u64) -> Result<MessageRef<'a>, ProtocolError> {
        let magic = match body.first() {
            None => return Err(ProtocolError::MessageTooShort { offset, length: 0, min: MIN_MESSAGE_LENGTH }),
            Some(0) => Magic::V0,
            Some(1) => Magic::V1,
            Some(&magic) => return Err(ProtocolError::UnknownMagic { offset, magic }),
        };
        let header = magic.header_len();
        if body.len() < header {
            return Err(ProtocolError::MessageTooShort { offset, length: body.len(), min: header });
        }
        let attributes = if magic == Magic::V1 { body[1] } else { 0 };
        if let Err(codec) = Codec::from_attributes(attributes) {
            return Err(ProtocolError::UnknownCodec { offset, codec, attributes });
        }
        // `body` holds at least the header (checked above), whose last 4 bytes are the CRC.
        let crc = SliceReader::new(body, header - 4).get_u32().unwrap_or_default();
        Ok(MessageRef { magic, attributes, crc, payload: &body[header..] })
    }

    pub fn codec(&self) -> Codec {
        // `parse` refused the invalid codec 3.
        Codec::from_attributes(self.attributes).unwrap_or(Codec::None)
    }

    pub fn is_compressed(&self) -> bool {
        self.codec() != Codec::None
    }

    pub fn computed_crc(&self) -> u32 {
        crc32fast::hash(self.payload)
    }

    pub fn verify_crc(&self, offset: u64) -> Result<(), ProtocolError> {
        let computed = self.computed_crc();
        if computed != self.crc {
            return Err(ProtocolError::CrcMismatch { offset, stored: self.crc, computed });
        }
        Ok(())
    }

    /// Length prefix value of this message (header plus payload).
    pub fn length(&self) -> usize {
        self.magic.header_len() + self.payload.len()
    }
}

/// Largest payload that fits an `i32` length prefix with a v1 header.
const MAX_PAYLOAD: usize = i32::MAX as usize - 6;

/// Writes one length-prefixed message. Magic 0 can only be uncompressed; `codec` only sets the
/// attribute bits, it does not compress (see [`put_compressed_set`]).
pub fn put_message(out: &mut impl BufMut, magic: Magic, codec: Codec, payload: &[u8]) -> Result<(), ProtocolError> {
    if payload.len() > MAX_PAYLOAD {
        return Err(ProtocolError::TooLargeToEncode {
            what: "message payload",
            size: payload.len(),
            limit: MAX_PAYLOAD,
        });
    }
    if magic == Magic::V0 && codec != Codec::None {
        return Err(ProtocolError::UnknownCodec { offset: 0, codec: codec.attribute_bits(), attributes: 0 });
    }
    out.put_i32((magic.header_len() + payload.len()) as i32);
    out.put_u8(magic.byte());
    if magic == Magic::V1 {
        out.put_u8(codec.attribute_bits());
    }
    out.put_u32(crc32fast::hash(payload));
    out.put_slice(payload);
    Ok(())
}

/// Writes an uncompressed message set of `payloads` in the given format.
pub fn put_message_set<P: AsRef<[u8]>>(
    out: &mut impl BufMut,
    magic: Magic,
    payloads: &[P],
) -> Result<(), ProtocolError> {
    for p in payloads {
        put_message(out, magic, Codec::None, p.as_ref())?;
    }
    Ok(())
}

/// Writes one compressed wrapper (magic 1, `codec`) holding `payloads` as magic-1 messages with
/// attributes 0, as the Scala producer does. Taking payloads rather than messages makes nested
/// compression impossible to write. With `Codec::None` this writes a plain v1 message set.
pub fn put_compressed_set<P: AsRef<[u8]>>(
    out: &mut impl BufMut,
    codec: Codec,
    payloads: &[P],
) -> Result<(), ProtocolError> {
    if codec == Codec::None {
        return put_message_set(out, Magic::V1, payloads);
    }
    let mut inner = Vec::new();
    put_message_set(&mut inner, Magic::V1, payloads)?;
    let compressed = compress(codec, &inner);
    put_message(out, Magic::V1, codec, &compressed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rejects_bad_headers() {
        assert_eq!(MessageRef::parse(&[2, 0, 0, 0, 0], 9), Err(ProtocolError::UnknownMagic { offset: 9, magic: 2 }));
        assert_eq!(
            MessageRef::parse(&[1, 0, 0, 0, 0], 9),
            Err(ProtocolError::MessageTooShort { offset: 9, length: 5, min: 6 })
        );
        assert_eq!(
            MessageRef::parse(&[1, 3, 0, 0, 0, 0], 9),
            Err(ProtocolError::UnknownCodec { offset: 9, codec: 3, attributes: 3 })
        );
        let m = MessageRef::parse(&[0, 0, 0, 0, 0], 0).unwrap();
        assert_eq!(m.payload, b"");
        assert!(m.verify_crc(0).is_ok()); // crc32("") == 0
    }

    #[test]
    fn magic0_cannot_be_compressed() {
        let mut v = Vec::new();
        assert!(put_message(&mut v, Magic::V0, Codec::Gzip, b"x").is_err());
        assert!(v.is_empty());
    }
}
