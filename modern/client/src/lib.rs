//! A producer and a consumer for Apache Kafka, on [`kwire`]'s generated messages and
//! [`kwire_connection`]'s connections: what programs come to a Kafka library for.
//!
//! Configs are named as Kafka's Java clients name them (`acks`, `linger.ms`, `group.id`, ...):
//! every typed builder has a `set(key, value)` that takes Kafka's spelling too ([`config`]).

pub mod config;
pub mod consumer;
pub mod producer;

pub use producer::{Producer, ProducerConfig, ProducerRecord, RecordMetadata};
