//! `records` fields as raw bytes. Reading and building batches is `kwire-records`' job, so
//! that generated messages compile without any compression codec.

use bytes::Bytes;

/// The raw bytes of a `records` field, shared with the buffer they were decoded from.
///
/// `kwire_records::RecordsExt` reads the batches and records inside.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Records {
    bytes: Bytes,
}

impl Records {
    /// Wraps encoded record data without copying it.
    pub fn from_bytes(bytes: Bytes) -> Self {
        Records { bytes }
    }

    /// The encoded record data.
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// Unwraps the encoded record data.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// Size of the encoded record data in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether there is no record data at all.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

impl From<Bytes> for Records {
    fn from(bytes: Bytes) -> Self {
        Records::from_bytes(bytes)
    }
}
