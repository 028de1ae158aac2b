//! An in-process Kafka cluster for tests, on kwire's generated messages.
//!
//! [`FakeCluster::start`] opens one listener per node on the loopback (port 0 picks free
//! ports) and serves Kafka's protocol from memory: every request is decoded and every response
//! encoded by the generated messages of Apache Kafka 4.4.0, so there is no hand-written wire
//! code here. It starts in milliseconds and runs inside `#[tokio::test]`:
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use kwire_fake::{FakeCluster, FakeConfig};
//!
//! let cluster = FakeCluster::start(FakeConfig::default().nodes(3)).await?;
//! cluster.create_topic("orders", 6).expect("a new topic");
//! println!("bootstrap.servers={}", cluster.bootstrap_servers());
//! cluster.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! What it serves, and how tests steer it ([`FakeCluster::intercept`], node kills, behaving
//! as an older release), is listed in the README's "Testing against an in-process Kafka".
//!
//! Layout, after franz-go's kfake: `apis/` holds one file per API, `state` the cluster's data,
//! `log` one partition's log, `groups` the classic group coordinator, `control` the hooks,
//! `node` a node's listener and `connection` one socket.

mod apis;
mod cluster;
mod config;
mod connection;
mod control;
mod groups;
mod ids;
mod log;
mod node;
mod producers;
mod request_budget;
mod sasl;
mod share_partitions;
mod shared;
mod state;
mod topic_configs;
mod transactions;

pub use cluster::{FakeCluster, StoredBatch};
pub use config::FakeConfig;
pub use control::{Action, HookId, Intercepted, Times};

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
