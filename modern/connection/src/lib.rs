//! A typed connection to Apache Kafka brokers, on the generated messages of `kwire`.
//!
//! - [`Connection`]: the sans-io core. Framing, correlation ids, the response header version
//!   each request calls for, typed responses; no I/O, never a panic on what a peer sends.
//! - [`Client`]: one broker over tokio. The ApiVersions handshake (with KIP-511's fallback),
//!   SASL PLAIN and SCRAM (re-authenticated before a KIP-368 session ends), TLS with rustls
//!   (feature `tls`), requests at the highest common version, pipelining, and timeouts that
//!   close a connection the broker stopped answering on.
//! - [`Cluster`]: bootstrap servers, metadata, and the leader of a partition or the
//!   coordinator of a group, with retries on the errors that call for them; a closed
//!   connection is opened again.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kwire_connection::Error> {
//! use kwire::messages::MetadataRequest;
//! use kwire_connection::{Client, ClientConfig};
//!
//! let client = Client::connect("127.0.0.1:9092", ClientConfig::default()).await?;
//! let metadata = client.send(MetadataRequest::default()).await?;
//! println!("{} brokers", metadata.brokers.len());
//! # Ok(()) }
//! ```

mod client;
pub mod cluster;
mod config;
mod connection;
mod error;
pub mod frame;
mod handshake;
pub mod in_flight;
mod outgoing;
pub mod requests;
pub mod sasl;
mod tasks;
#[cfg(feature = "tls")]
pub mod tls;

pub use client::Client;
pub use cluster::{Cluster, CoordinatorType};
pub use config::ClientConfig;
pub use connection::{produce_acks, Answered, Connection, Received, Sent, DEFAULT_MAX_FRAME_SIZE};
pub use error::Error;
pub use handshake::Negotiated;
pub use outgoing::Outgoing;
pub use sasl::{Credentials, Mechanism};
#[cfg(feature = "tls")]
pub use tls::TlsConfig;

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
