//! A consumer for Apache Kafka, after Kafka's Java consumer and franz-go's kgo: classic groups
//! (range, roundrobin, cooperative-sticky; static members) and KIP-848 groups, a source per
//! broker fetching with sessions (KIP-227) and topic ids, a bounded prefetch, read_committed,
//! leader epochs (KIP-320) and follower fetching (KIP-392).
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use kwire_client::consumer::{Consumer, ConsumerConfig};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let config = ConsumerConfig::new("127.0.0.1:9092").group_id("billing").set("auto.offset.reset", "earliest")?;
//! let consumer = Consumer::new(config).await?;
//! consumer.subscribe(["orders"]).await?;
//! for _ in 0..10 {
//!     for record in consumer.poll(Duration::from_secs(1)).await?.iter() {
//!         println!("{}-{}@{}: {:?}", record.topic, record.partition, record.offset, record.value);
//!     }
//! }
//! consumer.close().await?;
//! # Ok(()) }
//! ```
//!
//! How it is built: [`Consumer`] is a handle; tasks do the work. The metadata task
//! (`metadata.rs`) reads the topics needed; a source per broker (`fetch/`) fetches the
//! partitions it leads into a buffer bounded by `max.partition.fetch.bytes` per partition and
//! `fetch.max.bytes` per broker; the positions task (`offsets.rs`) finds where each partition
//! starts (committed offsets, `auto.offset.reset`, validation after a leader change);
//! commits go out in order from one task (`commit.rs`); the group member (`group/`) hands its
//! rebalance steps to `poll`, which runs the listener (`listener.rs`) on the application's
//! task. They share one state (`state.rs`).

mod assignors;
mod commit;
mod config;
#[allow(clippy::module_inception)]
mod consumer;
mod error;
mod fetch;
mod group;
mod listener;
mod metadata;
mod offsets;
mod record;
mod state;

/// The bytes classic consumer groups exchange (Kafka's `ConsumerProtocol`), for tools that
/// read a group's members.
pub mod protocol {
    pub use super::assignors::protocol::{
        decode_assignment, decode_subscription, encode_assignment, encode_subscription, Subscription,
        ASSIGNMENT_VERSION, SUBSCRIPTION_VERSION,
    };
}

/// Kafka's `ConsumerGroupMetadata`: the very type a transactional producer's
/// `send_offsets_to_transaction` takes, so that [`Consumer::group_metadata`] goes straight in.
pub use crate::producer::ConsumerGroupMetadata;
pub use config::{AssignmentStrategy, ConsumerConfig, GroupProtocol, IsolationLevel, OffsetReset};
pub use consumer::{BatchStream, Consumer, ConsumerMetrics, RecordStream};
pub use error::ConsumerError;
pub use listener::{ConsumerRebalanceListener, ListenerFuture};
pub use offsets::OffsetAndTimestamp;
pub use record::{ConsumerRecord, ConsumerRecords, Header, OffsetAndMetadata, TimestampType, TopicPartition};
