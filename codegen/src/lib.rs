//! kwire-codegen: the generator engine, turning Apache Kafka's JSON message schemas into
//! Rust types with encoders and decoders for every version.
//!
//! One engine, thin front-ends: [`Config::generate`] turns schema folders into files in memory;
//! `build.rs` ([`compile_schemas`]), the `kwire-codegen` command (crate
//! `kwire-codegen-cli`) and the tests only decide where those files go. The stages are explicit:
//! schema model ([`schema`], [`parse`]) → validation ([`validate`]) → IR ([`ir`], [`lower`])
//! → emission with `quote!` ([`emit`]) → formatting with prettyplease (feature `pretty`; a
//! build script's output is left unformatted).
//!
//! It has no default features: a build script compiles no CLI and no formatter. `pretty`
//! formats output with prettyplease, as checked-in code should be.
//!
//! In a `build.rs`:
//! ```no_run
//! kwire_codegen::compile_schemas("schemas").unwrap();
//! ```
//! then in the crate: `include!(concat!(env!("OUT_DIR"), "/kwire/mod.rs"));`.

pub mod bundle;
pub mod checked;
pub mod config;
pub mod diagnostics;
pub mod emit;
mod error;
mod format;
pub mod ir;
pub mod json;
mod locate;
mod paths;
pub use paths::display_path;
pub mod lower;
pub mod parse;
pub mod rules;
pub mod schema;
pub mod source;
pub mod validate;

pub use config::{compile_schemas, render_message, Config, Generated, WriteReport};
pub use diagnostics::{SchemaError, SchemaErrors, SchemaWarning};
pub use emit::{IndexLayout, IndexScope, MessagePart};
pub use error::Error;
pub use locate::{
    kafka_jars_dir, kafka_schema_sets, locate_kafka_schemas, schema_family, SchemaFamily, DEFAULT_KAFKA_RELEASE,
    FETCH_COMMAND, INTERNAL_FAMILIES, MESSAGES, TEST_SCHEMAS, TEST_SCHEMAS_RELEASE,
};
pub use lower::{load_dir, load_dirs, load_schemas, load_str, Loaded};
pub use rules::Rule;

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
