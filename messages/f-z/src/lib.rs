//! Apache Kafka's messages whose schema names begin with F to Z, generated at build time with
//! their codecs. Use them through [`kwire`](https://docs.rs/kwire), which re-exports every
//! part's modules under `kwire::messages` beside `ApiKey` and the body enums; they are split
//! only so that rustc compiles the parts side by side.

#![allow(missing_docs)]

include!(concat!(env!("OUT_DIR"), "/kwire/mod.rs"));

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
