//! `kwire-codegen generate`: write the generated files.

use std::process::ExitCode;

use clap::Args;

use crate::output::{fail, println};
use crate::schema_options::{warn, SchemaOptions};

#[derive(Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    options: SchemaOptions,
}

impl GenerateArgs {
    pub fn run(&self) -> ExitCode {
        match self.options.config().write() {
            Ok((generated, report)) => {
                warn(&generated);
                println(format!(
                    "{} into {} ({} written, {} unchanged, {} removed)",
                    generated.summary(),
                    self.options.out.display(),
                    report.written.len(),
                    report.unchanged.len(),
                    report.removed.len()
                ));
                ExitCode::SUCCESS
            }
            Err(e) => fail(e, 1),
        }
    }
}
