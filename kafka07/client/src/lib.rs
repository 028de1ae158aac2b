//! Kafka 0.7 client on `kwire07-protocol`'s wire format (spec `shared/spec/kafka07.md`).
//!
//! * [`connection::BrokerConnection`]: one TCP connection speaking the five 0.7 requests.
//! * [`producer::Producer`]: batching, key-hash or random partitioning, gzip/snappy, magic 0/1,
//!   static broker list or ZooKeeper discovery (spec §4.4), MULTIPRODUCE across partitions.
//! * [`consumer::SimpleConsumer`] and [`fetch`]: fetch loops with deep iteration, 0.7's
//!   next-offset rules and fetch-size growth.
//! * [`group::GroupConsumer`]: the Scala 0.7 high-level consumer's ZooKeeper protocol
//!   (registration, range assignment, owner nodes, committed offsets; spec §4.2–4.3).
//! * [`zk::ZkCluster`]: reading and writing 0.7's ZooKeeper layout.
//!
//! ```no_run
//! use kwire07_client::consumer::{SimpleConsumer, StartOffset};
//! use kwire07_client::{Codec, Discovery, Producer, ProducerConfig, Record};
//!
//! # async fn demo() -> kwire07_client::Result<()> {
//! let mut config = ProducerConfig::new(Discovery::Static(vec!["127.0.0.1:9092".into()]));
//! config.codec = Codec::Snappy;
//! let mut producer = Producer::new(config).await?;
//! producer.send(Record::new("events", "hello").with_key("user-1")).await?;
//! producer.sync().await?; // sent, and handled by the broker
//!
//! let mut consumer = SimpleConsumer::connect("127.0.0.1:9092", "events", 0, StartOffset::Earliest).await?;
//! for m in consumer.fetch().await? {
//!     println!("{} {:?}", m.offset, m.payload);
//! }
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

pub mod admin;
pub mod assignment;
pub mod connection;
pub mod consumer;
pub mod error;
pub mod fetch;
pub mod group;
pub mod partitioner;
pub mod producer;
pub mod zk;

pub use connection::{BrokerConnection, ReceiveBuffer};
pub use consumer::{ConsumedMessage, SimpleConsumer};
pub use error::{ClientError, Result};
pub use group::{GroupConfig, GroupConsumer, OffsetReset};
pub use kwire07_protocol::{Codec, ErrorCode, Magic};
pub use partitioner::Partitioner;
pub use producer::{Discovery, Producer, ProducerConfig, ProducerStats, Record};
pub use zk::ZkCluster;

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
