//! kafka-wire-codegen: Rust types, encoders and decoders from Apache Kafka's JSON message schemas.
//!
//! One engine, thin front-ends: [`Config::generate`] turns schema folders into files in memory;
//! `build.rs` ([`compile_schemas`]), the `kafka-wire-codegen` CLI and the tests only decide
//! where those files go. The stages are explicit:
//! schema model ([`schema`], [`parse`]) → validation ([`validate`]) → IR ([`ir`], [`lower`])
//! → emission with `quote!` ([`emit`]) → formatting with prettyplease (feature `pretty`; a
//! build script's output is left unformatted).
//!
//! Features: `cli` (default) builds the `kafka-wire-codegen` command and implies `pretty`. A
//! build script depends on this crate with `default-features = false`, which compiles neither
//! clap nor prettyplease (syn only as serde's and thiserror's derive macros need it).
//!
//! In a `build.rs`:
//! ```no_run
//! kafka_wire_codegen::compile_schemas("schemas").unwrap();
//! ```
//! then in the crate: `include!(concat!(env!("OUT_DIR"), "/kafka-wire/mod.rs"));`.

pub mod checked;
pub mod config;
pub mod diagnostics;
pub mod diff;
pub mod emit;
mod error;
#[cfg(feature = "explain")]
pub mod explain;
mod format;
pub mod ir;
mod locate;
mod paths;
pub use paths::display_path;
pub mod lower;
pub mod parse;
pub mod rules;
pub mod schema;
pub mod validate;

pub use config::{compile_schemas, render_message, Config, Generated, WriteReport};
pub use diagnostics::{SchemaError, SchemaErrors, SchemaWarning};
pub use emit::IndexLayout;
pub use error::Error;
pub use locate::locate_kafka_schemas;
pub use lower::{load_dir, load_dirs, load_schemas, load_str, Loaded};
pub use rules::Rule;
