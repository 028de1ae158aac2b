//! `kwire-codegen site`: the protocol reference site of a schema folder.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use kwire_inspect::explain::Schemas;
use kwire_inspect::site;

use crate::output::{fail, println};

#[derive(Args)]
pub struct SiteArgs {
    /// Folder of schema files (*.json), or a Kafka jar (kafka-clients-X.jar, or JAR!/FOLDER for
    /// a folder inside one), read in place; repeat for several.
    #[arg(long = "schemas", value_name = "DIR", default_value = "schemas")]
    schemas: Vec<PathBuf>,
    /// Where the pages go (created if missing; only the site's own files are written).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

impl SiteArgs {
    pub fn run(&self) -> ExitCode {
        let started = Instant::now();
        let schemas = match Schemas::load(&self.schemas) {
            Ok(s) => s,
            Err(e) => return fail(e, 2),
        };
        match site::write(&schemas, &self.out) {
            Ok(report) => {
                println(format!(
                    "{} APIs, {} pages, {:.1} MB into {} in {:.1} s; open {}",
                    report.apis,
                    report.pages,
                    report.bytes as f64 / 1e6,
                    self.out.display(),
                    started.elapsed().as_secs_f64(),
                    self.out.join("index.html").display()
                ));
                ExitCode::SUCCESS
            }
            Err(e) => fail(format!("writing {}: {e}", self.out.display()), 1),
        }
    }
}
