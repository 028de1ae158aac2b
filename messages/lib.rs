//! A part of Apache Kafka's messages, generated at build time: the modules of the schemas whose
//! names begin with this crate's letters, with their codecs. Use them through `kafka-wire`,
//! which re-exports every part's modules under `kafka_wire::messages` beside `ApiKey` and the
//! body enums; they are split only so that rustc compiles the parts side by side.

#![allow(missing_docs)]

include!(concat!(env!("OUT_DIR"), "/kafka-wire/mod.rs"));
