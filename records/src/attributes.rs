//! Batch attribute bits (magic 2: i16; legacy messages: i8, bits 0-3 only).

use super::compression::Compression;
use super::record::TimestampType;

const CODEC_MASK: i16 = 0x07;
const TIMESTAMP_TYPE: i16 = 0x08;
const TRANSACTIONAL: i16 = 0x10;
const CONTROL: i16 = 0x20;
const DELETE_HORIZON: i16 = 0x40;

/// The attributes of a batch or legacy message, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Attributes(pub i16);

impl Attributes {
    /// The codec id in bits 0-2 (may name no codec in corrupt data).
    pub fn codec_id(self) -> u8 {
        (self.0 & CODEC_MASK) as u8
    }

    /// The codec, if bits 0-2 name one.
    pub fn compression(self) -> Option<Compression> {
        Compression::from_id(self.codec_id())
    }

    /// Bit 3: log-append time rather than create time.
    pub fn is_log_append_time(self) -> bool {
        self.0 & TIMESTAMP_TYPE != 0
    }

    /// The timestamp type for a batch of `magic` (magic 0 has none).
    pub fn timestamp_type(self, magic: i8) -> TimestampType {
        if magic == 0 {
            TimestampType::NoTimestamp
        } else if self.is_log_append_time() {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// Bit 4: part of a transaction (magic 2).
    pub fn is_transactional(self) -> bool {
        self.0 & TRANSACTIONAL != 0
    }

    /// Bit 5: holds control records (magic 2).
    pub fn is_control(self) -> bool {
        self.0 & CONTROL != 0
    }

    /// Bit 6: the base timestamp holds the delete horizon set by log compaction (magic 2).
    pub fn has_delete_horizon(self) -> bool {
        self.0 & DELETE_HORIZON != 0
    }

    pub(crate) fn build(
        compression: Compression,
        log_append_time: bool,
        transactional: bool,
        control: bool,
        delete_horizon: bool,
    ) -> Attributes {
        let mut bits = i16::from(compression.id());
        for (set, bit) in [
            (log_append_time, TIMESTAMP_TYPE),
            (transactional, TRANSACTIONAL),
            (control, CONTROL),
            (delete_horizon, DELETE_HORIZON),
        ] {
            if set {
                bits |= bit;
            }
        }
        Attributes(bits)
    }
}
