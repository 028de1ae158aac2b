//! Errors of a generator run.

use std::path::PathBuf;

use crate::diagnostics::SchemaErrors;

/// Why a generator run failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// One or more schemas broke the schema rules; every problem found is listed.
    #[error("invalid schemas:\n{0}")]
    Schema(SchemaErrors),
    /// A schema folder could not be read, or an output file written.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// No schema folder was given, or a folder held no schema.
    #[error("no schemas found in {0}")]
    NoSchemas(String),
    /// Generated tokens did not parse as Rust (a generator bug).
    #[error("generated code for {file} does not parse: {message}")]
    Format { file: String, message: String },
    /// `OUT_DIR` is not set (the build-script helpers need it).
    #[error("OUT_DIR is not set: call this from a build script, or set an output folder with Config::out_dir")]
    NoOutDir,
    /// `check` found the output folder out of date.
    #[error("{0}")]
    Stale(String),
}

impl From<SchemaErrors> for Error {
    fn from(e: SchemaErrors) -> Self {
        Error::Schema(e)
    }
}
