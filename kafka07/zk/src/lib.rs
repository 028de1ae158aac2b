//! Typed ZooKeeper data: every node Kafka keeps in ZooKeeper, as Rust values with their paths,
//! parsers, serialisers and validation. No ZooKeeper client code lives here.
//!
//! Two layouts share one tree:
//! * Kafka 0.8 (seed 003, "Kafka data structures in Zookeeper"): versioned JSON values, and
//!   0.8.1's topic configuration under `/config`.
//! * Kafka 0.7 (`shared/spec/kafka07.md` §4): plain UTF-8 text, `creator:host:port` broker
//!   values, per-broker partition counts, `<brokerId>-<partition>` consumer nodes.
//!
//! [`NodeKind::classify`] says which node a path is; [`NodeKind::parse`] decodes its data into a
//! [`TypedValue`]; [`TypedValue::to_bytes`] writes it back in Kafka's form; [`check`] does both
//! steps and reports the first way the node breaks its schema. Errors ([`ZkDataError`]) always
//! name the path. Where a path holds different data in the two layouts, the value enum has a
//! variant for each (for example [`BrokerNode`]).
//!
//! Names that become path components ([`TopicName`], [`GroupId`], [`ConsumerId`]) are
//! validated types, so no path can be built from `..` or a name holding `/`.

mod admin;
mod brokers;
mod config;
mod consumers;
mod controller;
mod error;
mod ids;
mod json;
mod names;
mod node;
mod text;
mod topics;

pub use admin::{
    DeleteTopics, DeleteTopicsNode, PartitionReassignment, PreferredReplicaElection, ReassignPartitions, TopicPartition,
};
pub use brokers::{BrokerNode, BrokerRegistration, Kafka07BrokerRegistration, Kafka07Creator};
pub use config::{config_change_create_path, ConfigChange, TopicConfig, CONFIG_CHANGE_PREFIX};
pub use consumers::{
    ConsumerOffset, ConsumerRegistration, ConsumerRegistrationNode, ConsumerThreadId, Kafka07ConsumerRegistration,
    Subscription,
};
pub use controller::{ControllerEpoch, ControllerNode};
pub use error::ZkDataError;
pub use json::VERSION_1;
pub use names::{child_path, ConsumerId, GroupId, TopicName};
pub use node::{check, config_change_sequence, parse, Container, Node, NodeKind, PartitionKey, TypedValue};
pub use topics::{Kafka07PartitionCount, PartitionState, TopicNode, TopicRegistration};

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
