//! `kwire07-broker`: a Kafka 0.7 broker built on kwire's 0.7 protocol and segment
//! `log` modules (see `shared/spec/kafka07.md`).
//!
//! * [`config`] / [`properties`]: 0.7's `server.properties`, checked strictly.
//! * [`server::Broker`]: start-up, accept loop, flush and retention tasks, graceful shutdown;
//!   [`processors`]: the connection threads (`num.threads`).
//! * [`connection`] / [`handler`] / [`respond`]: per-connection framing and pipelining, 0.7's
//!   request semantics, and answers.
//! * [`transport`]: responses, with log bytes sent by `sendfile` on Linux.
//! * [`zk`]: ZooKeeper registration in 0.7's layout, and the topic-configuration watch.
//! * [`admin`] / [`topic_settings`] / [`config_file`]: ModifyTopic (request type 5): create,
//!   alter, delete and describe topics; settings live in ZooKeeper or a file in the log dir.
#![forbid(unsafe_code)]

pub mod admin;
pub mod cli;
pub mod config;
pub mod config_file;
pub mod connection;
pub mod connection_table;
pub mod dir_lock;
pub mod fd_limit;
pub mod handler;
pub mod processors;
pub mod properties;
pub mod respond;
pub mod server;
mod shutdown;
pub mod state;
pub mod topic_apply;
pub mod topic_settings;
pub mod topic_store;
pub mod transport;
pub mod zk;
pub mod zk_config;

pub use config::{BrokerConfig, ConfigError};
pub use server::{Broker, ShutdownError, StartError};
pub use state::BrokerState;
