//! kwire-inspect: tools that read Kafka's schemas through the generator's IR, at run
//! time, so they work for any schema folder, a user's own included.
//!
//! - [`explain`]: a second decoder (no generated code) that shows bytes as seed 001 does, the
//!   object tree with every field's name, type, value, offset, size and meaning (text, JSON or
//!   a self-contained HTML page);
//! - [`sample`]: the smallest legal instance of any message, and seeded random ones;
//! - [`site`]: a static protocol reference site of a schema folder;
//! - [`diff`]: what changed between two schema folders and whether any shared version's wire
//!   layout did.
//!
//! Every wire rule they follow comes from [`kwire_codegen::ir::Layout`], the layout the
//! emitter reads too.

pub mod diff;
pub mod explain;
pub mod sample;
pub mod site;

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
