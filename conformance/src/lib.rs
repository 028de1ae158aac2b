//! Apache Kafka's own generated classes as the oracle for kwire's generated code.
//!
//! For each schema family of `releases.tsv`, the code is generated from the release's own jar
//! (build.rs) and every case is run through the same jar's classes by the Java program in
//! `kafka-java/` ([`oracle`]). A case is one instance of a schema at a version, written by
//! the IR-driven sample encoder; [`case`] says what must agree.

pub mod case;
pub mod json_diff;
pub mod kafka_json;
pub mod oracle;
pub mod plan;

pub use case::{run, Mismatch, MismatchKind};
pub use oracle::Oracle;

/// The code generated from each release's jars (see build.rs).
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/generated.rs"));
}

/// One schema of a release's family and the case runner of the type generated for it.
pub struct Entry {
    /// The Kafka release, e.g. `4.4.0`.
    pub release: &'static str,
    /// `message`, `test`, or the internal component (`metadata`, `raft`, ...).
    pub family: &'static str,
    /// Where the schemas were read: `…/kafka-clients-4.4.0.jar!/common/message`.
    pub source: &'static str,
    /// The schema's name, e.g. `FetchRequest`.
    pub name: &'static str,
    /// Runs one case of this schema through our code and Kafka's.
    pub run: RunCase,
}

/// [`run`] for one generated type: the sample's bytes, the version, the schema's IR.
pub type RunCase = fn(&[u8], i16, &kwire_codegen::ir::Message, &mut Oracle) -> Result<(), Vec<Mismatch>>;

mod table {
    include!(concat!(env!("OUT_DIR"), "/table.rs"));
}

/// Every schema of every family generated (empty where the jars were not fetched).
pub use table::SCHEMAS;
