//! `kwire-broker`: a Kafka 0.7 broker built on kafka-wire's `legacy` protocol and segment
//! `log` modules (see `shared/spec/kafka07.md`).
//!
//! * [`config`] / [`properties`]: 0.7's `server.properties`, checked strictly.
//! * [`server::Broker`]: start-up, accept loop, flush and retention tasks, graceful shutdown.
//! * [`connection`] / [`handler`]: per-connection framing and 0.7's request semantics.
//! * [`transport`]: responses, with log bytes sent by `sendfile` on Linux.
//! * [`zk`]: ZooKeeper registration in 0.7's layout.
#![forbid(unsafe_code)]

pub mod cli;
pub mod config;
pub mod connection;
pub mod handler;
pub mod properties;
pub mod server;
pub mod state;
pub mod transport;
pub mod zk;

pub use config::{BrokerConfig, ConfigError};
pub use server::{Broker, ShutdownError, StartError};
pub use state::BrokerState;
