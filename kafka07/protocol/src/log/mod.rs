//! Kafka 0.7's segment log, as in `shared/spec/kafka07.md` §3.
//!
//! A partition is a directory `<log dir>/<topic>-<partition>` of segment files named by their
//! 20-digit start offset plus `.kafka`; offsets are byte positions in the concatenation of all
//! segments. [`PartitionLog`] is one partition (single-threaded, `&mut self` to write);
//! [`LogManager`] owns every partition of a log dir behind locks so a multi-threaded broker can
//! share it, handles the clean-shutdown marker, per-topic configuration and topic deletion.
//! Reads return a [`FileSlice`] (an open segment file and a byte range inside it) so a server can
//! send it without copying.
//!
//! Flushing: [`PartitionLog::append`] fsyncs inline when `log.flush.interval` is reached, as 0.7
//! does. A server can instead use group commit: [`LogManager::append_deferred`] returns at once
//! and a background thread ([`LogManager::start_background_flush`]) fsyncs without holding the
//! log's lock, then moves the high-water mark (what [`Visibility::AfterFlush`] shows) to the
//! position captured before the fsync. [`LogManager::flush_to`] waits for a given position.
//!
//! Durability rule (every file-system call of the log and of the broker's files beside it
//! follows it; see [`durable`]): data counts as flushed only after its file's fsync, and a name
//! only after its directory's fsync. A roll fsyncs the old segment, creates the new one and
//! fsyncs the partition directory before the first write to it; a new partition directory is
//! fsynced with its parent; the log directory and each missing ancestor are created with
//! their parents fsynced; removals (retention, topic deletion, the clean-shutdown marker) and
//! the topic configuration's rename are followed by an fsync of their directory.
#![forbid(unsafe_code)]

pub mod config;
pub mod durable;
pub mod error;
mod flusher;
pub mod manager;
pub mod partition;
mod recovery;
mod segment;
pub mod slice;

pub use config::{LogConfig, TopicOverrides, Visibility};
pub use error::LogError;
pub use manager::{DeferredAppend, FlushPoint, LogManager, TopicPartition, CLEAN_SHUTDOWN_FILE};
pub use partition::{AppendInfo, FlushTicket, PartitionHandle, PartitionLog, RetentionInfo, SegmentInfo};
pub use segment::{parse_segment_file_name, segment_file_name};
pub use slice::FileSlice;
