//! `kwire-codegen diff`: what changed between two schema folders, and whether any version
//! valid in both now encodes differently.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use kwire_inspect::diff::Diff;

use crate::output::{fail, print, println};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct DiffArgs {
    /// The schema folder (or Kafka jar) before.
    #[arg(long, value_name = "DIR")]
    old: PathBuf,
    /// The schema folder (or Kafka jar) after.
    #[arg(long, value_name = "DIR")]
    new: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also list fields whose `about` text changed.
    #[arg(long)]
    verbose: bool,
    /// Names for the summary line (default: each folder's name, or its parent's for `message/`).
    #[arg(long, value_name = "NAME")]
    old_label: Option<String>,
    #[arg(long, value_name = "NAME")]
    new_label: Option<String>,
}

impl DiffArgs {
    /// Exit status 0: no breaking change; 1: breaking changes; 2: a folder could not be read.
    pub fn run(&self) -> ExitCode {
        let mut diff = Diff::new(&self.old, &self.new);
        diff.verbose(self.verbose);
        if self.old_label.is_some() || self.new_label.is_some() {
            let label = kwire_inspect::diff::label;
            diff.labels(
                self.old_label.clone().unwrap_or_else(|| label(&self.old)),
                self.new_label.clone().unwrap_or_else(|| label(&self.new)),
            );
        }
        let report = match diff.run() {
            Ok(r) => r,
            Err(e) => return fail(e, 2),
        };
        match self.format {
            Format::Text => print(&report.text()),
            Format::Json => {
                let mut value = serde_json::to_value(&report).unwrap_or_default();
                value["summary"] = report.summary().into();
                println(serde_json::to_string_pretty(&value).unwrap_or_default());
            }
        }
        if report.breaking.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}
