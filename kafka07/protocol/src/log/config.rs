//! Log settings with 0.7.2's defaults, and the per-topic overrides a broker fills from its
//! `topic.*` configuration maps.

use std::time::Duration;

use crate::DecodeLimits;

/// When appended bytes become readable (FETCH), count as the log end (out-of-range check) and
/// show up in OFFSETS. One mode is used for all three, so they never disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Visibility {
    /// As soon as they are written to the segment file (a superset of 0.7's behaviour that
    /// every client accepts).
    #[default]
    AfterAppend,
    /// Only once flushed (0.7's high-water mark).
    AfterFlush,
}

/// Settings of one partition's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// `log.file.size`: roll before an append when the active segment is strictly larger.
    pub segment_bytes: u64,
    /// `log.roll.hours`: roll before an append when the first append to the active segment
    /// (since this process opened it) is older than this. `None` disables it.
    pub roll_age: Option<Duration>,
    /// `log.flush.interval`: flush when this many messages (counted deep) are unflushed.
    pub flush_interval_messages: u64,
    /// `log.default.flush.interval.ms`: [`crate::log::PartitionLog::flush_if_due`] flushes
    /// when the last flush is at least this old.
    pub flush_interval: Duration,
    /// `log.retention.hours`: delete segments whose file is older than this. `None` keeps them.
    pub retention_age: Option<Duration>,
    /// `log.retention.size`: delete the oldest segments while the total stays ≥ this. `None`
    /// (0.7's −1) disables it.
    pub retention_bytes: Option<u64>,
    /// `max.message.size`: largest payload of a shallow message. `None` disables the check.
    pub max_message_size: Option<usize>,
    pub visibility: Visibility,
    /// Bounds on decompression while validating produced sets.
    pub decode_limits: DecodeLimits,
}

const HOUR: u64 = 3_600;

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: 1 << 30,
            roll_age: Some(Duration::from_secs(168 * HOUR)),
            flush_interval_messages: 500,
            flush_interval: Duration::from_millis(3_000),
            retention_age: Some(Duration::from_secs(168 * HOUR)),
            retention_bytes: None,
            max_message_size: Some(1_000_000),
            visibility: Visibility::AfterAppend,
            decode_limits: DecodeLimits::default(),
        }
    }
}

/// Per-topic settings; each `Some` replaces the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicOverrides {
    /// `topic.log.file.size`.
    pub segment_bytes: Option<u64>,
    /// `topic.log.roll.hours`.
    pub roll_age: Option<Duration>,
    /// A per-topic message-count flush interval (0.7 has only the global one).
    pub flush_interval_messages: Option<u64>,
    /// `topic.flush.intervals.ms`.
    pub flush_interval: Option<Duration>,
    /// `topic.log.retention.hours`.
    pub retention_age: Option<Duration>,
    /// `topic.log.retention.size`.
    pub retention_bytes: Option<u64>,
    /// A per-topic `max.message.size` (0.7 has only the global one).
    pub max_message_size: Option<usize>,
}

impl LogConfig {
    /// This configuration with `overrides` applied.
    pub fn with_overrides(&self, overrides: &TopicOverrides) -> LogConfig {
        LogConfig {
            segment_bytes: overrides.segment_bytes.unwrap_or(self.segment_bytes),
            roll_age: overrides.roll_age.or(self.roll_age),
            flush_interval_messages: overrides.flush_interval_messages.unwrap_or(self.flush_interval_messages),
            flush_interval: overrides.flush_interval.unwrap_or(self.flush_interval),
            retention_age: overrides.retention_age.or(self.retention_age),
            retention_bytes: overrides.retention_bytes.or(self.retention_bytes),
            max_message_size: overrides.max_message_size.or(self.max_message_size),
            ..self.clone()
        }
    }
}
